/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-coord-profile.c -- profiles and diagnoses through a real
 * kf-coordinator process (docs/profiling.md): a worker (this test, over
 * gRPC) leases the eval tasks of a campaign created with --profile all and
 * reports EvalResults the way kf-harness and kf-worker make them.
 *  - the EvalRequest asks for the profile ("on");
 *  - a report with a profile is accepted, and the coordinator stores its
 *    diagnosis from the report's numbers (memory-bound at 98% of the
 *    measured bandwidth) and its profile in eval_profiles;
 *  - a report whose profile has text that is not UTF-8 is refused
 *    (REPORT_INVALID, the field named) and stores nothing;
 *  - ListEvaluations with candidate_id answers that candidate's
 *    evaluations with the diagnosis and profile as wire messages; a
 *    negative candidate_id is INVALID_ARGUMENT naming the field;
 *  - the search then stops the campaign: "memory-bound at 98.0% of the
 *    measured bandwidth";
 *  - CreateCampaign refuses a bad profile policy naming it;
 *  - the llm proposer's context (kf_proposer_context_fetch, over the same
 *    RPCs the proposer uses) holds the kernel with its diagnosis and its
 *    profile's numbers, the class's facts (read/write bandwidths too),
 *    and a prescription for the diagnosed bound; ProposerUsage counts the
 *    profiling pass's time (profile_ms) per profiled evaluation.
 * The fixture (a private database on the "pg" server, the coordinator
 * spawned with a port file) is test-coord-badinput.c's.
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
#include "proposer.h"
#include "rpc.h"
#include "store.h"
#include "store_internal.h"
#include "test-coord-fixture.h"

#define TOKEN "profile-token"
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
  return tcoord_group_setup(&g.tg, "coordprof", TOKEN, extra);
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

/* One blocking call on client c; returns its KF code, err holds the
 * server's text. */
static int call(kf_rpc_client *c, const char *path,
                const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *type,
                ProtobufCMessage **resp, char *err, size_t errlen) {
  ProtobufCMessage *r = NULL;
  err[0] = '\0';
  int rc = kf_rpc_client_call_sync(c, path, req, type, 10000, &r, err,
                                   errlen);
  if (resp) *resp = r;
  else kf_rpc_free(r);
  return rc;
}

static void assert_alive(void) {
  if (tcoord_reap(&g.tg.co) != -1)
    fail_msg("kf-coordinator died; its log: %s", g.tg.co.log);
}

static const char SPEC[] =
    "{\"name\": \"prof\", \"backend\": \"cpu\", \"params\": [\"N\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"],"
    " \"dists\": [\"normal\"]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
    " \"sizes\": {\"check\": [{\"N\": 4}], \"bench\": {\"N\": 1024}},"
    " \"tolerance\": {\"f32\": {\"rtol\": 1e-4, \"atol\": 1e-6}},"
    " \"flops\": \"N\", \"bytes\": \"8*N\", \"reference\": \"reference.c\","
    " \"templates\": [{\"name\": \"t\", \"file\": \"t.c\","
    " \"knobs\": [{\"name\": \"U\", \"values\": [\"1\", \"2\", \"4\"]}]}]}";

