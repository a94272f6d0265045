/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-classes.c -- per-class campaigns and porting
 * (migration 0009, coordinator/search.c, db/store_fleet.c) against a real
 * PostgreSQL: two device classes ("cls-a", "cls-b"), workers registered on
 * each, the search stepped by hand.  A class stops on its own rule -- the
 * roofline target, its budget of evaluations, its plateau -- while the
 * other keeps searching; each class has its own best; the campaign is
 * done when every class is; a port campaign evaluates the source's elites
 * on its class first.
 */
#include "test-store-fixture.h"
#include "test-campaign-fixture.h"

static const kf_device_class cls_a = {.kind = 1, .model = "cls-a",
                                      .isa = "x86-64-v3"};
static const kf_device_class cls_b = {.kind = 1, .model = "cls-b",
                                      .isa = "x86-64-v3"};

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("classes");
}

/* An eval worker on dc (copy 10 GB/s: the fixture's floor of 1000 bytes
 * takes 100 ns). */
static int64_t class_worker(const char *name, const kf_device_class *dc,
                            const char *const *kinds, int64_t *dc_id) {
  size_t nk = 0;
  while (kinds[nk]) nk++;
  kf_worker_reg reg = {.name = name, .hostname = "h", .dc = *dc,
                       .device_json = "{\"copy_gbps\": 10.0}",
                       .task_kinds = kinds, .n_task_kinds = nk, .slots = 2,
                       .harness_build = "build-1", .toolchain = "cc 12",
                       .driver = "", .runtime = "6.1"};
  int64_t wid = 0;
  if (kf_store_register_worker(tdb.s, &reg, &wid, dc_id))
    fail_msg("register: %s", kf_store_errmsg(tdb.s));
  return wid;
}

static const char *class_state(int64_t cid, int64_t dc) {
  return tdb_text("SELECT state || ': ' || COALESCE(stop_reason, '')"
                  " FROM campaign_classes WHERE campaign_id = %lld"
                  " AND device_class_id = %lld", (long long)cid,
                  (long long)dc);
}

static const char *camp_state(int64_t cid) {
  return tdb_text("SELECT state || ': ' || COALESCE(stop_reason, '')"
                  " FROM campaigns WHERE id = %lld", (long long)cid);
}

static int64_t class_evals(int64_t cid, int64_t dc) {
  return tdb_int("SELECT count(*) FROM evaluations WHERE campaign_id = %lld"
                 " AND device_class_id = %lld", (long long)cid,
                 (long long)dc);
}

static int64_t queued_on(int64_t cid, int64_t dc) {
  return tdb_int("SELECT count(*) FROM tasks WHERE campaign_id = %lld"
                 " AND device_class_id = %lld AND kind = 'eval'"
                 " AND state = 'queued'", (long long)cid, (long long)dc);
}

/* 50 ns: twice the floor's speed, roofline fraction 2 >= 0.95. */
static double at_roofline(const Kernelfleet__EvalRequest *rq) {
  (void)rq;
  return 50;
}

/* The mirror of time_of: A=1 and B=x are fast on class b. */
static double time_b(const Kernelfleet__EvalRequest *rq) {
  double t = 1000;
  for (size_t i = 0; i < rq->n_knobs; i++) {
    const Kernelfleet__Knob *k = rq->knobs[i];
    if (!strcmp(k->name, "A") && !strcmp(k->value, "1")) t -= 300;
    if (!strcmp(k->name, "B") && !strcmp(k->value, "x")) t -= 200;
    if (!strcmp(k->name, "K")) t += 500;
  }
  return t;
}

/* Class a reaches the roofline target in its first round and ends; class
 * b (at 10% of its roofline) keeps searching, and the campaign with it,
 * until b's own budget ends it.  The old rule (the max over classes)
 * would have ended both at once. */
