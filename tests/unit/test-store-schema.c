/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-schema.c -- migrations, workers, device classes,
 * counts: the store calls that are not the task life cycle.
 */
#include "test-store-fixture.h"

#include <pthread.h>

#include "migrations.h"

static void migrate_is_idempotent(void **state) {
  (void)state;
  int last = kf_migrations[kf_migrations_count - 1].version;
  assert_int_equal(kf_store_schema_version(tdb.s), last);
  /* Again, twice, from a second connection too: nothing to apply. */
  assert_int_equal(kf_store_migrate(tdb.s), 0);
  kf_store *s2 = tdb_open();
  assert_int_equal(kf_store_migrate(s2), 0);
  assert_int_equal(kf_store_schema_version(s2), last);
  kf_store_close(s2);
  assert_int_equal(tdb_int("SELECT count(*) FROM schema_version"),
                   (int64_t)kf_migrations_count);
  assert_string_equal(
      tdb_text("SELECT name FROM schema_version WHERE version = %d", last),
      kf_migrations[kf_migrations_count - 1].name);
  assert_int_equal(
      tdb_int("SELECT count(*) FROM schema_version WHERE applied_at IS NULL"),
      0);
}

static void schema_version_of_empty_database_is_zero(void **state) {
  (void)state;
  char sql[256];
  snprintf(sql, sizeof sql, "CREATE DATABASE %s_empty", tdb.dbname);
  assert_int_equal(kf_store__admin_exec(tdb.admin, sql, NULL, 0), 0);
  char ci[1200];
  snprintf(ci, sizeof ci, "%s dbname=%s_empty", tdb_base(), tdb.dbname);
  kf_store *s = NULL;
  char err[256];
  assert_int_equal(kf_store_open(ci, &s, err, sizeof err), 0);
  assert_int_equal(kf_store_schema_version(s), 0);
  kf_store_close(s);
  snprintf(sql, sizeof sql, "DROP DATABASE %s_empty WITH (FORCE)",
           tdb.dbname);
  assert_int_equal(kf_store__admin_exec(tdb.admin, sql, NULL, 0), 0);
}

static void *migrate_thread(void *p) {
  kf_store *s = p;
  return (void *)(intptr_t)kf_store_migrate(s);
}

/* Two coordinators starting at once on an empty database: the advisory
 * lock makes one wait, and the second finds nothing left to do. */
static void concurrent_migrations_serialize(void **state) {
  (void)state;
  char sql[256];
  snprintf(sql, sizeof sql, "CREATE DATABASE %s_race", tdb.dbname);
  assert_int_equal(kf_store__admin_exec(tdb.admin, sql, NULL, 0), 0);
  char ci[1200];
  snprintf(ci, sizeof ci, "%s dbname=%s_race", tdb_base(), tdb.dbname);
  kf_store *s[3] = {0};
  char err[256];
  pthread_t th[3];
  for (int i = 0; i < 3; i++)
    assert_int_equal(kf_store_open(ci, &s[i], err, sizeof err), 0);
  for (int i = 0; i < 3; i++)
    assert_int_equal(pthread_create(&th[i], NULL, migrate_thread, s[i]), 0);
  for (int i = 0; i < 3; i++) {
    void *rc;
    pthread_join(th[i], &rc);
    if ((intptr_t)rc) fail_msg("migrate: %s", kf_store_errmsg(s[i]));
  }
  char out[32];
  assert_int_equal(kf_store__admin_exec(s[0],
                                        "SELECT count(*) FROM schema_version",
                                        out, sizeof out),
                   0);
  assert_int_equal(atoi(out), (int)kf_migrations_count);
  for (int i = 0; i < 3; i++) kf_store_close(s[i]);
  snprintf(sql, sizeof sql, "DROP DATABASE %s_race WITH (FORCE)", tdb.dbname);
  assert_int_equal(kf_store__admin_exec(tdb.admin, sql, NULL, 0), 0);
}

static void open_failure_is_unavailable(void **state) {
  (void)state;
  kf_store *s = (kf_store *)1;
  char err[256] = "";
  int rc = kf_store_open("host=/nonexistent-kf-dir dbname=x connect_timeout=2",
                         &s, err, sizeof err);
  assert_int_equal(rc, KF_EUNAVAIL);
  assert_null(s);
  assert_true(strlen(err) > 0);
  kf_store_close(NULL);
  assert_non_null(kf_store_errmsg(tdb.s));
}

