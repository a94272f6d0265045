/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cpu/rmsnorm/two_pass.c -- RMSNorm one row at a time: a sweep
 * for the sum of squares, then a sweep that writes x * r * w.
 *
 * Knob UNROLL (1..16): independent f32 sum-of-squares accumulators, so
 * the adds overlap instead of waiting on each other; columns not divisible
 * by UNROLL go through a scalar tail.
 */
#include <math.h>

#include "kf_candidate.h"

#ifndef UNROLL
#error "knob UNROLL must be given as -DUNROLL=value"
#endif
_Static_assert(UNROLL >= 1 && UNROLL <= 16, "UNROLL must be 1..16");

#define EPS 1e-6f

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
    float *yr = y + i * N;
    float acc[UNROLL];
    for (int u = 0; u < UNROLL; u++) acc[u] = 0.0f;
    int64_t j = 0;
    for (; j + UNROLL <= N; j += UNROLL)
      for (int u = 0; u < UNROLL; u++) acc[u] += xr[j + u] * xr[j + u];
    for (; j < N; j++) acc[0] += xr[j] * xr[j];
    float ss = 0.0f;
    for (int u = 0; u < UNROLL; u++) ss += acc[u];
    const float r = 1.0f / sqrtf(ss / (float)N + EPS);
    for (j = 0; j + UNROLL <= N; j += UNROLL)
      for (int u = 0; u < UNROLL; u++) yr[j + u] = xr[j + u] * r * w[j + u];
    for (; j < N; j++) yr[j] = xr[j] * r * w[j];
  }
  return 0;
}
