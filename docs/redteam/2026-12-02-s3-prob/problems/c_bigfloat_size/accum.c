/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cpu/vecsum/accum.c -- sum with UNROLL independent f32
 * accumulators.
 *
 * One accumulator makes every add wait for the previous one (about 4
 * cycles each); UNROLL of them let the adds overlap.  It also splits the
 * sum into UNROLL shorter partial sums, which is more accurate, not less.
 * N % UNROLL leftover elements go through a scalar tail.
 *
 * spec.json offers UNROLL >= 4 only: at N = 2^20 'offset' values (~1000)
 * one or two f32 partial sums pass 2^28, where the f32 spacing (32, 64,
 * 128) rounds every add of ~1000 the same way and the sum drifts by 0.4%
 * to 1%, far outside the tolerance.  Four or more keep each partial sum
 * below 2^28.
 */
#include "kf_candidate.h"

#ifndef UNROLL
#error "knob UNROLL must be given as -DUNROLL=value"
#endif
_Static_assert(UNROLL >= 1 && UNROLL <= 32, "UNROLL must be 1..32");

int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 1)
    return 1;
  const int64_t N = a->params[0];
  const float *x = a->inputs[0].data;
  float acc[UNROLL];
  for (int u = 0; u < UNROLL; u++) acc[u] = 0.0f;
  int64_t i = 0;
  for (; i + UNROLL <= N; i += UNROLL)
    for (int u = 0; u < UNROLL; u++) acc[u] += x[i + u];
  for (; i < N; i++) acc[0] += x[i];
  float s = 0.0f;
  for (int u = 0; u < UNROLL; u++) s += acc[u];
  ((float *)a->outputs[0].data)[0] = s;
  return 0;
}
