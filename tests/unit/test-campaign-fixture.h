/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-campaign-fixture.h -- campaigns driven by hand, for the
 * store tests of the search (test-store-campaign.c, -identity.c,
 * -showdown.c).  Included after test-store-fixture.h; a header, so the
 * test glob does not build it on its own.
 *
 * A "worker" here is the store API used by hand: register with an
 * environment (harness build, toolchain, driver, runtime), lease the eval
 * tasks, decode their EvalRequest, answer with an EvalResult whose time is
 * a function of the knobs, turned into the evaluation row the way the
 * coordinator does (coordinator/coord_db.c decode_eval).
 */
#ifndef KF_TEST_CAMPAIGN_FIXTURE_H
#define KF_TEST_CAMPAIGN_FIXTURE_H

#include "kernelfleet.pb-c.h"
#include "outcome.h"
#include "search.h"

static const char *const eval_kinds[] = {"eval", NULL};
static const char *const eval_showdown_kinds[] = {"eval", "showdown", NULL};
static const char *const showdown_kinds[] = {"showdown", NULL};

/* Two templates: "t" with 2 x 3 x 2 = 12 genomes, "u" with 2. */
static const char *templates =
    "[{\"name\": \"t\", \"file\": \"t.c\", \"source\": \"int t;\","
    " \"knobs\": [{\"name\": \"A\", \"values\": [\"1\", \"2\"]},"
    " {\"name\": \"B\", \"values\": [\"x\", \"y\", \"z\"]},"
    " {\"name\": \"C\", \"values\": [\"0\", \"1\"]}]},"
    " {\"name\": \"u\", \"file\": \"u.c\", \"source\": \"int u;\","
    " \"knobs\": [{\"name\": \"K\", \"values\": [\"4\", \"8\"]}]}]";

/* Canonical spec hashes (any 64 hex digits do for the store). */
#define SPEC_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SPEC_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static const kf_search_opts opts = {.alive_ms = 60000, .per_slot = 2,
                                    .timeout_ms = 5000, .max_attempts = 2};

/* What a test may vary about a campaign; zero fields: the defaults. */
typedef struct {
  const char *spec_sha256; /* SPEC_A */
  const char *reference;   /* "int ref;" */
  const char *language;    /* "c" */
  bool fresh;
  uint32_t showdown_top;   /* 0: 5 */
  const char *profile;     /* NULL: the default policy */
} tcamp;

TDB_FN int64_t campaign_with(const char *tmpl, uint32_t budget,
                             uint32_t plateau, uint64_t seed,
                             const tcamp *o) {
  tcamp none = {0};
  if (!o) o = &none;
  kf_campaign_new c = {
      .name = "c", .problem = "p",
      .language = o->language ? o->language : "c", .backend = 1,
      .spec_json = "{\"name\": \"p\"}", .spec_json_len = 13,
      .reference_source = o->reference ? o->reference : "int ref;",
      .templates_json = tmpl, .budget_evals = budget, .budget_seconds = 600,
      .population = 4, .plateau_evals = plateau, .target_roofline = 0.95,
      .search_seed = seed, .floor_bytes = 1000,
      .spec_sha256 = o->spec_sha256 ? o->spec_sha256 : SPEC_A,
      .fresh = o->fresh, .showdown_top = o->showdown_top,
      .profile = o->profile};
  int64_t id = 0;
  if (kf_store_campaign_create(tdb.s, &c, &id))
    fail_msg("campaign_create: %s", kf_store_errmsg(tdb.s));
  return id;
}

TDB_FN int64_t campaign(const char *tmpl, uint32_t budget, uint32_t plateau,
                        uint64_t seed) {
  return campaign_with(tmpl, budget, plateau, seed, NULL);
}

/* A worker on tdb_cpu with `slots` slots, a measured copy bandwidth, the
 * environment of harness build `build`, running `kinds`. */
TDB_FN int64_t worker_env(const char *name, uint32_t slots, const char *build,
                          const char *const *kinds, int64_t *dc) {
  size_t nk = 0;
  while (kinds[nk]) nk++;
  kf_worker_reg reg = {.name = name, .hostname = "h", .dc = tdb_cpu,
                       .device_json = "{\"copy_gbps\": 10.0}",
                       .task_kinds = kinds, .n_task_kinds = nk,
                       .slots = slots, .harness_build = build,
                       .toolchain = "cc 12", .driver = "", .runtime = "6.1"};
  int64_t wid = 0;
  if (kf_store_register_worker(tdb.s, &reg, &wid, dc))
    fail_msg("register: %s", kf_store_errmsg(tdb.s));
  return wid;
}

/* An eval worker of the default environment. */
TDB_FN int64_t eval_worker(const char *name, uint32_t slots, int64_t *dc) {
  return worker_env(name, slots, "build-1", eval_kinds, dc);
}

TDB_FN kf_search_stats step(int64_t cid) {
  kf_search_stats st;
  int rc = kf_search_step(tdb.s, cid, &opts, &st);
  if (rc) fail_msg("search step: %s", kf_store_errmsg(tdb.s));
  return st;
}

