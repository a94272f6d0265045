/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-profile.c -- profiles and diagnoses in the store
 * and the search (migrations/0007_profiles.sql, coordinator/search_diag.c),
 * on a real PostgreSQL:
 *  - an accepted report's diagnosis and profile become one eval_profiles
 *    row, read back with the candidate's evaluations;
 *  - a report whose profile fails the coordinator's check is refused
 *    (INVALID), stores nothing, and the rest of its batch is stored;
 *  - the campaign's policy decides what each EvalRequest asks ("all",
 *    "none", "top:K" with the class's K-th best time);
 *  - a memory-bound best at >= 97% of the bandwidth stops the search.
 * Reports are made the way the coordinator makes them (coord_db.c:
 * kf_prof_from_pb for the profile, kf_diag_classify for the diagnosis).
 */
#include "test-store-fixture.h"

#include "test-campaign-fixture.h"

#include <math.h>

#include "diagnose.h"
#include "profile.h"
#include "util.h"

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("profile");
}

/* What the next report carries besides its time. */
typedef struct {
  double gbps, ceil_gbps;     /* for the diagnosis */
  const Kernelfleet__ProfileReport *prof; /* NULL: none */
} extra_t;

/* Leases one queued eval task (its request in *rq) and reports it ok with
 * time ns and the extra's diagnosis and profile.  Returns the verdict. */
static kf_verdict report_one(int64_t w, int64_t dc, double ns,
                             const extra_t *x,
                             Kernelfleet__EvalRequest **rq_out) {
  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, eval_kinds, 1);
  assert_int_equal(g->n, 1);
  const kf_leased_task *t = &g->tasks[0];
  Kernelfleet__EvalRequest *rq = kernelfleet__eval_request__unpack(
      NULL, t->payload_len, t->payload);
  assert_non_null(rq);
  Kernelfleet__EvalResult er = KERNELFLEET__EVAL_RESULT__INIT;
  er.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  er.time_ns_median = ns;
  er.ref_time_ns_median = 2000;
  er.repetitions = 10;
  er.achieved_gbps = x->gbps;
  er.ceiling_gbps = x->ceil_gbps;
  er.profile = (Kernelfleet__ProfileReport *)x->prof;
  uint8_t buf[2048];
  size_t len = kernelfleet__eval_result__pack(&er, buf);
  kf_eval_row row = {.time_ns_median = ns, .ref_time_ns_median = 2000,
                     .repetitions = 10, .achieved_gbps = x->gbps,
                     .result = buf, .result_len = len};
  kf_prof prof;
  kf_diag diag;
  char bad[200] = "";
  if (x->prof) {
    if (kf_prof_from_pb(x->prof, &prof, bad, sizeof bad) == 0)
      row.prof = &prof;
    else
      row.bad = bad;
  }
  kf_diag_in in = {.time_ns = ns, .gbps = x->gbps, .ceil_gbps = x->ceil_gbps,
                   .prof = row.prof};
  if (kf_diag_classify(&in, &diag) == 0) row.diag = &diag;
  kf_report rep = {.worker_id = w, .task_id = t->task_id,
                   .attempt = t->attempt, .outcome = KF_OUTCOME_OK,
                   .stage = "time", .output = buf, .output_len = len,
                   .eval = &row};
  kf_verdict v;
  if (kf_store_report(tdb.s, &rep, 1, &v))
    fail_msg("report: %s", kf_store_errmsg(tdb.s));
  if (rq_out) *rq_out = rq;
  else kernelfleet__eval_request__free_unpacked(rq, NULL);
  kf_store_grant_free(g);
  return v;
}

