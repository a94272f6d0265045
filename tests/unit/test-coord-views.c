/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-coord-views.c -- the dashboard's read RPCs
 * (ListCampaigns, GetCampaignSeries, GetReference) against a real
 * kf-coordinator process on a private database.
 *
 * Campaigns are created through CreateCampaign; their evaluations are
 * written as rows (two device classes, two workers with measured
 * ceilings, a reused evaluation whose ceiling comes from the measurement
 * it copies), so the views are checked against numbers this file chose:
 * newest first, limit and before_id, per-class counts and bests, series
 * order and timestamps, the ceilings, the reference as sent.  Bad input
 * is refused naming the field; an unknown campaign is NOT_FOUND; a
 * worker's credential is PERMISSION_DENIED; a name that is markup comes
 * back byte for byte (escaping is the page's job, not the store's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "rpc.h"
#include "store.h"
#include "store_internal.h"
#include "test-coord-fixture.h"
#include "token.h"

#define TOKEN "views-token"
#define PATH(m) "/kernelfleet.Coordinator/" m
#define HOSTILE "<script>alert(1)</script><img src=x onerror=alert(2)>"
#define REFERENCE "/* ref */ int kf_launch(void) { return 0; }"

static struct {
  char dir[64];
  kf_tcoord co;
  kf_rpc_client *c;   /* admin (bootstrap) */
  kf_rpc_client *w;   /* a worker's credential */
  int64_t camp[3];    /* oldest first; camp[2] is named HOSTILE */
} g;

static const char *SPEC =
    "{\"name\": \"views\", \"backend\": \"cpu\", \"params\": [\"N\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"],"
    " \"dists\": [\"normal\"]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
    " \"sizes\": {\"check\": [{\"N\": 4}], \"bench\": {\"N\": 1024}},"
    " \"tolerance\": {\"f32\": {\"rtol\": 1e-4, \"atol\": 1e-6}},"
    " \"flops\": \"N\", \"bytes\": \"8*N\", \"reference\": \"reference.c\","
    " \"templates\": [{\"name\": \"t\", \"file\": \"t.c\"}]}";

static int64_t db_int(const char *sql) {
  char out[64] = "";
  if (kf_store__admin_exec(tdb.s, sql, out, sizeof out))
    fail_msg("%s: %s", sql, kf_store_errmsg(tdb.s));
  return strtoll(out, NULL, 10);
}

static int call(kf_rpc_client *c, const char *method,
                const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *type,
                ProtobufCMessage **resp, char *err, size_t errlen) {
  char path[128];
  snprintf(path, sizeof path, PATH("%s"), method);
  ProtobufCMessage *r = NULL;
  err[0] = '\0';
  int rc = kf_rpc_client_call_sync(c, path, req, type, 30000, &r, err, errlen);
  if (resp) *resp = r;
  else kf_rpc_free(r);
  return rc;
}

static int64_t create(const char *name) {
  Kernelfleet__TemplateSource ts = KERNELFLEET__TEMPLATE_SOURCE__INIT;
  ts.name = "t";
  ts.file = "t.c";
  ts.source = "int kf_launch(void) { return 0; }";
  Kernelfleet__TemplateSource *tp[] = {&ts};
  Kernelfleet__CreateCampaignRequest q =
      KERNELFLEET__CREATE_CAMPAIGN_REQUEST__INIT;
  q.name = (char *)name;
  q.spec_json.data = (uint8_t *)SPEC;
  q.spec_json.len = strlen(SPEC);
  q.reference_source = REFERENCE;
  q.templates = tp;
  q.n_templates = 1;
  q.backend = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  q.budget_evals = 7;
  ProtobufCMessage *resp = NULL;
  char err[512];
  int rc = call(g.c, "CreateCampaign", &q.base,
                &kernelfleet__create_campaign_response__descriptor, &resp,
                err, sizeof err);
  if (rc) fail_msg("CreateCampaign: %s: %s", kf_err_name(rc), err);
  int64_t id = ((Kernelfleet__CreateCampaignResponse *)resp)->campaign_id;
  kf_rpc_free(resp);
  return id;
}

