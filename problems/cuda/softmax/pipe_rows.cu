/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/softmax/pipe_rows.cu -- row softmax, persistent blocks that
 * walk rows (row = blockIdx.x, then every gridDim.x-th), software-pipelined:
 * the next row's loads are issued before the current row's max/sum
 * reductions and write, so a block keeps memory busy across its barriers.
 * block_regs idles its loads at every barrier; at 4+ TB/s (H200) that gap
 * is what keeps it below the copy ceiling.
 *
 * Shared arrays are reused without double buffering: each row has two
 * barriers (max, then sum), and every warp has read one array before it
 * reaches the barrier that lets any warp write it again.
 *
 * Paths, chosen at launch:
 *   pipelined  N % 8 == 0, both pointers 16-byte aligned, N <= CAP
 *   loop       otherwise: one block per row, an online max/sum sweep, then
 *              a rescale sweep that reads the row again
 * CAP = THREADS * VPT_EFF * 8; VPT_EFF caps VPT at 1024 / THREADS vectors
 * (two rows live per thread).
 *
 * Cache hints: the inputs are loaded through the read-only path with no
 * eviction hint (__ldg) and y is stored write-back (__stwb), as Triton's
 * plain loads and stores: the streaming hints (__ldcs, __stcs) cost 3-5%
 * on an H200 (best builds by one loop: softmax 0.0621 against 0.0653 ms;
 * 2026-11-29, docs/bench-notes.md).
 *
 * Knobs: THREADS (threads per block), VPT (16-byte vectors per thread),
 * BPS (blocks per SM in the grid).
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "kf_candidate.h"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VPT
#define VPT 4
#endif
#ifndef BPS
#define BPS 2
#endif

#define NWARPS (THREADS / 32)
#define VPT_MAX ((1024 / THREADS) > 0 ? (1024 / THREADS) : 1)
#define VPT_EFF (VPT < VPT_MAX ? VPT : VPT_MAX)
#define ELEMS (VPT_EFF * 8)
#define CAP ((int64_t)THREADS * ELEMS)
#define L2E 1.4426950408889634f

static_assert(THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 1024,
              "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(VPT >= 1, "VPT must be >= 1");
static_assert(BPS >= 1 && BPS <= 32, "BPS must be in [1, 32]");

__device__ __forceinline__ float ex2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float bf2f(uint16_t h) {
  return __uint_as_float((uint32_t)h << 16);
}
__device__ __forceinline__ uint16_t f2bf(float f) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}
__device__ __forceinline__ void unpack8(const uint4 v, float *f) {
  f[0] = __uint_as_float(v.x << 16); f[1] = __uint_as_float(v.x & 0xffff0000u);
  f[2] = __uint_as_float(v.y << 16); f[3] = __uint_as_float(v.y & 0xffff0000u);
  f[4] = __uint_as_float(v.z << 16); f[5] = __uint_as_float(v.z & 0xffff0000u);
  f[6] = __uint_as_float(v.w << 16); f[7] = __uint_as_float(v.w & 0xffff0000u);
}
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&h);
}
__device__ __forceinline__ uint4 pack8(const float *f) {
  uint4 r;
  r.x = pack2(f[0], f[1]); r.y = pack2(f[2], f[3]);
  r.z = pack2(f[4], f[5]); r.w = pack2(f[6], f[7]);
  return r;
}

/* Block-wide max / sum; every thread gets the result.  red holds NWARPS. */
__device__ __forceinline__ float block_max(float v, float *red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  float r = red[0];
#pragma unroll
  for (int w = 1; w < NWARPS; w++) r = fmaxf(r, red[w]);
  return r;
}
__device__ __forceinline__ float block_sum(float v, float *red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  float r = red[0];
#pragma unroll
  for (int w = 1; w < NWARPS; w++) r += red[w];
  return r;
}

/* Merges (m2, s2) into the running (m, s): s counts exp2(t - m), t = x*L2E. */
__device__ __forceinline__ void ms_merge(float &m, float &s, float m2, float s2) {
  float mn = fmaxf(m, m2);
  if (mn == -INFINITY) return;
  s = s * ex2(m - mn) + s2 * ex2(m2 - mn); /* ex2(-inf) == 0 */
  m = mn;
}

/* The next row's loads: issued, not waited for. */
#define LOAD_ROW(ROW)                                                        \
  do {                                                                       \
    const int64_t o_ = (ROW) * N;                                            \
    _Pragma("unroll") for (int k = 0; k < VPT_EFF; k++) {                    \
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;                    \
      if (c < N) ra[k] = __ldg(reinterpret_cast<const uint4 *>(x + o_ + c)); \
    }                                                                        \
  } while (0)