static void register_worker_dedupes_device_class(void **state) {
  (void)state;
  const char *kinds[] = {"eval", "compile", NULL};
  int64_t dc1 = 0, dc2 = 0, dc3 = 0;
  int64_t w1 = tdb_worker("w1", &tdb_cpu, &dc1, kinds);
  int64_t w2 = tdb_worker("w2", &tdb_cpu, &dc2, kinds);
  int64_t w3 = tdb_worker("w3", &tdb_gpu, &dc3, kinds);
  assert_true(w1 > 0 && w2 > w1 && w3 > w2);
  assert_int_equal(dc1, dc2);
  assert_true(dc3 != dc1);
  assert_int_equal(tdb_int("SELECT count(*) FROM device_classes"), 2);
  assert_int_equal(tdb_int("SELECT count(*) FROM workers"), 3);

  int64_t id = 0;
  assert_int_equal(kf_store_device_class_id(tdb.s, &tdb_gpu, &id), 0);
  assert_int_equal(id, dc3);
  kf_device_class other = tdb_gpu;
  other.cc_minor = 9;
  assert_int_equal(kf_store_device_class_id(tdb.s, &other, &id), 0);
  assert_true(id != dc3 && id != dc1);
  assert_int_equal(tdb_int("SELECT count(*) FROM device_classes"), 3);
  kf_device_class bad = {.kind = 0};
  assert_int_equal(kf_store_device_class_id(tdb.s, &bad, &id), KF_EINVAL);

  int64_t got_dc = 0, got_tok = -1;
  char kbuf[64];
  assert_int_equal(kf_store_get_worker(tdb.s, w3, &got_dc, kbuf, sizeof kbuf,
                                       &got_tok),
                   0);
  assert_int_equal(got_dc, dc3);
  assert_int_equal(got_tok, 0); /* registered with the bootstrap token */
  assert_string_equal(kbuf, "eval,compile");
  assert_int_equal(kf_store_get_worker(tdb.s, 9999, &got_dc, kbuf,
                                       sizeof kbuf, NULL),
                   KF_ENOTFOUND);
  assert_string_equal(tdb_text("SELECT device->>'test' FROM workers"
                               " WHERE id = %lld", (long long)w1),
                      "true");
}

static void strings_are_escaped(void **state) {
  (void)state;
  const char *kinds[] = {"a\"b", "c\\d", "e,f", "{g}", "NULL", NULL};
  int64_t dc = 0;
  int64_t w = tdb_worker("quote\"'\\name", &tdb_cpu, &dc, kinds);
  assert_int_equal(tdb_int("SELECT cardinality(task_kinds) FROM workers"
                           " WHERE id = %lld", (long long)w), 5);
  assert_string_equal(tdb_text("SELECT task_kinds[2] || task_kinds[5]"
                               " FROM workers WHERE id = %lld", (long long)w),
                      "c\\dNULL");
  assert_string_equal(tdb_text("SELECT name FROM workers WHERE id = %lld",
                               (long long)w),
                      "quote\"'\\name");
}

static void counts_by_campaign(void **state) {
  (void)state;
  tdb_sql("INSERT INTO campaigns (name, problem) VALUES ('c', 'p')");
  kf_task_spec sp[3] = {
      {.kind = "k", .campaign_id = 1}, {.kind = "k", .campaign_id = 1},
      {.kind = "k"}};
  int64_t ids[3];
  assert_int_equal(kf_store_submit(tdb.s, sp, 3, ids), 0);
  assert_true(ids[0] < ids[1] && ids[1] < ids[2]);
  kf_task_counts c;
  assert_int_equal(kf_store_counts(tdb.s, 1, &c), 0);
  assert_int_equal(c.queued, 2);
  assert_int_equal(c.leased + c.done + c.failed, 0);
  assert_int_equal(kf_store_counts(tdb.s, 0, &c), 0);
  assert_int_equal(c.queued, 3);
  /* Defaults for zero fields. */
  assert_int_equal(tdb_int("SELECT max_attempts * 100000 + timeout_ms"
                           " FROM tasks WHERE id = %lld", (long long)ids[2]),
                   3 * 100000 + 60000);
}

/* A database an older release left at schema 0003, with a finished and
 * a running campaign, a measured and a reused evaluation: 0004 keeps
 * every row, gives the old ones an identity that matches nothing new (nor
 * each other), and the old campaigns still read. */
