/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_campaign.c -- campaigns, candidates, evaluation requests and
 * evaluations: what the search (coordinator/search.c) and the campaign
 * RPCs read and write.
 *
 * The dedupe rule lives in the schema (eval_keys_once: once per campaign
 * since 0004): this file never decides on its own that a key is free, it
 * inserts and lets the unique index say no.  Source and reference hashes
 * are computed by PostgreSQL (sha256()), so every writer agrees on them;
 * the spec's canonical hash comes from common/spec.c.
 *
 * Evaluations are measured by kf_store_report (store_tasks.c), in the
 * transaction that accepts the report.  The one evaluation written here
 * is a reuse (0003, 0004): kf_store_schedule aggregates the measurements
 * of another campaign's key with the same identity into this campaign,
 * with task_id NULL and reused_from naming the latest, instead of
 * creating a task.
 *
 * The ranking (KF_RANKED_SQL) is written once and read by the top list,
 * GetBest and the status's best, so they cannot disagree.  The showdown's
 * rows (showdowns, showdown_entries) are written here for
 * coordinator/showdown.c.
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
#include "text.h"
#include "util.h"

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
 * without an evaluation send NULLs for the evaluation columns.  Column 28
 * is the candidate's campaign; 29..33 (0004) repetitions, measurements,
 * timing_dependent, "numbers from a showdown", environment. */
#define KF_CAND_COLS(src)                                                    \
  " c.id, c.template_name, c.knobs::text, c.flags, c.source_sha256,"        \
  " c.proposer, " src ", c.generation"
/* 0007: the diagnosis and profile of the evaluation, or of the one it
 * reuses (columns 33..35; queries without them leave them ""). */
#define KF_PROFILE_COLS                                                      \
  " pf.bound, pf.bandwidth_fraction,"                                       \
  " (to_jsonb(pf) - 'evaluation_id' - 'created_at')::text"
/* 0012: torch.compile's time in the evaluation and the speedup over it
 * (columns 36..37), 0013: the same for max-autotune-no-cudagraphs (38..39);
 * queries without them leave them 0.  A showdown row keeps its search
 * evaluation's: torch.compile is not re-timed there. */
#define KF_BASELINE_COLS ", e.compile_time_ns_median, e.speedup_compile,"   \
  " e.max_autotune_time_ns_median, e.speedup_max_autotune"
#define KF_EVAL_COLS                                                         \
  " e.id, e.task_id, e.device_class_id, d.kind, d.model, d.cc_major,"       \
  " d.cc_minor, d.isa, e.outcome::text, e.stage, e.reason,"                 \
  " e.time_ns_median, e.time_ns_spread, e.ref_time_ns_median,"              \
  " e.ref_time_ns_spread, e.speedup, e.achieved_gbps, e.roofline_fraction,"\
  " e.reused_from, c.campaign_id, e.repetitions, e.measurements,"          \
  " e.timing_dependent, false, e.environment_id," KF_PROFILE_COLS         \
  KF_BASELINE_COLS
#define KF_NO_EVAL_COLS                                                      \
  " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"      \
  " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, c.campaign_id,"         \
  " NULL, NULL, NULL, NULL, NULL"
#define KF_EVAL_FROM                                                         \
  " FROM evaluations e JOIN candidates c ON c.id = e.candidate_id"          \
  " JOIN device_classes d ON d.id = e.device_class_id"                     \
  " LEFT JOIN eval_profiles pf"                                             \
  "  ON pf.evaluation_id = COALESCE(e.reused_from, e.id)"

/* The ranking (KF_EVALS_BEST, kf_store_best, the counts' best): a
 * campaign's ok evaluations joined to the entry of a finished showdown of
 * their class, if any (x).  A candidate the showdown re-timed ok shows the
 * showdown's numbers (column 32 true); one that failed it is left out --
 * unless it failed for the worker's reasons (infra_error: it was not
 * judged), which leaves it its search numbers.
 * Order: best_candidate_id, then showdown rows, then by speedup (column
 * 24), then by time (20). */
#define KF_SD(col) " CASE WHEN x.outcome = 'ok' THEN x." col " ELSE e." col " END"
#define KF_RANKED_SQL_W(src, limit, where, best)                                            \
  "SELECT" KF_CAND_COLS(src) ","                                             \
  " e.id, e.task_id, e.device_class_id, d.kind, d.model, d.cc_major,"       \
  " d.cc_minor, d.isa, e.outcome::text, e.stage, e.reason,"                 \
  KF_SD("time_ns_median") "," KF_SD("time_ns_spread") ","                    \
  KF_SD("ref_time_ns_median") "," KF_SD("ref_time_ns_spread") ","            \
  KF_SD("speedup") "," KF_SD("achieved_gbps") ","                            \
  KF_SD("roofline_fraction") ","                                             \
  " e.reused_from, c.campaign_id," KF_SD("repetitions") ","                  \
  " e.measurements, e.timing_dependent, COALESCE(x.outcome = 'ok', false),"  \
  " e.environment_id," KF_PROFILE_COLS KF_BASELINE_COLS KF_EVAL_FROM       \
  " JOIN campaigns k ON k.id = e.campaign_id"                               \
  " LEFT JOIN LATERAL (SELECT se.outcome, se.time_ns_median,"               \
  "  se.time_ns_spread, s.ref_time_ns_median, s.ref_time_ns_spread,"       \
  "  se.speedup, se.achieved_gbps, se.roofline_fraction, se.repetitions"   \
  "  FROM showdowns s JOIN showdown_entries se ON se.showdown_id = s.id"   \
  "  WHERE s.campaign_id = e.campaign_id"                                  \
  "  AND s.device_class_id = e.device_class_id"                            \
  "  AND se.candidate_id = e.candidate_id AND s.state = 'done'"            \
  "  AND se.outcome IS NOT NULL) x ON true"                                \
  " WHERE e.campaign_id = $1::bigint AND e.outcome = 'ok'" where            \
  " AND (x.outcome IS NULL OR x.outcome IN ('ok', 'infra_error'))"         \
  " ORDER BY COALESCE(e.candidate_id = " best ", false) DESC,"             \
  " 32 DESC, 24 DESC NULLS LAST, 20, e.id LIMIT " limit
#define KF_RANKED_SQL(src, limit)                                            \
  KF_RANKED_SQL_W(src, limit, "", "k.best_candidate_id")

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
    c->repetitions = (uint32_t)kf_store__i64(r, i, 28);
    c->measurements = (uint32_t)kf_store__i64(r, i, 29);
    c->timing_dependent = PQgetvalue(r, i, 30)[0] == 't';
    c->showdown = PQgetvalue(r, i, 31)[0] == 't';
    c->environment_id = kf_store__i64(r, i, 32);
    c->bound = c->profile_json = "";
    if (PQnfields(r) > 35) {
      c->bound = kf_store__put(&cur, r, i, 33);
      c->bw_frac = kf_store__f64(r, i, 34);
      c->profile_json = kf_store__put(&cur, r, i, 35);
    }
    if (PQnfields(r) > 37) {
      c->compile_time_ns_median = kf_store__f64(r, i, 36);
      c->speedup_compile = kf_store__f64(r, i, 37);
    }
    if (PQnfields(r) > 39) {
      c->max_autotune_time_ns_median = kf_store__f64(r, i, 38);
      c->speedup_max_autotune = kf_store__f64(r, i, 39);
    }
  }
  *out = l;
  return 0;
}

void kf_store_list_free(kf_cand_list *l) { free(l); }

/* -------------------------------------------------------- campaigns -- */

/* The problem key hashes what decides a number on the problem's side:
 * the canonical spec hash, the reference source and the language. */
