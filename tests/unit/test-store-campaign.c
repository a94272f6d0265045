/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-campaign.c -- campaigns in the store and the search
 * that drives them (coordinator/search.c, stepped here without a server):
 * migration 0002, the once-per-(source, flags, class) rule within a
 * campaign and, through reuse, across campaigns of one problem and
 * environment (0003; what else the identity holds: test-store-identity),
 * one evaluation per eval task whatever the reports, and the search's
 * knobs, dedupe, outstanding limit, stop rules and resumption over a
 * fresh connection.  The workers here do not run showdown tasks, so a
 * stopped search ends the campaign at once (test-store-showdown).
 *
 * The "worker" is test-campaign-fixture.h's: the store API used by hand.
 */
#include "test-store-fixture.h"

#include <math.h>

#include "test-campaign-fixture.h"

/* ---------------------------------------------------------------- tests */

static void migration_applies(void **state) {
  (void)state;
  assert_true(kf_store_schema_version(tdb.s) >= 2);
  assert_int_equal(tdb_int("SELECT count(*) FROM information_schema.tables"
                           " WHERE table_name IN ('candidates', 'eval_keys',"
                           " 'evaluations')"),
                   3);
  int64_t id = campaign(templates, 10, 0, 1);
  kf_campaign *c = NULL;
  assert_int_equal(kf_store_campaign_get(tdb.s, id, &c), 0);
  assert_string_equal(c->state, "running");
  assert_int_equal(c->budget_evals, 10);
  assert_int_equal(c->spec_json_len, 13);
  assert_memory_equal(c->spec_json, "{\"name\": \"p\"}", 13);
  /* sha256("int t;") , sha256("int u;") as PostgreSQL computes them */
  assert_int_equal(strlen(c->template_shas), 64 * 2 + 1);
  kf_store_campaign_free(c);
  assert_int_equal(kf_store_campaign_get(tdb.s, id + 100, &c), KF_ENOTFOUND);
}

static void search_initial_population(void **state) {
  (void)state;
  int64_t dc = 0;
  eval_worker("w", 2, &dc); /* 2 slots x 2 per slot: 4 outstanding */
  int64_t cid = campaign(templates, 100, 0, 7);
  kf_search_stats st = step(cid);
  assert_int_equal(st.scheduled, 4);
  assert_int_equal(st.running, 1);
  /* Defaults first: every template's first values. */
  assert_int_equal(tdb_int("SELECT count(*) FROM candidates WHERE"
                           " flags IN ('-DA=1 -DB=x -DC=0', '-DK=4')"),
                   2);
  /* Outstanding limit: another step adds nothing. */
  assert_int_equal(step(cid).scheduled, 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE kind = 'eval'"
                           " AND campaign_id = %lld AND max_attempts = 2"
                           " AND device_class_id = %lld",
                           (long long)cid, (long long)dc),
                   4);
  /* Every knob value is one of its template's. */
  assert_int_equal(
      tdb_int("SELECT count(*) FROM candidates c, jsonb_each_text(c.knobs) k"
              " WHERE NOT EXISTS (SELECT 1 FROM campaigns p,"
              " jsonb_array_elements(p.templates) t,"
              " jsonb_array_elements(t->'knobs') kn"
              " WHERE p.id = c.campaign_id AND t->>'name' = c.template_name"
              " AND kn->>'name' = k.key AND kn->'values' ? k.value)"),
      0);
  assert_int_equal(no_repeats(), 0);
}

