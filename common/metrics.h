/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/metrics.h -- the Prometheus text exposition format (version
 * 0.0.4): a growing text buffer with HELP/TYPE lines, samples with
 * escaped labels, and fixed-bucket histograms.
 *
 * Not thread-safe: a process keeps its counters and histograms on the one
 * thread that owns them (the coordinator's or the worker's libuv loop) and
 * renders them there.  Allocation failure is sticky in the buffer
 * (`oom`) and checked once when the text is done.
 */
#ifndef KF_METRICS_H
#define KF_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  char *p; /* NUL-terminated text; malloc'd */
  size_t len, cap;
  bool oom;
} kf_metrics_buf;

void kf_metrics_buf_free(kf_metrics_buf *b);
/* Appends printf output. */
void kf_metrics_printf(kf_metrics_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "# HELP name help\n# TYPE name type\n"; type is counter, gauge,
 * histogram or untyped.  help is escaped (backslash, newline). */
void kf_metrics_family(kf_metrics_buf *b, const char *name, const char *type,
                       const char *help);

/* Label set text without braces, from NULL-terminated name, value pairs:
 * `class="cpu",state="queued"`, values escaped (backslash, quote,
 * newline) and cut at a character boundary if out is too small.  Returns
 * out. */
const char *kf_metrics_labels(char *out, size_t outlen, ...)
    __attribute__((sentinel));

/* "name{labels} value\n" (no braces when labels is NULL or "");
 * non-finite values as NaN, +Inf, -Inf. */
void kf_metrics_sample(kf_metrics_buf *b, const char *name,
                       const char *labels, double v);

#define KF_METRICS_MAX_BUCKETS 32

/* A histogram with fixed upper bounds (ascending; +Inf is implicit). */
typedef struct {
  size_t n;                             /* finite bounds */
  double le[KF_METRICS_MAX_BUCKETS];    /* upper bounds, ascending */
  uint64_t in[KF_METRICS_MAX_BUCKETS + 1]; /* per bucket, not cumulative;
                                            * [n]: above every bound */
  uint64_t count;
  double sum;
} kf_metrics_hist;

/* Copies n ascending bounds (n <= KF_METRICS_MAX_BUCKETS); -1 when they
 * are not strictly ascending and finite or too many, else 0. */
int kf_metrics_hist_init(kf_metrics_hist *h, const double *le, size_t n);
void kf_metrics_hist_observe(kf_metrics_hist *h, double v);
/* name_bucket{labels,le="..."} cumulative counts, then name_sum and
 * name_count; labels may be NULL.  The family line is the caller's. */
void kf_metrics_hist_render(kf_metrics_buf *b, const char *name,
                            const char *labels, const kf_metrics_hist *h);

#endif
