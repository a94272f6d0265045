/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-coord-proposer.c -- the coordinator's side of proposers,
 * through a real kf-coordinator process: ProposeCandidate with a declared
 * knob space (each malformed declaration refused naming the field; a good
 * one becomes a campaign template with origin "proposer" that GetCampaign
 * with_problem returns, named by the proposer or after its source's
 * sha256; a name that holds another source refused), and the accounting
 * RPCs ProposerRecordCalls / ProposerUsage (bad fields refused, totals
 * summed, a candidate of another campaign never linked).
 *
 * The group setup creates a private database on the "pg" fixture's server
 * (KF_TEST_PG) and spawns $KF_BIN_DIR/kf-coordinator on it, as
 * test-coord-badinput does.
 */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "rpc.h"
#include "store.h"
#include "store_internal.h"
#include "test-coord-fixture.h"

#define TOKEN "proposer-token"
#define MAX_MSG 65536
#define PATH(m) "/kernelfleet.Coordinator/" m

static struct {
  kf_tcoord_group tg; /* the coordinator, and a client with the token */
} g;

static int group_setup(void **state) {
  (void)state;
  char maxmsg[16];
  snprintf(maxmsg, sizeof maxmsg, "%d", MAX_MSG);
  const char *const extra[] = {"--max-msg-bytes", maxmsg, "--log-level",
                               "warn", NULL};
  return tcoord_group_setup(&g.tg, "coordprop", TOKEN, extra);
}

static int group_teardown(void **state) {
  (void)state;
  tcoord_group_teardown(&g.tg);
  return 0;
}

static int64_t db_int(const char *sql) {
  char out[64] = "";
  if (kf_store__admin_exec(tdb.s, sql, out, sizeof out))
    fail_msg("%s: %s", sql, kf_store_errmsg(tdb.s));
  return strtoll(out, NULL, 10);
}

static int call(const char *path, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *type,
                ProtobufCMessage **resp, char *err, size_t errlen) {
  ProtobufCMessage *r = NULL;
  err[0] = '\0';
  int rc = kf_rpc_client_call_sync(g.tg.c, path, req, type, 10000, &r, err,
                                   errlen);
  if (resp) *resp = r;
  else kf_rpc_free(r);
  return rc;
}

static const char *SPEC =
    "{\"name\": \"p\", \"backend\": \"cpu\", \"params\": [\"N\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"],"
    " \"dists\": [\"normal\"]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
    " \"sizes\": {\"check\": [{\"N\": 4}], \"bench\": {\"N\": 1024}},"
    " \"tolerance\": {\"f32\": {\"rtol\": 1e-4, \"atol\": 1e-6}},"
    " \"flops\": \"N\", \"bytes\": \"8*N\", \"reference\": \"reference.c\","
    " \"templates\": [{\"name\": \"t\", \"file\": \"t.c\"}]}";
static const char *REF = "int kf_launch(void) { return 0; }";

static int64_t create_campaign(void) {
  Kernelfleet__TemplateSource ts = KERNELFLEET__TEMPLATE_SOURCE__INIT;
  ts.name = "t";
  ts.file = "t.c";
  ts.source = "int kf_launch(void) { return 1; }";
  Kernelfleet__TemplateSource *tp[] = {&ts};
  Kernelfleet__CreateCampaignRequest q =
      KERNELFLEET__CREATE_CAMPAIGN_REQUEST__INIT;
  q.name = "coordprop";
  q.spec_json.data = (uint8_t *)SPEC;
  q.spec_json.len = strlen(SPEC);
  q.reference_source = (char *)REF;
  q.templates = tp;
  q.n_templates = 1;
  q.backend = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  q.budget_evals = 5;
  ProtobufCMessage *resp = NULL;
  char err[512];
  int rc = call(PATH("CreateCampaign"), &q.base,
                &kernelfleet__create_campaign_response__descriptor, &resp, err,
                sizeof err);
  if (rc) fail_msg("CreateCampaign: %s", err);
  int64_t id = ((Kernelfleet__CreateCampaignResponse *)resp)->campaign_id;
  kf_rpc_free(resp);
  return id;
}

