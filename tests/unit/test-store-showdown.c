/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-showdown.c -- the final showdown (migration 0004,
 * coordinator/showdown.c), stepped here without a server: when the search
 * stops, the campaign's top candidates are re-timed in one "showdown" task
 * per class; the campaign ends only after it reported (or failed), and its
 * best and numbers are the showdown's -- the status, the ranking and
 * GetBest's row all agree; a candidate that fails the showdown loses its
 * place; a showdown that cannot run or fails leaves the aggregated
 * ranking's best and says so.
 *
 * The "worker" answering the showdown task is the store API used by hand,
 * with a ShowdownResult made up by the test (the harness side is tested
 * with the harness).
 */
#include "test-store-fixture.h"

#include "test-campaign-fixture.h"

#include <math.h>

#include "util.h"

/* "state: stop_reason [showdown]", in a buffer of its own (tdb_text's is
 * shared). */
static const char *state_of(int64_t cid) {
  static char out[1024];
  kf_strlcpy(out, tdb_text("SELECT state || ': ' || COALESCE(stop_reason,"
                           " '') || ' [' || showdown || ']' FROM campaigns"
                           " WHERE id = %lld", (long long)cid),
             sizeof out);
  return out;
}

/* A campaign that ran its search to its budget with a worker that also
 * runs showdown tasks, and is now in its showdown. */
static int64_t to_showdown(int64_t *w, int64_t *dc, uint32_t budget,
                           uint32_t top) {
  *w = worker_env("w", 2, "build-1", eval_showdown_kinds, dc);
  tcamp o = {.showdown_top = top};
  int64_t cid = campaign_with(templates, budget, 0, 1, &o);
  assert_string_equal(run_to_end(cid, *w, *dc, time_of, 20),
                      "showdown: budget_evals reached");
  return cid;
}

/* Leases the showdown task; *rq its request (free_unpacked). */
static kf_lease_grant *lease_showdown(int64_t w, int64_t dc,
                                      Kernelfleet__ShowdownRequest **rq) {
  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, showdown_kinds, 8);
  assert_int_equal(g->n, 1);
  assert_string_equal(g->tasks[0].kind, "showdown");
  *rq = kernelfleet__showdown_request__unpack(NULL, g->tasks[0].payload_len,
                                              g->tasks[0].payload);
  assert_non_null(*rq);
  return g;
}

/* Reports r (packed) as the task's result with outcome oc. */
static void answer(int64_t w, const kf_leased_task *t, int oc,
                   const Kernelfleet__ShowdownResult *r) {
  uint8_t buf[4096];
  size_t len = r ? kernelfleet__showdown_result__pack(r, buf) : 0;
  kf_report rep = {.worker_id = w, .task_id = t->task_id,
                   .attempt = t->attempt, .outcome = oc, .stage = "showdown",
                   .reason = oc == KF_OUTCOME_OK ? "" : "it broke",
                   .output = len ? buf : NULL, .output_len = len};
  kf_verdict v;
  if (kf_store_report(tdb.s, &rep, 1, &v))
    fail_msg("report: %s", kf_store_errmsg(tdb.s));
  assert_int_equal(v, KF_VERDICT_ACCEPTED);
}

/* A worker's showdown text with bytes PostgreSQL refuses (an invalid
 * UTF-8 sequence in an entry's reason and stage): the record is stored,
 * the text sanitized, and the campaign ends.  Red team 2026-12-01-s3b:
 * the store's insert failed on it at every step, and the campaign -- its
 * honest classes too -- never moved again, past its budget. */
static void showdown_bad_text(void **state) {
  (void)state;
  int64_t w = 0, dc = 0;
  int64_t cid = to_showdown(&w, &dc, 8, 2);
  Kernelfleet__ShowdownRequest *rq = NULL;
  kf_lease_grant *g = lease_showdown(w, dc, &rq);
  assert_int_equal(rq->n_entries, 2);
  Kernelfleet__ShowdownTiming tm[2], *tp[2];
  for (int i = 0; i < 2; i++) {
    kernelfleet__showdown_timing__init(&tm[i]);
    tm[i].candidate_id = rq->entries[i]->candidate_id;
    tm[i].outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
    tm[i].stage = "time";
    tm[i].time_ns_median = 900 - 300 * i;
    tm[i].repetitions = 30;
    tp[i] = &tm[i];
  }
  tm[1].outcome = KERNELFLEET__OUTCOME__OUTCOME_WRONG_ANSWER;
  tm[1].stage = "ver\xffify";
  tm[1].reason = "output \xfe\xff differs \x1b[31m";
  Kernelfleet__ShowdownResult res = KERNELFLEET__SHOWDOWN_RESULT__INIT;
  res.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  res.ref_time_ns_median = 1800;
  res.ref_repetitions = 30;
  res.n_entries = 2;
  res.entries = tp;
  res.harness_build = "build-1";
  answer(w, &g->tasks[0], KF_OUTCOME_OK, &res);
  kf_store_grant_free(g);
  kernelfleet__showdown_request__free_unpacked(rq, NULL);
  kf_search_stats st = step(cid);
  assert_int_equal(st.finished, 1);
  assert_string_equal(state_of(cid), "done: budget_evals reached [done]");
  assert_int_equal(tdb_int("SELECT best_candidate_id FROM campaigns"),
                   tm[0].candidate_id);
  /* the bad bytes written out, the escape sequence dropped */
  assert_int_equal(tdb_int("SELECT count(*) FROM showdown_entries WHERE"
                           " candidate_id = %lld AND reason LIKE"
                           " 'output %%xfe%%xff differs %%' AND reason NOT"
                           " LIKE '%%[31m%%' AND stage LIKE 'ver%%xffify'",
                           (long long)tm[1].candidate_id),
                   1);
}

