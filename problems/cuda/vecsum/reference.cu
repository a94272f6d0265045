/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/vecsum/reference.cu -- trusted sum of N f32 values, f32 out.
 *
 * Deliberately naive and in double: thread c sums the contiguous chunk c
 * (at least 4096 values, at most 65536 chunks) serially into the workspace;
 * one thread then adds the chunk sums in order.  Deterministic.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "kf_candidate.h"

__global__ void ref_chunks(const float *x, int64_t n, int64_t chunk,
                           int64_t nchunks, double *part) {
  const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= nchunks) return;
  const int64_t end = (c + 1) * chunk < n ? (c + 1) * chunk : n;
  double s = 0.0;
  for (int64_t i = c * chunk; i < end; i++) s += (double)x[i];
  part[c] = s;
}

__global__ void ref_total(const double *part, int64_t nchunks, float *out) {
  double s = 0.0;
  for (int64_t c = 0; c < nchunks; c++) s += part[c];
  out[0] = (float)s;
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
  ref_chunks<<<(unsigned)((nchunks + 255) / 256), 256, 0, st>>>(
      (const float *)a->inputs[0].data, n, chunk, nchunks, part);
  ref_total<<<1, 1, 0, st>>>(part, nchunks, (float *)a->outputs[0].data);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
