/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/rmsnorm/pipe_rows.cu -- RMSNorm, persistent blocks that walk
 * rows (row = blockIdx.x, then every gridDim.x-th), software-pipelined: the
 * next row's loads are issued before the current row's block reduction and
 * write, so a block keeps memory busy while it reduces.  block_regs idles
 * its loads across every barrier; at 4+ TB/s (H200) that gap is what keeps
 * it below the copy ceiling.
 *
 * One block sum per row through a double-buffered shared array (a fast
 * warp may start the next row's reduction while slow warps still read the
 * last one's); y = x * rsqrt(mean(x^2) + eps) * w.
 *
 * Paths, chosen at launch:
 *   pipelined  N % 8 == 0, every pointer 16-byte aligned, N <= CAP
 *   loop       otherwise: one block per row, a sum-of-squares sweep, then a
 *              sweep that reads x again and writes
 * CAP = THREADS * VPT_EFF * 8; VPT_EFF caps VPT at 1024 / THREADS vectors
 * (two rows live per thread).
 *
 * Cache hints: the inputs are loaded through the read-only path with no
 * eviction hint (__ldg) and y is stored write-back (__stwb), as Triton's
 * plain loads and stores: the streaming hints (__ldcs, __stcs) cost 3-5%
 * on an H200 (best builds by one loop: rmsnorm 0.0624 against 0.0655 ms;
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

/* A 16-byte load whose line L2 should keep (an evict_last policy, as
 * Triton's evict_last): the two-sweep path's first sweep, whose lines the
 * second sweep reads again.  With the sweeps also
 * unrolled by 4, 4% faster on an H200 (0.0660 against 0.0687 ms, every
 * knob combination checked; 2026-11-29, docs/bench-notes.md); unrolled
 * alone, no change. */
__device__ __forceinline__ uint4 ld_evict_last(const uint16_t *p) {
  uint4 r;
  uint64_t pol;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  asm("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p), "l"(pol));
  return r;
}

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
/* two rows in registers at once (the one being written, the next one
 * arriving): half the per-thread payload of block_regs */
#define VPT_MAX ((1024 / THREADS) > 0 ? (1024 / THREADS) : 1)
#define VPT_EFF (VPT < VPT_MAX ? VPT : VPT_MAX)
#define ELEMS (VPT_EFF * 8)
#define CAP ((int64_t)THREADS * ELEMS)

static_assert(THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 1024,
              "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(VPT >= 1, "VPT must be >= 1");
static_assert(BPS >= 1 && BPS <= 32, "BPS must be in [1, 32]");

#define EPS 1e-6f

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

/* Block-wide sum; every thread gets the result.  red holds NWARPS. */
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
rms_pipe(const uint16_t *__restrict__ x, const uint16_t *__restrict__ w,
         uint16_t *__restrict__ y, int64_t M, int64_t N) {
  __shared__ float red[2][NWARPS];
  const int tid = threadIdx.x;
  uint4 ra[VPT_EFF];
  int64_t row = blockIdx.x;
  if (row < M) LOAD_ROW(row);
  int par = 0;
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
        for (int e = 0; e < 8; e++) v[8 * k + e] = 0.f;
      }
    }
    const int64_t next = row + gridDim.x;
    if (next < M) LOAD_ROW(next);
    float ss = 0.f;
#pragma unroll
    for (int k = 0; k < ELEMS; k++) ss = fmaf(v[k], v[k], ss);
    ss = block_sum(ss, red[par]);
    par ^= 1;
    const float rs = rsqrtf(ss / (float)N + EPS);
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < N) {
        float wf[8], o[8];
        unpack8(__ldg(reinterpret_cast<const uint4 *>(w + c)), wf);
#pragma unroll
        for (int e = 0; e < 8; e++) o[e] = v[8 * k + e] * rs * wf[e];
        __stwb(reinterpret_cast<uint4 *>(y + off + c), pack8(o));
      }
    }
  }
}

/* Unaligned rows, or rows longer than CAP. */
template <bool VEC>
__global__ void __launch_bounds__(THREADS)
rms_loop(const uint16_t *__restrict__ x, const uint16_t *__restrict__ w,
         uint16_t *__restrict__ y, int64_t N) {
  __shared__ float red[NWARPS];
  const int tid = threadIdx.x;
  const uint16_t *xr = x + (int64_t)blockIdx.x * N;
  uint16_t *yr = y + (int64_t)blockIdx.x * N;
  float ss = 0.f;
  if (VEC) {
#pragma unroll 4
    for (int64_t c = (int64_t)tid * 8; c < N; c += (int64_t)THREADS * 8) {
      float f[8];
      unpack8(ld_evict_last(xr + c), f);
#pragma unroll
      for (int e = 0; e < 8; e++) ss = fmaf(f[e], f[e], ss);
    }
  } else {
    for (int64_t c = tid; c < N; c += THREADS) {
      const float f = bf2f(xr[c]);
      ss = fmaf(f, f, ss);
    }
  }
  ss = block_sum(ss, red);
  const float rs = rsqrtf(ss / (float)N + EPS);
  if (VEC) {
#pragma unroll 4
    for (int64_t c = (int64_t)tid * 8; c < N; c += (int64_t)THREADS * 8) {
      float f[8], wf[8];
      unpack8(__ldg(reinterpret_cast<const uint4 *>(xr + c)), f);
      unpack8(__ldg(reinterpret_cast<const uint4 *>(w + c)), wf);
#pragma unroll
      for (int e = 0; e < 8; e++) f[e] = f[e] * rs * wf[e];
      __stwb(reinterpret_cast<uint4 *>(yr + c), pack8(f));
    }
  } else {
    for (int64_t c = tid; c < N; c += THREADS) yr[c] = f2bf(bf2f(xr[c]) * rs * bf2f(w[c]));
  }
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 2 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t M = a->params[0], N = a->params[1];
  if (M <= 0 || N <= 0 || M > 0x7fffffff) return 1;
  const uint16_t *x = (const uint16_t *)a->inputs[0].data;
  const uint16_t *w = (const uint16_t *)a->inputs[1].data;
  uint16_t *y = (uint16_t *)a->outputs[0].data;
  cudaStream_t st = (cudaStream_t)a->stream;
  const bool vec = N % 8 == 0 && (uintptr_t)x % 16 == 0 &&
                   (uintptr_t)w % 16 == 0 && (uintptr_t)y % 16 == 0;
  if (vec && N <= CAP) {
    int dev = 0, sms = 132;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return 1;
    /* never more blocks than fit at once: a second wave of a persistent
     * grid is a tail of whole blocks' rows */
    int fit = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, rms_pipe, THREADS, 0) !=
            cudaSuccess || fit < 1)
      return 1;
    int64_t blocks = (int64_t)sms * (BPS < fit ? BPS : fit);
    if (blocks > M) blocks = M;
    rms_pipe<<<(unsigned)blocks, THREADS, 0, st>>>(x, w, y, M, N);
  } else if (vec) {
    rms_loop<true><<<(unsigned)M, THREADS, 0, st>>>(x, w, y, N);
  } else {
    rms_loop<false><<<(unsigned)M, THREADS, 0, st>>>(x, w, y, N);
  }
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