static void roofline_stops_one_class(void **state) {
  (void)state;
  int64_t da = 0, db = 0;
  int64_t wa = class_worker("wa", &cls_a, eval_kinds, &da);
  int64_t wb = class_worker("wb", &cls_b, eval_kinds, &db);
  assert_true(da != db);
  int64_t cid = campaign(templates, 10, 0, 7);
  step(cid);
  assert_true(queued_on(cid, da) > 0);
  assert_true(queued_on(cid, db) > 0);
  run_round(wa, da, at_roofline, false);
  run_round(wb, db, time_of, false);
  step(cid);
  assert_string_equal(class_state(cid, da),
                      "done: target roofline reached");
  assert_string_equal(class_state(cid, db), "running: ");
  assert_string_equal(camp_state(cid), "running: ");
  /* a's queued work was cancelled; b was given more. */
  assert_int_equal(queued_on(cid, da), 0);
  assert_true(queued_on(cid, db) > 0);
  /* b runs to its own budget; a gets nothing new meanwhile. */
  int64_t a_evals = class_evals(cid, da);
  for (int i = 0; i < 20 && !strcmp(camp_state(cid), "running: "); i++) {
    run_round(wb, db, time_of, false);
    kf_lease_grant *g = tdb_lease1(tdb.s, wa, da, eval_kinds, 8);
    assert_int_equal(g->n, 0);
    kf_store_grant_free(g);
    step(cid);
  }
  assert_string_equal(class_state(cid, db), "done: budget_evals reached");
  assert_int_equal(class_evals(cid, db), 10);
  assert_int_equal(class_evals(cid, da), a_evals);
  assert_string_equal(camp_state(cid),
                      "done: per class: cls-a: target roofline reached;"
                      " cls-b: budget_evals reached");
}

/* budget_evals is each class's: with both classes served, each gets its
 * full budget, and the campaign ends only when the slower class used its
 * own. */
static void budget_per_class(void **state) {
  (void)state;
  int64_t da = 0, db = 0;
  int64_t wa = class_worker("wa", &cls_a, eval_kinds, &da);
  int64_t wb = class_worker("wb", &cls_b, eval_kinds, &db);
  int64_t cid = campaign(templates, 6, 0, 3);
  /* Only a is served at first: it uses its budget and stops alone. */
  for (int i = 0; i < 10 && strncmp(class_state(cid, da), "done", 4); i++) {
    step(cid);
    run_round(wa, da, time_of, false);
  }
  step(cid);
  assert_string_equal(class_state(cid, da), "done: budget_evals reached");
  assert_string_equal(class_state(cid, db), "running: ");
  assert_int_equal(class_evals(cid, da), 6);
  assert_int_equal(class_evals(cid, db), 0);
  assert_string_equal(camp_state(cid), "running: ");
  for (int i = 0; i < 10 && !strncmp(camp_state(cid), "running", 7); i++) {
    run_round(wb, db, time_b, false);
    step(cid);
  }
  assert_string_equal(camp_state(cid), "done: budget_evals reached");
  assert_int_equal(class_evals(cid, db), 6);
}

/* The plateau counts a class's own evaluations: a class whose times are
 * all equal plateaus, while the other one (not yet served) does not. */
static void plateau_per_class(void **state) {
  (void)state;
  int64_t da = 0, db = 0;
  int64_t wa = class_worker("wa", &cls_a, eval_kinds, &da);
  (void)class_worker("wb", &cls_b, eval_kinds, &db);
  int64_t cid = campaign(templates, 100, 3, 5);
  for (int i = 0; i < 10 && strncmp(class_state(cid, da), "done", 4); i++) {
    step(cid);
    run_round(wa, da, flat_time, false);
  }
  step(cid);
  assert_string_equal(class_state(cid, da), "done: plateau");
  assert_string_equal(class_state(cid, db), "running: ");
  assert_string_equal(camp_state(cid), "running: ");
  assert_true(queued_on(cid, db) > 0);
}

/* budget_seconds runs from when a class joined: a class that joined an
 * hour ago is out of time, one that joined now is not. */
static void wall_clock_per_class(void **state) {
  (void)state;
  int64_t da = 0, db = 0;
  int64_t wa = class_worker("wa", &cls_a, eval_kinds, &da);
  (void)class_worker("wb", &cls_b, eval_kinds, &db);
  int64_t cid = campaign(templates, 100, 0, 23);
  step(cid);
  run_round(wa, da, time_of, false);
  tdb_sql("UPDATE campaign_classes SET started_at = now() - interval"
          " '1 hour' WHERE device_class_id = (SELECT id FROM device_classes"
          " WHERE model = 'cls-a')");
  step(cid);
  assert_string_equal(class_state(cid, da), "done: budget_seconds elapsed");
  assert_string_equal(class_state(cid, db), "running: ");
  assert_string_equal(camp_state(cid), "running: ");
  assert_true(queued_on(cid, db) > 0);
  assert_int_equal(queued_on(cid, da), 0);
}