static void dedupe_across_campaigns(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 4, &dc);
  int64_t a = campaign(templates, 100, 0, 1);
  int64_t b = campaign(templates, 100, 0, 1); /* same seed, same space */
  step(a);
  run_round(w, dc, time_of, false);
  step(a);
  step(b);
  run_round(w, dc, time_of, false);
  step(b);
  assert_int_equal(no_repeats(), 0);
  /* b never repeats one of a's keys, though it drew from the same space */
  assert_int_equal(tdb_int("SELECT count(*) FROM eval_keys x JOIN eval_keys y"
                           " ON x.source_sha256 = y.source_sha256 AND"
                           " x.flags = y.flags AND x.device_class_id ="
                           " y.device_class_id WHERE x.campaign_id = %lld"
                           " AND y.campaign_id = %lld AND x.task_id IS NOT"
                           " NULL AND y.task_id IS NOT NULL",
                           (long long)a, (long long)b),
                   0);
  /* The database refuses a second task for a key in one campaign (a
   * holds the default of t). */
  int64_t cand = 0, task = 0;
  assert_int_equal(kf_store_reserve_ids(tdb.s, 1, &cand, &task), 0);
  kf_eval_plan p = {.new_candidate = true, .candidate_id = cand,
                    .device_class_id = dc, .template_name = "t",
                    .knobs_json = "{\"A\": \"1\", \"B\": \"x\", \"C\": \"0\"}",
                    .source = "int t;", .flags = "-DA=1 -DB=x -DC=0",
                    .task_id = task, .payload = "x", .payload_len = 1};
  bool sched = true;
  assert_int_equal(kf_store_schedule(tdb.s, a, &p, 1, &sched), 0);
  assert_false(sched);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE id = %lld",
                           (long long)task),
                   0);
  /* a and b between them used up the space: each measured part of it and
   * reused the rest from the other, and both ended without repeating. */
  for (int i = 0; i < 6; i++) {
    run_round(w, dc, time_of, false);
    step(a);
    step(b);
  }
  assert_string_equal(tdb_text("SELECT string_agg(stop_reason, ',' ORDER BY"
                               " id) FROM campaigns"),
                      "search space exhausted,search space exhausted");
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations"
                           " WHERE reused_from IS NULL"),
                   14);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations"
                           " WHERE campaign_id = %lld", (long long)a), 14);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations"
                           " WHERE campaign_id = %lld", (long long)b), 14);
  assert_int_equal(no_repeats(), 0);
  /* A proposal of a key only other campaigns evaluated is not a
   * duplicate: the next step reuses their evaluation for it. */
  int64_t d = campaign(templates, 100, 0, 1);
  int64_t id = 0, known = 0;
  bool dup = true;
  assert_int_equal(kf_store_propose(tdb.s, d, "t", "{}", "-DA=1 -DB=x -DC=0",
                                    "int t;", "user", &known, &dup),
                   0);
  assert_false(dup);
  /* A new one is not either, and the next step evaluates it first. */
  assert_int_equal(kf_store_propose(tdb.s, d, "", "{}", "", "int mine;",
                                    "user", &id, &dup),
                   0);
  assert_false(dup);
  kf_search_stats st = step(d);
  assert_int_equal(st.scheduled, 1);
  assert_int_equal(st.reused, 14); /* the proposal and 13 drawn keys */
  assert_int_equal(tdb_int("SELECT count(*) FROM eval_keys k JOIN tasks t"
                           " ON t.id = k.task_id WHERE k.candidate_id = %lld"
                           " AND t.priority = 1",
                           (long long)id),
                   1);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " candidate_id = %lld AND task_id IS NULL AND"
                           " reused_from IS NOT NULL", (long long)known),
                   1);
  /* Proposed again, it is a duplicate: d holds it now. */
  assert_int_equal(kf_store_propose(tdb.s, d, "t", "{}", "-DA=1 -DB=x -DC=0",
                                    "int t;", "user", &id, &dup),
                   0);
  assert_true(dup);
  assert_int_equal(id, known);
  assert_int_equal(no_repeats(), 0);
}

/* Every key at most once among a campaign's evaluations. */
static int64_t counted_twice(int64_t cid) {
  return tdb_int("SELECT count(*) FROM (SELECT 1 FROM evaluations e"
                 " JOIN candidates c ON c.id = e.candidate_id"
                 " WHERE e.campaign_id = %lld GROUP BY c.source_sha256,"
                 " c.flags, e.device_class_id HAVING count(*) > 1) x",
                 (long long)cid);
}

/* `kf run` twice on one data directory: the second campaign reuses what
 * the first measured, creates no task for it, and still ends with a best
 * it can hand out with its source. */
