/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/causal_softmax/reference.cu -- trusted causal-masked, scaled
 * softmax over attention scores x[H][S][S] (bf16), scale 1/8 (head size 64):
 *   y[h][i][j] = exp(x[h][i][j]/8 - m) / sum_{k<=i} exp(x[h][i][k]/8 - m)
 *                for j <= i, with m = max_{k<=i} x[h][i][k]/8;
 *   y[h][i][j] = 0 for j > i (masked: those x are never read).
 *
 * Deliberately naive: one block of 256 threads per row, every value in
 * double, scalar loads, fixed-order shared-memory trees for the row max and
 * sum (deterministic), one rounding to bf16 at the very end.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "kf_candidate.h"

#define REF_THREADS 256
#define SCALE 0.125

__device__ static double ref_reduce(double *red, double v, bool is_max) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = REF_THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      red[threadIdx.x] = is_max ? fmax(red[threadIdx.x], red[threadIdx.x + s])
                                : red[threadIdx.x] + red[threadIdx.x + s];
    __syncthreads();
  }
  double r = red[0];
  __syncthreads();
  return r;
}

__global__ void ref_causal_softmax(const __nv_bfloat16 *x, __nv_bfloat16 *y, int64_t S) {
  __shared__ double red[REF_THREADS];
  const int64_t row = blockIdx.x;
  const int64_t len = row % S + 1; /* columns 0..i are unmasked */
  const __nv_bfloat16 *xr = x + row * S;
  __nv_bfloat16 *yr = y + row * S;
  double m = -INFINITY;
  for (int64_t j = threadIdx.x; j < len; j += REF_THREADS)
    m = fmax(m, SCALE * (double)__bfloat162float(xr[j]));
  m = ref_reduce(red, m, true);
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < len; j += REF_THREADS)
    s += exp(SCALE * (double)__bfloat162float(xr[j]) - m);
  s = ref_reduce(red, s, false);
  for (int64_t j = threadIdx.x; j < S; j += REF_THREADS)
    yr[j] = j < len ? __double2bfloat16(exp(SCALE * (double)__bfloat162float(xr[j]) - m) / s)
                    : __double2bfloat16(0.0);
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t H = a->params[0], S = a->params[1];
  if (H <= 0 || S <= 0 || H * S > 0x7fffffff) return 1;
  ref_causal_softmax<<<(unsigned)(H * S), REF_THREADS, 0, (cudaStream_t)a->stream>>>(
      (const __nv_bfloat16 *)a->inputs[0].data, (__nv_bfloat16 *)a->outputs[0].data, S);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
