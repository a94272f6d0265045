/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_fleet.c -- a campaign across a fleet of device classes
 * (migration 0009): the per-class rows the search steps (state, stop
 * reason, best, showdown, clock), device classes by name, and porting a
 * campaign's elites from one class to another.
 *
 * Why per class: a fast class reaching its roofline target, or using up
 * its evaluations, says nothing about a slow one; each class searches
 * until its own rule stops it and re-times its own top in its own
 * showdown.  The campaign is the sum of its classes.
 *
 * Same conventions as store_campaign.c: reads are single statements,
 * writes of several statements are one transaction, rows come back as one
 * allocation (structs first, strings after them).
 */
#include <libpq-fe.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "outcome.h"
#include "store_internal.h"
#include "util.h"

/* ---------------------------------------------------------- helpers -- */

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

/* Copies a cell behind *cur and advances it; SQL NULL -> "". */
static const char *put(char **cur, const PGresult *r, int row, int col) {
  char *d = *cur;
  size_t n = (size_t)PQgetlength(r, row, col);
  memcpy(d, PQgetvalue(r, row, col), n);
  d[n] = '\0';
  *cur = d + n + 1;
  return d;
}

static void itoa64(char *buf, size_t len, int64_t v) {
  snprintf(buf, len, "%" PRId64, v);
}

static void dc_from(kf_device_class *dc, const PGresult *r, int row, int col) {
  dc->kind = (int)i64(r, row, col);
  snprintf(dc->model, sizeof dc->model, "%s", PQgetvalue(r, row, col + 1));
  dc->cc_major = (uint32_t)i64(r, row, col + 2);
  dc->cc_minor = (uint32_t)i64(r, row, col + 3);
  snprintf(dc->isa, sizeof dc->isa, "%s", PQgetvalue(r, row, col + 4));
}

/* ---------------------------------------------------- class rows -- */

static const kf_store__stmt ST_CC_SYNC = {
    KF_STMT_CC_SYNC,
    "INSERT INTO campaign_classes (campaign_id, device_class_id)"
    " SELECT $1::bigint, x FROM unnest($2::bigint[]) AS x"
    " WHERE EXISTS (SELECT 1 FROM campaigns WHERE id = $1::bigint"
    " AND state = 'running') ON CONFLICT DO NOTHING"};

static const kf_store__stmt ST_CC_LIST = {
    KF_STMT_CC_LIST,
    "SELECT cc.device_class_id, d.kind, d.model, d.cc_major, d.cc_minor,"
    " d.isa, cc.state, COALESCE(cc.stop_reason, ''), cc.showdown,"
    " COALESCE(cc.best_candidate_id, 0), cc.best_from_showdown,"
    " (extract(epoch FROM COALESCE(cc.finished_at, now()) - cc.started_at)"
    " * 1000)::bigint,"
    " (SELECT count(*) FROM eval_keys k WHERE k.campaign_id = $1::bigint"
    "  AND k.device_class_id = cc.device_class_id AND k.task_id IS NOT NULL)"
    " + (SELECT count(*) FROM evaluations e WHERE e.campaign_id = $1::bigint"
    "  AND e.device_class_id = cc.device_class_id"
    "  AND e.reused_from IS NOT NULL),"
    " (SELECT count(*) FROM eval_keys k JOIN tasks t ON t.id = k.task_id"
    "  WHERE k.campaign_id = $1::bigint"
    "  AND k.device_class_id = cc.device_class_id"
    "  AND t.state IN ('queued', 'leased')),"
    " (SELECT count(*) FROM evaluations e WHERE e.campaign_id = $1::bigint"
    "  AND e.device_class_id = cc.device_class_id),"
    " (SELECT count(*) FROM evaluations e WHERE e.campaign_id = $1::bigint"
    "  AND e.device_class_id = cc.device_class_id AND e.outcome = 'ok')"
    " FROM campaign_classes cc JOIN device_classes d"
    " ON d.id = cc.device_class_id WHERE cc.campaign_id = $1::bigint"
    " ORDER BY cc.device_class_id"};

void kf_store_class_list_free(kf_class_list *l) { free(l); }

