/* RED TEAM 2026-12-01-s3: an honest softmax whose COMPILE is slow (a large
 * static const table built by macro expansion, read once so it is kept).
 * The pipeline's deadline clock (--deadline-ms; the worker passes its task
 * time less a quarter) starts before the compile stage, but the compile
 * is put to no side's account (busy_ns counts calls, fetches, probes,
 * arms).  When the deadline then falls during the calls, the reference,
 * the slower side, has more busy time, and the harness blames it: "the
 * reference is too slow for this time" -- a candidate-made verdict against
 * the problem.  Knob REPS scales the table: 4^REPS entries (default 10). */
#include "kf_candidate.h"
#include <math.h>
#ifndef REPS
#define REPS 10
#endif
#define X1 1.0f,
#define X4 X1 X1 X1 X1
#define X16 X4 X4 X4 X4
#define X64 X16 X16 X16 X16
#define X256 X64 X64 X64 X64
#define X1K X256 X256 X256 X256
#define X4K X1K X1K X1K X1K
#define X16K X4K X4K X4K X4K
#define X64K X16K X16K X16K X16K
#define X256K X64K X64K X64K X64K
#define X1M X256K X256K X256K X256K
#define X4M X1M X1M X1M X1M
#if REPS == 9
static const float table[] = { X256K };
#elif REPS == 10
static const float table[] = { X1M };
#else
static const float table[] = { X4M };
#endif
int kf_launch(const kf_args *a) {
  const int64_t M = a->params[0], N = a->params[1];
  const float *x = a->inputs[0].data;
  float *y = a->outputs[0].data;
  const float one = table[(M * 7 + N) % (int64_t)(sizeof table / sizeof table[0])];
  for (int64_t i = 0; i < M; i++) {
    const float *xr = x + i * N; float *yr = y + i * N;
    float m = xr[0];
    for (int64_t j = 1; j < N; j++) m = xr[j] > m ? xr[j] : m;
    float s = 0.0f;
    for (int64_t j = 0; j < N; j++) s += (yr[j] = expf(xr[j] - m));
    for (int64_t j = 0; j < N; j++) yr[j] = yr[j] / s * one;
  }
  return 0;
}