/* The showdown re-ranks: the request holds the search's best first and
 * the fastest after it; the answer makes the last entry fastest and the
 * second fail.  The campaign ends on the showdown's winner, and every view
 * of the best agrees with it. */
static void showdown_decides_best(void **state) {
  (void)state;
  int64_t w = 0, dc = 0;
  int64_t cid = to_showdown(&w, &dc, 8, 4);
  assert_string_equal(state_of(cid),
                      "showdown: budget_evals reached [running]");
  int64_t search_best = tdb_int("SELECT best_candidate_id FROM campaigns");
  assert_true(search_best > 0);
  /* One task, ahead of every eval task. */
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE kind ="
                           " 'showdown' AND priority = 2 AND campaign_id ="
                           " %lld AND state = 'queued'", (long long)cid),
                   1);
  /* Nothing happens until it reports. */
  assert_int_equal(step(cid).running, 1);
  assert_string_equal(tdb_text("SELECT state FROM campaigns"), "showdown");

  Kernelfleet__ShowdownRequest *rq = NULL;
  kf_lease_grant *g = lease_showdown(w, dc, &rq);
  assert_int_equal(rq->n_entries, 4);
  assert_int_equal(rq->entries[0]->candidate_id, search_best);
  assert_string_equal(rq->problem, "p");
  assert_string_equal(rq->reference_source, "int ref;");
  assert_string_equal(rq->language, "c");
  assert_int_equal(rq->problem_spec.len, 13);
  for (size_t i = 0; i < rq->n_entries; i++) {
    const Kernelfleet__ShowdownEntry *e = rq->entries[i];
    /* each entry is the campaign's candidate, with its source and knobs */
    assert_int_equal(
        tdb_int("SELECT count(*) FROM candidates WHERE id = %lld AND"
                " campaign_id = %lld AND source = '%s' AND"
                " jsonb_typeof(knobs) = 'object' AND"
                " (SELECT count(*) FROM jsonb_object_keys(knobs)) = %zu",
                (long long)e->candidate_id, (long long)cid, e->source,
                e->n_knobs),
        1);
    for (size_t k = 0; k < e->n_knobs; k++)
      assert_string_equal(
          tdb_text("SELECT knobs->>'%s' FROM candidates WHERE id = %lld",
                   e->knobs[k]->name, (long long)e->candidate_id),
          e->knobs[k]->value);
    /* and ok in the campaign's ranking */
    assert_int_equal(tdb_int("SELECT count(*) FROM evaluations WHERE"
                             " candidate_id = %lld AND outcome = 'ok'",
                             (long long)e->candidate_id),
                     1);
  }
  /* The answer: the last entry fastest, the second wrong now. */
  Kernelfleet__ShowdownTiming tm[4], *tp[4];
  for (int i = 0; i < 4; i++) {
    kernelfleet__showdown_timing__init(&tm[i]);
    tm[i].candidate_id = rq->entries[i]->candidate_id;
    tm[i].outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
    tm[i].stage = "time";
    tm[i].time_ns_median = 900 - 150 * i; /* 900, 750, 600, 450 */
    tm[i].time_ns_spread = 0.02;
    tm[i].repetitions = 300;
    tm[i].speedup = 1800.0 / tm[i].time_ns_median;
    tp[i] = &tm[i];
  }
  tm[1].outcome = KERNELFLEET__OUTCOME__OUTCOME_WRONG_ANSWER;
  tm[1].stage = "verify";
  tm[1].reason = "output 0 differs";
  tm[1].time_ns_median = 0;
  tm[1].speedup = 0;
  tm[3].speedup = 0; /* the store derives it from the reference */
  Kernelfleet__ShowdownResult res = KERNELFLEET__SHOWDOWN_RESULT__INIT;
  res.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  res.ref_time_ns_median = 1800;
  res.ref_time_ns_spread = 0.01;
  res.ref_repetitions = 300;
  res.n_entries = 4;
  res.entries = tp;
  res.harness_build = "build-1";
  /* the worker's copy ceiling measured again beside the showdown, twice
   * the 10 GB/s it registered: the fractions divide by the larger */
  res.stream_gbps = 20;
  int64_t winner = tm[3].candidate_id, lost = tm[1].candidate_id;
  answer(w, &g->tasks[0], KF_OUTCOME_OK, &res);
  kf_store_grant_free(g);
  kernelfleet__showdown_request__free_unpacked(rq, NULL);

  kf_search_stats st = step(cid);
  assert_int_equal(st.finished, 1);
  assert_string_equal(state_of(cid), "done: budget_evals reached [done]");
  assert_int_equal(tdb_int("SELECT best_candidate_id FROM campaigns"),
                   winner);
  assert_int_equal(tdb_int("SELECT count(*) FROM campaigns WHERE"
                           " best_from_showdown"), 1);
  assert_int_equal(tdb_int("SELECT count(*) FROM showdowns WHERE state ="
                           " 'done' AND environment_id IS NOT NULL AND"
                           " ref_repetitions = 300 AND result IS NOT NULL"),
                   1);
  /* GetBest: the winner with the showdown's numbers. */
  kf_cand_list *best = NULL;
  assert_int_equal(kf_store_best(tdb.s, cid, &best), 0);
  assert_int_equal(best->v[0].candidate_id, winner);
  assert_true(best->v[0].showdown);
  assert_true(best->v[0].time_ns_median == 450);
  assert_true(best->v[0].speedup == 4);
  assert_true(best->v[0].ref_time_ns_median == 1800);
  assert_true(best->v[0].time_ns_spread == 0.02);
  assert_int_equal(best->v[0].repetitions, 300);
  /* floor 1000 B at 20 GB/s (measured again; 10 registered): 50 ns of 450 */
  assert_true(fabs(best->v[0].roofline_fraction - 50.0 / 450) < 1e-12);
  assert_non_null(best->v[0].source);
  /* The status says the same. */
  kf_campaign_counts n;
  assert_int_equal(kf_store_campaign_counts(tdb.s, cid, &n), 0);
  assert_true(n.best_speedup == best->v[0].speedup);
  assert_true(n.best_time_ns == 450);
  assert_true(n.best_spread == 0.02);
  assert_int_equal(n.best_repetitions, 300);
  assert_true(n.best_showdown);
  /* The ranking: winner first, then the showdown's others by speedup,
   * then the rest; the one that failed is gone. */
  kf_cand_list *rank = NULL;
  assert_int_equal(kf_store_evaluations(tdb.s, cid, KF_EVALS_BEST, 0, &rank),
                   0);
  assert_int_equal(rank->v[0].candidate_id, winner);
  assert_int_equal(rank->v[1].candidate_id, tm[2].candidate_id);
  assert_int_equal(rank->v[2].candidate_id, tm[0].candidate_id);
  assert_true(rank->v[1].showdown && rank->v[2].showdown);
  assert_true(rank->v[2].time_ns_median == 900);
  for (size_t i = 3; i < rank->n; i++) assert_false(rank->v[i].showdown);
  for (size_t i = 0; i < rank->n; i++)
    assert_true(rank->v[i].candidate_id != lost);
  assert_int_equal(rank->n, (size_t)tdb_int("SELECT count(*) FROM"
                                            " evaluations WHERE outcome ="
                                            " 'ok'") - 1);
  kf_store_list_free(rank);
  kf_store_list_free(best);
  /* Done: nothing more happens. */
  assert_int_equal(step(cid).running, 0);
}

