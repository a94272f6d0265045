/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/profile_pb.c -- kf_prof to and from the wire's ProfileReport
 * (profile.h): the harness sends one, the coordinator checks what a
 * worker sent before anything of it is stored.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "profile.h"
#include "text.h"

void kf_prof_to_pb(const kf_prof *p, Kernelfleet__ProfileReport *out,
                   Kernelfleet__ProfileStall *stalls,
                   Kernelfleet__ProfileStall **ptrs) {
  kernelfleet__profile_report__init(out);
  const char *st = kf_prof_status_name(p->status);
  out->status = (char *)(st ? st : "failed");
  out->reason = (char *)p->reason;
  out->tool = (char *)p->tool;
  out->kernel = (char *)p->kernel;
  out->kernels = p->kernels;
  out->duration_ns = p->duration_ns;
  out->dram_pct = p->dram_pct;
  out->sm_pct = p->sm_pct;
  out->occupancy_pct = p->occupancy_pct;
  out->l1_hit_pct = p->l1_hit_pct;
  out->l2_hit_pct = p->l2_hit_pct;
  out->registers = p->registers;
  out->shared_bytes = p->shared_bytes;
  out->spill_bytes = p->spill_bytes;
  out->profile_ms = p->profile_ms;
  int n = p->n_stalls < KF_PROF_MAX_STALLS ? p->n_stalls : KF_PROF_MAX_STALLS;
  for (int i = 0; i < n; i++) {
    kernelfleet__profile_stall__init(&stalls[i]);
    stalls[i].reason = (char *)p->stalls[i].name;
    stalls[i].cycles = p->stalls[i].cycles;
    ptrs[i] = &stalls[i];
  }
  out->n_stalls = n > 0 ? (size_t)n : 0;
  out->stalls = ptrs;
}

/* Text of a field into dst (cap bytes with the NUL): 0 or KF_EINVAL. */
static int text_in(const char *field, const char *v, char *dst, size_t cap,
                   char *bad, size_t blen) {
  char why[120];
  size_t n = v ? strlen(v) : 0;
  if (kf_text_check(v, n, cap - 1, why, sizeof why)) {
    snprintf(bad, blen, "profile.%s %s", field, why);
    return KF_EINVAL;
  }
  if (n) memcpy(dst, v, n);
  dst[n] = '\0';
  return 0;
}

/* A measured number: finite, at most max; negative means "not measured"
 * and is kept as -1. */
static int num_in(const char *field, double v, double max, double *dst,
                  char *bad, size_t blen) {
  if (!isfinite(v) || v > max) {
    snprintf(bad, blen, "profile.%s %g is out of range (at most %g)", field,
             v, max);
    return KF_EINVAL;
  }
  *dst = v < 0 ? -1 : v;
  return 0;
}

int kf_prof_from_pb(const Kernelfleet__ProfileReport *in, kf_prof *out,
                    char *bad, size_t blen) {
  kf_prof_init(out, KF_PROF_NONE);
  int st = kf_prof_status_parse(in->status ? in->status : "");
  if (st < 0) {
    char clean[48];
    kf_text_sanitize(in->status ? in->status : "",
                     in->status ? strlen(in->status) : 0, clean, sizeof clean,
                     0);
    snprintf(bad, blen, "profile.status '%s' is not one of none, ok, "
             "unavailable, restricted, failed, skipped", clean);
    return KF_EINVAL;
  }
  out->status = (kf_prof_status)st;
  if (text_in("reason", in->reason, out->reason, sizeof out->reason, bad,
              blen) ||
      text_in("tool", in->tool, out->tool, sizeof out->tool, bad, blen) ||
      text_in("kernel", in->kernel, out->kernel, sizeof out->kernel, bad,
              blen))
    return KF_EINVAL;
  if (num_in("duration_ns", in->duration_ns, KF_PROF_NS_MAX,
             &out->duration_ns, bad,
             blen) ||
      num_in("dram_pct", in->dram_pct, KF_PROF_PCT_MAX, &out->dram_pct, bad,
             blen) ||
      num_in("sm_pct", in->sm_pct, KF_PROF_PCT_MAX, &out->sm_pct, bad, blen) ||
      num_in("occupancy_pct", in->occupancy_pct, KF_PROF_PCT_MAX,
             &out->occupancy_pct, bad, blen) ||
      num_in("l1_hit_pct", in->l1_hit_pct, KF_PROF_PCT_MAX, &out->l1_hit_pct,
             bad, blen) ||
      num_in("l2_hit_pct", in->l2_hit_pct, KF_PROF_PCT_MAX, &out->l2_hit_pct,
             bad, blen))
    return KF_EINVAL;
  if (in->registers > KF_PROF_REGS_MAX || in->kernels > KF_PROF_KERNELS_MAX) {
    bool r = in->registers > KF_PROF_REGS_MAX;
    snprintf(bad, blen, "profile.%s %u is out of range",
             r ? "registers" : "kernels", r ? in->registers : in->kernels);
    return KF_EINVAL;
  }
  out->kernels = in->kernels;
  out->registers = in->registers;
  out->shared_bytes = in->shared_bytes;
  out->spill_bytes = in->spill_bytes;
  out->profile_ms = in->profile_ms > 86400000u ? 86400000u : in->profile_ms;
  if (in->n_stalls > KF_PROF_MAX_STALLS) {
    snprintf(bad, blen, "profile.stalls holds %zu entries (at most %d)",
             in->n_stalls, KF_PROF_MAX_STALLS);
    return KF_EINVAL;
  }
  for (size_t i = 0; i < in->n_stalls; i++) {
    const Kernelfleet__ProfileStall *s = in->stalls[i];
    char f[48];
    snprintf(f, sizeof f, "stalls[%zu].reason", i);
    if (text_in(f, s->reason, out->stalls[i].name,
                sizeof out->stalls[i].name, bad, blen))
      return KF_EINVAL;
    snprintf(f, sizeof f, "stalls[%zu].cycles", i);
    if (num_in(f, s->cycles, KF_PROF_CYCLES_MAX, &out->stalls[i].cycles, bad,
               blen))
      return KF_EINVAL;
  }
  out->n_stalls = (int)in->n_stalls;
  return 0;
}