static const kf_store__stmt ST_CAMP_CREATE = {
    KF_STMT_CAMP_CREATE,
    "WITH v AS (SELECT encode(sha256(convert_to($6, 'UTF8')), 'hex') AS ref)"
    " INSERT INTO campaigns (name, problem, language, backend, spec_json,"
    " reference_source, templates, budget_evals, budget_seconds,"
    " population, plateau_evals, target_roofline, search_seed, floor_bytes,"
    " spec_sha256, reference_sha256, problem_key, fresh, showdown_top,"
    " device_class_id, profile)"
    " SELECT $1, $2, $3, $4::smallint, $5::bytea, $6, $7::jsonb, $8::int,"
    " $9::int, $10::int, $11::int, $12::float8, $13::bigint, $14::float8,"
    " $15, v.ref, encode(sha256(convert_to('kf-problem-v1' || chr(10) || $15"
    " || chr(10) || v.ref || chr(10) || $3, 'UTF8')), 'hex'),"
    " $16::boolean, $17::int, NULLIF($18::bigint, 0),"
    " COALESCE(NULLIF($19, ''), 'top:5') FROM v RETURNING id"};

static bool kf_store__hex64(const char *h) {
  if (!h || strlen(h) != 64) return false;
  for (int i = 0; i < 64; i++)
    if (!strchr("0123456789abcdef", h[i])) return false;
  return true;
}

int kf_store_campaign_create(kf_store *s, const kf_campaign_new *c,
                             int64_t *id) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if (!c->name || !c->problem || !c->templates_json ||
      (c->backend != 1 && c->backend != 2) || c->budget_evals == 0 ||
      c->budget_seconds == 0 || c->population == 0)
    return kf_store__fail(s, KF_EINVAL, "campaign: missing or bad field");
  if (!kf_store__hex64(c->spec_sha256))
    return kf_store__fail(s, KF_EINVAL, "campaign: spec_sha256 must be 64"
                          " lowercase hex digits");
  if (c->showdown_top > 64)
    return kf_store__fail(s, KF_EINVAL, "campaign: showdown_top over 64");
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
  char be[8], bev[16], bs[16], pop[16], pl[16], tr[32], seed[24], fb[32],
      sdt[16];
  snprintf(sdt, sizeof sdt, "%u", c->showdown_top ? c->showdown_top : 5);
  char dcs[24];
  kf_store__itoa(dcs, sizeof dcs, c->device_class_id);
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
                     fb,
                     c->spec_sha256,
                     c->fresh ? "t" : "f",
                     sdt,
                     dcs,
                     c->profile ? c->profile : ""};
  PGresult *r;
  rc = kf_store__exec(s, &ST_CAMP_CREATE, 19, p, false, &r);
  kf_store__buf_free(&spec);
  if (rc) return rc;
  *id = kf_store__i64(r, 0, 0);
  PQclear(r);
  return 0;
}

static const kf_store__stmt ST_CAMP_GET = {
    KF_STMT_CAMP_GET,
    "SELECT c.id, c.name, c.problem, c.language, c.state,"
    " COALESCE(c.stop_reason, ''),"
    " c.backend, c.spec_json, c.reference_source, c.templates::text,"
    " COALESCE((SELECT string_agg(encode(sha256(convert_to(t->>'source',"
    " 'UTF8')), 'hex'), ',' ORDER BY o)"
    " FROM jsonb_array_elements(c.templates) WITH ORDINALITY AS x(t, o)),"
    " ''), c.budget_evals, c.budget_seconds, c.population, c.plateau_evals,"
    " c.target_roofline, c.search_seed, c.floor_bytes,"
    " COALESCE(c.best_candidate_id, 0),"
    " (extract(epoch FROM COALESCE(c.finished_at, now()) - c.started_at)"
    " * 1000)::bigint,"
    " c.problem_key, c.fresh, c.showdown_top, c.showdown,"
    " c.best_from_showdown, COALESCE(c.device_class_id, 0), d.kind, d.model, d.cc_major,"
    " d.cc_minor, d.isa, COALESCE(c.port_from_campaign, 0),"
    " COALESCE(c.port_from_class, 0), f.kind, f.model, f.cc_major,"
    " f.cc_minor, f.isa, c.profile"
    " FROM campaigns c LEFT JOIN device_classes d ON d.id = c.device_class_id"
    " LEFT JOIN device_classes f ON f.id = c.port_from_class"
    " WHERE c.id = $1::bigint"};

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
  c->problem_key = kf_store__put(&cur, r, 0, 20);
  c->fresh = PQgetvalue(r, 0, 21)[0] == 't';
  c->showdown_top = (uint32_t)kf_store__i64(r, 0, 22);
  c->showdown = kf_store__put(&cur, r, 0, 23);
  c->best_from_showdown = PQgetvalue(r, 0, 24)[0] == 't';
  c->device_class_id = kf_store__i64(r, 0, 25);
  c->port_from_campaign = kf_store__i64(r, 0, 31);
  c->port_from_class = kf_store__i64(r, 0, 32);
  for (int k = 0; k < 2; k++) {
    kf_device_class *dc = k ? &c->port_dc : &c->dc;
    int col = k ? 33 : 26;
    if (PQgetisnull(r, 0, col)) continue;
    dc->kind = (int)kf_store__i64(r, 0, col);
    snprintf(dc->model, sizeof dc->model, "%s", PQgetvalue(r, 0, col + 1));
    dc->cc_major = (uint32_t)kf_store__i64(r, 0, col + 2);
    dc->cc_minor = (uint32_t)kf_store__i64(r, 0, col + 3);
    snprintf(dc->isa, sizeof dc->isa, "%s", PQgetvalue(r, 0, col + 4));
  }
  c->profile = kf_store__put(&cur, r, 0, 38);
  PQclear(r);
  *out = c;
  return 0;
}

void kf_store_campaign_free(kf_campaign *c) { free(c); }

static const kf_store__stmt ST_CAMP_RUNNING = {
    KF_STMT_CAMP_RUNNING,
    "SELECT id FROM campaigns WHERE state IN ('running', 'showdown')"
    " ORDER BY id"};

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

static const kf_store__stmt ST_CAMP_COUNTS = {
    KF_STMT_CAMP_COUNTS,
    "SELECT (SELECT count(*) FROM eval_keys WHERE campaign_id = $1::bigint"
    "  AND task_id IS NOT NULL),"
    " (SELECT count(*) FROM evaluations WHERE campaign_id = $1::bigint"
    "  AND reused_from IS NOT NULL),"
    " (SELECT count(*) FROM eval_keys k JOIN tasks t ON t.id = k.task_id"
    "  WHERE k.campaign_id = $1::bigint AND t.state IN ('queued', 'leased')),"
    " (SELECT count(*) FROM candidates p WHERE p.campaign_id = $1::bigint"
    "  AND p.proposer <> 'evolution'"
    "  AND (NOT EXISTS (SELECT 1 FROM eval_keys k WHERE k.candidate_id = p.id)"
    "  OR EXISTS (SELECT 1 FROM eval_keys k JOIN tasks t ON t.id = k.task_id"
    "  WHERE k.candidate_id = p.id AND t.state IN ('queued', 'leased'))))"};

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
  out->proposals_waiting = (uint32_t)kf_store__i64(r, 0, 3);
  PQclear(r);
  /* The best is the ranking's first row, so the status, the top list and
   * GetBest can never name different candidates or numbers. */
  kf_cand_list *best = NULL;
  if ((rc = kf_store_evaluations(s, id, KF_EVALS_BEST, 1, &best))) return rc;
  if (best->n) {
    const kf_cand_row *b = &best->v[0];
    out->best_speedup = b->speedup;
    out->best_time_ns = b->time_ns_median;
    out->ref_time_ns = b->ref_time_ns_median;
    out->roofline_fraction = b->roofline_fraction;
    out->best_spread = b->time_ns_spread;
    out->best_repetitions = b->repetitions;
    out->best_measurements = b->measurements;
    out->best_showdown = b->showdown;
  }
  kf_store_list_free(best);
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
    "WITH sd AS (UPDATE showdowns SET state = 'failed', reason = $3,"
    " finished_at = now() WHERE campaign_id = $1::bigint"
    " AND state = 'running' AND EXISTS (SELECT 1 FROM campaigns"
    " WHERE id = $1::bigint AND state IN ('running', 'showdown')))"
    " UPDATE campaigns SET state = $2, stop_reason = $3, finished_at = now(),"
    " showdown = CASE WHEN state = 'showdown' THEN 'failed: ' || $3"
    " ELSE showdown END"
    " WHERE id = $1::bigint AND state IN ('running', 'showdown') RETURNING id"};