/* A proposal with one knob space entry per (name, values...) given. */
typedef struct {
  Kernelfleet__ProposeCandidateRequest q;
  Kernelfleet__KnobSpace ks[16];
  Kernelfleet__KnobSpace *ksp[16];
  char *vals[16][20];
  Kernelfleet__Knob kn[16];
  Kernelfleet__Knob *knp[16];
} prop;

static void prop_init(prop *p, int64_t cid, const char *source) {
  memset(p, 0, sizeof *p);
  kernelfleet__propose_candidate_request__init(&p->q);
  p->q.campaign_id = cid;
  p->q.source = (char *)source;
  p->q.proposer = "llm:unit";
  p->q.knob_space = p->ksp;
  p->q.knobs = p->knp;
}

static void prop_space(prop *p, const char *name, int n, ...) {
  size_t k = p->q.n_knob_space++;
  kernelfleet__knob_space__init(&p->ks[k]);
  p->ks[k].name = (char *)name;
  p->ks[k].values = p->vals[k];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) p->vals[k][i] = va_arg(ap, char *);
  va_end(ap);
  p->ks[k].n_values = (size_t)n;
  p->ksp[k] = &p->ks[k];
}

static void prop_knob(prop *p, const char *name, const char *value) {
  size_t k = p->q.n_knobs++;
  kernelfleet__knob__init(&p->kn[k]);
  p->kn[k].name = (char *)name;
  p->kn[k].value = (char *)value;
  p->knp[k] = &p->kn[k];
}

static int propose(prop *p, Kernelfleet__ProposeCandidateResponse **out,
                   char *err, size_t errlen) {
  ProtobufCMessage *resp = NULL;
  int rc = call(PATH("ProposeCandidate"), &p->q.base,
                &kernelfleet__propose_candidate_response__descriptor, &resp,
                err, errlen);
  if (out) *out = (void *)resp;
  else kf_rpc_free(resp);
  return rc;
}

static void expect_refused(prop *p, const char *want) {
  char err[512];
  int rc = propose(p, NULL, err, sizeof err);
  if (rc != KF_EPROTO || !strstr(err, want))
    fail_msg("expected INVALID_ARGUMENT with '%s', got %s: %s", want,
             kf_err_name(rc), err);
}

#define SRC "int kf_launch(void) { return BLOCK + WIDTH; }"

static void test_knob_space_refused(void **state) {
  (void)state;
  int64_t cid = create_campaign();
  prop p;
  prop_init(&p, cid, SRC);
  prop_space(&p, "KF_SEED", 1, "1");
  expect_refused(&p, "knob_space[0].name must be a C identifier");
  prop_init(&p, cid, SRC);
  prop_space(&p, "BLOCK", 2, "1", "2");
  prop_space(&p, "BLOCK", 1, "3");
  expect_refused(&p, "knob_space[1].name 'BLOCK' repeats");
  prop_init(&p, cid, SRC);
  prop_space(&p, "DEPTH", 1, "1");
  expect_refused(&p, "knob_space[0].name 'DEPTH' does not appear in the"
                     " source");
  prop_init(&p, cid, SRC);
  prop_space(&p, "BLOCK", 0);
  expect_refused(&p, "knob_space[0].values must hold 1..16 values");
  prop_init(&p, cid, SRC);
  prop_space(&p, "BLOCK", 2, "1", "a b");
  expect_refused(&p, "knob_space[0].values[1] must be 1..23 characters");
  prop_init(&p, cid, SRC);
  prop_space(&p, "BLOCK", 2, "8", "8");
  expect_refused(&p, "knob_space[0].values[1] '8' repeats");
  prop_init(&p, cid, SRC);
  prop_space(&p, "BLOCK", 2, "8", "16");
  prop_knob(&p, "BLOCK", "32");
  expect_refused(&p, "knobs[0].value '32' is not one of knob_space 'BLOCK'");
  prop_init(&p, cid, SRC);
  prop_space(&p, "BLOCK", 2, "8", "16");
  prop_space(&p, "WIDTH", 1, "4");
  prop_knob(&p, "BLOCK", "16");
  expect_refused(&p, "knobs must set every knob of knob_space (2)");
  prop_init(&p, cid, SRC);
  prop_space(&p, "BLOCK", 2, "8", "16");
  prop_knob(&p, "WIDTH", "16");
  expect_refused(&p, "knobs[0].name 'WIDTH' is not in knob_space");
  prop_init(&p, cid, SRC);
  for (int i = 0; i < 13; i++) prop_space(&p, "BLOCK", 1, "1");
  expect_refused(&p, "knob_space: at most 12 knobs");
  char sql[160];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM candidates WHERE"
           " campaign_id = %lld", (long long)cid);
  assert_int_equal(db_int(sql), 0);
}

