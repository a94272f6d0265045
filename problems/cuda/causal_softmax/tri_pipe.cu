/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/causal_softmax/tri_pipe.cu -- causal-masked softmax of
 * x[H][S][S] / 8 by persistent blocks that walk rows, software-pipelined:
 * the next row's loads are issued before this row's reductions and write.
 *
 * Written for the H200, where block_regs stays near 89% of the copy
 * bandwidth with its whole knob space searched.  What this file does
 * differently:
 *  - 32-bit column indices, and the per-element mask only in the one
 *    vector that straddles column i;
 *  - exponentials only for vectors that hold unmasked columns (block_regs
 *    computes ex2(-inf) for the whole row);
 *  - the masked columns' zeros (whole 16-byte vectors past i) stored as
 *    soon as the row starts, before its reductions;
 *  - in the loop path, one ex2 per element per sweep (a running max
 *    rescales the sum once per vector) and the denominator folded into
 *    the write sweep's ex2 (ex2(t - m - log2 s)).
 * Measured (docs/bench-notes.md, 2026-11-29): the fewer instructions made
 * it 4% faster than its first version (0.1073 against 0.1116 ms in one
 * loop); it ties block_regs' best in the harness (89.1% against 88.8% of
 * the copy bandwidth), and both are 8-10% above what the problem's traffic
 * alone takes (pattern.cu in that day's gpu-runs).
 *
 * Paths, chosen at launch:
 *   pipelined S % 8 == 0, both pointers 16-byte aligned, S <= CAP
 *   loop      the same alignment, S > CAP: one block per row; the masked
 *             zeros, then an online max/sum sweep over columns 0..i, then
 *             a sweep that reads them again and writes
 *   scalar    otherwise: one block per row, 2-byte accesses, the same two
 *             sweeps
 * CAP = THREADS * VPT_EFF * 8 columns; VPT_EFF caps VPT at 1024 / THREADS
 * vectors per thread (two rows live per thread: 32 floats at 256 threads).
 *
 * Rows are dealt to the persistent blocks in pairs (i, S-1-i) of one head,
 * which read the same S+1 columns for every i (pair_row).
 *
 * Tried and dropped (H200, 2026-11-29, docs/bench-notes.md): keeping the
 * pipelined row packed as loaded (half the registers, one barrier per row,
 * ex2 twice per element) was 6% slower.
 *
 * Knobs: THREADS (threads per block), VPT (16-byte vectors per thread),
 * BPS (blocks per SM in the persistent grid; at most what fits).
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "kf_candidate.h"

#ifndef THREADS
#define THREADS 64
#endif
#ifndef VPT
#define VPT 4
#endif
#ifndef BPS
#define BPS 16
#endif

#define NWARPS (THREADS / 32)
/* two rows in registers at once (the one being written, the next one
 * arriving): half the per-thread payload of block_regs */
#define VPT_MAX ((1024 / THREADS) > 0 ? (1024 / THREADS) : 1)
#define VPT_EFF (VPT < VPT_MAX ? VPT : VPT_MAX)
#define ELEMS (VPT_EFF * 8)
#define CAP ((int64_t)THREADS * ELEMS)
/* log2(e) / 8: the score scale folded into exp2's argument */
#define SL2E (1.4426950408889634f * 0.125f)

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
/* Merges (m2, s2) into the running (m, s): s counts exp2(t - m). */
__device__ __forceinline__ void ms_merge(float &m, float &s, float m2, float s2) {
  float mn = fmaxf(m, m2);
  if (mn == -INFINITY) return;
  s = s * ex2(m - mn) + s2 * ex2(m2 - mn); /* ex2(-inf) == 0 */
  m = mn;
}

__device__ __forceinline__ float lg2(float x) {
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float max8(const float *f) {
  return fmaxf(fmaxf(fmaxf(f[0], f[1]), fmaxf(f[2], f[3])),
               fmaxf(fmaxf(f[4], f[5]), fmaxf(f[6], f[7])));
}
/* Elements e >= n of a vector become -inf (n in 1..8). */
__device__ __forceinline__ void mask8(float *f, int n) {
#pragma unroll
  for (int e = 1; e < 8; e++)
    if (e >= n) f[e] = -INFINITY;
}
/* One vector into the running (m, s), log2 domain: s counts ex2(t - m).
 * One ex2 per element plus one per vector; the 8 terms summed as a tree
 * before they meet the running sum (a short dependency chain). */
__device__ __forceinline__ void ms_add8(float &m, float &s, const float *f) {
  const float mn = fmaxf(m, max8(f) * SL2E);
  float t[8];
#pragma unroll
  for (int e = 0; e < 8; e++) t[e] = ex2(fmaf(f[e], SL2E, -mn));
  const float ls = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
  s = fmaf(s, ex2(m - mn), ls); /* first vector: ex2(-inf) = 0, s = 0 */
  m = mn;
}
/* The block's (m, s) from every thread's; every thread gets it. */
__device__ __forceinline__ void block_ms(float &m, float &s, float *red_m, float *red_s) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    float s2 = __shfl_xor_sync(0xffffffffu, s, o);
    ms_merge(m, s, m2, s2);
  }
  if ((threadIdx.x & 31) == 0) { red_m[threadIdx.x >> 5] = m; red_s[threadIdx.x >> 5] = s; }
  __syncthreads();
  m = red_m[0]; s = red_s[0];
#pragma unroll
  for (int w = 1; w < NWARPS; w++) ms_merge(m, s, red_m[w], red_s[w]);
}

