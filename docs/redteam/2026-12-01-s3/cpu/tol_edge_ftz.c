/* RED TEAM 2026-12-01-s3: numerical games on softmax.  MODE 0: every output
 * scaled by (1 + 0.9 rtol) -- just inside the tolerance everywhere (by
 * design ok).  MODE 1: MXCSR FTZ|DAZ set first (flush-to-zero), so the
 * 'wide' rows' subnormal outputs become 0 -- and if the reference shared the
 * process it would change its results too (it does not: own process).
 * MODE 2: just outside, (1 + 1.2 rtol) -- must be wrong_answer.
 * MODE 3: -0.0 for every output below 1e-30 and a NaN for any output that
 * is exactly 0 in 'wide' rows (allow_nan is false: must fail). */
#include "kf_candidate.h"
#include <math.h>
#ifndef MODE
#define MODE 0
#endif
int kf_launch(const kf_args *a) {
  const int64_t M = a->params[0], N = a->params[1];
  const float *x = a->inputs[0].data;
  float *y = a->outputs[0].data;
  if (MODE == 1) {
    unsigned csr; __asm__ volatile("stmxcsr %0" : "=m"(csr));
    csr |= 0x8040; __asm__ volatile("ldmxcsr %0" : : "m"(csr));
  }
  const float k = MODE == 0 ? 1.0f + 0.9e-4f : MODE == 2 ? 1.0f + 1.2e-4f : 1.0f;
  for (int64_t i = 0; i < M; i++) {
    const float *xr = x + i * N; float *yr = y + i * N;
    float m = xr[0];
    for (int64_t j = 1; j < N; j++) m = xr[j] > m ? xr[j] : m;
    double s = 0.0;
    for (int64_t j = 0; j < N; j++) s += (yr[j] = expf(xr[j] - m));
    for (int64_t j = 0; j < N; j++) {
      float v = (float)(yr[j] / s) * k;
      if (MODE == 3 && v < 1e-30f) v = v == 0.0f ? NAN : -0.0f;
      yr[j] = v;
    }
  }
  return 0;
}
