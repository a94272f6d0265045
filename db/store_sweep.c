/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_sweep.c -- sweeps (store_sweep.h, migration 0010).
 *
 * Unprepared statements (kf_store__pq_params), as in store_metrics.c: a
 * sweep is written a handful of times per run, and keeping it out of the
 * prepared-statement table keeps this module apart from the scheduling
 * paths.  Writes of several statements are one transaction.
 */
#include "store_sweep.h"

#include <libpq-fe.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store_internal.h"
#include "util.h"

static int fail(kf_store *s, PGresult *r, const char *what) {
  int rc = PQstatus(s->conn) == CONNECTION_OK ? KF_EDB : KF_EUNAVAIL;
  const char *msg = r ? PQresultErrorMessage(r) : PQerrorMessage(s->conn);
  kf_store__fail(s, rc, "sweep: %s: %s", what, msg && *msg ? msg
                 : s->timed_out ? "no answer in time" : "connection lost");
  if (r) PQclear(r);
  return rc;
}

/* The statement's result, or NULL with *rc set (and the reason stored). */
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

/* A statement whose result is not needed; 0 or the code. */
static int run(kf_store *s, const char *sql, int n, const char *const *p,
               const char *what) {
  int rc = 0;
  PGresult *r = query(s, sql, n, p, what, &rc);
  if (r) PQclear(r);
  return rc;
}

