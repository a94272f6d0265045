/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cpu/vecsum/reference.c -- trusted sum of N f32 values into one
 * f32.  Accumulates in double, in index order: for the sizes and
 * distributions of this problem a double sum is exact to well below one
 * f32 ulp of the result, so this is the correctly rounded answer that
 * reordered f32 candidates are compared against.
 */
#include "kf_candidate.h"

int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 1)
    return 1;
  const int64_t N = a->params[0];
  const float *x = a->inputs[0].data;
  double s = 0.0;
  for (int64_t i = 0; i < N; i++) s += x[i];
  ((float *)a->outputs[0].data)[0] = (float)s;
  return 0;
}
