/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_campaign.c -- campaigns, candidates, evaluation requests and
 * evaluations: what the search (coordinator/search.c) and the campaign
 * RPCs read and write.
 *
 * The dedupe rule lives in the schema (eval_keys_once, 0002): this file
 * never decides on its own that a key is free, it inserts and lets the
 * unique index say no.  Hashes are computed by PostgreSQL (sha256()), so
 * the coordinator needs no crypto library and every writer agrees on them.
 *
 * Evaluations are measured by kf_store_report (store_tasks.c), in the
 * transaction that accepts the report.  The one evaluation written here
 * is a reuse (0003): kf_store_schedule copies another campaign's measured
 * evaluation of the same key into this campaign, with task_id NULL and
 * reused_from naming the original, instead of creating a task.
 *
 * Rows come back as one allocation: the struct array first, then every
 * string it points to.  Reads are single statements (no BEGIN); writes
 * that take several statements are one transaction.
 */
#include <libpq-fe.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "outcome.h"
#include "store_internal.h"

/* ---------------------------------------------------------- helpers -- */

void kf_store__arr_f64(kf_store__buf *b, double v, bool zero_null) {
  if (!isfinite(v) || (zero_null && v == 0)) {
    kf_store__arr_null(b);
    return;
  }
  if (b->len > 0 && b->p[b->len - 1] != '{') kf_store__buf_put(b, ",", 1);
  kf_store__buf_printf(b, "%.17g", v);
}