static const kf_store__stmt ST_CAMP_CANCEL = {
    KF_STMT_CAMP_CANCEL,
    "WITH u AS (UPDATE tasks SET state = 'failed', last_error = $2,"
    " finished_at = now() WHERE campaign_id = $1::bigint"
    " AND state = 'queued' RETURNING 1) SELECT count(*) FROM u"};

static const kf_store__stmt ST_CAMP_SET_OWNER = {
    KF_STMT_CAMP_SET_OWNER,
    "UPDATE campaigns SET owner_cred = $2::bigint WHERE id = $1::bigint"
    " AND owner_cred IS NULL"};

static const kf_store__stmt ST_CAMP_OWNER = {
    KF_STMT_CAMP_OWNER,
    "SELECT COALESCE(owner_cred, 0) FROM campaigns WHERE id = $1::bigint"};

int kf_store_campaign_set_owner(kf_store *s, int64_t id, int64_t cred_id) {
  int rc = kf_store__ready(s);
  if (rc || cred_id <= 0) return rc;
  char ids[24], cid[24];
  kf_store__itoa(ids, sizeof ids, id);
  kf_store__itoa(cid, sizeof cid, cred_id);
  const char *p[] = {ids, cid};
  return kf_store__exec(s, &ST_CAMP_SET_OWNER, 2, p, false, NULL);
}

int kf_store_campaign_owner(kf_store *s, int64_t id, int64_t *owner,
                            bool *found) {
  *owner = 0;
  *found = false;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char ids[24];
  kf_store__itoa(ids, sizeof ids, id);
  const char *p[] = {ids};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_OWNER, 1, p, false, &r))) return rc;
  if (PQntuples(r) == 1) {
    *found = true;
    *owner = kf_store__i64(r, 0, 0);
  }
  PQclear(r);
  return 0;
}

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
    if ((rc = kf_store__classes_end(s, ids, q[1])))
      return kf_store__rollback(s, rc);
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

/* numeric, not bigint: mem_bytes is whatever JSON number a worker sent. */
static const kf_store__stmt ST_BACKEND_MEMORY = {
    KF_STMT_BACKEND_MEMORY,
    "SELECT COALESCE(max(CASE WHEN jsonb_typeof(w.device->'mem_bytes')"
    " = 'number' THEN least((w.device->>'mem_bytes')::numeric,"
    " 9223372036854775807) END), 0)::bigint, count(*)"
    " FROM workers w JOIN device_classes d ON d.id = w.device_class_id"
    " WHERE d.kind = $1::smallint"};

int kf_store_backend_memory(kf_store *s, int backend, uint64_t *max_mem,
                            uint32_t *workers) {
  *max_mem = 0;
  *workers = 0;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24];
  kf_store__itoa(a, sizeof a, backend);
  const char *p[] = {a};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_BACKEND_MEMORY, 1, p, false, &r))) return rc;
  int64_t m = kf_store__i64(r, 0, 0);
  *max_mem = m > 0 ? (uint64_t)m : 0;
  *workers = (uint32_t)kf_store__i64(r, 0, 1);
  PQclear(r);
  return 0;
}

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
    "  AND e.reused_from IS NOT NULL),"
    " CASE WHEN bool_and(w.environment_id IS NOT NULL)"
    "  AND count(DISTINCT w.environment_id) = 1"
    "  THEN min(w.environment_id) ELSE 0 END,"
    " count(*) FILTER (WHERE 'showdown' = ANY(w.task_kinds))"
    " FROM workers w JOIN device_classes d ON d.id = w.device_class_id"
    " JOIN campaigns c ON c.id = $1::bigint"
    " WHERE d.kind = c.backend AND 'eval' = ANY(w.task_kinds)"
    " AND (c.language <> 'python' OR ('torch' = ANY(w.task_kinds) AND"
    "  (c.backend <> 2 OR 'torch.cuda' = ANY(w.task_kinds))))"
    " AND (c.device_class_id IS NULL OR c.device_class_id = d.id)"
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
        .issued = (uint32_t)kf_store__i64(r, i, 5),
        .environment_id = kf_store__i64(r, i, 6),
        .showdown_workers = (uint32_t)kf_store__i64(r, i, 7)};
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
    KF_RANKED_SQL("NULL", "NULLIF($2::bigint, 0)")};

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

static const kf_store__stmt ST_CAMP_EVALS_CAND = {
    KF_STMT_CAMP_EVALS_CAND,
    KF_EVALS_SQL(" AND e.candidate_id = $3::bigint", "e.id")};

int kf_store_candidate_evaluations(kf_store *s, int64_t campaign_id,
                                   int64_t candidate_id, kf_cand_list **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], c[24];
  kf_store__itoa(a, sizeof a, campaign_id);
  kf_store__itoa(c, sizeof c, candidate_id);
  const char *p[] = {a, "0", c};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_EVALS_CAND, 3, p, false, &r)))
    return rc;
  rc = kf_store__cand_list(s, r, false, out);
  PQclear(r);
  return rc;
}

static const kf_store__stmt ST_CAMP_BEST = {
    KF_STMT_CAMP_BEST, KF_RANKED_SQL("c.source", "1")};

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

/* The class's ranking: its own best (campaign_classes) first. */
static const kf_store__stmt ST_CAMP_BEST_CLASS = {
    KF_STMT_CAMP_BEST_CLASS,
    KF_RANKED_SQL_W("c.source", "1", " AND e.device_class_id = $2::bigint",
                    "(SELECT cc.best_candidate_id FROM campaign_classes cc"
                    " WHERE cc.campaign_id = $1::bigint"
                    " AND cc.device_class_id = $2::bigint)")};

int kf_store_best_class(kf_store *s, int64_t campaign_id, int64_t dc,
                        kf_cand_list **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24];
  kf_store__itoa(a, sizeof a, campaign_id);
  kf_store__itoa(b, sizeof b, dc);
  const char *p[] = {a, b};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_BEST_CLASS, 2, p, false, &r)))
    return rc;
  if (PQntuples(r) == 0) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOTFOUND,
                          "campaign %lld has no successful evaluation on"
                          " that device class yet", (long long)campaign_id);
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
 * task and the task's state (in the stage column), and its campaign.
 * Another campaign's key is reusable only while no measurement of it
 * failed: a failure is one worker's word, and reused it bound every
 * later campaign -- a worker that answered wrong_answer to good kernels
 * kept them out of the search for good after it left (red team
 * 2026-12-01-s3b); such a key is measured again, and the campaign's own
 * verdict stands for it (its showdown re-verifies the best). */
