/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-poison.c -- one poisoned report never fails
 * another's write (kf_store_report_ex).
 *
 * A batch mixes honest reports with reports of the live lease that can
 * never be stored: a reason that is not UTF-8 (what a link check quoting
 * a candidate's symbol name produced), a name cut mid-character, a reason
 * over KF_TEXT_REASON_MAX, an unknown outcome, an elapsed time beyond
 * bigint, an evaluation whose numbers would overflow.  The honest ones
 * must be ACCEPTED and stored; each poisoned one INVALID with a note
 * naming the field, its task failed with that reason, nothing of it
 * stored.  Then a row the checks do not know about but the database
 * refuses (a CHECK constraint the test adds, standing in for whatever
 * the checks miss): the batch is written row by row under savepoints
 * and only that row is refused.
 */
#include "test-store-fixture.h"

#include "outcome.h"
#include "text.h"

static const char *const kinds[] = {"checksum", NULL};

static kf_report rep(int64_t w, int64_t task, const char *reason) {
  return (kf_report){.worker_id = w, .task_id = task, .attempt = 1,
                     .outcome = KF_OUTCOME_OK, .stage = "done",
                     .reason = reason, .output = "{}", .output_len = 2,
                     .elapsed_us = 7};
}

/* n tasks leased to a new worker; ids into id. */
static int64_t leased(size_t n, int64_t *id) {
  int64_t dc = 0;
  int64_t w = tdb_worker("w", &tdb_cpu, &dc, kinds);
  tdb_submit("checksum", n, 0, 0, 0, id);
  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, kinds, (uint32_t)n);
  assert_int_equal(g->n, n);
  kf_store_grant_free(g);
  return w;
}

static const char *task_end(int64_t id) {
  return tdb_text("SELECT state::text || ': ' || COALESCE(last_error, '')"
                  " FROM tasks WHERE id = %lld", (long long)id);
}

static void poisoned_rows_refused_alone(void **state) {
  (void)state;
  enum { N = 8 };
  int64_t id[N];
  int64_t w = leased(N, id);
  size_t big = KF_TEXT_REASON_MAX + 1;
  char *huge = malloc(big + 1);
  assert_non_null(huge);
  memset(huge, 'r', big);
  huge[big] = '\0';
  kf_report r[N] = {
      rep(w, id[0], "fine"),
      rep(w, id[1], "calls '\xfe\xfe_sym', which candidates may not use"),
      rep(w, id[2], "fine too"),
      rep(w, id[3], "cut mid-character: \xe6\x97"),
      rep(w, id[4], huge),
      rep(w, id[5], "ok"),
      rep(w, id[6], "ok"),
      rep(w, id[7], "honest, with UTF-8: é 日本"),
  };
  r[5].outcome = 77;
  r[6].elapsed_us = UINT64_MAX;
  r[7].stage = "time";
  kf_verdict v[N];
  kf_report_note notes[N];
  assert_int_equal(kf_store_report_ex(tdb.s, r, N, v, notes), 0);
  free(huge);
  static const kf_verdict want[N] = {
      KF_VERDICT_ACCEPTED, KF_VERDICT_INVALID, KF_VERDICT_ACCEPTED,
      KF_VERDICT_INVALID,  KF_VERDICT_INVALID, KF_VERDICT_INVALID,
      KF_VERDICT_INVALID,  KF_VERDICT_ACCEPTED};
  for (int i = 0; i < N; i++)
    if (v[i] != want[i])
      fail_msg("report %d: verdict %d, want %d (%s)", i, v[i], want[i],
               notes[i].text);
  assert_string_equal(notes[0].text, "");
  assert_string_equal(notes[1].text, "reason is not valid UTF-8 (byte 7)");
  assert_string_equal(notes[3].text, "reason is not valid UTF-8 (byte 19)");
  assert_string_equal(notes[4].text, "reason is longer than 16384 bytes"
                                     " (16385)");
  assert_string_equal(notes[5].text, "outcome 77 is not an outcome");
  assert_string_equal(notes[6].text,
                      "elapsed_us 18446744073709551615 is out of range");
  /* The honest ones are stored and done; nothing of the poisoned ones. */
  assert_int_equal(tdb_int("SELECT count(*) FROM results"), 3);
  for (int i = 0; i < N; i++)
    if (want[i] == KF_VERDICT_ACCEPTED)
      assert_string_equal(task_end(id[i]), "done: ");
  assert_string_equal(tdb_text("SELECT reason FROM results WHERE task_id ="
                               " %lld", (long long)id[7]),
                      "honest, with UTF-8: é 日本");
  assert_string_equal(task_end(id[1]), "failed: result of attempt 1 refused:"
                                       " reason is not valid UTF-8 (byte 7)");
  assert_string_equal(task_end(id[5]), "failed: result of attempt 1 refused:"
                                       " outcome 77 is not an outcome");
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state ="
                           " 'failed' AND lease_owner IS NULL AND"
                           " finished_at IS NOT NULL"),
                   5);
  /* A resend of a refused report: the task is no longer leased. */
  assert_int_equal(kf_store_report_ex(tdb.s, &r[1], 1, v, notes), 0);
  assert_int_equal(v[0], KF_VERDICT_STALE);
  assert_string_equal(notes[0].text, "");
}

