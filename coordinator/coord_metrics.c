/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/coord_metrics.c -- the coordinator's /metrics (Prometheus
 * text format), served on the loop thread (common/httpd.h).
 *
 * Two sources, both read on the loop:
 *  - what the loop itself counts (leases granted, lease calls, the lease
 *    latency histogram, parked polls, queued ops, batches): exact and live;
 *  - a snapshot of the store (tasks by state, workers, evaluations and
 *    campaign bests per device class), taken by a batch on the work
 *    thread (db/store_metrics.h) and handed back in after_batch like
 *    every other batch result.  Snapshots are taken every 2 s, and only
 *    while someone scraped in the last minute, so an unscraped endpoint
 *    costs the database nothing; the age of the one shown is a metric.
 *
 * Lease latency is what scripts/bench-coordinator measures: from the
 * LeaseTasks call reaching the loop to its answer, for answers that carry
 * tasks.  A worker's long poll that waits for work is counted in that
 * time; empty answers are only counted.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "err.h"
#include "httpd.h"
#include "log.h"
#include "util.h"

#define SNAPSHOT_EVERY_MS 2000
#define SCRAPED_RECENTLY_MS 60000

/* seconds: 1 ms .. 30 s, about x2.5 apart */
static const double LEASE_LE[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                  0.1,   0.25,   0.5,   1,    2.5,   5,
                                  10,    30};

void kf_coord__metrics_lease(kf_coord *co, const kf_coord_op *op, size_t n) {
  if (!n) {
    co->n_lease_empty++;
    return;
  }
  uint64_t now = kf_now_ns();
  double s = now > op->t0_ns ? (double)(now - op->t0_ns) / 1e9 : 0;
  kf_metrics_hist_observe(&co->lease_hist, s);
}

void kf_coord__metrics_cron(kf_coord *co, uint64_t now) {
  if (!co->httpd || co->want_metrics) return;
  if (now - co->last_scrape_ms >= SCRAPED_RECENTLY_MS) return;
  if (now - co->last_metrics_ms < SNAPSHOT_EVERY_MS) return;
  co->want_metrics = true;
  co->last_metrics_ms = now;
}

void kf_coord__metrics_took(kf_coord *co, int rc, kf_store_metrics *m,
                            const char *err) {
  if (rc) {
    co->n_msnap_fail++;
    kf_log(KF_LOG_WARN, "metrics snapshot: %s", err);
    return;
  }
  kf_store_metrics_free(&co->msnap);
  co->msnap = *m;
  memset(m, 0, sizeof *m);
  co->msnap_ok = true;
  co->msnap_ms = kf_now_ms();
}

static const kf_metrics_class *class_of(const kf_coord *co, int64_t id) {
  for (size_t i = 0; i < co->msnap.n_classes; i++)
    if (co->msnap.classes[i].id == id) return &co->msnap.classes[i];
  return NULL;
}

/* class_id, kind, model, arch: the labels every per-class series has. */
static const char *class_labels(char *out, size_t n, const kf_metrics_class *c,
                                const char *k2, const char *v2) {
  char id[24];
  snprintf(id, sizeof id, "%" PRId64, c->id);
  return kf_metrics_labels(out, n, "class_id", id, "kind", c->kind, "model",
                           c->model, "arch", c->arch, k2, v2, (char *)NULL);
}

static void render_loop(kf_coord *co, kf_metrics_buf *b) {
  kf_metrics_family(b, "kf_leases_granted_total", "counter",
                    "Tasks handed to workers by this coordinator process.");
  kf_metrics_sample(b, "kf_leases_granted_total", NULL, (double)co->n_leased);
  kf_metrics_family(b, "kf_lease_calls_total", "counter",
                    "LeaseTasks calls answered, with tasks or empty.");
  kf_metrics_sample(b, "kf_lease_calls_total", "result=\"tasks\"",
                    (double)co->lease_hist.count);
  kf_metrics_sample(b, "kf_lease_calls_total", "result=\"empty\"",
                    (double)co->n_lease_empty);
  kf_metrics_family(b, "kf_lease_latency_seconds", "histogram",
                    "From a LeaseTasks call reaching the coordinator's loop "
                    "to its answer, for answers that carry tasks (a long "
                    "poll's wait for work included).");
  kf_metrics_hist_render(b, "kf_lease_latency_seconds", NULL, &co->lease_hist);
  kf_metrics_family(b, "kf_reports_accepted_total", "counter",
                    "Task results accepted by this coordinator process.");
  kf_metrics_sample(b, "kf_reports_accepted_total", NULL,
                    (double)co->n_reported);
  size_t parked = 0;
  for (kf_coord_op *op = co->parked; op; op = op->next) parked++;
  kf_metrics_family(b, "kf_lease_polls_parked", "gauge",
                    "LeaseTasks long polls waiting for work.");
  kf_metrics_sample(b, "kf_lease_polls_parked", NULL, (double)parked);
  kf_metrics_family(b, "kf_coordinator_ops", "gauge",
                    "Calls waiting for the database or parked (capped by "
                    "--max-queued-ops).");
  kf_metrics_sample(b, "kf_coordinator_ops", NULL, (double)co->n_ops);
  kf_metrics_family(b, "kf_coordinator_batches_total", "counter",
                    "Database batches run.");
  kf_metrics_sample(b, "kf_coordinator_batches_total", NULL,
                    (double)co->n_batches);
  kf_metrics_family(b, "kf_coordinator_workers_known", "gauge",
                    "Workers in this process's registry (registered or seen "
                    "since it started).");
  kf_metrics_sample(b, "kf_coordinator_workers_known", NULL,
                    (double)co->workers_len);
}

