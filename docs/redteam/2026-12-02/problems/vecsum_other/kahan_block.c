/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cpu/vecsum/kahan_block.c -- blocked sum with compensation: each
 * block of BLOCK elements is summed in plain f32 (LANES accumulators), and
 * the block sums are added with Kahan compensated summation.
 *
 * The rounding error then grows with BLOCK instead of with N, at the cost
 * of four extra flops per block rather than per element.  Relies on
 * strict IEEE evaluation (no -ffast-math), which would delete the
 * compensation.  The last block is short when BLOCK does not divide N.
 */
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
      a->n_outputs != 1 || a->n_params != 1)
    return 1;
  const int64_t N = a->params[0];
  const float *x = a->inputs[0].data;
  float s = 0.0f, comp = 0.0f;
  for (int64_t b = 0; b < N; b += BLOCK) {
    const int64_t n = N - b < BLOCK ? N - b : BLOCK;
    float acc[LANES];
    for (int l = 0; l < LANES; l++) acc[l] = 0.0f;
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
      for (int l = 0; l < LANES; l++) acc[l] += x[b + i + l];
    for (; i < n; i++) acc[0] += x[b + i];
    float bs = 0.0f;
    for (int l = 0; l < LANES; l++) bs += acc[l];
    /* Kahan: comp carries the low bits the previous add lost. */
    const float yv = bs - comp;
    const float t = s + yv;
    comp = (t - s) - yv;
    s = t;
  }
  ((float *)a->outputs[0].data)[0] = s;
  return 0;
}
