/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/cross_entropy/row_block.cu -- mean cross-entropy, one block
 * per row (rows strided over at most 65536 blocks), one pass over the
 * logits.
 *
 * Each thread folds UNROLL 16-byte vectors at a time (all loaded before
 * use) into a running (max, sum of exp(x - max)) with a single rescale per
 * UNROLL x 8 values; the block merges the pairs (warp shuffles, one
 * shared-memory exchange); thread 0 reads x[row][target] and adds
 * max + log(sum) - x_t, in double, to the block's partial.  Stage 2: one
 * block adds the per-block partials in a fixed order and divides by M.
 * Deterministic: no atomics; every order is fixed by M and the grid.
 *
 * Paths, chosen at launch: V % 8 == 0 and logits 16-byte aligned -> 16-byte
 * loads; otherwise 2-byte loads (one exp per value either way).
 *
 * Knobs: THREADS, UNROLL (16-byte vectors in flight per thread).
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "kf_candidate.h"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef UNROLL
#define UNROLL 4
#endif

#define NWARPS (THREADS / 32)

static_assert(THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 1024, "THREADS");
static_assert(UNROLL >= 1 && UNROLL <= 8, "UNROLL must be in [1, 8]");
/* 1024-thread blocks get 64 registers a thread: 8 vectors in flight spill
 * there, so cap at 4. */
#define UNROLL_EFF (THREADS > 512 && UNROLL > 4 ? 4 : UNROLL)

#define L2E 1.4426950408889634f
#define MAX_PARTIALS 65536

__device__ __forceinline__ float ex2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float bf2f(uint16_t h) {
  return __uint_as_float((uint32_t)h << 16);
}
__device__ __forceinline__ void unpack8(const uint4 v, float *f) {
  f[0] = __uint_as_float(v.x << 16); f[1] = __uint_as_float(v.x & 0xffff0000u);
  f[2] = __uint_as_float(v.y << 16); f[3] = __uint_as_float(v.y & 0xffff0000u);
  f[4] = __uint_as_float(v.z << 16); f[5] = __uint_as_float(v.z & 0xffff0000u);
  f[6] = __uint_as_float(v.w << 16); f[7] = __uint_as_float(v.w & 0xffff0000u);
}
/* Running (m, s) with s = sum exp(x - m), m in natural units and exact (a
 * max of bf16 values), so that x - m is exact near the max and
 * lse = m + log(s) carries no rounding of m. */
__device__ __forceinline__ void ms_merge(float &m, float &s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  if (mn == -INFINITY) return;
  s = s * ex2((m - mn) * L2E) + s2 * ex2((m2 - mn) * L2E); /* ex2(-inf) = 0 */
  m = mn;
}
/* Folds K values into (m, s) with one rescale. */
template <int K>
__device__ __forceinline__ void ms_fold(float &m, float &s, const float *f) {
  float lm = f[0];
#pragma unroll
  for (int e = 1; e < K; e++) lm = fmaxf(lm, f[e]);
  const float mn = fmaxf(m, lm);
  float acc = s * ex2((m - mn) * L2E);
#pragma unroll
  for (int e = 0; e < K; e++) acc += ex2((f[e] - mn) * L2E);
  s = acc;
  m = mn;
}
/* One scalar value into (m, s): one exp either way. */
__device__ __forceinline__ void ms_push(float &m, float &s, float v) {
  if (v > m) {
    s = s * ex2((m - v) * L2E) + 1.f;
    m = v;
  } else {
    s += ex2((v - m) * L2E);
  }
}
/* Row loss from the row's merged (m, s) and its target. */
__device__ __forceinline__ double row_loss(const uint16_t *xr, int64_t t, int64_t V,
                                           float m, float s) {
  const double xt = (t >= 0 && t < V) ? (double)bf2f(xr[t]) : (double)NAN;
  return (double)m + log((double)s) - xt;
}

