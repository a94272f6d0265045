/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/profile.h -- a hardware profile of one candidate's kernels, and
 * the parser of what Nsight Compute prints for it.
 *
 * The GPU harness (harness/cuda/profile.c) runs a candidate once more
 * under `ncu --csv --page raw` after its timing, and hands ncu's output
 * to kf_prof_parse_ncu_csv; the worker reports the result
 * (EvalResult.profile), the coordinator stores it (eval_profiles) and the
 * diagnosis (common/diagnose.h) reads it.  Where no profile could be
 * taken the status says why instead: a profile never fails an
 * evaluation.
 *
 * Pure functions, no I/O, no allocation: any thread.
 */
#ifndef KF_PROFILE_H
#define KF_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "kernelfleet.pb-c.h"

#define KF_PROF_MAX_STALLS 3
/* Bounds of a believable profile: what kf_prof_from_pb accepts, and what
 * the parser keeps (beyond them a number counts as not measured), so a
 * profile the harness made is never refused. */
#define KF_PROF_PCT_MAX 1000.0    /* percentages (ncu shows 100.17) */
#define KF_PROF_NS_MAX 1e15       /* durations */
#define KF_PROF_CYCLES_MAX 1e9    /* stall cycles per instruction */
#define KF_PROF_REGS_MAX 65536u
#define KF_PROF_KERNELS_MAX 1000000u

/* Status names are stored (eval_profiles.status) and sent as text. */
typedef enum {
  KF_PROF_NONE = 0,     /* no profile asked for ("none") */
  KF_PROF_OK,           /* counters read ("ok") */
  KF_PROF_UNAVAILABLE,  /* no profiler on the worker ("unavailable") */
  KF_PROF_RESTRICTED,   /* the driver refuses counters to this user,
                           ERR_NVGPUCTRPERM ("restricted") */
  KF_PROF_FAILED,       /* the profiler ran and failed ("failed") */
  KF_PROF_SKIPPED,      /* the campaign's policy left it out ("skipped") */
} kf_prof_status;

typedef struct {
  char name[48];   /* ncu's stall reason: "long_scoreboard", "barrier" */
  double cycles;   /* warp cycles stalled per issued instruction */
} kf_prof_stall;

/* Percentages are 0..100 (hit rates, % of peak, occupancy); a negative
 * value means "not measured". */
typedef struct {
  kf_prof_status status;
  char reason[256];       /* why not ok, or "" */
  char tool[64];          /* "ncu" */
  char kernel[128];       /* the kernel the numbers are of (the longest) */
  uint32_t kernels;       /* kernel launches the profiler saw */
  double duration_ns;     /* that kernel's duration under the profiler */
  double dram_pct;        /* DRAM throughput, % of peak */
  double sm_pct;          /* SM throughput, % of peak */
  double occupancy_pct;   /* achieved occupancy, % of the maximum warps */
  double l1_hit_pct;      /* L1/TEX sector hit rate */
  double l2_hit_pct;      /* L2 sector hit rate */
  uint32_t registers;     /* per thread */
  uint32_t shared_bytes;  /* per block, static + dynamic */
  uint32_t spill_bytes;   /* local-memory spill bytes (compile facts) */
  kf_prof_stall stalls[KF_PROF_MAX_STALLS]; /* the largest first */
  int n_stalls;
  uint32_t profile_ms;    /* wall time of the profiling pass */
} kf_prof;

/* Sets every number to "not measured" and the status to s. */
void kf_prof_init(kf_prof *p, kf_prof_status s);

/* "ok", "unavailable", ...; NULL for a value out of range. */
const char *kf_prof_status_name(kf_prof_status s);
/* The status of a name, or -1. */
int kf_prof_status_parse(const char *name);

/* A campaign's profiling policy: "all" (*k = -1), "none" (0), "top:K"
 * (K, 1..999), NULL or "" ("top:5", the default: *k = 5).  0, or
 * KF_EINVAL for anything else. */
int kf_prof_policy_parse(const char *s, int *k);
#define KF_PROF_POLICY_DEFAULT "top:5"

/* The metrics the harness asks ncu for, comma-separated (--metrics). */
extern const char kf_prof_ncu_metrics[];

/* Parses `ncu --csv --page raw` output (text, len bytes; other lines,
 * such as "==PROF==" notes, are skipped): a quoted header row of column
 * names, a row of units, then one row per kernel launch.  The kernel with
 * the largest gpu__time_duration.sum gives the numbers; stall reasons are
 * its three largest smsp__average_warps_issue_stalled_*_per_issue_active
 * values.  Kernels whose function name (the Kernel Name up to its first
 * '(') is in skip (NULL-terminated; may be NULL) are not the candidate's
 * and are left out: the harness's own kernels.  Numbers may carry
 * thousands separators.
 * Returns 0 with out->status KF_PROF_OK; KF_EINVAL with err and out's
 * status set (RESTRICTED when the text names ERR_NVGPUCTRPERM, FAILED
 * when it holds no kernel row) otherwise. */
int kf_prof_parse_ncu_csv(const char *text, size_t len,
                          const char *const *skip, kf_prof *out, char *err,
                          size_t errlen);

/* ------------------------------------------- the wire (profile_pb.c) */

/* Views of p as a ProfileReport: out and its stalls point into p and into
 * stalls/ptrs (KF_PROF_MAX_STALLS each), which must outlive out. */
void kf_prof_to_pb(const kf_prof *p, Kernelfleet__ProfileReport *out,
                   Kernelfleet__ProfileStall *stalls,
                   Kernelfleet__ProfileStall **ptrs);

/* A reported ProfileReport checked and copied into out: every text valid
 * UTF-8 without NUL and fitting its field, the status one of the names,
 * numbers finite and in range (percentages <= 1000, negative: not
 * measured), at most KF_PROF_MAX_STALLS stalls.  0, or KF_EINVAL with bad
 * naming the field ("profile.reason is not valid UTF-8 (byte 3)").  The
 * worker sanitizes to the same bounds, so what it made passes. */
int kf_prof_from_pb(const Kernelfleet__ProfileReport *in, kf_prof *out,
                    char *bad, size_t blen);

#endif
