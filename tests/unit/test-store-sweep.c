/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-sweep.c -- db/store_sweep.c on a real PostgreSQL:
 * a sweep is created once and continued by name, problems and labels are
 * added in order, a label is bound to one model, baselines replace the
 * label's earlier ones, and every refusal (another backend, a label on
 * another model, a baseline of a problem the sweep lacks) writes nothing
 * at all -- not even the new problems given in the same call.
 */
#include "test-store-fixture.h"

#include "store_sweep.h"

static int group_setup(void **state) {
  (void)state;
  return tdb_group_setup("sweep");
}

static int setup(void **state) {
  (void)state;
  if (kf_store__admin_exec(tdb.s,
                           "TRUNCATE sweep_baselines, sweep_campaigns,"
                           " sweep_classes, sweep_problems, sweeps"
                           " RESTART IDENTITY CASCADE", NULL, 0))
    return -1;
  return tdb_setup(state);
}

static const char *const P2[] = {"vecsum", "softmax"};
static const char *const L2[] = {"cpu-a", "cpu-b"};

static int64_t open_ok(const char *const *p, size_t np,
                       const char *const *l, size_t nl,
                       const kf_sweep_bind *b, bool *created) {
  int64_t id = 0;
  int rc = kf_store_sweep_open(tdb.s, "s1", 1, p, np, l, nl, true, b, &id,
                               created);
  if (rc) fail_msg("open: %s", kf_store_errmsg(tdb.s));
  return id;
}

static void test_open_continue_find(void **state) {
  (void)state;
  bool created = false;
  int64_t id = open_ok(P2, 2, L2, 2, NULL, &created);
  assert_true(created);
  /* Again, with one new problem and one new label: added after. */
  const char *p3[] = {"gemm", "vecsum"};
  const char *l3[] = {"cpu-c"};
  assert_int_equal(open_ok(p3, 2, l3, 1, NULL, &created), id);
  assert_false(created);
  assert_string_equal(tdb_text("SELECT string_agg(problem, ',' ORDER BY"
                               " position) FROM sweep_problems"),
                      "vecsum,softmax,gemm");
  assert_string_equal(tdb_text("SELECT string_agg(label, ',' ORDER BY"
                               " position) FROM sweep_classes"),
                      "cpu-a,cpu-b,cpu-c");
  int64_t f = 0;
  assert_int_equal(kf_store_sweep_find(tdb.s, "s1", &f), 0);
  assert_int_equal(f, id);
  char key[24];
  snprintf(key, sizeof key, "%lld", (long long)id);
  assert_int_equal(kf_store_sweep_find(tdb.s, key, &f), 0);
  assert_int_equal(f, id);
  assert_int_equal(kf_store_sweep_find(tdb.s, "nope", &f), KF_ENOTFOUND);
  assert_non_null(strstr(kf_store_errmsg(tdb.s), "1 s1"));
  assert_int_equal(kf_store_sweep_find(tdb.s, "77", &f), KF_ENOTFOUND);
  /* Without create, an unknown name is not made. */
  assert_int_equal(kf_store_sweep_open(tdb.s, "s2", 1, P2, 2, L2, 2, false,
                                       NULL, &f, NULL), KF_ENOTFOUND);
  assert_int_equal(tdb_int("SELECT count(*) FROM sweeps"), 1);
}

static void test_refusals_write_nothing(void **state) {
  (void)state;
  int64_t dca = 0, dcb = 0;
  kf_device_class a = {.kind = 1, .model = "cpu-a"};
  kf_device_class b = {.kind = 1, .model = "cpu-b"};
  tdb_worker("wa", &a, &dca, NULL);
  tdb_worker("wb", &b, &dcb, NULL);
  kf_sweep_bind ba = {.label = "cpu-a", .model = "cpu-a",
                      .device_class_id = dca, .ceiling_gbps = 12.5};
  int64_t id = open_ok(P2, 2, L2, 2, &ba, NULL);
  assert_string_equal(tdb_text("SELECT model || ' ' || device_class_id ||"
                               " ' ' || ceiling_gbps FROM sweep_classes"
                               " WHERE label = 'cpu-a'"), "cpu-a 1 12.5");
  /* The same binding again is fine (and keeps the ceiling). */
  ba.ceiling_gbps = 0;
  assert_int_equal(open_ok(P2, 2, L2, 2, &ba, NULL), id);
  assert_int_equal(tdb_int("SELECT ceiling_gbps FROM sweep_classes WHERE"
                           " label = 'cpu-a'"), 12);

  /* cpu-a on another model, with a new problem and label: nothing. */
  const char *p3[] = {"gemm"};
  const char *l3[] = {"cpu-z"};
  kf_sweep_bind bad = {.label = "cpu-a", .model = "cpu-b",
                       .device_class_id = dcb};
  int64_t f = 0;
  assert_int_equal(kf_store_sweep_open(tdb.s, "s1", 1, p3, 1, l3, 1, true,
                                       &bad, &f, NULL), KF_EINVAL);
  assert_non_null(strstr(kf_store_errmsg(tdb.s), "ran on 'cpu-a' before"));
  /* Another backend: nothing either. */
  assert_int_equal(kf_store_sweep_open(tdb.s, "s1", 2, p3, 1, l3, 1, true,
                                       NULL, &f, NULL), KF_EINVAL);
  assert_non_null(strstr(kf_store_errmsg(tdb.s), "cpu problems"));
  assert_int_equal(tdb_int("SELECT count(*) FROM sweep_problems"), 2);
  assert_int_equal(tdb_int("SELECT count(*) FROM sweep_classes"), 2);
  assert_string_equal(tdb_text("SELECT model FROM sweep_classes WHERE"
                               " label = 'cpu-a'"), "cpu-a");

  /* Baselines: a batch with a problem the sweep lacks writes nothing. */
  kf_sweep_baseline bl[] = {
      {.problem = "vecsum", .eager_ms = 1.5, .compile_ms = 0.5,
       .line = "{\"problem\": \"vecsum\"}"},
      {.problem = "gemm", .eager_ms = 2, .line = "{}"},
  };
  assert_int_equal(kf_store_sweep_baselines_put(tdb.s, id, "cpu-a", bl, 2,
                                                "f.jsonl"), KF_EINVAL);
  assert_int_equal(tdb_int("SELECT count(*) FROM sweep_baselines"), 0);
  assert_int_equal(kf_store_sweep_baselines_put(tdb.s, id, "cpu-a", bl, 1,
                                                "f.jsonl"), 0);
  /* Replaced, compile failed this time. */
  bl[0].eager_ms = 3;
  bl[0].compile_ms = 0;
  assert_int_equal(kf_store_sweep_baselines_put(tdb.s, id, "cpu-a", bl, 1,
                                                "g.jsonl"), 0);
  assert_string_equal(tdb_text("SELECT eager_ms || ' ' ||"
                               " COALESCE(compile_ms::text, 'null') || ' ' ||"
                               " source FROM sweep_baselines"),
                      "3 null g.jsonl");
}

