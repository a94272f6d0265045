/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/check_fast.c -- the vectorized fast path of the output
 * comparison (core/check.c), alone in this file because it is built with
 * -O3 -ffast-math (CMakeLists.txt): the loops must vectorize whatever the
 * build type, and fast-math lets max and division do so.  Fast-math may
 * assume no NaN, so NaN and Inf are found from the bits with integer
 * operations, never by a float comparison; every element that is not
 * clearly within tolerance makes its block "bad", and check.c decides that
 * block again element by element with the exact rule (kf_spec_within_tol).
 * The 0.999 and 1.001 margins absorb float rounding and contraction: they
 * can only send an element to the exact path, never pass one.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* Built for the widest vectors the CPU has (resolved at load, as the
 * ceilings' FMA loop is). */
#if defined(__x86_64__)
#define KF_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KF_CLONES
#endif

KF_CLONES void kf_harness__fast_bf16(const uint16_t *x, const uint16_t *y, int64_t n,
                           float at, float rt, float *mabs, float *mrel,
                           int *bad, int *evd) {
  float ma = 0, mr = 0;
  int b = 0, ev = 0;
  for (int64_t i = 0; i < n; i++) {
    uint32_t ux = (uint32_t)x[i] << 16, uy = (uint32_t)y[i] << 16;
    b |= (ux & 0x7F800000u) == 0x7F800000u;
    b |= (uy & 0x7F800000u) == 0x7F800000u;
    float g, w;
    memcpy(&g, &ux, 4);
    memcpy(&w, &uy, 4);
    float d = fabsf(g - w), aw = fabsf(w), lim = at + rt * aw;
    b |= d > 0.999f * lim;
    ma = fmaxf(ma, d);
    mr = fmaxf(mr, aw > at ? d / aw : 0.0f);
    ev |= aw > 1.001f * lim;
  }
  *mabs = ma;
  *mrel = mr;
  *bad = b;
  *evd = ev;
}

KF_CLONES void kf_harness__fast_f32(const uint32_t *x, const uint32_t *y, int64_t n,
                          float at, float rt, float *mabs, float *mrel,
                          int *bad, int *evd) {
  float ma = 0, mr = 0;
  int b = 0, ev = 0;
  for (int64_t i = 0; i < n; i++) {
    uint32_t ux = x[i], uy = y[i];
    b |= (ux & 0x7F800000u) == 0x7F800000u;
    b |= (uy & 0x7F800000u) == 0x7F800000u;
    float g, w;
    memcpy(&g, &ux, 4);
    memcpy(&w, &uy, 4);
    float d = fabsf(g - w), aw = fabsf(w), lim = at + rt * aw;
    b |= d > 0.999f * lim;
    ma = fmaxf(ma, d);
    mr = fmaxf(mr, aw > at ? d / aw : 0.0f);
    ev |= aw > 1.001f * lim;
  }
  *mabs = ma;
  *mrel = mr;
  *bad = b;
  *evd = ev;
}