static const kf_store__stmt ST_CAMP_KEYS = {
    KF_STMT_CAMP_KEYS,
    "SELECT k.candidate_id, '', '{}', k.flags, k.source_sha256, '', NULL,"
    " 0, CASE WHEN k.campaign_id = $1::bigint THEN e.id"
    "  WHEN e.environment_id = NULLIF($3::bigint, 0)"
    "  AND NOT e.timing_dependent AND e.reused_from IS NULL"
    "  AND e.outcome = 'ok' AND NOT EXISTS (SELECT 1 FROM eval_keys k2"
    "  JOIN evaluations m ON m.task_id = k2.task_id"
    "  WHERE k2.problem_key = k.problem_key"
    "  AND k2.source_sha256 = k.source_sha256 AND k2.flags = k.flags"
    "  AND k2.device_class_id = k.device_class_id"
    "  AND m.environment_id = e.environment_id AND m.outcome <> 'ok'"
    "  AND NOT m.timing_dependent) THEN e.id END,"
    " k.task_id, k.device_class_id, NULL, NULL, NULL, NULL, NULL,"
    " NULL, t.state::text, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, k.campaign_id, NULL, NULL, NULL, NULL, NULL FROM eval_keys k"
    " JOIN campaigns me ON me.id = $1::bigint"
    " LEFT JOIN tasks t ON t.id = k.task_id"
    " LEFT JOIN evaluations e ON e.task_id = k.task_id"
    " WHERE k.device_class_id = $2::bigint"
    " AND (k.campaign_id = $1::bigint OR (NOT me.fresh"
    " AND k.task_id IS NOT NULL AND k.problem_key = me.problem_key"
    " AND (k.source_sha256 = ANY(string_to_array($4, ','))"
    "  OR k.source_sha256 IN (SELECT source_sha256 FROM candidates"
    "  WHERE campaign_id = $1::bigint))))"};

int kf_store_eval_keys(kf_store *s, int64_t campaign_id, int64_t dc,
                       int64_t env, const char *shas, kf_cand_list **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24], e[24];
  kf_store__itoa(a, sizeof a, campaign_id);
  kf_store__itoa(b, sizeof b, dc);
  kf_store__itoa(e, sizeof e, env);
  const char *p[] = {a, b, e, shas ? shas : ""};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_KEYS, 4, p, false, &r))) return rc;
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

/* The measurements a reuse aggregates: every one of the key of the
 * evaluation o (its campaign ok, its candidate oc) -- same class, same
 * environment, same problem_key, same source and flags -- that was
 * measured by its own task and not timing-dependent. */
#define KF_SAME_KEY                                                          \
  " FROM evaluations m JOIN candidates mc ON mc.id = m.candidate_id"        \
  " JOIN campaigns mk ON mk.id = m.campaign_id"                             \
  " WHERE m.device_class_id = o.device_class_id"                            \
  " AND m.environment_id = o.environment_id AND m.reused_from IS NULL"      \
  " AND m.task_id IS NOT NULL AND NOT m.timing_dependent"                   \
  " AND mk.problem_key = ok.problem_key"                                    \
  " AND mc.source_sha256 = oc.source_sha256 AND mc.flags = oc.flags"
#define KF_MEDIAN(col) " percentile_cont(0.5) WITHIN GROUP (ORDER BY m." col ")"

/* One statement: new candidates, then one eval_keys row per plan (with
 * its task, or as a duplicate), then the tasks of the keys that went in
 * and the reused evaluations of the duplicate rows that went in.  A key
 * this campaign took meanwhile makes ON CONFLICT skip that row and so its
 * task.  The foreign keys from eval_keys to tasks and from evaluations to
 * candidates are checked at the end of the statement, when the rows
 * exist.  The result is the ids of the tasks created, then (second column
 * true) the candidate ids whose reused evaluation went in.
 *
 * A reuse starts from the plan's evaluation o, which must be a measured,
 * not timing-dependent evaluation of another campaign of the same
 * problem_key on the plan's class and environment (and this campaign not
 * fresh), and aggregates every measurement of o's key (KF_SAME_KEY): when
 * one of them failed, the reuse is the latest failure (a candidate once
 * wrong is wrong -- though since 2026-12-01 ST_CAMP_KEYS offers no key
 * with a failed measurement for reuse, so only a failure stored between
 * the two statements gets here); else ok, with the median of the medians (speedup =
 * reference median / median), the spread the larger of the median spread
 * and the measurements' own range over their median, the repetitions
 * summed and their count in `measurements`; reused_from names the latest
 * measurement, whose EvalResult it carries. */
static const kf_store__stmt ST_CAMP_SCHEDULE = {
    KF_STMT_CAMP_SCHEDULE,
    "WITH p AS (SELECT * FROM unnest($2::boolean[], $3::bigint[],"
    " $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[],"
    " $9::text[], $10::int[], $11::text[], $12::bigint[], $13::bigint[],"
    " $14::bytea[], $15::int[], $16::int[], $17::int[], $18::bigint[],"
    " $19::bigint[])"
    " WITH ORDINALITY AS x(isnew, cand, dc, tmpl, knobs, source, proposer,"
    " parents, gen, flags, task, dup, payload, ma, tmo, prio, reuse, env, o)),"
    " me AS (SELECT id, problem_key, fresh FROM campaigns"
    " WHERE id = $1::bigint),"
    " c AS (INSERT INTO candidates (id, campaign_id, template_name, knobs,"
    " source, source_sha256, flags, proposer, parents, generation,"
    " device_class_id)"
    " SELECT cand, $1::bigint, tmpl, knobs::jsonb, source,"
    " encode(sha256(convert_to(source, 'UTF8')), 'hex'), flags, proposer,"
    " parents::bigint[], gen, dc FROM p WHERE isnew ORDER BY o"
    " RETURNING id, source_sha256, flags),"
    " k AS (INSERT INTO eval_keys (candidate_id, device_class_id,"
    " campaign_id, source_sha256, flags, task_id, duplicate_of, problem_key)"
    " SELECT p.cand, p.dc, $1::bigint,"
    " COALESCE(c.source_sha256, old.source_sha256),"
    " COALESCE(c.flags, old.flags), NULLIF(p.task, 0), NULLIF(p.dup, 0),"
    " me.problem_key"
    " FROM p CROSS JOIN me LEFT JOIN c ON c.id = p.cand"
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
    " reused_from, environment_id, timing_dependent, repetitions,"
    " measurements, compile_time_ns_median, speedup_compile,"
    " max_autotune_time_ns_median, speedup_max_autotune)"
    " SELECT p.cand, $1::bigint, p.dc, NULL, src.worker_id, src.outcome,"
    " src.stage, src.reason,"
    " CASE WHEN a.bad = 0 THEN a.tm END, CASE WHEN a.bad = 0 THEN a.ts END,"
    " CASE WHEN a.bad = 0 THEN a.rm END, CASE WHEN a.bad = 0 THEN a.rs END,"
    " CASE WHEN a.bad = 0 AND a.tm > 0 AND a.rm > 0 THEN a.rm / a.tm END,"
    " CASE WHEN a.bad = 0 THEN a.gbps END,"
    " CASE WHEN a.bad = 0 THEN a.roof END,"
    " src.result, src.id, src.environment_id, false,"
    " CASE WHEN a.bad = 0 THEN a.reps ELSE src.repetitions END, a.n,"
    " CASE WHEN a.bad = 0 THEN a.ct END,"
    " CASE WHEN a.bad = 0 AND a.tm > 0 AND a.ct > 0 THEN a.ct / a.tm END,"
    " CASE WHEN a.bad = 0 THEN a.mt END,"
    " CASE WHEN a.bad = 0 AND a.tm > 0 AND a.mt > 0 THEN a.mt / a.tm END"
    " FROM p JOIN k ON k.candidate_id = p.cand AND k.device_class_id = p.dc"
    " AND k.task_id IS NULL"
    " JOIN me ON NOT me.fresh"
    " JOIN evaluations o ON o.id = p.reuse AND o.device_class_id = p.dc"
    " AND o.campaign_id <> $1::bigint AND o.reused_from IS NULL"
    " AND o.task_id IS NOT NULL AND NOT o.timing_dependent"
    " AND o.environment_id = p.env"
    " JOIN candidates oc ON oc.id = o.candidate_id"
    " JOIN campaigns ok ON ok.id = o.campaign_id"
    " AND ok.problem_key = me.problem_key"
    " CROSS JOIN LATERAL (SELECT count(*) AS n,"
    " count(*) FILTER (WHERE m.outcome <> 'ok') AS bad,"
    KF_MEDIAN("time_ns_median") " AS tm,"
    " GREATEST(" KF_MEDIAN("time_ns_spread") ", CASE WHEN count(*) > 1 THEN"
    " (max(m.time_ns_median) - min(m.time_ns_median)) / NULLIF("
    KF_MEDIAN("time_ns_median") ", 0) END) AS ts,"
    KF_MEDIAN("ref_time_ns_median") " AS rm,"
    KF_MEDIAN("ref_time_ns_spread") " AS rs,"
    KF_MEDIAN("achieved_gbps") " AS gbps,"
    KF_MEDIAN("roofline_fraction") " AS roof,"
    /* the compile baselines (0012, 0013): medians of the measurements
     * that timed them */
    KF_MEDIAN("compile_time_ns_median") " AS ct,"
    KF_MEDIAN("max_autotune_time_ns_median") " AS mt,"
    " sum(m.repetitions)::int AS reps" KF_SAME_KEY ") a"
    " CROSS JOIN LATERAL (SELECT m.*" KF_SAME_KEY
    " ORDER BY (m.outcome <> 'ok') DESC, m.id DESC LIMIT 1) src"
    " ORDER BY p.o ON CONFLICT DO NOTHING RETURNING candidate_id)"
    " SELECT id, false FROM t UNION ALL SELECT candidate_id, true FROM r"};