static void test_cells(void **state) {
  (void)state;
  int64_t dca = 0;
  kf_device_class a = {.kind = 1, .model = "cpu-a"};
  tdb_worker("wa", &a, &dca, NULL);
  kf_sweep_bind ba = {.label = "cpu-a", .model = "cpu-a",
                      .device_class_id = dca};
  int64_t id = open_ok(P2, 2, L2, 2, &ba, NULL);
  int64_t cid = tdb_int("INSERT INTO campaigns (name, problem) VALUES"
                        " ('c', 'softmax') RETURNING id");
  int64_t got = -1;
  assert_int_equal(kf_store_sweep_campaign(tdb.s, id, "softmax", "cpu-a",
                                           &got), 0);
  assert_int_equal(got, 0);
  assert_int_equal(kf_store_sweep_add_campaign(tdb.s, id, "softmax", "cpu-a",
                                               cid), 0);
  assert_int_equal(kf_store_sweep_campaign(tdb.s, id, "softmax", "cpu-a",
                                           &got), 0);
  assert_int_equal(got, cid);
  /* One campaign per cell: a second is refused by the primary key. */
  int64_t cid2 = tdb_int("INSERT INTO campaigns (name, problem) VALUES"
                         " ('d', 'softmax') RETURNING id");
  assert_int_not_equal(kf_store_sweep_add_campaign(tdb.s, id, "softmax",
                                                   "cpu-a", cid2), 0);
  kf_sweep_baseline bl = {.problem = "softmax", .eager_ms = 2,
                          .compile_ms = 1, .line = "{}"};
  assert_int_equal(kf_store_sweep_baselines_put(tdb.s, id, "cpu-a", &bl, 1,
                                                "t.jsonl"), 0);

  kf_sweep *w = NULL;
  assert_int_equal(kf_store_sweep_get(tdb.s, id, &w), 0);
  assert_string_equal(w->name, "s1");
  assert_int_equal(w->backend, 1);
  assert_int_equal(w->n_problems, 2);
  assert_int_equal(w->n_labels, 2);
  assert_int_equal(w->n, 4);
  /* problem-major, in the sweep's order */
  const char *want[][2] = {{"vecsum", "cpu-a"}, {"vecsum", "cpu-b"},
                           {"softmax", "cpu-a"}, {"softmax", "cpu-b"}};
  for (size_t i = 0; i < 4; i++) {
    assert_string_equal(w->v[i].problem, want[i][0]);
    assert_string_equal(w->v[i].label, want[i][1]);
  }
  assert_int_equal(w->v[2].campaign_id, cid);
  assert_true(w->v[2].has_baseline);
  assert_true(w->v[2].eager_ms == 2 && w->v[2].compile_ms == 1);
  assert_string_equal(w->v[2].model, "cpu-a");
  assert_int_equal(w->v[2].device_class_id, dca);
  assert_int_equal(w->v[0].campaign_id, 0);
  assert_false(w->v[0].has_baseline);
  assert_string_equal(w->v[1].model, "");
  free(w);
  assert_int_equal(kf_store_sweep_get(tdb.s, id + 5, &w), KF_ENOTFOUND);

  /* The worker lookup kf sweep waits on. */
  int64_t dc = 0;
  kf_device_class d;
  assert_int_equal(kf_store_sweep_worker_class(tdb.s, "wa", 0, &dc, &d), 0);
  assert_int_equal(dc, dca);
  assert_string_equal(d.model, "cpu-a");
  assert_int_equal(kf_store_sweep_worker_class(tdb.s, "nobody", 0, &dc, &d),
                   0);
  assert_int_equal(dc, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_open_continue_find, setup),
      cmocka_unit_test_setup(test_refusals_write_nothing, setup),
      cmocka_unit_test_setup(test_cells, setup),
  };
  return cmocka_run_group_tests(tests, group_setup, tdb_group_teardown);
}
