/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_views.c -- read-only views for the dashboard's RPCs
 * (ListCampaigns, GetCampaignSeries): every campaign's progress in one
 * statement and per device class in a second, and a campaign's
 * evaluations as a time series with the measured ceilings of the devices
 * that ran them.
 *
 * Reads only, single statements, no transaction.  Rows come back as one
 * allocation (structs first, strings after them), like store_campaign.c.
 * The list's "best" is the highest speedup of any ok evaluation -- the
 * search's figure, cheap to aggregate over many campaigns; the ranked
 * best with the showdown's numbers stays kf_store_campaign_counts'.
 */
#include <libpq-fe.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "outcome.h"
#include "store_internal.h"
#include "util.h"

static int64_t i64(const PGresult *r, int row, int col) {
  if (PQgetisnull(r, row, col)) return 0;
  return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static double f64(const PGresult *r, int row, int col) {
  if (PQgetisnull(r, row, col)) return 0;
  return strtod(PQgetvalue(r, row, col), NULL);
}

static size_t cells_bytes(const PGresult *r) {
  size_t n = 0;
  for (int i = 0; i < PQntuples(r); i++)
    for (int j = 0; j < PQnfields(r); j++)
      n += (size_t)PQgetlength(r, i, j) + 1;
  return n;
}

static const char *put(char **cur, const PGresult *r, int row, int col) {
  char *d = *cur;
  size_t n = (size_t)PQgetlength(r, row, col);
  memcpy(d, PQgetvalue(r, row, col), n);
  d[n] = '\0';
  *cur = d + n + 1;
  return d;
}

static void itoa64(char *buf, size_t len, int64_t v) {
  snprintf(buf, len, "%lld", (long long)v);
}

static void dc_fill(kf_device_class *dc, const PGresult *r, int row,
                    int col) {
  dc->kind = (int)i64(r, row, col);
  snprintf(dc->model, sizeof dc->model, "%s", PQgetvalue(r, row, col + 1));
  dc->cc_major = (uint32_t)i64(r, row, col + 2);
  dc->cc_minor = (uint32_t)i64(r, row, col + 3);
  snprintf(dc->isa, sizeof dc->isa, "%s", PQgetvalue(r, row, col + 4));
}

/* ------------------------------------------------------- summaries -- */

static const kf_store__stmt ST_VIEW_CAMPAIGNS = {
    KF_STMT_VIEW_CAMPAIGNS,
    "SELECT c.id, c.name, c.problem, c.language, c.state,"
    " COALESCE(c.stop_reason, ''), c.showdown, c.backend, c.budget_evals,"
    " c.budget_seconds, c.fresh, c.showdown_top,"
    " (extract(epoch FROM COALESCE(c.finished_at, now()) - c.started_at)"
    "  * 1000)::bigint,"
    " e.n, e.ok, e.best, e.roof,"
    " (SELECT count(*) FROM tasks t WHERE t.campaign_id = c.id"
    "  AND t.kind = 'eval' AND t.state IN ('queued', 'leased'))"
    " FROM campaigns c"
    " LEFT JOIN LATERAL (SELECT count(*) AS n,"
    "  count(*) FILTER (WHERE outcome = 'ok') AS ok,"
    "  max(speedup) FILTER (WHERE outcome = 'ok') AS best,"
    "  max(roofline_fraction) FILTER (WHERE outcome = 'ok') AS roof"
    "  FROM evaluations WHERE campaign_id = c.id) e ON true"
    " WHERE ($2::bigint = 0 OR c.id < $2::bigint)"
    " ORDER BY c.id DESC LIMIT $1::bigint"};

static const kf_store__stmt ST_VIEW_CLASSES = {
    KF_STMT_VIEW_CLASSES,
    "SELECT e.campaign_id, d.kind, d.model, d.cc_major, d.cc_minor, d.isa,"
    " count(*), count(*) FILTER (WHERE e.outcome = 'ok'),"
    " max(e.speedup) FILTER (WHERE e.outcome = 'ok'),"
    " max(e.roofline_fraction) FILTER (WHERE e.outcome = 'ok'),"
    " min(e.time_ns_median) FILTER (WHERE e.outcome = 'ok')"
    " FROM evaluations e JOIN device_classes d ON d.id = e.device_class_id"
    " WHERE e.campaign_id = ANY ($1::bigint[])"
    " GROUP BY e.campaign_id, d.id ORDER BY e.campaign_id DESC, d.id"};

void kf_store_summaries_free(kf_campaign_summaries *l) { free(l); }

int kf_store_campaign_summaries(kf_store *s, uint32_t limit,
                                int64_t before_id,
                                kf_campaign_summaries **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24];
  itoa64(a, sizeof a, limit);
  itoa64(b, sizeof b, before_id);
  const char *p[] = {a, b};
  PGresult *r = NULL, *rc2 = NULL;
  if ((rc = kf_store__exec(s, &ST_VIEW_CAMPAIGNS, 2, p, false, &r))) return rc;
  int n = PQntuples(r);
  kf_store__buf ids = {0};
  kf_store__arr_open(&ids);
  for (int i = 0; i < n; i++) kf_store__arr_i64(&ids, i64(r, i, 0));
  kf_store__arr_close(&ids);
  if (ids.oom) {
    PQclear(r);
    kf_store__buf_free(&ids);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  const char *q[] = {ids.p};
  rc = kf_store__exec(s, &ST_VIEW_CLASSES, 1, q, false, &rc2);
  kf_store__buf_free(&ids);
  if (rc) {
    PQclear(r);
    return rc;
  }
  int nc = PQntuples(rc2);
  size_t head = sizeof(kf_campaign_summaries) +
                (size_t)n * sizeof(kf_campaign_summary) +
                (size_t)nc * sizeof(kf_class_progress);
  kf_campaign_summaries *l = calloc(1, head + cells_bytes(r));
  if (!l) {
    PQclear(r);
    PQclear(rc2);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  l->v = (kf_campaign_summary *)(l + 1);
  l->classes = (kf_class_progress *)(l->v + n);
  char *cur = (char *)l + head;
  for (int i = 0; i < n; i++) {
    kf_campaign_summary *c = &l->v[i];
    c->id = i64(r, i, 0);
    c->name = put(&cur, r, i, 1);
    c->problem = put(&cur, r, i, 2);
    c->language = put(&cur, r, i, 3);
    c->state = put(&cur, r, i, 4);
    c->stop_reason = put(&cur, r, i, 5);
    c->showdown = put(&cur, r, i, 6);
    c->backend = (int)i64(r, i, 7);
    c->budget_evals = (uint32_t)i64(r, i, 8);
    c->budget_seconds = (uint32_t)i64(r, i, 9);
    c->fresh = PQgetvalue(r, i, 10)[0] == 't';
    c->showdown_top = (uint32_t)i64(r, i, 11);
    int64_t el = i64(r, i, 12);
    c->elapsed_ms = el > 0 ? (uint64_t)el : 0;
    c->evals = (uint32_t)i64(r, i, 13);
    c->evals_ok = (uint32_t)i64(r, i, 14);
    c->best_speedup = f64(r, i, 15);
    c->best_roofline = f64(r, i, 16);
    c->outstanding = (uint32_t)i64(r, i, 17);
  }
  l->n = (size_t)n;
  for (int i = 0; i < nc; i++) {
    kf_class_progress *k = &l->classes[i];
    k->campaign_id = i64(rc2, i, 0);
    dc_fill(&k->dc, rc2, i, 1);
    k->evals = (uint32_t)i64(rc2, i, 6);
    k->evals_ok = (uint32_t)i64(rc2, i, 7);
    k->best_speedup = f64(rc2, i, 8);
    k->best_roofline = f64(rc2, i, 9);
    k->best_time_ns = f64(rc2, i, 10);
  }
  l->n_classes = (size_t)nc;
  PQclear(r);
  PQclear(rc2);
  *out = l;
  return 0;
}

/* ---------------------------------------------------------- series -- */

static const kf_store__stmt ST_VIEW_STARTED = {
    KF_STMT_VIEW_STARTED,
    "SELECT (extract(epoch FROM started_at) * 1000)::bigint"
    " FROM campaigns WHERE id = $1::bigint"};

/* A reused evaluation has no worker of its own: the ceilings are those of
 * the device that took the measurement it copies. */
static const kf_store__stmt ST_VIEW_SERIES = {
    KF_STMT_VIEW_SERIES,
    "SELECT e.candidate_id, COALESCE(e.task_id, 0), e.outcome::text,"
    " COALESCE(e.stage, ''), d.kind, d.model, d.cc_major, d.cc_minor, d.isa,"
    " (extract(epoch FROM e.created_at) * 1000)::bigint,"
    " e.time_ns_median, e.speedup, e.roofline_fraction, e.achieved_gbps,"
    " CASE WHEN jsonb_typeof(w.device->'copy_gbps') = 'number'"
    "  THEN (w.device->>'copy_gbps')::float8 END,"
    " CASE WHEN jsonb_typeof(w.device->'peak_gflops') = 'number'"
    "  THEN (w.device->>'peak_gflops')::float8 END"
    " FROM evaluations e JOIN device_classes d ON d.id = e.device_class_id"
    " LEFT JOIN evaluations o ON o.id = e.reused_from"
    " LEFT JOIN workers w ON w.id = COALESCE(e.worker_id, o.worker_id)"
    " WHERE e.campaign_id = $1::bigint ORDER BY e.id LIMIT $2::bigint"};

void kf_store_series_free(kf_eval_series *l) { free(l); }

int kf_store_eval_series(kf_store *s, int64_t campaign_id, uint32_t limit,
                         kf_eval_series **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24];
  itoa64(a, sizeof a, campaign_id);
  itoa64(b, sizeof b, limit);
  const char *p[] = {a, b};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_VIEW_STARTED, 1, p, false, &r))) return rc;
  if (PQntuples(r) == 0) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOTFOUND, "no campaign %lld",
                          (long long)campaign_id);
  }
  int64_t started = i64(r, 0, 0);
  PQclear(r);
  if ((rc = kf_store__exec(s, &ST_VIEW_SERIES, 2, p, false, &r))) return rc;
  int n = PQntuples(r);
  size_t head = sizeof(kf_eval_series) + (size_t)n * sizeof(kf_eval_point);
  kf_eval_series *l = calloc(1, head + cells_bytes(r));
  if (!l) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  l->v = (kf_eval_point *)(l + 1);
  l->started_at_ms = started;
  char *cur = (char *)l + head;
  for (int i = 0; i < n; i++) {
    kf_eval_point *e = &l->v[i];
    e->candidate_id = i64(r, i, 0);
    e->task_id = i64(r, i, 1);
    int oc = kf_outcome_parse(PQgetvalue(r, i, 2));
    e->outcome = oc > 0 ? oc : 0;
    e->stage = put(&cur, r, i, 3);
    dc_fill(&e->dc, r, i, 4);
    e->at_ms = i64(r, i, 9);
    e->time_ns_median = f64(r, i, 10);
    e->speedup = f64(r, i, 11);
    e->roofline_fraction = f64(r, i, 12);
    e->achieved_gbps = f64(r, i, 13);
    e->ceiling_gbps = f64(r, i, 14);
    e->peak_gflops = f64(r, i, 15);
  }
  l->n = (size_t)n;
  PQclear(r);
  *out = l;
  return 0;
}