static int64_t kf_store__i64(const PGresult *r, int row, int col) {
  if (PQgetisnull(r, row, col)) return 0;
  return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static double kf_store__f64(const PGresult *r, int row, int col) {
  if (PQgetisnull(r, row, col)) return 0;
  return strtod(PQgetvalue(r, row, col), NULL);
}

/* Bytes every text cell of r needs, NUL included. */
static size_t kf_store__cells_bytes(const PGresult *r) {
  size_t n = 0;
  for (int i = 0; i < PQntuples(r); i++)
    for (int j = 0; j < PQnfields(r); j++)
      n += (size_t)PQgetlength(r, i, j) + 1;
  return n;
}

/* Copies a cell behind *cur and advances it; SQL NULL -> "". */
static const char *kf_store__put(char **cur, const PGresult *r, int row,
                                 int col) {
  char *d = *cur;
  size_t n = (size_t)PQgetlength(r, row, col);
  memcpy(d, PQgetvalue(r, row, col), n);
  d[n] = '\0';
  *cur = d + n + 1;
  return d;
}

static void kf_store__itoa(char *buf, size_t len, int64_t v) {
  snprintf(buf, len, "%lld", (long long)v);
}

/* --------------------------------------------------- candidate rows -- */

/* Every candidate query returns these columns, in this order; queries
 * without an evaluation send NULLs for the 18 evaluation columns and
 * reused_from.  The last column is the candidate's campaign. */
#define KF_CAND_COLS(src)                                                    \
  " c.id, c.template_name, c.knobs::text, c.flags, c.source_sha256,"        \
  " c.proposer, " src ", c.generation"
#define KF_EVAL_COLS                                                         \
  " e.id, e.task_id, e.device_class_id, d.kind, d.model, d.cc_major,"       \
  " d.cc_minor, d.isa, e.outcome::text, e.stage, e.reason,"                 \
  " e.time_ns_median, e.time_ns_spread, e.ref_time_ns_median,"              \
  " e.ref_time_ns_spread, e.speedup, e.achieved_gbps, e.roofline_fraction,"\
  " e.reused_from, c.campaign_id"
#define KF_NO_EVAL_COLS                                                      \
  " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"      \
  " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, c.campaign_id"
#define KF_EVAL_FROM                                                         \
  " FROM evaluations e JOIN candidates c ON c.id = e.candidate_id"          \
  " JOIN device_classes d ON d.id = e.device_class_id"

static int kf_store__cand_list(kf_store *s, PGresult *r, bool with_source,
                               kf_cand_list **out) {
  size_t n = (size_t)PQntuples(r);
  size_t head = sizeof(kf_cand_list) + n * sizeof(kf_cand_row);
  char *blk = malloc(head + kf_store__cells_bytes(r) + 1);
  if (!blk) return kf_store__fail(s, KF_ENOMEM, "out of memory");
  kf_cand_list *l = (kf_cand_list *)blk;
  l->v = (kf_cand_row *)(blk + sizeof *l);
  l->n = n;
  char *cur = blk + head;
  for (int i = 0; i < (int)n; i++) {
    kf_cand_row *c = &l->v[i];
    memset(c, 0, sizeof *c);
    c->candidate_id = kf_store__i64(r, i, 0);
    c->template_name = kf_store__put(&cur, r, i, 1);
    c->knobs_json = kf_store__put(&cur, r, i, 2);
    c->flags = kf_store__put(&cur, r, i, 3);
    c->source_sha256 = kf_store__put(&cur, r, i, 4);
    c->proposer = kf_store__put(&cur, r, i, 5);
    c->source = with_source ? kf_store__put(&cur, r, i, 6) : NULL;
    c->generation = (int32_t)kf_store__i64(r, i, 7);
    c->eval_id = kf_store__i64(r, i, 8);
    c->task_id = kf_store__i64(r, i, 9);
    c->device_class_id = kf_store__i64(r, i, 10);
    c->dc.kind = (int)kf_store__i64(r, i, 11);
    snprintf(c->dc.model, sizeof c->dc.model, "%s", PQgetvalue(r, i, 12));
    c->dc.cc_major = (uint32_t)kf_store__i64(r, i, 13);
    c->dc.cc_minor = (uint32_t)kf_store__i64(r, i, 14);
    snprintf(c->dc.isa, sizeof c->dc.isa, "%s", PQgetvalue(r, i, 15));
    c->outcome = PQgetisnull(r, i, 16) ? 0
                                       : kf_outcome_parse(PQgetvalue(r, i, 16));
    c->stage = kf_store__put(&cur, r, i, 17);
    c->reason = kf_store__put(&cur, r, i, 18);
    c->time_ns_median = kf_store__f64(r, i, 19);
    c->time_ns_spread = kf_store__f64(r, i, 20);
    c->ref_time_ns_median = kf_store__f64(r, i, 21);
    c->ref_time_ns_spread = kf_store__f64(r, i, 22);
    c->speedup = kf_store__f64(r, i, 23);
    c->achieved_gbps = kf_store__f64(r, i, 24);
    c->roofline_fraction = kf_store__f64(r, i, 25);
    c->reused_from = kf_store__i64(r, i, 26);
    c->campaign_id = kf_store__i64(r, i, 27);
  }
  *out = l;
  return 0;
}

void kf_store_list_free(kf_cand_list *l) { free(l); }

/* -------------------------------------------------------- campaigns -- */

static const kf_store__stmt ST_CAMP_CREATE = {
    KF_STMT_CAMP_CREATE,
    "INSERT INTO campaigns (name, problem, language, backend, spec_json,"
    " reference_source, templates, budget_evals, budget_seconds,"
    " population, plateau_evals, target_roofline, search_seed, floor_bytes)"
    " VALUES ($1, $2, $3, $4::smallint, $5::bytea, $6, $7::jsonb, $8::int,"
    " $9::int, $10::int, $11::int, $12::float8, $13::bigint, $14::float8)"
    " RETURNING id"};

int kf_store_campaign_create(kf_store *s, const kf_campaign_new *c,
                             int64_t *id) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if (!c->name || !c->problem || !c->templates_json ||
      (c->backend != 1 && c->backend != 2) || c->budget_evals == 0 ||
      c->budget_seconds == 0 || c->population == 0)
    return kf_store__fail(s, KF_EINVAL, "campaign: missing or bad field");
  /* bytea in text form: \x then hex. */
  kf_store__buf spec = {0};
  kf_store__buf_put(&spec, "\\x", 2);
  static const char hex[] = "0123456789abcdef";
  const unsigned char *u = c->spec_json;
  for (size_t i = 0; i < c->spec_json_len; i++) {
    char two[2] = {hex[u[i] >> 4], hex[u[i] & 15]};
    kf_store__buf_put(&spec, two, 2);
  }
  if (spec.oom) {
    kf_store__buf_free(&spec);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  char be[8], bev[16], bs[16], pop[16], pl[16], tr[32], seed[24], fb[32];
  snprintf(be, sizeof be, "%d", c->backend);
  snprintf(bev, sizeof bev, "%u", (unsigned)c->budget_evals);
  snprintf(bs, sizeof bs, "%u", (unsigned)c->budget_seconds);
  snprintf(pop, sizeof pop, "%u", (unsigned)c->population);
  snprintf(pl, sizeof pl, "%u", (unsigned)c->plateau_evals);
  snprintf(tr, sizeof tr, "%.17g", c->target_roofline);
  kf_store__itoa(seed, sizeof seed, (int64_t)c->search_seed);
  snprintf(fb, sizeof fb, "%.17g", isfinite(c->floor_bytes) ? c->floor_bytes
                                                            : 0.0);
  const char *p[] = {c->name,
                     c->problem,
                     c->language ? c->language : "c",
                     be,
                     spec.p,
                     c->reference_source ? c->reference_source : "",
                     c->templates_json,
                     bev,
                     bs,
                     pop,
                     pl,
                     tr,
                     seed,
                     fb};
  PGresult *r;
  rc = kf_store__exec(s, &ST_CAMP_CREATE, 14, p, false, &r);
  kf_store__buf_free(&spec);
  if (rc) return rc;
  *id = kf_store__i64(r, 0, 0);
  PQclear(r);
  return 0;
}

static const kf_store__stmt ST_CAMP_GET = {
    KF_STMT_CAMP_GET,
    "SELECT id, name, problem, language, state, COALESCE(stop_reason, ''),"
    " backend, spec_json, reference_source, templates::text,"
    " COALESCE((SELECT string_agg(encode(sha256(convert_to(t->>'source',"
    " 'UTF8')), 'hex'), ',' ORDER BY o)"
    " FROM jsonb_array_elements(templates) WITH ORDINALITY AS x(t, o)), ''),"
    " budget_evals, budget_seconds, population, plateau_evals,"
    " target_roofline, search_seed, floor_bytes,"
    " COALESCE(best_candidate_id, 0),"
    " (extract(epoch FROM COALESCE(finished_at, now()) - started_at)"
    " * 1000)::bigint"
    " FROM campaigns WHERE id = $1::bigint"};

int kf_store_campaign_get(kf_store *s, int64_t id, kf_campaign **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char ids[24];
  kf_store__itoa(ids, sizeof ids, id);
  const char *p[] = {ids};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_GET, 1, p, false, &r))) return rc;
  if (PQntuples(r) == 0) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOTFOUND, "campaign %lld not found",
                          (long long)id);
  }
  size_t speclen = 0;
  unsigned char *spec =
      PQunescapeBytea((const unsigned char *)PQgetvalue(r, 0, 7), &speclen);
  char *blk = spec ? malloc(sizeof(kf_campaign) + kf_store__cells_bytes(r) +
                            speclen + 1)
                   : NULL;
  if (!blk) {
    PQfreemem(spec);
    PQclear(r);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  kf_campaign *c = (kf_campaign *)blk;
  memset(c, 0, sizeof *c);
  char *cur = blk + sizeof *c;
  c->id = kf_store__i64(r, 0, 0);
  c->name = kf_store__put(&cur, r, 0, 1);
  c->problem = kf_store__put(&cur, r, 0, 2);
  c->language = kf_store__put(&cur, r, 0, 3);
  c->state = kf_store__put(&cur, r, 0, 4);
  c->stop_reason = kf_store__put(&cur, r, 0, 5);
  c->backend = (int)kf_store__i64(r, 0, 6);
  memcpy(cur, spec, speclen);
  cur[speclen] = '\0';
  c->spec_json = cur;
  c->spec_json_len = speclen;
  cur += speclen + 1;
  PQfreemem(spec);
  c->reference_source = kf_store__put(&cur, r, 0, 8);
  c->templates_json = kf_store__put(&cur, r, 0, 9);
  c->template_shas = kf_store__put(&cur, r, 0, 10);
  c->budget_evals = (uint32_t)kf_store__i64(r, 0, 11);
  c->budget_seconds = (uint32_t)kf_store__i64(r, 0, 12);
  c->population = (uint32_t)kf_store__i64(r, 0, 13);
  c->plateau_evals = (uint32_t)kf_store__i64(r, 0, 14);
  c->target_roofline = kf_store__f64(r, 0, 15);
  c->search_seed = (uint64_t)kf_store__i64(r, 0, 16);
  c->floor_bytes = kf_store__f64(r, 0, 17);
  c->best_candidate_id = kf_store__i64(r, 0, 18);
  int64_t el = kf_store__i64(r, 0, 19);
  c->elapsed_ms = el > 0 ? (uint64_t)el : 0;
  PQclear(r);
  *out = c;
  return 0;
}