static int create(const char *policy, int64_t *id, char *err, size_t elen) {
  Kernelfleet__KnobSpace ks = KERNELFLEET__KNOB_SPACE__INIT;
  char *vals[] = {"1", "2", "4"};
  ks.name = "U";
  ks.values = vals;
  ks.n_values = 3;
  Kernelfleet__KnobSpace *ksp[] = {&ks};
  Kernelfleet__TemplateSource ts = KERNELFLEET__TEMPLATE_SOURCE__INIT;
  ts.name = "t";
  ts.file = "t.c";
  ts.source = "int kf_launch(void) { return 0; }";
  ts.knobs = ksp;
  ts.n_knobs = 1;
  Kernelfleet__TemplateSource *tp[] = {&ts};
  Kernelfleet__CreateCampaignRequest q =
      KERNELFLEET__CREATE_CAMPAIGN_REQUEST__INIT;
  q.name = "prof";
  q.spec_json.data = (uint8_t *)SPEC;
  q.spec_json.len = strlen(SPEC);
  q.reference_source = "int kf_launch(void) { return 0; }";
  q.templates = tp;
  q.n_templates = 1;
  q.backend = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  q.budget_evals = 3;
  q.target_roofline = 1;
  q.profile = (char *)policy;
  ProtobufCMessage *resp = NULL;
  int rc = call(g.tg.c, PATH("CreateCampaign"), &q.base,
                &kernelfleet__create_campaign_response__descriptor, &resp, err,
                elen);
  if (!rc) *id = ((Kernelfleet__CreateCampaignResponse *)resp)->campaign_id;
  kf_rpc_free(resp);
  return rc;
}

/* An eval worker of a CPU class with measured ceilings. */
static int64_t eval_worker(void) {
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "coordprof-cpu";
  dc.isa = "x86_64";
  Kernelfleet__DeviceInfo info = KERNELFLEET__DEVICE_INFO__INIT;
  info.mem_bytes = 1ull << 30;
  info.copy_gbps = 10;
  info.peak_gflops = 5;
  info.read_gbps = 11.5;
  info.write_gbps = 7.25;
  char *kinds[] = {"eval"};
  Kernelfleet__RegisterWorkerRequest req =
      KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
  req.name = "w-prof";
  req.hostname = "test";
  req.device_class = &dc;
  req.device = &info;
  req.task_kinds = kinds;
  req.n_task_kinds = 1;
  req.slots = 2;
  ProtobufCMessage *resp = NULL;
  char err[256];
  int rc = call(g.tg.c, PATH("RegisterWorker"), &req.base,
                &kernelfleet__register_worker_response__descriptor, &resp, err,
                sizeof err);
  if (rc) fail_msg("RegisterWorker: %s: %s", kf_err_name(rc), err);
  int64_t id = ((Kernelfleet__RegisterWorkerResponse *)resp)->worker_id;
  kf_rpc_free(resp);
  return id;
}

/* Leases one eval task (waiting for the search to make it). */
static Kernelfleet__Task *lease_one(int64_t w, ProtobufCMessage **hold) {
  Kernelfleet__LeaseTasksRequest lr = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
  lr.worker_id = w;
  lr.max_tasks = 1;
  lr.wait_ms = 3000;
  char err[256];
  for (int tries = 0; tries < 8; tries++) {
    ProtobufCMessage *resp = NULL;
    int rc = call(g.tg.c, PATH("LeaseTasks"), &lr.base,
                  &kernelfleet__lease_tasks_response__descriptor, &resp, err,
                  sizeof err);
    if (rc) fail_msg("LeaseTasks: %s: %s", kf_err_name(rc), err);
    const Kernelfleet__LeaseTasksResponse *l = (const void *)resp;
    if (l->n_tasks == 1) {
      *hold = resp;
      return l->tasks[0];
    }
    kf_rpc_free(resp);
  }
  char state[512] = "";
  kf_store__admin_exec(tdb.s, "SELECT string_agg(state || ': ' ||"
                       " COALESCE(stop_reason, ''), '; ') FROM campaigns",
                       state, sizeof state);
  fail_msg("no eval task leased in 40 long polls (campaigns: %s; %lld"
           " tasks)", state,
           (long long)db_int("SELECT count(*) FROM tasks"));
  return NULL;
}

/* Reports t ok with an EvalResult of time 1000 ns at 9.8 of 10 GB/s and
 * profile p; returns the verdict, *detail its detail. */
