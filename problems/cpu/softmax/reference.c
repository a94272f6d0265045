/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cpu/softmax/reference.c -- trusted softmax over the rows of an
 * M x N f32 matrix: y[i][j] = exp(x[i][j] - max_i) / sum_j exp(x[i][j] -
 * max_i).
 *
 * Deliberately naive and in double: subtracting the row max keeps exp from
 * overflowing on the "offset" distribution, and double accumulation makes
 * this the accurate answer that f32 candidates are compared against.
 */
#include <math.h>

#include "kf_candidate.h"

int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t M = a->params[0], N = a->params[1];
  const float *x = a->inputs[0].data;
  float *y = a->outputs[0].data;
  for (int64_t i = 0; i < M; i++) {
    const float *xr = x + i * N;
    float *yr = y + i * N;
    double mx = -INFINITY;
    for (int64_t j = 0; j < N; j++)
      if (xr[j] > mx) mx = xr[j];
    double sum = 0.0;
    for (int64_t j = 0; j < N; j++) sum += exp((double)xr[j] - mx);
    for (int64_t j = 0; j < N; j++)
      yr[j] = (float)(exp((double)xr[j] - mx) / sum);
  }
  return 0;
}