static void reuse_second_campaign(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t a = campaign(templates, 6, 0, 1);
  assert_string_equal(run_to_end(a, w, dc, time_of, 20),
                      "done: budget_evals reached");
  int64_t tasks_a = tdb_int("SELECT count(*) FROM tasks");
  assert_int_equal(tasks_a, 6);
  int64_t b = campaign(templates, 10, 0, 1); /* same spec, same seed */
  assert_string_equal(run_to_end(b, w, dc, time_of, 20),
                      "done: budget_evals reached");
  int64_t reused = reused_in(b);
  /* The defaults come first in both: at least those two are reused. */
  assert_true(reused >= 2);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld", (long long)b),
                   10);
  /* No task for a key a measured; one task per evaluation b measured. */
  assert_int_equal(no_repeats(), 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE campaign_id ="
                           " %lld", (long long)b),
                   10 - reused);
  /* A reused row: b's own candidate, no task, a's measurements. */
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations e"
                           " JOIN evaluations o ON o.id = e.reused_from"
                           " JOIN candidates c ON c.id = e.candidate_id"
                           " JOIN candidates oc ON oc.id = o.candidate_id"
                           " WHERE e.campaign_id = %lld AND e.task_id IS NULL"
                           " AND c.campaign_id = e.campaign_id"
                           " AND o.campaign_id = %lld AND o.task_id IS NOT NULL"
                           " AND e.time_ns_median = o.time_ns_median"
                           " AND e.speedup = o.speedup AND e.outcome = o.outcome"
                           " AND c.source_sha256 = oc.source_sha256"
                           " AND c.flags = oc.flags",
                           (long long)b, (long long)a),
                   reused);
  assert_int_equal(counted_twice(a), 0);
  assert_int_equal(counted_twice(b), 0);
  /* Counts and the best work as if b had run them. */
  kf_campaign_counts n;
  assert_int_equal(kf_store_campaign_counts(tdb.s, b, &n), 0);
  assert_int_equal(n.evals, 10);
  assert_int_equal(n.evals_reused, reused);
  assert_int_equal(n.issued, 10);
  assert_int_equal(n.outstanding, 0);
  kf_cand_list *best = NULL;
  assert_int_equal(kf_store_best(tdb.s, b, &best), 0);
  assert_int_equal(best->n, 1);
  assert_non_null(best->v[0].source);
  assert_string_equal(best->v[0].source, "int t;");
  assert_true(best->v[0].speedup > 1);
  assert_int_equal(best->v[0].campaign_id, b);
  assert_true(n.best_speedup == best->v[0].speedup);
  kf_store_list_free(best);
  /* Listed with reused_from, as export shows them. */
  kf_cand_list *l = NULL;
  assert_int_equal(kf_store_evaluations(tdb.s, b, KF_EVALS_BY_ID, 0, &l), 0);
  int64_t marked = 0;
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].reused_from) {
      marked++;
      assert_int_equal(l->v[i].task_id, 0);
    }
  assert_int_equal(marked, reused);
  kf_store_list_free(l);
  /* The store refuses to reuse one evaluation twice in a campaign, or a
   * campaign's own evaluation. */
  int64_t orig = tdb_int("SELECT reused_from FROM evaluations WHERE"
                         " campaign_id = %lld AND reused_from IS NOT NULL"
                         " ORDER BY id LIMIT 1", (long long)b);
  int64_t owner = tdb_int("SELECT candidate_id FROM evaluations WHERE id ="
                          " %lld", (long long)orig);
  int64_t own = tdb_int("SELECT id FROM evaluations WHERE campaign_id = %lld"
                        " AND task_id IS NOT NULL ORDER BY id LIMIT 1",
                        (long long)b);
  for (int k = 0; k < 2; k++) {
    int64_t cand = 0;
    assert_int_equal(kf_store_reserve_ids(tdb.s, 1, &cand, NULL), 0);
    kf_eval_plan p = {.new_candidate = true, .candidate_id = cand,
                      .device_class_id = dc, .template_name = "t",
                      .knobs_json = "{}", .source = "int t;",
                      .flags = "-DX=1", .duplicate_of = owner,
                      .reuse_eval = k ? own : orig};
    bool sched = true;
    assert_int_equal(kf_store_schedule(tdb.s, b, &p, 1, &sched), 0);
    assert_false(sched);
  }
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld", (long long)b),
                   10);
}

