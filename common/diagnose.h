/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/diagnose.h -- why a measured kernel takes the time it takes: a
 * bottleneck class with its numbers, for every ok evaluation of every
 * backend.
 *
 * The evidence every backend has: the achieved bandwidth and FLOP rate
 * (the spec's byte and FLOP counts at the bench size over the median
 * time) against the ceilings the harness measured on that device and
 * used for its roofline floor (the best of copy/read/write bandwidth,
 * and the FMA rate).  A GPU profile (common/profile.h), when there is
 * one, refines a case the timing leaves open.  The classes, in the order
 * they are decided (thresholds in docs/profiling.md):
 *
 *   launch    the time is so short that launch and call overhead is most
 *             of it, and neither ceiling is near
 *   memory    achieved bandwidth >= KF_DIAG_BOUND_FRAC of the measured
 *             ceiling and the larger fraction (or, with a profile, DRAM
 *             throughput >= that % of peak)
 *   compute   the FLOP rate's fraction is (or the profile's SM throughput)
 *   latency   neither: occupancy- or latency-bound, with the achieved
 *             occupancy and the top warp stall when profiled
 *
 * The coordinator classifies each report as it stores it; the search
 * reads the class (stop a memory-bound problem at KF_DIAG_MEMORY_STOP of
 * the bandwidth; mutate the knobs that matter for the class first).
 * Pure functions: no I/O, any thread.
 */
#ifndef KF_DIAGNOSE_H
#define KF_DIAGNOSE_H

#include <stdbool.h>
#include <stddef.h>

#include "profile.h"

/* A fraction of a measured ceiling at or above which it is the bound. */
#define KF_DIAG_BOUND_FRAC 0.60
/* The search stops pushing a memory-bound problem whose best reached
 * this fraction of the measured bandwidth. */
#define KF_DIAG_MEMORY_STOP 0.97
/* Below these times a call is dominated by launch/call overhead. */
#define KF_DIAG_LAUNCH_NS_GPU 10000.0
#define KF_DIAG_LAUNCH_NS_CPU 1000.0

/* Stored as text (eval_profiles.bound); KF_DIAG_NONE is never stored. */
typedef enum {
  KF_DIAG_NONE = 0,
  KF_DIAG_MEMORY,
  KF_DIAG_COMPUTE,
  KF_DIAG_LATENCY,
  KF_DIAG_LAUNCH,
} kf_diag_bound;

typedef struct {
  bool gpu;             /* a GPU kernel (launch overhead is larger) */
  double time_ns;       /* the candidate's median */
  double gbps, gflops;  /* achieved (0: the spec gives no count) */
  double ceil_gbps;     /* measured bandwidth ceiling; 0: unknown */
  double ceil_gflops;   /* measured compute ceiling; 0: unknown */
  const kf_prof *prof;  /* NULL, or a profile (used when status is OK) */
} kf_diag_in;

typedef struct {
  kf_diag_bound bound;
  double bw_frac;       /* achieved / measured bandwidth; 0: unknown */
  double fl_frac;       /* achieved / measured FLOP rate; 0: unknown */
  bool profiled;        /* a profile's counters took part */
  char detail[320];     /* "memory-bound at 93.1% of the measured
                           bandwidth (1650 of 1772 GB/s)" */
} kf_diag;

/* Classifies one evaluation.  0, or KF_EINVAL (no positive finite time:
 * nothing to diagnose; out->bound NONE). */
int kf_diag_classify(const kf_diag_in *in, kf_diag *out);

/* "memory", "compute", "latency", "launch"; NULL for NONE or junk. */
const char *kf_diag_bound_name(kf_diag_bound b);
/* The bound of a name; KF_DIAG_NONE when it is none of them. */
kf_diag_bound kf_diag_bound_parse(const char *name);

/* Whether a template knob (by its name, e.g. "VPT", "THREADS") is one
 * that usually changes a kernel of this class: vector width and bytes in
 * flight for memory, unrolling and math for compute, threads and blocks
 * for latency, work per launch for launch.  A heuristic on names. */
bool kf_diag_knob_relevant(kf_diag_bound b, const char *knob);

#endif
