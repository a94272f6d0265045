/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-proposer.c -- the search and proposers' templates
 * (coordinator/search.c, stepped without a server; the store API as the
 * worker): a proposal that declared a knob space (kf_store_propose_template)
 * is left out of random draws until it evaluated ok, then its space is
 * explored at once and it breeds like a hand-written template; one that
 * failed is never drawn; and islands: a class's best genome migrates to a
 * class that has not measured it.
 *
 * The "worker" is test-campaign-fixture.h's.
 */
#include "test-store-fixture.h"

#include "test-campaign-fixture.h"

#define SPACE6                                                               \
  "[{\"name\": \"M\", \"values\": [\"1\", \"2\", \"3\", \"4\", \"5\", \"6\"]}]"

static int64_t propose_tmpl(int64_t cid, const char *name, const char *src) {
  int64_t id = 0;
  bool dup = true;
  char got[64];
  if (kf_store_propose_template(tdb.s, cid, name, SPACE6, "{\"M\": \"1\"}",
                                "-DM=1", src, "llm:test", &id, &dup, got))
    fail_msg("propose_template: %s", kf_store_errmsg(tdb.s));
  assert_false(dup);
  assert_string_equal(got, name);
  return id;
}

/* The proposer's structure is the fastest; the larger M, the faster. */
static double time_mine(const Kernelfleet__EvalRequest *rq) {
  if (!strstr(rq->source, "mine")) return time_of(rq);
  for (size_t i = 0; i < rq->n_knobs; i++)
    if (!strcmp(rq->knobs[i]->name, "M"))
      return 300 - 20 * atof(rq->knobs[i]->value);
  return 300;
}

static int64_t evolved(int64_t cid, const char *tmpl) {
  return tdb_int("SELECT count(*) FROM candidates WHERE campaign_id = %lld"
                 " AND template_name = '%s' AND proposer = 'evolution'",
                 (long long)cid, tmpl);
}

static void proposal_template_explored_and_bred(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t cid = campaign(templates, 30, 0, 5);
  int64_t pid = propose_tmpl(cid, "mine", "int mine; /* M */");
  /* The template is the campaign's, with its origin. */
  assert_string_equal(
      tdb_text("SELECT t->>'origin' || ' ' || (t->>'proposer') FROM"
               " campaigns, jsonb_array_elements(templates) t WHERE id ="
               " %lld AND t->>'name' = 'mine'", (long long)cid),
      "proposer llm:test");
  step(cid);
  /* Planned first; nothing else of its space before it is measured. */
  assert_int_equal(tdb_int("SELECT count(*) FROM eval_keys WHERE"
                           " candidate_id = %lld AND task_id IS NOT NULL",
                           (long long)pid), 1);
  assert_int_equal(evolved(cid, "mine"), 0);
  run_round(w, dc, time_mine, false);
  /* Evaluated ok: the next step explores it first, up to EXPLORE (4)
   * keys (the step's fourth plan is a draw, which may pick it too). */
  step(cid);
  int64_t n = evolved(cid, "mine");
  assert_true(n >= 3 && n <= 4);
  assert_int_equal(tdb_int("SELECT count(DISTINCT flags) FROM candidates"
                           " WHERE campaign_id = %lld AND template_name ="
                           " 'mine'", (long long)cid), n + 1);
  assert_int_equal(tdb_int("SELECT count(*) FROM candidates WHERE"
                           " campaign_id = %lld AND template_name = 'mine'"
                           " AND generation = 1 AND parents = '{}'",
                           (long long)cid) >= 3, 1);
  run_round(w, dc, time_mine, false);
  for (int i = 0; i < 30; i++) {
    step(cid);
    if (strcmp(tdb_text("SELECT state FROM campaigns WHERE id = %lld",
                        (long long)cid), "running"))
      break;
    run_round(w, dc, time_mine, false);
  }
  /* It bred: children of the proposer's template with parents, and the
   * best is its best point. */
  assert_true(tdb_int("SELECT count(*) FROM candidates WHERE campaign_id ="
                      " %lld AND template_name = 'mine' AND proposer ="
                      " 'evolution' AND cardinality(parents) > 0",
                      (long long)cid) >= 1);
  assert_string_equal(tdb_text("SELECT k.template_name || ' ' || k.flags"
                               " FROM campaigns c JOIN candidates k ON k.id ="
                               " c.best_candidate_id WHERE c.id = %lld",
                               (long long)cid),
                      "mine -DM=6");
}