int kf_store_schedule(kf_store *s, int64_t campaign_id,
                      const kf_eval_plan *plans, size_t n, bool *scheduled) {
  int rc = kf_store__ready(s);
  if (rc || n == 0) return rc;
  enum { NCOL = 18 };
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
    kf_store__arr_i64(&a[17], pl->environment_id);
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
    " AND (c.language <> 'python' OR ('torch' = ANY(w.task_kinds) AND"
    "  (c.backend <> 2 OR 'torch.cuda' = ANY(w.task_kinds))))"
    " GROUP BY w.device_class_id ORDER BY 1"};

static const kf_store__stmt ST_CAMP_PROPOSE = {
    KF_STMT_CAMP_PROPOSE,
    "INSERT INTO candidates (campaign_id, template_name, knobs, source,"
    " source_sha256, flags, proposer)"
    " VALUES ($1::bigint, $2, $3::jsonb, $4,"
    " encode(sha256(convert_to($4, 'UTF8')), 'hex'), $5, $6) RETURNING id"};

/* The duplicate check and the insert of kf_store_propose, inside the
 * caller's transaction (rolled back by the caller on error). */
static int propose_in_tx(kf_store *s, const char *cid,
                         const char *template_name, const char *knobs_json,
                         const char *flags, const char *source,
                         const char *proposer, int64_t *candidate_id,
                         bool *duplicate) {
  PGresult *r;
  int rc;
  const char *p1[] = {cid, source, flags};
  if ((rc = kf_store__exec(s, &ST_CAMP_PROPOSE_CHECK, 3, p1, false, &r)))
    return rc;
  bool dup = PQntuples(r) > 0;
  int64_t owner = 0;
  for (int i = 0; i < PQntuples(r); i++) {
    if (PQgetisnull(r, i, 1)) dup = false;
    else if (!owner) owner = kf_store__i64(r, i, 1);
  }
  PQclear(r);
  if (dup) {
    *candidate_id = owner;
    *duplicate = true;
    return 0;
  }
  const char *p2[] = {cid, template_name ? template_name : "",
                      knobs_json ? knobs_json : "{}", source, flags,
                      proposer};
  if ((rc = kf_store__exec(s, &ST_CAMP_PROPOSE, 6, p2, false, &r))) return rc;
  *candidate_id = kf_store__i64(r, 0, 0);
  PQclear(r);
  return 0;
}

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
  if ((rc = kf_store__begin(s))) return rc;
  int64_t id = 0;
  bool dup = false;
  if ((rc = propose_in_tx(s, cid, template_name, knobs_json, flags, source,
                          proposer, &id, &dup)) ||
      (rc = kf_store__commit(s)))
    return kf_store__rollback(s, rc);
  *candidate_id = id;
  *duplicate = dup;
  return 0;
}

/* Appends the proposal's template unless the campaign holds its source
 * already, or its name names another source, or the list is full; the
 * columns say which (the search reads at most 64 templates). */
static const kf_store__stmt ST_CAMP_PROPOSE_TEMPLATE = {
    KF_STMT_CAMP_PROPOSE_TEMPLATE,
    "WITH c AS (SELECT templates FROM campaigns WHERE id = $1::bigint),"
    " n AS (SELECT COALESCE(NULLIF($3, ''), 'proposal-' ||"
    "  left(encode(sha256(convert_to($2, 'UTF8')), 'hex'), 12)) AS name),"
    " same AS (SELECT t->>'name' AS name FROM c,"
    "  jsonb_array_elements(c.templates) t WHERE t->>'source' = $2 LIMIT 1),"
    " taken AS (SELECT 1 FROM c, n, jsonb_array_elements(c.templates) t"
    "  WHERE t->>'name' = n.name AND t->>'source' <> $2),"
    " up AS (UPDATE campaigns SET templates = templates || jsonb_build_array("
    "  jsonb_build_object('name', n.name, 'file', '', 'source', $2::text,"
    "  'knobs', $4::jsonb, 'origin', 'proposer', 'proposer', $5::text))"
    "  FROM n WHERE id = $1::bigint AND NOT EXISTS (SELECT 1 FROM same)"
    "  AND NOT EXISTS (SELECT 1 FROM taken)"
    "  AND jsonb_array_length(templates) < 64 RETURNING 1)"
    " SELECT (SELECT count(*) FROM c), COALESCE((SELECT name FROM same),"
    " n.name), EXISTS (SELECT 1 FROM same), EXISTS (SELECT 1 FROM taken),"
    " EXISTS (SELECT 1 FROM up) FROM n"};

int kf_store_propose_template(kf_store *s, int64_t campaign_id,
                              const char *template_name,
                              const char *knob_space_json,
                              const char *knobs_json, const char *flags,
                              const char *source, const char *proposer,
                              int64_t *candidate_id, bool *duplicate,
                              char name_out[64]) {
  *candidate_id = 0;
  *duplicate = false;
  name_out[0] = '\0';
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if (!source || !flags || !proposer || !knob_space_json)
    return kf_store__fail(s, KF_EINVAL, "proposal without source or knobs");
  char cid[24];
  kf_store__itoa(cid, sizeof cid, campaign_id);
  if ((rc = kf_store__begin(s))) return rc;
  const char *p[] = {cid, source, template_name ? template_name : "",
                     knob_space_json, proposer};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CAMP_PROPOSE_TEMPLATE, 5, p, false, &r)))
    return kf_store__rollback(s, rc);
  bool found = kf_store__i64(r, 0, 0) > 0;
  bool same = PQgetvalue(r, 0, 2)[0] == 't';
  bool taken = PQgetvalue(r, 0, 3)[0] == 't';
  bool added = PQgetvalue(r, 0, 4)[0] == 't';
  char name[64];
  snprintf(name, sizeof name, "%s", PQgetvalue(r, 0, 1));
  PQclear(r);
  if (!found)
    return kf_store__rollback(
        s, kf_store__fail(s, KF_ENOTFOUND, "campaign %s not found", cid));
  if (!same && taken)
    return kf_store__rollback(
        s, kf_store__fail(s, KF_EEXIST,
                          "template_name '%s' names another template of"
                          " campaign %s (with another source)", name, cid));
  if (!same && !added)
    return kf_store__rollback(
        s, kf_store__fail(s, KF_ESTATE,
                          "campaign %s holds 64 templates: it takes no more"
                          " proposals with knobs", cid));
  int64_t id = 0;
  bool dup = false;
  if ((rc = propose_in_tx(s, cid, name, knobs_json, flags, source, proposer,
                          &id, &dup)) ||
      (rc = kf_store__commit(s)))
    return kf_store__rollback(s, rc);
  *candidate_id = id;
  *duplicate = dup;
  memcpy(name_out, name, sizeof name);
  return 0;
}

