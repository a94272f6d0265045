/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cuda/gelu_tanh/reference.cu -- trusted tanh-approximated GELU of
 * an M x N bf16 matrix, elementwise:
 *   y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
 * Deliberately naive: one element per thread (grid-stride), in double, one
 * rounding to bf16 at the end.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "kf_candidate.h"

__global__ void ref_gelu(const __nv_bfloat16 *x, __nv_bfloat16 *y, int64_t n) {
  const double k0 = 0.7978845608028654; /* sqrt(2 / pi) */
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const double v = __bfloat162float(x[i]);
    y[i] = __double2bfloat16(0.5 * v * (1.0 + tanh(k0 * (v + 0.044715 * v * v * v))));
  }
}

extern "C" int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t n = a->params[0] * a->params[1];
  if (n <= 0) return 1;
  const int64_t want = (n + 255) / 256;
  const unsigned blocks = (unsigned)(want < 65536 ? want : 65536);
  ref_gelu<<<blocks, 256, 0, (cudaStream_t)a->stream>>>(
      (const __nv_bfloat16 *)a->inputs[0].data,
      (__nv_bfloat16 *)a->outputs[0].data, n);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
