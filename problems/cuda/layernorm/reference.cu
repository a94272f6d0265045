/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/layernorm/reference.cu -- trusted LayerNorm over the rows of an M x N bf16 matrix:
 * y[i][j] = (x[i][j] - mean_i) / sqrt(var_i + 1e-5) * w[j] + b[j], with the
 * biased variance var_i = mean_j((x[i][j] - mean_i)^2) (two passes), bf16 out.
 *
 * Deliberately naive: one block of 256 threads per row, every value in
 * double, scalar loads, fixed-order shared-memory trees for the row sums
 * (so it is deterministic), and one rounding to bf16 at the very end.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "kf_candidate.h"

#define REF_THREADS 256

/* Fixed-order tree over red[0..REF_THREADS); every thread gets the sum. */
__device__ static double ref_sum(double *red, double v) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = REF_THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  double r = red[0];
  __syncthreads();
  return r;
}

__global__ void ref_layernorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                              const __nv_bfloat16 *b, __nv_bfloat16 *y, int64_t N) {
  __shared__ double red[REF_THREADS];
  const __nv_bfloat16 *xr = x + (int64_t)blockIdx.x * N;
  __nv_bfloat16 *yr = y + (int64_t)blockIdx.x * N;
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < N; j += REF_THREADS) s += __bfloat162float(xr[j]);
  const double mean = ref_sum(red, s) / (double)N;
  double q = 0.0;
  for (int64_t j = threadIdx.x; j < N; j += REF_THREADS) {
    const double d = (double)__bfloat162float(xr[j]) - mean;
    q += d * d;
  }
  const double rstd = 1.0 / sqrt(ref_sum(red, q) / (double)N + 1e-5);
  for (int64_t j = threadIdx.x; j < N; j += REF_THREADS)
    yr[j] = __double2bfloat16(((double)__bfloat162float(xr[j]) - mean) * rstd *
                                  (double)__bfloat162float(w[j]) +
                              (double)__bfloat162float(b[j]));
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 3 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t M = a->params[0], N = a->params[1];
  if (M <= 0 || N <= 0 || M > 0x7fffffff) return 1;
  ref_layernorm<<<(unsigned)M, REF_THREADS, 0, (cudaStream_t)a->stream>>>(
      (const __nv_bfloat16 *)a->inputs[0].data,
      (const __nv_bfloat16 *)a->inputs[1].data,
      (const __nv_bfloat16 *)a->inputs[2].data,
      (__nv_bfloat16 *)a->outputs[0].data, N);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
