/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/causal_softmax/block_regs.cu -- causal-masked softmax of
 * x[H][S][S] / 8, one block per row, the unmasked part of the row held in
 * registers between the read and the write.  Row i reads only columns
 * 0..i (the masked x are never loaded: a causal row costs (i+1) reads and S
 * writes), so the whole tensor reads about half its bytes.
 *
 * Each thread loads its VPT 16-byte vectors up front, skipping vectors that
 * start past i; elements past i inside the last vector become -inf.  A
 * block max and a block sum (warp shuffles, one shared-memory exchange
 * each) give the row's max and denominator; exponentials are computed once
 * (exp2 of x * log2(e) / 8 - max) and kept as floats; masked columns are
 * written as zeros without a read.
 *
 * Paths, chosen at launch:
 *   vector   S % 8 == 0 and both pointers 16-byte aligned, S <= CAP
 *   scalar   otherwise, S <= CAP (2-byte accesses, same register caching)
 *   loop     S > CAP: an online max/sum sweep over columns 0..i, then a
 *            sweep that reads them again and writes the whole row
 * CAP = THREADS * VPT_EFF * 8 columns; VPT_EFF caps VPT at 2048 / THREADS
 * vectors per thread (64 floats at 256 threads).
 *
 * Knobs: THREADS (threads per block), VPT (16-byte vectors per thread).
 *
 * Zeros first: the vectors wholly past i are stored (zeros) right after
 * the row's loads are issued, so those stores drain while the block waits
 * for its loads and reductions rather than after them.  H200, checked and
 * timed by one loop (docs/gpu-runs/2026-11-30-h200-s2, lab): 1.8-7% faster
 * for every build on the register path (THREADS 128 VPT 2: 0.1055 ->
 * 0.1036 ms).  Dealing rows to blocks short and long alternately, to mix
 * write-heavy and read-heavy rows in flight, was 2-20% slower: dropped.
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
#define VPT 1
#endif

#define NWARPS (THREADS / 32)
#define VPT_MAX ((2048 / THREADS) > 0 ? (2048 / THREADS) : 1)
#define VPT_EFF (VPT < VPT_MAX ? VPT : VPT_MAX)
#define ELEMS (VPT_EFF * 8)
#define CAP ((int64_t)THREADS * ELEMS)
/* log2(e) / 8: the score scale folded into exp2's argument */
#define SL2E (1.4426950408889634f * 0.125f)

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
/* Merges (m2, s2) into the running (m, s): s counts exp2(t - m). */
__device__ __forceinline__ void ms_merge(float &m, float &s, float m2, float s2) {
  float mn = fmaxf(m, m2);
  if (mn == -INFINITY) return;
  s = s * ex2(m - mn) + s2 * ex2(m2 - mn); /* ex2(-inf) == 0 */
  m = mn;
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS)
causal_regs(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int64_t S) {
  __shared__ float red_m[NWARPS], red_s[NWARPS];
  const int tid = threadIdx.x;
  const int64_t row = blockIdx.x;
  const int64_t len = row % S + 1;
  const uint16_t *xr = x + row * S;
  uint16_t *yr = y + row * S;
  float v[ELEMS]; /* x * log2(e) / 8, -inf where masked */
  if (VEC) {
    uint4 raw[VPT_EFF];
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < len) raw[k] = __ldcs(reinterpret_cast<const uint4 *>(xr + c));
    }
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) { /* zeros first (above) */
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c >= len && c < S)
        __stcs(reinterpret_cast<uint4 *>(yr + c), make_uint4(0u, 0u, 0u, 0u));
    }
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < len) {
        unpack8(raw[k], v + 8 * k);
#pragma unroll
        for (int e = 0; e < 8; e++)
          v[8 * k + e] = c + e < len ? v[8 * k + e] * SL2E : -INFINITY;
      } else {
#pragma unroll
        for (int e = 0; e < 8; e++) v[8 * k + e] = -INFINITY;
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < ELEMS; k++) {
      const int64_t c = (int64_t)k * THREADS + tid;
      v[k] = c < len ? bf2f(xr[c]) * SL2E : -INFINITY;
    }
  }
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < ELEMS; k++) m = fmaxf(m, v[k]);
  m = block_max(m, red_m); /* finite: column 0 is never masked */
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < ELEMS; k++) {
    v[k] = ex2(v[k] - m); /* masked: ex2(-inf) = 0 */
    s += v[k];
  }
  s = block_sum(s, red_s);
  const float inv = 1.0f / s;
  if (VEC) {
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < len) { /* the zeros past i are out already */
        float o[8];
#pragma unroll
        for (int e = 0; e < 8; e++) o[e] = v[8 * k + e] * inv;
        __stcs(reinterpret_cast<uint4 *>(yr + c), pack8(o));
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < ELEMS; k++) {
      const int64_t c = (int64_t)k * THREADS + tid;
      if (c < S) yr[c] = f2bf(v[k] * inv);
    }
  }
}

