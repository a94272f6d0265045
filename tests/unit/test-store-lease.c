/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-lease.c -- submit, lease, heartbeat, reap: who
 * gets which task, that no task is ever leased twice at once, and what
 * happens when leases run out.  Also times lease+report batches.
 */
#include "test-store-fixture.h"

#include <pthread.h>
#include <time.h>

static void lease_respects_max_tasks_and_payload(void **state) {
  (void)state;
  const char *kinds[] = {"eval", NULL};
  int64_t dc = 0;
  int64_t w = tdb_worker("w", &tdb_cpu, &dc, kinds);
  /* Binary payload with NULs and high bytes survives the round trip. */
  unsigned char bin[300];
  for (size_t i = 0; i < sizeof bin; i++) bin[i] = (unsigned char)(i * 7);
  kf_task_spec sp[5];
  for (int i = 0; i < 5; i++)
    sp[i] = (kf_task_spec){.kind = "eval", .payload = bin,
                           .payload_len = sizeof bin - (size_t)i,
                           .campaign_id = 0, .timeout_ms = 1000 + i};
  int64_t ids[5];
  assert_int_equal(kf_store_submit(tdb.s, sp, 5, ids), 0);

  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, kinds, 3);
  assert_int_equal(g->n, 3);
  for (size_t i = 0; i < g->n; i++) {
    const kf_leased_task *t = &g->tasks[i];
    assert_int_equal(t->req_index, 0);
    assert_int_equal(t->attempt, 1);
    assert_string_equal(t->kind, "eval");
    size_t k = (size_t)(t->task_id - ids[0]);
    assert_true(k < 3); /* oldest first at equal priority */
    assert_int_equal(t->payload_len, sizeof bin - k);
    assert_memory_equal(t->payload, bin, t->payload_len);
    assert_int_equal(t->timeout_ms, 1000 + k);
    assert_int_equal(t->campaign_id, 0);
  }
  kf_store_grant_free(g);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state = 'leased'"
                           " AND lease_owner = %lld AND attempt = 1"
                           " AND lease_expires > now()", (long long)w),
                   3);
  g = tdb_lease1(tdb.s, w, dc, kinds, 10);
  assert_int_equal(g->n, 2);
  kf_store_grant_free(g);
  g = tdb_lease1(tdb.s, w, dc, kinds, 10);
  assert_int_equal(g->n, 0); /* empty is not an error */
  kf_store_grant_free(g);
  kf_store_grant_free(NULL);
}

static void lease_respects_class_kind_priority(void **state) {
  (void)state;
  const char *eval[] = {"eval", NULL};
  const char *both[] = {"compile", "eval", NULL};
  int64_t cpu = 0, gpu = 0;
  int64_t wc = tdb_worker("cpu", &tdb_cpu, &cpu, eval);
  int64_t wg = tdb_worker("gpu", &tdb_gpu, &gpu, both);
  int64_t gpu_only[2], any_low[2], any_high[1], compile[2];
  tdb_submit("eval", 2, gpu, 0, 0, gpu_only);
  tdb_submit("eval", 2, 0, 0, 0, any_low);
  tdb_submit("eval", 1, 0, 10, 0, any_high);
  tdb_submit("compile", 2, 0, 5, 0, compile);

  /* The CPU worker: no GPU tasks, no compile tasks, high priority first. */
  kf_lease_grant *g = tdb_lease1(tdb.s, wc, cpu, eval, 10);
  assert_int_equal(g->n, 3);
  int seen_high = 0;
  for (size_t i = 0; i < g->n; i++) {
    int64_t id = g->tasks[i].task_id;
    assert_true(id == any_low[0] || id == any_low[1] || id == any_high[0]);
    seen_high += id == any_high[0];
  }
  assert_int_equal(seen_high, 1);
  kf_store_grant_free(g);

  /* The GPU worker, one at a time: compile (priority 5) before its own
   * class's eval (priority 0). */
  g = tdb_lease1(tdb.s, wg, gpu, both, 1);
  assert_int_equal(g->n, 1);
  assert_int_equal(g->tasks[0].task_id, compile[0]);
  assert_string_equal(g->tasks[0].kind, "compile");
  kf_store_grant_free(g);
  g = tdb_lease1(tdb.s, wg, gpu, both, 10);
  assert_int_equal(g->n, 3);
  kf_store_grant_free(g);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state='queued'"),
                   0);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE lease_owner = %lld"
                           " AND device_class_id = %lld",
                           (long long)wc, (long long)gpu),
                   0);
}