/* Each class has its own best, GetBest's ranking per class names it, and
 * the campaign's overall best is the highest speedup of the two. */
static void best_per_class(void **state) {
  (void)state;
  int64_t da = 0, db = 0;
  int64_t wa = class_worker("wa", &cls_a, eval_kinds, &da);
  int64_t wb = class_worker("wb", &cls_b, eval_kinds, &db);
  int64_t cid = campaign(templates, 14, 0, 11);
  for (int i = 0; i < 20 && !strncmp(camp_state(cid), "running", 7); i++) {
    step(cid);
    run_round(wa, da, time_of, false);
    run_round(wb, db, time_b, false);
  }
  step(cid);
  assert_string_equal(camp_state(cid), "done: budget_evals reached");
  kf_cand_list *ba = NULL, *bb = NULL, *all = NULL;
  assert_int_equal(kf_store_best_class(tdb.s, cid, da, &ba), 0);
  assert_int_equal(kf_store_best_class(tdb.s, cid, db, &bb), 0);
  assert_int_equal(kf_store_best(tdb.s, cid, &all), 0);
  assert_string_equal(ba->v[0].dc.model, "cls-a");
  assert_string_equal(bb->v[0].dc.model, "cls-b");
  assert_non_null(ba->v[0].source);
  /* a's best has A=2 (fast on a), b's has A=1 (fast on b). */
  assert_non_null(strstr(ba->v[0].knobs_json, "\"A\": \"2\""));
  assert_non_null(strstr(bb->v[0].knobs_json, "\"A\": \"1\""));
  /* The class rows agree with the per-class ranking. */
  assert_int_equal(tdb_int("SELECT best_candidate_id FROM campaign_classes"
                           " WHERE campaign_id = %lld AND device_class_id ="
                           " %lld", (long long)cid, (long long)da),
                   ba->v[0].candidate_id);
  assert_int_equal(tdb_int("SELECT best_candidate_id FROM campaign_classes"
                           " WHERE campaign_id = %lld AND device_class_id ="
                           " %lld", (long long)cid, (long long)db),
                   bb->v[0].candidate_id);
  /* Overall: the higher speedup of the two. */
  double hi = ba->v[0].speedup > bb->v[0].speedup ? ba->v[0].speedup
                                                  : bb->v[0].speedup;
  assert_true(all->v[0].speedup == hi);
  /* A class with no ok evaluation has no best: KF_ENOTFOUND. */
  kf_cand_list *none = NULL;
  int64_t dz = 0;
  kf_device_class z = {.kind = 1, .model = "cls-z", .isa = "x86-64-v3"};
  (void)class_worker("wz", &z, eval_kinds, &dz);
  assert_int_equal(kf_store_best_class(tdb.s, cid, dz, &none), KF_ENOTFOUND);
  kf_store_list_free(ba);
  kf_store_list_free(bb);
  kf_store_list_free(all);
}

/* Per-class showdowns: class a stops first and its showdown task is
 * created while b keeps searching; the campaign enters its showdown only
 * when b stopped too. */
static void showdown_per_class(void **state) {
  (void)state;
  int64_t da = 0, db = 0;
  int64_t wa = class_worker("wa", &cls_a, eval_showdown_kinds, &da);
  int64_t wb = class_worker("wb", &cls_b, eval_showdown_kinds, &db);
  int64_t cid = campaign(templates, 8, 0, 13);
  step(cid);
  run_round(wa, da, at_roofline, false);
  step(cid);
  assert_string_equal(class_state(cid, da),
                      "showdown: target roofline reached");
  assert_string_equal(camp_state(cid), "running: ");
  assert_int_equal(tdb_int("SELECT count(*) FROM showdowns WHERE"
                           " campaign_id = %lld AND device_class_id = %lld",
                           (long long)cid, (long long)da), 1);
  assert_int_equal(tdb_int("SELECT count(*) FROM showdowns WHERE"
                           " campaign_id = %lld AND device_class_id = %lld",
                           (long long)cid, (long long)db), 0);
  for (int i = 0; i < 20 && strncmp(class_state(cid, db), "showdown", 8);
       i++) {
    run_round(wb, db, time_of, false);
    step(cid);
  }
  assert_string_equal(class_state(cid, db), "showdown: budget_evals reached");
  assert_string_equal(camp_state(cid),
                      "showdown: per class: cls-a: target roofline reached;"
                      " cls-b: budget_evals reached");
  assert_int_equal(tdb_int("SELECT count(*) FROM showdowns WHERE"
                           " campaign_id = %lld", (long long)cid), 2);
}