static int report(int64_t w, const Kernelfleet__Task *t,
                  Kernelfleet__ProfileReport *p, char *detail, size_t dl) {
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "coordprof-cpu";
  dc.isa = "x86_64";
  Kernelfleet__DeviceInfo info = KERNELFLEET__DEVICE_INFO__INIT;
  info.copy_gbps = 10;
  info.peak_gflops = 5;
  Kernelfleet__EvalResult er = KERNELFLEET__EVAL_RESULT__INIT;
  er.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  er.time_ns_median = 1000;
  er.ref_time_ns_median = 3000;
  er.repetitions = 10;
  er.achieved_gbps = 9.8;
  er.achieved_gflops = 1;
  er.ceiling_gbps = 10;
  er.device_class = &dc;
  er.device = &info;
  er.profile = p;
  uint8_t buf[2048];
  size_t len = kernelfleet__eval_result__pack(&er, buf);
  Kernelfleet__TaskResult r = KERNELFLEET__TASK_RESULT__INIT;
  r.task_id = t->task_id;
  r.attempt = t->attempt;
  r.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  r.stage = "time";
  r.output.data = buf;
  r.output.len = len;
  Kernelfleet__TaskResult *rp[] = {&r};
  Kernelfleet__ReportResultRequest rr = KERNELFLEET__REPORT_RESULT_REQUEST__INIT;
  rr.worker_id = w;
  rr.results = rp;
  rr.n_results = 1;
  ProtobufCMessage *resp = NULL;
  char err[256];
  int rc = call(g.tg.c, PATH("ReportResult"), &rr.base,
                &kernelfleet__report_result_response__descriptor, &resp, err,
                sizeof err);
  if (rc) fail_msg("ReportResult: %s: %s", kf_err_name(rc), err);
  const Kernelfleet__ReportResultResponse *v = (const void *)resp;
  assert_int_equal(v->n_verdicts, 1);
  int verdict = v->verdicts[0];
  snprintf(detail, dl, "%s", v->n_details ? v->details[0] : "");
  kf_rpc_free(resp);
  return verdict;
}

