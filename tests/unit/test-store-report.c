/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-report.c -- report verdicts and what each one
 * writes: accepted stores one result and finishes (or requeues) the task;
 * every other verdict stores nothing.
 */
#include "test-store-fixture.h"

#include "outcome.h"

static const char *const kinds[] = {"eval", NULL};

static kf_report rep(int64_t w, int64_t task, uint32_t attempt, int outcome) {
  return (kf_report){.worker_id = w, .task_id = task, .attempt = attempt,
                     .outcome = outcome, .stage = "verify",
                     .reason = "why", .output = "\0out\xff", .output_len = 5,
                     .elapsed_us = 42};
}

static int64_t nresults(void) {
  return tdb_int("SELECT count(*) FROM results");
}

static void accepted_then_duplicate(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = tdb_worker("w", &tdb_cpu, &dc, kinds);
  int64_t id;
  tdb_submit("eval", 1, 0, 0, 0, &id);
  kf_store_grant_free(tdb_lease1(tdb.s, w, dc, kinds, 1));
  kf_report r = rep(w, id, 1, KF_OUTCOME_WRONG_ANSWER);
  kf_verdict v = 0;
  assert_int_equal(kf_store_report(tdb.s, &r, 1, &v), 0);
  assert_int_equal(v, KF_VERDICT_ACCEPTED);
  assert_int_equal(nresults(), 1);
  assert_string_equal(tdb_text("SELECT state::text || (lease_owner IS NULL) ||"
                               " (finished_at IS NOT NULL) FROM tasks"),
                      "donetruetrue");
  assert_string_equal(
      tdb_text("SELECT outcome || '/' || stage || '/' || reason || '/' ||"
               " encode(output, 'hex') || '/' || elapsed_us || '/' || final"
               " FROM results"),
      "wrong_answer/verify/why/006f7574ff/42/true");
  /* The same report again (the worker missed our reply): no change. */
  for (int i = 0; i < 2; i++) {
    assert_int_equal(kf_store_report(tdb.s, &r, 1, &v), 0);
    assert_int_equal(v, KF_VERDICT_DUPLICATE);
  }
  assert_int_equal(nresults(), 1);
  assert_string_equal(tdb_text("SELECT state FROM tasks"), "done");
}

static void duplicate_within_batch(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = tdb_worker("w", &tdb_cpu, &dc, kinds);
  int64_t w2 = tdb_worker("w2", &tdb_cpu, &dc, kinds);
  int64_t id[2];
  tdb_submit("eval", 2, 0, 0, 0, id);
  kf_store_grant_free(tdb_lease1(tdb.s, w, dc, kinds, 2));
  kf_report r[5] = {rep(w, id[0], 1, KF_OUTCOME_OK),
                    rep(w, id[0], 1, KF_OUTCOME_OK),
                    rep(w2, id[0], 1, KF_OUTCOME_OK),
                    rep(w, id[1], 1, KF_OUTCOME_CRASH),
                    rep(w, id[1], 1, KF_OUTCOME_OK)};
  kf_verdict v[5];
  assert_int_equal(kf_store_report(tdb.s, r, 5, v), 0);
  assert_int_equal(v[0], KF_VERDICT_ACCEPTED);
  assert_int_equal(v[1], KF_VERDICT_DUPLICATE);
  assert_int_equal(v[2], KF_VERDICT_NOT_HOLDER);
  assert_int_equal(v[3], KF_VERDICT_ACCEPTED);
  assert_int_equal(v[4], KF_VERDICT_DUPLICATE);
  assert_int_equal(nresults(), 2);
  assert_string_equal(tdb_text("SELECT string_agg(outcome::text, ',' ORDER BY"
                               " task_id) FROM results"),
                      "ok,crash");
}