/* A showdown that fails (the harness said so) leaves the search's best,
 * and the campaign says where its best came from. */
static void showdown_failure_falls_back(void **state) {
  (void)state;
  int64_t w = 0, dc = 0;
  int64_t cid = to_showdown(&w, &dc, 6, 0);
  int64_t search_best = tdb_int("SELECT best_candidate_id FROM campaigns");
  double before = 0;
  kf_campaign_counts n;
  assert_int_equal(kf_store_campaign_counts(tdb.s, cid, &n), 0);
  before = n.best_speedup;
  Kernelfleet__ShowdownRequest *rq = NULL;
  kf_lease_grant *g = lease_showdown(w, dc, &rq);
  assert_int_equal(rq->n_entries, 5); /* the default top */
  Kernelfleet__ShowdownResult res = KERNELFLEET__SHOWDOWN_RESULT__INIT;
  res.outcome = KERNELFLEET__OUTCOME__OUTCOME_SPEC_ERROR;
  res.reason = "reference crashed at the bench size";
  answer(w, &g->tasks[0], KF_OUTCOME_SPEC_ERROR, &res);
  kf_store_grant_free(g);
  kernelfleet__showdown_request__free_unpacked(rq, NULL);
  step(cid);
  char want[256];
  snprintf(want, sizeof want, "done: budget_evals reached [failed: device"
           " class %lld: spec_error: reference crashed at the bench size;"
           " the best comes from the aggregated ranking]", (long long)dc);
  assert_string_equal(state_of(cid), want);
  assert_int_equal(tdb_int("SELECT best_candidate_id FROM campaigns"),
                   search_best);
  assert_int_equal(tdb_int("SELECT count(*) FROM campaigns WHERE"
                           " best_from_showdown"), 0);
  assert_int_equal(kf_store_campaign_counts(tdb.s, cid, &n), 0);
  assert_true(n.best_speedup == before);
  assert_false(n.best_showdown);
}