static int64_t i64(const PGresult *r, int row, int col) {
  return PQgetisnull(r, row, col) ? 0
                                  : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static double f64(const PGresult *r, int row, int col) {
  return PQgetisnull(r, row, col) ? 0 : strtod(PQgetvalue(r, row, col), NULL);
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

/* ------------------------------------------------------------ open -- */

/* Inside open's transaction. */
static int bind_class(kf_store *s, int64_t sweep, const kf_sweep_bind *b) {
  const char *label = b->label, *model = b->model;
  int64_t device_class_id = b->device_class_id;
  double ceiling_gbps = b->ceiling_gbps;
  int rc = 0;
  char ids[24], dc[24], ceil[40];
  snprintf(ids, sizeof ids, "%" PRId64, sweep);
  snprintf(dc, sizeof dc, "%" PRId64, device_class_id);
  snprintf(ceil, sizeof ceil, "%.17g", ceiling_gbps);
  const char *p[] = {ids, label, model, dc, ceiling_gbps > 0 ? ceil : NULL};
  /* The row's model as it is after the statement: ours when it was
   * unbound, the earlier one otherwise (then nothing is written). */
  PGresult *r = query(
      s,
      "WITH u AS (UPDATE sweep_classes SET model = COALESCE(model, $3),"
      "  device_class_id = COALESCE(device_class_id, $4::bigint),"
      "  ceiling_gbps = COALESCE($5::float8, ceiling_gbps)"
      "  WHERE sweep_id = $1::bigint AND label = $2"
      "  AND (model IS NULL OR (model = $3 AND device_class_id = $4::bigint))"
      "  RETURNING model)"
      " SELECT (SELECT model FROM u),"
      " (SELECT model FROM sweep_classes WHERE sweep_id = $1::bigint"
      "  AND label = $2)",
      5, p, "binding a class", &rc);
  if (!r) return rc;
  bool ok = !PQgetisnull(r, 0, 0);
  if (!ok && PQgetisnull(r, 0, 1))
    rc = kf_store__fail(s, KF_ENOTFOUND, "sweep %" PRId64 " has no class"
                        " '%.127s'", sweep, label);
  else if (!ok && strcmp(PQgetvalue(r, 0, 1), model) != 0)
    rc = kf_store__fail(s, KF_EINVAL, "sweep %" PRId64 ": class '%.127s' ran"
                        " on '%.127s' before; these workers are '%.127s' (give"
                        " them another --class)", sweep, label,
                        PQgetvalue(r, 0, 1), model);
  else if (!ok)
    rc = kf_store__fail(s, KF_EINVAL, "sweep %" PRId64 ": class '%.127s' ran"
                        " on another '%.127s' before (another compute "
                        "capability or ISA level); give these workers another"
                        " --class", sweep, label, model);
  PQclear(r);
  return rc;
}


int kf_store_sweep_open(kf_store *s, const char *name, int backend,
                        const char *const *problems, size_t np,
                        const char *const *labels, size_t nl, bool create,
                        const kf_sweep_bind *bind, int64_t *id,
                        bool *created) {
  *id = 0;
  if (created) *created = false;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if ((rc = kf_store__begin(s))) return rc;
  const char *p1[] = {name};
  PGresult *r = query(s, "SELECT id, backend FROM sweeps WHERE name = $1"
                      " FOR UPDATE", 1, p1, "find", &rc);
  if (!r) return kf_store__rollback(s, rc);
  char bk[8], ids[24];
  snprintf(bk, sizeof bk, "%d", backend);
  if (PQntuples(r) == 1) {
    *id = i64(r, 0, 0);
    int have = (int)i64(r, 0, 1);
    PQclear(r);
    if (have != backend) {
      kf_store__rollback(s, 0);
      return kf_store__fail(s, KF_EINVAL, "sweep '%.127s' runs %s problems;"
                            " these are %s problems", name,
                            have == 2 ? "cuda" : "cpu",
                            backend == 2 ? "cuda" : "cpu");
    }
  } else {
    PQclear(r);
    if (!create) {
      kf_store__rollback(s, 0);
      return kf_store__fail(s, KF_ENOTFOUND, "no sweep named '%.127s'", name);
    }
    const char *p2[] = {name, bk};
    r = query(s, "INSERT INTO sweeps (name, backend) VALUES ($1, $2::smallint)"
              " RETURNING id", 2, p2, "create", &rc);
    if (!r) return kf_store__rollback(s, rc);
    *id = i64(r, 0, 0);
    PQclear(r);
    if (created) *created = true;
  }
  snprintf(ids, sizeof ids, "%" PRId64, *id);
  for (size_t i = 0; i < np && !rc; i++) {
    const char *p[] = {ids, problems[i]};
    rc = run(s, "INSERT INTO sweep_problems (sweep_id, position, problem)"
             " SELECT $1::bigint, COALESCE(max(position), 0) + 1, $2"
             " FROM sweep_problems WHERE sweep_id = $1::bigint"
             " ON CONFLICT DO NOTHING", 2, p, "adding a problem");
  }
  for (size_t i = 0; i < nl && !rc; i++) {
    const char *p[] = {ids, labels[i]};
    rc = run(s, "INSERT INTO sweep_classes (sweep_id, position, label)"
             " SELECT $1::bigint, COALESCE(max(position), 0) + 1, $2"
             " FROM sweep_classes WHERE sweep_id = $1::bigint"
             " ON CONFLICT DO NOTHING", 2, p, "adding a class");
  }
  if (!rc && bind) rc = bind_class(s, *id, bind);
  if (rc) return kf_store__rollback(s, rc);
  return kf_store__commit(s);
}

int kf_store_sweep_find(kf_store *s, const char *key, int64_t *id) {
  *id = 0;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  bool digits = key && *key && strspn(key, "0123456789") == strlen(key) &&
                strlen(key) < 19;
  const char *p[] = {digits ? key : "0", key ? key : ""};
  PGresult *r = query(s, "SELECT id FROM sweeps WHERE id = $1::bigint"
                      " OR name = $2 ORDER BY (id = $1::bigint) DESC LIMIT 1",
                      2, p, "find", &rc);
  if (!r) return rc;
  if (PQntuples(r) == 1) {
    *id = i64(r, 0, 0);
    PQclear(r);
    return 0;
  }
  PQclear(r);
  r = query(s, "SELECT COALESCE(string_agg(id || ' ' || name, ', '"
            " ORDER BY id), '') FROM (SELECT id, name FROM sweeps"
            " ORDER BY id LIMIT 20) x", 0, NULL, "list", &rc);
  if (!r) return rc;
  rc = kf_store__fail(s, KF_ENOTFOUND, "no sweep '%.127s' (sweeps: %.600s)",
                      key ? key : "",
                      *PQgetvalue(r, 0, 0) ? PQgetvalue(r, 0, 0) : "none");
  PQclear(r);
  return rc;
}

int kf_store_sweep_campaign(kf_store *s, int64_t sweep, const char *problem,
                            const char *label, int64_t *campaign_id) {
  *campaign_id = 0;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char ids[24];
  snprintf(ids, sizeof ids, "%" PRId64, sweep);
  const char *p[] = {ids, problem, label};
  PGresult *r = query(s, "SELECT campaign_id FROM sweep_campaigns WHERE"
                      " sweep_id = $1::bigint AND problem = $2 AND label = $3",
                      3, p, "campaign", &rc);
  if (!r) return rc;
  if (PQntuples(r) == 1) *campaign_id = i64(r, 0, 0);
  PQclear(r);
  return 0;
}

int kf_store_sweep_add_campaign(kf_store *s, int64_t sweep,
                                const char *problem, const char *label,
                                int64_t campaign_id) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char ids[24], cid[24];
  snprintf(ids, sizeof ids, "%" PRId64, sweep);
  snprintf(cid, sizeof cid, "%" PRId64, campaign_id);
  const char *p[] = {ids, problem, label, cid};
  return run(s, "INSERT INTO sweep_campaigns (sweep_id, problem, label,"
             " campaign_id) VALUES ($1::bigint, $2, $3, $4::bigint)", 4, p,
             "recording a campaign");
}

int kf_store_sweep_baselines_put(kf_store *s, int64_t sweep,
                                 const char *label,
                                 const kf_sweep_baseline *b, size_t n,
                                 const char *source) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if ((rc = kf_store__begin(s))) return rc;
  char ids[24];
  snprintf(ids, sizeof ids, "%" PRId64, sweep);
  for (size_t i = 0; i < n && !rc; i++) {
    char e[40], c[40];
    snprintf(e, sizeof e, "%.17g", b[i].eager_ms);
    snprintf(c, sizeof c, "%.17g", b[i].compile_ms);
    const char *p[] = {ids, label, b[i].problem, b[i].eager_ms > 0 ? e : NULL,
                       b[i].compile_ms > 0 ? c : NULL, b[i].line,
                       source ? source : ""};
    PGresult *r = query(
        s,
        "INSERT INTO sweep_baselines (sweep_id, label, problem, eager_ms,"
        " compile_ms, line, source) SELECT $1::bigint, $2, $3, $4::float8,"
        " $5::float8, $6::jsonb, $7 WHERE EXISTS (SELECT 1 FROM"
        " sweep_problems WHERE sweep_id = $1::bigint AND problem = $3)"
        " ON CONFLICT (sweep_id, label, problem) DO UPDATE SET"
        " eager_ms = EXCLUDED.eager_ms, compile_ms = EXCLUDED.compile_ms,"
        " line = EXCLUDED.line, source = EXCLUDED.source,"
        " recorded_at = now()",
        7, p, "storing a baseline", &rc);
    if (!r) break;
    if (strcmp(PQcmdTuples(r), "1") != 0)
      rc = kf_store__fail(s, KF_EINVAL, "sweep %" PRId64 " has no problem"
                          " '%.127s'", sweep, b[i].problem);
    PQclear(r);
  }
  if (rc) return kf_store__rollback(s, rc);
  return kf_store__commit(s);
}