static void stale_after_reap_and_relase(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w1 = tdb_worker("w1", &tdb_cpu, &dc, kinds);
  int64_t w2 = tdb_worker("w2", &tdb_cpu, &dc, kinds);
  int64_t id;
  tdb_submit("eval", 1, 0, 0, 0, &id);
  kf_store_grant_free(tdb_lease1(tdb.s, w1, dc, kinds, 1));
  tdb_expire_leases();
  int rq = 0;
  assert_int_equal(kf_store_reap(tdb.s, &rq, NULL), 0);
  assert_int_equal(rq, 1);
  /* Reaped but not yet re-leased: the old holder is too late. */
  kf_report late = rep(w1, id, 1, KF_OUTCOME_OK);
  kf_verdict v;
  assert_int_equal(kf_store_report(tdb.s, &late, 1, &v), 0);
  assert_int_equal(v, KF_VERDICT_STALE);
  kf_lease_grant *g = tdb_lease1(tdb.s, w2, dc, kinds, 1);
  assert_int_equal(g->n, 1);
  assert_int_equal(g->tasks[0].attempt, 2);
  kf_store_grant_free(g);
  /* Re-leased: still stale for w1's attempt 1. */
  assert_int_equal(kf_store_report(tdb.s, &late, 1, &v), 0);
  assert_int_equal(v, KF_VERDICT_STALE);
  assert_int_equal(nresults(), 0);
  assert_string_equal(tdb_text("SELECT state::text || lease_owner FROM tasks"),
                      "leased2");
  /* The live holder's report is accepted; then w1's is stale still. */
  kf_report ok = rep(w2, id, 2, KF_OUTCOME_OK);
  assert_int_equal(kf_store_report(tdb.s, &ok, 1, &v), 0);
  assert_int_equal(v, KF_VERDICT_ACCEPTED);
  assert_int_equal(kf_store_report(tdb.s, &late, 1, &v), 0);
  assert_int_equal(v, KF_VERDICT_STALE);
  assert_int_equal(nresults(), 1);
}

static void not_holder_and_unknown(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w1 = tdb_worker("w1", &tdb_cpu, &dc, kinds);
  int64_t w2 = tdb_worker("w2", &tdb_cpu, &dc, kinds);
  int64_t id[2];
  tdb_submit("eval", 2, 0, 0, 0, id);
  kf_store_grant_free(tdb_lease1(tdb.s, w1, dc, kinds, 1)); /* id[0] */
  kf_report r[5] = {
      rep(w2, id[0], 1, KF_OUTCOME_OK), /* someone else's live lease */
      rep(w1, id[0], 2, KF_OUTCOME_OK), /* an attempt not yet started */
      rep(w1, id[1], 1, KF_OUTCOME_OK), /* a task never leased */
      rep(w1, 424242, 1, KF_OUTCOME_OK),
      rep(w1, id[0], 0, KF_OUTCOME_OK),
  };
  kf_verdict v[5];
  assert_int_equal(kf_store_report(tdb.s, r, 5, v), 0);
  assert_int_equal(v[0], KF_VERDICT_NOT_HOLDER);
  assert_int_equal(v[1], KF_VERDICT_NOT_HOLDER);
  assert_int_equal(v[2], KF_VERDICT_NOT_HOLDER);
  assert_int_equal(v[3], KF_VERDICT_UNKNOWN_TASK);
  assert_int_equal(v[4], KF_VERDICT_NOT_HOLDER);
  assert_int_equal(nresults(), 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state='leased'"
                           " AND lease_owner = %lld", (long long)w1),
                   1);
  /* A bad outcome value from someone else is just not theirs; from the
   * holder it is refused alone, and the task fails with the reason
   * (test-store-poison.c has the rest of these). */
  kf_report bad = rep(w2, id[0], 1, 999);
  assert_int_equal(kf_store_report(tdb.s, &bad, 1, v), 0);
  assert_int_equal(v[0], KF_VERDICT_NOT_HOLDER);
  bad.worker_id = w1;
  assert_int_equal(kf_store_report(tdb.s, &bad, 1, v), 0);
  assert_int_equal(v[0], KF_VERDICT_INVALID);
  assert_int_equal(nresults(), 0);
  assert_string_equal(tdb_text("SELECT state::text || ': ' || last_error"
                               " FROM tasks WHERE id = %lld",
                               (long long)id[0]),
                      "failed: result of attempt 1 refused: outcome 999 is"
                      " not an outcome");
  assert_int_equal(kf_store_report(tdb.s, NULL, 0, NULL), 0);
}

