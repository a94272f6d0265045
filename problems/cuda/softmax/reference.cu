/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/softmax/reference.cu -- trusted row softmax of an M x N bf16
 * matrix: y[i][j] = exp(x[i][j] - max_i) / sum_j exp(x[i][j] - max_i).
 *
 * Deliberately naive: one block of 256 threads per row, every value in
 * double, scalar loads, a fixed-order shared-memory tree for the max and the
 * sum (so it is deterministic), and one rounding to bf16 at the very end.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "kf_candidate.h"

#define REF_THREADS 256

/* Fixed-order tree over red[0..REF_THREADS); every thread gets the result. */
__device__ static double ref_reduce(double *red, double v, bool is_max) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = REF_THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      double o = red[threadIdx.x + s];
      red[threadIdx.x] = is_max ? fmax(red[threadIdx.x], o) : red[threadIdx.x] + o;
    }
    __syncthreads();
  }
  double r = red[0];
  __syncthreads();
  return r;
}

__global__ void ref_softmax(const __nv_bfloat16 *x, __nv_bfloat16 *y,
                            int64_t N) {
  __shared__ double red[REF_THREADS];
  const __nv_bfloat16 *xr = x + (int64_t)blockIdx.x * N;
  __nv_bfloat16 *yr = y + (int64_t)blockIdx.x * N;
  double m = -INFINITY;
  for (int64_t j = threadIdx.x; j < N; j += REF_THREADS)
    m = fmax(m, (double)__bfloat162float(xr[j]));
  m = ref_reduce(red, m, true);
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < N; j += REF_THREADS)
    s += exp((double)__bfloat162float(xr[j]) - m);
  s = ref_reduce(red, s, false);
  for (int64_t j = threadIdx.x; j < N; j += REF_THREADS)
    yr[j] = __double2bfloat16(exp((double)__bfloat162float(xr[j]) - m) / s);
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t M = a->params[0], N = a->params[1];
  if (M <= 0 || N <= 0 || M > 0x7fffffff) return 1;
  ref_softmax<<<(unsigned)M, REF_THREADS, 0, (cudaStream_t)a->stream>>>(
      (const __nv_bfloat16 *)a->inputs[0].data,
      (__nv_bfloat16 *)a->outputs[0].data, N);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
