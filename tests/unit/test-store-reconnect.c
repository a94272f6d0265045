/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-reconnect.c -- the store survives its backend
 * being killed: the next call either fails with KF_EUNAVAIL or succeeds
 * over a fresh connection, the one after works, and a failed call leaves
 * nothing half-done.
 */
#include "test-store-fixture.h"

#include <pthread.h>

static void kill_backend(kf_store *s) {
  int pid = kf_store__backend_pid(s);
  assert_true(pid > 0);
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", pid);
  char out[16];
  assert_int_equal(kf_store__admin_exec(tdb.admin, sql, out, sizeof out), 0);
  assert_string_equal(out, "t");
  /* Give the backend time to send its goodbye and close the socket. */
  usleep(200 * 1000);
}

/* The call after a kill: KF_EUNAVAIL is allowed once, not twice. */
#define AFTER_KILL(call)                                                      \
  do {                                                                        \
    int rc_ = (call);                                                         \
    if (rc_ == KF_EUNAVAIL) rc_ = (call);                                     \
    if (rc_) fail_msg("%s: %d %s", #call, rc_, kf_store_errmsg(s));           \
  } while (0)

static void every_call_recovers(void **state) {
  (void)state;
  const char *kinds[] = {"eval", NULL};
  int64_t dc = 0;
  int64_t w = tdb_worker("w", &tdb_cpu, &dc, kinds);
  kf_store *s = tdb_open();
  int pid0 = kf_store__backend_pid(s);

  kill_backend(s);
  kf_task_counts c;
  AFTER_KILL(kf_store_counts(s, 0, &c));
  assert_true(kf_store__backend_pid(s) != pid0);

  kill_backend(s);
  kf_task_spec sp[2] = {{.kind = "eval"}, {.kind = "eval"}};
  int64_t ids[2];
  AFTER_KILL(kf_store_submit(s, sp, 2, ids));
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks"), 2);

  kill_backend(s);
  kf_lease_req rq = {.worker_id = w, .device_class_id = dc,
                     .task_kinds = kinds, .n_task_kinds = 1, .max_tasks = 1};
  kf_lease_grant *g = NULL;
  AFTER_KILL(kf_store_lease(s, &rq, 1, 30000, &g));
  assert_int_equal(g->n, 1);
  kf_report r = {.worker_id = w, .task_id = g->tasks[0].task_id,
                 .attempt = g->tasks[0].attempt, .outcome = 1};
  kf_store_grant_free(g);

  kill_backend(s);
  kf_verdict v;
  AFTER_KILL(kf_store_report(s, &r, 1, &v));
  assert_int_equal(v, KF_VERDICT_ACCEPTED);

  kill_backend(s);
  AFTER_KILL(kf_store_heartbeat(s, &w, 1, NULL, 0, 1000, NULL));
  kill_backend(s);
  int rq_n, fl_n;
  AFTER_KILL(kf_store_reap(s, &rq_n, &fl_n));
  kill_backend(s);
  assert_true(kf_store_schema_version(s) > 0 ||
              kf_store_schema_version(s) > 0);
  kill_backend(s);
  AFTER_KILL(kf_store_migrate(s));
  kill_backend(s);
  char kb[32];
  AFTER_KILL(kf_store_get_worker(s, w, NULL, kb, sizeof kb, NULL));
  assert_string_equal(kb, "eval");

  /* And plain use afterwards. */
  assert_int_equal(kf_store_counts(s, 0, &c), 0);
  assert_int_equal(c.done, 1);
  assert_int_equal(c.queued, 1);
  kf_store_close(s);
}

typedef struct {
  kf_store *s;
  const kf_report *r;
  kf_verdict v[2];
  int rc;
} report_arg;

static void *report_thread(void *p) {
  report_arg *a = p;
  a->rc = kf_store_report(a->s, a->r, 2, a->v);
  return NULL;
}

/* A call that fails inside its transaction -- backend killed while it
 * waits for a row lock, or its statement cancelled -- leaves nothing of
 * itself, and the same call then goes through. */
static void failure_mid_transaction(void **state) {
  (void)state;
  const char *kinds[] = {"eval", NULL};
  int64_t dc = 0;
  int64_t w = tdb_worker("w", &tdb_cpu, &dc, kinds);
  tdb_submit("eval", 3, 0, 0, 0, NULL);
  kf_store *s = tdb_open();
  kf_lease_grant *g = tdb_lease1(s, w, dc, kinds, 3);
  assert_int_equal(g->n, 3);
  kf_report r[2] = {{.worker_id = w, .task_id = 2, .attempt = 1,
                     .outcome = 1},
                    {.worker_id = w, .task_id = 1, .attempt = 1,
                     .outcome = 1}};
  kf_store_grant_free(g);
  /* Another connection holds task 1, so the report blocks on it after
   * locking task 2... */
  kf_store *locker = tdb_open();
  assert_int_equal(kf_store__admin_exec(locker, "BEGIN", NULL, 0), 0);
  assert_int_equal(kf_store__admin_exec(
                       locker, "SELECT id FROM tasks WHERE id = 1 FOR UPDATE",
                       NULL, 0),
                   0);
  /* ...and is killed there. */
  report_arg a = {.s = s, .r = r};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, report_thread, &a), 0);
  usleep(300 * 1000);
  kill_backend(s);
  pthread_join(th, NULL);
  assert_int_equal(a.rc, KF_EUNAVAIL);
  assert_true(strlen(kf_store_errmsg(s)) > 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM results"), 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state='done'"),
                   0);

  /* The same again, but the wait ends in a statement timeout: KF_EDB. */
  assert_int_equal(kf_store_counts(s, 0, &(kf_task_counts){0}), 0);
  assert_int_equal(
      kf_store__admin_exec(s, "SET statement_timeout = '300ms'", NULL, 0), 0);
  kf_verdict v[2];
  assert_int_equal(kf_store_report(s, r, 2, v), KF_EDB);
  assert_non_null(strstr(kf_store_errmsg(s), "statement timeout"));
  assert_int_equal(tdb_int("SELECT count(*) FROM results"), 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state='done'"),
                   0);

  assert_int_equal(kf_store__admin_exec(locker, "ROLLBACK", NULL, 0), 0);
  kf_store_close(locker);
  assert_int_equal(kf_store_report(s, r, 2, v), 0);
  assert_int_equal(v[0], KF_VERDICT_ACCEPTED);
  assert_int_equal(v[1], KF_VERDICT_ACCEPTED);
  assert_int_equal(tdb_int("SELECT count(*) FROM results"), 2);
  kf_store_close(s);
}

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("reconnect");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(every_call_recovers, tdb_setup),
      cmocka_unit_test_setup(failure_mid_transaction, tdb_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