/* A task that keeps failing (retryable, then out of attempts), or one
 * with a result that does not decode, fails its showdown too. */
static void showdown_task_failures(void **state) {
  (void)state;
  int64_t w = 0, dc = 0;
  int64_t cid = to_showdown(&w, &dc, 6, 0);
  for (int i = 0; i < 2; i++) {
    Kernelfleet__ShowdownRequest *rq = NULL;
    kf_lease_grant *g = lease_showdown(w, dc, &rq);
    answer(w, &g->tasks[0], KF_OUTCOME_INFRA_ERROR, NULL);
    kf_store_grant_free(g);
    kernelfleet__showdown_request__free_unpacked(rq, NULL);
    if (i == 0) {
      step(cid);
      assert_string_equal(tdb_text("SELECT state FROM campaigns"),
                          "showdown");
    }
  }
  step(cid);
  char want[256];
  snprintf(want, sizeof want, "done: budget_evals reached [failed: device"
           " class %lld: it broke; the best comes from the aggregated"
           " ranking]", (long long)dc);
  assert_string_equal(state_of(cid), want);
  /* Garbage in the result: failed, "malformed". */
  int64_t c2 = campaign_with(templates, 6, 0, 2, &(tcamp){.fresh = true});
  assert_string_equal(run_to_end(c2, w, dc, time_of, 20),
                      "showdown: budget_evals reached");
  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, showdown_kinds, 8);
  assert_int_equal(g->n, 1);
  uint8_t junk[] = {0xff, 0xff, 0xff};
  kf_report rep = {.worker_id = w, .task_id = g->tasks[0].task_id,
                   .attempt = g->tasks[0].attempt, .outcome = KF_OUTCOME_OK,
                   .output = junk, .output_len = sizeof junk};
  kf_verdict v;
  assert_int_equal(kf_store_report(tdb.s, &rep, 1, &v), 0);
  kf_store_grant_free(g);
  step(c2);
  assert_non_null(strstr(state_of(c2), "malformed ShowdownResult"));
  assert_string_equal(tdb_text("SELECT state FROM campaigns WHERE id = %lld",
                               (long long)c2),
                      "done");
}

/* No worker of the class runs showdown tasks: skipped at once, or failed
 * when the only one that did is gone. */
static void showdown_without_worker(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc); /* eval only */
  int64_t cid = campaign(templates, 6, 0, 1);
  assert_string_equal(run_to_end(cid, w, dc, time_of, 20),
                      "done: budget_evals reached");
  char want[256];
  snprintf(want, sizeof want, "done: budget_evals reached [skipped: no alive"
           " worker of device class %lld runs showdown tasks]", (long long)dc);
  assert_string_equal(state_of(cid), want);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE kind ="
                           " 'showdown'"), 0);
  assert_true(tdb_int("SELECT best_candidate_id FROM campaigns") > 0);
  /* One that does, then goes away before taking the task. */
  int64_t w2 = worker_env("w2", 1, "build-1", eval_showdown_kinds, &dc);
  int64_t c2 = campaign_with(templates, 6, 0, 3, &(tcamp){.fresh = true});
  assert_string_equal(run_to_end(c2, w2, dc, time_of, 20),
                      "showdown: budget_evals reached");
  tdb_sql("UPDATE workers SET last_seen = now() - interval '1 hour'"
          " WHERE name = 'w2'");
  /* Not at once: a restarting worker is missing for a while. */
  step(c2);
  assert_string_equal(tdb_text("SELECT state FROM campaigns WHERE id = %lld",
                               (long long)c2),
                      "showdown");
  tdb_sql("UPDATE showdowns SET created_at = now() - interval '1 hour'");
  step(c2);
  assert_non_null(strstr(state_of(c2), "[failed: device class"));
  assert_non_null(strstr(state_of(c2), "no alive worker of the class runs"
                                       " showdown tasks"));
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE kind ="
                           " 'showdown' AND state = 'failed'"), 1);
  /* A campaign with nothing verified has nothing to show down. */
  tdb_sql("UPDATE workers SET last_seen = now() WHERE name = 'w2'");
  int64_t c3 = campaign_with(templates, 2, 0, 4, &(tcamp){.fresh = true});
  step(c3);
  run_round_with(w2, dc, time_of, false, NULL);
  tdb_sql("UPDATE evaluations SET outcome = 'wrong_answer'"
          " WHERE campaign_id = (SELECT max(id) FROM campaigns)");
  step(c3);
  assert_string_equal(state_of(c3), "done: budget_evals reached [skipped:"
                                    " no verified candidate]");
}