static void test_profile_through_the_coordinator(void **state) {
  (void)state;
  char err[512];
  int64_t id = 0;
  /* a bad policy is refused, naming the field */
  int rc = create("top:0", &id, err, sizeof err);
  assert_int_not_equal(rc, 0);
  assert_non_null(strstr(err, "profile must be"));

  int64_t w = eval_worker();
  rc = create("all", &id, err, sizeof err);
  if (rc) fail_msg("CreateCampaign: %s: %s", kf_err_name(rc), err);

  ProtobufCMessage *hold = NULL;
  Kernelfleet__Task *t = lease_one(w, &hold);
  Kernelfleet__EvalRequest *rq = kernelfleet__eval_request__unpack(
      NULL, t->payload.len, t->payload.data);
  assert_non_null(rq);
  assert_string_equal(rq->profile, "on");
  int64_t cand = rq->candidate_id;
  kernelfleet__eval_request__free_unpacked(rq, NULL);

  Kernelfleet__ProfileStall st = KERNELFLEET__PROFILE_STALL__INIT;
  st.reason = "long_scoreboard";
  st.cycles = 12.5;
  Kernelfleet__ProfileStall *sp[] = {&st};
  Kernelfleet__ProfileReport p = KERNELFLEET__PROFILE_REPORT__INIT;
  p.status = "ok";
  p.tool = "ncu";
  p.kernel = "twice(const float *, float *, long long)";
  p.kernels = 1;
  p.duration_ns = 950;
  p.dram_pct = 91;
  p.sm_pct = 12;
  p.occupancy_pct = 80;
  p.l1_hit_pct = -1;
  p.l2_hit_pct = 20;
  p.registers = 16;
  p.stalls = sp;
  p.n_stalls = 1;
  p.profile_ms = 700;
  /* a profile with text that is not UTF-8: refused, nothing stored (the
   * accepted report comes second: at 98% of the bandwidth it ends the
   * search, and the tasks left with it) */
  char detail[256];
  p.reason = "counters \xff";
  assert_int_equal(report(w, t, &p, detail, sizeof detail),
                   KERNELFLEET__REPORT_VERDICT__REPORT_INVALID);
  assert_string_equal(detail, "profile.reason is not valid UTF-8 (byte 9)");
  char sql[512];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM evaluations WHERE task_id"
           " = %lld", (long long)t->task_id);
  assert_int_equal(db_int(sql), 0);
  kf_rpc_free(hold);
  p.reason = "";

  t = lease_one(w, &hold);
  rq = kernelfleet__eval_request__unpack(NULL, t->payload.len,
                                         t->payload.data);
  assert_non_null(rq);
  assert_string_equal(rq->profile, "on");
  cand = rq->candidate_id;
  kernelfleet__eval_request__free_unpacked(rq, NULL);
  assert_int_equal(report(w, t, &p, detail, sizeof detail),
                   KERNELFLEET__REPORT_VERDICT__REPORT_ACCEPTED);
  kf_rpc_free(hold);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM eval_profiles p JOIN"
           " evaluations e ON e.id = p.evaluation_id WHERE e.candidate_id ="
           " %lld AND p.bound = 'memory' AND abs(p.bandwidth_fraction - 0.98)"
           " < 1e-9 AND p.profiled AND p.status = 'ok' AND p.dram_pct = 91"
           " AND p.l1_hit_pct IS NULL AND p.stalls->0->>'reason' ="
           " 'long_scoreboard' AND p.detail LIKE 'memory-bound at 98.0%%'",
           (long long)cand);
  assert_int_equal(db_int(sql), 1);
  /* the search stops the problem: memory-bound at 98% of the bandwidth */
  for (int i = 0; i < 100; i++) {
    snprintf(sql, sizeof sql, "SELECT count(*) FROM campaigns WHERE id ="
             " %lld AND stop_reason LIKE 'memory-bound at 98.0%%'",
             (long long)id);
    if (db_int(sql) == 1) break;
    tcoord_sleep_ms(100);
  }
  assert_int_equal(db_int(sql), 1);

  /* the candidate's evaluations over the wire, with both */
  Kernelfleet__ListEvaluationsRequest lr =
      KERNELFLEET__LIST_EVALUATIONS_REQUEST__INIT;
  lr.campaign_id = id;
  lr.candidate_id = cand;
  ProtobufCMessage *resp = NULL;
  rc = call(g.tg.c, PATH("ListEvaluations"), &lr.base,
            &kernelfleet__list_evaluations_response__descriptor, &resp, err,
            sizeof err);
  if (rc) fail_msg("ListEvaluations: %s: %s", kf_err_name(rc), err);
  const Kernelfleet__ListEvaluationsResponse *l = (const void *)resp;
  assert_int_equal(l->n_evaluations, 1);
  const Kernelfleet__EvaluationSummary *e = l->evaluations[0];
  assert_int_equal(e->candidate_id, cand);
  assert_non_null(e->diagnosis);
  assert_string_equal(e->diagnosis->bound, "memory");
  assert_true(fabs(e->diagnosis->bandwidth_fraction - 0.98) < 1e-9);
  assert_true(fabs(e->diagnosis->compute_fraction - 0.2) < 1e-9);
  assert_true(e->diagnosis->profiled);
  assert_non_null(e->profile);
  assert_string_equal(e->profile->status, "ok");
  assert_string_equal(e->profile->kernel, p.kernel);
  assert_true(e->profile->l1_hit_pct < 0);
  assert_true(fabs(e->profile->dram_pct - 91) < 1e-9);
  assert_int_equal(e->profile->n_stalls, 1);
  assert_string_equal(e->profile->stalls[0]->reason, "long_scoreboard");
  assert_int_equal(e->profile->profile_ms, 700);
  kf_rpc_free(resp);

  lr.candidate_id = -1;
  rc = call(g.tg.c, PATH("ListEvaluations"), &lr.base,
            &kernelfleet__list_evaluations_response__descriptor, NULL, err,
            sizeof err);
  assert_int_not_equal(rc, 0);
  assert_non_null(strstr(err, "candidate_id"));

  /* What the llm proposer is told about it: the diagnosis and the
   * profile's numbers with the kernel, the class's measured ceilings,
   * and a prescription for its bound (at 98%: move fewer bytes). */
  kf_proposer_context *ctx = NULL;
  rc = kf_proposer_context_fetch(g.tg.c, id, 0, 0, 30000, &ctx, err,
                                 sizeof err);
  if (rc) fail_msg("kf_proposer_context_fetch: %s: %s", kf_err_name(rc),
                   err);
  assert_true(ctx->n_best >= 1);
  const kf_proposer_kernel *k = &ctx->best[0];
  assert_int_equal(k->candidate_id, cand);
  assert_non_null(k->bound);
  assert_string_equal(k->bound, "memory");
  assert_true(fabs(k->bw_frac - 0.98) < 1e-9);
  assert_non_null(k->diagnosis);
  assert_non_null(strstr(k->diagnosis, "memory-bound at 98.0% of the"
                                       " measured bandwidth"));
  static const char *const frags[] = {
      "profile (ncu, kernel twice(", "DRAM throughput 91.0% of peak",
      "SM throughput 12.0% of peak", "achieved occupancy 80.0%",
      "L2 hit 20.0%", "long_scoreboard 12.5", "16 registers per thread",
      "0 B spilled"};
  for (size_t i = 0; i < sizeof frags / sizeof *frags; i++)
    if (!strstr(k->profile, frags[i]))
      fail_msg("the profile text lacks '%s': %s", frags[i], k->profile);
  assert_null(strstr(k->profile, "L1 hit")); /* not measured: left out */
  assert_true(ctx->n_devices >= 1);
  if (!strstr(ctx->devices[0], "cpu coordprof-cpu (x86_64)") ||
      !strstr(ctx->devices[0], "measured copy bandwidth 10.0 GB/s (read-only"
                               " 11.5, write-only 7.2)") ||
      !strstr(ctx->devices[0], "compute ceiling 5 GFLOP/s"))
    fail_msg("device facts: %s", ctx->devices[0]);
  char pres[1024];
  kf_proposer_prescription(k, pres, sizeof pres);
  if (!strstr(pres, "memory-bound at 98.0% of the measured bandwidth: the"
                    " ceiling is reached") ||
      !strstr(pres, "moving fewer bytes") ||
      !strstr(pres, "DRAM throughput 91.0% of peak"))
    fail_msg("prescription: %s", pres);
  kf_proposer_task tasks[4];
  size_t nt = kf_proposer_plan(ctx, 2, 1u << KF_PROPOSE_PRESCRIBE, tasks, 1);
  assert_int_equal(nt, 1);
  assert_int_equal(tasks[0].op, KF_PROPOSE_PRESCRIBE);
  assert_ptr_equal(tasks[0].a, k);
  assert_string_equal(tasks[0].prescription, pres);
  kf_proposer_context_free(ctx);

  /* the profiling pass's cost, apart from the evaluations */
  Kernelfleet__ProposerUsageRequest ur =
      KERNELFLEET__PROPOSER_USAGE_REQUEST__INIT;
  ur.campaign_id = id;
  rc = call(g.tg.c, PATH("ProposerUsage"), &ur.base,
            &kernelfleet__proposer_usage_response__descriptor, &resp, err,
            sizeof err);
  if (rc) fail_msg("ProposerUsage: %s: %s", kf_err_name(rc), err);
  const Kernelfleet__ProposerUsageResponse *u = (const void *)resp;
  assert_int_equal(u->calls, 0);
  assert_int_equal(u->evaluations, 1);
  assert_int_equal(u->profiled, 1);
  assert_true(fabs(u->profile_ms_median - 700) < 1e-9);
  assert_true(fabs(u->profile_ms_p90 - 700) < 1e-9);
  assert_int_equal(u->profile_ms_total, 700);
  kf_rpc_free(resp);
  assert_alive();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_profile_through_the_coordinator),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