/* A key another campaign is still evaluating is neither run again nor
 * reused while in flight; a later step reuses it once it is measured. */
static void reuse_waits_for_inflight(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t a = campaign(templates, 100, 0, 1);
  int64_t b = campaign(templates, 100, 0, 1);
  /* b stays in its initial population, which starts with the defaults. */
  tdb_sql("UPDATE campaigns SET population = 16");
  assert_int_equal(step(a).scheduled, 4); /* queued, not run yet */
  kf_search_stats st = step(b);
  assert_int_equal(st.reused, 0);
  assert_int_equal(st.scheduled, 4);
  assert_int_equal(no_repeats(), 0); /* none of a's queued keys */
  run_round(w, dc, time_of, false); /* all 8 measured */
  st = step(b);
  assert_true(st.reused >= 2); /* at least a's two defaults */
  step(a);
  assert_int_equal(counted_twice(a), 0);
  assert_int_equal(counted_twice(b), 0);
  assert_int_equal(no_repeats(), 0);
}

static void repeated_report_one_evaluation(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 1, &dc);
  int64_t cid = campaign(templates, 100, 0, 3);
  assert_int_equal(step(cid).scheduled, 2);
  assert_int_equal(run_round(w, dc, time_of, true), 2);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations"), 2);
  assert_int_equal(tdb_int("SELECT count(*) FROM results"), 2);
  /* speedup = ref / time; roofline = (1000 B / 10 GB/s) / time */
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " abs(speedup - ref_time_ns_median /"
                           " time_ns_median) < 1e-9 AND"
                           " abs(roofline_fraction - 100 / time_ns_median)"
                           " < 1e-9 AND result IS NOT NULL"),
                   2);
  /* A task without a campaign never gets an evaluation. */
  int64_t other;
  tdb_submit("eval", 1, 0, 0, 0, &other);
  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, eval_kinds, 1);
  assert_int_equal(g->n, 1);
  kf_eval_row row = {.time_ns_median = 5};
  kf_report rep = {.worker_id = w, .task_id = g->tasks[0].task_id,
                   .attempt = 1, .outcome = KF_OUTCOME_OK, .eval = &row};
  kf_verdict v;
  assert_int_equal(kf_store_report(tdb.s, &rep, 1, &v), 0);
  assert_int_equal(v, KF_VERDICT_ACCEPTED);
  kf_store_grant_free(g);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations"), 2);
  /* A retryable outcome is not final: no evaluation until the retry. */
  step(cid);
  g = tdb_lease1(tdb.s, w, dc, eval_kinds, 1);
  assert_int_equal(g->n, 1);
  rep = (kf_report){.worker_id = w, .task_id = g->tasks[0].task_id,
                    .attempt = 1, .outcome = KF_OUTCOME_INFRA_ERROR};
  assert_int_equal(kf_store_report(tdb.s, &rep, 1, &v), 0);
  kf_store_grant_free(g);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations"), 2);
  g = tdb_lease1(tdb.s, w, dc, eval_kinds, 1);
  assert_int_equal(g->n, 1);
  rep = (kf_report){.worker_id = w, .task_id = g->tasks[0].task_id,
                    .attempt = 2, .outcome = KF_OUTCOME_WRONG_ANSWER,
                    .stage = "verify", .reason = "bad"};
  assert_int_equal(kf_store_report(tdb.s, &rep, 1, &v), 0);
  assert_int_equal(kf_store_report(tdb.s, &rep, 1, &v), 0);
  assert_int_equal(v, KF_VERDICT_DUPLICATE);
  kf_store_grant_free(g);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE outcome ="
                           " 'wrong_answer' AND time_ns_median IS NULL AND"
                           " speedup IS NULL"),
                   1);
}