/* One evaluation row of campaign cid on class dc by worker wid (0: a reuse
 * of evaluation `reused`), recorded `ago_s` seconds ago. */
static int64_t add_eval(int64_t cid, int64_t dc, int64_t wid, int64_t reused,
                        const char *outcome, double speedup, double gbps,
                        int ago_s) {
  char sql[2048];
  snprintf(sql, sizeof sql,
           "INSERT INTO candidates (campaign_id, source, source_sha256)"
           " VALUES (%lld, 'x', md5(random()::text)) RETURNING id",
           (long long)cid);
  int64_t cand = db_int(sql);
  int64_t task = 0;
  if (!reused) {
    snprintf(sql, sizeof sql, "INSERT INTO tasks (kind, campaign_id, state)"
             " VALUES ('eval', %lld, 'done') RETURNING id", (long long)cid);
    task = db_int(sql);
  }
  char tk[32], wk[32], rf[32], sp[32], gb[32];
  snprintf(tk, sizeof tk, task ? "%lld" : "NULL", (long long)task);
  snprintf(wk, sizeof wk, wid ? "%lld" : "NULL", (long long)wid);
  snprintf(rf, sizeof rf, reused ? "%lld" : "NULL", (long long)reused);
  snprintf(sp, sizeof sp, speedup > 0 ? "%.17g" : "NULL", speedup);
  snprintf(gb, sizeof gb, gbps > 0 ? "%.17g" : "NULL", gbps);
  snprintf(sql, sizeof sql,
           "INSERT INTO evaluations (candidate_id, campaign_id,"
           " device_class_id, task_id, worker_id, reused_from, outcome, stage,"
           " reason, time_ns_median, speedup, achieved_gbps,"
           " roofline_fraction, created_at) VALUES (%lld, %lld, %lld, %s, %s,"
           " %s, '%s', '%s', 'why', %s, %s, %s, %s,"
           " now() - interval '%d seconds') RETURNING id",
           (long long)cand, (long long)cid, (long long)dc, tk, wk, rf,
           outcome, strcmp(outcome, "ok") ? "compile" : "time",
           speedup > 0 ? "1000" : "NULL", sp, gb,
           speedup > 0 ? "0.5" : "NULL", ago_s);
  return db_int(sql);
}

static int group_setup(void **state) {
  (void)state;
  if (tdb_group_setup("views")) return -1;
  snprintf(g.dir, sizeof g.dir, "/tmp/kf-views-XXXXXX");
  if (!mkdtemp(g.dir)) return -1;
  const char *const extra[] = {"--log-level", "warn", NULL};
  if (tcoord_spawn(&g.co, g.dir, "coord", TOKEN, "127.0.0.1:0", extra))
    return -1;
  char err[512], secret[KF_TOKEN_SECRET_LEN + 1], hex[65];
  int64_t tid;
  if (kf_rpc_client_open(NULL, g.co.target, TOKEN, 64u << 20, &g.c, err,
                         sizeof err) ||
      kf_token_generate(secret, sizeof secret) ||
      kf_token_hash_hex(secret, strlen(secret), hex) ||
      kf_store_token_create(tdb.s, "worker", "views-w", hex, &tid) ||
      kf_rpc_client_open(NULL, g.co.target, secret, 1u << 20, &g.w, err,
                         sizeof err)) {
    fprintf(stderr, "setup: %s %s\n", err, kf_store_errmsg(tdb.s));
    return -1;
  }
  return 0;
}

static int group_teardown(void **state) {
  kf_rpc_client_close(g.c);
  kf_rpc_client_close(g.w);
  tcoord_kill(&g.co);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g.dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", g.dir);
  tdb_group_teardown(state);
  return 0;
}