int kf_store_campaign_classes(kf_store *s, int64_t campaign_id,
                              const int64_t *dcs, size_t n,
                              kf_class_list **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char cid[24];
  itoa64(cid, sizeof cid, campaign_id);
  if (n) {
    kf_store__buf a = {0};
    kf_store__arr_open(&a);
    for (size_t i = 0; i < n; i++) kf_store__arr_i64(&a, dcs[i]);
    kf_store__arr_close(&a);
    if (a.oom) {
      kf_store__buf_free(&a);
      return kf_store__fail(s, KF_ENOMEM, "out of memory");
    }
    const char *p[] = {cid, a.p};
    rc = kf_store__exec(s, &ST_CC_SYNC, 2, p, false, NULL);
    kf_store__buf_free(&a);
    if (rc) return rc;
  }
  const char *p[] = {cid};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CC_LIST, 1, p, false, &r))) return rc;
  size_t m = (size_t)PQntuples(r);
  size_t head = sizeof(kf_class_list) + m * sizeof(kf_class_row);
  char *blk = malloc(head + cells_bytes(r) + 1);
  if (!blk) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  kf_class_list *l = (kf_class_list *)blk;
  l->v = (kf_class_row *)(blk + sizeof *l);
  l->n = m;
  char *cur = blk + head;
  for (int i = 0; i < (int)m; i++) {
    kf_class_row *c = &l->v[i];
    memset(c, 0, sizeof *c);
    c->device_class_id = i64(r, i, 0);
    dc_from(&c->dc, r, i, 1);
    c->state = put(&cur, r, i, 6);
    c->stop_reason = put(&cur, r, i, 7);
    c->showdown = put(&cur, r, i, 8);
    c->best_candidate_id = i64(r, i, 9);
    c->best_from_showdown = PQgetvalue(r, i, 10)[0] == 't';
    int64_t el = i64(r, i, 11);
    c->elapsed_ms = el > 0 ? (uint64_t)el : 0;
    c->issued = (uint32_t)i64(r, i, 12);
    c->outstanding = (uint32_t)i64(r, i, 13);
    c->evals = (uint32_t)i64(r, i, 14);
    c->evals_ok = (uint32_t)i64(r, i, 15);
  }
  PQclear(r);
  *out = l;
  return 0;
}

static const kf_store__stmt ST_CC_SET_BEST = {
    KF_STMT_CC_SET_BEST,
    "UPDATE campaign_classes SET best_candidate_id = NULLIF($3::bigint, 0)"
    " WHERE campaign_id = $1::bigint AND device_class_id = $2::bigint"};

int kf_store_class_set_best(kf_store *s, int64_t campaign_id, int64_t dc,
                            int64_t candidate_id) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24], c[24];
  itoa64(a, sizeof a, campaign_id);
  itoa64(b, sizeof b, dc);
  itoa64(c, sizeof c, candidate_id);
  const char *p[] = {a, b, c};
  return kf_store__exec(s, &ST_CC_SET_BEST, 3, p, false, NULL);
}

/* $4: 't' with a showdown to run, else the class is done now. */
static const kf_store__stmt ST_CC_STOP = {
    KF_STMT_CC_STOP,
    "UPDATE campaign_classes SET stop_reason = $3,"
    " state = CASE WHEN $4::boolean THEN 'showdown' ELSE 'done' END,"
    " showdown = CASE WHEN $4::boolean THEN 'running' ELSE $6 END,"
    " best_candidate_id = CASE WHEN $4::boolean THEN best_candidate_id"
    "  ELSE NULLIF($5::bigint, 0) END,"
    " finished_at = CASE WHEN $4::boolean THEN NULL ELSE now() END"
    " WHERE campaign_id = $1::bigint AND device_class_id = $2::bigint"
    " AND state = 'running' RETURNING 1"};

static const kf_store__stmt ST_CC_CANCEL = {
    KF_STMT_CC_CANCEL,
    "UPDATE tasks SET state = 'failed', last_error = $3, finished_at = now()"
    " WHERE campaign_id = $1::bigint AND device_class_id = $2::bigint"
    " AND kind = 'eval' AND state = 'queued'"};

