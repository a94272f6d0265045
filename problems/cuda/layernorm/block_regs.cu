/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/layernorm/block_regs.cu -- LayerNorm, one block per row, the
 * row held in registers (f32) between the read and the write: x is read
 * once, y written once, w and b (16 KB each at N = 8192) come from L2/L1.
 *
 * Each thread loads its VPT 16-byte vectors up front; a block sum gives the
 * mean, then a second block sum over the registers gives sum((x - mean)^2):
 * the exact two-pass variance, stable on the 'offset' distribution, at the
 * price of one more barrier, not one more read.
 *
 * Paths, chosen at launch:
 *   vector   N % 8 == 0 and x, w, b, y 16-byte aligned, N <= CAP
 *   scalar   otherwise, N <= CAP (2-byte loads, same register caching)
 *   loop     N > CAP: a sweep for the mean, a sweep for sum((x - mean)^2)
 *            (the same exact two-pass variance; a shifted one-pass variance
 *            was not accurate enough once w and b amplify the cancellation
 *            in x_hat * w + b), then a sweep that writes: three reads of x,
 *            the later ones from L2 when the row is still there
 * CAP = THREADS * VPT_EFF * 8; VPT_EFF caps VPT at 2048 / THREADS.
 *
 * Cache hints: the inputs are loaded through the read-only path with no
 * eviction hint (__ldg) and y is stored write-back (__stwb), as Triton's
 * plain loads and stores: the streaming hints (__ldcs, __stcs) cost 3-5%
 * on an H200 (best builds by one loop: layernorm 0.0642 against 0.0663 ms;
 * 2026-11-29, docs/bench-notes.md).
 * Built for sm_100a/sm_103a/sm_120a the defaults spill 12-28 bytes with
 * these loads (none with __ldcs; scripts/check-cuda-problems); no GPU of
 * those has timed either.
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

static_assert(THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 1024,
              "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(VPT >= 1, "VPT must be >= 1");

#define EPS 1e-5f

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

template <bool VEC>
__global__ void __launch_bounds__(THREADS)
layernorm_regs(const uint16_t *__restrict__ x, const uint16_t *__restrict__ w,
               const uint16_t *__restrict__ b, uint16_t *__restrict__ y, int64_t N) {
  __shared__ float red0[NWARPS], red1[NWARPS];
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
        for (int e = 0; e < 8; e++) v[8 * k + e] = 0.f;
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < ELEMS; k++) {
      const int64_t c = (int64_t)k * THREADS + tid;
      v[k] = c < N ? bf2f(xr[c]) : 0.f;
    }
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < ELEMS; k++) s += v[k];
  const float mean = block_sum(s, red0) / (float)N;
  float q = 0.f;
  if (VEC) {
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < N) {
#pragma unroll
        for (int e = 0; e < 8; e++) {
          const float d = v[8 * k + e] - mean;
          q = fmaf(d, d, q);
        }
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < ELEMS; k++) {
      const int64_t c = (int64_t)k * THREADS + tid;
      const float d = v[k] - mean;
      if (c < N) q = fmaf(d, d, q);
    }
  }
  const float rstd = rsqrtf(block_sum(q, red1) / (float)N + EPS);
  if (VEC) {
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < N) {
        float wf[8], bf[8], o[8];
        unpack8(__ldg(reinterpret_cast<const uint4 *>(w + c)), wf);
        unpack8(__ldg(reinterpret_cast<const uint4 *>(b + c)), bf);
#pragma unroll
        for (int e = 0; e < 8; e++) o[e] = fmaf((v[8 * k + e] - mean) * rstd, wf[e], bf[e]);
        __stwb(reinterpret_cast<uint4 *>(yr + c), pack8(o));
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < ELEMS; k++) {
      const int64_t c = (int64_t)k * THREADS + tid;
      if (c < N) yr[c] = f2bf(fmaf((v[k] - mean) * rstd, bf2f(w[c]), bf2f(b[c])));
    }
  }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS)