void kf_store_campaign_free(kf_campaign *c) { free(c); }

static const kf_store__stmt ST_CAMP_RUNNING = {
    KF_STMT_CAMP_RUNNING,
    "SELECT id FROM campaigns WHERE state = 'running' ORDER BY id"};

int kf_store_campaigns_running(kf_store *s, int64_t **ids, size_t *n) {
  *ids = NULL;
  *n = 0;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_RUNNING, 0, NULL, false, &r)))
    return rc;
  size_t m = (size_t)PQntuples(r);
  if (m) {
    *ids = malloc(m * sizeof **ids);
    if (!*ids) {
      PQclear(r);
      return kf_store__fail(s, KF_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < m; i++) (*ids)[i] = kf_store__i64(r, (int)i, 0);
  }
  *n = m;
  PQclear(r);
  return 0;
}

/* The best evaluation: best_candidate_id's when the search chose one,
 * else the highest speedup. */
static const kf_store__stmt ST_CAMP_COUNTS = {
    KF_STMT_CAMP_COUNTS,
    "SELECT (SELECT count(*) FROM eval_keys WHERE campaign_id = $1::bigint"
    "  AND task_id IS NOT NULL),"
    " (SELECT count(*) FROM evaluations WHERE campaign_id = $1::bigint"
    "  AND reused_from IS NOT NULL),"
    " (SELECT count(*) FROM eval_keys k JOIN tasks t ON t.id = k.task_id"
    "  WHERE k.campaign_id = $1::bigint AND t.state IN ('queued', 'leased')),"
    " b.speedup, b.time_ns_median, b.ref_time_ns_median, b.roofline_fraction"
    " FROM (SELECT 1) one LEFT JOIN LATERAL ("
    "  SELECT e.* FROM evaluations e JOIN campaigns c ON c.id = e.campaign_id"
    "  WHERE e.campaign_id = $1::bigint AND e.outcome = 'ok'"
    "  ORDER BY COALESCE(e.candidate_id = c.best_candidate_id, false) DESC,"
    "  e.speedup DESC NULLS LAST, e.id LIMIT 1) b ON true"};

