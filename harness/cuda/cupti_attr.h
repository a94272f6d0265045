/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/cupti_attr.h -- attribution of a call's GPU work through
 * CUPTI (cupti.c), for the CUDA runner.  Single-threaded; set up before
 * the sandbox closes.
 */
#ifndef KF_HARNESS_CUPTI_ATTR_H
#define KF_HARNESS_CUPTI_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
  KF_CUPTI_OK = 0,
  KF_CUPTI_FOREIGN_STREAM = 1, /* work on another stream or context */
  KF_CUPTI_EARLY = 2,          /* work that began before the call's start */
  KF_CUPTI_BLIND = 3,          /* the harness's own work after the call left
                                  no record: tracing was switched off */
};

typedef struct {
  uint32_t n;           /* GPU activities (kernels, copies, memsets) */
  uint64_t first_start; /* CUPTI ns, 0 when n == 0 */
  uint64_t last_end;
  uint64_t pre_end;     /* end of the harness's own work before the call */
  int bad;              /* KF_CUPTI_* */
  char what[160];       /* the first offending activity */
  uint32_t lost;        /* records CUPTI or we dropped */
  int64_t mem_kept;     /* device bytes the call allocated, not freed */
  char mem_what[96];    /* its first allocation */
} kf_cupti_call;

/* Enables activity tracing (API calls, kernels, copies, memsets).  0, or
 * -1 with err. */
int kf_cupti_init(char *err, size_t errlen);
/* Delivers and forgets every record so far (the harness's own work). */
void kf_cupti_discard(void);
/* Forgets what was collected, without delivering anything (tracing is off
 * between calls, so nothing is pending then). */
void kf_cupti_reset(void);
/* Tracing on (at the start of a call) or off (after its records are in):
 * the harness's other commands then pay nothing for it.  0 or -1. */
int kf_cupti_scope(bool on);
/* Whether allocation records (kf_cupti_call.mem_kept) are collected. */
bool kf_cupti_memory(void);
/* CUPTI's clock, ns (the records' timebase). */
uint64_t kf_cupti_now(void);
/* Delivers the records so far and returns the stream / context id of the
 * last GPU activity (for learning the ids of the harness's own stream),
 * forgetting them. */
uint32_t kf_cupti_stream_of_last(void);
uint32_t kf_cupti_context_of_last(void);
/* Begins the harness's own traced work after a call, which kf_cupti_end
 * then checks: called after the call's device-wide synchronize and before
 * that work -- a memset, a kernel and a copy (each must come back as a GPU
 * record with the API call that issued it) and, with_alloc, an allocation
 * freed again (its record must come back when allocation records are
 * on).  A candidate that switched any of these kinds of tracing off
 * inside its call, and left it so, is caught by the missing record. */
void kf_cupti_mark(bool with_alloc);
/* After the device-wide synchronize of a call whose kf_launch ran between
 * CUPTI times t0 and t1: the candidate's activities, judged against the
 * expected stream and context ids.  0, or -1 when tracing is off. */
int kf_cupti_end(uint64_t t0, uint64_t t1, uint32_t stream, uint32_t ctx,
                 kf_cupti_call *out);

#endif