static void test_knob_space_template(void **state) {
  (void)state;
  int64_t cid = create_campaign();
  char err[512], sql[512], out[4096];
  /* No name: "proposal-" and 12 hex digits of the source's sha256; no
   * knobs: the first value of each. */
  prop p;
  prop_init(&p, cid, SRC);
  prop_space(&p, "BLOCK", 3, "64", "128", "256");
  prop_space(&p, "WIDTH", 2, "4", "8");
  Kernelfleet__ProposeCandidateResponse *r = NULL;
  int rc = propose(&p, &r, err, sizeof err);
  if (rc) fail_msg("ProposeCandidate: %s", err);
  assert_true(r->candidate_id > 0);
  assert_false(r->duplicate);
  assert_int_equal(strncmp(r->template_name, "proposal-", 9), 0);
  assert_int_equal(strlen(r->template_name), 9 + 12);
  snprintf(sql, sizeof sql, "SELECT left(encode(sha256(convert_to('%s',"
           " 'UTF8')), 'hex'), 12)", SRC);
  assert_int_equal(kf_store__admin_exec(tdb.s, sql, out, sizeof out), 0);
  assert_string_equal(r->template_name + 9, out);
  snprintf(sql, sizeof sql, "SELECT template_name || ' ' || knobs::text ||"
           " ' ' || flags || ' ' || proposer FROM candidates WHERE id = %lld",
           (long long)r->candidate_id);
  assert_int_equal(kf_store__admin_exec(tdb.s, sql, out, sizeof out), 0);
  char want[256];
  snprintf(want, sizeof want, "%s {\"BLOCK\": \"64\", \"WIDTH\": \"4\"}"
           " -DBLOCK=64 -DWIDTH=4 llm:unit", r->template_name);
  assert_string_equal(out, want);
  kf_rpc_free(&r->base);

  /* Named, with its own point of the space. */
  prop_init(&p, cid, SRC " /* v2 */");
  p.q.template_name = "tiled";
  prop_space(&p, "BLOCK", 2, "64", "128");
  prop_space(&p, "WIDTH", 1, "4");
  prop_knob(&p, "WIDTH", "4");
  prop_knob(&p, "BLOCK", "128");
  if ((rc = propose(&p, &r, err, sizeof err)))
    fail_msg("ProposeCandidate: %s", err);
  assert_string_equal(r->template_name, "tiled");
  snprintf(sql, sizeof sql, "SELECT flags FROM candidates WHERE id = %lld",
           (long long)r->candidate_id);
  assert_int_equal(kf_store__admin_exec(tdb.s, sql, out, sizeof out), 0);
  assert_string_equal(out, "-DBLOCK=128 -DWIDTH=4");
  kf_rpc_free(&r->base);

  /* The same name for another source: refused, nothing stored. */
  prop_init(&p, cid, SRC " /* v3 */");
  p.q.template_name = "tiled";
  prop_space(&p, "BLOCK", 1, "64");
  rc = propose(&p, NULL, err, sizeof err);
  if (rc == 0 || !strstr(err, "template_name 'tiled' names another"
                              " template"))
    fail_msg("expected a refusal naming 'tiled', got %s: %s",
             kf_err_name(rc), err);
  /* The same source again: the template is not added twice. */
  prop_init(&p, cid, SRC " /* v2 */");
  prop_space(&p, "BLOCK", 2, "64", "128");
  prop_space(&p, "WIDTH", 1, "4");
  if ((rc = propose(&p, &r, err, sizeof err)))
    fail_msg("ProposeCandidate: %s", err);
  assert_string_equal(r->template_name, "tiled");
  kf_rpc_free(&r->base);

  /* GetCampaign with_problem: spec, reference, language and templates,
   * the proposers' with their origin. */
  Kernelfleet__GetCampaignRequest gq = KERNELFLEET__GET_CAMPAIGN_REQUEST__INIT;
  gq.campaign_id = cid;
  gq.with_problem = true;
  gq.with_sources = true;
  gq.top = 5;
  ProtobufCMessage *resp = NULL;
  if ((rc = call(PATH("GetCampaign"), &gq.base,
                 &kernelfleet__get_campaign_response__descriptor, &resp, err,
                 sizeof err)))
    fail_msg("GetCampaign: %s", err);
  const Kernelfleet__GetCampaignResponse *gr = (const void *)resp;
  assert_int_equal(gr->spec_json.len, strlen(SPEC));
  assert_memory_equal(gr->spec_json.data, SPEC, strlen(SPEC));
  assert_string_equal(gr->reference_source, REF);
  assert_string_equal(gr->language, "c");
  assert_int_equal(gr->n_templates, 3);
  assert_string_equal(gr->templates[0]->name, "t");
  assert_string_equal(gr->templates[0]->origin, "");
  assert_string_equal(gr->templates[1]->origin, "proposer");
  assert_string_equal(gr->templates[1]->proposer, "llm:unit");
  assert_string_equal(gr->templates[1]->source, SRC);
  assert_int_equal(gr->templates[1]->n_knobs, 2);
  assert_string_equal(gr->templates[1]->knobs[0]->name, "BLOCK");
  assert_int_equal(gr->templates[1]->knobs[0]->n_values, 3);
  assert_string_equal(gr->templates[1]->knobs[0]->values[2], "256");
  assert_string_equal(gr->templates[2]->name, "tiled");
  /* no worker has registered: no device to describe */
  assert_int_equal(gr->n_devices, 0);
  kf_rpc_free(resp);
  /* Sources are bounded: top at most 32 with them. */
  gq.top = 33;
  rc = call(PATH("GetCampaign"), &gq.base,
            &kernelfleet__get_campaign_response__descriptor, NULL, err,
            sizeof err);
  assert_int_equal(rc, KF_EPROTO);
  assert_non_null(strstr(err, "with_sources allows top 0..32"));
  gq.top = 5;
  /* Without with_problem nothing of it travels. */
  gq.with_problem = false;
  if ((rc = call(PATH("GetCampaign"), &gq.base,
                 &kernelfleet__get_campaign_response__descriptor, &resp, err,
                 sizeof err)))
    fail_msg("GetCampaign: %s", err);
  gr = (const void *)resp;
  assert_int_equal(gr->spec_json.len, 0);
  assert_int_equal(gr->n_templates, 0);
  kf_rpc_free(resp);
}