static void stops_on_budget(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t cid = campaign(templates, 7, 0, 11);
  assert_string_equal(run_to_end(cid, w, dc, time_of, 20),
                      "done: budget_evals reached");
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations"), 7);
  assert_int_equal(no_repeats(), 0);
  /* The best is recorded: A=2, B=z beats everything else. */
  kf_cand_list *best = NULL;
  assert_int_equal(kf_store_best(tdb.s, cid, &best), 0);
  assert_int_equal(best->n, 1);
  assert_non_null(best->v[0].source);
  assert_true(best->v[0].speedup > 1);
  kf_campaign_counts n;
  assert_int_equal(kf_store_campaign_counts(tdb.s, cid, &n), 0);
  assert_int_equal(n.evals, 7);
  assert_int_equal(n.by_outcome[KF_OUTCOME_OK], 7);
  assert_true(n.best_speedup == best->v[0].speedup);
  kf_store_list_free(best);
  /* Nothing happens to a finished campaign. */
  assert_int_equal(step(cid).scheduled, 0);
}

/* A proposal accepted while the campaign runs is evaluated before it
 * ends, even when stored results already meet its budget: campaign b
 * reuses all of a's evaluations at its first step (budget met, nothing
 * outstanding), and a proposal made right after that must still get a
 * task and an evaluation before b stops.  (It once ended "budget_evals
 * reached" with the proposal never evaluated.) */
static void proposal_evaluated_before_end(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t a = campaign(templates, 4, 0, 3);
  assert_string_equal(run_to_end(a, w, dc, time_of, 20),
                      "done: budget_evals reached");
  int64_t b = campaign(templates, 4, 0, 3);
  /* b's first step reuses a's measurements up to its whole budget. */
  kf_search_stats first = step(b);
  assert_int_equal(first.reused, 4);
  assert_int_equal(first.scheduled, 0);
  assert_string_equal(tdb_text("SELECT state FROM campaigns WHERE id = %lld",
                               (long long)b),
                      "running");
  int64_t pid = 0;
  bool dup = true;
  assert_int_equal(kf_store_propose(tdb.s, b, "", "{}", "", "int mine;",
                                    "llm:test", &pid, &dup),
                   0);
  assert_false(dup);
  /* Step until b ends; while the proposal has no evaluation, b runs. */
  for (int i = 0; i < 20; i++) {
    kf_search_stats st = step(b);
    (void)st;
    int64_t evaluated = tdb_int("SELECT count(*) FROM evaluations WHERE"
                                " candidate_id = %lld", (long long)pid);
    const char *state = tdb_text("SELECT state FROM campaigns WHERE id ="
                                 " %lld", (long long)b);
    if (strcmp(state, "running") != 0) {
      if (evaluated != 1)
        fail_msg("campaign %lld ended (%s) with its proposal unevaluated",
                 (long long)b,
                 tdb_text("SELECT stop_reason FROM campaigns WHERE id ="
                          " %lld", (long long)b));
      break;
    }
    run_round(w, dc, time_of, false);
  }
  assert_string_equal(tdb_text("SELECT state || ': ' || stop_reason FROM"
                               " campaigns WHERE id = %lld", (long long)b),
                      "done: budget_evals reached");
  /* The proposal was measured for b (a task of b), the rest reused. */
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " candidate_id = %lld AND task_id IS NOT NULL"
                           " AND campaign_id = %lld", (long long)pid,
                           (long long)b),
                   1);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld AND reused_from IS NOT NULL",
                           (long long)b),
                   4);
}

static void stops_on_plateau(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 1, &dc);
  int64_t cid = campaign(templates, 100, 5, 5);
  /* Every candidate takes as long as the first: no improvement. */
  assert_string_equal(run_to_end(cid, w, dc, flat_time, 20), "done: plateau");
  int64_t n = tdb_int("SELECT count(*) FROM evaluations");
  assert_true(n >= 6 && n <= 8);
}

static void stops_when_exhausted(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 4, &dc);
  int64_t cid = campaign(templates, 100, 0, 9);
  assert_string_equal(run_to_end(cid, w, dc, time_of, 20),
                      "done: search space exhausted");
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations"), 14);
  assert_int_equal(no_repeats(), 0);
}

/* A campaign of 9 evaluations with a roofline target of 0.95 on one
 * eval worker whose registered copy ceiling is 10 GB/s: the floor of its
 * 1000 bytes is 100 ns. */
