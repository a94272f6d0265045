/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_metrics.h -- read-only counts for the coordinator's /metrics:
 * tasks by state, workers and evaluations per device class, and the best
 * measurement of recent campaigns per class.
 *
 * One call reads everything in one READ ONLY, REPEATABLE READ transaction,
 * so the numbers of one snapshot agree with each other.  Blocks like every
 * store call: the coordinator runs it inside a batch, on its work thread.
 * Cost: a count over tasks and over measured evaluations per class (full
 * scans), plus index range scans for the last minute and the recent
 * campaigns; the coordinator runs it at most every 2 s and only while
 * someone scrapes (docs: infra/README.md, Metrics).
 */
#ifndef KF_STORE_METRICS_H
#define KF_STORE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

typedef struct {
  int64_t id;
  char kind[8];     /* "cpu", "cuda" */
  char model[128];
  char arch[32];    /* cuda: "sm_90"; cpu: its isa */
  uint64_t workers_alive; /* last seen within alive_ms */
  uint64_t workers_registered;
  uint64_t evals_total;     /* measured evaluations (not reuses), all time */
  uint64_t evals_last_min;  /* measured evaluations stored in the last 60 s */
} kf_metrics_class;

typedef struct {
  int64_t campaign_id;
  char problem[128];
  char state[16];
  int64_t class_id;       /* index into the snapshot's classes by id */
  uint64_t evals;         /* evaluations of this campaign on this class */
  uint64_t evals_ok;
  double best_time_s;     /* fastest ok median, seconds; 0: none */
  double best_speedup;    /* largest ok speedup over the reference; 0: none */
  double best_roofline;   /* largest ok roofline fraction; 0: none */
} kf_metrics_campaign;

typedef struct {
  kf_task_counts tasks;
  uint64_t leases_expired;   /* leased tasks past lease_expires (the
                              * reaper has not requeued them yet) */
  uint64_t campaigns_running, campaigns_showdown, campaigns_done,
      campaigns_failed, campaigns_stopped;
  kf_metrics_class *classes;
  size_t n_classes;
  kf_metrics_campaign *camps;
  size_t n_camps;
} kf_store_metrics;

/* Fills *out (zeroed first; free with kf_store_metrics_free).  alive_ms:
 * how recent a worker's last_seen must be to count as alive; max_campaigns:
 * how many of the most recent campaigns (by id) get best-so-far rows.
 * 0 or KF_EUNAVAIL / KF_EDB / KF_ENOMEM with the text in the store. */
int kf_store_metrics_read(kf_store *s, uint32_t alive_ms,
                          uint32_t max_campaigns, kf_store_metrics *out);
void kf_store_metrics_free(kf_store_metrics *m);

#endif
