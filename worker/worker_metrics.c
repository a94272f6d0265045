/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/worker_metrics.c -- renders kf_worker_stats as Prometheus text
 * (worker_metrics.h).  Every series carries the worker's device class
 * labels (kind, model, arch) so a fleet's workers aggregate by class.
 */
#include "worker_metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "httpd.h"
#include "outcome.h"
#include "util.h"

/* seconds: 1 ms .. 60 s (a long poll waits up to --lease-wait-ms) */
static const double LEASE_LE[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                  0.1,   0.25,   0.5,   1,    2.5,   5,
                                  10,    30,     60};
/* seconds: a checksum task takes ms, an eval seconds to minutes */
static const double TASK_LE[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1,   2.5,
                                 5,    10,   20,  40,   80,  160, 320};

void kf_worker_stats_init(kf_worker_stats *st, const char *name,
                          const kf_device *dev, uint32_t slots) {
  memset(st, 0, sizeof *st);
  st->name = name;
  st->dev = dev;
  st->slots = slots;
  (void)kf_metrics_hist_init(&st->lease_hist, LEASE_LE,
                             sizeof LEASE_LE / sizeof LEASE_LE[0]);
  (void)kf_metrics_hist_init(&st->task_hist, TASK_LE,
                             sizeof TASK_LE / sizeof TASK_LE[0]);
}

void kf_worker_stats_task(kf_worker_stats *st, const char *kind, int outcome,
                          double run_s) {
  size_t k = 0;
  while (k < KF_WSTATS_KINDS && st->kinds[k][0] &&
         strcmp(st->kinds[k], kind ? kind : ""))
    k++;
  if (k < KF_WSTATS_KINDS && !st->kinds[k][0])
    kf_strlcpy(st->kinds[k], kind && *kind ? kind : "unknown",
               sizeof st->kinds[k]);
  if (outcome < 0 || outcome >= KF_WSTATS_OUTCOMES) outcome = 0;
  st->by_kind[k][outcome]++;
  kf_metrics_hist_observe(&st->task_hist, run_s);
}

static int render(void *data, kf_metrics_buf *b) {
  kf_worker_stats *st = data;
  const kf_device *d = st->dev;
  const char *kind = d->cuda_index >= 0 ? "cuda" : "cpu";
  char id[24], cls[400], l[600];
  snprintf(id, sizeof id, "%" PRId64, st->worker_id);
  kf_metrics_labels(cls, sizeof cls, "kind", kind, "model", d->model, "arch",
                    d->isa, (char *)NULL);

  kf_metrics_family(b, "kf_worker_info", "gauge",
                    "This worker: its name, id (0 until registered) and "
                    "device class; always 1.");
  snprintf(l, sizeof l, "%s,", cls);
  size_t n = strlen(l);
  kf_metrics_labels(l + n, sizeof l - n, "name", st->name, "worker_id", id,
                    (char *)NULL);
  kf_metrics_sample(b, "kf_worker_info", l, 1);
  kf_metrics_family(b, "kf_worker_slots", "gauge", "Tasks it runs at once.");
  kf_metrics_sample(b, "kf_worker_slots", cls, st->slots);
  kf_metrics_family(b, "kf_worker_slots_busy", "gauge", "Tasks running now.");
  kf_metrics_sample(b, "kf_worker_slots_busy", cls, *st->running);
  kf_metrics_family(b, "kf_worker_outbox", "gauge",
                    "Results finished but not yet sent to the coordinator.");
  kf_metrics_sample(b, "kf_worker_outbox", cls, (double)*st->outbox);
  kf_metrics_family(b, "kf_worker_registrations_total", "counter",
                    "Registrations with the coordinator (more than one: it "
                    "forgot this worker, e.g. after a restart).");
  kf_metrics_sample(b, "kf_worker_registrations_total", cls,
                    (double)st->registrations);
  kf_metrics_family(b, "kf_worker_leases_total", "counter",
                    "Tasks leased by this worker.");
  kf_metrics_sample(b, "kf_worker_leases_total", cls,
                    (double)st->tasks_leased);
  kf_metrics_family(b, "kf_worker_lease_calls_total", "counter",
                    "LeaseTasks calls answered, with tasks or empty.");
  snprintf(l, sizeof l, "%s,result=\"tasks\"", cls);
  kf_metrics_sample(b, "kf_worker_lease_calls_total", l,
                    (double)st->lease_hist.count);
  snprintf(l, sizeof l, "%s,result=\"empty\"", cls);
  kf_metrics_sample(b, "kf_worker_lease_calls_total", l,
                    (double)st->lease_empty);
  kf_metrics_family(b, "kf_worker_lease_latency_seconds", "histogram",
                    "LeaseTasks round trip for answers that carry tasks "
                    "(the long poll's wait for work included).");
  kf_metrics_hist_render(b, "kf_worker_lease_latency_seconds", cls,
                         &st->lease_hist);
  kf_metrics_family(b, "kf_worker_tasks_total", "counter",
                    "Tasks this worker finished, by kind and outcome.");
  for (size_t k = 0; k <= KF_WSTATS_KINDS; k++) {
    const char *kname = k < KF_WSTATS_KINDS ? st->kinds[k] : "other";
    for (int o = 0; o < KF_WSTATS_OUTCOMES; o++) {
      if (!st->by_kind[k][o]) continue;
      const char *on = kf_outcome_name(o);
      snprintf(l, sizeof l, "%s,", cls);
      n = strlen(l);
      kf_metrics_labels(l + n, sizeof l - n, "task_kind", kname, "outcome",
                        on ? on : "unspecified", (char *)NULL);
      kf_metrics_sample(b, "kf_worker_tasks_total", l,
                        (double)st->by_kind[k][o]);
    }
  }
  kf_metrics_family(b, "kf_worker_task_duration_seconds", "histogram",
                    "Run time of the tasks this worker finished.");
  kf_metrics_hist_render(b, "kf_worker_task_duration_seconds", cls,
                         &st->task_hist);
  kf_metrics_family(b, "kf_worker_results_delivered_total", "counter",
                    "Results the coordinator accepted (or already had).");
  kf_metrics_sample(b, "kf_worker_results_delivered_total", cls,
                    (double)*st->delivered);
  kf_metrics_family(b, "kf_worker_results_refused_total", "counter",
                    "Results dropped: the coordinator refused them as "
                    "invalid or could never take them.");
  kf_metrics_sample(b, "kf_worker_results_refused_total", cls,
                    (double)*st->refused);
  return 0;
}

int kf_worker_metrics_start(uv_loop_t *loop, const char *addr,
                            kf_worker_stats *st, struct kf_httpd **out,
                            int *port, char *err, size_t errlen) {
  return kf_httpd_start(loop, addr, render, st, out, port, err, errlen);
}
