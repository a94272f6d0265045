/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-proposer-plan.c -- the proposer's choice of evolution
 * operators (kf_proposer_plan), --llm-ops (kf_proposer_ops_parse) and the
 * prescriptions per diagnosed bound (kf_proposer_prescription), on
 * contexts built by hand: pure functions, no coordinator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "proposer.h"

/* Two classes: A with two kernels, B with one. */
static kf_proposer_kernel K[3];
static kf_proposer_context C;

static void ctx_two_classes(void) {
  memset(K, 0, sizeof K);
  memset(&C, 0, sizeof C);
  const char *cls[] = {"cpu cpu-a (x86-64-v3)", "cpu cpu-a (x86-64-v3)",
                       "cpu cpu-b (x86-64-v3)"};
  for (int i = 0; i < 3; i++) {
    K[i].candidate_id = 10 + i;
    K[i].template_name = "";
    K[i].source = "int kf_launch(void) { return 0; }";
    K[i].proposer = "evolution";
    snprintf(K[i].device, sizeof K[i].device, "%s", cls[i]);
    K[i].roofline_fraction = 0.5;
  }
  C.best = K;
  C.n_best = 3;
  C.n_devices = 2;
  snprintf(C.device_class[0], sizeof C.device_class[0], "%s", cls[0]);
  snprintf(C.devices[0], sizeof C.devices[0], "%s: facts A", cls[0]);
  snprintf(C.device_class[1], sizeof C.device_class[1], "%s", cls[2]);
  snprintf(C.devices[1], sizeof C.devices[1], "%s: facts B", cls[2]);
}

static void test_ops_parse(void **state) {
  (void)state;
  uint32_t m = 0;
  char err[160];
  assert_int_equal(kf_proposer_ops_parse("port,improve", &m, err, sizeof err),
                   0);
  assert_int_equal(m, (1u << KF_PROPOSE_PORT) | (1u << KF_PROPOSE_IMPROVE));
  assert_int_equal(kf_proposer_ops_parse("prescribe", &m, err, sizeof err), 0);
  assert_int_equal(m, 1u << KF_PROPOSE_PRESCRIBE);
  assert_int_equal(kf_proposer_ops_parse("improve,mutate", &m, err,
                                         sizeof err), KF_EINVAL);
  assert_non_null(strstr(err, "unknown operator 'mutate'"));
  assert_int_equal(kf_proposer_ops_parse("improvement", &m, err, sizeof err),
                   KF_EINVAL);
  assert_int_equal(kf_proposer_ops_parse("", &m, err, sizeof err), KF_EINVAL);
  assert_non_null(strstr(err, "no operator"));
  assert_int_equal(kf_proposer_ops_parse(",", &m, err, sizeof err), KF_EINVAL);
}