static const kf_store__stmt ST_CAMP_OUTCOMES = {
    KF_STMT_CAMP_OUTCOMES,
    "SELECT outcome::text, count(*) FROM evaluations"
    " WHERE campaign_id = $1::bigint GROUP BY outcome"};

int kf_store_campaign_counts(kf_store *s, int64_t id,
                             kf_campaign_counts *out) {
  memset(out, 0, sizeof *out);
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char ids[24];
  kf_store__itoa(ids, sizeof ids, id);
  const char *p[] = {ids};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_COUNTS, 1, p, false, &r))) return rc;
  out->evals_reused = (uint32_t)kf_store__i64(r, 0, 1);
  out->issued = (uint32_t)kf_store__i64(r, 0, 0) + out->evals_reused;
  out->outstanding = (uint32_t)kf_store__i64(r, 0, 2);
  out->best_speedup = kf_store__f64(r, 0, 3);
  out->best_time_ns = kf_store__f64(r, 0, 4);
  out->ref_time_ns = kf_store__f64(r, 0, 5);
  out->roofline_fraction = kf_store__f64(r, 0, 6);
  PQclear(r);
  if ((rc = kf_store__exec(s, &ST_CAMP_OUTCOMES, 1, p, false, &r))) return rc;
  for (int i = 0; i < PQntuples(r); i++) {
    int oc = kf_outcome_parse(PQgetvalue(r, i, 0));
    uint32_t n = (uint32_t)kf_store__i64(r, i, 1);
    if (oc > 0 && oc < 16) out->by_outcome[oc] += n;
    out->evals += n;
    if (oc == KF_OUTCOME_OK) out->evals_ok += n;
  }
  PQclear(r);
  return 0;
}

static const kf_store__stmt ST_CAMP_FINISH = {
    KF_STMT_CAMP_FINISH,
    "UPDATE campaigns SET state = $2, stop_reason = $3, finished_at = now()"
    " WHERE id = $1::bigint AND state = 'running' RETURNING id"};

static const kf_store__stmt ST_CAMP_CANCEL = {
    KF_STMT_CAMP_CANCEL,
    "WITH u AS (UPDATE tasks SET state = 'failed', last_error = $2,"
    " finished_at = now() WHERE campaign_id = $1::bigint"
    " AND state = 'queued' RETURNING 1) SELECT count(*) FROM u"};

int kf_store_campaign_finish(kf_store *s, int64_t id, const char *state,
                             const char *reason, bool *changed,
                             int *cancelled) {
  *changed = false;
  if (cancelled) *cancelled = 0;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char ids[24];
  kf_store__itoa(ids, sizeof ids, id);
  const char *p[] = {ids, state, reason ? reason : ""};
  PGresult *r;
  if ((rc = kf_store__begin(s))) return rc;
  if ((rc = kf_store__exec(s, &ST_CAMP_FINISH, 3, p, false, &r)))
    return kf_store__rollback(s, rc);
  bool hit = PQntuples(r) == 1;
  PQclear(r);
  if (hit) {
    const char *q[] = {ids, reason ? reason : "campaign finished"};
    if ((rc = kf_store__exec(s, &ST_CAMP_CANCEL, 2, q, false, &r)))
      return kf_store__rollback(s, rc);
    if (cancelled) *cancelled = (int)kf_store__i64(r, 0, 0);
    PQclear(r);
  }
  if ((rc = kf_store__commit(s))) return kf_store__rollback(s, rc);
  *changed = hit;
  return 0;
}

static const kf_store__stmt ST_CAMP_SET_BEST = {
    KF_STMT_CAMP_SET_BEST,
    "UPDATE campaigns SET best_candidate_id = NULLIF($2::bigint, 0)"
    " WHERE id = $1::bigint"};

int kf_store_campaign_set_best(kf_store *s, int64_t id,
                               int64_t candidate_id) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24];
  kf_store__itoa(a, sizeof a, id);
  kf_store__itoa(b, sizeof b, candidate_id);
  const char *p[] = {a, b};
  return kf_store__exec(s, &ST_CAMP_SET_BEST, 2, p, false, NULL);
}

/* ---------------------------------------------------------- classes -- */

static const kf_store__stmt ST_CAMP_CLASSES = {
    KF_STMT_CAMP_CLASSES,
    "SELECT w.device_class_id, count(*), sum(GREATEST(w.slots, 1)),"
    " COALESCE(max(CASE WHEN jsonb_typeof(w.device->'copy_gbps') = 'number'"
    "  THEN (w.device->>'copy_gbps')::float8 END), 0),"
    " (SELECT count(*) FROM eval_keys k JOIN tasks t ON t.id = k.task_id"
    "  WHERE k.campaign_id = $1::bigint"
    "  AND k.device_class_id = w.device_class_id"
    "  AND t.state IN ('queued', 'leased')),"
    " (SELECT count(*) FROM eval_keys k WHERE k.campaign_id = $1::bigint"
    "  AND k.device_class_id = w.device_class_id AND k.task_id IS NOT NULL)"
    " + (SELECT count(*) FROM evaluations e WHERE e.campaign_id = $1::bigint"
    "  AND e.device_class_id = w.device_class_id"
    "  AND e.reused_from IS NOT NULL)"
    " FROM workers w JOIN device_classes d ON d.id = w.device_class_id"
    " JOIN campaigns c ON c.id = $1::bigint"
    " WHERE d.kind = c.backend AND 'eval' = ANY(w.task_kinds)"
    " AND w.last_seen > now() - $2::bigint * interval '1 ms'"
    " GROUP BY w.device_class_id ORDER BY 1"};