/* Three campaigns; evaluations on two classes for the first. */
static void test_setup_rows(void **state) {
  (void)state;
  g.camp[0] = create("views-a");
  g.camp[1] = create("views-b");
  g.camp[2] = create(HOSTILE);
  int64_t dc1 = db_int("INSERT INTO device_classes (kind, model, isa) VALUES"
                       " (1, 'CPU One', 'x86-64-v3') RETURNING id");
  int64_t dc2 = db_int("INSERT INTO device_classes (kind, model, cc_major,"
                       " cc_minor, isa) VALUES (2, 'GPU Two', 9, 0, 'sm_90a')"
                       " RETURNING id");
  char sql[512];
  snprintf(sql, sizeof sql, "INSERT INTO workers (name, device_class_id,"
           " device) VALUES ('w1', %lld, '{\"copy_gbps\": 20.5,"
           " \"peak_gflops\": 100}') RETURNING id", (long long)dc1);
  int64_t w1 = db_int(sql);
  snprintf(sql, sizeof sql, "INSERT INTO workers (name, device_class_id,"
           " device) VALUES ('w2', %lld, '{\"copy_gbps\": 3000}') RETURNING id",
           (long long)dc2);
  int64_t w2 = db_int(sql);
  /* a: class 1: ok 1.5x, compile error, ok 2.5x; class 2: ok 4x.
   * b: one ok on class 2 that reuses a's class-2 measurement. */
  add_eval(g.camp[0], dc1, w1, 0, "ok", 1.5, 5.0, 40);
  add_eval(g.camp[0], dc1, w1, 0, "compile_error", 0, 0, 30);
  add_eval(g.camp[0], dc1, w1, 0, "ok", 2.5, 8.0, 20);
  int64_t e4 = add_eval(g.camp[0], dc2, w2, 0, "ok", 4.0, 2500.0, 10);
  add_eval(g.camp[1], dc2, 0, e4, "ok", 3.0, 2400.0, 5);
  /* a queued eval task of b counts as running */
  snprintf(sql, sizeof sql, "INSERT INTO tasks (kind, campaign_id) VALUES"
           " ('eval', %lld) RETURNING id", (long long)g.camp[1]);
  db_int(sql);
}

static const Kernelfleet__CampaignSummary *
find(const Kernelfleet__ListCampaignsResponse *r, int64_t id) {
  for (size_t i = 0; i < r->n_campaigns; i++)
    if (r->campaigns[i]->campaign->campaign_id == id) return r->campaigns[i];
  fail_msg("campaign %lld not listed", (long long)id);
  return NULL;
}

static void test_list(void **state) {
  (void)state;
  char err[512];
  ProtobufCMessage *resp = NULL;
  Kernelfleet__ListCampaignsRequest q = KERNELFLEET__LIST_CAMPAIGNS_REQUEST__INIT;
  int rc = call(g.c, "ListCampaigns", &q.base,
                &kernelfleet__list_campaigns_response__descriptor, &resp, err,
                sizeof err);
  assert_int_equal(rc, 0);
  const Kernelfleet__ListCampaignsResponse *r = (const void *)resp;
  assert_int_equal(r->n_campaigns, 3);
  /* newest first */
  assert_int_equal(r->campaigns[0]->campaign->campaign_id, g.camp[2]);
  assert_int_equal(r->campaigns[2]->campaign->campaign_id, g.camp[0]);
  assert_string_equal(r->campaigns[0]->campaign->name, HOSTILE);
  assert_int_equal(r->campaigns[0]->n_classes, 0);
  assert_int_equal(r->campaigns[0]->evals_done, 0);

  const Kernelfleet__CampaignSummary *a = find(r, g.camp[0]);
  assert_string_equal(a->campaign->name, "views-a");
  assert_string_equal(a->campaign->state, "running");
  assert_string_equal(a->language, "c");
  assert_int_equal(a->campaign->budget_evals, 7);
  assert_int_equal(a->evals_done, 4);
  assert_int_equal(a->evals_ok, 3);
  assert_true(a->best_speedup == 4.0);
  assert_int_equal(a->n_classes, 2);
  const Kernelfleet__ClassProgress *c1 = a->classes[0], *c2 = a->classes[1];
  assert_string_equal(c1->device_class->model, "CPU One");
  assert_int_equal(c1->evals_done, 3);
  assert_int_equal(c1->evals_ok, 2);
  assert_true(c1->best_speedup == 2.5);
  assert_true(c1->best_time_ns == 1000);
  assert_string_equal(c2->device_class->model, "GPU Two");
  assert_int_equal(c2->device_class->cc_major, 9);
  assert_int_equal(c2->evals_done, 1);
  assert_true(c2->best_speedup == 4.0);

  const Kernelfleet__CampaignSummary *b = find(r, g.camp[1]);
  assert_int_equal(b->evals_done, 1);
  assert_int_equal(b->evals_running, 1);
  assert_int_equal(b->n_classes, 1);
  assert_string_equal(b->classes[0]->device_class->model, "GPU Two");
  kf_rpc_free(resp);

  /* limit and before_id page through them */
  q.limit = 1;
  q.before_id = g.camp[2];
  rc = call(g.c, "ListCampaigns", &q.base,
            &kernelfleet__list_campaigns_response__descriptor, &resp, err,
            sizeof err);
  assert_int_equal(rc, 0);
  r = (const void *)resp;
  assert_int_equal(r->n_campaigns, 1);
  assert_int_equal(r->campaigns[0]->campaign->campaign_id, g.camp[1]);
  assert_int_equal(r->campaigns[0]->n_classes, 1);
  kf_rpc_free(resp);
}

