/* SPDX-License-Identifier: Apache-2.0 */
/* honest twin for gemm_gmon_precompute.c KERNEL=1: the reference loop itself */
/*
 * problems/cpu/gemm/reference.c -- trusted C[M x N] = A[M x K] . B[K x N],
 * all f32, row-major.  Textbook i-j-k loops with a double dot product: the
 * accurate answer f32 candidates (any summation order) are compared
 * against.  Slow on purpose; it is only the yardstick.
 */
#include "kf_candidate.h"

int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 2 ||
      a->n_outputs != 1 || a->n_params != 3)
    return 1;
  const int64_t M = a->params[0], N = a->params[1], K = a->params[2];
  const float *A = a->inputs[0].data;
  const float *B = a->inputs[1].data;
  float *C = a->outputs[0].data;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0.0;
      for (int64_t k = 0; k < K; k++) s += (double)A[i * K + k] * B[k * N + j];
      C[i * N + j] = (float)s;
    }
  return 0;
}
