/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/worker_metrics.h -- the worker's /metrics (Prometheus text
 * format): what this worker leased, ran and delivered.
 *
 * The counters live in the worker's struct and are updated on its loop;
 * the endpoint (common/httpd.h) renders them on the same loop, so nothing
 * is shared across threads.  Off unless --metrics-listen is given.
 */
#ifndef KF_WORKER_METRICS_H
#define KF_WORKER_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "device.h"
#include "metrics.h"

#define KF_WSTATS_KINDS 8  /* task kinds counted apart; more: "other" */
#define KF_WSTATS_OUTCOMES 16

typedef struct {
  /* identity, set once */
  const char *name;
  const kf_device *dev;
  uint32_t slots;
  /* loop-owned counters and gauges, kept by worker.c */
  int64_t worker_id;       /* 0 until registered */
  const uint32_t *running; /* tasks executing (the worker's own count) */
  const size_t *outbox;    /* results not yet sent */
  const uint64_t *delivered; /* results the coordinator accepted (or had) */
  const uint64_t *refused;   /* results dropped as undeliverable */
  uint64_t tasks_leased;   /* tasks received from LeaseTasks */
  uint64_t lease_empty;    /* LeaseTasks answered with no task */
  uint64_t registrations;
  kf_metrics_hist lease_hist; /* LeaseTasks round trip, answers with tasks */
  kf_metrics_hist task_hist;  /* task run time, seconds */
  char kinds[KF_WSTATS_KINDS][32];
  uint64_t by_kind[KF_WSTATS_KINDS + 1][KF_WSTATS_OUTCOMES];
} kf_worker_stats;

/* Zeroes st and sets up its histograms. */
void kf_worker_stats_init(kf_worker_stats *st, const char *name,
                          const kf_device *dev, uint32_t slots);
/* One task finished on this worker with outcome after run_s seconds. */
void kf_worker_stats_task(kf_worker_stats *st, const char *kind, int outcome,
                          double run_s);

struct kf_httpd;
/* Serves st on addr (common/httpd.h); 0 or KF_E* with text in err.
 * *port: the bound port. */
int kf_worker_metrics_start(uv_loop_t *loop, const char *addr,
                            kf_worker_stats *st, struct kf_httpd **out,
                            int *port, char *err, size_t errlen);

#endif