/* 125 ns a call on class b: 16x the fixture's 2000 ns reference, at 0.8
 * of the roofline (no target stop). */
static double fast_b(const Kernelfleet__EvalRequest *rq) {
  (void)rq;
  return 125;
}

/* Leases dc's showdown task as w and answers every entry ok at the
 * speedup of a time of `t` ns (the reference 2000 ns); returns the first
 * entry's candidate. */
static int64_t answer_showdown(int64_t w, int64_t dc, double t) {
  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, showdown_kinds, 8);
  assert_int_equal(g->n, 1);
  const kf_leased_task *lt = &g->tasks[0];
  Kernelfleet__ShowdownRequest *rq = kernelfleet__showdown_request__unpack(
      NULL, lt->payload_len, lt->payload);
  assert_non_null(rq);
  assert_true(rq->n_entries >= 1 && rq->n_entries <= 8);
  Kernelfleet__ShowdownTiming tm[8], *tp[8];
  for (size_t i = 0; i < rq->n_entries; i++) {
    kernelfleet__showdown_timing__init(&tm[i]);
    tm[i].candidate_id = rq->entries[i]->candidate_id;
    tm[i].outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
    tm[i].stage = "time";
    tm[i].time_ns_median = t + (double)i; /* the first fastest */
    tm[i].time_ns_spread = 0.01;
    tm[i].repetitions = 100;
    tp[i] = &tm[i];
  }
  Kernelfleet__ShowdownResult res = KERNELFLEET__SHOWDOWN_RESULT__INIT;
  res.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  res.ref_time_ns_median = 2000;
  res.ref_time_ns_spread = 0.01;
  res.ref_repetitions = 100;
  res.n_entries = rq->n_entries;
  res.entries = tp;
  res.harness_build = "build-1";
  uint8_t buf[4096];
  size_t len = kernelfleet__showdown_result__pack(&res, buf);
  kf_report rep = {.worker_id = w, .task_id = lt->task_id,
                   .attempt = lt->attempt, .outcome = KF_OUTCOME_OK,
                   .stage = "showdown", .reason = "", .output = buf,
                   .output_len = len};
  kf_verdict v;
  if (kf_store_report(tdb.s, &rep, 1, &v))
    fail_msg("report: %s", kf_store_errmsg(tdb.s));
  assert_int_equal(v, KF_VERDICT_ACCEPTED);
  int64_t first = tm[0].candidate_id;
  kernelfleet__showdown_request__free_unpacked(rq, NULL);
  kf_store_grant_free(g);
  return first;
}

/* A campaign over class a (two workers of two honest credentials) and
 * class b (one worker alone, of a third credential, that measures 4x the
 * speedup -- a worker names its own class).  Run to its end with each
 * class's showdown answered; returns the campaign, *best_a / *best_b the
 * showdowns' winners. */