int kf_store_class_stop(kf_store *s, int64_t campaign_id, int64_t dc,
                        const char *reason, const kf_showdown_plan *plan,
                        int64_t best, const char *showdown, bool *changed) {
  *changed = false;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if (!reason) return kf_store__fail(s, KF_EINVAL, "class stop: no reason");
  if (plan && plan->device_class_id != dc)
    return kf_store__fail(s, KF_EINVAL, "class stop: the plan is for"
                          " another class");
  char a[24], b[24], c[24];
  itoa64(a, sizeof a, campaign_id);
  itoa64(b, sizeof b, dc);
  itoa64(c, sizeof c, best);
  const char *p[] = {a, b, reason, plan ? "t" : "f", c,
                     showdown ? showdown : ""};
  PGresult *r;
  if ((rc = kf_store__begin(s))) return rc;
  if ((rc = kf_store__exec(s, &ST_CC_STOP, 6, p, false, &r)))
    return kf_store__rollback(s, rc);
  bool hit = PQntuples(r) == 1;
  PQclear(r);
  if (hit) {
    if ((rc = kf_store__exec(s, &ST_CC_CANCEL, 3, p, false, NULL)))
      return kf_store__rollback(s, rc);
    if (plan && (rc = kf_store__showdown_insert(s, a, plan, 1)))
      return kf_store__rollback(s, rc);
  }
  if ((rc = kf_store__commit(s))) return kf_store__rollback(s, rc);
  *changed = hit;
  return 0;
}

static const kf_store__stmt ST_CC_CONCLUDE = {
    KF_STMT_CC_CONCLUDE,
    "UPDATE campaign_classes SET state = 'done', finished_at = now(),"
    " best_candidate_id = NULLIF($3::bigint, 0),"
    " best_from_showdown = $4::boolean, showdown = $5"
    " WHERE campaign_id = $1::bigint AND device_class_id = $2::bigint"
    " AND state = 'showdown' RETURNING 1"};

int kf_store_class_conclude(kf_store *s, int64_t campaign_id, int64_t dc,
                            int64_t best, bool best_from_showdown,
                            const char *showdown, bool *changed) {
  *changed = false;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24], b[24], c[24];
  itoa64(a, sizeof a, campaign_id);
  itoa64(b, sizeof b, dc);
  itoa64(c, sizeof c, best);
  const char *p[] = {a, b, c, best_from_showdown ? "t" : "f",
                     showdown ? showdown : ""};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CC_CONCLUDE, 5, p, false, &r))) return rc;
  *changed = PQntuples(r) == 1;
  PQclear(r);
  return 0;
}

static const kf_store__stmt ST_CC_ENTER_SD = {
    KF_STMT_CC_ENTER_SD,
    "UPDATE campaigns SET state = 'showdown', stop_reason = $2,"
    " showdown = 'running' WHERE id = $1::bigint AND state = 'running'"
    " RETURNING id"};

int kf_store_campaign_enter_showdown(kf_store *s, int64_t campaign_id,
                                     const char *reason, bool *changed) {
  *changed = false;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24];
  itoa64(a, sizeof a, campaign_id);
  const char *p[] = {a, reason ? reason : "every class stopped"};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CC_ENTER_SD, 2, p, false, &r))) return rc;
  *changed = PQntuples(r) == 1;
  PQclear(r);
  return 0;
}

static const kf_store__stmt ST_CC_END_ALL = {
    KF_STMT_CC_END_ALL,
    "UPDATE campaign_classes SET state = 'done', finished_at = now(),"
    " stop_reason = COALESCE(stop_reason, $2),"
    " showdown = CASE WHEN state = 'showdown' THEN 'failed: ' || $2"
    "  ELSE showdown END"
    " WHERE campaign_id = $1::bigint AND state <> 'done'"};

int kf_store__classes_end(kf_store *s, const char *campaign_id,
                          const char *reason) {
  const char *p[] = {campaign_id, reason ? reason : "campaign finished"};
  return kf_store__exec(s, &ST_CC_END_ALL, 2, p, false, NULL);
}

/* ----------------------------------------------------- by name -- */

static const kf_store__stmt ST_CC_BY_NAME = {
    KF_STMT_CC_BY_NAME,
    "SELECT id, kind, model, cc_major, cc_minor, isa FROM device_classes"
    " WHERE model = $1 AND ($2::smallint = 0 OR kind = $2::smallint)"
    " ORDER BY id LIMIT 8"};

static const kf_store__stmt ST_CC_NAMES = {
    KF_STMT_CC_NAMES,
    "SELECT COALESCE(string_agg(DISTINCT model, ', '), '') FROM"
    " (SELECT model FROM device_classes WHERE $1::smallint = 0"
    " OR kind = $1::smallint ORDER BY id LIMIT 32) x"};

