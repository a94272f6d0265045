/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-identity.c -- the measurement identity (migration
 * 0004) as the search uses it, stepped here without a server: a stored
 * measurement is reused only for the same problem (canonical spec hash,
 * reference, language) under the same environment (device class, harness
 * build, toolchain, driver, runtime) that every alive worker of the class
 * has now; never a timing-dependent one; --fresh re-measures, and a later
 * reuse aggregates every measurement of the key.
 *
 * Two campaigns with the same search seed draw the same keys as long as
 * they see the same results (defaults first), so "the same key" below is
 * found by (source_sha256, flags) across campaigns.
 */
#include "test-store-fixture.h"

#include "test-campaign-fixture.h"

static int64_t tasks_of(int64_t cid) {
  return tdb_int("SELECT count(*) FROM tasks WHERE campaign_id = %lld"
                 " AND kind = 'eval'", (long long)cid);
}

/* Keys both campaigns measured with a task of their own. */
static int64_t measured_by_both(int64_t a, int64_t b) {
  return tdb_int("SELECT count(*) FROM eval_keys x JOIN eval_keys y"
                 " ON x.source_sha256 = y.source_sha256 AND x.flags = y.flags"
                 " AND x.device_class_id = y.device_class_id"
                 " WHERE x.campaign_id = %lld AND y.campaign_id = %lld"
                 " AND x.task_id IS NOT NULL AND y.task_id IS NOT NULL",
                 (long long)a, (long long)b);
}

/* The baseline the other tests vary: the same problem on the same
 * environment reuses, and a reused row carries the original's identity. */
static void same_problem_reuses(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t a = campaign(templates, 6, 0, 1);
  assert_string_equal(run_to_end(a, w, dc, time_of, 20),
                      "done: budget_evals reached");
  int64_t b = campaign(templates, 6, 0, 1);
  assert_string_equal(run_to_end(b, w, dc, time_of, 20),
                      "done: budget_evals reached");
  assert_true(reused_in(b) >= 2); /* at least the two defaults */
  assert_int_equal(tasks_of(b) + reused_in(b), 6);
  assert_int_equal(measured_by_both(a, b), 0);
  /* The reused rows: a's measurement, its environment, one measurement. */
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations e"
                           " JOIN evaluations o ON o.id = e.reused_from"
                           " WHERE e.campaign_id = %lld AND o.campaign_id ="
                           " %lld AND e.environment_id = o.environment_id"
                           " AND e.environment_id IS NOT NULL"
                           " AND e.measurements = 1"
                           " AND e.time_ns_median = o.time_ns_median"
                           " AND e.repetitions = 100",
                           (long long)b, (long long)a),
                   reused_in(b));
  /* Both campaigns share one problem key, hashed from the spec hash,
   * the reference and the language. */
  assert_int_equal(tdb_int("SELECT count(DISTINCT problem_key) FROM"
                           " campaigns WHERE problem_key ~ '^[0-9a-f]{64}$'"),
                   1);
}

/* A re-run after editing spec.json (another canonical hash) measures
 * again, even the keys the first run measured. */
static void spec_edit_remeasures(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t a = campaign(templates, 6, 0, 1);
  run_to_end(a, w, dc, time_of, 20);
  tcamp edited = {.spec_sha256 = SPEC_B};
  int64_t b = campaign_with(templates, 6, 0, 1, &edited);
  assert_string_equal(run_to_end(b, w, dc, time_of, 20),
                      "done: budget_evals reached");
  assert_int_equal(reused_in(b), 0);
  assert_int_equal(tasks_of(b), 6);
  assert_true(measured_by_both(a, b) >= 2);
  assert_int_equal(tdb_int("SELECT count(DISTINCT problem_key) FROM"
                           " campaigns"), 2);
}

/* Another problem with the same template files -- another reference, or
 * the same spec compiled as another language -- never reuses. */