/* All re-timed candidates fail: the best is the aggregated ranking's
 * among the others, which the showdown did not see. */
static void all_fail_falls_back_to_the_rest(void **state) {
  (void)state;
  int64_t w = 0, dc = 0;
  int64_t cid = to_showdown(&w, &dc, 6, 2);
  Kernelfleet__ShowdownRequest *rq = NULL;
  kf_lease_grant *g = lease_showdown(w, dc, &rq);
  assert_int_equal(rq->n_entries, 2);
  Kernelfleet__ShowdownTiming tm[2], *tp[2];
  for (int i = 0; i < 2; i++) {
    kernelfleet__showdown_timing__init(&tm[i]);
    tm[i].candidate_id = rq->entries[i]->candidate_id;
    tm[i].outcome = KERNELFLEET__OUTCOME__OUTCOME_NONDETERMINISTIC;
    tp[i] = &tm[i];
  }
  Kernelfleet__ShowdownResult res = KERNELFLEET__SHOWDOWN_RESULT__INIT;
  res.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  res.ref_time_ns_median = 2000;
  res.n_entries = 2;
  res.entries = tp;
  answer(w, &g->tasks[0], KF_OUTCOME_OK, &res);
  kf_store_grant_free(g);
  step(cid);
  assert_string_equal(state_of(cid),
                      "done: budget_evals reached [done: no candidate"
                      " re-timed ok; the best comes from the aggregated"
                      " ranking]");
  int64_t best = tdb_int("SELECT best_candidate_id FROM campaigns");
  assert_true(best > 0);
  assert_true(best != tm[0].candidate_id && best != tm[1].candidate_id);
  kf_cand_list *b = NULL;
  assert_int_equal(kf_store_best(tdb.s, cid, &b), 0);
  assert_int_equal(b->v[0].candidate_id, best);
  assert_false(b->v[0].showdown);
  kf_store_list_free(b);
  kernelfleet__showdown_request__free_unpacked(rq, NULL);
}

/* An entry the worker could not judge (infra_error) is no verdict on the
 * candidate: it keeps its place with the search's numbers. */
static void infra_error_keeps_place(void **state) {
  (void)state;
  int64_t w = 0, dc = 0;
  int64_t cid = to_showdown(&w, &dc, 6, 2);
  Kernelfleet__ShowdownRequest *rq = NULL;
  kf_lease_grant *g = lease_showdown(w, dc, &rq);
  assert_int_equal(rq->n_entries, 2);
  Kernelfleet__ShowdownTiming tm[2], *tp[2];
  for (int i = 0; i < 2; i++) {
    kernelfleet__showdown_timing__init(&tm[i]);
    tm[i].candidate_id = rq->entries[i]->candidate_id;
    tm[i].outcome = KERNELFLEET__OUTCOME__OUTCOME_INFRA_ERROR;
    tm[i].reason = "runner died";
    tp[i] = &tm[i];
  }
  Kernelfleet__ShowdownResult res = KERNELFLEET__SHOWDOWN_RESULT__INIT;
  res.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  res.n_entries = 2;
  res.entries = tp;
  answer(w, &g->tasks[0], KF_OUTCOME_OK, &res);
  kf_store_grant_free(g);
  int64_t search_best = tdb_int("SELECT best_candidate_id FROM campaigns");
  step(cid);
  assert_int_equal(tdb_int("SELECT best_candidate_id FROM campaigns"),
                   search_best);
  assert_int_equal(search_best, tm[0].candidate_id);
  kf_cand_list *rank = NULL;
  assert_int_equal(kf_store_evaluations(tdb.s, cid, KF_EVALS_BEST, 0, &rank),
                   0);
  assert_int_equal(rank->n, 6);
  assert_int_equal(rank->v[0].candidate_id, search_best);
  for (size_t i = 0; i < rank->n; i++) assert_false(rank->v[i].showdown);
  kf_store_list_free(rank);
  kernelfleet__showdown_request__free_unpacked(rq, NULL);
}

/* A showdown that does not end in time (every attempt's deadline and the
 * time to notice a lost lease) fails, and its task is taken back. */