static int64_t two_party_campaign(int64_t tok_a2, int64_t *best_a,
                                  int64_t *best_b) {
  int64_t da = 0, db = 0;
  int64_t wa = class_worker("wa", &cls_a, eval_showdown_kinds, &da);
  int64_t wa2 = class_worker("wa2", &cls_a, eval_showdown_kinds, &da);
  int64_t wb = class_worker("wb", &cls_b, eval_showdown_kinds, &db);
  tdb_sql("INSERT INTO api_tokens (id, role, name, hash) VALUES"
          " (41, 'worker', 'alone', repeat('a', 64)),"
          " (42, 'worker', 'honest', repeat('b', 64)),"
          " (43, 'worker', 'honest-2', repeat('c', 64))"
          " ON CONFLICT DO NOTHING");
  char sql[320];
  snprintf(sql, sizeof sql, "UPDATE workers SET token_id = CASE id WHEN %lld"
           " THEN 42 WHEN %lld THEN %lld ELSE 41 END WHERE id IN (%lld, %lld,"
           " %lld)", (long long)wa, (long long)wa2, (long long)tok_a2,
           (long long)wa, (long long)wa2, (long long)wb);
  tdb_sql(sql);
  int64_t cid = campaign_with(templates, 6, 0, 13, &(tcamp){.fresh = true});
  for (int i = 0; i < 30 && !strncmp(camp_state(cid), "running", 7); i++) {
    step(cid);
    run_round(wa, da, time_of, false);
    run_round(wb, db, fast_b, false);
  }
  step(cid);
  assert_int_equal(strncmp(camp_state(cid), "showdown: ", 10), 0);
  if (tok_a2 != 42) {
    /* class a's showdown avoids wa, whose search measured its best (with
     * wa2 of wa's credential there is no other party to wait for) */
    kf_lease_grant *g = tdb_lease1(tdb.s, wa, da, showdown_kinds, 8);
    assert_int_equal(g->n, 0);
    kf_store_grant_free(g);
  }
  *best_a = answer_showdown(wa2, da, 500);
  *best_b = answer_showdown(wb, db, 125);
  for (int i = 0; i < 5 && strncmp(camp_state(cid), "done", 4); i++)
    step(cid);
  assert_int_equal(strncmp(camp_state(cid), "done: ", 6), 0);
  bool conf = true;
  assert_int_equal(kf_store_showdown_confirmed(tdb.s, cid, db, *best_b,
                                               &conf), 0);
  assert_false(conf);
  assert_int_equal(kf_store_showdown_confirmed(tdb.s, cid, da, *best_a,
                                               &conf), 0);
  assert_int_equal(conf, tok_a2 != 42);
  return cid;
}

/* The campaign's headline is the fastest class best re-timed by a worker
 * of a second credential, not a faster one that only its finder's
 * credential re-timed; with none confirmed it is the fastest, said to be
 * its workers' word.  Red team 2026-12-01-s3b (H2): a worker alone in a
 * class it named was its own showdown's worker, and its forged 4.48x was
 * the headline over honest classes at 1.37-1.49x. */
static void headline_confirmed_by_second_credential(void **state) {
  (void)state;
  int64_t a = 0, b = 0;
  int64_t cid = two_party_campaign(43, &a, &b);
  assert_true(a != b);
  assert_int_equal(tdb_int("SELECT best_candidate_id FROM campaigns WHERE"
                           " id = %lld", (long long)cid), a);
  const char *t = tdb_text("SELECT showdown FROM campaigns WHERE id = %lld",
                           (long long)cid);
  assert_non_null(strstr(t, "(16.00x) was not re-timed by a second worker"
                            " credential"));
  assert_non_null(strstr(t, "(4.00x), which was"));
  kf_cand_list *best = NULL;
  assert_int_equal(kf_store_best(tdb.s, cid, &best), 0);
  assert_int_equal(best->v[0].candidate_id, a);
  kf_store_list_free(best);
  /* each class keeps its own best */
  assert_int_equal(tdb_int("SELECT count(*) FROM campaign_classes WHERE"
                           " campaign_id = %lld AND best_candidate_id IN"
                           " (%lld, %lld)", (long long)cid, (long long)a,
                           (long long)b), 2);
}

/* Class a's second worker of the first one's credential: no class is
 * confirmed, the fastest is the headline, and the text says whose word
 * it is. */
static void headline_unconfirmed_is_named(void **state) {
  (void)state;
  int64_t a = 0, b = 0;
  int64_t cid = two_party_campaign(42, &a, &b);
  assert_int_equal(tdb_int("SELECT best_candidate_id FROM campaigns WHERE"
                           " id = %lld", (long long)cid), b);
  assert_non_null(strstr(tdb_text("SELECT showdown FROM campaigns WHERE"
                                  " id = %lld", (long long)cid),
                         "no class's best was re-timed by a second worker"
                         " credential"));
}

/* A campaign restricted to class a never gives b work; a port of it to b
 * copies a's elites (best first), evaluates them on b before anything is
 * bred there, and reports each one's numbers before (a) and after (b). */
