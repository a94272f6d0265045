/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/check.c -- the comparison of a candidate's outputs with the
 * reference's, for every backend, and the bit-for-bit comparison of two
 * runs.  The tolerance is the spec's (kf_tol_ok / kf_spec_within_tol in
 * common/spec.h, written once); this file only walks the elements, split
 * over threads for large outputs.
 *
 * Rules, per output element:
 *   - the reference's element still holds the poison: the reference left it
 *     unwritten (SPEC_ERROR: the problem's fault, not the candidate's);
 *   - the reference's element is NaN/Inf and the spec does not allow it:
 *     SPEC_ERROR;
 *   - the candidate's element still holds the poison: UNWRITTEN_OUTPUT;
 *   - otherwise kf_spec_within_tol decides: WRONG_ANSWER names the first
 *     element that fails, its values and how many fail.
 * Evidence: a case counts as evidence only when some expected element is
 * outside the tolerance around zero, i.e. an all-zeros kernel would fail
 * it (the verify stage refuses a problem where no case is evidence).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "outcome.h"
#include "spec.h"

typedef struct {
  int64_t ref_unw;   /* first reference element left unwritten, -1 */
  int64_t ref_nan;   /* first non-finite reference element (not allowed) */
  int64_t unw_first, unw_n;
  int64_t bad_first, bad_n;
  double bad_got, bad_want;
  double max_abs, max_rel;
  bool evidence;
} part_res;

typedef struct {
  const kf_spec *s;
  int dt;
  const unsigned char *got, *want;
  int64_t n;
  part_res r[KF_HARNESS_PAR_MAX];
} cmp_job;

static bool all_bytes(const unsigned char *p, size_t n, unsigned char b) {
  for (size_t k = 0; k < n; k++)
    if (p[k] != b) return false;
  return true;
}

/* An integer element, compared exactly: the difference in 128-bit
 * integers, so an i64 above 2^53 is not rounded to a double first (a
 * candidate computing i64 in float64 passed an exact spec that way: red
 * team, 2026-11-30).  A nonzero difference is at least 1, whatever the
 * double it becomes, so atol 0 and rtol 0 mean equal. */
static int64_t load_int(const unsigned char *p, int dt) {
  if (dt == KF_DT_BOOL) return *p;
  if (dt == KF_DT_I32) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  int64_t v;
  memcpy(&v, p, 8);
  return v;
}

static bool one_int(const kf_spec *s, int dt, const unsigned char *a,
                    const unsigned char *b, int64_t i, part_res *r) {
  int64_t g = load_int(a, dt), w = load_int(b, dt);
  __int128 d = (__int128)g - (__int128)w;
  if (d < 0) d = -d;
  const kf_tol *t = &s->tol[dt];
  double dd = (double)d, aw = fabs((double)w);
  bool ok = d == 0 || dd <= t->atol + t->rtol * aw;
  if (ok && dd > r->max_abs) r->max_abs = dd;
  if (ok && aw > t->atol && dd > r->max_rel * aw) r->max_rel = dd / aw;
  if (w != 0 && !(aw <= t->atol + t->rtol * aw)) r->evidence = true;
  if (!ok) {
    if (r->bad_first < 0) {
      r->bad_first = i;
      r->bad_got = (double)g;
      r->bad_want = (double)w;
    }
    r->bad_n++;
  }
  return true;
}

/* One element: updates r.  Returns false when the reference is at fault
 * (stop: SPEC_ERROR). */
static inline bool one(const kf_spec *s, int dt, size_t es, unsigned char pb,
                       const unsigned char *a, const unsigned char *b,
                       int64_t i, part_res *r) {
  const bool is_int = kf_dtype_exact((kf_dtype)dt);
  /* An integer answer can be the poison pattern (x ^ 0xA5A5A5A5 at x = 0
   * was a SPEC_ERROR: red team, 2026-11-30): equal bytes agree, written
   * or not.  The reference's self-check, run with the other poison, is
   * what finds an element it never writes. */
  if (is_int && !memcmp(a, b, es)) return one_int(s, dt, a, b, i, r);
  if (all_bytes(b, es, pb)) {
    r->ref_unw = i;
    return false;
  }
  if (all_bytes(a, es, pb)) {
    if (r->unw_first < 0) r->unw_first = i;
    r->unw_n++;
    return true;
  }
  if (is_int) return one_int(s, dt, a, b, i, r);
  double g = kf_harness__load(a, dt, 0), w = kf_harness__load(b, dt, 0);
  if (!isfinite(w) && !s->allow_nan) {
    r->ref_nan = i;
    return false;
  }
  bool ok = kf_spec_within_tol(s, (kf_dtype)dt, g, w);
  if (isfinite(g) && isfinite(w)) {
    const kf_tol *t = &s->tol[dt];
    double d = fabs(g - w), aw = fabs(w);
    if (ok && d > r->max_abs) r->max_abs = d;
    if (ok && aw > t->atol && d > r->max_rel * aw) r->max_rel = d / aw;
    if (!kf_tol_ok(t, 0, w)) r->evidence = true;
  }
  if (!ok) {
    if (r->bad_first < 0) {
      r->bad_first = i;
      r->bad_got = g;
      r->bad_want = w;
    }
    r->bad_n++;
  }
  return true;
}