__global__ void __launch_bounds__(THREADS)
softmax_pipe(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int64_t M,
             int64_t N) {
  __shared__ float red_m[NWARPS], red_s[NWARPS];
  const int tid = threadIdx.x;
  uint4 ra[VPT_EFF];
  int64_t row = blockIdx.x;
  if (row < M) LOAD_ROW(row);
  for (; row < M; row += gridDim.x) {
    const int64_t off = row * N;
    float v[ELEMS];
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < N) {
        unpack8(ra[k], v + 8 * k);
      } else {
#pragma unroll
        for (int e = 0; e < 8; e++) v[8 * k + e] = -INFINITY;
      }
    }
    const int64_t next = row + gridDim.x;
    if (next < M) LOAD_ROW(next);
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < ELEMS; k++) m = fmaxf(m, v[k]);
    m = block_max(m, red_m); /* finite: N >= 1 */
    const float mb = m * L2E;
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < ELEMS; k++) {
      v[k] = ex2(fmaf(v[k], L2E, -mb)); /* padding: ex2(-inf) = 0 */
      s += v[k];
    }
    s = block_sum(s, red_s);
    const float inv = 1.0f / s;
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < N) {
        float o[8];
#pragma unroll
        for (int e = 0; e < 8; e++) o[e] = v[8 * k + e] * inv;
        __stwb(reinterpret_cast<uint4 *>(y + off + c), pack8(o));
      }
    }
  }
}

/* Rows longer than CAP: online sweep, block merge, rescale sweep. */
template <bool VEC>
__global__ void __launch_bounds__(THREADS)
softmax_loop(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int64_t N) {
  __shared__ float red_m[NWARPS], red_s[NWARPS];
  const int tid = threadIdx.x;
  const uint16_t *xr = x + (int64_t)blockIdx.x * N;
  uint16_t *yr = y + (int64_t)blockIdx.x * N;
  float m = -INFINITY, s = 0.f; /* log2 domain */
  if (VEC) {
    for (int64_t c = (int64_t)tid * 8; c < N; c += (int64_t)THREADS * 8) {
      float f[8];
      unpack8(__ldg(reinterpret_cast<const uint4 *>(xr + c)), f);
      float lm = f[0];
#pragma unroll
      for (int e = 1; e < 8; e++) lm = fmaxf(lm, f[e]);
      lm *= L2E;
      float ls = 0.f;
#pragma unroll
      for (int e = 0; e < 8; e++) ls += ex2(fmaf(f[e], L2E, -lm));
      ms_merge(m, s, lm, ls);
    }
  } else {
    for (int64_t c = tid; c < N; c += THREADS) ms_merge(m, s, bf2f(xr[c]) * L2E, 1.f);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    float s2 = __shfl_xor_sync(0xffffffffu, s, o);
    ms_merge(m, s, m2, s2);
  }
  if ((tid & 31) == 0) { red_m[tid >> 5] = m; red_s[tid >> 5] = s; }
  __syncthreads();
  m = red_m[0]; s = red_s[0];
  for (int w = 1; w < NWARPS; w++) ms_merge(m, s, red_m[w], red_s[w]);
  const float inv = 1.0f / s;
  if (VEC) {
    for (int64_t c = (int64_t)tid * 8; c < N; c += (int64_t)THREADS * 8) {
      float f[8];
      unpack8(__ldg(reinterpret_cast<const uint4 *>(xr + c)), f);
#pragma unroll
      for (int e = 0; e < 8; e++) f[e] = ex2(fmaf(f[e], L2E, -m)) * inv;
      __stwb(reinterpret_cast<uint4 *>(yr + c), pack8(f));
    }
  } else {
    for (int64_t c = tid; c < N; c += THREADS)
      yr[c] = f2bf(ex2(fmaf(bf2f(xr[c]), L2E, -m)) * inv);
  }
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t M = a->params[0], N = a->params[1];
  if (M <= 0 || N <= 0 || M > 0x7fffffff) return 1;
  const uint16_t *x = (const uint16_t *)a->inputs[0].data;
  uint16_t *y = (uint16_t *)a->outputs[0].data;
  cudaStream_t st = (cudaStream_t)a->stream;
  const bool vec = N % 8 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0;
  if (vec && N <= CAP) {
    int dev = 0, sms = 132;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return 1;
    /* never more blocks than fit at once: a second wave of a persistent
     * grid is a tail of whole blocks' rows */
    int fit = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, softmax_pipe, THREADS, 0) !=
            cudaSuccess || fit < 1)
      return 1;
    int64_t blocks = (int64_t)sms * (BPS < fit ? BPS : fit);
    if (blocks > M) blocks = M;
    softmax_pipe<<<(unsigned)blocks, THREADS, 0, st>>>(x, y, M, N);
  } else if (vec) {
    softmax_loop<true><<<(unsigned)M, THREADS, 0, st>>>(x, y, N);
  } else {
    softmax_loop<false><<<(unsigned)M, THREADS, 0, st>>>(x, y, N);
  }
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