static void other_problem_never_reuses(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t a = campaign(templates, 6, 0, 1);
  run_to_end(a, w, dc, time_of, 20);
  tcamp twice = {.reference = "int ref; /* returns 2 x sum */"};
  int64_t b = campaign_with(templates, 6, 0, 1, &twice);
  run_to_end(b, w, dc, time_of, 20);
  assert_int_equal(reused_in(b), 0);
  assert_int_equal(tasks_of(b), 6);
  assert_true(measured_by_both(a, b) >= 2);
  tcamp lang = {.language = "cuda"};
  int64_t c = campaign_with(templates, 6, 0, 1, &lang);
  run_to_end(c, w, dc, time_of, 20);
  assert_int_equal(reused_in(c), 0);
  assert_int_equal(tasks_of(c), 6);
  /* A proposal of a key only other problems measured is no duplicate
   * and gets its own task. */
  tcamp third = {.reference = "int ref; /* a third problem */"};
  int64_t d = campaign_with(templates, 6, 0, 1, &third);
  int64_t id = 0;
  bool dup = true;
  assert_int_equal(kf_store_propose(tdb.s, d, "t", "{}", "-DA=1 -DB=x -DC=0",
                                    "int t;", "user", &id, &dup),
                   0);
  assert_false(dup);
  step(d);
  assert_int_equal(tdb_int("SELECT count(*) FROM eval_keys WHERE"
                           " candidate_id = %lld AND task_id IS NOT NULL",
                           (long long)id),
                   1);
}

/* The environment: a class whose alive workers run different harness
 * builds reuses nothing; a class on a new build does not reuse what the
 * old one measured, but what it measured itself. */
static void environment_must_match(void **state) {
  (void)state;
  int64_t dc = 0, dc2 = 0;
  int64_t w1 = worker_env("w1", 2, "build-1", eval_kinds, &dc);
  int64_t a = campaign(templates, 6, 0, 1);
  run_to_end(a, w1, dc, time_of, 20);
  /* A second worker of the class, rebuilt: mixed environments. */
  int64_t w2 = worker_env("w2", 2, "build-2", eval_kinds, &dc2);
  assert_int_equal(dc2, dc);
  assert_int_equal(tdb_int("SELECT count(*) FROM environments"), 2);
  int64_t b = campaign(templates, 6, 0, 1);
  run_to_end(b, w1, dc, time_of, 20);
  assert_int_equal(reused_in(b), 0);
  /* Only the rebuilt worker is alive now: build-1 numbers do not count. */
  tdb_sql("UPDATE workers SET last_seen = now() - interval '1 hour'"
          " WHERE name = 'w1'");
  int64_t c = campaign(templates, 6, 0, 1);
  run_to_end(c, w2, dc, time_of, 20);
  assert_int_equal(reused_in(c), 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations e JOIN"
                           " environments v ON v.id = e.environment_id WHERE"
                           " e.campaign_id = %lld AND v.harness_build ="
                           " 'build-2'", (long long)c),
                   6);
  /* ...and what build-2 measured is reused under build-2. */
  int64_t d = campaign(templates, 6, 0, 1);
  run_to_end(d, w2, dc, time_of, 20);
  assert_true(reused_in(d) >= 2);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations e JOIN"
                           " evaluations o ON o.id = e.reused_from WHERE"
                           " e.campaign_id = %lld AND o.campaign_id <> %lld",
                           (long long)d, (long long)c),
                   0);
}

/* An EvalResult that names another harness build (or toolchain) than the
 * reporting worker registered has no environment: never reused. */
static void other_build(const Kernelfleet__EvalRequest *rq,
                        Kernelfleet__EvalResult *er) {
  (void)rq;
  er->harness_build = "build-x";
}

static void same_tool(const Kernelfleet__EvalRequest *rq,
                      Kernelfleet__EvalResult *er) {
  (void)rq;
  er->harness_build = "build-1";
  er->toolchain = "cc 12";
}

static void result_identity_checked(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t a = campaign(templates, 4, 0, 1);
  step(a);
  run_round_with(w, dc, time_of, false, other_build);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld AND environment_id IS NULL",
                           (long long)a),
                   4);
  int64_t b = campaign(templates, 4, 0, 1);
  step(b);
  assert_int_equal(reused_in(b), 0);
  run_round_with(w, dc, time_of, false, same_tool);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld AND environment_id IS NOT NULL",
                           (long long)b),
                   4);
  int64_t c = campaign(templates, 4, 0, 1);
  step(c);
  assert_int_equal(reused_in(c), 4);
}