/* Only the live holder's poison fails a task: anyone else's report is
 * judged by who sent it and writes nothing. */
static void others_poison_changes_nothing(void **state) {
  (void)state;
  int64_t id[1];
  int64_t w = leased(1, id);
  int64_t dc = 0;
  int64_t other = tdb_worker("intruder", &tdb_cpu, &dc, kinds);
  kf_report r = rep(other, id[0], "\xff\xff");
  r.outcome = 99;
  kf_verdict v;
  assert_int_equal(kf_store_report_ex(tdb.s, &r, 1, &v, NULL), 0);
  assert_int_equal(v, KF_VERDICT_NOT_HOLDER);
  r.worker_id = w;
  r.attempt = 2;
  assert_int_equal(kf_store_report_ex(tdb.s, &r, 1, &v, NULL), 0);
  assert_int_equal(v, KF_VERDICT_NOT_HOLDER);
  assert_string_equal(task_end(id[0]), "leased: ");
  assert_int_equal(tdb_int("SELECT count(*) FROM results"), 0);
}

/* A row the database refuses although every check passed: the batch is
 * rewritten row by row and only that row is refused. */
static void database_refusal_isolated(void **state) {
  (void)state;
  enum { N = 5 };
  int64_t id[N];
  int64_t w = leased(N, id);
  tdb_sql("ALTER TABLE results ADD CONSTRAINT test_poison"
          " CHECK (reason NOT LIKE '%poison%')");
  kf_report r[N] = {rep(w, id[0], "a"), rep(w, id[1], "b"),
                    rep(w, id[2], "this is poison"), rep(w, id[3], "d"),
                    rep(w, id[4], "more poison")};
  r[1].outcome = KF_OUTCOME_INFRA_ERROR; /* requeued, not done */
  kf_verdict v[N];
  kf_report_note notes[N];
  int rc = kf_store_report_ex(tdb.s, r, N, v, notes);
  tdb_sql("ALTER TABLE results DROP CONSTRAINT test_poison");
  assert_int_equal(rc, 0);
  assert_int_equal(v[0], KF_VERDICT_ACCEPTED);
  assert_int_equal(v[1], KF_VERDICT_ACCEPTED);
  assert_int_equal(v[2], KF_VERDICT_INVALID);
  assert_int_equal(v[3], KF_VERDICT_ACCEPTED);
  assert_int_equal(v[4], KF_VERDICT_INVALID);
  if (!strstr(notes[2].text, "the database refused it (SQLSTATE 23514)") ||
      !strstr(notes[2].text, "test_poison"))
    fail_msg("note: %s", notes[2].text);
  assert_int_equal(tdb_int("SELECT count(*) FROM results"), 3);
  assert_string_equal(tdb_text("SELECT string_agg(state::text, ',' ORDER BY"
                               " id) FROM tasks"),
                      "done,queued,failed,done,failed");
  if (!strstr(task_end(id[4]), "failed: result of attempt 1 refused: the"
                               " database refused it"))
    fail_msg("task end: %s", task_end(id[4]));
}