static void upgrade_from_0003_keeps_rows(void **state) {
  (void)state;
  char sql[256];
  snprintf(sql, sizeof sql, "CREATE DATABASE %s_v3", tdb.dbname);
  assert_int_equal(kf_store__admin_exec(tdb.admin, sql, NULL, 0), 0);
  char ci[1200];
  snprintf(ci, sizeof ci, "%s dbname=%s_v3", tdb_base(), tdb.dbname);
  kf_store *s = NULL;
  char err[256];
  assert_int_equal(kf_store_open(ci, &s, err, sizeof err), 0);
  assert_int_equal(kf_store__migrate_to(s, 3), 0);
  assert_int_equal(kf_store_schema_version(s), 3);
  static const char *const rows[] = {
      "INSERT INTO device_classes (kind, model, isa)"
      " VALUES (1, 'old-cpu', 'x86_64')",
      "INSERT INTO workers (name, device_class_id, device, task_kinds)"
      " VALUES ('old', 1, '{\"copy_gbps\": 10}', '{eval}')",
      "INSERT INTO campaigns (name, problem, state, reference_source,"
      " spec_json, stop_reason) VALUES"
      " ('a', 'vecsum', 'done', 'int ref;', '\\x7b7d', 'budget_evals reached'),"
      " ('b', 'vecsum', 'running', 'int ref;', '\\x7b7d', NULL)",
      "INSERT INTO candidates (campaign_id, template_name, source,"
      " source_sha256, flags) SELECT c, 't', 'int t;',"
      " encode(sha256('int t;'::bytea), 'hex'), '-DA=1'"
      " FROM generate_series(1, 2) AS c",
      "INSERT INTO tasks (kind, campaign_id, device_class_id, state,"
      " attempt, finished_at) VALUES ('eval', 1, 1, 'done', 1, now())",
      "INSERT INTO results (task_id, attempt, worker_id, outcome, final)"
      " VALUES (1, 1, 1, 'ok', true)",
      "INSERT INTO eval_keys (candidate_id, device_class_id, campaign_id,"
      " source_sha256, flags, task_id) SELECT 1, 1, 1, source_sha256,"
      " flags, 1 FROM candidates WHERE id = 1",
      "INSERT INTO eval_keys (candidate_id, device_class_id, campaign_id,"
      " source_sha256, flags, duplicate_of) SELECT 2, 1, 2, source_sha256,"
      " flags, 1 FROM candidates WHERE id = 2",
      "INSERT INTO evaluations (candidate_id, campaign_id, device_class_id,"
      " task_id, worker_id, outcome, time_ns_median, ref_time_ns_median,"
      " speedup) VALUES (1, 1, 1, 1, 1, 'ok', 100, 200, 2)",
      "INSERT INTO evaluations (candidate_id, campaign_id, device_class_id,"
      " outcome, time_ns_median, ref_time_ns_median, speedup, reused_from)"
      " VALUES (2, 2, 1, 'ok', 100, 200, 2, 1)",
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (kf_store__admin_exec(s, rows[i], NULL, 0))
      fail_msg("%s: %s", rows[i], kf_store_errmsg(s));
  static const char *const tables[] = {
      "device_classes", "workers", "campaigns", "candidates", "tasks",
      "results", "eval_keys", "evaluations"};
  enum { NT = sizeof tables / sizeof tables[0] };
  char before[NT][32], after[32];
  for (int i = 0; i < NT; i++) {
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[i]);
    assert_int_equal(kf_store__admin_exec(s, sql, before[i], 32), 0);
  }

  assert_int_equal(kf_store_migrate(s), 0);
  assert_int_equal(kf_store_schema_version(s),
                   kf_migrations[kf_migrations_count - 1].version);
  for (int i = 0; i < NT; i++) {
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[i]);
    assert_int_equal(kf_store__admin_exec(s, sql, after, sizeof after), 0);
    assert_string_equal(after, before[i]);
  }
  char v[128];
  /* Old rows: an identity that matches nothing, not even each other. */
  assert_int_equal(kf_store__admin_exec(
                       s, "SELECT string_agg(problem_key, ',' ORDER BY id)"
                       " FROM campaigns", v, sizeof v), 0);
  assert_string_equal(v, "pre-0004:1,pre-0004:2");
  assert_int_equal(kf_store__admin_exec(
                       s, "SELECT count(*) FROM eval_keys k JOIN campaigns c"
                       " ON c.id = k.campaign_id WHERE k.problem_key ="
                       " c.problem_key", v, sizeof v), 0);
  assert_string_equal(v, "2");
  assert_int_equal(kf_store__admin_exec(
                       s, "SELECT count(*) FROM evaluations WHERE"
                       " environment_id IS NULL AND measurements = 1 AND NOT"
                       " timing_dependent AND time_ns_median = 100", v,
                       sizeof v), 0);
  assert_string_equal(v, "2");
  assert_int_equal(kf_store__admin_exec(
                       s, "SELECT count(*) FROM workers WHERE environment_id"
                       " IS NULL", v, sizeof v), 0);
  assert_string_equal(v, "1");
  /* The old campaigns read as before; the running one is still stepped. */
  kf_campaign *c = NULL;
  assert_int_equal(kf_store_campaign_get(s, 2, &c), 0);
  assert_string_equal(c->state, "running");
  assert_string_equal(c->problem_key, "pre-0004:2");
  assert_string_equal(c->showdown, "");
  kf_store_campaign_free(c);
  kf_campaign_counts n;
  assert_int_equal(kf_store_campaign_counts(s, 2, &n), 0);
  assert_int_equal(n.evals, 1);
  assert_int_equal(n.evals_reused, 1);
  assert_true(n.best_speedup == 2);
  int64_t *ids = NULL;
  size_t nid = 0;
  assert_int_equal(kf_store_campaigns_running(s, &ids, &nid), 0);
  assert_int_equal(nid, 1);
  assert_int_equal(ids[0], 2);
  free(ids);
  /* A new campaign of the same problem, on a worker with an identity: the
   * old measurement is not among the keys it may reuse. */
  const char *kinds[] = {"eval"};
  kf_worker_reg reg = {.name = "new", .dc = {.kind = 1, .model = "old-cpu",
                                             .isa = "x86_64"},
                       .device_json = "{}", .task_kinds = kinds,
                       .n_task_kinds = 1, .slots = 1,
                       .harness_build = "b1", .toolchain = "cc"};
  int64_t wid = 0, dc = 0;
  assert_int_equal(kf_store_register_worker(s, &reg, &wid, &dc), 0);
  assert_int_equal(dc, 1);
  kf_campaign_new nw = {
      .name = "c", .problem = "vecsum", .language = "c", .backend = 1,
      .spec_json = "{}", .spec_json_len = 2, .reference_source = "int ref;",
      .templates_json = "[]", .budget_evals = 1, .budget_seconds = 60,
      .population = 1,
      .spec_sha256 =
          "0000000000000000000000000000000000000000000000000000000000000000"};
  int64_t cid = 0;
  assert_int_equal(kf_store_campaign_create(s, &nw, &cid), 0);
  assert_int_equal(kf_store__admin_exec(
                       s, "SELECT environment_id FROM workers WHERE name ="
                       " 'new'", v, sizeof v), 0);
  kf_cand_list *keys = NULL;
  assert_int_equal(kf_store_eval_keys(s, cid, 1, strtoll(v, NULL, 10),
                                      tdb_text("SELECT encode(sha256('int"
                                               " t;'::bytea), 'hex')"),
                                      &keys),
                   0);
  assert_int_equal(keys->n, 0);
  kf_store_list_free(keys);
  kf_store_close(s);
  snprintf(sql, sizeof sql, "DROP DATABASE %s_v3 WITH (FORCE)", tdb.dbname);
  assert_int_equal(kf_store__admin_exec(tdb.admin, sql, NULL, 0), 0);
}

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("schema");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(migrate_is_idempotent, tdb_setup),
      cmocka_unit_test_setup(schema_version_of_empty_database_is_zero,
                             tdb_setup),
      cmocka_unit_test_setup(concurrent_migrations_serialize, tdb_setup),
      cmocka_unit_test_setup(open_failure_is_unavailable, tdb_setup),
      cmocka_unit_test_setup(register_worker_dedupes_device_class, tdb_setup),
      cmocka_unit_test_setup(strings_are_escaped, tdb_setup),
      cmocka_unit_test_setup(counts_by_campaign, tdb_setup),
      cmocka_unit_test_setup(upgrade_from_0003_keeps_rows, tdb_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