/* One block of 1024 threads: the partials in a fixed order, / M, one
 * rounding to f32. */
__global__ void __launch_bounds__(1024)
ce_final(const double *__restrict__ part, int64_t np, int64_t M, float *__restrict__ out) {
  __shared__ double red[32];
  double s = 0.0;
  for (int64_t i = threadIdx.x; i < np; i += 1024) s += part[i];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double r = 0.0;
    for (int w = 0; w < 32; w++) r += red[w];
    out[0] = (float)(r / (double)M);
  }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS)
ce_rows(const uint16_t *__restrict__ x, const int64_t *__restrict__ tgt, int64_t M,
        int64_t V, double *__restrict__ part) {
  __shared__ float red_m[NWARPS], red_s[NWARPS];
  const int tid = threadIdx.x;
  double acc = 0.0; /* thread 0 only */
  for (int64_t r = blockIdx.x; r < M; r += gridDim.x) {
    const uint16_t *xr = x + r * V;
    float m = -INFINITY, s = 0.f;
    if (VEC) {
      int64_t c = (int64_t)tid * 8;
      for (; c + (int64_t)(UNROLL_EFF - 1) * THREADS * 8 < V; c += (int64_t)UNROLL_EFF * THREADS * 8) {
        uint4 raw[UNROLL_EFF];
#pragma unroll
        for (int k = 0; k < UNROLL_EFF; k++)
          raw[k] = __ldcs(reinterpret_cast<const uint4 *>(xr + c + (int64_t)k * THREADS * 8));
        float f[UNROLL_EFF * 8];
#pragma unroll
        for (int k = 0; k < UNROLL_EFF; k++) unpack8(raw[k], f + 8 * k);
        ms_fold<UNROLL_EFF * 8>(m, s, f);
      }
      for (; c < V; c += (int64_t)THREADS * 8) {
        float f[8];
        unpack8(__ldcs(reinterpret_cast<const uint4 *>(xr + c)), f);
        ms_fold<8>(m, s, f);
      }
    } else {
      for (int64_t c = tid; c < V; c += THREADS) ms_push(m, s, bf2f(xr[c]));
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
      const float s2 = __shfl_xor_sync(0xffffffffu, s, o);
      ms_merge(m, s, m2, s2);
    }
    if ((tid & 31) == 0) { red_m[tid >> 5] = m; red_s[tid >> 5] = s; }
    __syncthreads();
    if (tid == 0) {
      m = red_m[0]; s = red_s[0];
      for (int w = 1; w < NWARPS; w++) ms_merge(m, s, red_m[w], red_s[w]);
      acc += row_loss(xr, tgt[r], V, m, s);
    }
    __syncthreads(); /* red_* are rewritten by the next row */
  }
  if (tid == 0) part[blockIdx.x] = acc;
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 2 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t M = a->params[0], V = a->params[1];
  if (M <= 0 || V <= 0) return 1;
  const uint16_t *x = (const uint16_t *)a->inputs[0].data;
  const int64_t *tgt = (const int64_t *)a->inputs[1].data;
  float *out = (float *)a->outputs[0].data;
  cudaStream_t st = (cudaStream_t)a->stream;
  int64_t blocks = M < MAX_PARTIALS ? M : MAX_PARTIALS;
  if ((size_t)blocks * sizeof(double) > a->workspace_bytes)
    blocks = (int64_t)(a->workspace_bytes / sizeof(double));
  if (blocks < 1) return 1; /* no workspace */
  double *part = (double *)a->workspace;
  const bool vec = V % 8 == 0 && (uintptr_t)x % 16 == 0;
  if (vec) ce_rows<true><<<(unsigned)blocks, THREADS, 0, st>>>(x, tgt, M, V, part);
  else ce_rows<false><<<(unsigned)blocks, THREADS, 0, st>>>(x, tgt, M, V, part);
  ce_final<<<1, 1024, 0, st>>>(part, blocks, M, out);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