static void lease_batch_groups_and_spreads(void **state) {
  (void)state;
  const char *k1[] = {"a", "b", NULL};
  const char *k1r[] = {"b", "a", NULL}; /* same set, other order */
  const char *k2[] = {"b", NULL};
  int64_t dc = 0;
  enum { NW = 6 };
  int64_t w[NW];
  for (int i = 0; i < NW; i++) w[i] = tdb_worker("w", &tdb_cpu, &dc, k1);
  tdb_submit("a", 5, 0, 0, 0, NULL);
  tdb_submit("b", 4, 0, 0, 0, NULL);
  kf_lease_req rq[NW + 1];
  for (int i = 0; i < NW; i++)
    rq[i] = (kf_lease_req){.worker_id = w[i], .device_class_id = dc,
                           .task_kinds = i % 2 ? k1 : k1r, .n_task_kinds = 2,
                           .max_tasks = 4};
  rq[2].task_kinds = k2;
  rq[2].n_task_kinds = 1;
  rq[NW] = (kf_lease_req){.worker_id = w[0], .device_class_id = dc,
                          .task_kinds = k1, .n_task_kinds = 2,
                          .max_tasks = 0}; /* asks for nothing */
  kf_lease_grant *g = NULL;
  assert_int_equal(kf_store_lease(tdb.s, rq, NW + 1, 30000, &g), 0);
  assert_int_equal(g->n, 9);
  size_t per[NW + 1] = {0};
  for (size_t i = 0; i < g->n; i++) {
    size_t r = g->tasks[i].req_index;
    assert_true(r < NW);
    per[r]++;
    if (r == 2) assert_string_equal(g->tasks[i].kind, "b");
    assert_int_equal(tdb_int("SELECT lease_owner FROM tasks WHERE id = %lld",
                             (long long)g->tasks[i].task_id),
                     w[r]);
  }
  /* The "b"-only request is served first and takes every b; the five
   * others share the five a's round-robin, one each. */
  for (int i = 0; i < NW; i++) assert_int_equal(per[i], i == 2 ? 4 : 1);
  kf_store_grant_free(g);
}

typedef struct {
  int64_t wid, dc;
  int64_t got[2000];
  size_t n;
  int rc;
} lease_thread_arg;

static void *lease_thread(void *p) {
  lease_thread_arg *a = p;
  kf_store *s = tdb_open();
  const char *kinds[] = {"eval", NULL};
  kf_lease_req rq = {.worker_id = a->wid, .device_class_id = a->dc,
                     .task_kinds = kinds, .n_task_kinds = 1, .max_tasks = 7};
  for (;;) {
    kf_lease_grant *g = NULL;
    a->rc = kf_store_lease(s, &rq, 1, 30000, &g);
    if (a->rc || g->n == 0) {
      kf_store_grant_free(g);
      break;
    }
    for (size_t i = 0; i < g->n && a->n < 2000; i++)
      a->got[a->n++] = g->tasks[i].task_id;
    kf_store_grant_free(g);
  }
  kf_store_close(s);
  return NULL;
}

