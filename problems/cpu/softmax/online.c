/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cpu/softmax/online.c -- "online" softmax: one sweep keeps a
 * running max m and a sum s rescaled whenever m grows (s *= exp(m_old -
 * m_new)), then a second sweep writes exp(x - m) / s.  Two reads of x and
 * one write of y instead of the three-pass version's read, write, read,
 * write: less memory traffic at the price of recomputing exp.
 *
 * Knobs: BLOCK (columns per rescale step: the block max is found first so
 * the sum is rescaled once per block, not once per element) and LANES
 * (independent f32 partial sums inside a block).  Any N works: the last
 * block is short and the lane loop has a scalar tail.
 */
#include <math.h>

#include "kf_candidate.h"

#ifndef BLOCK
#error "knob BLOCK must be given as -DBLOCK=value"
#endif
#ifndef LANES
#error "knob LANES must be given as -DLANES=value"
#endif
_Static_assert(BLOCK >= 1, "BLOCK must be >= 1");
_Static_assert(LANES >= 1 && LANES <= 16, "LANES must be 1..16");

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
    float m = xr[0], s = 0.0f;
    for (int64_t j0 = 0; j0 < N; j0 += BLOCK) {
      const int64_t n = N - j0 < BLOCK ? N - j0 : BLOCK;
      const float *xb = xr + j0;
      float bm = xb[0];
      for (int64_t k = 1; k < n; k++) bm = xb[k] > bm ? xb[k] : bm;
      if (bm > m) {
        s *= expf(m - bm);
        m = bm;
      }
      float acc[LANES];
      for (int l = 0; l < LANES; l++) acc[l] = 0.0f;
      int64_t k = 0;
      for (; k + LANES <= n; k += LANES)
        for (int l = 0; l < LANES; l++) acc[l] += expf(xb[k + l] - m);
      for (; k < n; k++) acc[0] += expf(xb[k] - m);
      for (int l = 0; l < LANES; l++) s += acc[l];
    }
    const float inv = 1.0f / s;
    for (int64_t j = 0; j < N; j++) yr[j] = expf(xr[j] - m) * inv;
  }
  return 0;
}