static void render_store(kf_coord *co, kf_metrics_buf *b) {
  const kf_store_metrics *m = &co->msnap;
  char l[640];
  kf_metrics_family(b, "kf_metrics_snapshot_age_seconds", "gauge",
                    "Age of the database snapshot behind the kf_tasks, "
                    "kf_workers, kf_evaluations and kf_campaign series; -1 "
                    "before the first.");
  kf_metrics_sample(b, "kf_metrics_snapshot_age_seconds", NULL,
                    co->msnap_ok ? (double)(kf_now_ms() - co->msnap_ms) / 1e3
                                 : -1);
  kf_metrics_family(b, "kf_metrics_snapshot_failures_total", "counter",
                    "Database snapshots that failed (the last good one stays).");
  kf_metrics_sample(b, "kf_metrics_snapshot_failures_total", NULL,
                    (double)co->n_msnap_fail);
  if (!co->msnap_ok) return;

  kf_metrics_family(b, "kf_tasks", "gauge", "Tasks by state.");
  const struct { const char *st; uint64_t n; } ts[] = {
      {"queued", m->tasks.queued}, {"leased", m->tasks.leased},
      {"done", m->tasks.done}, {"failed", m->tasks.failed}};
  for (size_t i = 0; i < 4; i++)
    kf_metrics_sample(b, "kf_tasks",
                      kf_metrics_labels(l, sizeof l, "state", ts[i].st,
                                        (char *)NULL),
                      (double)ts[i].n);
  kf_metrics_family(b, "kf_leases_active", "gauge",
                    "Tasks leased to a worker now (kf_tasks{state=\"leased\"}).");
  kf_metrics_sample(b, "kf_leases_active", NULL, (double)m->tasks.leased);
  kf_metrics_family(b, "kf_leases_expired", "gauge",
                    "Leases past their expiry that the reaper has not "
                    "requeued yet.");
  kf_metrics_sample(b, "kf_leases_expired", NULL, (double)m->leases_expired);

  kf_metrics_family(b, "kf_campaigns", "gauge", "Campaigns by state.");
  const struct { const char *st; uint64_t n; } cs[] = {
      {"running", m->campaigns_running}, {"showdown", m->campaigns_showdown},
      {"done", m->campaigns_done}, {"failed", m->campaigns_failed},
      {"stopped", m->campaigns_stopped}};
  for (size_t i = 0; i < 5; i++)
    kf_metrics_sample(b, "kf_campaigns",
                      kf_metrics_labels(l, sizeof l, "state", cs[i].st,
                                        (char *)NULL),
                      (double)cs[i].n);

  kf_metrics_family(b, "kf_workers_alive", "gauge",
                    "Workers seen in the last 3 heartbeat intervals + 1 s, "
                    "by device class.");
  for (size_t i = 0; i < m->n_classes; i++)
    kf_metrics_sample(b, "kf_workers_alive",
                      class_labels(l, sizeof l, &m->classes[i], NULL, NULL),
                      (double)m->classes[i].workers_alive);
  kf_metrics_family(b, "kf_workers_registered", "gauge",
                    "Worker registrations ever stored, by device class.");
  for (size_t i = 0; i < m->n_classes; i++)
    kf_metrics_sample(b, "kf_workers_registered",
                      class_labels(l, sizeof l, &m->classes[i], NULL, NULL),
                      (double)m->classes[i].workers_registered);
  kf_metrics_family(b, "kf_evaluations_total", "counter",
                    "Evaluations measured (reuses of an earlier measurement "
                    "not counted), by device class.");
  for (size_t i = 0; i < m->n_classes; i++)
    kf_metrics_sample(b, "kf_evaluations_total",
                      class_labels(l, sizeof l, &m->classes[i], NULL, NULL),
                      (double)m->classes[i].evals_total);
  kf_metrics_family(b, "kf_evaluations_per_minute", "gauge",
                    "Evaluations measured in the last 60 s, by device class.");
  for (size_t i = 0; i < m->n_classes; i++)
    kf_metrics_sample(b, "kf_evaluations_per_minute",
                      class_labels(l, sizeof l, &m->classes[i], NULL, NULL),
                      (double)m->classes[i].evals_last_min);

  /* Per campaign and class, the 50 most recent campaigns. */
  static const struct {
    const char *name, *type, *help;
  } cf[] = {
      {"kf_campaign_evaluations", "gauge",
       "Evaluations of a campaign on a device class (any outcome)."},
      {"kf_campaign_evaluations_ok", "gauge",
       "Evaluations of a campaign on a device class that verified and timed."},
      {"kf_campaign_best_time_seconds", "gauge",
       "Fastest verified median time so far of a campaign on a device class "
       "(before its showdown); absent until one verified."},
      {"kf_campaign_best_speedup", "gauge",
       "Largest verified speedup over the reference so far, per campaign and "
       "device class."},
      {"kf_campaign_best_roofline_fraction", "gauge",
       "Largest verified fraction of the roofline floor so far, per campaign "
       "and device class."},
  };
  for (size_t f = 0; f < sizeof cf / sizeof cf[0]; f++) {
    kf_metrics_family(b, cf[f].name, cf[f].type, cf[f].help);
    for (size_t i = 0; i < m->n_camps; i++) {
      const kf_metrics_campaign *c = &m->camps[i];
      double v = f == 0 ? (double)c->evals : f == 1 ? (double)c->evals_ok
               : f == 2 ? c->best_time_s : f == 3 ? c->best_speedup
                        : c->best_roofline;
      if (f >= 2 && v <= 0) continue;
      const kf_metrics_class *k = class_of(co, c->class_id);
      kf_metrics_class unknown = {.id = c->class_id};
      char id[24];
      snprintf(id, sizeof id, "%" PRId64, c->campaign_id);
      char cl[512];
      class_labels(cl, sizeof cl, k ? k : &unknown, "problem", c->problem);
      snprintf(l, sizeof l, "campaign=\"%s\",%s", id, cl);
      kf_metrics_sample(b, cf[f].name, l, v);
    }
  }
}