int kf_store_eval_classes(kf_store *s, int64_t campaign_id, uint32_t alive_ms,
                          kf_eval_class **out, size_t *n) {
  *out = NULL;
  *n = 0;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24];
  kf_store__itoa(a, sizeof a, campaign_id);
  kf_store__itoa(b, sizeof b, alive_ms);
  const char *p[] = {a, b};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_CLASSES, 2, p, false, &r))) return rc;
  size_t m = (size_t)PQntuples(r);
  if (m) {
    *out = calloc(m, sizeof **out);
    if (!*out) {
      PQclear(r);
      return kf_store__fail(s, KF_ENOMEM, "out of memory");
    }
  }
  for (int i = 0; i < (int)m; i++) {
    (*out)[i] = (kf_eval_class){
        .device_class_id = kf_store__i64(r, i, 0),
        .workers = (uint32_t)kf_store__i64(r, i, 1),
        .slots = (uint32_t)kf_store__i64(r, i, 2),
        .copy_gbps = kf_store__f64(r, i, 3),
        .outstanding = (uint32_t)kf_store__i64(r, i, 4),
        .issued = (uint32_t)kf_store__i64(r, i, 5)};
  }
  *n = m;
  PQclear(r);
  return 0;
}

/* ------------------------------------------------------ evaluations -- */

#define KF_EVALS_SQL(where, order)                                           \
  "SELECT" KF_CAND_COLS("NULL") "," KF_EVAL_COLS KF_EVAL_FROM                \
  " WHERE e.campaign_id = $1::bigint" where " ORDER BY " order               \
  " LIMIT NULLIF($2::bigint, 0)"

static const kf_store__stmt ST_CAMP_EVALS = {
    KF_STMT_CAMP_EVALS, KF_EVALS_SQL("", "e.id")};
static const kf_store__stmt ST_CAMP_EVALS_RECENT = {
    KF_STMT_CAMP_EVALS_RECENT, KF_EVALS_SQL("", "e.id DESC")};
static const kf_store__stmt ST_CAMP_EVALS_FAILURES = {
    KF_STMT_CAMP_EVALS_FAILURES,
    KF_EVALS_SQL(" AND e.outcome <> 'ok'", "e.id DESC")};
static const kf_store__stmt ST_CAMP_EVALS_BEST = {
    KF_STMT_CAMP_EVALS_BEST,
    KF_EVALS_SQL(" AND e.outcome = 'ok'",
                 "e.speedup DESC NULLS LAST, e.time_ns_median, e.id")};

int kf_store_evaluations(kf_store *s, int64_t campaign_id,
                         kf_evals_order order, uint32_t limit,
                         kf_cand_list **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  const kf_store__stmt *st = order == KF_EVALS_RECENT     ? &ST_CAMP_EVALS_RECENT
                             : order == KF_EVALS_FAILURES ? &ST_CAMP_EVALS_FAILURES
                             : order == KF_EVALS_BEST     ? &ST_CAMP_EVALS_BEST
                                                          : &ST_CAMP_EVALS;
  char a[24], b[24];
  kf_store__itoa(a, sizeof a, campaign_id);
  kf_store__itoa(b, sizeof b, limit);
  const char *p[] = {a, b};
  PGresult *r;
  if ((rc = kf_store__exec(s, st, 2, p, false, &r))) return rc;
  rc = kf_store__cand_list(s, r, false, out);
  PQclear(r);
  return rc;
}

static const kf_store__stmt ST_CAMP_BEST = {
    KF_STMT_CAMP_BEST,
    "SELECT" KF_CAND_COLS("c.source") "," KF_EVAL_COLS KF_EVAL_FROM
    " JOIN campaigns k ON k.id = e.campaign_id"
    " WHERE e.campaign_id = $1::bigint AND e.outcome = 'ok'"
    " ORDER BY COALESCE(e.candidate_id = k.best_candidate_id, false) DESC,"
    " e.speedup DESC NULLS LAST, e.id LIMIT 1"};

int kf_store_best(kf_store *s, int64_t campaign_id, kf_cand_list **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24];
  kf_store__itoa(a, sizeof a, campaign_id);
  const char *p[] = {a};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_BEST, 1, p, false, &r))) return rc;
  if (PQntuples(r) == 0) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOTFOUND,
                          "campaign %lld has no successful evaluation yet",
                          (long long)campaign_id);
  }
  rc = kf_store__cand_list(s, r, true, out);
  PQclear(r);
  return rc;
}

/* ------------------------------------------------- search's inputs -- */