static void test_series(void **state) {
  (void)state;
  char err[512];
  ProtobufCMessage *resp = NULL;
  Kernelfleet__GetCampaignSeriesRequest q =
      KERNELFLEET__GET_CAMPAIGN_SERIES_REQUEST__INIT;
  q.campaign_id = g.camp[0];
  int rc = call(g.c, "GetCampaignSeries", &q.base,
                &kernelfleet__get_campaign_series_response__descriptor, &resp,
                err, sizeof err);
  assert_int_equal(rc, 0);
  const Kernelfleet__GetCampaignSeriesResponse *r = (const void *)resp;
  assert_int_equal(r->n_points, 4);
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT (extract(epoch FROM started_at) * 1000)"
           "::bigint FROM campaigns WHERE id = %lld", (long long)g.camp[0]);
  assert_int_equal(r->started_at_ms, db_int(sql));
  for (size_t i = 1; i < r->n_points; i++)
    assert_true(r->points[i]->finished_at_ms > r->points[i - 1]->finished_at_ms);
  assert_int_equal(r->points[1]->outcome,
                   KERNELFLEET__OUTCOME__OUTCOME_COMPILE_ERROR);
  assert_string_equal(r->points[1]->stage, "compile");
  assert_true(r->points[0]->speedup == 1.5);
  assert_true(r->points[0]->achieved_gbps == 5.0);
  assert_true(r->points[0]->ceiling_gbps == 20.5);
  assert_true(r->points[0]->peak_gflops == 100);
  assert_string_equal(r->points[0]->device_class->model, "CPU One");
  assert_true(r->points[3]->ceiling_gbps == 3000);
  assert_true(r->points[3]->task_id > 0);
  kf_rpc_free(resp);

  /* the reuse: no task of its own, the measuring worker's ceiling */
  q.campaign_id = g.camp[1];
  rc = call(g.c, "GetCampaignSeries", &q.base,
            &kernelfleet__get_campaign_series_response__descriptor, &resp,
            err, sizeof err);
  assert_int_equal(rc, 0);
  r = (const void *)resp;
  assert_int_equal(r->n_points, 1);
  assert_int_equal(r->points[0]->task_id, 0);
  assert_true(r->points[0]->ceiling_gbps == 3000);
  kf_rpc_free(resp);

  /* limit: the oldest */
  q.campaign_id = g.camp[0];
  q.limit = 2;
  rc = call(g.c, "GetCampaignSeries", &q.base,
            &kernelfleet__get_campaign_series_response__descriptor, &resp,
            err, sizeof err);
  assert_int_equal(rc, 0);
  r = (const void *)resp;
  assert_int_equal(r->n_points, 2);
  assert_true(r->points[0]->speedup == 1.5);
  kf_rpc_free(resp);

  /* a campaign without evaluations: no points, its start */
  q.campaign_id = g.camp[2];
  q.limit = 0;
  rc = call(g.c, "GetCampaignSeries", &q.base,
            &kernelfleet__get_campaign_series_response__descriptor, &resp,
            err, sizeof err);
  assert_int_equal(rc, 0);
  r = (const void *)resp;
  assert_int_equal(r->n_points, 0);
  assert_true(r->started_at_ms > 0);
  kf_rpc_free(resp);
}

