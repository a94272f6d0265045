/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/search_diag.c -- what the search takes from profiles and
 * diagnoses (docs/profiling.md), apart from search.c so that the
 * breeding loop stays as it was but for two calls:
 *
 *  - which eval tasks ask their GPU worker for a profile: the campaign's
 *    policy ("all", "none", "top:K"); for top:K the request carries the
 *    class's K-th best median so far, and the harness profiles the
 *    candidate only when it timed faster (it would enter the top K);
 *  - a stop rule: every class's best is memory-bound at or above
 *    KF_DIAG_MEMORY_STOP of the bandwidth its harness measured (but not
 *    above 1: then the measurement was no ceiling for it);
 *  - which knob a mutation changes: one that matters for the parent's
 *    diagnosed bound, most of the time (kf_diag_knob_relevant).
 * Same rules as search.c: work thread, store rows only, no I/O.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"
#include "outcome.h"
#include "profile.h"
#include "search_internal.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void kf_search__profile_request(const kf_campaign *c,
                                const kf_cand_list *evals, int64_t dc,
                                Kernelfleet__EvalRequest *rq) {
  int k = 0;
  if (kf_prof_policy_parse(c->profile, &k) != 0 || k == 0) {
    rq->profile = (char *)"off";
    return;
  }
  rq->profile = (char *)"on";
  rq->profile_below_ns = 0;
  if (k < 0 || !evals) return;
  size_t n = 0;
  for (size_t i = 0; i < evals->n; i++) {
    const kf_cand_row *r = &evals->v[i];
    if (r->device_class_id == dc && r->outcome == KF_OUTCOME_OK &&
        r->time_ns_median > 0)
      n++;
  }
  if (n < (size_t)k) return; /* fewer than K: any verified one enters */
  double *t = malloc(n * sizeof *t);
  if (!t) return; /* no threshold: profiles more, never fewer */
  size_t m = 0;
  for (size_t i = 0; i < evals->n; i++) {
    const kf_cand_row *r = &evals->v[i];
    if (r->device_class_id == dc && r->outcome == KF_OUTCOME_OK &&
        r->time_ns_median > 0)
      t[m++] = r->time_ns_median;
  }
  qsort(t, m, sizeof *t, cmp_double);
  rq->profile_below_ns = t[k - 1];
  free(t);
}

const char *kf_search__diag_stop(const kf_search__best *bests, size_t nb,
                                 char *buf, size_t len) {
  double lowest = 2;
  for (size_t b = 0; b < nb; b++) {
    const kf_cand_row *r = bests[b].best;
    if (!r || strcmp(r->bound, "memory") || !(r->bw_frac > 0)) return NULL;
    /* past 1 the measured ceiling is no ceiling for this problem (a read
     * streams faster than the copy the worker measured, or the footprint
     * fits L2): how far from the bound it is, nobody knows, so it is no
     * reason to stop; the roofline target and the budgets still are */
    if (r->bw_frac > 1.0) return NULL;
    if (r->bw_frac < lowest) lowest = r->bw_frac;
  }
  if (nb == 0 || lowest < KF_DIAG_MEMORY_STOP) return NULL;
  snprintf(buf, len, "memory-bound at %.1f%% of the measured bandwidth "
           "(>= %.0f%%)", 100 * lowest, 100 * KF_DIAG_MEMORY_STOP);
  return buf;
}

int kf_search__pick_knob(const char *const *names, const int *mut, int m,
                         const char *bound, double u) {
  kf_diag_bound b = kf_diag_bound_parse(bound);
  if (b == KF_DIAG_NONE || m <= 0 || u >= 0.75) return -1;
  int rel[64], nr = 0;
  for (int j = 0; j < m && nr < 64; j++)
    if (kf_diag_knob_relevant(b, names[mut[j]])) rel[nr++] = j;
  if (nr == 0) return -1;
  /* u < 0.75 picks among the relevant ones, spread over [0, 0.75) */
  int i = (int)(u / 0.75 * nr);
  return rel[i < nr ? i : nr - 1];
}