/* The unmasked vectors of row ROW: issued, not waited for. */
#define LOAD_ROW(ROW)                                                        \
  do {                                                                       \
    const int len_ = (ROW) % S + 1;                                          \
    const uint4 *xv_ = reinterpret_cast<const uint4 *>(x + (int64_t)(ROW) * S); \
    _Pragma("unroll") for (int k = 0; k < VPT_EFF; k++) {                    \
      const int vi = k * THREADS + tid;                                      \
      if (vi * 8 < len_) ra[k] = __ldcs(xv_ + vi);                           \
    }                                                                        \
  } while (0)

/* Rows go to blocks in pairs (i, S-1-i) of one head: a pair reads S+1
 * columns whatever i is, so every block of the persistent grid gets the
 * same work to within one pair.  Dealt one row at a time instead, a block's
 * share of reads varied by several percent and the slowest block set the
 * time.  Pair p of head h = p / half; its rows in order; -1 past the end
 * (odd S: the middle row is a pair of one). */
__device__ __forceinline__ int pair_row(int p, int second, int half, int S, int P) {
  if (p >= P) return -1;
  const int h = p / half, i = p - h * half;
  if (!second) return h * S + i;
  return S - 1 - i == i ? -1 : h * S + S - 1 - i;
}

/* Separate max and sum arrays need no double buffering: a warp writes
 * red_m for row r+1 only after the barrier of row r's sum, which every
 * warp reaches after reading red_m for row r (and the same for red_s
 * across row r+1's max barrier). */
__global__ void __launch_bounds__(THREADS)
causal_pipe(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int S, int P) {
  __shared__ float red_m[NWARPS], red_s[NWARPS];
  const int tid = threadIdx.x;
  const int half = (S + 1) / 2;
  uint4 ra[VPT_EFF];
  int p = blockIdx.x, sec = 0;
  int row = pair_row(p, 0, half, S, P);
  if (row >= 0) LOAD_ROW(row);
  while (row >= 0) {
    /* the row after this one: this pair's second, else the next pair's first */
    int np = p, nsec = sec ^ 1;
    if (sec) np += gridDim.x;
    int next = pair_row(np, nsec, half, S, P);
    if (next < 0 && nsec) {
      np += gridDim.x;
      nsec = 0;
      next = pair_row(np, 0, half, S, P);
    }
    const int len = row % S + 1;
    uint4 *yv = reinterpret_cast<uint4 *>(y + (int64_t)row * S);
    float v[ELEMS]; /* raw x; valid only in vectors that start before len */
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int c = (k * THREADS + tid) * 8;
      if (c < len) {
        unpack8(ra[k], v + 8 * k);
        if (c + 8 > len) mask8(v + 8 * k, len - c);
      }
    }
    if (next >= 0) LOAD_ROW(next);
    /* whole masked vectors: zeros now, while the loads are in flight */
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int c = (k * THREADS + tid) * 8;
      if (c >= len && c < S) __stcs(yv + k * THREADS + tid, make_uint4(0u, 0u, 0u, 0u));
    }
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++)
      if ((k * THREADS + tid) * 8 < len) m = fmaxf(m, max8(v + 8 * k));
    m = block_max(m, red_m) * SL2E; /* finite: column 0 is never masked */
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      if ((k * THREADS + tid) * 8 < len) {
#pragma unroll
        for (int e = 0; e < 8; e++) {
          v[8 * k + e] = ex2(fmaf(v[8 * k + e], SL2E, -m)); /* masked: 0 */
          s += v[8 * k + e];
        }
      }
    }
    s = block_sum(s, red_s);
    const float inv = 1.0f / s;
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      if ((k * THREADS + tid) * 8 < len) {
        float o[8];
#pragma unroll
        for (int e = 0; e < 8; e++) o[e] = v[8 * k + e] * inv;
        __stcs(yv + k * THREADS + tid, pack8(o));
      }
    }
    row = next;
    p = np;
    sec = nsec;
  }
}

