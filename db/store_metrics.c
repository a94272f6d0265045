/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_metrics.c -- the read-only queries behind /metrics
 * (store_metrics.h).
 *
 * Unprepared statements (kf_store__pq_params): they run at most every
 * couple of seconds, and keeping them out of the prepared-statement table
 * keeps this module separate from the scheduling paths.  Every value is
 * read as text and parsed; a NULL aggregate (no ok evaluation) is 0.
 */
#include "store_metrics.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store_internal.h"
#include "util.h"

static int fail(kf_store *s, PGresult *r, const char *what) {
  int rc = PQstatus(s->conn) == CONNECTION_OK ? KF_EDB : KF_EUNAVAIL;
  const char *msg = r ? PQresultErrorMessage(r) : PQerrorMessage(s->conn);
  kf_store__fail(s, rc, "metrics: %s: %s", what, msg && *msg ? msg
                 : s->timed_out ? "no answer in time" : "connection lost");
  if (r) PQclear(r);
  return rc;
}

static PGresult *query(kf_store *s, const char *sql, int n,
                       const char *const *p, const char *what, int *rc) {
  PGresult *r = kf_store__pq_params(s, sql, n, p);
  ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
    *rc = fail(s, r, what);
    return NULL;
  }
  return r;
}

static uint64_t u64(PGresult *r, int row, int col) {
  if (PQgetisnull(r, row, col)) return 0;
  return strtoull(PQgetvalue(r, row, col), NULL, 10);
}

static double f64(PGresult *r, int row, int col) {
  if (PQgetisnull(r, row, col)) return 0;
  return strtod(PQgetvalue(r, row, col), NULL);
}

static const char SQL_TASKS[] =
    "SELECT count(*) FILTER (WHERE state = 'queued'),"
    " count(*) FILTER (WHERE state = 'leased'),"
    " count(*) FILTER (WHERE state = 'done'),"
    " count(*) FILTER (WHERE state = 'failed'),"
    " count(*) FILTER (WHERE state = 'leased' AND lease_expires < now())"
    " FROM tasks";

static const char SQL_CAMPAIGNS[] =
    "SELECT count(*) FILTER (WHERE state = 'running'),"
    " count(*) FILTER (WHERE state = 'showdown'),"
    " count(*) FILTER (WHERE state = 'done'),"
    " count(*) FILTER (WHERE state = 'failed'),"
    " count(*) FILTER (WHERE state = 'stopped') FROM campaigns";

/* The last minute without a time index: the newest 100000 evaluation ids
 * (the primary key) bound the scan; more than that per minute is counted
 * as 100000. */
static const char SQL_CLASSES[] =
    "WITH recent AS (SELECT device_class_id, count(*) AS n FROM evaluations"
    "   WHERE id > (SELECT coalesce(max(id), 0) - 100000 FROM evaluations)"
    "     AND reused_from IS NULL"
    "     AND created_at > now() - interval '60 seconds'"
    "   GROUP BY 1),"
    " total AS (SELECT device_class_id, count(*) AS n FROM evaluations"
    "   WHERE reused_from IS NULL GROUP BY 1),"
    " w AS (SELECT device_class_id, count(*) AS n,"
    "   count(*) FILTER (WHERE last_seen > now() - $1::bigint *"
    "     interval '1 ms') AS alive FROM workers GROUP BY 1)"
    " SELECT dc.id, CASE dc.kind WHEN 1 THEN 'cpu' ELSE 'cuda' END,"
    "  dc.model, CASE WHEN dc.kind = 2 THEN 'sm_' || dc.cc_major ||"
    "  dc.cc_minor ELSE dc.isa END,"
    "  coalesce(w.alive, 0), coalesce(w.n, 0), coalesce(total.n, 0),"
    "  coalesce(recent.n, 0)"
    " FROM device_classes dc LEFT JOIN w ON w.device_class_id = dc.id"
    " LEFT JOIN total ON total.device_class_id = dc.id"
    " LEFT JOIN recent ON recent.device_class_id = dc.id ORDER BY dc.id";

static const char SQL_BEST[] =
    "SELECT c.id, c.problem, c.state, e.device_class_id, count(*),"
    " count(*) FILTER (WHERE e.outcome = 'ok'),"
    " min(e.time_ns_median) FILTER (WHERE e.outcome = 'ok'"
    "   AND e.time_ns_median > 0) / 1e9,"
    " max(e.speedup) FILTER (WHERE e.outcome = 'ok'),"
    " max(e.roofline_fraction) FILTER (WHERE e.outcome = 'ok')"
    " FROM (SELECT id, problem, state FROM campaigns ORDER BY id DESC"
    "       LIMIT $1::int) c"
    " JOIN evaluations e ON e.campaign_id = c.id"
    " GROUP BY c.id, c.problem, c.state, e.device_class_id"
    " ORDER BY c.id, e.device_class_id";