static const kf_store__stmt ST_CAMP_PENDING = {
    KF_STMT_CAMP_PENDING,
    "SELECT" KF_CAND_COLS("c.source") "," KF_NO_EVAL_COLS
    " FROM candidates c WHERE c.campaign_id = $1::bigint"
    " AND c.proposer <> 'evolution'"
    " AND (c.device_class_id IS NULL OR c.device_class_id = $2::bigint)"
    " AND NOT EXISTS (SELECT 1 FROM eval_keys k WHERE k.candidate_id = c.id"
    "  AND k.device_class_id = $2::bigint)"
    " ORDER BY c.id"};

int kf_store_pending_candidates(kf_store *s, int64_t campaign_id, int64_t dc,
                                kf_cand_list **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24];
  kf_store__itoa(a, sizeof a, campaign_id);
  kf_store__itoa(b, sizeof b, dc);
  const char *p[] = {a, b};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_PENDING, 2, p, false, &r))) return rc;
  rc = kf_store__cand_list(s, r, true, out);
  PQclear(r);
  return rc;
}

/* Columns as KF_CAND_COLS + KF_EVAL_COLS, most of them NULL: the key's
 * candidate, its sha and flags, the evaluation of its task (e.id), its
 * task and the task's state (in the stage column), and its campaign. */
static const kf_store__stmt ST_CAMP_KEYS = {
    KF_STMT_CAMP_KEYS,
    "SELECT k.candidate_id, '', '{}', k.flags, k.source_sha256, '', NULL,"
    " 0, e.id, k.task_id, k.device_class_id, NULL, NULL, NULL, NULL, NULL,"
    " NULL, t.state::text, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, k.campaign_id FROM eval_keys k"
    " LEFT JOIN tasks t ON t.id = k.task_id"
    " LEFT JOIN evaluations e ON e.task_id = k.task_id"
    " WHERE k.device_class_id = $2::bigint"
    " AND (k.campaign_id = $1::bigint OR (k.task_id IS NOT NULL"
    " AND (k.source_sha256 = ANY(string_to_array($3, ','))"
    "  OR k.source_sha256 IN (SELECT source_sha256 FROM candidates"
    "  WHERE campaign_id = $1::bigint))))"};

int kf_store_eval_keys(kf_store *s, int64_t campaign_id, int64_t dc,
                       const char *shas, kf_cand_list **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24];
  kf_store__itoa(a, sizeof a, campaign_id);
  kf_store__itoa(b, sizeof b, dc);
  const char *p[] = {a, b, shas ? shas : ""};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_KEYS, 3, p, false, &r))) return rc;
  rc = kf_store__cand_list(s, r, false, out);
  PQclear(r);
  return rc;
}

static const kf_store__stmt ST_CAMP_RESERVE = {
    KF_STMT_CAMP_RESERVE,
    "SELECT nextval('candidates_id_seq'), nextval('tasks_id_seq')"
    " FROM generate_series(1, $1::int)"};

int kf_store_reserve_ids(kf_store *s, size_t n, int64_t *candidate_ids,
                         int64_t *task_ids) {
  int rc = kf_store__ready(s);
  if (rc || n == 0) return rc;
  char a[24];
  kf_store__itoa(a, sizeof a, (int64_t)n);
  const char *p[] = {a};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_RESERVE, 1, p, false, &r))) return rc;
  if ((size_t)PQntuples(r) != n) {
    PQclear(r);
    return kf_store__fail(s, KF_EDB, "reserved %d of %zu ids", PQntuples(r),
                          n);
  }
  for (size_t i = 0; i < n; i++) {
    if (candidate_ids) candidate_ids[i] = kf_store__i64(r, (int)i, 0);
    if (task_ids) task_ids[i] = kf_store__i64(r, (int)i, 1);
  }
  PQclear(r);
  return 0;
}

/* ------------------------------------------------------- scheduling -- */

/* One statement: new candidates, then one eval_keys row per plan (with
 * its task, or as a duplicate), then the tasks of the keys that went in
 * and the reused evaluations of the duplicate rows that went in.  A key
 * taken meanwhile makes ON CONFLICT skip that row and so its task.  The
 * foreign keys from eval_keys to tasks and from evaluations to candidates
 * are checked at the end of the statement, when the rows exist.  The
 * result is the ids of the tasks created, then (second column true) the
 * candidate ids whose reused evaluation went in.  A reuse copies only an
 * evaluation of another campaign that was itself measured (reused_from
 * NULL), on the plan's class. */