static int64_t roofline_campaign(int64_t *w, int64_t *dc) {
  *dc = 0;
  *w = eval_worker("w", 1, dc);
  int64_t cid = campaign(templates, 100, 0, 9);
  tdb_sql("UPDATE campaigns SET target_roofline = 0.95");
  step(cid);
  return cid;
}

/* Leases one eval task to w and reports it ok with row. */
static void report_ok(int64_t w, int64_t dc, const kf_eval_row *row) {
  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, eval_kinds, 1);
  assert_int_equal(g->n, 1);
  kf_report rep = {.worker_id = w, .task_id = g->tasks[0].task_id,
                   .attempt = 1, .outcome = KF_OUTCOME_OK, .eval = row};
  kf_verdict v;
  assert_int_equal(kf_store_report(tdb.s, &rep, 1, &v), 0);
  assert_int_equal(v, KF_VERDICT_ACCEPTED);
  kf_store_grant_free(g);
}

static void stops_on_roofline(void **state) {
  (void)state;
  int64_t w, dc;
  int64_t cid = roofline_campaign(&w, &dc);
  /* a 104 ns candidate is at 0.96 */
  report_ok(w, dc, &(kf_eval_row){.time_ns_median = 104,
                                  .ref_time_ns_median = 1000});
  step(cid);
  assert_string_equal(tdb_text("SELECT state || ': ' || stop_reason FROM"
                               " campaigns"),
                      "done: target roofline reached");
  /* Its queued task was cancelled with the reason. */
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state ="
                           " 'failed' AND last_error = 'target roofline"
                           " reached'"),
                   1);
}

/* A worker that measured its copy ceiling under load registered it too
 * low; the harness measured it again beside a timing that claimed half
 * of it or more (stream_gbps).  The fraction divides by the larger of the
 * two, so the low ceiling cannot end the campaign on its roofline target,
 * and a re-measure lower than the registered ceiling changes nothing. */
static void roofline_uses_ceiling_measured_again(void **state) {
  (void)state;
  int64_t w, dc;
  int64_t cid = roofline_campaign(&w, &dc);
  /* 104 ns: 0.96 of the registered 10 GB/s, 0.24 of the 40 measured */
  report_ok(w, dc, &(kf_eval_row){.time_ns_median = 104,
                                  .ref_time_ns_median = 1000,
                                  .stream_gbps = 40});
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " abs(roofline_fraction - 25.0 / 104) < 1e-9"),
                   1);
  step(cid);
  assert_string_equal(tdb_text("SELECT state FROM campaigns"), "running");
  /* measured again lower than registered: the registered one holds; 95
   * ns beats 104 by more than noise, so it is the class's best */
  report_ok(w, dc, &(kf_eval_row){.time_ns_median = 95,
                                  .ref_time_ns_median = 1000,
                                  .stream_gbps = 5});
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " abs(roofline_fraction - 100.0 / 95) < 1e-9"),
                   1);
  step(cid);
  /* the class stops (two ok entries: its showdown follows) */
  assert_string_equal(tdb_text("SELECT stop_reason FROM campaign_classes"),
                      "target roofline reached");
}

static void stop_cancels_queued(void **state) {
  (void)state;
  int64_t dc = 0;
  eval_worker("w", 2, &dc);
  int64_t cid = campaign(templates, 100, 0, 9);
  step(cid);
  bool changed = false;
  int cancelled = 0;
  assert_int_equal(kf_store_campaign_finish(tdb.s, cid, "stopped",
                                            "campaign stopped", &changed,
                                            &cancelled),
                   0);
  assert_true(changed);
  assert_int_equal(cancelled, 4);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state ="
                           " 'failed' AND last_error = 'campaign stopped'"),
                   4);
  assert_int_equal(kf_store_campaign_finish(tdb.s, cid, "stopped", "again",
                                            &changed, NULL),
                   0);
  assert_false(changed);
  assert_int_equal(step(cid).scheduled, 0);
}

