/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/diagnose.c -- the bottleneck classifier (diagnose.h).
 */
#include "diagnose.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

static const char *const names[] = {NULL, "memory", "compute", "latency",
                                    "launch"};

const char *kf_diag_bound_name(kf_diag_bound b) {
  if ((int)b <= 0 || (size_t)b >= sizeof names / sizeof *names) return NULL;
  return names[b];
}

kf_diag_bound kf_diag_bound_parse(const char *name) {
  for (size_t i = 1; name && i < sizeof names / sizeof *names; i++)
    if (!strcmp(name, names[i])) return (kf_diag_bound)i;
  return KF_DIAG_NONE;
}

static double frac(double got, double ceil) {
  if (!(got > 0) || !(ceil > 0) || !isfinite(got) || !isfinite(ceil))
    return 0;
  return got / ceil;
}

/* " (top stall long_scoreboard 12.3 cycles/instr)" or "" */
static void stall_text(const kf_prof *p, char *out, size_t len) {
  out[0] = '\0';
  if (p && p->n_stalls > 0)
    snprintf(out, len, "; top stall %s (%.1f cycles per instruction)",
             p->stalls[0].name, p->stalls[0].cycles);
}

int kf_diag_classify(const kf_diag_in *in, kf_diag *out) {
  memset(out, 0, sizeof *out);
  if (!(in->time_ns > 0) || !isfinite(in->time_ns)) {
    snprintf(out->detail, sizeof out->detail, "no time to diagnose");
    return KF_EINVAL;
  }
  const kf_prof *p = in->prof && in->prof->status == KF_PROF_OK ? in->prof
                                                                 : NULL;
  out->bw_frac = frac(in->gbps, in->ceil_gbps);
  out->fl_frac = frac(in->gflops, in->ceil_gflops);
  double launch_ns = in->gpu ? KF_DIAG_LAUNCH_NS_GPU : KF_DIAG_LAUNCH_NS_CPU;
  double top = out->bw_frac > out->fl_frac ? out->bw_frac : out->fl_frac;
  char st[96];
  stall_text(p, st, sizeof st);

  if (in->time_ns < launch_ns && top < KF_DIAG_BOUND_FRAC) {
    out->bound = KF_DIAG_LAUNCH;
    snprintf(out->detail, sizeof out->detail, "launch-bound: %.0f ns per "
             "call, below the %.0f ns where launch and call overhead "
             "dominate; %.1f%% of the measured bandwidth", in->time_ns,
             launch_ns, 100 * out->bw_frac);
    return 0;
  }
  if (out->bw_frac >= KF_DIAG_BOUND_FRAC && out->bw_frac >= out->fl_frac) {
    out->bound = KF_DIAG_MEMORY;
    int l = snprintf(out->detail, sizeof out->detail, "memory-bound at "
                     "%.1f%% of the measured bandwidth (%.1f of %.1f GB/s)",
                     100 * out->bw_frac, in->gbps, in->ceil_gbps);
    if (p && p->dram_pct >= 0 && l > 0 && (size_t)l < sizeof out->detail)
      snprintf(out->detail + l, sizeof out->detail - (size_t)l,
               "; DRAM throughput %.1f%% of peak", p->dram_pct);
    out->profiled = p && p->dram_pct >= 0;
    return 0;
  }
  if (out->fl_frac >= KF_DIAG_BOUND_FRAC) {
    out->bound = KF_DIAG_COMPUTE;
    int l = snprintf(out->detail, sizeof out->detail, "compute-bound at "
                     "%.1f%% of the measured FLOP rate (%.1f of %.1f "
                     "GFLOP/s)", 100 * out->fl_frac, in->gflops,
                     in->ceil_gflops);
    if (p && p->sm_pct >= 0 && l > 0 && (size_t)l < sizeof out->detail)
      snprintf(out->detail + l, sizeof out->detail - (size_t)l,
               "; SM throughput %.1f%% of peak", p->sm_pct);
    out->profiled = p && p->sm_pct >= 0;
    return 0;
  }
  /* Timing leaves it open: the counters say which unit is busy. */
  if (p && p->dram_pct >= 100 * KF_DIAG_BOUND_FRAC && p->dram_pct >= p->sm_pct) {
    out->bound = KF_DIAG_MEMORY;
    out->profiled = true;
    snprintf(out->detail, sizeof out->detail, "memory-bound by the counters:"
             " DRAM throughput %.1f%% of peak, %.1f%% of the measured "
             "bandwidth by time (the spec's byte count may undercount the "
             "traffic)", p->dram_pct, 100 * out->bw_frac);
    return 0;
  }
  if (p && p->sm_pct >= 100 * KF_DIAG_BOUND_FRAC) {
    out->bound = KF_DIAG_COMPUTE;
    out->profiled = true;
    snprintf(out->detail, sizeof out->detail, "compute-bound by the "
             "counters: SM throughput %.1f%% of peak, %.1f%% of the "
             "measured FLOP rate by time%s", p->sm_pct, 100 * out->fl_frac,
             st);
    return 0;
  }
  out->bound = KF_DIAG_LATENCY;
  out->profiled = p != NULL;
  if (p)
    snprintf(out->detail, sizeof out->detail, "occupancy/latency-bound: "
             "%.1f%% of the measured bandwidth, %.1f%% of the FLOP rate; "
             "achieved occupancy %.1f%%, DRAM %.1f%%, SM %.1f%% of peak%s",
             100 * out->bw_frac, 100 * out->fl_frac, p->occupancy_pct,
             p->dram_pct, p->sm_pct, st);
  else
    snprintf(out->detail, sizeof out->detail, "occupancy/latency-bound: "
             "%.1f%% of the measured bandwidth, %.1f%% of the FLOP rate "
             "(no ceiling is near; no profile to say which latency)",
             100 * out->bw_frac, 100 * out->fl_frac);
  return 0;
}

/* Substrings of knob names (upper case) per class. */
static const char *const knob_words[][8] = {
    [KF_DIAG_MEMORY] = {"VPT", "VPL", "VEC", "LANES", "WIDTH", "LOAD", "UNROLL",
                        NULL},
    [KF_DIAG_COMPUTE] = {"MATH", "UNROLL", "ILP", "MR", "BM", "BN", "BK",
                         NULL},
    [KF_DIAG_LATENCY] = {"THREADS", "WARPS", "BLOCKS_PER_SM", "BLOCK", "ILP",
                         "UNROLL", "ITERS", NULL},
    [KF_DIAG_LAUNCH] = {"BLOCKS_PER_SM", "ITERS", "ROWS", "THREADS", "BATCH",
                        "PER", NULL},
};

bool kf_diag_knob_relevant(kf_diag_bound b, const char *knob) {
  if ((int)b <= 0 || (size_t)b >= sizeof knob_words / sizeof *knob_words ||
      !knob)
    return false;
  char up[64];
  size_t n = 0;
  for (; knob[n] && n + 1 < sizeof up; n++)
    up[n] = (char)toupper((unsigned char)knob[n]);
  up[n] = '\0';
  for (const char *const *w = knob_words[b]; *w; w++)
    if (strstr(up, *w)) return true;
  return false;
}