/* Rows longer than CAP: online sweep over 0..i, block merge, write sweep. */
template <bool VEC>
__global__ void __launch_bounds__(THREADS)
causal_loop(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int64_t S) {
  __shared__ float red_m[NWARPS], red_s[NWARPS];
  const int tid = threadIdx.x;
  const int64_t row = blockIdx.x;
  const int64_t len = row % S + 1;
  const uint16_t *xr = x + row * S;
  uint16_t *yr = y + row * S;
  float m = -INFINITY, s = 0.f; /* log2 domain */
  if (VEC) {
    /* zeros first: the vectors wholly past i, before the sweeps */
    for (int64_t c = ((len + 7) / 8 + tid) * 8; c < S; c += (int64_t)THREADS * 8)
      __stcs(reinterpret_cast<uint4 *>(yr + c), make_uint4(0u, 0u, 0u, 0u));
    /* unrolled so that four iterations' loads are in flight at once: one
     * 16-byte load per thread at a time leaves a small block far from the
     * bytes an H200 needs in flight */
#pragma unroll 4
    for (int64_t c = (int64_t)tid * 8; c < len; c += (int64_t)THREADS * 8) {
      float f[8];
      unpack8(__ldg(reinterpret_cast<const uint4 *>(xr + c)), f);
      float lm = -INFINITY;
#pragma unroll
      for (int e = 0; e < 8; e++) {
        f[e] = c + e < len ? f[e] * SL2E : -INFINITY;
        lm = fmaxf(lm, f[e]);
      }
      float ls = 0.f;
#pragma unroll
      for (int e = 0; e < 8; e++) ls += ex2(f[e] - lm);
      ms_merge(m, s, lm, ls);
    }
  } else {
    for (int64_t c = tid; c < len; c += THREADS) ms_merge(m, s, bf2f(xr[c]) * SL2E, 1.f);
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
#pragma unroll 4
    for (int64_t c = (int64_t)tid * 8; c < len; c += (int64_t)THREADS * 8) {
      float f[8];
      unpack8(__ldg(reinterpret_cast<const uint4 *>(xr + c)), f);
#pragma unroll
      for (int e = 0; e < 8; e++)
        f[e] = c + e < len ? ex2(f[e] * SL2E - m) * inv : 0.f;
      __stcs(reinterpret_cast<uint4 *>(yr + c), pack8(f));
    }
  } else {
    for (int64_t c = tid; c < S; c += THREADS)
      yr[c] = c < len ? f2bf(ex2(bf2f(xr[c]) * SL2E - m) * inv) : (uint16_t)0;
  }
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t H = a->params[0], S = a->params[1];
  if (H <= 0 || S <= 0 || H > 0x7fffffff || S > 0x7fffffff || H * S > 0x7fffffff)
    return 1;
  const uint16_t *x = (const uint16_t *)a->inputs[0].data;
  uint16_t *y = (uint16_t *)a->outputs[0].data;
  cudaStream_t st = (cudaStream_t)a->stream;
  const bool vec = S % 8 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0;
  const dim3 grid((unsigned)(H * S));
  if (S <= CAP) {
    if (vec) causal_regs<true><<<grid, THREADS, 0, st>>>(x, y, S);
    else causal_regs<false><<<grid, THREADS, 0, st>>>(x, y, S);
  } else {
    if (vec) causal_loop<true><<<grid, THREADS, 0, st>>>(x, y, S);
    else causal_loop<false><<<grid, THREADS, 0, st>>>(x, y, S);
  }
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