static void fail_bad(const Kernelfleet__EvalRequest *rq,
                     Kernelfleet__EvalResult *er) {
  if (strstr(rq->source, "bad")) {
    er->outcome = KERNELFLEET__OUTCOME__OUTCOME_COMPILE_ERROR;
    er->time_ns_median = 0;
  }
}

static void failed_proposal_template_not_drawn(void **state) {
  (void)state;
  int64_t dc = 0;
  int64_t w = eval_worker("w", 2, &dc);
  int64_t cid = campaign(templates, 40, 0, 9);
  int64_t pid = propose_tmpl(cid, "bad", "int bad; /* M */");
  for (int i = 0; i < 40; i++) {
    step(cid);
    if (strcmp(tdb_text("SELECT state FROM campaigns WHERE id = %lld",
                        (long long)cid), "running"))
      break;
    run_round_with(w, dc, time_of, false, fail_bad);
  }
  assert_string_equal(tdb_text("SELECT outcome FROM evaluations WHERE"
                               " candidate_id = %lld", (long long)pid),
                      "compile_error");
  assert_int_equal(evolved(cid, "bad"), 0);
  /* The rest of the space was searched to its end. */
  assert_string_equal(tdb_text("SELECT state || ': ' || stop_reason FROM"
                               " campaigns WHERE id = %lld", (long long)cid),
                      "done: search space exhausted");
}

static void best_migrates_to_another_class(void **state) {
  (void)state;
  int64_t dc1 = 0, dc2 = 0;
  int64_t w1 = eval_worker("w1", 2, &dc1);
  int64_t cid = campaign(templates, 40, 0, 11);
  for (int i = 0; i < 4; i++) {
    step(cid);
    run_round(w1, dc1, time_of, false);
  }
  int64_t best1 = tdb_int("SELECT e.candidate_id FROM evaluations e WHERE"
                          " e.campaign_id = %lld AND e.device_class_id ="
                          " %lld AND e.outcome = 'ok' ORDER BY"
                          " e.time_ns_median, e.id LIMIT 1",
                          (long long)cid, (long long)dc1);
  const char *f = tdb_text("SELECT template_name || ' ' || flags FROM"
                           " candidates WHERE id = %lld", (long long)best1);
  char flags1[256];
  snprintf(flags1, sizeof flags1, "%s", f);
  /* A second class joins: its first plan is class 1's best. */
  kf_device_class other = {.kind = 1, .model = "test-cpu-2", .isa = "x86_64"};
  const char *const kinds[] = {"eval", NULL};
  kf_worker_reg reg = {.name = "w2", .hostname = "h2", .dc = other,
                       .device_json = "{\"copy_gbps\": 10.0}",
                       .task_kinds = kinds, .n_task_kinds = 1, .slots = 2,
                       .harness_build = "build-1", .toolchain = "cc 12",
                       .driver = "", .runtime = "6.1"};
  int64_t w2 = 0;
  if (kf_store_register_worker(tdb.s, &reg, &w2, &dc2))
    fail_msg("register: %s", kf_store_errmsg(tdb.s));
  assert_true(dc2 != dc1);
  step(cid);
  int64_t mig = tdb_int("SELECT count(*) FROM candidates WHERE campaign_id"
                        " = %lld AND device_class_id = %lld AND parents ="
                        " ARRAY[%lld]::bigint[] AND template_name || ' ' ||"
                        " flags = '%s' AND proposer = 'evolution'",
                        (long long)cid, (long long)dc2, (long long)best1,
                        flags1);
  assert_int_equal(mig, 1);
  /* Once measured there it does not migrate again. */
  run_round(w2, dc2, flat_time, false);
  run_round(w1, dc1, time_of, false);
  step(cid);
  assert_int_equal(tdb_int("SELECT count(*) FROM candidates WHERE"
                           " campaign_id = %lld AND device_class_id = %lld"
                           " AND template_name || ' ' || flags = '%s'",
                           (long long)cid, (long long)dc2, flags1), 1);
}

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("proposer");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(proposal_template_explored_and_bred, tdb_setup),
      cmocka_unit_test_setup(failed_proposal_template_not_drawn, tdb_setup),
      cmocka_unit_test_setup(best_migrates_to_another_class, tdb_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