static void retryable_requeues_then_fails(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = tdb_worker("w", &tdb_cpu, &dc, kinds);
  int64_t id;
  tdb_submit("eval", 1, 0, 0, 2, &id);
  kf_verdict v;
  for (uint32_t attempt = 1; attempt <= 2; attempt++) {
    kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, kinds, 1);
    assert_int_equal(g->n, 1);
    assert_int_equal(g->tasks[0].attempt, attempt);
    kf_store_grant_free(g);
    kf_report r = rep(w, id, attempt, KF_OUTCOME_INFRA_ERROR);
    r.reason = attempt == 1 ? "disk full" : "gpu fell off the bus";
    assert_int_equal(kf_store_report(tdb.s, &r, 1, &v), 0);
    assert_int_equal(v, KF_VERDICT_ACCEPTED);
    assert_string_equal(tdb_text("SELECT state FROM tasks"),
                        attempt == 1 ? "queued" : "failed");
    /* Repeating it is a duplicate even though the task moved on. */
    assert_int_equal(kf_store_report(tdb.s, &r, 1, &v), 0);
    assert_int_equal(v, KF_VERDICT_DUPLICATE);
  }
  assert_string_equal(tdb_text("SELECT last_error FROM tasks"),
                      "gpu fell off the bus");
  assert_int_equal(tdb_int("SELECT count(*) FROM results WHERE NOT final"),
                   2);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE lease_owner IS"
                           " NULL AND finished_at IS NOT NULL"),
                   1);
  kf_task_counts c;
  assert_int_equal(kf_store_counts(tdb.s, 0, &c), 0);
  assert_int_equal(c.failed, 1);
}

static void mixed_batch_writes_only_accepted(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = tdb_worker("w", &tdb_cpu, &dc, kinds);
  enum { N = 300 };
  int64_t id[N];
  tdb_submit("eval", N, 0, 0, 0, id);
  kf_store_grant_free(tdb_lease1(tdb.s, w, dc, kinds, N));
  static kf_report r[2 * N];
  static kf_verdict v[2 * N];
  for (int i = 0; i < N; i++) {
    r[2 * i] = rep(w, id[i], 1, i % 3 ? KF_OUTCOME_OK : KF_OUTCOME_TIMEOUT);
    r[2 * i + 1] = rep(w, id[i], 1 + (i % 2), KF_OUTCOME_OK);
  }
  assert_int_equal(kf_store_report(tdb.s, r, 2 * N, v), 0);
  for (int i = 0; i < N; i++) {
    assert_int_equal(v[2 * i], KF_VERDICT_ACCEPTED);
    assert_int_equal(v[2 * i + 1], i % 2 ? KF_VERDICT_NOT_HOLDER
                                         : KF_VERDICT_DUPLICATE);
  }
  assert_int_equal(nresults(), N);
  assert_int_equal(tdb_int("SELECT count(*) FROM results WHERE outcome ="
                           " 'timeout'"),
                   N / 3);
}

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("report");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(accepted_then_duplicate, tdb_setup),
      cmocka_unit_test_setup(duplicate_within_batch, tdb_setup),
      cmocka_unit_test_setup(stale_after_reap_and_relase, tdb_setup),
      cmocka_unit_test_setup(not_holder_and_unknown, tdb_setup),
      cmocka_unit_test_setup(retryable_requeues_then_fails, tdb_setup),
      cmocka_unit_test_setup(mixed_batch_writes_only_accepted, tdb_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