static void port_elites_first(void **state) {
  (void)state;
  int64_t da = 0, db = 0;
  int64_t wa = class_worker("wa", &cls_a, eval_kinds, &da);
  int64_t wb = class_worker("wb", &cls_b, eval_kinds, &db);
  kf_campaign_new nc = {
      .name = "src", .problem = "p", .language = "c", .backend = 1,
      .spec_json = "{\"name\": \"p\"}", .spec_json_len = 13,
      .reference_source = "int ref;", .templates_json = templates,
      .budget_evals = 10, .budget_seconds = 600, .population = 4,
      .plateau_evals = 0, .target_roofline = 0.95, .search_seed = 17,
      .floor_bytes = 1000, .spec_sha256 = SPEC_A, .device_class_id = da};
  int64_t src = 0;
  assert_int_equal(kf_store_campaign_create(tdb.s, &nc, &src), 0);
  for (int i = 0; i < 20 && !strncmp(camp_state(src), "running", 7); i++) {
    step(src);
    assert_int_equal(queued_on(src, db), 0);
    run_round(wa, da, time_of, false);
  }
  step(src);
  assert_string_equal(camp_state(src), "done: budget_evals reached");
  assert_int_equal(class_evals(src, db), 0);

  /* Bad ports: unknown campaign, the same class, a class of nothing. */
  kf_port_new bad = {.from_campaign = 999999, .to_class = db};
  int64_t pid = 0;
  assert_int_equal(kf_store_campaign_port(tdb.s, &bad, &pid), KF_ENOTFOUND);
  bad = (kf_port_new){.from_campaign = src, .from_class = da,
                      .to_class = da};
  assert_int_equal(kf_store_campaign_port(tdb.s, &bad, &pid), KF_EINVAL);
  bad = (kf_port_new){.from_campaign = src, .from_class = db,
                      .to_class = da};
  assert_int_equal(kf_store_campaign_port(tdb.s, &bad, &pid), KF_ESTATE);

  kf_port_new pn = {.from_campaign = src, .to_class = db, .elites = 3,
                    .budget_evals = 8};
  assert_int_equal(kf_store_campaign_port(tdb.s, &pn, &pid), 0);
  kf_campaign *pc = NULL;
  assert_int_equal(kf_store_campaign_get(tdb.s, pid, &pc), 0);
  assert_int_equal(pc->device_class_id, db);
  assert_string_equal(pc->dc.model, "cls-b");
  assert_int_equal(pc->port_from_campaign, src);
  assert_int_equal(pc->port_from_class, da);
  assert_string_equal(pc->port_dc.model, "cls-a");
  assert_int_equal(pc->budget_evals, 8);
  assert_string_equal(pc->problem_key,
                      tdb_text("SELECT problem_key FROM campaigns WHERE"
                               " id = %lld", (long long)src));
  kf_store_campaign_free(pc);
  /* The elites, the source's class best first. */
  assert_int_equal(tdb_int("SELECT count(*) FROM candidates WHERE"
                           " campaign_id = %lld AND ported_from IS NOT NULL",
                           (long long)pid), 3);
  assert_int_equal(tdb_int("SELECT ported_from FROM candidates WHERE"
                           " campaign_id = %lld ORDER BY id LIMIT 1",
                           (long long)pid),
                   tdb_int("SELECT best_candidate_id FROM campaign_classes"
                           " WHERE campaign_id = %lld AND device_class_id ="
                           " %lld", (long long)src, (long long)da));
  /* First step: the three elites are planned first (priority), on b
   * only; they are a fresh measurement on b, no reuse. */
  step(pid);
  assert_int_equal(queued_on(pid, da), 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks t JOIN eval_keys k"
                           " ON k.task_id = t.id JOIN candidates c ON"
                           " c.id = k.candidate_id WHERE t.campaign_id = %lld"
                           " AND c.ported_from IS NOT NULL AND t.priority"
                           " = 1", (long long)pid), 3);
  kf_port_list *pr = NULL;
  assert_int_equal(kf_store_port_report(tdb.s, pid, &pr), 0);
  assert_int_equal(pr->n, 3);
  for (size_t i = 0; i < pr->n; i++) {
    assert_true(pr->v[i].before_speedup > 0);
    assert_int_equal(pr->v[i].after_outcome, 0); /* not evaluated yet */
  }
  free(pr);
  /* b evaluates them (with its own times), then the search goes on. */
  for (int i = 0; i < 20 && !strncmp(camp_state(pid), "running", 7); i++) {
    run_round(wb, db, time_b, false);
    step(pid);
  }
  assert_string_equal(camp_state(pid), "done: budget_evals reached");
  assert_int_equal(class_evals(pid, db), 8);
  assert_int_equal(class_evals(pid, da), 0);
  assert_int_equal(kf_store_port_report(tdb.s, pid, &pr), 0);
  assert_int_equal(pr->n, 3);
  for (size_t i = 0; i < pr->n; i++) {
    assert_int_equal(pr->v[i].after_outcome, KF_OUTCOME_OK);
    assert_true(pr->v[i].after_speedup > 0);
    /* before: 2000 / time_of; after: 2000 / time_b -- different here. */
    assert_true(pr->v[i].before_speedup != pr->v[i].after_speedup);
  }
  free(pr);
  /* Bred children follow on b: more candidates than the elites. */
  assert_true(tdb_int("SELECT count(*) FROM candidates WHERE campaign_id ="
                      " %lld AND proposer = 'evolution'",
                      (long long)pid) > 0);
  /* The source's report is empty: not a port. */
  assert_int_equal(kf_store_port_report(tdb.s, src, &pr), 0);
  assert_int_equal(pr->n, 0);
  free(pr);
}