/* Aligned rows longer than CAP, one block per row. */
__global__ void __launch_bounds__(THREADS)
causal_loop(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int S) {
  __shared__ float red_m[NWARPS], red_s[NWARPS];
  const int tid = threadIdx.x;
  const int row = blockIdx.x;
  const int len = row % S + 1, full = len >> 3, rest = len & 7;
  const uint4 *xv = reinterpret_cast<const uint4 *>(x + (int64_t)row * S);
  uint4 *yv = reinterpret_cast<uint4 *>(y + (int64_t)row * S);
  /* the masked vectors' zeros: stores that wait for nothing */
  for (int vi = ((len + 7) >> 3) + tid; vi < (S >> 3); vi += THREADS)
    __stcs(yv + vi, make_uint4(0u, 0u, 0u, 0u));
  float m = -INFINITY, s = 0.f; /* log2 domain */
  /* unrolled so that four vectors' loads are in flight per thread */
#pragma unroll 4
  for (int vi = tid; vi < full; vi += THREADS) {
    float f[8];
    unpack8(__ldg(xv + vi), f);
    ms_add8(m, s, f);
  }
  if (rest && tid == full % THREADS) {
    float f[8];
    unpack8(__ldg(xv + full), f);
    mask8(f, rest);
    ms_add8(m, s, f);
  }
  block_ms(m, s, red_m, red_s);
  const float mm = m + lg2(s); /* ex2(t - mm) = ex2(t - m) / s */
#pragma unroll 4
  for (int vi = tid; vi < full; vi += THREADS) {
    float f[8];
    unpack8(__ldg(xv + vi), f);
#pragma unroll
    for (int e = 0; e < 8; e++) f[e] = ex2(fmaf(f[e], SL2E, -mm));
    __stcs(yv + vi, pack8(f));
  }
  if (rest && tid == full % THREADS) {
    float f[8];
    unpack8(__ldg(xv + full), f);
#pragma unroll
    for (int e = 0; e < 8; e++) f[e] = e < rest ? ex2(fmaf(f[e], SL2E, -mm)) : 0.f;
    __stcs(yv + full, pack8(f));
  }
}

/* Unaligned rows, any length: one block per row, 2-byte accesses. */
__global__ void __launch_bounds__(THREADS)
causal_scalar(const uint16_t *__restrict__ x, uint16_t *__restrict__ y, int S) {
  __shared__ float red_m[NWARPS], red_s[NWARPS];
  const int tid = threadIdx.x;
  const int row = blockIdx.x;
  const int len = row % S + 1;
  const uint16_t *xr = x + (int64_t)row * S;
  uint16_t *yr = y + (int64_t)row * S;
  float m = -INFINITY, s = 0.f;
  for (int c = tid; c < len; c += THREADS) ms_merge(m, s, bf2f(xr[c]) * SL2E, 1.f);
  block_ms(m, s, red_m, red_s);
  const float mm = m + lg2(s);
  for (int c = tid; c < S; c += THREADS)
    yr[c] = c < len ? f2bf(ex2(fmaf(bf2f(xr[c]), SL2E, -mm))) : (uint16_t)0;
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
  const int R = (int)(H * S);
  if (vec && S <= CAP) {
    int dev = 0, sms = 132;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return 1;
    /* never more blocks than fit at once: a second wave of a persistent
     * grid is a tail of whole blocks' rows */
    int fit = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, causal_pipe, THREADS, 0) !=
            cudaSuccess || fit < 1)
      return 1;
    const int P = (int)H * (int)((S + 1) / 2); /* row pairs */
    int64_t blocks = (int64_t)sms * (BPS < fit ? BPS : fit);
    if (blocks > P) blocks = P;
    causal_pipe<<<(unsigned)blocks, THREADS, 0, st>>>(x, y, (int)S, P);
  } else if (vec) {
    causal_loop<<<(unsigned)R, THREADS, 0, st>>>(x, y, (int)S);
  } else {
    causal_scalar<<<(unsigned)R, THREADS, 0, st>>>(x, y, (int)S);
  }
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