#define CMP_BLOCK 4096 /* elements per fast block */

static void cmp_part(void *arg, int part, int parts) {
  cmp_job *j = arg;
  part_res *r = &j->r[part];
  memset(r, 0, sizeof *r);
  r->ref_unw = r->ref_nan = r->unw_first = r->bad_first = -1;
  int64_t lo, hi;
  kf_harness__par_range(j->n, part, parts, 64, &lo, &hi);
  const kf_spec *s = j->s;
  const int dt = j->dt;
  const size_t es = kf_dtype_size(dt);
  const unsigned char pb = kf_harness__poison_byte(dt);
  const kf_tol *t = &s->tol[dt];
  /* Fast path for the common float outputs: blocks of elements checked in
   * float, without branches, against 0.999 x the tolerance (so float
   * rounding can only send an element to the exact path, never let one
   * through); a block holding any element that is not clearly within the
   * tolerance -- NaN or Inf, the poison, a real difference, a borderline
   * value -- is walked again element by element with the exact rule. */
  if (dt == KF_DT_BF16 || dt == KF_DT_F32) {
    const float fat = (float)t->atol, frt = (float)t->rtol;
    float fmabs = 0, fmrel = 0;
    bool fevd = false;
    for (int64_t b = lo; b < hi; b += CMP_BLOCK) {
      int64_t e = b + CMP_BLOCK < hi ? b + CMP_BLOCK : hi;
      float bmabs = 0, bmrel = 0;
      int bad = 0, evd = 0;
      if (dt == KF_DT_BF16)
        kf_harness__fast_bf16((const uint16_t *)j->got + b,
                              (const uint16_t *)j->want + b, e - b, fat, frt,
                              &bmabs, &bmrel, &bad, &evd);
      else
        kf_harness__fast_f32((const uint32_t *)j->got + b,
                             (const uint32_t *)j->want + b, e - b, fat, frt,
                             &bmabs, &bmrel, &bad, &evd);
      if (!bad) {
        if (bmabs > fmabs) fmabs = bmabs;
        if (bmrel > fmrel) fmrel = bmrel;
        fevd |= evd != 0;
        continue;
      }
      for (int64_t i = b; i < e; i++)
        if (!one(s, dt, es, pb, j->got + (size_t)i * es,
                 j->want + (size_t)i * es, i, r))
          return;
    }
    if (fmabs > r->max_abs) r->max_abs = fmabs;
    if (fmrel > r->max_rel) r->max_rel = fmrel;
    r->evidence |= fevd;
    return;
  }
  for (int64_t i = lo; i < hi; i++)
    if (!one(s, dt, es, pb, j->got + (size_t)i * es, j->want + (size_t)i * es,
             i, r))
      return;
}

/* The lowest non-negative of a and b, or -1. */
static int64_t first_of(int64_t a, int64_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return a < b ? a : b;
}