layernorm_loop(const uint16_t *__restrict__ x, const uint16_t *__restrict__ w,
               const uint16_t *__restrict__ b, uint16_t *__restrict__ y, int64_t N) {
  __shared__ float red0[NWARPS], red1[NWARPS];
  const int tid = threadIdx.x;
  const uint16_t *xr = x + (int64_t)blockIdx.x * N;
  uint16_t *yr = y + (int64_t)blockIdx.x * N;
  float s = 0.f;
  if (VEC) {
    for (int64_t c = (int64_t)tid * 8; c < N; c += (int64_t)THREADS * 8) {
      float f[8];
      unpack8(__ldg(reinterpret_cast<const uint4 *>(xr + c)), f);
#pragma unroll
      for (int e = 0; e < 8; e++) s += f[e];
    }
  } else {
    for (int64_t c = tid; c < N; c += THREADS) s += bf2f(xr[c]);
  }
  const float mean = block_sum(s, red0) / (float)N;
  float q = 0.f;
  if (VEC) {
    for (int64_t c = (int64_t)tid * 8; c < N; c += (int64_t)THREADS * 8) {
      float f[8];
      unpack8(__ldg(reinterpret_cast<const uint4 *>(xr + c)), f);
#pragma unroll
      for (int e = 0; e < 8; e++) {
        const float d = f[e] - mean;
        q = fmaf(d, d, q);
      }
    }
  } else {
    for (int64_t c = tid; c < N; c += THREADS) {
      const float d = bf2f(xr[c]) - mean;
      q = fmaf(d, d, q);
    }
  }
  const float rstd = rsqrtf(block_sum(q, red1) / (float)N + EPS);
  if (VEC) {
    for (int64_t c = (int64_t)tid * 8; c < N; c += (int64_t)THREADS * 8) {
      float f[8], wf[8], bf[8];
      unpack8(__ldg(reinterpret_cast<const uint4 *>(xr + c)), f);
      unpack8(__ldg(reinterpret_cast<const uint4 *>(w + c)), wf);
      unpack8(__ldg(reinterpret_cast<const uint4 *>(b + c)), bf);
#pragma unroll
      for (int e = 0; e < 8; e++) f[e] = fmaf((f[e] - mean) * rstd, wf[e], bf[e]);
      __stwb(reinterpret_cast<uint4 *>(yr + c), pack8(f));
    }
  } else {
    for (int64_t c = tid; c < N; c += THREADS)
      yr[c] = f2bf(fmaf((bf2f(xr[c]) - mean) * rstd, bf2f(w[c]), bf2f(b[c])));
  }
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 3 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t M = a->params[0], N = a->params[1];
  if (M <= 0 || N <= 0 || M > 0x7fffffff) return 1;
  const uint16_t *x = (const uint16_t *)a->inputs[0].data;
  const uint16_t *w = (const uint16_t *)a->inputs[1].data;
  const uint16_t *b = (const uint16_t *)a->inputs[2].data;
  uint16_t *y = (uint16_t *)a->outputs[0].data;
  cudaStream_t st = (cudaStream_t)a->stream;
  const bool vec = N % 8 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)w % 16 == 0 &&
                   (uintptr_t)b % 16 == 0 && (uintptr_t)y % 16 == 0;
  const dim3 grid((unsigned)M);
  if (N <= CAP) {
    if (vec) layernorm_regs<true><<<grid, THREADS, 0, st>>>(x, w, b, y, N);
    else layernorm_regs<false><<<grid, THREADS, 0, st>>>(x, w, b, y, N);
  } else {
    if (vec) layernorm_loop<true><<<grid, THREADS, 0, st>>>(x, w, b, y, N);
    else layernorm_loop<false><<<grid, THREADS, 0, st>>>(x, w, b, y, N);
  }
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