/* --fresh measures every key again, reusing nothing; a later campaign's
 * reuse then aggregates both measurements of a key. */
static double slower(const Kernelfleet__EvalRequest *rq) {
  return 1.2 * time_of(rq);
}

static void fresh_remeasures_and_aggregates(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t a = campaign(templates, 6, 0, 1);
  run_to_end(a, w, dc, time_of, 20);
  tcamp fresh = {.fresh = true};
  int64_t b = campaign_with(templates, 6, 0, 1, &fresh);
  assert_string_equal(run_to_end(b, w, dc, slower, 20),
                      "done: budget_evals reached");
  assert_int_equal(reused_in(b), 0);
  assert_int_equal(tasks_of(b), 6);
  int64_t both = measured_by_both(a, b);
  assert_true(both >= 2);
  /* b's own numbers are its own measurements only. */
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld AND measurements = 1",
                           (long long)b),
                   6);
  /* c reuses: a key both measured is their median (here the mean of two)
   * over both, with both counted and their repetitions summed; the
   * spread covers the two measurements' disagreement. */
  int64_t c = campaign(templates, 6, 0, 1);
  step(c);
  int64_t agg = tdb_int("SELECT count(*) FROM evaluations WHERE campaign_id"
                        " = %lld AND measurements = 2", (long long)c);
  assert_true(agg >= 2);
  /* exactly the rows whose key a and b both measured */
  assert_int_equal(
      tdb_int("SELECT count(*) FROM evaluations e JOIN candidates k ON"
              " k.id = e.candidate_id WHERE e.campaign_id = %lld AND"
              " e.reused_from IS NOT NULL AND (SELECT count(*) FROM"
              " eval_keys x WHERE x.campaign_id IN (%lld, %lld) AND"
              " x.task_id IS NOT NULL AND x.source_sha256 = k.source_sha256"
              " AND x.flags = k.flags) = 2",
              (long long)c, (long long)a, (long long)b),
      agg);
  assert_int_equal(
      tdb_int("SELECT count(*) FROM evaluations e JOIN candidates k ON"
              " k.id = e.candidate_id WHERE e.campaign_id = %lld"
              " AND e.measurements = 2 AND e.repetitions = 200"
              " AND abs(e.time_ns_median - (SELECT avg(m.time_ns_median)"
              "  FROM evaluations m JOIN candidates mk ON mk.id ="
              "  m.candidate_id WHERE m.task_id IS NOT NULL AND"
              "  mk.source_sha256 = k.source_sha256 AND mk.flags = k.flags))"
              " < 1e-6"
              " AND abs(e.speedup - e.ref_time_ns_median / e.time_ns_median)"
              " < 1e-9"
              " AND abs(e.time_ns_spread - 0.2 / 1.1) < 1e-9",
              (long long)c),
      agg);
  /* Each key once in c whatever it reused. */
  assert_int_equal(tdb_int("SELECT count(*) FROM (SELECT 1 FROM evaluations"
                           " e JOIN candidates k ON k.id = e.candidate_id"
                           " WHERE e.campaign_id = %lld GROUP BY"
                           " k.source_sha256, k.flags HAVING count(*) > 1) x",
                           (long long)c),
                   0);
}

/* A verdict that depended on timing under load is not reused: the next
 * campaign measures that key again.  Nor is a failure (wrong answer): one
 * worker's word, it would bind every later campaign (red team
 * 2026-12-01-s3b). */
