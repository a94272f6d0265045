/*
 * Best kernel found by KernelFleet for problem "rmsnorm".
 *
 *   campaign    1 (rmsnorm)
 *   candidate   8, template "block_regs", proposer evolution
 *   device      cuda NVIDIA H200 (sm_90, sm_90a)
 *   time        68.61 us median (spread 3.6%, 37 repetitions), reference 111.66 us
 *   timed in    the final showdown (re-verified and re-timed together with the reference)
 *   speedup     1.627x over the reference, 93.4% of roofline
 *   verified    outcome ok, task 8
 *   written     2026-11-29 20:58:20Z
 *
 * The knobs it was measured with are defined below, so the file builds
 * on its own (kf_candidate.h is in KernelFleet's harness/ directory):
 *   nvcc -O3 -shared -Xcompiler -fPIC -I<kernelfleet>/harness FILE.cu
 */
#ifndef VPT
#define VPT 4
#endif
#ifndef THREADS
#define THREADS 256
#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/rmsnorm/block_regs.cu -- RMSNorm, one block per row, the row
 * held in registers (f32) between the read and the write: x is read once,
 * y written once, w (16 KB at N = 8192) comes from L2/L1 for every row.
 *
 * Each thread loads its VPT 16-byte vectors up front (THREADS * VPT * 16
 * bytes in flight per block); one block sum of squares (warp shuffles, one
 * shared-memory exchange); y = x * rsqrt(ss / N + eps) * w.
 *
 * Paths, chosen at launch:
 *   vector   N % 8 == 0 and x, w, y 16-byte aligned, N <= CAP
 *   scalar   otherwise, N <= CAP (2-byte loads, same register caching)
 *   loop     N > CAP: a sum-of-squares sweep, then a sweep that reads x
 *            again (from L2 when it is still there) and writes
 * CAP = THREADS * VPT_EFF * 8; VPT_EFF caps VPT at 2048 / THREADS vectors
 * per thread so every knob combination fits the register file.
 *
 * Cache hints: the inputs are loaded through the read-only path with no
 * eviction hint (__ldg) and y is stored write-back (__stwb), as Triton's
 * plain loads and stores: the streaming hints (__ldcs, __stcs) cost 3-5%
 * on an H200 (best builds by one loop: rmsnorm 0.0624 against 0.0655 ms;
 * 2026-11-29, docs/bench-notes.md).
 *
 * Knobs: THREADS (threads per block), VPT (16-byte vectors per thread).
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

#define NWARPS (THREADS / 32)
#define VPT_MAX ((2048 / THREADS) > 0 ? (2048 / THREADS) : 1)
#define VPT_EFF (VPT < VPT_MAX ? VPT : VPT_MAX)
#define ELEMS (VPT_EFF * 8)
#define CAP ((int64_t)THREADS * ELEMS)

static_assert(THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 1024,
              "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(VPT >= 1, "VPT must be >= 1");

#define EPS 1e-6f

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
rmsnorm_regs(const uint16_t *__restrict__ x, const uint16_t *__restrict__ w,
             uint16_t *__restrict__ y, int64_t N) {
  __shared__ float red[NWARPS];
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
  float ss = 0.f;
#pragma unroll
  for (int k = 0; k < ELEMS; k++) ss = fmaf(v[k], v[k], ss);
  ss = block_sum(ss, red);
  const float r = rsqrtf(ss / (float)N + EPS);
  if (VEC) {
#pragma unroll
    for (int k = 0; k < VPT_EFF; k++) {
      const int64_t c = ((int64_t)k * THREADS + tid) * 8;
      if (c < N) {
        float wf[8], o[8];
        unpack8(__ldg(reinterpret_cast<const uint4 *>(w + c)), wf);
#pragma unroll
        for (int e = 0; e < 8; e++) o[e] = v[8 * k + e] * r * wf[e];
        __stwb(reinterpret_cast<uint4 *>(yr + c), pack8(o));
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < ELEMS; k++) {
      const int64_t c = (int64_t)k * THREADS + tid;
      if (c < N) yr[c] = f2bf(v[k] * r * bf2f(w[c]));
    }
  }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS)
rmsnorm_loop(const uint16_t *__restrict__ x, const uint16_t *__restrict__ w,
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
  const float r = rsqrtf(ss / (float)N + EPS);
  if (VEC) {
#pragma unroll 4
    for (int64_t c = (int64_t)tid * 8; c < N; c += (int64_t)THREADS * 8) {
      float f[8], wf[8];
      unpack8(__ldg(reinterpret_cast<const uint4 *>(xr + c)), f);
      unpack8(__ldg(reinterpret_cast<const uint4 *>(w + c)), wf);
#pragma unroll
      for (int e = 0; e < 8; e++) f[e] = f[e] * r * wf[e];
      __stwb(reinterpret_cast<uint4 *>(yr + c), pack8(f));
    }
  } else {
    for (int64_t c = tid; c < N; c += THREADS) yr[c] = f2bf(bf2f(xr[c]) * r * bf2f(w[c]));
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
  const dim3 grid((unsigned)M);
  if (N <= CAP) {
    if (vec) rmsnorm_regs<true><<<grid, THREADS, 0, st>>>(x, w, y, N);
    else rmsnorm_regs<false><<<grid, THREADS, 0, st>>>(x, w, y, N);
  } else {
    if (vec) rmsnorm_loop<true><<<grid, THREADS, 0, st>>>(x, w, y, N);
    else rmsnorm_loop<false><<<grid, THREADS, 0, st>>>(x, w, y, N);
  }
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