int kf_store_class_by_name(kf_store *s, int kind, const char *name,
                           int64_t *id) {
  *id = 0;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char k[8];
  snprintf(k, sizeof k, "%d", kind);
  const char *p[] = {name ? name : "", k};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_CC_BY_NAME, 2, p, false, &r))) return rc;
  int n = PQntuples(r);
  if (n == 1) {
    *id = i64(r, 0, 0);
    PQclear(r);
    return 0;
  }
  if (n > 1) {
    char why[512] = "";
    size_t o = 0;
    for (int i = 0; i < n && o + 1 < sizeof why; i++) {
      int w = snprintf(why + o, sizeof why - o, "%s%s %s (cc %s.%s)",
                       i ? "; " : "", i64(r, i, 1) == 2 ? "cuda" : "cpu",
                       PQgetvalue(r, i, 5), PQgetvalue(r, i, 3),
                       PQgetvalue(r, i, 4));
      if (w < 0) break;
      o += (size_t)w;
    }
    PQclear(r);
    return kf_store__fail(s, KF_EINVAL, "device class '%.127s' is ambiguous:"
                          " %d classes share that model: %s", name, n, why);
  }
  PQclear(r);
  const char *q[] = {k};
  if ((rc = kf_store__exec(s, &ST_CC_NAMES, 1, q, false, &r))) return rc;
  rc = kf_store__fail(s, KF_ENOTFOUND, "no device class named '%.127s'"
                      " (known: %.600s)", name ? name : "",
                      PQntuples(r) && *PQgetvalue(r, 0, 0)
                          ? PQgetvalue(r, 0, 0) : "none");
  PQclear(r);
  return rc;
}

/* -------------------------------------------------------- porting -- */

/* A showdown entry that decided about an evaluation of its class. */
#define KF_SD_LATERAL(e)                                                     \
  " LEFT JOIN LATERAL (SELECT se.outcome, se.speedup, se.time_ns_median,"   \
  "  se.roofline_fraction FROM showdowns s JOIN showdown_entries se"        \
  "  ON se.showdown_id = s.id WHERE s.campaign_id = " e ".campaign_id"      \
  "  AND s.device_class_id = " e ".device_class_id"                         \
  "  AND se.candidate_id = " e ".candidate_id AND s.state = 'done'"         \
  "  AND se.outcome IS NOT NULL LIMIT 1) x ON true"

/* The source exists; its class with the best speedup other than $2. */
static const kf_store__stmt ST_PORT_SOURCE = {
    KF_STMT_PORT_SOURCE,
    "SELECT c.showdown_top, (SELECT e.device_class_id FROM evaluations e"
    " WHERE e.campaign_id = c.id AND e.outcome = 'ok'"
    " AND e.device_class_id <> $2::bigint"
    " ORDER BY e.speedup DESC NULLS LAST, e.id LIMIT 1),"
    " (SELECT kind FROM device_classes WHERE id = $2::bigint), c.backend"
    " FROM campaigns c WHERE c.id = $1::bigint"};

static const kf_store__stmt ST_PORT_CREATE = {
    KF_STMT_PORT_CREATE,
    "INSERT INTO campaigns (name, problem, language, backend, spec_json,"
    " reference_source, templates, budget_evals, budget_seconds,"
    " population, plateau_evals, target_roofline, search_seed, floor_bytes,"
    " spec_sha256, reference_sha256, problem_key, fresh, showdown_top,"
    " device_class_id, port_from_campaign, port_from_class)"
    " SELECT COALESCE(NULLIF($2, ''), left(c.name || ' -> ' || d.model,"
    " 255)), c.problem, c.language, c.backend, c.spec_json,"
    " c.reference_source, c.templates,"
    " COALESCE(NULLIF($3::int, 0), c.budget_evals),"
    " COALESCE(NULLIF($4::int, 0), c.budget_seconds), c.population,"
    " COALESCE(NULLIF($5::int, 0), c.plateau_evals), c.target_roofline,"
    " $6::bigint, c.floor_bytes, c.spec_sha256, c.reference_sha256,"
    " c.problem_key, $7::boolean, c.showdown_top, d.id, c.id, $9::bigint"
    " FROM campaigns c JOIN device_classes d ON d.id = $8::bigint"
    " WHERE c.id = $1::bigint RETURNING id"};

