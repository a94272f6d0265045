/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/softmax/block_regs.cu -- row softmax, one block per row, the
 * row held in registers between the read and the write: global memory is
 * read once and written once.
 *
 * Each thread loads its VPT 16-byte vectors (8 bf16 each) up front, so a
 * block keeps THREADS * VPT * 16 bytes in flight; a block max and a block
 * sum (warp shuffles, one shared-memory exchange each) give the row's max
 * and denominator; exponentials are computed once and kept as floats.
 *
 * Paths, chosen at launch:
 *   vector   N % 8 == 0 and both pointers 16-byte aligned, N <= CAP
 *   scalar   otherwise, N <= CAP (2-byte loads, same register caching)
 *   loop     N > CAP: online max/sum sweep, then a rescale sweep that
 *            reads the row again (from L2 when it is still there)
 * CAP = THREADS * VPT_EFF * 8 columns; VPT_EFF caps VPT so that a thread
 * never holds more than 2048 / THREADS vectors (64 floats at 256 threads),
 * which keeps every knob combination within the register file.
 *
 * Cache hints: the inputs are loaded through the read-only path with no
 * eviction hint (__ldg) and y is stored write-back (__stwb), as Triton's
 * plain loads and stores: the streaming hints (__ldcs, __stcs) cost 3-5%
 * on an H200 (best builds by one loop: softmax 0.0621 against 0.0653 ms;
 * 2026-11-29, docs/bench-notes.md).
 *
 * Knobs: THREADS (threads per block), VPT (16-byte vectors per thread).
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

#define NWARPS (THREADS / 32)
#define VPT_MAX ((2048 / THREADS) > 0 ? (2048 / THREADS) : 1)
#define VPT_EFF (VPT < VPT_MAX ? VPT : VPT_MAX)
#define ELEMS (VPT_EFF * 8)
#define CAP ((int64_t)THREADS * ELEMS)
#define L2E 1.4426950408889634f

static_assert(THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 1024,
              "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(VPT >= 1, "VPT must be >= 1");

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

template <bool VEC>
__global__ void __launch_bounds__(THREADS)
softmax_regs(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int64_t N) {
  __shared__ float red_m[NWARPS], red_s[NWARPS];
  const int tid = threadIdx.x;
  const uint16_t *xr = x + (int64_t)blockIdx.x * N;
  uint16_t *yr = y + (int64_t)blockIdx.x * N;
  float v[ELEMS];
  if (VEC) {
    uint4 raw[VPT_EFF];
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < N) raw[k] = __ldg(reinterpret_cast<const uint4 *>(xr + c));
    }
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < N) {
        unpack8(raw[k], v + 8 * k);
      } else {
#pragma unroll
        for (int e = 0; e < 8; e++) v[8 * k + e] = -INFINITY;
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < ELEMS; k++) {
      const int64_t c = (int64_t)k * THREADS + tid;
      v[k] = c < N ? bf2f(xr[c]) : -INFINITY;
    }
  }
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
  if (VEC) {
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < N) {
        float o[8];
#pragma unroll
        for (int e = 0; e < 8; e++) o[e] = v[8 * k + e] * inv;
        __stwb(reinterpret_cast<uint4 *>(yr + c), pack8(o));
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < ELEMS; k++) {
      const int64_t c = (int64_t)k * THREADS + tid;
      if (c < N) yr[c] = f2bf(v[k] * inv);
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
  const dim3 grid((unsigned)M);
  if (N <= CAP) {
    if (vec) softmax_regs<true><<<grid, THREADS, 0, st>>>(x, y, N);
    else softmax_regs<false><<<grid, THREADS, 0, st>>>(x, y, N);
  } else {
    if (vec) softmax_loop<true><<<grid, THREADS, 0, st>>>(x, y, N);
    else softmax_loop<false><<<grid, THREADS, 0, st>>>(x, y, N);
  }
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