static void showdown_deadline(void **state) {
  (void)state;
  int64_t w = 0, dc = 0;
  int64_t cid = to_showdown(&w, &dc, 6, 0);
  Kernelfleet__ShowdownRequest *rq = NULL;
  kf_lease_grant *g = lease_showdown(w, dc, &rq); /* and never answered */
  kernelfleet__showdown_request__free_unpacked(rq, NULL);
  assert_int_equal(step(cid).running, 1);
  tdb_sql("UPDATE showdowns SET created_at = now() - interval '1 day'");
  step(cid);
  assert_non_null(strstr(state_of(cid), "[failed: device class"));
  assert_non_null(strstr(state_of(cid), "the showdown did not end within"));
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE kind ="
                           " 'showdown' AND state = 'failed' AND lease_owner"
                           " IS NULL"), 1);
  /* Its late answer is refused. */
  kf_report rep = {.worker_id = w, .task_id = g->tasks[0].task_id,
                   .attempt = g->tasks[0].attempt, .outcome = KF_OUTCOME_OK};
  kf_verdict v;
  assert_int_equal(kf_store_report(tdb.s, &rep, 1, &v), 0);
  assert_int_equal(v, KF_VERDICT_STALE);
  kf_store_grant_free(g);
}

/* Stopped during its showdown: stopped, the showdown failed, its task
 * cancelled. */
static void stop_during_showdown(void **state) {
  (void)state;
  int64_t w = 0, dc = 0;
  int64_t cid = to_showdown(&w, &dc, 6, 0);
  bool changed = false;
  int cancelled = 0;
  assert_int_equal(kf_store_campaign_finish(tdb.s, cid, "stopped",
                                            "campaign stopped", &changed,
                                            &cancelled),
                   0);
  assert_true(changed);
  assert_int_equal(cancelled, 1);
  assert_string_equal(state_of(cid),
                      "stopped: campaign stopped [failed: campaign stopped]");
  assert_int_equal(tdb_int("SELECT count(*) FROM showdowns WHERE state ="
                           " 'failed' AND reason = 'campaign stopped'"),
                   1);
  assert_int_equal(step(cid).running, 0);
}

/* A restart in the middle: a new connection, nothing kept in memory, the
 * showdown is found where it was. */
static void resumes_in_showdown(void **state) {
  (void)state;
  int64_t w = 0, dc = 0;
  int64_t cid = to_showdown(&w, &dc, 6, 0);
  kf_store_close(tdb.s);
  tdb.s = tdb_open();
  assert_int_equal(step(cid).running, 1);
  Kernelfleet__ShowdownRequest *rq = NULL;
  kf_lease_grant *g = lease_showdown(w, dc, &rq);
  Kernelfleet__ShowdownTiming tm, *tp = &tm;
  kernelfleet__showdown_timing__init(&tm);
  tm.candidate_id = rq->entries[0]->candidate_id;
  tm.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  tm.time_ns_median = 800;
  tm.repetitions = 50;
  Kernelfleet__ShowdownResult res = KERNELFLEET__SHOWDOWN_RESULT__INIT;
  res.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  res.ref_time_ns_median = 2000;
  res.n_entries = 1;
  res.entries = &tp;
  answer(w, &g->tasks[0], KF_OUTCOME_OK, &res);
  kf_store_grant_free(g);
  kf_store_close(tdb.s);
  tdb.s = tdb_open();
  assert_int_equal(step(cid).finished, 1);
  assert_int_equal(tdb_int("SELECT best_candidate_id FROM campaigns"),
                   tm.candidate_id);
  kf_campaign_counts n;
  assert_int_equal(kf_store_campaign_counts(tdb.s, cid, &n), 0);
  assert_true(n.best_speedup == 2.5 && n.best_time_ns == 800);
  assert_true(n.best_showdown);
  kernelfleet__showdown_request__free_unpacked(rq, NULL);
}

/* Worker w last seen `ago` (an SQL interval) ago. */
static void seen(int64_t w, const char *ago) {
  char sql[160];
  snprintf(sql, sizeof sql, "UPDATE workers SET last_seen = now() -"
           " interval '%s' WHERE id = %lld", ago, (long long)w);
  tdb_sql(sql);
}

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("showdown");
}

/* With a second alive worker of the class, the showdown goes to the other
 * worker than the one that measured the search's best, and is refused to
 * the first for as long as the second is seen, up to avoid_until; with the
 * second gone, or avoid_until past, the first takes it. */
/* Two workers registered with one credential are one party (0014): the
 * showdown that avoids the worker whose best it re-times avoids its twin
 * too, and goes to a worker of another credential, alone or in a batch
 * with the twin.  Red team 2026-12-01-s3b: a worker credential started
 * twice confirmed its own forged best (9.06x stored as 4.08x "from the
 * final showdown", honest 0.71-1.36x). */