/* --------------------------------------------------------- showdown -- */

static const kf_store__stmt ST_CAMP_CANDS = {
    KF_STMT_CAMP_CANDS,
    "SELECT" KF_CAND_COLS("c.source") "," KF_NO_EVAL_COLS
    " FROM candidates c WHERE c.campaign_id = $1::bigint"
    " AND c.id = ANY($2::bigint[])"};

int kf_store_candidates(kf_store *s, int64_t campaign_id, const int64_t *ids,
                        size_t n, kf_cand_list **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  kf_store__buf arr = {0};
  kf_store__arr_open(&arr);
  for (size_t i = 0; i < n; i++) kf_store__arr_i64(&arr, ids[i]);
  kf_store__arr_close(&arr);
  if (arr.oom) {
    kf_store__buf_free(&arr);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  char a[24];
  kf_store__itoa(a, sizeof a, campaign_id);
  const char *p[] = {a, arr.p};
  PGresult *r;
  rc = kf_store__exec(s, &ST_CAMP_CANDS, 2, p, false, &r);
  kf_store__buf_free(&arr);
  if (rc) return rc;
  rc = kf_store__cand_list(s, r, true, out);
  PQclear(r);
  return rc;
}

static const kf_store__stmt ST_SD_BEGIN = {
    KF_STMT_SD_BEGIN,
    "UPDATE campaigns SET state = 'showdown', stop_reason = $2,"
    " showdown = 'running' WHERE id = $1::bigint AND state = 'running'"
    " RETURNING id"};

/* The tasks, their showdowns rows and the entries, in one statement: the
 * foreign keys between them are checked at its end.  Showdown tasks get
 * priority 2, ahead of every eval task: they decide a campaign's end. */
static const kf_store__stmt ST_SD_CREATE = {
    KF_STMT_SD_CREATE,
    "WITH p0 AS (SELECT * FROM unnest($2::bigint[], $3::bigint[],"
    " $4::bytea[], $5::int[], $6::int[], $10::int[], $11::bigint[])"
    " WITH ORDINALITY AS x(dc, task, payload, tmo, ma, av, best, o)),"
    " p AS (SELECT p0.*, CASE WHEN p0.av > 0 THEN (SELECT e.worker_id"
    "  FROM evaluations e WHERE e.campaign_id = $1::bigint"
    "  AND e.device_class_id = p0.dc AND e.candidate_id = p0.best"
    "  AND e.outcome = 'ok' ORDER BY e.id DESC LIMIT 1) END AS aw FROM p0),"
    " t AS (INSERT INTO tasks (id, kind, payload, device_class_id,"
    " max_attempts, campaign_id, timeout_ms, priority, avoid_worker,"
    " avoid_until)"
    " SELECT task, 'showdown', payload, dc, ma, $1::bigint, tmo, 2, aw,"
    " CASE WHEN aw IS NOT NULL THEN now() + av * interval '1 ms' END FROM p"
    " ORDER BY o RETURNING id),"
    " sd AS (INSERT INTO showdowns (campaign_id, device_class_id, task_id)"
    " SELECT $1::bigint, p.dc, p.task FROM p JOIN t ON t.id = p.task"
    " ORDER BY p.o RETURNING id, task_id)"
    " INSERT INTO showdown_entries (showdown_id, candidate_id, position)"
    " SELECT sd.id, e.cand, e.pos FROM unnest($7::bigint[], $8::bigint[],"
    " $9::int[]) AS e(task, cand, pos) JOIN sd ON sd.task_id = e.task"};

int kf_store__showdown_insert(kf_store *s, const char *cid,
                              const kf_showdown_plan *plans, size_t n) {
  enum { NCOL = 10 };
  kf_store__buf a[NCOL] = {{0}};
  int rc = 0;
  for (int c = 0; c < NCOL; c++) kf_store__arr_open(&a[c]);
  for (size_t i = 0; i < n; i++) {
    const kf_showdown_plan *pl = &plans[i];
    if (!pl->task_id || !pl->device_class_id || !pl->payload ||
        !pl->timeout_ms || pl->n_candidates == 0 || pl->n_candidates > 64) {
      rc = kf_store__fail(s, KF_EINVAL, "showdown plan %zu: missing task,"
                          " class, payload, timeout or entries", i);
      goto out;
    }
    kf_store__arr_i64(&a[0], pl->device_class_id);
    kf_store__arr_i64(&a[1], pl->task_id);
    kf_store__arr_bytea(&a[2], pl->payload, pl->payload_len);
    kf_store__arr_i64(&a[3], pl->timeout_ms);
    kf_store__arr_i64(&a[4], pl->max_attempts ? pl->max_attempts : 2);
    kf_store__arr_i64(&a[8], pl->avoid_ms);
    kf_store__arr_i64(&a[9], pl->candidates[0]);
    for (size_t j = 0; j < pl->n_candidates; j++) {
      kf_store__arr_i64(&a[5], pl->task_id);
      kf_store__arr_i64(&a[6], pl->candidates[j]);
      kf_store__arr_i64(&a[7], (int64_t)j + 1);
    }
  }
  bool oom = false;
  const char *p[NCOL + 1];
  p[0] = cid;
  for (int c = 0; c < NCOL; c++) {
    kf_store__arr_close(&a[c]);
    oom |= a[c].oom;
    p[c + 1] = a[c].p;
  }
  if (oom) rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
  else rc = kf_store__exec(s, &ST_SD_CREATE, NCOL + 1, p, false, NULL);
out:
  for (int c = 0; c < NCOL; c++) kf_store__buf_free(&a[c]);
  return rc;
}

int kf_store_showdown_begin(kf_store *s, int64_t campaign_id,
                            const char *reason, const kf_showdown_plan *plans,
                            size_t n, bool *changed) {
  *changed = false;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if (n == 0 || !reason)
    return kf_store__fail(s, KF_EINVAL, "showdown: no plans or no reason");
  PGresult *r = NULL;
  char cid[24];
  kf_store__itoa(cid, sizeof cid, campaign_id);
  if ((rc = kf_store__begin(s))) return rc;
  const char *pb[] = {cid, reason};
  if ((rc = kf_store__exec(s, &ST_SD_BEGIN, 2, pb, false, &r)))
    return kf_store__rollback(s, rc);
  bool hit = PQntuples(r) == 1;
  PQclear(r);
  if (hit) {
    if ((rc = kf_store__exec(s, &ST_CAMP_CANCEL, 2, pb, false, NULL)))
      return kf_store__rollback(s, rc);
    if ((rc = kf_store__showdown_insert(s, cid, plans, n)))
      return kf_store__rollback(s, rc);
  }
  if ((rc = kf_store__commit(s))) return kf_store__rollback(s, rc);
  *changed = hit;
  return 0;
}

/* The final result of a done task (its output, the ShowdownResult), and
 * how many alive workers of the class could run it. */
static const kf_store__stmt ST_SD_LIST = {
    KF_STMT_SD_LIST,
    "SELECT s.id, s.device_class_id, s.task_id, s.state, t.state::text,"
    " COALESCE(t.last_error, ''), r.output, COALESCE(r.worker_id, 0),"
    " r.outcome::text, COALESCE(r.reason, ''),"
    " (extract(epoch FROM now() - s.created_at) * 1000)::bigint,"
    " t.timeout_ms, t.max_attempts, COALESCE(s.reason, ''),"
    " (SELECT count(*) FROM workers w"
    "  WHERE w.device_class_id = s.device_class_id"
    "  AND 'showdown' = ANY(w.task_kinds)"
    "  AND w.last_seen > now() - $2::bigint * interval '1 ms')"
    " FROM showdowns s JOIN tasks t ON t.id = s.task_id"
    " LEFT JOIN results r ON r.task_id = s.task_id AND r.final"
    " AND t.state = 'done'"
    " WHERE s.campaign_id = $1::bigint ORDER BY s.device_class_id"};

int kf_store_showdowns(kf_store *s, int64_t campaign_id, uint32_t alive_ms,
                       kf_showdown_list **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24];
  kf_store__itoa(a, sizeof a, campaign_id);
  kf_store__itoa(b, sizeof b, alive_ms);
  const char *p[] = {a, b};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_SD_LIST, 2, p, false, &r))) return rc;
  size_t n = (size_t)PQntuples(r);
  size_t head = sizeof(kf_showdown_list) + n * sizeof(kf_showdown_row);
  /* An unescaped bytea is shorter than its text form, so the cells'
   * bytes hold it. */
  char *blk = malloc(head + kf_store__cells_bytes(r) + 1);
  if (!blk) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  kf_showdown_list *l = (kf_showdown_list *)blk;
  l->v = (kf_showdown_row *)(blk + sizeof *l);
  l->n = n;
  char *cur = blk + head;
  for (int i = 0; i < (int)n; i++) {
    kf_showdown_row *w = &l->v[i];
    memset(w, 0, sizeof *w);
    w->id = kf_store__i64(r, i, 0);
    w->device_class_id = kf_store__i64(r, i, 1);
    w->task_id = kf_store__i64(r, i, 2);
    w->state = kf_store__put(&cur, r, i, 3);
    w->task_state = kf_store__put(&cur, r, i, 4);
    w->last_error = kf_store__put(&cur, r, i, 5);
    if (!PQgetisnull(r, i, 6)) {
      size_t len = 0;
      unsigned char *u = PQunescapeBytea(
          (const unsigned char *)PQgetvalue(r, i, 6), &len);
      if (!u) {
        free(blk);
        PQclear(r);
        return kf_store__fail(s, KF_ENOMEM, "out of memory");
      }
      memcpy(cur, u, len);
      w->output = cur;
      w->output_len = len;
      cur += len;
      PQfreemem(u);
    }
    w->worker_id = kf_store__i64(r, i, 7);
    w->result_outcome =
        PQgetisnull(r, i, 8) ? 0 : kf_outcome_parse(PQgetvalue(r, i, 8));
    w->result_reason = kf_store__put(&cur, r, i, 9);
    int64_t age = kf_store__i64(r, i, 10);
    w->age_ms = age > 0 ? (uint64_t)age : 0;
    w->timeout_ms = (uint32_t)kf_store__i64(r, i, 11);
    w->max_attempts = (uint32_t)kf_store__i64(r, i, 12);
    w->reason = kf_store__put(&cur, r, i, 13);
    w->showdown_workers = (uint32_t)kf_store__i64(r, i, 14);
  }
  PQclear(r);
  *out = l;
  return 0;
}