static int render(void *data, kf_metrics_buf *b) {
  kf_coord *co = data;
  uint64_t now = kf_now_ms();
  /* The first scrape after a quiet minute asks for a snapshot now rather
   * than at the next cron tick. */
  if (now - co->last_scrape_ms >= SCRAPED_RECENTLY_MS && !co->stopping) {
    co->want_metrics = true;
    co->last_metrics_ms = now;
    kf_coord__kick(co);
  }
  co->last_scrape_ms = now;
  render_loop(co, b);
  render_store(co, b);
  return 0;
}

int kf_coord__metrics_start(kf_coord *co) {
  if (kf_metrics_hist_init(&co->lease_hist, LEASE_LE,
                           sizeof LEASE_LE / sizeof LEASE_LE[0]))
    return KF_EINTERNAL;
  char err[512];
  int port = 0;
  int rc = kf_httpd_start(co->loop, co->cfg.metrics_listen, render, co,
                          &co->httpd, &port, err, sizeof err);
  if (rc) {
    kf_log(KF_LOG_FATAL, "%s", err);
    return rc;
  }
  kf_log(KF_LOG_INFO, "metrics on %s (port %d): GET /metrics",
         co->cfg.metrics_listen, port);
  if (co->cfg.metrics_port_file) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s.tmp", co->cfg.metrics_port_file);
    FILE *f = fopen(tmp, "w");
    bool ok = f && fprintf(f, "%d\n", port) >= 0;
    if (f && fclose(f) != 0) ok = false;
    if (!ok || rename(tmp, co->cfg.metrics_port_file) != 0) {
      kf_log(KF_LOG_FATAL, "cannot write metrics port file %s",
             co->cfg.metrics_port_file);
      kf_coord__metrics_stop(co);
      return KF_EIO;
    }
  }
  return 0;
}

void kf_coord__metrics_stop(kf_coord *co) {
  kf_httpd_stop(co->httpd);
  co->httpd = NULL;
}