static void showdown_avoids_the_credential(void **state) {
  (void)state;
  int64_t w = 0, dc = 0;
  int64_t cid = to_showdown(&w, &dc, 6, 3);
  char sql[320];
  snprintf(sql, sizeof sql, "UPDATE tasks SET state = 'failed' WHERE kind ="
           " 'showdown' AND campaign_id = %lld", (long long)cid);
  tdb_sql(sql);
  tdb_sql("INSERT INTO api_tokens (id, role, name, hash) VALUES"
          " (41, 'worker', 'hostile', repeat('a', 64)),"
          " (42, 'worker', 'honest', repeat('b', 64))");
  int64_t twin = worker_env("twin", 2, "build-1", eval_showdown_kinds, &dc);
  int64_t other = worker_env("other", 2, "build-1", eval_showdown_kinds, &dc);
  snprintf(sql, sizeof sql, "UPDATE workers SET token_id = CASE id WHEN"
           " %lld THEN 42 ELSE 41 END WHERE id IN (%lld, %lld, %lld)",
           (long long)other, (long long)w, (long long)twin, (long long)other);
  tdb_sql(sql);
  int64_t c2 = campaign_with(templates, 6, 0, 5, &(tcamp){.fresh = true});
  assert_string_equal(run_to_end(c2, w, dc, time_of, 20),
                      "showdown: budget_evals reached");
  seen(other, "0 s");
  /* the twin is refused it, alone... */
  kf_lease_grant *g = tdb_lease1(tdb.s, twin, dc, showdown_kinds, 8);
  assert_int_equal(g->n, 0);
  kf_store_grant_free(g);
  /* ...and in a batch with the other party's worker, whose slot gets it */
  kf_lease_req rq[2] = {
      {.worker_id = twin, .device_class_id = dc, .task_kinds = showdown_kinds,
       .n_task_kinds = 1, .max_tasks = 2},
      {.worker_id = other, .device_class_id = dc,
       .task_kinds = showdown_kinds, .n_task_kinds = 1, .max_tasks = 1},
  };
  if (kf_store_lease(tdb.s, rq, 2, 30000, &g))
    fail_msg("lease: %s", kf_store_errmsg(tdb.s));
  assert_int_equal(g->n, 1);
  assert_string_equal(g->avoided_err, "");
  assert_int_equal(g->tasks[0].req_index, 1);
  assert_int_equal(tdb_int("SELECT lease_owner FROM tasks WHERE id = %lld",
                           (long long)g->tasks[0].task_id),
                   other);
  const long long tid = (long long)g->tasks[0].task_id;
  kf_store_grant_free(g);
  /* the other party gone: the avoidance lapses, the twin may take it */
  snprintf(sql, sizeof sql, "UPDATE tasks SET state = 'queued',"
           " lease_owner = NULL, lease_expires = NULL WHERE id = %lld", tid);
  tdb_sql(sql);
  seen(other, "1 hour");
  g = tdb_lease1(tdb.s, twin, dc, showdown_kinds, 8);
  assert_int_equal(g->n, 1);
  kf_store_grant_free(g);
}

