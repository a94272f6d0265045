/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cpu/rmsnorm/row_block.c -- RMSNorm ROWS rows at a time: one
 * column sweep accumulates the sums of squares of all ROWS rows (ROWS
 * independent dependency chains, so the adds overlap), a second writes
 * the ROWS output rows while loading each w[j] once for all of them.
 *
 * Knobs: ROWS (rows per block; the M % ROWS rows left over take the same
 * path one at a time) and COLS (columns per inner step, unrolled, with a
 * scalar tail for N % COLS).
 */
#include <math.h>

#include "kf_candidate.h"

#ifndef ROWS
#error "knob ROWS must be given as -DROWS=value"
#endif
#ifndef COLS
#error "knob COLS must be given as -DCOLS=value"
#endif
_Static_assert(ROWS >= 1 && ROWS <= 16, "ROWS must be 1..16");
_Static_assert(COLS >= 1 && COLS <= 16, "COLS must be 1..16");

#define EPS 1e-6f

/* nr <= ROWS rows starting at x; the compiler sees ROWS-sized arrays. */
static void block(const float *x, const float *w, float *y, int nr,
                  int64_t N) {
  float ss[ROWS], r[ROWS];
  for (int k = 0; k < ROWS; k++) ss[k] = 0.0f;
  int64_t j = 0;
  for (; j + COLS <= N; j += COLS)
    for (int k = 0; k < nr; k++)
      for (int c = 0; c < COLS; c++) {
        const float v = x[k * N + j + c];
        ss[k] += v * v;
      }
  for (; j < N; j++)
    for (int k = 0; k < nr; k++) ss[k] += x[k * N + j] * x[k * N + j];
  for (int k = 0; k < nr; k++) r[k] = 1.0f / sqrtf(ss[k] / (float)N + EPS);
  for (j = 0; j + COLS <= N; j += COLS)
    for (int c = 0; c < COLS; c++) {
      const float wj = w[j + c];
      for (int k = 0; k < nr; k++)
        y[k * N + j + c] = x[k * N + j + c] * r[k] * wj;
    }
  for (; j < N; j++)
    for (int k = 0; k < nr; k++) y[k * N + j] = x[k * N + j] * r[k] * w[j];
}

int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 2 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 1;
  const int64_t M = a->params[0], N = a->params[1];
  const float *x = a->inputs[0].data;
  const float *w = a->inputs[1].data;
  float *y = a->outputs[0].data;
  int64_t i = 0;
  for (; i + ROWS <= M; i += ROWS) block(x + i * N, w, y + i * N, ROWS, N);
  for (; i < M; i++) block(x + i * N, w, y + i * N, 1, N);
  return 0;
}