void kf_store_showdown_list_free(kf_showdown_list *l) { free(l); }

static const kf_store__stmt ST_SD_RECORD = {
    KF_STMT_SD_RECORD,
    "UPDATE showdowns SET state = CASE WHEN $2::boolean THEN 'done'"
    " ELSE 'failed' END, reason = NULLIF($3, ''),"
    " worker_id = NULLIF($4::bigint, 0),"
    " environment_id = (SELECT environment_id FROM workers"
    "  WHERE id = NULLIF($4::bigint, 0)),"
    " ref_time_ns_median = NULLIF($5::float8, 0),"
    " ref_time_ns_spread = $6::float8, ref_repetitions = NULLIF($7::int, 0),"
    " result = $8::bytea, finished_at = now()"
    " WHERE id = $1::bigint AND state = 'running' RETURNING task_id"};

/* Entries of an ok outcome get their numbers; speedup and achieved
 * bandwidth are derived when the harness gave none, the roofline fraction
 * always (as for an evaluation: floor time over this median). */
static const kf_store__stmt ST_SD_ENTRIES = {
    KF_STMT_SD_ENTRIES,
    "UPDATE showdown_entries se SET outcome = u.oc, stage = u.stage,"
    " reason = u.reason,"
    " time_ns_median = CASE WHEN u.oc = 'ok' THEN u.tm END,"
    " time_ns_spread = CASE WHEN u.oc = 'ok' THEN u.ts END,"
    " repetitions = NULLIF(u.reps, 0),"
    " speedup = CASE WHEN u.oc = 'ok' THEN COALESCE(u.sp,"
    "  s.ref_time_ns_median / NULLIF(u.tm, 0)) END,"
    " achieved_gbps = CASE WHEN u.oc = 'ok' THEN COALESCE(u.gbps,"
    "  CASE WHEN c.floor_bytes > 0 AND u.tm > 0"
    "  THEN c.floor_bytes / u.tm END) END,"
    " roofline_fraction = CASE WHEN u.oc = 'ok' AND u.tm > 0"
    "  AND c.floor_bytes > 0 AND jsonb_typeof(w.device->'copy_gbps') ="
    "  'number' AND (w.device->>'copy_gbps')::float8 > 0"
    "  THEN c.floor_bytes / GREATEST((w.device->>'copy_gbps')::float8,"
    "  NULLIF($11::float8, 0)) / u.tm END"
    " FROM unnest($2::bigint[], $3::kf_outcome[], $4::text[], $5::text[],"
    " $6::float8[], $7::float8[], $8::int[], $9::float8[], $10::float8[])"
    " AS u(cand, oc, stage, reason, tm, ts, reps, sp, gbps),"
    " showdowns s JOIN campaigns c ON c.id = s.campaign_id"
    " LEFT JOIN workers w ON w.id = s.worker_id"
    " WHERE s.id = $1::bigint AND se.showdown_id = s.id"
    " AND se.candidate_id = u.cand"};

static const kf_store__stmt ST_SD_CANCEL = {
    KF_STMT_SD_CANCEL,
    "UPDATE tasks SET state = 'failed', last_error = $2, lease_owner = NULL,"
    " lease_expires = NULL, finished_at = now()"
    " WHERE id = $1::bigint AND state IN ('queued', 'leased')"};

/* The search evaluation's worker: its own, or the one of the evaluation
 * it reuses (a reused row has no task and no worker of its own). */
static const kf_store__stmt ST_SD_CONFIRMED = {
    KF_STMT_SD_CONFIRMED,
    "SELECT EXISTS (SELECT 1 FROM showdowns sd"
    " JOIN showdown_entries se ON se.showdown_id = sd.id"
    " JOIN candidates c ON c.id = se.candidate_id"
    " JOIN evaluations e ON e.candidate_id = c.id"
    "  AND e.device_class_id = sd.device_class_id"
    " LEFT JOIN evaluations o ON o.id = e.reused_from"
    " WHERE sd.campaign_id = $1::bigint AND sd.device_class_id = $2::bigint"
    " AND se.candidate_id = $3::bigint AND sd.state = 'done'"
    " AND se.outcome = 'ok' AND sd.worker_id IS NOT NULL"
    " AND COALESCE(e.worker_id, o.worker_id) IS NOT NULL"
    " AND NOT kf_same_principal(COALESCE(e.worker_id, o.worker_id),"
    "  sd.worker_id))"};