/* A campaign's eval task whose evaluation would overflow a float8
 * (speedup = reference / candidate time). */
static void eval_numbers_out_of_range(void **state) {
  (void)state;
  int64_t id[1];
  int64_t w = leased(1, id);
  kf_eval_row ev = {.time_ns_median = 1e-300, .ref_time_ns_median = 1e300};
  kf_report r = rep(w, id[0], "fast");
  r.eval = &ev;
  /* Not a campaign's eval task: the evaluation is ignored, as before. */
  kf_verdict v;
  kf_report_note note;
  assert_int_equal(kf_store_report_ex(tdb.s, &r, 1, &v, &note), 0);
  assert_int_equal(v, KF_VERDICT_ACCEPTED);
  /* A campaign's eval task: refused, naming the number. */
  tdb_sql("INSERT INTO campaigns (name, problem, spec_json, templates)"
          " VALUES ('c', 'p', '\\x7b7d', '[]')");
  int64_t cid = tdb_int("SELECT id FROM campaigns");
  int64_t dc = tdb_int("SELECT id FROM device_classes");
  kf_task_spec sp = {.kind = "eval", .payload = "p", .payload_len = 1,
                     .campaign_id = cid};
  int64_t tid;
  assert_int_equal(kf_store_submit(tdb.s, &sp, 1, &tid), 0);
  tdb_sql("INSERT INTO candidates (campaign_id, source, source_sha256,"
          " flags, proposer) VALUES ((SELECT id FROM campaigns), 's', 'h',"
          " '', 'user')");
  char sql[512];
  snprintf(sql, sizeof sql, "INSERT INTO eval_keys (candidate_id,"
           " device_class_id, campaign_id, source_sha256, flags, task_id,"
           " problem_key) VALUES ((SELECT id FROM candidates), %lld, %lld,"
           " 'h', '', %lld, 'p')",
           (long long)dc, (long long)cid, (long long)tid);
  tdb_sql(sql);
  static const char *const ek[] = {"eval", NULL};
  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, ek, 1);
  assert_int_equal(g->n, 1);
  kf_store_grant_free(g);
  r.task_id = tid;
  assert_int_equal(kf_store_report_ex(tdb.s, &r, 1, &v, &note), 0);
  assert_int_equal(v, KF_VERDICT_INVALID);
  assert_string_equal(note.text, "time_ns_median 1e-300 is out of range");
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations"), 0);
  assert_string_equal(tdb_text("SELECT state FROM tasks WHERE id = %lld",
                               (long long)tid),
                      "failed");
}

/* Submit names the campaign that does not exist, and refuses a kind
 * that is not UTF-8; nothing is written either way. */
static void submit_refusals(void **state) {
  (void)state;
  kf_task_spec sp[3] = {
      {.kind = "checksum", .payload = "p", .payload_len = 1},
      {.kind = "checksum", .payload = "p", .payload_len = 1,
       .campaign_id = 999999},
      {.kind = "check\xffsum", .payload = "p", .payload_len = 1}};
  int64_t ids[3];
  assert_int_equal(kf_store_submit(tdb.s, sp, 2, ids), KF_ENOTFOUND);
  assert_string_equal(kf_store_errmsg(tdb.s),
                      "task 1: campaign_id 999999: no such campaign");
  sp[1].campaign_id = 0;
  assert_int_equal(kf_store_submit(tdb.s, sp, 3, ids), KF_EINVAL);
  assert_string_equal(kf_store_errmsg(tdb.s),
                      "task 2: kind is not valid UTF-8 (byte 5)");
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks"), 0);
  assert_int_equal(kf_store_submit(tdb.s, sp, 2, ids), 0);
}

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("poison");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(poisoned_rows_refused_alone, tdb_setup),
      cmocka_unit_test_setup(others_poison_changes_nothing, tdb_setup),
      cmocka_unit_test_setup(database_refusal_isolated, tdb_setup),
      cmocka_unit_test_setup(eval_numbers_out_of_range, tdb_setup),
      cmocka_unit_test_setup(submit_refusals, tdb_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
