/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_proposer.c -- what proposers spent and got per campaign
 * (proposer_calls, migrations/0008_proposers.sql).
 *
 * Every call is one statement outside a transaction: a batch of calls is
 * inserted by one INSERT ... SELECT FROM unnest(...), all or nothing, and
 * the reads change nothing, so a dead connection is retried once.
 */
#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store_internal.h"

/* A candidate that is not the campaign's is recorded as none rather than
 * refused: the accounting row matters more than the link. */
static const kf_store__stmt ST_PROPOSER_RECORD = {
    KF_STMT_PROPOSER_RECORD,
    "WITH c AS (SELECT id FROM campaigns WHERE id = $1::bigint),"
    " ins AS (INSERT INTO proposer_calls (campaign_id, credential_id,"
    " proposer, model, prompt_version, operation, outcome, reason,"
    " http_status, attempts, prompt_tokens, completion_tokens, cost,"
    " latency_ms, candidate_id)"
    " SELECT c.id, $2::bigint, x.proposer, x.model, x.pv, x.op, x.outcome,"
    " x.reason, x.hs, x.att, x.pt, x.ct, x.cost, x.lat,"
    " (SELECT k.id FROM candidates k WHERE k.id = x.cand"
    "  AND k.campaign_id = c.id)"
    " FROM c, unnest($3::text[], $4::text[], $5::text[], $6::text[],"
    " $7::text[], $8::text[], $9::int[], $10::int[], $11::bigint[],"
    " $12::bigint[], $13::float8[], $14::bigint[], $15::bigint[])"
    " AS x(proposer, model, pv, op, outcome, reason, hs, att, pt, ct, cost,"
    " lat, cand) RETURNING 1)"
    " SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM ins)"};

static const kf_store__stmt ST_PROPOSER_TOTALS = {
    KF_STMT_PROPOSER_TOTALS,
    "SELECT (SELECT count(*) FROM campaigns WHERE id = $1::bigint),"
    " count(p.id), count(p.id) FILTER (WHERE p.outcome NOT IN ('ok',"
    " 'duplicate')), COALESCE(sum(p.prompt_tokens), 0),"
    " COALESCE(sum(p.completion_tokens), 0), COALESCE(sum(p.cost), 0),"
    " COALESCE(percentile_cont(0.5) WITHIN GROUP (ORDER BY p.latency_ms),"
    "  0),"
    " COALESCE(percentile_cont(0.9) WITHIN GROUP (ORDER BY p.latency_ms),"
    "  0),"
    " COALESCE(max(p.latency_ms), 0),"
    " count(p.id) FILTER (WHERE p.candidate_id IS NOT NULL)"
    " FROM proposer_calls p WHERE p.campaign_id = $1::bigint"};

/* The profiling pass's cost: evaluations that ran for this campaign (a
 * reused one ran elsewhere and cost nothing here) and the pass time of
 * those whose profiler ran (0007: profile_ms of a status ok, restricted
 * or failed; none, skipped and unavailable ran no pass -- a CPU
 * evaluation's row holds its diagnosis with status none). */
static const kf_store__stmt ST_PROPOSER_PROFILING = {
    KF_STMT_PROPOSER_PROFILING,
    "SELECT count(e.id), count(x.ms),"
    " COALESCE(percentile_cont(0.5) WITHIN GROUP (ORDER BY x.ms), 0),"
    " COALESCE(percentile_cont(0.9) WITHIN GROUP (ORDER BY x.ms), 0),"
    " COALESCE(sum(x.ms), 0)"
    " FROM evaluations e"
    " LEFT JOIN eval_profiles pf ON pf.evaluation_id = e.id"
    " CROSS JOIN LATERAL (SELECT CASE WHEN pf.status IN ('ok', 'restricted',"
    "  'failed') THEN COALESCE(pf.profile_ms, 0) END AS ms) x"
    " WHERE e.campaign_id = $1::bigint AND e.reused_from IS NULL"};

