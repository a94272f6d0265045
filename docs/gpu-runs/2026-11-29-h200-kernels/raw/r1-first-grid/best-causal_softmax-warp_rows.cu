/* causal_softmax warp_rows, 0.1179 ms in gpucheck */
#define VPL 2
/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/causal_softmax/warp_rows.cu -- causal-masked softmax of
 * x[H][S][S] / 8, one warp per row, WARPS rows per block; no shared memory
 * and no block barriers: every reduction is a warp shuffle.  Row i reads
 * only columns 0..i; the masked columns are written as zeros without a
 * read.  Short causal rows (the first rows of every head) keep a warp busy
 * for a few vectors instead of a whole block.
 *
 * Paths, chosen at launch:
 *   regs   S % 8 == 0, both pointers 16-byte aligned and S <= 256 * VPL:
 *          each lane loads its VPL 16-byte vectors up front (vectors
 *          starting past i are skipped) and keeps exp2 values as floats
 *   stream otherwise: an online max/sum sweep over 0..i, then a sweep that
 *          reads them again (an L2 hit when still there) and writes the row;
 *          16-byte accesses when aligned, 2-byte when not
 *
 * Knobs: WARPS (rows per block), VPL (16-byte vectors per lane held in
 * registers; 8 covers S = 2048; capped at 8 so no knob combination spills).
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "kf_candidate.h"

#ifndef WARPS
#define WARPS 4
#endif
#ifndef VPL
#define VPL 8
#endif

#define THREADS (WARPS * 32)
#define VPL_EFF (VPL < 8 ? VPL : 8)
#define ELEMS (VPL_EFF * 8)
#define CAP ((int64_t)32 * ELEMS)
#define SL2E (1.4426950408889634f * 0.125f)

static_assert(WARPS >= 1 && WARPS <= 32, "WARPS must be in [1, 32]");
static_assert(VPL >= 1, "VPL must be >= 1");

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

/* Merges (m2, s2) into the running (m, s): s counts exp2(t - m). */
__device__ __forceinline__ void ms_merge(float &m, float &s, float m2, float s2) {
  float mn = fmaxf(m, m2);
  if (mn == -INFINITY) return;
  s = s * ex2(m - mn) + s2 * ex2(m2 - mn); /* ex2(-inf) == 0 */
  m = mn;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void __launch_bounds__(THREADS)
causal_warp_regs(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int64_t S,
                 int64_t rows) {
  const int lane = threadIdx.x & 31;
  const int64_t row = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5);
  if (row >= rows) return; /* whole warps leave together: no barrier below */
  const int64_t len = row % S + 1;
  const uint16_t *xr = x + row * S;
  uint16_t *yr = y + row * S;
  float v[ELEMS];
  uint4 raw[VPL_EFF];
#pragma unroll
  for (int k = 0; k < VPL_EFF; k++) {
    const int64_t c = ((int64_t)k * 32 + lane) * 8;
    if (c < len) raw[k] = __ldcs(reinterpret_cast<const uint4 *>(xr + c));
  }
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < VPL_EFF; k++) {
    const int64_t c = ((int64_t)k * 32 + lane) * 8;
    if (c < len) {
      unpack8(raw[k], v + 8 * k);
#pragma unroll
      for (int e = 0; e < 8; e++) {
        v[8 * k + e] = c + e < len ? v[8 * k + e] * SL2E : -INFINITY;
        m = fmaxf(m, v[8 * k + e]);
      }
    } else {
#pragma unroll
      for (int e = 0; e < 8; e++) v[8 * k + e] = -INFINITY;
    }
  }
  m = warp_max(m);
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < ELEMS; k++) {
    v[k] = ex2(v[k] - m);
    s += v[k];
  }
  const float inv = 1.0f / warp_sum(s);
#pragma unroll
  for (int k = 0; k < VPL_EFF; k++) {
    const int64_t c = ((int64_t)k * 32 + lane) * 8;
    if (c < S) {
      float o[8];
#pragma unroll
      for (int e = 0; e < 8; e++) o[e] = v[8 * k + e] * inv;
      __stcs(reinterpret_cast<uint4 *>(yr + c), pack8(o));
    }
  }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS)
causal_warp_stream(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int64_t S,
                   int64_t rows) {
  const int lane = threadIdx.x & 31;
  const int64_t row = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5);
  if (row >= rows) return;
  const int64_t len = row % S + 1;
  const uint16_t *xr = x + row * S;
  uint16_t *yr = y + row * S;
  float m = -INFINITY, s = 0.f; /* log2 domain */
  if (VEC) {
    for (int64_t c = (int64_t)lane * 8; c < len; c += 256) {
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
    for (int64_t c = lane; c < len; c += 32) ms_merge(m, s, bf2f(xr[c]) * SL2E, 1.f);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    float s2 = __shfl_xor_sync(0xffffffffu, s, o);
    ms_merge(m, s, m2, s2);
  }
  const float inv = 1.0f / s;
  if (VEC) {
    for (int64_t c = (int64_t)lane * 8; c < S; c += 256) {
      float f[8];
      if (c < len) {
        unpack8(__ldg(reinterpret_cast<const uint4 *>(xr + c)), f);
#pragma unroll
        for (int e = 0; e < 8; e++)
          f[e] = c + e < len ? ex2(f[e] * SL2E - m) * inv : 0.f;
      } else {
#pragma unroll
        for (int e = 0; e < 8; e++) f[e] = 0.f;
      }
      __stcs(reinterpret_cast<uint4 *>(yr + c), pack8(f));
    }
  } else {
    for (int64_t c = lane; c < S; c += 32)
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
  const int64_t rows = H * S;
  const bool vec = S % 8 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0;
  const unsigned blocks = (unsigned)((rows + WARPS - 1) / WARPS);
  if (vec && S <= CAP)
    causal_warp_regs<<<blocks, THREADS, 0, st>>>(x, y, S, rows);
  else if (vec)
    causal_warp_stream<true><<<blocks, THREADS, 0, st>>>(x, y, S, rows);
  else
    causal_warp_stream<false><<<blocks, THREADS, 0, st>>>(x, y, S, rows);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