static void defaults_fail(const Kernelfleet__EvalRequest *rq,
                          Kernelfleet__EvalResult *er) {
  bool t_default = rq->n_knobs == 3, u_default = rq->n_knobs == 1;
  for (size_t i = 0; i < rq->n_knobs; i++) {
    const char *v = rq->knobs[i]->value;
    if (strcmp(v, "1") && strcmp(v, "x") && strcmp(v, "0")) t_default = false;
    if (strcmp(v, "4")) u_default = false;
  }
  if (t_default) {
    er->outcome = KERNELFLEET__OUTCOME__OUTCOME_TOO_FAST;
    er->timing_dependent = true;
    er->time_ns_median = 0;
  } else if (u_default) {
    er->outcome = KERNELFLEET__OUTCOME__OUTCOME_WRONG_ANSWER;
    er->time_ns_median = 0;
  }
}

static void timing_dependent_remeasured(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t a = campaign(templates, 4, 0, 1);
  step(a);
  run_round_with(w, dc, time_of, false, defaults_fail);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " outcome = 'too_fast' AND timing_dependent"),
                   1);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " outcome = 'wrong_answer' AND NOT"
                           " timing_dependent"),
                   1);
  int64_t b = campaign(templates, 4, 0, 1);
  step(b);
  /* The too_fast key and the wrong one have a task in b; the other two
   * are reused. */
  assert_int_equal(tdb_int("SELECT count(*) FROM eval_keys WHERE"
                           " campaign_id = %lld AND task_id IS NOT NULL AND"
                           " flags = '-DA=1 -DB=x -DC=0'", (long long)b),
                   1);
  assert_int_equal(tdb_int("SELECT count(*) FROM eval_keys WHERE"
                           " campaign_id = %lld AND task_id IS NOT NULL",
                           (long long)b),
                   2);
  assert_int_equal(reused_in(b), 2);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld AND reused_from IS NOT NULL"
                           " AND outcome <> 'ok'", (long long)b),
                   0);
  /* Measured again, ok this time: the too_fast key is reusable now; the
   * one that once failed is not, however often it is ok after. */
  run_round(w, dc, time_of, false);
  int64_t c = campaign(templates, 4, 0, 1);
  step(c);
  assert_int_equal(reused_in(c), 3);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld AND outcome = 'ok' AND"
                           " measurements = 1 AND reused_from IS NOT NULL",
                           (long long)c),
                   3);
}

/* Once a key's measurements disagree on the verdict, it is not reused:
 * the next campaign measures it itself, so that a worker that answered
 * wrong_answer to good kernels binds no later campaign (red team
 * 2026-12-01-s3b: 5 of 8 kernels, the best among them, reused as wrong
 * after the worker left; only --fresh measured them). */
static void b_wrong(const Kernelfleet__EvalRequest *rq,
                    Kernelfleet__EvalResult *er) {
  (void)rq;
  er->outcome = KERNELFLEET__OUTCOME__OUTCOME_WRONG_ANSWER;
  er->time_ns_median = 0;
}

static void failed_measurement_remeasured(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t a = campaign(templates, 2, 0, 1);
  step(a);
  run_round(w, dc, time_of, false);
  tcamp fresh = {.fresh = true};
  int64_t b = campaign_with(templates, 2, 0, 1, &fresh);
  step(b);
  run_round_with(w, dc, time_of, false, b_wrong);
  int64_t c = campaign(templates, 2, 0, 1);
  step(c);
  assert_int_equal(reused_in(c), 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM eval_keys WHERE"
                           " campaign_id = %lld AND task_id IS NOT NULL",
                           (long long)c),
                   2);
  /* measured in c, ok: c's verdict is c's own */
  run_round(w, dc, time_of, false);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld AND outcome = 'ok' AND"
                           " reused_from IS NULL", (long long)c),
                   2);
}

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("identity");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(same_problem_reuses, tdb_setup),
      cmocka_unit_test_setup(spec_edit_remeasures, tdb_setup),
      cmocka_unit_test_setup(other_problem_never_reuses, tdb_setup),
      cmocka_unit_test_setup(environment_must_match, tdb_setup),
      cmocka_unit_test_setup(result_identity_checked, tdb_setup),
      cmocka_unit_test_setup(fresh_remeasures_and_aggregates, tdb_setup),
      cmocka_unit_test_setup(timing_dependent_remeasured, tdb_setup),
      cmocka_unit_test_setup(failed_measurement_remeasured, tdb_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