static const kf_store__stmt ST_PROPOSER_RECENT = {
    KF_STMT_PROPOSER_RECENT,
    "SELECT proposer, model, prompt_version, operation, outcome, reason,"
    " http_status, attempts, prompt_tokens, completion_tokens, cost,"
    " latency_ms, COALESCE(candidate_id, 0),"
    " to_char(created_at AT TIME ZONE 'UTC',"
    " 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
    " FROM proposer_calls WHERE campaign_id = $1::bigint"
    " ORDER BY id DESC LIMIT $2::bigint"};

/* Numbers only come out of workers.device (the coordinator wrote it from
 * a checked DeviceInfo); a key that is missing reads as 0. */
static const kf_store__stmt ST_CAMP_DEVICES = {
    KF_STMT_CAMP_DEVICES,
    "SELECT d.kind, d.model, d.cc_major, d.cc_minor, d.isa,"
    " (SELECT count(*) FROM workers a WHERE a.device_class_id = d.id"
    "  AND 'eval' = ANY(a.task_kinds)"
    "  AND a.last_seen > now() - $2::bigint * interval '1 ms') AS alive,"
    " COALESCE((w.device->>'cores')::numeric, 0)::bigint,"
    " COALESCE((w.device->>'l2_bytes')::numeric, 0)::numeric(20),"
    " COALESCE((w.device->>'mem_bytes')::numeric, 0)::numeric(20),"
    " COALESCE((w.device->>'copy_gbps')::float8, 0),"
    " COALESCE((w.device->>'peak_gflops')::float8, 0),"
    " COALESCE((w.device->>'read_gbps')::float8, 0),"
    " COALESCE((w.device->>'write_gbps')::float8, 0),"
    " COALESCE(v.toolchain, ''), COALESCE(v.driver, ''),"
    " COALESCE(v.runtime, '')"
    " FROM campaigns c JOIN device_classes d ON d.kind = c.backend"
    " CROSS JOIN LATERAL (SELECT x.device, x.environment_id FROM workers x"
    "  WHERE x.device_class_id = d.id AND 'eval' = ANY(x.task_kinds)"
    "  ORDER BY x.last_seen DESC LIMIT 1) w"
    " LEFT JOIN environments v ON v.id = w.environment_id"
    " WHERE c.id = $1::bigint ORDER BY alive DESC, d.id LIMIT 16"};

int kf_store_campaign_devices(kf_store *s, int64_t campaign_id,
                              uint32_t alive_ms, kf_campaign_device **out,
                              size_t *n) {
  *out = NULL;
  *n = 0;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char cid[24], ms[24];
  snprintf(cid, sizeof cid, "%" PRId64, campaign_id);
  snprintf(ms, sizeof ms, "%u", alive_ms);
  const char *p[] = {cid, ms};
  PGresult *r;
  if ((rc = kf_store__exec_retry(s, &ST_CAMP_DEVICES, 2, p, false, &r)))
    return rc;
  int nr = PQntuples(r);
  kf_campaign_device *v = nr ? calloc((size_t)nr, sizeof *v) : NULL;
  if (nr && !v) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  for (int i = 0; i < nr; i++) {
    kf_campaign_device *d = &v[i];
    d->dc.kind = atoi(PQgetvalue(r, i, 0));
    snprintf(d->dc.model, sizeof d->dc.model, "%s", PQgetvalue(r, i, 1));
    d->dc.cc_major = (uint32_t)strtoul(PQgetvalue(r, i, 2), NULL, 10);
    d->dc.cc_minor = (uint32_t)strtoul(PQgetvalue(r, i, 3), NULL, 10);
    snprintf(d->dc.isa, sizeof d->dc.isa, "%s", PQgetvalue(r, i, 4));
    d->workers_alive = (uint32_t)strtoul(PQgetvalue(r, i, 5), NULL, 10);
    d->cores = (uint32_t)strtoul(PQgetvalue(r, i, 6), NULL, 10);
    d->l2_bytes = strtoull(PQgetvalue(r, i, 7), NULL, 10);
    d->mem_bytes = strtoull(PQgetvalue(r, i, 8), NULL, 10);
    d->copy_gbps = strtod(PQgetvalue(r, i, 9), NULL);
    d->peak_gflops = strtod(PQgetvalue(r, i, 10), NULL);
    d->read_gbps = strtod(PQgetvalue(r, i, 11), NULL);
    d->write_gbps = strtod(PQgetvalue(r, i, 12), NULL);
    snprintf(d->compiler, sizeof d->compiler, "%s", PQgetvalue(r, i, 13));
    snprintf(d->driver, sizeof d->driver, "%s", PQgetvalue(r, i, 14));
    snprintf(d->runtime, sizeof d->runtime, "%s", PQgetvalue(r, i, 15));
  }
  PQclear(r);
  *out = v;
  *n = (size_t)nr;
  return 0;
}

