/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-timeouts.c -- every session the store opens runs
 * with statement_timeout and lock_timeout (kf_store_set_timeouts), on the
 * first connection and after a reconnect, so a statement stuck behind
 * another session's lock ends in an error instead of waiting for it; a
 * store whose leases were granted to a caller that gave up can undo them
 * (kf_store_unlease) exactly, and only them.
 */
#include "test-store-fixture.h"

static void session_has_limits(void **state) {
  (void)state;
  kf_store *s = tdb_open();
  char out[32];
  assert_int_equal(kf_store__admin_exec(s, "SHOW statement_timeout", out,
                                        sizeof out), 0);
  assert_string_equal(out, "10s"); /* KF_STORE_STATEMENT_MS */
  assert_int_equal(kf_store_set_timeouts(s, 1500, 700), 0);
  assert_int_equal(kf_store__admin_exec(s, "SHOW lock_timeout", out,
                                        sizeof out), 0);
  assert_string_equal(out, "700ms");
  /* A new backend (killed, reconnected) gets them too. */
  char sql[96];
  snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)",
           kf_store__backend_pid(s));
  assert_int_equal(kf_store__admin_exec(tdb.admin, sql, NULL, 0), 0);
  kf_task_counts c;
  if (kf_store_counts(s, 0, &c) == KF_EUNAVAIL)
    assert_int_equal(kf_store_counts(s, 0, &c), 0);
  assert_int_equal(kf_store__admin_exec(s, "SHOW statement_timeout", out,
                                        sizeof out), 0);
  assert_string_equal(out, "1500ms");
  kf_store_close(s);
}

static void lock_wait_fails(void **state) {
  (void)state;
  kf_store *holder = tdb_open();
  kf_store *s = tdb_open();
  assert_int_equal(kf_store_set_timeouts(s, 0, 500), 0);
  assert_int_equal(kf_store__admin_exec(holder, "BEGIN", NULL, 0), 0);
  assert_int_equal(kf_store__admin_exec(
                       holder, "LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE",
                       NULL, 0), 0);
  kf_task_counts c;
  int rc = kf_store_counts(s, 0, &c);
  assert_int_equal(rc, KF_EDB); /* the coordinator answers UNAVAILABLE */
  assert_non_null(strstr(kf_store_errmsg(s), "lock timeout"));
  assert_int_equal(kf_store__admin_exec(holder, "ROLLBACK", NULL, 0), 0);
  assert_int_equal(kf_store_counts(s, 0, &c), 0);
  kf_store_close(s);
  kf_store_close(holder);
}

static void unlease_undoes_exactly(void **state) {
  (void)state;
  const char *kinds[] = {"k", NULL};
  int64_t dc = 0;
  int64_t w = tdb_worker("w", &tdb_cpu, &dc, kinds);
  kf_task_spec sp[3] = {{.kind = "k"}, {.kind = "k"}, {.kind = "k"}};
  int64_t ids[3];
  assert_int_equal(kf_store_submit(tdb.s, sp, 3, ids), 0);
  kf_lease_req rq = {.worker_id = w, .device_class_id = dc,
                     .task_kinds = kinds, .n_task_kinds = 1, .max_tasks = 3};
  kf_lease_grant *g = NULL;
  assert_int_equal(kf_store_lease(tdb.s, &rq, 1, 30000, &g), 0);
  assert_int_equal(g->n, 3);
  kf_lease_ref refs[3];
  for (size_t i = 0; i < 3; i++)
    refs[i] = (kf_lease_ref){w, g->tasks[i].task_id, g->tasks[i].attempt};
  refs[2].attempt += 1; /* not the lease as granted: left alone */
  kf_store_grant_free(g);
  int undone = -1;
  assert_int_equal(kf_store_unlease(tdb.s, refs, 3, &undone), 0);
  assert_int_equal(undone, 2);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state = "
                           "'queued' AND attempt = 0 AND lease_owner IS NULL"),
                   2);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state = "
                           "'leased' AND attempt = 1"), 1);
  /* Twice is a no-op. */
  assert_int_equal(kf_store_unlease(tdb.s, refs, 3, &undone), 0);
  assert_int_equal(undone, 0);
}

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("timeouts");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(session_has_limits, tdb_setup),
      cmocka_unit_test_setup(lock_wait_fails, tdb_setup),
      cmocka_unit_test_setup(unlease_undoes_exactly, tdb_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