/* ------------------------------------------------------------ read -- */

int kf_store_sweep_get(kf_store *s, int64_t id, kf_sweep **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char ids[24];
  snprintf(ids, sizeof ids, "%" PRId64, id);
  const char *p[] = {ids};
  PGresult *h = query(s, "SELECT id, name, backend, to_char(created_at AT"
                      " TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
                      " (SELECT count(*) FROM sweep_problems WHERE sweep_id"
                      " = s.id), (SELECT count(*) FROM sweep_classes WHERE"
                      " sweep_id = s.id) FROM sweeps s WHERE id = $1::bigint",
                      1, p, "get", &rc);
  if (!h) return rc;
  if (PQntuples(h) != 1) {
    PQclear(h);
    return kf_store__fail(s, KF_ENOTFOUND, "no sweep %" PRId64, id);
  }
  PGresult *r = query(
      s,
      "SELECT sp.problem, sc.label, COALESCE(sc.model, ''),"
      " COALESCE(sc.device_class_id, 0), COALESCE(cm.campaign_id, 0),"
      " COALESCE(sc.ceiling_gbps, 0), b.label IS NOT NULL,"
      " COALESCE(b.eager_ms, 0), COALESCE(b.compile_ms, 0),"
      " COALESCE(b.source, ''),"
      /* kf sweep --baselines checked these fields' types; a line stored
       * before they existed, or written by hand, reads as "none" */
      " CASE WHEN jsonb_typeof(b.line->'kernel_ms') = 'number'"
      "  THEN (b.line->>'kernel_ms')::float8 ELSE 0 END,"
      " CASE WHEN jsonb_typeof(b.line->'max_autotune_ms') = 'number'"
      "  THEN (b.line->>'max_autotune_ms')::float8 ELSE 0 END,"
      " CASE WHEN jsonb_typeof(b.line->'candidate_id') = 'number'"
      "  AND (b.line->>'candidate_id')::numeric BETWEEN 1 AND 9e15"
      "  THEN (b.line->>'candidate_id')::numeric::bigint ELSE 0 END,"
      " CASE WHEN jsonb_typeof(b.line->'outcome') = 'string'"
      "  THEN left(b.line->>'outcome', 63) ELSE '' END"
      " FROM sweep_problems sp JOIN sweep_classes sc"
      " ON sc.sweep_id = sp.sweep_id"
      " LEFT JOIN sweep_campaigns cm ON cm.sweep_id = sp.sweep_id"
      "  AND cm.problem = sp.problem AND cm.label = sc.label"
      " LEFT JOIN sweep_baselines b ON b.sweep_id = sp.sweep_id"
      "  AND b.problem = sp.problem AND b.label = sc.label"
      " WHERE sp.sweep_id = $1::bigint ORDER BY sp.position, sc.position",
      1, p, "cells", &rc);
  if (!r) {
    PQclear(h);
    return rc;
  }
  int n = PQntuples(r);
  size_t head = sizeof(kf_sweep) + (size_t)n * sizeof(kf_sweep_cell);
  kf_sweep *w = calloc(1, head + cells_bytes(r) + cells_bytes(h));
  if (!w) {
    PQclear(h);
    PQclear(r);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  char *cur = (char *)w + head;
  w->v = (kf_sweep_cell *)(w + 1);
  w->n = (size_t)n;
  w->id = i64(h, 0, 0);
  w->name = put(&cur, h, 0, 1);
  w->backend = (int)i64(h, 0, 2);
  w->created_at = put(&cur, h, 0, 3);
  w->n_problems = (size_t)i64(h, 0, 4);
  w->n_labels = (size_t)i64(h, 0, 5);
  for (int i = 0; i < n; i++) {
    kf_sweep_cell *c = &w->v[i];
    c->problem = put(&cur, r, i, 0);
    c->label = put(&cur, r, i, 1);
    c->model = put(&cur, r, i, 2);
    c->device_class_id = i64(r, i, 3);
    c->campaign_id = i64(r, i, 4);
    c->ceiling_gbps_given = f64(r, i, 5);
    c->has_baseline = PQgetvalue(r, i, 6)[0] == 't';
    c->eager_ms = f64(r, i, 7);
    c->compile_ms = f64(r, i, 8);
    c->baseline_source = put(&cur, r, i, 9);
    c->kernel_ms = f64(r, i, 10);
    c->max_autotune_ms = f64(r, i, 11);
    c->kernel_candidate_id = i64(r, i, 12);
    c->twin_outcome = put(&cur, r, i, 13);
  }
  PQclear(h);
  PQclear(r);
  *out = w;
  return 0;
}

int kf_store_sweep_eval_ceiling(kf_store *s, int64_t eval_id,
                                double *copy_gbps, double *peak_gflops) {
  *copy_gbps = *peak_gflops = 0;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char ids[24];
  snprintf(ids, sizeof ids, "%" PRId64, eval_id);
  const char *p[] = {ids};
  /* A reused evaluation has no worker of its own: the device that took
   * the measurement it copies (as store_views.c's series). */
  PGresult *r = query(
      s,
      "SELECT CASE WHEN jsonb_typeof(w.device->'copy_gbps') = 'number'"
      "  THEN (w.device->>'copy_gbps')::float8 END,"
      " CASE WHEN jsonb_typeof(w.device->'peak_gflops') = 'number'"
      "  THEN (w.device->>'peak_gflops')::float8 END"
      " FROM evaluations e LEFT JOIN evaluations o ON o.id = e.reused_from"
      " JOIN workers w ON w.id = COALESCE(e.worker_id, o.worker_id)"
      " WHERE e.id = $1::bigint",
      1, p, "ceiling", &rc);
  if (!r) return rc;
  if (PQntuples(r) == 1) {
    *copy_gbps = f64(r, 0, 0);
    *peak_gflops = f64(r, 0, 1);
  }
  PQclear(r);
  return 0;
}

int kf_store_sweep_worker_class(kf_store *s, const char *worker_name,
                                int64_t since_unix_s,
                                int64_t *device_class_id,
                                kf_device_class *dc) {
  *device_class_id = 0;
  memset(dc, 0, sizeof *dc);
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char t[24];
  snprintf(t, sizeof t, "%" PRId64, since_unix_s);
  const char *p[] = {worker_name, t};
  PGresult *r = query(
      s,
      "SELECT d.id, d.kind, d.model, d.cc_major, d.cc_minor, d.isa"
      " FROM workers w JOIN device_classes d ON d.id = w.device_class_id"
      " WHERE w.name = $1 AND w.registered_at >= to_timestamp($2::bigint)"
      " ORDER BY w.id DESC LIMIT 1",
      2, p, "worker class", &rc);
  if (!r) return rc;
  if (PQntuples(r) == 1) {
    *device_class_id = i64(r, 0, 0);
    dc->kind = (int)i64(r, 0, 1);
    snprintf(dc->model, sizeof dc->model, "%s", PQgetvalue(r, 0, 2));
    dc->cc_major = (uint32_t)i64(r, 0, 3);
    dc->cc_minor = (uint32_t)i64(r, 0, 4);
    snprintf(dc->isa, sizeof dc->isa, "%s", PQgetvalue(r, 0, 5));
  }
  PQclear(r);
  return 0;
}