/* Stopping the campaign ends every class with it (a showdown that still
 * runs is failed with the reason), and nothing steps it again. */
static void stop_ends_classes(void **state) {
  (void)state;
  int64_t da = 0, db = 0;
  int64_t wa = class_worker("wa", &cls_a, eval_showdown_kinds, &da);
  (void)class_worker("wb", &cls_b, eval_kinds, &db);
  int64_t cid = campaign(templates, 8, 0, 19);
  step(cid);
  run_round(wa, da, at_roofline, false);
  step(cid);
  assert_string_equal(class_state(cid, da),
                      "showdown: target roofline reached");
  bool changed = false;
  assert_int_equal(kf_store_campaign_finish(tdb.s, cid, "stopped",
                                            "campaign stopped", &changed,
                                            NULL), 0);
  assert_true(changed);
  assert_string_equal(class_state(cid, da),
                      "done: target roofline reached");
  assert_string_equal(class_state(cid, db), "done: campaign stopped");
  assert_string_equal(tdb_text("SELECT showdown FROM campaign_classes WHERE"
                               " campaign_id = %lld AND device_class_id ="
                               " %lld", (long long)cid, (long long)da),
                      "failed: campaign stopped");
  step(cid);
  assert_string_equal(camp_state(cid), "stopped: campaign stopped");
  assert_int_equal(queued_on(cid, db), 0);
}

/* Classes by name: one match, none (the message lists the known), two. */
static void class_by_name(void **state) {
  (void)state;
  int64_t da = 0, id = 0;
  (void)class_worker("wa", &cls_a, eval_kinds, &da);
  assert_int_equal(kf_store_class_by_name(tdb.s, 1, "cls-a", &id), 0);
  assert_int_equal(id, da);
  assert_int_equal(kf_store_class_by_name(tdb.s, 2, "cls-a", &id),
                   KF_ENOTFOUND);
  assert_int_equal(kf_store_class_by_name(tdb.s, 0, "nope", &id),
                   KF_ENOTFOUND);
  assert_non_null(strstr(kf_store_errmsg(tdb.s), "cls-a"));
  kf_device_class other = cls_a;
  snprintf(other.isa, sizeof other.isa, "x86-64-v2");
  int64_t d2 = 0;
  (void)class_worker("w2", &other, eval_kinds, &d2);
  assert_int_equal(kf_store_class_by_name(tdb.s, 1, "cls-a", &id), KF_EINVAL);
  assert_non_null(strstr(kf_store_errmsg(tdb.s), "ambiguous"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(roofline_stops_one_class, tdb_setup),
      cmocka_unit_test_setup(budget_per_class, tdb_setup),
      cmocka_unit_test_setup(plateau_per_class, tdb_setup),
      cmocka_unit_test_setup(wall_clock_per_class, tdb_setup),
      cmocka_unit_test_setup(best_per_class, tdb_setup),
      cmocka_unit_test_setup(showdown_per_class, tdb_setup),
      cmocka_unit_test_setup(headline_confirmed_by_second_credential,
                             tdb_setup),
      cmocka_unit_test_setup(headline_unconfirmed_is_named, tdb_setup),
      cmocka_unit_test_setup(port_elites_first, tdb_setup),
      cmocka_unit_test_setup(stop_ends_classes, tdb_setup),
      cmocka_unit_test_setup(class_by_name, tdb_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