static void resumes_after_restart(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t cid = campaign(templates, 12, 0, 21);
  step(cid);
  run_round(w, dc, time_of, false);
  step(cid);
  run_round(w, dc, time_of, false);
  int64_t evals = tdb_int("SELECT count(*) FROM evaluations");
  int64_t cands = tdb_int("SELECT count(*) FROM candidates");
  assert_int_equal(evals, 8);
  step(cid); /* 4 more outstanding, then the "crash" */
  /* Restart: a new connection, nothing kept in memory. */
  kf_store_close(tdb.s);
  tdb.s = tdb_open();
  assert_int_equal(step(cid).scheduled, 0); /* still 4 outstanding */
  run_round(w, dc, time_of, false);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations"), 12);
  assert_true(tdb_int("SELECT count(*) FROM candidates") > cands);
  step(cid);
  assert_string_equal(tdb_text("SELECT state || ': ' || stop_reason FROM"
                               " campaigns"),
                      "done: budget_evals reached");
  assert_int_equal(no_repeats(), 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM (SELECT 1 FROM candidates"
                           " GROUP BY source_sha256, flags HAVING count(*)"
                           " > 1) x"),
                   0);
}

static void noise_aware_ranking(void **state) {
  (void)state;
  assert_true(kf_search_beats(90, 0.01, 100, 0.01));
  assert_false(kf_search_beats(99, 0.01, 100, 0.01));   /* within 2% */
  assert_false(kf_search_beats(90, 0.2, 100, 0.01));    /* noisy a */
  assert_false(kf_search_beats(90, 0.01, 100, 0.15));   /* noisy b */
  assert_true(kf_search_beats(80, 0.2, 100, 0.01));
}

/* 0012: torch.compile's time where the evaluation timed it (half the
 * candidates here), as a PyTorch problem on a GPU does. */
static void compile_half(const Kernelfleet__EvalRequest *rq,
                         Kernelfleet__EvalResult *er) {
  if (rq->candidate_id % 2) er->compile_time_ns_median = 1500;
  /* 0013: max-autotune on a pattern of its own, so that one column can
   * never be read for the other */
  if (rq->candidate_id % 3 == 0) er->max_autotune_time_ns_median = 1200;
}

/* The torch.compile baselines of an evaluation (default mode, 0012;
 * max-autotune-no-cudagraphs, 0013) are stored with it and listed with the
 * speedup over each, computed from the same evaluation; not timed stays
 * 0; a time out of range refuses the report. */
static void compile_baseline_kept(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t cid = campaign(templates, 8, 0, 1);
  step(cid);
  assert_true(run_round_with(w, dc, time_of, false, compile_half) > 0);
  kf_cand_list *l = NULL;
  assert_int_equal(kf_store_evaluations(tdb.s, cid, KF_EVALS_BY_ID, 0, &l),
                   0);
  assert_true(l->n > 0);
  size_t timed = 0, tuned = 0;
  for (size_t i = 0; i < l->n; i++) {
    const kf_cand_row *r = &l->v[i];
    if (r->candidate_id % 2) {
      timed++;
      assert_true(r->compile_time_ns_median == 1500);
      assert_true(fabs(r->speedup_compile - 1500 / r->time_ns_median) <
                  1e-9 * r->speedup_compile);
    } else {
      assert_true(r->compile_time_ns_median == 0 && r->speedup_compile == 0);
    }
    if (r->candidate_id % 3 == 0) {
      tuned++;
      assert_true(r->max_autotune_time_ns_median == 1200);
      assert_true(fabs(r->speedup_max_autotune - 1200 / r->time_ns_median) <
                  1e-9 * r->speedup_max_autotune);
    } else {
      assert_true(r->max_autotune_time_ns_median == 0 &&
                  r->speedup_max_autotune == 0);
    }
  }
  assert_true(timed > 0 && tuned > 0);
  kf_store_list_free(l);
  /* the ranked list (the table's rows) carries it too */
  assert_int_equal(kf_store_evaluations(tdb.s, cid, KF_EVALS_BEST, 0, &l), 0);
  for (size_t i = 0; i < l->n; i++) {
    if (l->v[i].candidate_id % 2) assert_true(l->v[i].speedup_compile > 0);
    if (l->v[i].candidate_id % 3 == 0)
      assert_true(l->v[i].speedup_max_autotune > 0);
  }
  kf_store_list_free(l);
  /* a negative time of either baseline is refused as invalid, nothing
   * stored for it */
  for (int k = 0; k < 2; k++) {
    step(cid);
    kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, eval_kinds, 1);
    assert_int_equal(g->n, 1);
    kf_eval_row row = {.time_ns_median = 900, .ref_time_ns_median = 2000,
                       .compile_time_ns_median = k ? 1500 : -5,
                       .max_autotune_time_ns_median = k ? -5 : 0};
    kf_report rep = {.worker_id = w, .task_id = g->tasks[0].task_id,
                     .attempt = g->tasks[0].attempt,
                     .outcome = KF_OUTCOME_OK, .eval = &row};
    kf_verdict v;
    assert_int_equal(kf_store_report(tdb.s, &rep, 1, &v), 0);
    assert_int_equal(v, KF_VERDICT_INVALID);
    assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                             " task_id = %lld",
                             (long long)g->tasks[0].task_id),
                     0);
    kf_store_grant_free(g);
  }
}

