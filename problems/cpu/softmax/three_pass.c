/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cpu/softmax/three_pass.c -- softmax over rows in three sweeps:
 * row max, then exp(x - max) stored into y while summing, then y *= 1/sum.
 *
 * Knob UNROLL (1..16): independent max and sum accumulators per sweep.  A
 * single f32 accumulator serialises on the add latency; UNROLL of them let
 * the core overlap that many adds (and changes the summation order, which
 * the spec's rtol allows).  Columns not divisible by UNROLL go through a
 * scalar tail.
 */
#include <math.h>

#include "kf_candidate.h"

#ifndef UNROLL
#error "knob UNROLL must be given as -DUNROLL=value"
#endif
_Static_assert(UNROLL >= 1 && UNROLL <= 16, "UNROLL must be 1..16");

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

    float mx[UNROLL];
    for (int u = 0; u < UNROLL; u++) mx[u] = xr[0];
    int64_t j = 0;
    for (; j + UNROLL <= N; j += UNROLL)
      for (int u = 0; u < UNROLL; u++)
        mx[u] = xr[j + u] > mx[u] ? xr[j + u] : mx[u];
    for (; j < N; j++) mx[0] = xr[j] > mx[0] ? xr[j] : mx[0];
    float m = mx[0];
    for (int u = 1; u < UNROLL; u++) m = mx[u] > m ? mx[u] : m;

    float acc[UNROLL];
    for (int u = 0; u < UNROLL; u++) acc[u] = 0.0f;
    for (j = 0; j + UNROLL <= N; j += UNROLL)
      for (int u = 0; u < UNROLL; u++) {
        float e = expf(xr[j + u] - m);
        yr[j + u] = e;
        acc[u] += e;
      }
    for (; j < N; j++) {
      float e = expf(xr[j] - m);
      yr[j] = e;
      acc[0] += e;
    }
    float sum = 0.0f;
    for (int u = 0; u < UNROLL; u++) sum += acc[u];

    const float inv = 1.0f / sum;
    for (j = 0; j < N; j++) yr[j] *= inv;
  }
  return 0;
}
