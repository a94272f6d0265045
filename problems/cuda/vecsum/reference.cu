/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/vecsum/reference.cu -- trusted sum of N f32 values, f32 out.
 *
 * Deliberately plain and in double: block c of 256 threads sums the
 * contiguous chunk c (at least 4096 values, at most 65536 chunks; thread t
 * takes every 256th value, so loads are coalesced) and a fixed-order
 * shared-memory tree writes the chunk's sum to the workspace; one block
 * then adds the chunk sums the same way.  Deterministic.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "kf_candidate.h"

#define REF_THREADS 256

__global__ void ref_chunks(const float *x, int64_t n, int64_t chunk, double *part) {
  __shared__ double red[REF_THREADS];
  const int64_t begin = (int64_t)blockIdx.x * chunk;
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  double s = 0.0;
  for (int64_t i = begin + threadIdx.x; i < end; i += REF_THREADS) s += (double)x[i];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int h = REF_THREADS / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) part[blockIdx.x] = red[0];
}

/* One block: thread t adds chunks t, t + 256, ... in order, then the same
 * fixed-order tree. */
__global__ void ref_total(const double *part, int64_t nchunks, float *out) {
  __shared__ double red[REF_THREADS];
  double s = 0.0;
  for (int64_t c = threadIdx.x; c < nchunks; c += REF_THREADS) s += part[c];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int h = REF_THREADS / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = (float)red[0];
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 1)
    return 1;
  const int64_t n = a->params[0];
  if (n <= 0) return 1;
  int64_t chunk = (n + 65535) / 65536;
  if (chunk < 4096) chunk = 4096;
  const int64_t nchunks = (n + chunk - 1) / chunk;
  if ((size_t)nchunks * sizeof(double) > a->workspace_bytes) return 1;
  double *part = (double *)a->workspace;
  cudaStream_t st = (cudaStream_t)a->stream;
  ref_chunks<<<(unsigned)nchunks, REF_THREADS, 0, st>>>(
      (const float *)a->inputs[0].data, n, chunk, part);
  ref_total<<<1, REF_THREADS, 0, st>>>(part, nchunks, (float *)a->outputs[0].data);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