static void test_reference(void **state) {
  (void)state;
  char err[512];
  ProtobufCMessage *resp = NULL;
  Kernelfleet__GetReferenceRequest q = KERNELFLEET__GET_REFERENCE_REQUEST__INIT;
  q.campaign_id = g.camp[2];
  int rc = call(g.c, "GetReference", &q.base,
                &kernelfleet__get_reference_response__descriptor, &resp, err,
                sizeof err);
  assert_int_equal(rc, 0);
  const Kernelfleet__GetReferenceResponse *r = (const void *)resp;
  assert_string_equal(r->reference_source, REFERENCE);
  assert_string_equal(r->problem, "views");
  assert_string_equal(r->language, "c");
  kf_rpc_free(resp);
}

/* Each refusal names what was wrong; nothing is answered with data. */
static void test_refusals(void **state) {
  (void)state;
  char err[512];
  Kernelfleet__ListCampaignsRequest l = KERNELFLEET__LIST_CAMPAIGNS_REQUEST__INIT;
  l.limit = 501;
  assert_int_equal(call(g.c, "ListCampaigns", &l.base,
                        &kernelfleet__list_campaigns_response__descriptor,
                        NULL, err, sizeof err), KF_EPROTO);
  assert_non_null(strstr(err, "limit"));
  l.limit = 0;
  l.before_id = -1;
  assert_int_equal(call(g.c, "ListCampaigns", &l.base,
                        &kernelfleet__list_campaigns_response__descriptor,
                        NULL, err, sizeof err), KF_EPROTO);
  assert_non_null(strstr(err, "before_id"));

  Kernelfleet__GetCampaignSeriesRequest s =
      KERNELFLEET__GET_CAMPAIGN_SERIES_REQUEST__INIT;
  assert_int_equal(call(g.c, "GetCampaignSeries", &s.base,
                        &kernelfleet__get_campaign_series_response__descriptor,
                        NULL, err, sizeof err), KF_EPROTO);
  assert_non_null(strstr(err, "campaign_id"));
  s.campaign_id = 1;
  s.limit = 100001;
  assert_int_equal(call(g.c, "GetCampaignSeries", &s.base,
                        &kernelfleet__get_campaign_series_response__descriptor,
                        NULL, err, sizeof err), KF_EPROTO);
  assert_non_null(strstr(err, "limit"));
  s.campaign_id = 999999;
  s.limit = 0;
  assert_int_equal(call(g.c, "GetCampaignSeries", &s.base,
                        &kernelfleet__get_campaign_series_response__descriptor,
                        NULL, err, sizeof err), KF_ENOTFOUND);

  Kernelfleet__GetReferenceRequest f = KERNELFLEET__GET_REFERENCE_REQUEST__INIT;
  assert_int_equal(call(g.c, "GetReference", &f.base,
                        &kernelfleet__get_reference_response__descriptor,
                        NULL, err, sizeof err), KF_EPROTO);
  assert_non_null(strstr(err, "campaign_id"));
  f.campaign_id = 999999;
  assert_int_equal(call(g.c, "GetReference", &f.base,
                        &kernelfleet__get_reference_response__descriptor,
                        NULL, err, sizeof err), KF_ENOTFOUND);

  /* A worker may not read campaigns. */
  f.campaign_id = g.camp[0];
  s.campaign_id = g.camp[0];
  assert_int_equal(call(g.w, "ListCampaigns", &l.base,
                        &kernelfleet__list_campaigns_response__descriptor,
                        NULL, err, sizeof err), KF_EPERM);
  assert_int_equal(call(g.w, "GetCampaignSeries", &s.base,
                        &kernelfleet__get_campaign_series_response__descriptor,
                        NULL, err, sizeof err), KF_EPERM);
  assert_int_equal(call(g.w, "GetReference", &f.base,
                        &kernelfleet__get_reference_response__descriptor,
                        NULL, err, sizeof err), KF_EPERM);
}

static void test_clean_stop(void **state) {
  (void)state;
  tcoord_stop(&g.co);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_setup_rows),
      cmocka_unit_test(test_list),
      cmocka_unit_test(test_series),
      cmocka_unit_test(test_reference),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_clean_stop),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
