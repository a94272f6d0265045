/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/cross_entropy/reference.cu -- trusted mean cross-entropy of
 * M rows of bf16 logits over V classes with int64 targets, f32 out:
 *   loss = (1/M) sum_i (log sum_j exp(x[i][j]) - x[i][t_i])
 * Deliberately naive and in double: one block of 256 threads per row (max,
 * then sum of exp(x - max), fixed-order shared-memory trees), each row's
 * loss into the workspace, then one block adds them in a fixed order.
 * Deterministic.  A target outside [0, V) gives NaN rather than a read out
 * of bounds.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "kf_candidate.h"

#define REF_THREADS 256

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

__global__ void ref_rows(const __nv_bfloat16 *x, const int64_t *tgt, int64_t V,
                         double *loss) {
  __shared__ double red[REF_THREADS];
  const __nv_bfloat16 *xr = x + (int64_t)blockIdx.x * V;
  double m = -INFINITY;
  for (int64_t j = threadIdx.x; j < V; j += REF_THREADS)
    m = fmax(m, (double)__bfloat162float(xr[j]));
  m = ref_reduce(red, m, true);
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < V; j += REF_THREADS)
    s += exp((double)__bfloat162float(xr[j]) - m);
  s = ref_reduce(red, s, false);
  if (threadIdx.x == 0) {
    const int64_t t = tgt[blockIdx.x];
    const double xt = (t >= 0 && t < V) ? (double)__bfloat162float(xr[t]) : NAN;
    loss[blockIdx.x] = m + log(s) - xt;
  }
}

/* One block: thread t adds rows t, t + 256, ... in order, then the fixed-order
 * tree. */
__global__ void ref_mean(const double *loss, int64_t M, float *out) {
  __shared__ double red[REF_THREADS];
  double s = 0.0;
  for (int64_t i = threadIdx.x; i < M; i += REF_THREADS) s += loss[i];
  s = ref_reduce(red, s, false);
  if (threadIdx.x == 0) out[0] = (float)(s / (double)M);
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 2 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t M = a->params[0], V = a->params[1];
  if (M <= 0 || V <= 0 || M > 0x7fffffff) return 1;
  if ((size_t)M * sizeof(double) > a->workspace_bytes) return 1;
  double *loss = (double *)a->workspace;
  cudaStream_t st = (cudaStream_t)a->stream;
  ref_rows<<<(unsigned)M, REF_THREADS, 0, st>>>(
      (const __nv_bfloat16 *)a->inputs[0].data, (const int64_t *)a->inputs[1].data,
      V, loss);
  ref_mean<<<1, REF_THREADS, 0, st>>>(loss, M, (float *)a->outputs[0].data);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