/* Both baselines timed in every evaluation. */
static void compile_all(const Kernelfleet__EvalRequest *rq,
                        Kernelfleet__EvalResult *er) {
  (void)rq;
  er->compile_time_ns_median = 1500;
  er->max_autotune_time_ns_median = 1200;
}

/* An evaluation reused by another campaign of the same problem carries
 * the compile baselines of the measurements it copies, with the speedups
 * over them: a reused row's `vs compile` is not blank. */
static void compile_baseline_reused(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t a = campaign(templates, 6, 0, 1);
  assert_string_equal(run_to_end_with(a, w, dc, time_of, 20, compile_all),
                      "done: budget_evals reached");
  int64_t b = campaign(templates, 10, 0, 1); /* same spec, same seed */
  assert_string_equal(run_to_end(b, w, dc, time_of, 20),
                      "done: budget_evals reached");
  int64_t reused = reused_in(b);
  assert_true(reused >= 2);
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld AND reused_from IS NOT NULL"
                           " AND compile_time_ns_median = 1500"
                           " AND max_autotune_time_ns_median = 1200"
                           " AND abs(speedup_compile - 1500 / time_ns_median)"
                           "  < 1e-9 * speedup_compile"
                           " AND abs(speedup_max_autotune"
                           "  - 1200 / time_ns_median)"
                           "  < 1e-9 * speedup_max_autotune",
                           (long long)b),
                   reused);
  /* b's own measurements did not time them: nothing made up there */
  assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                           " campaign_id = %lld AND reused_from IS NULL"
                           " AND (compile_time_ns_median IS NOT NULL"
                           "  OR speedup_max_autotune IS NOT NULL)",
                           (long long)b),
                   0);
}

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("campaign");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(migration_applies, tdb_setup),
      cmocka_unit_test_setup(search_initial_population, tdb_setup),
      cmocka_unit_test_setup(dedupe_across_campaigns, tdb_setup),
      cmocka_unit_test_setup(reuse_second_campaign, tdb_setup),
      cmocka_unit_test_setup(reuse_waits_for_inflight, tdb_setup),
      cmocka_unit_test_setup(repeated_report_one_evaluation, tdb_setup),
      cmocka_unit_test_setup(stops_on_budget, tdb_setup),
      cmocka_unit_test_setup(proposal_evaluated_before_end, tdb_setup),
      cmocka_unit_test_setup(stops_on_plateau, tdb_setup),
      cmocka_unit_test_setup(stops_when_exhausted, tdb_setup),
      cmocka_unit_test_setup(stops_on_roofline, tdb_setup),
      cmocka_unit_test_setup(roofline_uses_ceiling_measured_again, tdb_setup),
      cmocka_unit_test_setup(stop_cancels_queued, tdb_setup),
      cmocka_unit_test_setup(resumes_after_restart, tdb_setup),
      cmocka_unit_test_setup(compile_baseline_kept, tdb_setup),
      cmocka_unit_test_setup(compile_baseline_reused, tdb_setup),
      cmocka_unit_test(noise_aware_ranking),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
