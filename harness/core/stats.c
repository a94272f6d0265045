/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/stats.c -- what the timing loop concludes from its
 * repetitions: medians, spreads, when enough repetitions were taken, and
 * the roofline floor below which a time is not a fast kernel but a broken
 * measurement.  Pure functions, no I/O.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spec.h"

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

double kf_harness__median(const uint64_t *v, int from, int n, uint64_t *tmp) {
  if (n <= 0) return 0;
  memcpy(tmp, v + from, (size_t)n * sizeof *tmp);
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_u64);
  return n % 2 ? (double)tmp[n / 2]
               : ((double)tmp[n / 2 - 1] + (double)tmp[n / 2]) / 2;
}

void kf_harness__stats(const uint64_t *v, int n, uint64_t *tmp, double *med,
                       double *spread) {
  *med = kf_harness__median(v, 0, n, tmp); /* leaves tmp sorted */
  if (n <= 0) {
    *spread = 0;
    return;
  }
  double p10 = (double)tmp[(int)(0.1 * (n - 1))];
  double p90 = (double)tmp[(int)(0.9 * (n - 1) + 0.5)];
  *spread = *med > 0 ? (p90 - p10) / *med : 0;
}

bool kf_harness__stable(const uint64_t *v, int m, uint64_t *tmp) {
  if (m < 2) return false;
  double a = kf_harness__median(v, 0, m, tmp);
  double h = kf_harness__median(v, m / 2, m - m / 2, tmp);
  return fabs(a - h) <= 0.01 * a;
}

/* The slack.  The differences between the two sides' parts scatter
 * (the draw, the trace, host wake-ups: a median deviation of 26-107 us a
 * repetition on an H200), and two honest sides' parts differ by up to
 * ~90 us on their own (docs/bench-notes.md, 2026-11-30, eighth session).
 * So: six standard errors of the differences' median (1.86 median
 * deviations over the root of the repetitions), 5% of the candidate's
 * median claim, 100 us, whichever is largest.  A claim cut by less
 * stands (docs/integrity.md); the roofline floor still bounds it. */
#define WALL_SLACK_SES 6.0
#define WALL_SLACK_SHARE 0.05
#define WALL_SLACK_MIN_NS 100000.0

double kf_harness__wall_bound(const uint64_t *rt, const uint64_t *rw, int rn,
                              uint64_t *t, const uint64_t *w, int n,
                              uint64_t *tmp, kf_harness_wall *out) {
  kf_harness_wall dummy;
  if (!out) out = &dummy;
  memset(out, 0, sizeof *out);
  /* repetition i of both was on the same draw, distribution and layout:
   * their difference leaves out what the draw costs */
  if (rn != n || n < 3) return 0;
  for (int i = 0; i < n; i++)
    if (!rw[i] || !w[i]) return 0;
  /* biased by 2^62 to stay unsigned: the parts differ either way */
  const uint64_t bias = 1ull << 62;
  uint64_t *d = tmp + n;
  double ref_part = 0;
  for (int i = 0; i < n; i++) {
    int64_t oc = (int64_t)(w[i] > t[i] ? w[i] - t[i] : 0);
    int64_t orf = (int64_t)(rw[i] > rt[i] ? rw[i] - rt[i] : 0);
    d[i] = bias + (uint64_t)(oc - orf);
    ref_part += (double)orf / n;
  }
  double excess = kf_harness__median(d, 0, n, tmp) - (double)bias;
  for (int i = 0; i < n; i++) {
    double x = fabs((double)d[i] - (double)bias - excess);
    d[i] = (uint64_t)x;
  }
  double mad = kf_harness__median(d, 0, n, tmp);
  double claim = kf_harness__median(t, 0, n, tmp);
  double slack = WALL_SLACK_SES * 1.86 * mad / sqrt((double)n);
  if (slack < WALL_SLACK_SHARE * claim) slack = WALL_SLACK_SHARE * claim;
  if (slack < WALL_SLACK_MIN_NS) slack = WALL_SLACK_MIN_NS;
  *out = (kf_harness_wall){ref_part, mad, ref_part + excess, slack};
  if (excess <= slack) return 0;
  for (int i = 0; i < n; i++) {
    uint64_t orf = rw[i] > rt[i] ? rw[i] - rt[i] : 0;
    if (w[i] > orf && w[i] - orf > t[i]) t[i] = w[i] - orf;
  }
  return excess;
}

void kf_harness__roofline(const kf_spec *s, const kf_size *sz, double ns,
                          double ceil_gbps, double ceil_gflops, double factor,
                          kf_harness_roof *out) {
  memset(out, 0, sizeof *out);
  char err[256];
  if (s->bytes[0] &&
      kf_spec_eval(s, s->bytes, sz, &out->bytes, err, sizeof err) != 0)
    out->bytes = 0;
  if (s->flops[0] &&
      kf_spec_eval(s, s->flops, sz, &out->flops, err, sizeof err) != 0)
    out->flops = 0;
  if (ns <= 0) return;
  out->gbps = (double)out->bytes / ns;
  out->gflops = (double)out->flops / ns;
  out->ceil_gbps = ceil_gbps;
  /* the floor: the larger of the two times the ceilings allow */
  double floor_ns = 0;
  if (ceil_gbps > 0 && out->bytes > 0)
    floor_ns = (double)out->bytes / (factor * ceil_gbps);
  if (ceil_gflops > 0 && out->flops > 0) {
    double f = (double)out->flops / (factor * ceil_gflops);
    if (f > floor_ns) floor_ns = f;
  }
  out->too_fast = floor_ns > 0 && ns < floor_ns;
}

double kf_harness__ceiling_for(double worker_gbps, double footprint_gbps) {
  /* the footprint rate only raises: a sample slowed by load must not make
   * an honest kernel too fast, and a worker without ceilings (0) has no
   * roofline at all */
  if (worker_gbps <= 0) return 0;
  return footprint_gbps > worker_gbps ? footprint_gbps : worker_gbps;
}
