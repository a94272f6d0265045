/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/gelu_tanh/grid_stride.cu -- tanh GELU, bf16 in and out, a
 * persistent grid-stride loop: BLOCKS_PER_SM x (SM count) blocks, each thread
 * loads UNROLL 16-byte vectors (all in flight) before computing and storing
 * them with streaming (evict-first) stores.
 *
 * Paths, chosen at launch: x and y 16-byte aligned -> vectors over the first
 * n / 8 * 8 elements plus a scalar tail of < 8 elements in the same kernel;
 * otherwise a scalar grid-stride loop over everything.
 *
 * Knobs: THREADS, BLOCKS_PER_SM, UNROLL (vectors in flight per thread),
 * MATH (0: tanhf form, 1: sigmoid form with ex2/rcp approximations).
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "kf_candidate.h"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef BLOCKS_PER_SM
#define BLOCKS_PER_SM 4
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef MATH
#define MATH 1
#endif

static_assert(THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 1024, "THREADS");
static_assert(UNROLL >= 1 && UNROLL <= 8, "UNROLL must be in [1, 8] (more spills at 1024 threads)");
static_assert(MATH == 0 || MATH == 1, "MATH");

__device__ __forceinline__ float ex2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float rcp(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
/* MATH 0: 0.5 x (1 + tanhf(u)), the textbook form with the accurate tanhf.
 * MATH 1: the same function rewritten x * sigmoid(2u) = x / (1 + e^(-2u)):
 * one ex2.approx and one rcp.approx, no cancellation near x = -5, and it
 * saturates cleanly (e^(-2u) = inf gives rcp = 0, y = -0). */
__device__ __forceinline__ float gelu(float x) {
  const float k0 = 0.7978845608028654f, k1 = 0.044715f;
  const float u = k0 * fmaf(k1 * x, x * x, x);
#if MATH == 0
  return 0.5f * x * (1.0f + tanhf(u));
#else
  return x * rcp(1.0f + ex2(-2.0f * 1.4426950408889634f * u));
#endif
}
__device__ __forceinline__ float bf2f(uint16_t h) {
  return __uint_as_float((uint32_t)h << 16);
}
__device__ __forceinline__ uint16_t f2bf(float f) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}
__device__ __forceinline__ uint32_t gelu2(uint32_t v) {
  __nv_bfloat162 h = __floats2bfloat162_rn(gelu(__uint_as_float(v << 16)),
                                           gelu(__uint_as_float(v & 0xffff0000u)));
  return *reinterpret_cast<uint32_t *>(&h);
}
__device__ __forceinline__ uint4 gelu8(uint4 v) {
  v.x = gelu2(v.x); v.y = gelu2(v.y); v.z = gelu2(v.z); v.w = gelu2(v.w);
  return v;
}

__global__ void __launch_bounds__(THREADS)
gelu_vec(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int64_t n) {
  const int64_t nvec = n / 8;
  const uint4 *xv = reinterpret_cast<const uint4 *>(x);
  uint4 *yv = reinterpret_cast<uint4 *>(y);
  const int64_t stride = (int64_t)gridDim.x * THREADS;
  int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  for (; i + (UNROLL - 1) * stride < nvec; i += UNROLL * stride) {
    uint4 v[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; k++) v[k] = __ldcs(xv + i + k * stride);
#pragma unroll
    for (int k = 0; k < UNROLL; k++) __stcs(yv + i + k * stride, gelu8(v[k]));
  }
  for (; i < nvec; i += stride) __stcs(yv + i, gelu8(__ldcs(xv + i)));
  const int64_t t = nvec * 8 + (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (t < n) y[t] = f2bf(gelu(bf2f(x[t]))); /* < 8 tail elements */
}

__global__ void __launch_bounds__(THREADS)
gelu_scalar(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * THREADS)
    y[i] = f2bf(gelu(bf2f(x[i])));
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t n = a->params[0] * a->params[1];
  if (n <= 0) return 1;
  const uint16_t *x = (const uint16_t *)a->inputs[0].data;
  uint16_t *y = (uint16_t *)a->outputs[0].data;
  cudaStream_t st = (cudaStream_t)a->stream;
  int dev = 0, sms = 132;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return 1;
  const bool vec = (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0;
  /* never more blocks than there is work for */
  const int64_t per_block = vec ? (int64_t)THREADS * 8 : THREADS;
  int64_t blocks = (n + per_block - 1) / per_block;
  if (blocks > (int64_t)sms * BLOCKS_PER_SM) blocks = (int64_t)sms * BLOCKS_PER_SM;
  if (vec) gelu_vec<<<(unsigned)blocks, THREADS, 0, st>>>(x, y, n);
  else gelu_scalar<<<(unsigned)blocks, THREADS, 0, st>>>(x, y, n);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