static void showdown_on_second_worker(void **state) {
  (void)state;
  int64_t w = 0, dc = 0;
  int64_t cid = to_showdown(&w, &dc, 6, 3);
  /* to_showdown's worker alone: nothing avoided */
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE kind ="
                           " 'showdown' AND avoid_worker IS NULL"), 1);
  (void)cid;
  int64_t w2 = worker_env("w2", 2, "build-1", eval_showdown_kinds, &dc);
  int64_t c2 = campaign_with(templates, 6, 0, 5, &(tcamp){.fresh = true});
  assert_string_equal(run_to_end(c2, w, dc, time_of, 20),
                      "showdown: budget_evals reached");
  int64_t best = tdb_int("SELECT best_candidate_id FROM campaigns WHERE"
                         " id = %lld", (long long)c2);
  assert_int_equal(tdb_int("SELECT worker_id FROM evaluations WHERE"
                           " candidate_id = %lld", (long long)best), w);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE kind ="
                           " 'showdown' AND campaign_id = %lld AND"
                           " avoid_worker = %lld AND avoid_until > now()",
                           (long long)c2, (long long)w),
                   1);
  /* The first campaign's showdown (no avoidance) is not in the way. */
  char sql[256];
  snprintf(sql, sizeof sql, "UPDATE tasks SET state = 'failed' WHERE kind ="
           " 'showdown' AND campaign_id = %lld", (long long)cid);
  tdb_sql(sql);
  /* The worker that measured the best is refused it... */
  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, showdown_kinds, 8);
  assert_int_equal(g->n, 0);
  kf_store_grant_free(g);
  /* ...and the second worker gets it. */
  Kernelfleet__ShowdownRequest *rq = NULL;
  g = lease_showdown(w2, dc, &rq);
  assert_int_equal(rq->entries[0]->candidate_id, best);
  assert_int_equal(tdb_int("SELECT lease_owner FROM tasks WHERE id = %lld",
                           (long long)g->tasks[0].task_id),
                   w2);
  kernelfleet__showdown_request__free_unpacked(rq, NULL);
  const long long tid = (long long)g->tasks[0].task_id;
  kf_store_grant_free(g);
  /* Requeued (the second worker lost it) with the avoidance still running
   * and the second worker alive (busy: it heartbeats): still refused to
   * the first. */
  snprintf(sql, sizeof sql, "UPDATE tasks SET state = 'queued',"
           " lease_owner = NULL, lease_expires = NULL,"
           " avoid_until = now() + interval '1 hour' WHERE id = %lld", tid);
  tdb_sql(sql);
  seen(w2, "0 s");
  g = tdb_lease1(tdb.s, w, dc, showdown_kinds, 8);
  assert_int_equal(g->n, 0);
  kf_store_grant_free(g);
  /* Both workers polling in one batch, the first one's slots first: the
   * task goes to the second worker's slot, not to nobody. */
  {
    kf_lease_req rq[2] = {
        {.worker_id = w, .device_class_id = dc, .task_kinds = showdown_kinds,
         .n_task_kinds = 1, .max_tasks = 2},
        {.worker_id = w2, .device_class_id = dc, .task_kinds = showdown_kinds,
         .n_task_kinds = 1, .max_tasks = 1},
    };
    if (kf_store_lease(tdb.s, rq, 2, 30000, &g))
      fail_msg("lease: %s", kf_store_errmsg(tdb.s));
    assert_int_equal(g->n, 1);
    assert_string_equal(g->avoided_err, "");
    assert_int_equal(g->tasks[0].task_id, tid);
    assert_int_equal(g->tasks[0].req_index, 1);
    assert_int_equal(tdb_int("SELECT lease_owner FROM tasks WHERE id = %lld",
                             tid),
                     w2);
    kf_store_grant_free(g);
  }
  /* Only the first worker's slots in the batch: still refused. */
  snprintf(sql, sizeof sql, "UPDATE tasks SET state = 'queued',"
           " lease_owner = NULL, lease_expires = NULL WHERE id = %lld", tid);
  tdb_sql(sql);
  {
    kf_lease_req rq[2] = {
        {.worker_id = w, .device_class_id = dc, .task_kinds = showdown_kinds,
         .n_task_kinds = 1, .max_tasks = 2},
        {.worker_id = w, .device_class_id = dc, .task_kinds = showdown_kinds,
         .n_task_kinds = 1, .max_tasks = 1},
    };
    if (kf_store_lease(tdb.s, rq, 2, 30000, &g))
      fail_msg("lease: %s", kf_store_errmsg(tdb.s));
    assert_int_equal(g->n, 0);
    kf_store_grant_free(g);
  }
  /* The second worker gone (not seen within a lease's length): the
   * avoidance stops, avoid_until or not; the first worker takes it. */
  seen(w2, "1 hour");
  g = lease_showdown(w, dc, &rq);
  kernelfleet__showdown_request__free_unpacked(rq, NULL);
  kf_store_grant_free(g);
  /* Requeued once more, the second worker back, the avoidance's time
   * over: the first worker may take it. */
  snprintf(sql, sizeof sql, "UPDATE tasks SET state = 'queued',"
           " lease_owner = NULL, lease_expires = NULL,"
           " avoid_until = now() - interval '1 s' WHERE id = %lld", tid);
  tdb_sql(sql);
  seen(w2, "0 s");
  g = lease_showdown(w, dc, &rq);
  kernelfleet__showdown_request__free_unpacked(rq, NULL);
  kf_store_grant_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(showdown_decides_best, tdb_setup),
      cmocka_unit_test_setup(showdown_bad_text, tdb_setup),
      cmocka_unit_test_setup(showdown_failure_falls_back, tdb_setup),
      cmocka_unit_test_setup(showdown_task_failures, tdb_setup),
      cmocka_unit_test_setup(showdown_without_worker, tdb_setup),
      cmocka_unit_test_setup(all_fail_falls_back_to_the_rest, tdb_setup),
      cmocka_unit_test_setup(infra_error_keeps_place, tdb_setup),
      cmocka_unit_test_setup(showdown_deadline, tdb_setup),
      cmocka_unit_test_setup(stop_during_showdown, tdb_setup),
      cmocka_unit_test_setup(resumes_in_showdown, tdb_setup),
      cmocka_unit_test_setup(showdown_on_second_worker, tdb_setup),
      cmocka_unit_test_setup(showdown_avoids_the_credential, tdb_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