static void concurrent_leases_are_exclusive(void **state) {
  (void)state;
  const char *kinds[] = {"eval", NULL};
  int64_t dc = 0;
  enum { NT = 3, NTASK = 600 };
  static lease_thread_arg args[NT];
  for (int i = 0; i < NT; i++) {
    memset(&args[i], 0, sizeof args[i]);
    args[i].wid = tdb_worker("w", &tdb_cpu, &dc, kinds);
    args[i].dc = dc;
  }
  tdb_submit("eval", NTASK, 0, 0, 0, NULL);
  pthread_t th[NT];
  for (int i = 0; i < NT; i++)
    assert_int_equal(pthread_create(&th[i], NULL, lease_thread, &args[i]), 0);
  for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
  static char seen[NTASK + 1];
  memset(seen, 0, sizeof seen);
  size_t total = 0;
  for (int i = 0; i < NT; i++) {
    assert_int_equal(args[i].rc, 0);
    for (size_t j = 0; j < args[i].n; j++) {
      int64_t id = args[i].got[j];
      assert_true(id >= 1 && id <= NTASK);
      assert_int_equal(seen[id], 0); /* never leased twice */
      seen[id] = 1;
      total++;
    }
  }
  assert_int_equal(total, NTASK);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE attempt <> 1"
                           " OR state <> 'leased'"),
                   0);
}

static void heartbeat_extends_leases(void **state) {
  (void)state;
  const char *kinds[] = {"eval", NULL};
  int64_t dc = 0;
  int64_t w1 = tdb_worker("w1", &tdb_cpu, &dc, kinds);
  int64_t w2 = tdb_worker("w2", &tdb_cpu, &dc, kinds);
  tdb_submit("eval", 4, 0, 0, 0, NULL);
  kf_lease_grant *g1 = tdb_lease1(tdb.s, w1, dc, kinds, 2);
  assert_int_equal(g1->n, 2);
  kf_store_grant_free(tdb_lease1(tdb.s, w2, dc, kinds, 2));
  tdb_expire_leases();
  tdb_sql("UPDATE workers SET last_seen = now() - interval '1 hour'");
  /* w1 lists one of its two leases, a lease it never had (w2's task
   * under w1's name), and a wrong attempt of its other lease. */
  int64_t other = tdb_int("SELECT id FROM tasks WHERE lease_owner = %lld"
                          " LIMIT 1", (long long)w2);
  kf_lease_ref refs[] = {
      {w1, g1->tasks[0].task_id, g1->tasks[0].attempt},
      {w1, other, 1},
      {w1, g1->tasks[1].task_id, g1->tasks[1].attempt + 1},
  };
  bool live[3] = {false, true, true};
  assert_int_equal(kf_store_heartbeat(tdb.s, &w1, 1, refs, 3, 60000, live), 0);
  assert_true(live[0]);
  assert_false(live[1]);
  assert_false(live[2]);
  assert_int_equal(kf_store_heartbeat(tdb.s, NULL, 0, NULL, 0, 60000, NULL), 0);
  assert_int_equal(
      tdb_int("SELECT count(*) FROM tasks WHERE lease_owner = %lld AND"
              " lease_expires > now() + interval '50 seconds'", (long long)w1),
      1);
  assert_int_equal(tdb_int("SELECT count(*) FROM workers WHERE"
                           " last_seen > now() - interval '1 minute'"),
                   1);
  int rq = -1, fl = -1;
  assert_int_equal(kf_store_reap(tdb.s, &rq, &fl), 0);
  /* w2's two, which did not beat, and w1's unlisted one. */
  assert_int_equal(rq, 3);
  assert_int_equal(fl, 0);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state = 'leased'"
                           " AND lease_owner = %lld", (long long)w1),
                   1);
  kf_store_grant_free(g1);
}

