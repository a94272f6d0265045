/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/residual_rmsnorm/block_regs.cu -- fused residual add +
 * RMSNorm, one block per row; the rounded sum h stays in registers (f32)
 * between its store and the normalized write: x and r are read once, h and
 * y written once, w (16 KB at N = 8192) comes from L2/L1 for every row.
 *
 * Each thread loads its VPT 16-byte vectors of x and of r up front (2 x
 * THREADS x VPT x 16 bytes in flight per block), stores h = bf16(x + r),
 * sums the squares of the rounded h (the tensor the norm is defined on),
 * one block reduction, then y = h * rsqrt(ss / N + eps) * w.
 *
 * Paths, chosen at launch:
 *   vector   N % 8 == 0, every pointer 16-byte aligned, N <= CAP
 *   scalar   otherwise, N <= CAP (2-byte accesses, same register caching)
 *   loop     N > CAP: a sweep that writes h and sums its squares, then a
 *            sweep that reads h back (each thread only what it wrote) and
 *            writes y
 * CAP = THREADS * VPT_EFF * 8; VPT_EFF caps VPT at 2048 / THREADS vectors.
 *
 * Cache hints: the inputs are loaded through the read-only path with no
 * eviction hint (__ldg) and y is stored write-back (__stwb), as Triton's
 * plain loads and stores: the streaming hints (__ldcs, __stcs) cost 3-5%
 * on an H200 (best builds by one loop: residual_rmsnorm 0.1277 against
 * 0.1340 ms; 2026-11-29, docs/bench-notes.md).
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

template <bool VEC>
__global__ void __launch_bounds__(THREADS)
res_regs(const uint16_t *__restrict__ x, const uint16_t *__restrict__ r,
         const uint16_t *__restrict__ w, uint16_t *__restrict__ h,
         uint16_t *__restrict__ y, int64_t N) {
  __shared__ float red[NWARPS];
  const int tid = threadIdx.x;
  const int64_t off = (int64_t)blockIdx.x * N;
  float v[ELEMS];
  if (VEC) {
    uint4 ra[VPT_EFF], rb[VPT_EFF];
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < N) {
        ra[k] = __ldg(reinterpret_cast<const uint4 *>(x + off + c));
        rb[k] = __ldg(reinterpret_cast<const uint4 *>(r + off + c));
      }
    }
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < N) {
        float a[8], b[8];
        unpack8(ra[k], a);
        unpack8(rb[k], b);
#pragma unroll
        for (int e = 0; e < 8; e++) a[e] += b[e];
        const uint4 hp = pack8(a);
        __stwb(reinterpret_cast<uint4 *>(h + off + c), hp);
        unpack8(hp, v + 8 * k); /* the norm is over the rounded h */
      } else {
#pragma unroll
        for (int e = 0; e < 8; e++) v[8 * k + e] = 0.f;
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < ELEMS; k++) {
      const int64_t c = (int64_t)k * THREADS + tid;
      if (c < N) {
        const uint16_t hb = f2bf(bf2f(x[off + c]) + bf2f(r[off + c]));
        h[off + c] = hb;
        v[k] = bf2f(hb);
      } else {
        v[k] = 0.f;
      }
    }
  }
  float ss = 0.f;
#pragma unroll
  for (int k = 0; k < ELEMS; k++) ss = fmaf(v[k], v[k], ss);
  ss = block_sum(ss, red);
  const float rs = rsqrtf(ss / (float)N + EPS);
  if (VEC) {
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
  } else {
#pragma unroll
    for (int k = 0; k < ELEMS; k++) {
      const int64_t c = (int64_t)k * THREADS + tid;
      if (c < N) y[off + c] = f2bf(v[k] * rs * bf2f(w[c]));
    }
  }
}

/* Rows longer than CAP.  h is read back with ordinary loads (never the
 * read-only path: this kernel wrote it), each thread only its own
 * elements, so no barrier is needed between its store and its load. */
template <bool VEC>
__global__ void __launch_bounds__(THREADS)
res_loop(const uint16_t *__restrict__ x, const uint16_t *__restrict__ r,
         const uint16_t *__restrict__ w, uint16_t *h, uint16_t *__restrict__ y,
         int64_t N) {
  __shared__ float red[NWARPS];
  const int tid = threadIdx.x;
  const int64_t off = (int64_t)blockIdx.x * N;
  float ss = 0.f;
  if (VEC) {
    for (int64_t c = (int64_t)tid * 8; c < N; c += (int64_t)THREADS * 8) {
      float a[8], b[8];
      unpack8(__ldg(reinterpret_cast<const uint4 *>(x + off + c)), a);
      unpack8(__ldg(reinterpret_cast<const uint4 *>(r + off + c)), b);
#pragma unroll
      for (int e = 0; e < 8; e++) a[e] += b[e];
      const uint4 hp = pack8(a);
      *reinterpret_cast<uint4 *>(h + off + c) = hp;
      unpack8(hp, a);
#pragma unroll
      for (int e = 0; e < 8; e++) ss = fmaf(a[e], a[e], ss);
    }
  } else {
    for (int64_t c = tid; c < N; c += THREADS) {
      const uint16_t hb = f2bf(bf2f(x[off + c]) + bf2f(r[off + c]));
      h[off + c] = hb;
      const float f = bf2f(hb);
      ss = fmaf(f, f, ss);
    }
  }
  ss = block_sum(ss, red);
  const float rs = rsqrtf(ss / (float)N + EPS);
  if (VEC) {
    for (int64_t c = (int64_t)tid * 8; c < N; c += (int64_t)THREADS * 8) {
      float f[8], wf[8];
      unpack8(*reinterpret_cast<const uint4 *>(h + off + c), f);
      unpack8(__ldg(reinterpret_cast<const uint4 *>(w + c)), wf);
#pragma unroll
      for (int e = 0; e < 8; e++) f[e] = f[e] * rs * wf[e];
      __stwb(reinterpret_cast<uint4 *>(y + off + c), pack8(f));
    }
  } else {
    for (int64_t c = tid; c < N; c += THREADS)
      y[off + c] = f2bf(bf2f(h[off + c]) * rs * bf2f(w[c]));
  }
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 3 ||
      a->n_outputs != 2 || a->n_params != 2)
    return 1;
  const int64_t M = a->params[0], N = a->params[1];
  if (M <= 0 || N <= 0 || M > 0x7fffffff) return 1;
  const uint16_t *x = (const uint16_t *)a->inputs[0].data;
  const uint16_t *r = (const uint16_t *)a->inputs[1].data;
  const uint16_t *w = (const uint16_t *)a->inputs[2].data;
  uint16_t *h = (uint16_t *)a->outputs[0].data;
  uint16_t *y = (uint16_t *)a->outputs[1].data;
  cudaStream_t st = (cudaStream_t)a->stream;
  const bool vec = N % 8 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)r % 16 == 0 &&
                   (uintptr_t)w % 16 == 0 && (uintptr_t)h % 16 == 0 &&
                   (uintptr_t)y % 16 == 0;
  const dim3 grid((unsigned)M);
  if (N <= CAP) {
    if (vec) res_regs<true><<<grid, THREADS, 0, st>>>(x, r, w, h, y, N);
    else res_regs<false><<<grid, THREADS, 0, st>>>(x, r, w, h, y, N);
  } else {
    if (vec) res_loop<true><<<grid, THREADS, 0, st>>>(x, r, w, h, y, N);
    else res_loop<false><<<grid, THREADS, 0, st>>>(x, r, w, h, y, N);
  }
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