static void profile_and_diagnosis_stored(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 1, &dc);
  tcamp o = {.profile = "all"};
  int64_t cid = campaign_with(templates, 10, 0, 1, &o);
  step(cid);
  Kernelfleet__ProfileStall s0 = KERNELFLEET__PROFILE_STALL__INIT,
                            s1 = KERNELFLEET__PROFILE_STALL__INIT;
  s0.reason = "long_scoreboard";
  s0.cycles = 14.5;
  s1.reason = "lg \"throttle\"";
  s1.cycles = 2;
  Kernelfleet__ProfileStall *sp[] = {&s0, &s1};
  Kernelfleet__ProfileReport pr = KERNELFLEET__PROFILE_REPORT__INIT;
  pr.status = "ok";
  pr.tool = "ncu";
  pr.kernel = "vecsum_kernel(const float *, float *, int)";
  pr.kernels = 2;
  pr.duration_ns = 9000;
  pr.dram_pct = 91.5;
  pr.sm_pct = 20;
  pr.occupancy_pct = 75;
  pr.l1_hit_pct = -1; /* not measured */
  pr.l2_hit_pct = 33;
  pr.registers = 40;
  pr.shared_bytes = 2048;
  pr.spill_bytes = 0;
  pr.n_stalls = 2;
  pr.stalls = sp;
  pr.profile_ms = 812;
  extra_t x = {.gbps = 5, .ceil_gbps = 10, .prof = &pr};
  Kernelfleet__EvalRequest *rq = NULL;
  assert_int_equal(report_one(w, dc, 1000, &x, &rq), KF_VERDICT_ACCEPTED);
  /* policy "all": profiled whatever its time */
  assert_string_equal(rq->profile, "on");
  assert_true(rq->profile_below_ns == 0);
  int64_t cand = rq->candidate_id;
  kernelfleet__eval_request__free_unpacked(rq, NULL);

  /* 50% of the bandwidth by time, DRAM 91.5%: memory-bound by counters */
  assert_string_equal(
      tdb_text("SELECT bound || ' ' || bandwidth_fraction || ' ' || profiled"
               " || ' ' || status || ' ' || dram_pct || ' ' ||"
               " COALESCE(l1_hit_pct::text, 'null') || ' ' || registers ||"
               " ' ' || profile_ms FROM eval_profiles"),
      "memory 0.5 true ok 91.5 null 40 812");
  assert_string_equal(tdb_text("SELECT stalls::text FROM eval_profiles"),
                      "[{\"cycles\": 14.5, \"reason\": \"long_scoreboard\"},"
                      " {\"cycles\": 2, \"reason\": \"lg \\\"throttle\\\"\"}]");
  assert_non_null(strstr(tdb_text("SELECT detail FROM eval_profiles"),
                         "DRAM throughput 91.5% of peak"));

  /* read back with the candidate's evaluations */
  kf_cand_list *l = NULL;
  assert_int_equal(kf_store_candidate_evaluations(tdb.s, cid, cand, &l), 0);
  assert_int_equal(l->n, 1);
  assert_string_equal(l->v[0].bound, "memory");
  assert_true(fabs(l->v[0].bw_frac - 0.5) < 1e-12);
  assert_non_null(strstr(l->v[0].profile_json, "\"kernel\": \"vecsum_kernel"));
  kf_store_list_free(l);
  assert_int_equal(kf_store_candidate_evaluations(tdb.s, cid, cand + 1000,
                                                  &l), 0);
  assert_int_equal(l->n, 0);
  kf_store_list_free(l);
  /* and in the search's and the ranking's lists */
  assert_int_equal(kf_store_evaluations(tdb.s, cid, KF_EVALS_BEST, 0, &l), 0);
  assert_int_equal(l->n, 1);
  assert_string_equal(l->v[0].bound, "memory");
  kf_store_list_free(l);
}

static void bad_profile_refused(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 1, &dc);
  int64_t cid = campaign(templates, 10, 0, 1);
  step(cid);
  Kernelfleet__ProfileReport pr = KERNELFLEET__PROFILE_REPORT__INIT;
  pr.status = "ok";
  pr.reason = "bad \xff byte";
  extra_t x = {.gbps = 5, .ceil_gbps = 10, .prof = &pr};
  assert_int_equal(report_one(w, dc, 1000, &x, NULL), KF_VERDICT_INVALID);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations"), 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM eval_profiles"), 0);
  assert_non_null(strstr(tdb_text("SELECT last_error FROM tasks WHERE state"
                                  " = 'failed'"),
                         "profile.reason is not valid UTF-8"));
  /* a number out of range, and an unknown status */
  pr.reason = "";
  pr.dram_pct = NAN;
  x.prof = &pr;
  step(cid);
  assert_int_equal(report_one(w, dc, 1000, &x, NULL), KF_VERDICT_INVALID);
  pr.dram_pct = 50;
  pr.status = "great";
  step(cid);
  assert_int_equal(report_one(w, dc, 1000, &x, NULL), KF_VERDICT_INVALID);
  assert_non_null(strstr(tdb_text("SELECT string_agg(last_error, '|') FROM"
                                  " tasks WHERE state = 'failed'"),
                         "profile.status 'great' is not one of"));
  /* why a profile is missing is stored as such, numbers NULL */
  pr.status = "restricted";
  pr.reason = "the driver restricts GPU performance counters (ERR_NVGPUCTRPERM)";
  pr.dram_pct = -1;
  step(cid);
  assert_int_equal(report_one(w, dc, 1000, &x, NULL), KF_VERDICT_ACCEPTED);
  assert_string_equal(tdb_text("SELECT status || ' ' || (dram_pct IS NULL)"
                               " || ' ' || bound || ' ' || profiled FROM"
                               " eval_profiles"),
                      "restricted true latency false");
  /* no profile at all (a CPU worker without policy): the diagnosis alone */
  x.prof = NULL;
  x.gbps = 9.8;
  step(cid);
  assert_int_equal(report_one(w, dc, 1000, &x, NULL), KF_VERDICT_ACCEPTED);
  assert_int_equal(tdb_int("SELECT count(*) FROM eval_profiles WHERE status ="
                           " 'none' AND bound = 'memory'"), 1);
}