static const kf_store__stmt ST_CAMP_SCHEDULE = {
    KF_STMT_CAMP_SCHEDULE,
    "WITH p AS (SELECT * FROM unnest($2::boolean[], $3::bigint[],"
    " $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[],"
    " $9::text[], $10::int[], $11::text[], $12::bigint[], $13::bigint[],"
    " $14::bytea[], $15::int[], $16::int[], $17::int[], $18::bigint[])"
    " WITH ORDINALITY AS x(isnew, cand, dc, tmpl, knobs, source, proposer,"
    " parents, gen, flags, task, dup, payload, ma, tmo, prio, reuse, o)),"
    " c AS (INSERT INTO candidates (id, campaign_id, template_name, knobs,"
    " source, source_sha256, flags, proposer, parents, generation,"
    " device_class_id)"
    " SELECT cand, $1::bigint, tmpl, knobs::jsonb, source,"
    " encode(sha256(convert_to(source, 'UTF8')), 'hex'), flags, proposer,"
    " parents::bigint[], gen, dc FROM p WHERE isnew ORDER BY o"
    " RETURNING id, source_sha256, flags),"
    " k AS (INSERT INTO eval_keys (candidate_id, device_class_id,"
    " campaign_id, source_sha256, flags, task_id, duplicate_of)"
    " SELECT p.cand, p.dc, $1::bigint,"
    " COALESCE(c.source_sha256, old.source_sha256),"
    " COALESCE(c.flags, old.flags), NULLIF(p.task, 0), NULLIF(p.dup, 0)"
    " FROM p LEFT JOIN c ON c.id = p.cand"
    " LEFT JOIN candidates old ON old.id = p.cand ORDER BY p.o"
    " ON CONFLICT DO NOTHING RETURNING candidate_id, device_class_id,"
    " task_id),"
    " t AS (INSERT INTO tasks (id, kind, payload, device_class_id,"
    " max_attempts, campaign_id, timeout_ms, priority)"
    " SELECT p.task, 'eval', p.payload, p.dc, p.ma, $1::bigint, p.tmo,"
    " p.prio FROM p WHERE p.task IN (SELECT task_id FROM k"
    " WHERE task_id IS NOT NULL) ORDER BY p.o RETURNING id),"
    " r AS (INSERT INTO evaluations (candidate_id, campaign_id,"
    " device_class_id, task_id, worker_id, outcome, stage, reason,"
    " time_ns_median, time_ns_spread, ref_time_ns_median,"
    " ref_time_ns_spread, speedup, achieved_gbps, roofline_fraction, result,"
    " reused_from)"
    " SELECT p.cand, $1::bigint, p.dc, NULL, o.worker_id, o.outcome, o.stage,"
    " o.reason, o.time_ns_median, o.time_ns_spread, o.ref_time_ns_median,"
    " o.ref_time_ns_spread, o.speedup, o.achieved_gbps, o.roofline_fraction,"
    " o.result, o.id"
    " FROM p JOIN k ON k.candidate_id = p.cand AND k.device_class_id = p.dc"
    " AND k.task_id IS NULL"
    " JOIN evaluations o ON o.id = p.reuse AND o.device_class_id = p.dc"
    " AND o.campaign_id <> $1::bigint AND o.reused_from IS NULL"
    " ORDER BY p.o ON CONFLICT DO NOTHING RETURNING candidate_id)"
    " SELECT id, false FROM t UNION ALL SELECT candidate_id, true FROM r"};

int kf_store_schedule(kf_store *s, int64_t campaign_id,
                      const kf_eval_plan *plans, size_t n, bool *scheduled) {
  int rc = kf_store__ready(s);
  if (rc || n == 0) return rc;
  enum { NCOL = 17 };
  kf_store__buf a[NCOL] = {{0}};
  kf_store__buf par = {0};
  PGresult *r = NULL;
  for (int c = 0; c < NCOL; c++) kf_store__arr_open(&a[c]);
  for (size_t i = 0; i < n; i++) {
    const kf_eval_plan *pl = &plans[i];
    bool nw = pl->new_candidate;
    if (nw && (!pl->source || !pl->flags)) {
      rc = kf_store__fail(s, KF_EINVAL, "plan %zu: new candidate without"
                          " source or flags", i);
      goto out;
    }
    if ((pl->task_id == 0) == (pl->duplicate_of == 0)) {
      rc = kf_store__fail(s, KF_EINVAL, "plan %zu: needs exactly one of"
                          " task_id and duplicate_of", i);
      goto out;
    }
    if (pl->reuse_eval && !pl->duplicate_of) {
      rc = kf_store__fail(s, KF_EINVAL, "plan %zu: reuse_eval without"
                          " duplicate_of", i);
      goto out;
    }
    kf_store__arr_text(&a[0], nw ? "t" : "f");
    kf_store__arr_i64(&a[1], pl->candidate_id);
    kf_store__arr_i64(&a[2], pl->device_class_id);
    kf_store__arr_text(&a[3], nw ? (pl->template_name ? pl->template_name
                                                      : "")
                                 : NULL);
    kf_store__arr_text(&a[4], nw ? (pl->knobs_json ? pl->knobs_json : "{}")
                                 : NULL);
    kf_store__arr_text(&a[5], nw ? pl->source : NULL);
    kf_store__arr_text(&a[6], nw ? (pl->proposer ? pl->proposer
                                                 : "evolution")
                                 : NULL);
    kf_store__buf_reset(&par);
    kf_store__arr_open(&par);
    for (size_t j = 0; j < pl->n_parents; j++)
      kf_store__arr_i64(&par, pl->parents[j]);
    kf_store__arr_close(&par);
    kf_store__arr_text(&a[7], par.oom ? "{}" : par.p);
    kf_store__arr_i64(&a[8], pl->generation);
    kf_store__arr_text(&a[9], nw ? pl->flags : NULL);
    kf_store__arr_i64(&a[10], pl->task_id);
    kf_store__arr_i64(&a[11], pl->duplicate_of);
    kf_store__arr_bytea(&a[12], pl->payload, pl->payload ? pl->payload_len
                                                         : 0);
    kf_store__arr_i64(&a[13], pl->max_attempts ? pl->max_attempts : 2);
    kf_store__arr_i64(&a[14], pl->timeout_ms ? pl->timeout_ms : 120000);
    kf_store__arr_i64(&a[15], pl->priority);
    kf_store__arr_i64(&a[16], pl->reuse_eval);
  }
  bool oom = par.oom;
  const char *p[NCOL + 1];
  char cid[24];
  kf_store__itoa(cid, sizeof cid, campaign_id);
  p[0] = cid;
  for (int c = 0; c < NCOL; c++) {
    kf_store__arr_close(&a[c]);
    oom |= a[c].oom;
    p[c + 1] = a[c].p;
  }
  if (oom) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  if ((rc = kf_store__exec(s, &ST_CAMP_SCHEDULE, NCOL + 1, p, false, &r)))
    goto out;
  if (scheduled) {
    for (size_t i = 0; i < n; i++) scheduled[i] = false;
    for (int j = 0; j < PQntuples(r); j++) {
      int64_t id = kf_store__i64(r, j, 0);
      bool reused = PQgetvalue(r, j, 1)[0] == 't';
      for (size_t i = 0; i < n; i++)
        if (reused ? plans[i].reuse_eval && plans[i].candidate_id == id
                   : plans[i].task_id == id)
          scheduled[i] = true;
    }
  }
out:
  PQclear(r);
  for (int c = 0; c < NCOL; c++) kf_store__buf_free(&a[c]);
  kf_store__buf_free(&par);
  return rc;
}