int kf_store_proposer_record(kf_store *s, int64_t campaign_id,
                             int64_t cred_id, const kf_proposer_call *calls,
                             size_t n) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if (n == 0) return kf_store__fail(s, KF_EINVAL, "no calls to record");
  enum { NCOL = 13 };
  kf_store__buf a[NCOL] = {{0}};
  for (int c = 0; c < NCOL; c++) kf_store__arr_open(&a[c]);
  for (size_t i = 0; i < n; i++) {
    const kf_proposer_call *k = &calls[i];
    if (!isfinite(k->cost) || k->cost < 0) {
      for (int c = 0; c < NCOL; c++) kf_store__buf_free(&a[c]);
      return kf_store__fail(s, KF_EINVAL, "calls[%zu].cost must be a finite"
                            " number >= 0", i);
    }
    kf_store__arr_text(&a[0], k->proposer ? k->proposer : "");
    kf_store__arr_text(&a[1], k->model ? k->model : "");
    kf_store__arr_text(&a[2], k->prompt_version ? k->prompt_version : "");
    kf_store__arr_text(&a[3], k->operation ? k->operation : "");
    kf_store__arr_text(&a[4], k->outcome ? k->outcome : "");
    kf_store__arr_text(&a[5], k->reason ? k->reason : "");
    kf_store__arr_i64(&a[6], k->http_status);
    kf_store__arr_i64(&a[7], k->attempts);
    kf_store__arr_i64(&a[8], (int64_t)k->prompt_tokens);
    kf_store__arr_i64(&a[9], (int64_t)k->completion_tokens);
    kf_store__arr_f64(&a[10], k->cost, false);
    kf_store__arr_i64(&a[11], (int64_t)k->latency_ms);
    if (k->candidate_id > 0) kf_store__arr_i64(&a[12], k->candidate_id);
    else kf_store__arr_null(&a[12]);
  }
  bool oom = false;
  for (int c = 0; c < NCOL; c++) {
    kf_store__arr_close(&a[c]);
    oom |= a[c].oom;
  }
  char cid[24], crd[24];
  snprintf(cid, sizeof cid, "%" PRId64, campaign_id);
  snprintf(crd, sizeof crd, "%" PRId64, cred_id);
  PGresult *r = NULL;
  if (oom) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
  } else {
    const char *p[2 + NCOL] = {cid, crd};
    for (int c = 0; c < NCOL; c++) p[2 + c] = a[c].p;
    /* Sent alone: a retry over a fresh connection cannot double it,
     * because a statement the old connection lost was never committed. */
    rc = kf_store__exec_retry(s, &ST_PROPOSER_RECORD, 2 + NCOL, p, false, &r);
  }
  for (int c = 0; c < NCOL; c++) kf_store__buf_free(&a[c]);
  if (rc) return rc;
  bool found = strtoll(PQgetvalue(r, 0, 0), NULL, 10) > 0;
  PQclear(r);
  if (!found)
    return kf_store__fail(s, KF_ENOTFOUND, "campaign %" PRId64 " not found",
                          campaign_id);
  return 0;
}