static void record_one(Kernelfleet__ProposerCall *k, const char *outcome,
                       uint64_t pt, uint64_t ct, double cost, int64_t cand) {
  kernelfleet__proposer_call__init(k);
  k->proposer = "llm:unit";
  k->model = "unit-model";
  k->prompt_version = "system.md@000000000000";
  k->operation = "improve";
  k->outcome = (char *)outcome;
  k->reason = "";
  k->prompt_tokens = pt;
  k->completion_tokens = ct;
  k->cost = cost;
  k->attempts = 1;
  k->http_status = 200;
  k->candidate_id = cand;
}

static int record(int64_t cid, Kernelfleet__ProposerCall **calls, size_t n,
                  char *err, size_t errlen) {
  Kernelfleet__ProposerRecordCallsRequest q =
      KERNELFLEET__PROPOSER_RECORD_CALLS_REQUEST__INIT;
  q.campaign_id = cid;
  q.calls = calls;
  q.n_calls = n;
  return call(PATH("ProposerRecordCalls"), &q.base,
              &kernelfleet__proposer_record_calls_response__descriptor, NULL,
              err, errlen);
}

static void test_accounting(void **state) {
  (void)state;
  int64_t cid = create_campaign(), other = create_campaign();
  char err[512], sql[256];
  /* a candidate of the other campaign */
  prop p;
  prop_init(&p, other, "int kf_launch(void) { return 7; }");
  Kernelfleet__ProposeCandidateResponse *r = NULL;
  if (propose(&p, &r, err, sizeof err)) fail_msg("propose: %s", err);
  int64_t foreign = r->candidate_id;
  kf_rpc_free(&r->base);
  prop_init(&p, cid, "int kf_launch(void) { return 8; }");
  if (propose(&p, &r, err, sizeof err)) fail_msg("propose: %s", err);
  int64_t mine = r->candidate_id;
  kf_rpc_free(&r->base);

  Kernelfleet__ProposerCall k[3], *kp[3] = {&k[0], &k[1], &k[2]};
  record_one(&k[0], "ok", 1200, 300, 0.75, mine);
  record_one(&k[1], "malformed", 800, 20, 0.25, 0);
  record_one(&k[2], "ok", 5, 5, 0, foreign);
  /* refusals, each naming its field; nothing is stored */
  int rc = record(cid, kp, 0, err, sizeof err);
  assert_int_equal(rc, KF_EPROTO);
  assert_non_null(strstr(err, "calls must hold 1..64 entries"));
  k[1].cost = NAN;
  rc = record(cid, kp, 3, err, sizeof err);
  assert_int_equal(rc, KF_EPROTO);
  assert_non_null(strstr(err, "calls[1].cost must be a finite number"));
  k[1].cost = 0.25;
  k[1].proposer = "evil proposer";
  rc = record(cid, kp, 3, err, sizeof err);
  assert_int_equal(rc, KF_EPROTO);
  assert_non_null(strstr(err, "calls[1].proposer must be"));
  k[1].proposer = "llm:unit";
  k[1].outcome = "";
  rc = record(cid, kp, 3, err, sizeof err);
  assert_int_equal(rc, KF_EPROTO);
  assert_non_null(strstr(err, "calls[1].outcome must be 1..31 bytes"));
  k[1].outcome = "malformed";
  rc = record(999999, kp, 3, err, sizeof err);
  assert_int_equal(rc, KF_ENOTFOUND);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM proposer_calls");
  assert_int_equal(db_int(sql), 0);

  if ((rc = record(cid, kp, 3, err, sizeof err)))
    fail_msg("ProposerRecordCalls: %s", err);
  /* the other campaign's candidate is not linked */
  snprintf(sql, sizeof sql, "SELECT count(*) FROM proposer_calls WHERE"
           " campaign_id = %lld AND candidate_id IS NULL", (long long)cid);
  assert_int_equal(db_int(sql), 2);

  Kernelfleet__ProposerUsageRequest uq = KERNELFLEET__PROPOSER_USAGE_REQUEST__INIT;
  uq.campaign_id = cid;
  uq.limit = 2;
  ProtobufCMessage *resp = NULL;
  if ((rc = call(PATH("ProposerUsage"), &uq.base,
                 &kernelfleet__proposer_usage_response__descriptor, &resp,
                 err, sizeof err)))
    fail_msg("ProposerUsage: %s", err);
  const Kernelfleet__ProposerUsageResponse *u = (const void *)resp;
  assert_int_equal(u->calls, 3);
  assert_int_equal(u->failures, 1);
  assert_int_equal(u->prompt_tokens, 2005);
  assert_int_equal(u->completion_tokens, 325);
  assert_true(fabs(u->cost - 1.0) < 1e-12);
  assert_int_equal(u->n_recent, 2); /* newest first */
  assert_string_equal(u->recent[0]->outcome, "ok");
  assert_int_equal(u->recent[0]->candidate_id, 0);
  assert_string_equal(u->recent[1]->outcome, "malformed");
  assert_string_equal(u->recent[1]->prompt_version, "system.md@000000000000");
  assert_int_equal(strlen(u->recent[1]->created_at), 24);
  kf_rpc_free(resp);
  uq.campaign_id = other;
  if ((rc = call(PATH("ProposerUsage"), &uq.base,
                 &kernelfleet__proposer_usage_response__descriptor, &resp,
                 err, sizeof err)))
    fail_msg("ProposerUsage: %s", err);
  u = (const void *)resp;
  assert_int_equal(u->calls, 0);
  assert_int_equal(u->n_recent, 0);
  kf_rpc_free(resp);
  uq.campaign_id = 999999;
  rc = call(PATH("ProposerUsage"), &uq.base,
            &kernelfleet__proposer_usage_response__descriptor, NULL, err,
            sizeof err);
  assert_int_equal(rc, KF_ENOTFOUND);
}

static void test_still_alive(void **state) {
  (void)state;
  assert_int_equal(tcoord_reap(&g.tg.co), -1);
  tcoord_stop(&g.tg.co); /* SIGTERM: exits 0 */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_knob_space_refused),
      cmocka_unit_test(test_knob_space_template),
      cmocka_unit_test(test_accounting),
      cmocka_unit_test(test_still_alive),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