static void reap_requeues_then_fails(void **state) {
  (void)state;
  const char *kinds[] = {"eval", NULL};
  int64_t dc = 0;
  int64_t w = tdb_worker("w", &tdb_cpu, &dc, kinds);
  int64_t id;
  tdb_submit("eval", 1, 0, 0, 2, &id);
  int rq, fl;
  for (int attempt = 1; attempt <= 2; attempt++) {
    kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, kinds, 1);
    assert_int_equal(g->n, 1);
    assert_int_equal(g->tasks[0].attempt, attempt);
    kf_store_grant_free(g);
    /* Not expired yet: nothing to reap. */
    assert_int_equal(kf_store_reap(tdb.s, &rq, &fl), 0);
    assert_int_equal(rq + fl, 0);
    tdb_expire_leases();
    assert_int_equal(kf_store_reap(tdb.s, &rq, &fl), 0);
    assert_int_equal(rq, attempt == 1 ? 1 : 0);
    assert_int_equal(fl, attempt == 1 ? 0 : 1);
  }
  assert_string_equal(tdb_text("SELECT state FROM tasks"), "failed");
  assert_string_equal(tdb_text("SELECT last_error FROM tasks"),
                      "lease expired after 2 attempts");
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE lease_owner IS"
                           " NULL AND lease_expires IS NULL AND finished_at"
                           " IS NOT NULL"),
                   1);
  kf_lease_grant *g = tdb_lease1(tdb.s, w, dc, kinds, 1);
  assert_int_equal(g->n, 0);
  kf_store_grant_free(g);
  assert_int_equal(kf_store_reap(tdb.s, NULL, NULL), 0);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Not a pass/fail benchmark (sanitizers slow everything): prints the
 * lease+report rate for batches of 250 and checks the bookkeeping. */
static void batch_rate(void **state) {
  (void)state;
  const char *kinds[] = {"eval", NULL};
  int64_t dc = 0;
  enum { NW = 50, NTASK = 5000, PER = 5 };
  int64_t w[NW];
  for (int i = 0; i < NW; i++) w[i] = tdb_worker("w", &tdb_cpu, &dc, kinds);
  tdb_submit("eval", NTASK, 0, 0, 0, NULL);
  kf_lease_req rq[NW];
  for (int i = 0; i < NW; i++)
    rq[i] = (kf_lease_req){.worker_id = w[i], .device_class_id = dc,
                           .task_kinds = kinds, .n_task_kinds = 1,
                           .max_tasks = PER};
  static kf_report reps[NW * PER];
  kf_verdict v[NW * PER];
  char out[200];
  memset(out, 'x', sizeof out);
  size_t done = 0;
  double t0 = now_s(), t_lease = 0, t_report = 0;
  while (done < NTASK) {
    kf_lease_grant *g = NULL;
    double t1 = now_s();
    assert_int_equal(kf_store_lease(tdb.s, rq, NW, 30000, &g), 0);
    t_lease += now_s() - t1;
    assert_true(g->n > 0);
    for (size_t i = 0; i < g->n; i++)
      reps[i] = (kf_report){.worker_id = w[g->tasks[i].req_index],
                            .task_id = g->tasks[i].task_id,
                            .attempt = g->tasks[i].attempt,
                            .outcome = 1, .stage = "verify",
                            .output = out, .output_len = sizeof out,
                            .elapsed_us = 1234};
    size_t n = g->n;
    kf_store_grant_free(g);
    t1 = now_s();
    assert_int_equal(kf_store_report(tdb.s, reps, n, v), 0);
    t_report += now_s() - t1;
    for (size_t i = 0; i < n; i++)
      assert_int_equal(v[i], KF_VERDICT_ACCEPTED);
    done += n;
  }
  double dt = now_s() - t0;
  fprintf(stderr, "# %d tasks leased+reported in batches of %d: %.3f s,"
                  " %.0f tasks/s (lease %.3f s, report %.3f s)\n", NTASK, NW * PER, dt,
          NTASK / dt, t_lease, t_report);
  assert_int_equal(tdb_int("SELECT count(*) FROM tasks WHERE state='done'"),
                   NTASK);
  assert_int_equal(tdb_int("SELECT count(*) FROM results WHERE final"),
                   NTASK);
}

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("lease");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(lease_respects_max_tasks_and_payload, tdb_setup),
      cmocka_unit_test_setup(lease_respects_class_kind_priority, tdb_setup),
      cmocka_unit_test_setup(lease_batch_groups_and_spreads, tdb_setup),
      cmocka_unit_test_setup(concurrent_leases_are_exclusive, tdb_setup),
      cmocka_unit_test_setup(heartbeat_extends_leases, tdb_setup),
      cmocka_unit_test_setup(reap_requeues_then_fails, tdb_setup),
      cmocka_unit_test_setup(batch_rate, tdb_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
