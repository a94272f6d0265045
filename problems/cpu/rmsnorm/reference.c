/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cpu/rmsnorm/reference.c -- trusted RMSNorm over the rows of an
 * M x N f32 matrix with a per-column f32 weight:
 *   y[i][j] = x[i][j] / sqrt(mean_j(x[i][j]^2) + 1e-6) * w[j]
 *
 * Naive and in double, so it is the accurate answer f32 candidates are
 * compared against; eps = 1e-6 is part of the problem (the "tiny"
 * distribution puts mean(x^2) right next to it).
 */
#include <math.h>

#include "kf_candidate.h"

#define EPS 1e-6

int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 2 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t M = a->params[0], N = a->params[1];
  const float *x = a->inputs[0].data;
  const float *w = a->inputs[1].data;
  float *y = a->outputs[0].data;
  for (int64_t i = 0; i < M; i++) {
    const float *xr = x + i * N;
    double ss = 0.0;
    for (int64_t j = 0; j < N; j++) ss += (double)xr[j] * xr[j];
    const double r = 1.0 / sqrt(ss / (double)N + EPS);
    for (int64_t j = 0; j < N; j++)
      y[i * N + j] = (float)((double)xr[j] * r * (double)w[j]);
  }
  return 0;
}