static void policy_in_requests(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 1, &dc);
  tcamp none = {.profile = "none"};
  int64_t c1 = campaign_with(templates, 4, 0, 1, &none);
  step(c1);
  extra_t x = {.gbps = 1, .ceil_gbps = 10};
  Kernelfleet__EvalRequest *rq = NULL;
  report_one(w, dc, 1000, &x, &rq);
  assert_string_equal(rq->profile, "off");
  kernelfleet__eval_request__free_unpacked(rq, NULL);
  tdb_sql("UPDATE campaigns SET state = 'stopped'");
  tdb_sql("UPDATE tasks SET state = 'failed' WHERE state = 'queued'");

  /* top:2: a task made while the class has two or more ok evaluations
   * asks for a profile below the second best time then.  Each step tops
   * the class up to 2 outstanding tasks (the first makes two); the report
   * answers the oldest. */
  tcamp top = {.profile = "top:2", .fresh = true}; /* nothing reused */
  int64_t c2 = campaign_with(templates, 10, 0, 2, &top);
  double times[] = {900, 700, 800, 750, 760};
  double want[] = {0, 0, 0, 900, 800};
  for (int i = 0; i < 5; i++) {
    step(c2);
    report_one(w, dc, times[i], &x, &rq);
    assert_string_equal(rq->profile, "on");
    if (fabs(rq->profile_below_ns - want[i]) > 1e-9)
      fail_msg("report %d: profile_below_ns %g, want %g", i,
               rq->profile_below_ns, want[i]);
    kernelfleet__eval_request__free_unpacked(rq, NULL);
  }
  /* the default is top:5 */
  int64_t c3 = campaign(templates, 4, 0, 3);
  assert_string_equal(tdb_text("SELECT profile FROM campaigns WHERE id ="
                               " %lld", (long long)c3), "top:5");
  /* the database refuses a policy the coordinator would refuse */
  kf_campaign_new bad = {
      .name = "c", .problem = "p", .language = "c", .backend = 1,
      .spec_json = "{}", .spec_json_len = 2, .reference_source = "int r;",
      .templates_json = templates, .budget_evals = 1, .budget_seconds = 1,
      .population = 1, .spec_sha256 = SPEC_A, .profile = "top:0"};
  int64_t id;
  assert_int_not_equal(kf_store_campaign_create(tdb.s, &bad, &id), 0);
}

/* Every report memory-bound at 98% of the measured bandwidth. */
static void memory_bound_stops(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 1, &dc);
  tcamp o = {.profile = "none"};
  int64_t cid = campaign_with(templates, 40, 0, 1, &o);
  tdb_sql("UPDATE campaigns SET target_roofline = 1");
  extra_t x = {.gbps = 9.8, .ceil_gbps = 10};
  step(cid);
  report_one(w, dc, 1000, &x, NULL);
  step(cid);
  assert_non_null(strstr(tdb_text("SELECT stop_reason FROM campaigns WHERE"
                                  " id = %lld", (long long)cid),
                         "memory-bound at 98.0% of the measured bandwidth"));
  /* a later campaign of the problem reuses that measurement, with its
   * diagnosis: it stops at once */
  tdb_sql("UPDATE tasks SET state = 'failed' WHERE state = 'queued'");
  int64_t c2 = campaign_with(templates, 40, 0, 2, &o);
  step(c2);
  step(c2);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld AND reused_from IS NOT NULL",
                           (long long)c2), 1);
  assert_non_null(strstr(tdb_text("SELECT stop_reason FROM campaigns WHERE"
                                  " id = %lld", (long long)c2),
                         "memory-bound at 98.0%"));
  /* below 97%: it goes on */
  tdb_sql("UPDATE tasks SET state = 'failed' WHERE state = 'queued'");
  o.fresh = true;
  c2 = campaign_with(templates, 40, 0, 2, &o);
  tdb_sql("UPDATE campaigns SET target_roofline = 1");
  x.gbps = 9.6;
  step(c2);
  report_one(w, dc, 1000, &x, NULL);
  step(c2);
  assert_string_equal(tdb_text("SELECT state FROM campaigns WHERE id = %lld",
                               (long long)c2), "running");
  /* past the measured bandwidth (a read-mostly problem beats the copy the
   * worker measured): no ceiling is known, so no memory stop; the roofline
   * target (over 1 here) still applies */
  tdb_sql("UPDATE tasks SET state = 'failed' WHERE state = 'queued'");
  c2 = campaign_with(templates, 40, 0, 2, &o);
  tdb_sql("UPDATE campaigns SET target_roofline = 2");
  x.gbps = 10.5;
  step(c2);
  report_one(w, dc, 1000, &x, NULL);
  step(c2);
  assert_string_equal(tdb_text("SELECT state FROM campaigns WHERE id = %lld",
                               (long long)c2), "running");
  assert_non_null(strstr(tdb_text("SELECT p.detail FROM eval_profiles p JOIN"
                                  " evaluations e ON e.id = p.evaluation_id"
                                  " WHERE e.campaign_id = %lld",
                                  (long long)c2),
                         "memory-bound at 105.0%"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(profile_and_diagnosis_stored, tdb_setup),
      cmocka_unit_test_setup(bad_profile_refused, tdb_setup),
      cmocka_unit_test_setup(policy_in_requests, tdb_setup),
      cmocka_unit_test_setup(memory_bound_stops, tdb_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