/* The source's ranking on its class, as KF_RANKED_SQL orders it: the
 * class's best, then rows its showdown re-timed ok, then by speedup;
 * candidates that failed the showdown are left out. */
static const kf_store__stmt ST_PORT_ELITES = {
    KF_STMT_PORT_ELITES,
    "WITH src AS (SELECT e.candidate_id, row_number() OVER (ORDER BY"
    "  COALESCE(e.candidate_id = cc.best_candidate_id, false) DESC,"
    "  COALESCE(x.outcome = 'ok', false) DESC,"
    "  CASE WHEN x.outcome = 'ok' THEN x.speedup ELSE e.speedup END"
    "  DESC NULLS LAST, e.id) AS o"
    "  FROM evaluations e" KF_SD_LATERAL("e")
    "  LEFT JOIN campaign_classes cc ON cc.campaign_id = e.campaign_id"
    "  AND cc.device_class_id = e.device_class_id"
    "  WHERE e.campaign_id = $2::bigint AND e.device_class_id = $3::bigint"
    "  AND e.outcome = 'ok'"
    "  AND (x.outcome IS NULL OR x.outcome IN ('ok', 'infra_error'))),"
    " top AS (SELECT * FROM src ORDER BY o LIMIT $4::int)"
    " INSERT INTO candidates (campaign_id, template_name, knobs, source,"
    " source_sha256, flags, proposer, generation, device_class_id,"
    " ported_from)"
    " SELECT $1::bigint, c.template_name, c.knobs, c.source,"
    " c.source_sha256, c.flags, 'port:' || $2, c.generation, $5::bigint,"
    " c.id FROM top JOIN candidates c ON c.id = top.candidate_id"
    " ORDER BY top.o RETURNING id"};

int kf_store_campaign_port(kf_store *s, const kf_port_new *pn, int64_t *id) {
  *id = 0;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if (pn->from_campaign <= 0 || pn->to_class <= 0)
    return kf_store__fail(s, KF_EINVAL, "port: source campaign and target"
                          " class are required");
  char src[24], to[24];
  itoa64(src, sizeof src, pn->from_campaign);
  itoa64(to, sizeof to, pn->to_class);
  PGresult *r;
  const char *ps[] = {src, to};
  if ((rc = kf_store__exec(s, &ST_PORT_SOURCE, 2, ps, false, &r))) return rc;
  if (PQntuples(r) == 0) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOTFOUND, "campaign %" PRId64 " not found",
                          pn->from_campaign);
  }
  uint32_t top = (uint32_t)i64(r, 0, 0);
  int64_t from = pn->from_class ? pn->from_class : i64(r, 0, 1);
  int64_t to_kind = i64(r, 0, 2), backend = i64(r, 0, 3);
  PQclear(r);
  if (to_kind != backend)
    return kf_store__fail(s, KF_EINVAL, "port: the target device class is"
                          " not of campaign %" PRId64 "'s backend (%s)",
                          pn->from_campaign, backend == 2 ? "cuda" : "cpu");
  if (!from)
    return kf_store__fail(s, KF_ESTATE, "campaign %" PRId64 " has no"
                          " verified candidate on another device class to"
                          " port", pn->from_campaign);
  if (from == pn->to_class)
    return kf_store__fail(s, KF_EINVAL, "port: the source and the target"
                          " device class are the same");
  uint32_t elites = pn->elites ? pn->elites : (top ? top : 5);
  char fromc[24], bev[16], bs[16], pl[16], seed[24], el[16];
  itoa64(fromc, sizeof fromc, from);
  snprintf(bev, sizeof bev, "%u", pn->budget_evals);
  snprintf(bs, sizeof bs, "%u", pn->budget_seconds);
  snprintf(pl, sizeof pl, "%u", pn->plateau_evals);
  itoa64(seed, sizeof seed, (int64_t)pn->search_seed);
  snprintf(el, sizeof el, "%u", elites);
  if ((rc = kf_store__begin(s))) return rc;
  const char *pc[] = {src, pn->name ? pn->name : "", bev, bs, pl, seed,
                      pn->fresh ? "t" : "f", to, fromc};
  if ((rc = kf_store__exec(s, &ST_PORT_CREATE, 9, pc, false, &r)))
    return kf_store__rollback(s, rc);
  int64_t nid = i64(r, 0, 0);
  PQclear(r);
  char nids[24];
  itoa64(nids, sizeof nids, nid);
  const char *pe[] = {nids, src, fromc, el, to};
  if ((rc = kf_store__exec(s, &ST_PORT_ELITES, 5, pe, false, &r)))
    return kf_store__rollback(s, rc);
  int got = PQntuples(r);
  PQclear(r);
  if (got == 0) {
    kf_store__rollback(s, 0);
    return kf_store__fail(s, KF_ESTATE, "campaign %" PRId64 " has no"
                          " verified candidate on device class %" PRId64
                          " to port", pn->from_campaign, from);
  }
  if ((rc = kf_store__commit(s))) return kf_store__rollback(s, rc);
  *id = nid;
  return 0;
}