static void test_plan_each_operator(void **state) {
  (void)state;
  ctx_two_classes();
  kf_proposer_task t[16];
  /* one operator at a time: each gets its kernels */
  for (uint32_t r = 0; r < 4; r++) {
    size_t n = kf_proposer_plan(&C, r, 1u << KF_PROPOSE_COMBINE, t, 3);
    assert_true(n >= 1);
    for (size_t i = 0; i < n; i++) {
      assert_int_equal(t[i].op, KF_PROPOSE_COMBINE);
      /* only class A has two kernels */
      assert_ptr_equal(t[i].a, &K[0]);
      assert_ptr_equal(t[i].b, &K[1]);
    }
    n = kf_proposer_plan(&C, r, 1u << KF_PROPOSE_PORT, t, 2);
    assert_int_equal(n, 2);
    /* the rotation visits both classes, each ported to the other */
    assert_true(t[0].a != t[1].a);
    for (size_t i = 0; i < n; i++) {
      assert_int_equal(t[i].op, KF_PROPOSE_PORT);
      assert_true(t[i].a == &K[0] || t[i].a == &K[2]);
      assert_non_null(strstr(t[i].device, t[i].a == &K[0] ? "facts B"
                                                          : "facts A"));
    }
    n = kf_proposer_plan(&C, r, 1u << KF_PROPOSE_PRESCRIBE, t, 1);
    assert_int_equal(n, 1);
    assert_int_equal(t[0].op, KF_PROPOSE_PRESCRIBE);
    assert_true(t[0].prescription[0] != '\0');
  }
  /* all operators: each of the four within one round of four */
  size_t n = kf_proposer_plan(&C, 0, KF_PROPOSE_ALL, t, 4);
  assert_int_equal(n, 4);
  bool seen[4] = {false};
  for (size_t i = 0; i < n; i++) seen[t[i].op] = true;
  assert_true(seen[0] && seen[1] && seen[2] && seen[3]);
  /* one class: nothing to port to, nothing planned */
  C.n_best = 2;
  C.n_devices = 1;
  assert_int_equal(kf_proposer_plan(&C, 0, 1u << KF_PROPOSE_PORT, t, 2), 0);
  /* nothing measured: improve the reference, whatever the mask */
  C.n_best = 0;
  n = kf_proposer_plan(&C, 0, 1u << KF_PROPOSE_PORT, t, 2);
  assert_int_equal(n, 2);
  assert_int_equal(t[0].op, KF_PROPOSE_IMPROVE);
  assert_null(t[0].a);
}

static void test_prescription_per_bound(void **state) {
  (void)state;
  ctx_two_classes();
  kf_proposer_kernel *k = &K[0];
  char out[1024];
  static const struct {
    const char *bound;
    double bw, fl;
    const char *detail, *want1, *want2;
  } cases[] = {
      {"memory", 0.981, 0.1, "memory-bound at 98.1% of the measured"
       " bandwidth", "98.1% of the measured bandwidth: the ceiling is"
       " reached", "moving fewer bytes"},
      {"memory", 0.87, 0.1, "memory-bound at 87.0% of the measured"
       " bandwidth", "87.0% of the measured bandwidth: close the gap",
       "in flight"},
      {"compute", 0.2, 0.75, "compute-bound at 75.0% of the measured FLOP"
       " rate", "compute-bound at 75.0% of the measured FLOP rate",
       "fused multiply-adds"},
      {"latency", 0.3, 0.05, "occupancy/latency-bound: 30.0% of the"
       " measured bandwidth", "(30.0% of the bandwidth, 5.0% of the FLOP"
       " rate)", "Expose more parallelism"},
      {"launch", 0.01, 0.0, "launch-bound: 800 ns per call",
       "launch-bound", "one launch"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    k->bound = cases[i].bound;
    k->bw_frac = cases[i].bw;
    k->fl_frac = cases[i].fl;
    k->diagnosis = cases[i].detail;
    snprintf(k->profile, sizeof k->profile, "profile (ncu): DRAM throughput"
             " 85.0%% of peak");
    kf_proposer_prescription(k, out, sizeof out);
    if (!strstr(out, cases[i].want1) || !strstr(out, cases[i].want2) ||
        !strstr(out, cases[i].detail))
      fail_msg("%s %.3f: %s", cases[i].bound, cases[i].bw, out);
    if (strcmp(cases[i].bound, "launch") &&
        !strstr(out, "DRAM throughput 85.0% of peak"))
      fail_msg("%s: the profile is not quoted: %s", cases[i].bound, out);
  }
  /* no diagnosis: from the roofline fraction */
  k->bound = NULL;
  k->diagnosis = NULL;
  k->roofline_fraction = 0.4;
  kf_proposer_prescription(k, out, sizeof out);
  assert_non_null(strstr(out, "40% of the roofline floor"));
  /* a small buffer is cut, never overrun */
  char tiny[16];
  kf_proposer_prescription(k, tiny, sizeof tiny);
  assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ops_parse),
      cmocka_unit_test(test_plan_each_operator),
      cmocka_unit_test(test_prescription_per_bound),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