int kf_store_proposer_usage(kf_store *s, int64_t campaign_id, uint32_t limit,
                            kf_proposer_usage *out) {
  memset(out, 0, sizeof *out);
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char cid[24], lim[24];
  snprintf(cid, sizeof cid, "%" PRId64, campaign_id);
  snprintf(lim, sizeof lim, "%u", limit);
  const char *p[] = {cid, lim};
  PGresult *r;
  if ((rc = kf_store__exec_retry(s, &ST_PROPOSER_TOTALS, 1, p, false, &r)))
    return rc;
  bool found = strtoll(PQgetvalue(r, 0, 0), NULL, 10) > 0;
  out->calls = (uint32_t)strtoul(PQgetvalue(r, 0, 1), NULL, 10);
  out->failures = (uint32_t)strtoul(PQgetvalue(r, 0, 2), NULL, 10);
  out->prompt_tokens = strtoull(PQgetvalue(r, 0, 3), NULL, 10);
  out->completion_tokens = strtoull(PQgetvalue(r, 0, 4), NULL, 10);
  out->cost = strtod(PQgetvalue(r, 0, 5), NULL);
  out->latency_ms_median = strtod(PQgetvalue(r, 0, 6), NULL);
  out->latency_ms_p90 = strtod(PQgetvalue(r, 0, 7), NULL);
  out->latency_ms_max = strtoull(PQgetvalue(r, 0, 8), NULL, 10);
  out->proposed = (uint32_t)strtoul(PQgetvalue(r, 0, 9), NULL, 10);
  PQclear(r);
  if (!found)
    return kf_store__fail(s, KF_ENOTFOUND, "campaign %" PRId64 " not found",
                          campaign_id);
  if ((rc = kf_store__exec_retry(s, &ST_PROPOSER_PROFILING, 1, p, false,
                                 &r)))
    return rc;
  out->evaluations = (uint32_t)strtoul(PQgetvalue(r, 0, 0), NULL, 10);
  out->profiled = (uint32_t)strtoul(PQgetvalue(r, 0, 1), NULL, 10);
  out->profile_ms_median = strtod(PQgetvalue(r, 0, 2), NULL);
  out->profile_ms_p90 = strtod(PQgetvalue(r, 0, 3), NULL);
  out->profile_ms_total = strtoull(PQgetvalue(r, 0, 4), NULL, 10);
  PQclear(r);
  if (limit == 0) return 0;
  if ((rc = kf_store__exec_retry(s, &ST_PROPOSER_RECENT, 2, p, false, &r)))
    return rc;
  int nr = PQntuples(r);
  size_t bytes = (size_t)nr * sizeof(kf_proposer_call);
  for (int i = 0; i < nr; i++)
    for (int j = 0; j < PQnfields(r); j++)
      bytes += (size_t)PQgetlength(r, i, j) + 1;
  kf_proposer_call *v = calloc(1, bytes ? bytes : 1);
  if (!v) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  char *cur = (char *)(v + nr);
#define PUT(col)                                                              \
  (memcpy(cur, PQgetvalue(r, i, col), (size_t)PQgetlength(r, i, col) + 1),    \
   cur += PQgetlength(r, i, col) + 1, cur - PQgetlength(r, i, col) - 1)
  for (int i = 0; i < nr; i++) {
    kf_proposer_call *k = &v[i];
    k->proposer = PUT(0);
    k->model = PUT(1);
    k->prompt_version = PUT(2);
    k->operation = PUT(3);
    k->outcome = PUT(4);
    k->reason = PUT(5);
    k->http_status = (uint32_t)strtoul(PQgetvalue(r, i, 6), NULL, 10);
    k->attempts = (uint32_t)strtoul(PQgetvalue(r, i, 7), NULL, 10);
    k->prompt_tokens = strtoull(PQgetvalue(r, i, 8), NULL, 10);
    k->completion_tokens = strtoull(PQgetvalue(r, i, 9), NULL, 10);
    k->cost = strtod(PQgetvalue(r, i, 10), NULL);
    k->latency_ms = strtoull(PQgetvalue(r, i, 11), NULL, 10);
    k->candidate_id = strtoll(PQgetvalue(r, i, 12), NULL, 10);
    k->created_at = PUT(13);
  }
#undef PUT
  PQclear(r);
  out->recent = v;
  out->n_recent = (size_t)nr;
  return 0;
}