static const kf_store__stmt ST_PORT_REPORT = {
    KF_STMT_PORT_REPORT,
    "SELECT n.id, n.ported_from, n.template_name, n.knobs::text,"
    " b.speedup, b.time_ns, b.roof, COALESCE(b.sd, false),"
    " a.outcome::text, COALESCE(a.reason, ''), a.speedup, a.time_ns, a.roof"
    " FROM candidates n JOIN campaigns me ON me.id = n.campaign_id"
    " LEFT JOIN LATERAL (SELECT"
    "  CASE WHEN x.outcome = 'ok' THEN x.speedup ELSE e.speedup END speedup,"
    "  CASE WHEN x.outcome = 'ok' THEN x.time_ns_median"
    "  ELSE e.time_ns_median END time_ns,"
    "  CASE WHEN x.outcome = 'ok' THEN x.roofline_fraction"
    "  ELSE e.roofline_fraction END roof, x.outcome = 'ok' sd"
    "  FROM evaluations e" KF_SD_LATERAL("e")
    "  WHERE e.campaign_id = me.port_from_campaign"
    "  AND e.device_class_id = me.port_from_class"
    "  AND e.candidate_id = n.ported_from LIMIT 1) b ON true"
    " LEFT JOIN LATERAL (SELECT e.outcome, e.reason,"
    "  CASE WHEN x.outcome = 'ok' THEN x.speedup ELSE e.speedup END speedup,"
    "  CASE WHEN x.outcome = 'ok' THEN x.time_ns_median"
    "  ELSE e.time_ns_median END time_ns,"
    "  CASE WHEN x.outcome = 'ok' THEN x.roofline_fraction"
    "  ELSE e.roofline_fraction END roof"
    "  FROM evaluations e" KF_SD_LATERAL("e")
    "  WHERE e.campaign_id = me.id AND e.candidate_id = n.id"
    "  AND e.device_class_id = me.device_class_id LIMIT 1) a ON true"
    " WHERE n.campaign_id = $1::bigint AND n.ported_from IS NOT NULL"
    " ORDER BY n.id"};

int kf_store_port_report(kf_store *s, int64_t campaign_id,
                         kf_port_list **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char a[24];
  itoa64(a, sizeof a, campaign_id);
  const char *p[] = {a};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_PORT_REPORT, 1, p, false, &r))) return rc;
  size_t m = (size_t)PQntuples(r);
  size_t head = sizeof(kf_port_list) + m * sizeof(kf_port_row);
  char *blk = malloc(head + cells_bytes(r) + 1);
  if (!blk) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  kf_port_list *l = (kf_port_list *)blk;
  l->v = (kf_port_row *)(blk + sizeof *l);
  l->n = m;
  char *cur = blk + head;
  for (int i = 0; i < (int)m; i++) {
    kf_port_row *x = &l->v[i];
    memset(x, 0, sizeof *x);
    x->candidate_id = i64(r, i, 0);
    x->from_candidate = i64(r, i, 1);
    x->template_name = put(&cur, r, i, 2);
    x->knobs_json = put(&cur, r, i, 3);
    x->before_speedup = f64(r, i, 4);
    x->before_time_ns = f64(r, i, 5);
    x->before_roofline = f64(r, i, 6);
    x->before_showdown = PQgetvalue(r, i, 7)[0] == 't';
    x->after_outcome = PQgetisnull(r, i, 8)
                           ? 0 : kf_outcome_parse(PQgetvalue(r, i, 8));
    x->after_reason = put(&cur, r, i, 9);
    x->after_speedup = f64(r, i, 10);
    x->after_time_ns = f64(r, i, 11);
    x->after_roofline = f64(r, i, 12);
  }
  PQclear(r);
  *out = l;
  return 0;
}