void kf_store_metrics_free(kf_store_metrics *m) {
  if (!m) return;
  free(m->classes);
  free(m->camps);
  memset(m, 0, sizeof *m);
}

static int read_all(kf_store *s, uint32_t alive_ms, uint32_t max_campaigns,
                    kf_store_metrics *m) {
  int rc = 0;
  PGresult *r = query(s, SQL_TASKS, 0, NULL, "task counts", &rc);
  if (!r) return rc;
  m->tasks.queued = u64(r, 0, 0);
  m->tasks.leased = u64(r, 0, 1);
  m->tasks.done = u64(r, 0, 2);
  m->tasks.failed = u64(r, 0, 3);
  m->leases_expired = u64(r, 0, 4);
  PQclear(r);

  if (!(r = query(s, SQL_CAMPAIGNS, 0, NULL, "campaign counts", &rc)))
    return rc;
  m->campaigns_running = u64(r, 0, 0);
  m->campaigns_showdown = u64(r, 0, 1);
  m->campaigns_done = u64(r, 0, 2);
  m->campaigns_failed = u64(r, 0, 3);
  m->campaigns_stopped = u64(r, 0, 4);
  PQclear(r);

  char alive[24], maxc[24];
  snprintf(alive, sizeof alive, "%u", alive_ms);
  snprintf(maxc, sizeof maxc, "%u", max_campaigns);
  const char *p1[] = {alive};
  if (!(r = query(s, SQL_CLASSES, 1, p1, "device classes", &rc))) return rc;
  int n = PQntuples(r);
  m->classes = calloc(n ? (size_t)n : 1, sizeof *m->classes);
  if (!m->classes) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOMEM, "metrics: out of memory");
  }
  for (int i = 0; i < n; i++) {
    kf_metrics_class *c = &m->classes[i];
    c->id = (int64_t)u64(r, i, 0);
    kf_strlcpy(c->kind, PQgetvalue(r, i, 1), sizeof c->kind);
    kf_strlcpy(c->model, PQgetvalue(r, i, 2), sizeof c->model);
    kf_strlcpy(c->arch, PQgetvalue(r, i, 3), sizeof c->arch);
    c->workers_alive = u64(r, i, 4);
    c->workers_registered = u64(r, i, 5);
    c->evals_total = u64(r, i, 6);
    c->evals_last_min = u64(r, i, 7);
  }
  m->n_classes = (size_t)n;
  PQclear(r);

  const char *p2[] = {maxc};
  if (!(r = query(s, SQL_BEST, 1, p2, "campaign bests", &rc))) return rc;
  n = PQntuples(r);
  m->camps = calloc(n ? (size_t)n : 1, sizeof *m->camps);
  if (!m->camps) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOMEM, "metrics: out of memory");
  }
  for (int i = 0; i < n; i++) {
    kf_metrics_campaign *c = &m->camps[i];
    c->campaign_id = (int64_t)u64(r, i, 0);
    kf_strlcpy(c->problem, PQgetvalue(r, i, 1), sizeof c->problem);
    kf_strlcpy(c->state, PQgetvalue(r, i, 2), sizeof c->state);
    c->class_id = (int64_t)u64(r, i, 3);
    c->evals = u64(r, i, 4);
    c->evals_ok = u64(r, i, 5);
    c->best_time_s = f64(r, i, 6);
    c->best_speedup = f64(r, i, 7);
    c->best_roofline = f64(r, i, 8);
  }
  m->n_camps = (size_t)n;
  PQclear(r);
  return 0;
}

int kf_store_metrics_read(kf_store *s, uint32_t alive_ms,
                          uint32_t max_campaigns, kf_store_metrics *out) {
  memset(out, 0, sizeof *out);
  int rc = kf_store__ready(s);
  if (rc) return rc;
  PGresult *r = query(s, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
                      0, NULL, "begin", &rc);
  if (!r) return rc;
  PQclear(r);
  rc = read_all(s, alive_ms, max_campaigns, out);
  if (rc) {
    kf_store_metrics_free(out);
    return kf_store__rollback(s, rc);
  }
  /* Nothing was written: a failed COMMIT loses nothing but the snapshot. */
  if ((rc = kf_store__commit(s))) kf_store_metrics_free(out);
  return rc;
}