int kf_harness__compare(const kf_spec *s, const kf_harness_layout *L,
                        const unsigned char *const *got,
                        const unsigned char *const *want, const char *ctx,
                        kf_harness_cmp *acc, char *why, size_t whylen) {
  for (int j = 0; j < L->n_out; j++) {
    const char *name = s->outputs[j].name;
    cmp_job job = {.s = s, .dt = L->out_dt[j], .got = got[j],
                   .want = want[j], .n = L->out_n[j]};
    int parts = job.n >= (1 << 20) ? kf_harness__par_parts() : 1;
    kf_harness__par_run(parts, cmp_part, &job);
    part_res t;
    memset(&t, 0, sizeof t);
    t.ref_unw = t.ref_nan = t.unw_first = t.bad_first = -1;
    for (int p = 0; p < parts; p++) {
      const part_res *r = &job.r[p];
      t.ref_unw = first_of(t.ref_unw, r->ref_unw);
      t.ref_nan = first_of(t.ref_nan, r->ref_nan);
      t.unw_first = first_of(t.unw_first, r->unw_first);
      t.unw_n += r->unw_n;
      if (r->bad_first >= 0 && (t.bad_first < 0 || r->bad_first < t.bad_first)) {
        t.bad_first = r->bad_first;
        t.bad_got = r->bad_got;
        t.bad_want = r->bad_want;
      }
      t.bad_n += r->bad_n;
      if (r->max_abs > t.max_abs) t.max_abs = r->max_abs;
      if (r->max_rel > t.max_rel) t.max_rel = r->max_rel;
      t.evidence |= r->evidence;
    }
    if (t.ref_unw >= 0) {
      if (kf_dtype_exact((kf_dtype)job.dt))
        /* the candidate disagrees there (equal bytes agree): one of the
         * two is at fault, and this comparison cannot tell which */
        snprintf(why, whylen, "%s: the reference's %s[%" PRId64 "] holds "
                 "the poison pattern (0xA5 bytes): it left it unwritten, "
                 "or that is its answer and the candidate's %" PRId64
                 " differs", ctx, name, t.ref_unw,
                 load_int(got[j] + (size_t)t.ref_unw * kf_dtype_size(job.dt),
                          job.dt));
      else
        snprintf(why, whylen, "%s: the reference left %s[%" PRId64 "] "
                 "unwritten", ctx, name, t.ref_unw);
      return KF_OUTCOME_SPEC_ERROR;
    }
    if (t.ref_nan >= 0) {
      snprintf(why, whylen, "%s: the reference's %s[%" PRId64 "] is %g but "
               "the spec does not allow NaN/Inf", ctx, name, t.ref_nan,
               kf_harness__load(want[j], job.dt, t.ref_nan));
      return KF_OUTCOME_SPEC_ERROR;
    }
    if (t.unw_n) {
      snprintf(why, whylen, "%s: output '%s': %" PRId64 " of %" PRId64
               " elements never written (first at index %" PRId64 ")", ctx,
               name, t.unw_n, job.n, t.unw_first);
      return KF_OUTCOME_UNWRITTEN_OUTPUT;
    }
    if (t.max_abs > acc->max_abs) acc->max_abs = t.max_abs;
    if (t.max_rel > acc->max_rel) acc->max_rel = t.max_rel;
    acc->evidence |= t.evidence;
    if (t.evidence) acc->evidence_outs |= 1u << j;
    if (t.bad_n) {
      const kf_tol *tol = &s->tol[job.dt];
      char gs[32], ws[32];
      if (kf_dtype_exact((kf_dtype)job.dt)) { /* exact */
        size_t es = kf_dtype_size(job.dt), at = (size_t)t.bad_first * es;
        snprintf(gs, sizeof gs, "%" PRId64, load_int(got[j] + at, job.dt));
        snprintf(ws, sizeof ws, "%" PRId64, load_int(want[j] + at, job.dt));
      } else {
        /* digits enough to tell the two apart: 17 for a double */
        int dig = job.dt == KF_DT_F64 ? 17 : 9;
        snprintf(gs, sizeof gs, "%.*g", dig, t.bad_got);
        snprintf(ws, sizeof ws, "%.*g", dig, t.bad_want);
      }
      snprintf(why, whylen, "%s: output '%s' index %" PRId64 " (of %" PRId64
               "): got %s, expected %s (tolerance %g + %g*|expected|); %"
               PRId64 " elements differ", ctx, name, t.bad_first, job.n, gs,
               ws, tol->atol, tol->rtol, t.bad_n);
      return KF_OUTCOME_WRONG_ANSWER;
    }
  }
  return 0;
}

int64_t kf_harness__unwritten_int(const kf_harness_layout *L, int j,
                                  const unsigned char *a,
                                  const unsigned char *b) {
  const int dt = L->out_dt[j];
  if (kf_harness__is_float(dt)) return -1;
  const size_t es = kf_dtype_size(dt);
  const unsigned char pa = kf_harness__out_poison(dt, false),
                      pb = kf_harness__out_poison(dt, true);
  for (int64_t i = 0; i < L->out_n[j]; i++)
    if (all_bytes(a + (size_t)i * es, es, pa) &&
        all_bytes(b + (size_t)i * es, es, pb))
      return i;
  return -1;
}

int kf_harness__compare_bits(const kf_spec *s, const kf_harness_layout *L,
                             const unsigned char *const *a,
                             const unsigned char *const *b, const char *ctx,
                             char *why, size_t whylen) {
  for (int j = 0; j < L->n_out; j++) {
    if (!memcmp(a[j], b[j], L->out_b[j])) continue;
    size_t es = kf_dtype_size(L->out_dt[j]);
    for (int64_t i = 0; i < L->out_n[j]; i++)
      if (memcmp(a[j] + (size_t)i * es, b[j] + (size_t)i * es, es) != 0) {
        snprintf(why, whylen, "%s: two runs on the same inputs differ at "
                 "output '%s' index %" PRId64 ": %.9g vs %.9g (the spec asks "
                 "for bitwise determinism)", ctx, s->outputs[j].name, i,
                 kf_harness__load(a[j], L->out_dt[j], i),
                 kf_harness__load(b[j], L->out_dt[j], i));
        return KF_OUTCOME_NONDETERMINISTIC;
      }
  }
  return 0;
}