/* Time of a candidate: A=2 is faster, B=z faster still; u is slow. */
TDB_FN double time_of(const Kernelfleet__EvalRequest *rq) {
  double t = 1000;
  for (size_t i = 0; i < rq->n_knobs; i++) {
    const Kernelfleet__Knob *k = rq->knobs[i];
    if (!strcmp(k->name, "A") && !strcmp(k->value, "2")) t -= 300;
    if (!strcmp(k->name, "B") && !strcmp(k->value, "z")) t -= 200;
    if (!strcmp(k->name, "K")) t += 500;
  }
  return t;
}

typedef double (*time_fn)(const Kernelfleet__EvalRequest *rq);

TDB_FN double flat_time(const Kernelfleet__EvalRequest *rq) {
  (void)rq;
  return 1000;
}

/* Lets a test change the EvalResult a round reports (outcome, harness
 * build, timing_dependent...) before it is packed. */
typedef void (*result_fn)(const Kernelfleet__EvalRequest *rq,
                          Kernelfleet__EvalResult *er);

/* Leases every queued eval task for worker w and reports each as ok with
 * time fn(request), 100 repetitions, then edit(request, result) when
 * edit is not NULL; returns how many.  twice: report each twice. */
TDB_FN size_t run_round_with(int64_t w, int64_t dc, time_fn fn, bool twice,
                             result_fn edit) {
  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, eval_kinds, 256);
  size_t n = g->n;
  for (size_t i = 0; i < g->n; i++) {
    const kf_leased_task *t = &g->tasks[i];
    Kernelfleet__EvalRequest *rq = kernelfleet__eval_request__unpack(
        NULL, t->payload_len, t->payload);
    assert_non_null(rq);
    assert_true(rq->candidate_id > 0);
    assert_string_equal(rq->problem, "p");
    Kernelfleet__EvalResult er = KERNELFLEET__EVAL_RESULT__INIT;
    er.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
    er.time_ns_median = fn(rq);
    er.time_ns_spread = 0.01;
    er.ref_time_ns_median = 2000;
    er.ref_time_ns_spread = 0.01;
    er.repetitions = 100;
    if (edit) edit(rq, &er);
    uint8_t buf[512];
    size_t len = kernelfleet__eval_result__pack(&er, buf);
    kf_eval_row row = {.time_ns_median = er.time_ns_median,
                       .time_ns_spread = er.time_ns_spread,
                       .ref_time_ns_median = er.ref_time_ns_median,
                       .ref_time_ns_spread = er.ref_time_ns_spread,
                       .compile_time_ns_median = er.compile_time_ns_median,
                       .max_autotune_time_ns_median =
                           er.max_autotune_time_ns_median,
                       .repetitions = er.repetitions,
                       .timing_dependent = er.timing_dependent,
                       .harness_build = er.harness_build,
                       .toolchain = er.toolchain,
                       .result = buf, .result_len = len};
    kf_report rep = {.worker_id = w, .task_id = t->task_id,
                     .attempt = t->attempt, .outcome = (int)er.outcome,
                     .stage = "time", .output = buf, .output_len = len,
                     .eval = &row};
    kf_verdict v;
    for (int k = 0; k < (twice ? 2 : 1); k++) {
      if (kf_store_report(tdb.s, &rep, 1, &v))
        fail_msg("report: %s", kf_store_errmsg(tdb.s));
      assert_int_equal(v, k ? KF_VERDICT_DUPLICATE : KF_VERDICT_ACCEPTED);
    }
    kernelfleet__eval_request__free_unpacked(rq, NULL);
  }
  kf_store_grant_free(g);
  return n;
}

TDB_FN size_t run_round(int64_t w, int64_t dc, time_fn fn, bool twice) {
  return run_round_with(w, dc, fn, twice, NULL);
}

/* Steps and runs rounds (each result edited by edit, when not NULL) until
 * the campaign leaves "running"; returns "state: stop_reason". */
TDB_FN const char *run_to_end_with(int64_t cid, int64_t w, int64_t dc,
                                   time_fn fn, int max_rounds,
                                   result_fn edit) {
  for (int i = 0; i < max_rounds; i++) {
    step(cid);
    if (strcmp(tdb_text("SELECT state FROM campaigns WHERE id = %lld",
                        (long long)cid),
               "running"))
      return tdb_text("SELECT state || ': ' || stop_reason FROM campaigns"
                      " WHERE id = %lld",
                      (long long)cid);
    run_round_with(w, dc, fn, false, edit);
  }
  fail_msg("campaign %lld still running after %d rounds", (long long)cid,
           max_rounds);
  return NULL;
}

TDB_FN const char *run_to_end(int64_t cid, int64_t w, int64_t dc, time_fn fn,
                              int max_rounds) {
  return run_to_end_with(cid, w, dc, fn, max_rounds, NULL);
}

/* Evaluations of campaign cid that reuse another campaign's. */
TDB_FN int64_t reused_in(int64_t cid) {
  return tdb_int("SELECT count(*) FROM evaluations WHERE campaign_id = %lld"
                 " AND reused_from IS NOT NULL",
                 (long long)cid);
}

/* Keys measured by more than one task, across campaigns: none while the
 * campaigns are of one problem, not fresh, on one environment. */
TDB_FN int64_t no_repeats(void) {
  return tdb_int("SELECT count(*) FROM (SELECT 1 FROM eval_keys"
                 " WHERE task_id IS NOT NULL GROUP BY source_sha256, flags,"
                 " device_class_id HAVING count(*) > 1) x");
}

#endif