int kf_store_showdown_confirmed(kf_store *s, int64_t campaign_id, int64_t dc,
                                int64_t candidate_id, bool *confirmed) {
  *confirmed = false;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24], c[24];
  kf_store__itoa(a, sizeof a, campaign_id);
  kf_store__itoa(b, sizeof b, dc);
  kf_store__itoa(c, sizeof c, candidate_id);
  const char *p[] = {a, b, c};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_SD_CONFIRMED, 3, p, false, &r))) return rc;
  *confirmed = PQgetvalue(r, 0, 0)[0] == 't';
  PQclear(r);
  return 0;
}

/* A worker's showdown text as the store keeps it: sanitized (common/
 * text.h), so that no byte of it can make PostgreSQL refuse the record --
 * which failed the campaign's every later step, its honest classes' too,
 * for one 0xff in a reason (red team 2026-12-01-s3b).  NULL stays NULL;
 * *oom is set when a copy could not be made. */
static char *sd_text(const char *t, size_t max, unsigned flags, bool *oom) {
  if (!t) return NULL;
  char *c = kf_text_sanitize_dup(t, strlen(t), max, flags);
  if (!c) *oom = true;
  return c;
}

int kf_store_showdown_record(kf_store *s, const kf_showdown_outcome *o,
                             bool *changed) {
  *changed = false;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  enum { NE = 9 };
  kf_store__buf e[NE] = {{0}}, res = {0};
  PGresult *r = NULL;
  bool in_tx = false, toom = false;
  char *why = sd_text(o->reason, KF_TEXT_REASON_MAX, KF_TEXT_MULTILINE,
                      &toom);
  for (int c = 0; c < NE; c++) kf_store__arr_open(&e[c]);
  for (size_t i = 0; i < o->n_entries; i++) {
    const kf_showdown_timing *t = &o->entries[i];
    const char *oc = kf_outcome_name(t->outcome);
    if (!oc) {
      rc = kf_store__fail(s, KF_EINVAL, "showdown entry %zu: unknown"
                          " outcome %d", i, t->outcome);
      goto out;
    }
    char *st = sd_text(t->stage, KF_TEXT_NAME_MAX, 0, &toom);
    char *rn = sd_text(t->reason, KF_TEXT_REASON_MAX, KF_TEXT_MULTILINE,
                       &toom);
    kf_store__arr_i64(&e[0], t->candidate_id);
    kf_store__arr_text(&e[1], oc);
    kf_store__arr_text(&e[2], st);
    kf_store__arr_text(&e[3], rn);
    free(st);
    free(rn);
    kf_store__arr_f64(&e[4], t->time_ns_median, true);
    kf_store__arr_f64(&e[5], t->time_ns_spread, false);
    kf_store__arr_i64(&e[6], t->repetitions);
    kf_store__arr_f64(&e[7], t->speedup, true);
    kf_store__arr_f64(&e[8], t->achieved_gbps, true);
  }
  /* bytea in text form: \x then hex. */
  if (o->result) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = o->result;
    kf_store__buf_put(&res, "\\x", 2);
    for (size_t i = 0; i < o->result_len; i++) {
      char two[2] = {hex[u[i] >> 4], hex[u[i] & 15]};
      kf_store__buf_put(&res, two, 2);
    }
  }
  bool oom = res.oom || toom;
  const char *pe[NE + 2];
  char sid[24], wid[24], rm[32], rs[32], rr[16], sg[32];
  kf_store__itoa(sid, sizeof sid, o->showdown_id);
  kf_store__itoa(wid, sizeof wid, o->worker_id);
  snprintf(rm, sizeof rm, "%.17g",
           isfinite(o->ref_time_ns_median) ? o->ref_time_ns_median : 0.0);
  snprintf(rs, sizeof rs, "%.17g",
           isfinite(o->ref_time_ns_spread) ? o->ref_time_ns_spread : 0.0);
  snprintf(rr, sizeof rr, "%u", (unsigned)o->ref_repetitions);
  /* a ceiling is a positive rate; anything else is "not measured" */
  snprintf(sg, sizeof sg, "%.17g",
           isfinite(o->stream_gbps) && o->stream_gbps > 0 &&
                   o->stream_gbps < 1e15
               ? o->stream_gbps
               : 0.0);
  pe[0] = sid;
  pe[NE + 1] = sg;
  for (int c = 0; c < NE; c++) {
    kf_store__arr_close(&e[c]);
    oom |= e[c].oom;
    pe[c + 1] = e[c].p;
  }
  if (oom) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  if ((rc = kf_store__begin(s))) goto out;
  in_tx = true;
  const char *p[] = {sid, o->ok ? "t" : "f", why ? why : "",
                     wid, rm, rs, rr, o->result ? res.p : NULL};
  if ((rc = kf_store__exec(s, &ST_SD_RECORD, 8, p, false, &r))) goto out;
  bool hit = PQntuples(r) == 1;
  char task[24] = "";
  if (hit) kf_strlcpy(task, PQgetvalue(r, 0, 0), sizeof task);
  PQclear(r);
  r = NULL;
  if (hit && o->n_entries &&
      (rc = kf_store__exec(s, &ST_SD_ENTRIES, NE + 2, pe, false, NULL)))
    goto out;
  if (hit && o->cancel_task) {
    const char *pc[] = {task, why ? why : "showdown failed"};
    if ((rc = kf_store__exec(s, &ST_SD_CANCEL, 2, pc, false, NULL)))
      goto out;
  }
  if ((rc = kf_store__commit(s))) goto out;
  in_tx = false;
  *changed = hit;
out:
  if (in_tx) kf_store__rollback(s, rc);
  PQclear(r);
  for (int c = 0; c < NE; c++) kf_store__buf_free(&e[c]);
  kf_store__buf_free(&res);
  free(why);
  return rc;
}

static const kf_store__stmt ST_CAMP_CONCLUDE = {
    KF_STMT_CAMP_CONCLUDE,
    "UPDATE campaigns SET state = 'done',"
    " stop_reason = COALESCE(NULLIF(stop_reason, ''), $2),"
    " finished_at = now(), best_candidate_id = NULLIF($3::bigint, 0),"
    " best_from_showdown = $4::boolean, showdown = $5"
    " WHERE id = $1::bigint AND state IN ('running', 'showdown')"
    " RETURNING id"};

int kf_store_campaign_conclude(kf_store *s, int64_t id, const char *reason,
                               int64_t best_candidate_id,
                               bool best_from_showdown, const char *showdown,
                               bool *changed) {
  *changed = false;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char ids[24], best[24];
  kf_store__itoa(ids, sizeof ids, id);
  kf_store__itoa(best, sizeof best, best_candidate_id);
  const char *why = reason ? reason : "campaign finished";
  const char *p[] = {ids, why, best, best_from_showdown ? "t" : "f",
                     showdown ? showdown : ""};
  PGresult *r;
  if ((rc = kf_store__begin(s))) return rc;
  if ((rc = kf_store__exec(s, &ST_CAMP_CONCLUDE, 5, p, false, &r)))
    return kf_store__rollback(s, rc);
  bool hit = PQntuples(r) == 1;
  PQclear(r);
  if (hit) {
    const char *q[] = {ids, why};
    if ((rc = kf_store__exec(s, &ST_CAMP_CANCEL, 2, q, false, NULL)))
      return kf_store__rollback(s, rc);
  }
  if ((rc = kf_store__commit(s))) return kf_store__rollback(s, rc);
  *changed = hit;
  return 0;
}