/* -------------------------------------------------------- proposals -- */

/* Per class that can evaluate the campaign: this campaign's candidate
 * that already holds the proposal's key there (evaluated, being evaluated
 * or reused), or NULL.  Another campaign's evaluation of the key does not
 * make a duplicate: the search reuses it for this campaign. */
static const kf_store__stmt ST_CAMP_PROPOSE_CHECK = {
    KF_STMT_CAMP_PROPOSE_CHECK,
    "SELECT w.device_class_id, (SELECT k.candidate_id FROM eval_keys k"
    "  WHERE k.device_class_id = w.device_class_id"
    "  AND k.campaign_id = $1::bigint"
    "  AND k.source_sha256 = encode(sha256(convert_to($2, 'UTF8')), 'hex')"
    "  AND k.flags = $3 ORDER BY k.candidate_id LIMIT 1)"
    " FROM workers w JOIN device_classes d ON d.id = w.device_class_id"
    " JOIN campaigns c ON c.id = $1::bigint"
    " WHERE d.kind = c.backend AND 'eval' = ANY(w.task_kinds)"
    " GROUP BY w.device_class_id ORDER BY 1"};

static const kf_store__stmt ST_CAMP_PROPOSE = {
    KF_STMT_CAMP_PROPOSE,
    "INSERT INTO candidates (campaign_id, template_name, knobs, source,"
    " source_sha256, flags, proposer)"
    " VALUES ($1::bigint, $2, $3::jsonb, $4,"
    " encode(sha256(convert_to($4, 'UTF8')), 'hex'), $5, $6) RETURNING id"};

int kf_store_propose(kf_store *s, int64_t campaign_id,
                     const char *template_name, const char *knobs_json,
                     const char *flags, const char *source,
                     const char *proposer, int64_t *candidate_id,
                     bool *duplicate) {
  *candidate_id = 0;
  *duplicate = false;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if (!source || !flags || !proposer)
    return kf_store__fail(s, KF_EINVAL, "proposal without source");
  char cid[24];
  kf_store__itoa(cid, sizeof cid, campaign_id);
  PGresult *r;
  if ((rc = kf_store__begin(s))) return rc;
  const char *p1[] = {cid, source, flags};
  if ((rc = kf_store__exec(s, &ST_CAMP_PROPOSE_CHECK, 3, p1, false, &r)))
    return kf_store__rollback(s, rc);
  bool dup = PQntuples(r) > 0;
  int64_t owner = 0;
  for (int i = 0; i < PQntuples(r); i++) {
    if (PQgetisnull(r, i, 1)) dup = false;
    else if (!owner) owner = kf_store__i64(r, i, 1);
  }
  PQclear(r);
  if (dup) {
    if ((rc = kf_store__commit(s))) return kf_store__rollback(s, rc);
    *candidate_id = owner;
    *duplicate = true;
    return 0;
  }
  const char *p2[] = {cid, template_name ? template_name : "",
                      knobs_json ? knobs_json : "{}", source, flags,
                      proposer};
  if ((rc = kf_store__exec(s, &ST_CAMP_PROPOSE, 6, p2, false, &r)))
    return kf_store__rollback(s, rc);
  int64_t id = kf_store__i64(r, 0, 0);
  PQclear(r);
  if ((rc = kf_store__commit(s))) return kf_store__rollback(s, rc);
  *candidate_id = id;
  return 0;
}
