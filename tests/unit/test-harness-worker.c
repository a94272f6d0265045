/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-harness-worker.c -- the worker's "eval" task kind
 * (worker/task_eval.c, linked in by tests/CMakeLists.txt) driving the real
 * kf-harness of this build tree: ceilings, the identity, an honest eval,
 * the task's wall-clock limit (a timing-dependent TIMEOUT), a reference
 * too slow for the task (spec_error, named by the harness at the
 * deadline the worker gives it), a malformed payload and a missing
 * harness.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "log.h"
#include "tasks.h"
#include "util.h"
#include "test-harness-fixture.h"

static void use_build_harness(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/kf-harness",
           getenv("KF_BIN_DIR") ? getenv("KF_BIN_DIR") : ".");
  setenv("KF_HARNESS", path, 1);
}

static void *pack_request(const char *spec, const char *ref, const char *src,
                          size_t *len) {
  Kernelfleet__EvalRequest req = KERNELFLEET__EVAL_REQUEST__INIT;
  req.problem_spec.data = (uint8_t *)spec;
  req.problem_spec.len = strlen(spec);
  req.source = (char *)src;
  req.reference_source = (char *)ref;
  req.seed = 42;
  req.language = "c";
  *len = kernelfleet__eval_request__get_packed_size(&req);
  void *buf = malloc(*len);
  kernelfleet__eval_request__pack(&req, buf);
  return buf;
}

static void test_ceilings(void **state) {
  (void)state;
  use_build_harness();
  kf_ceilings c;
  assert_int_equal(kf_task_eval_ceilings(&c), 0);
  assert_true(c.copy_gbps > 0.1);
  assert_true(c.read_gbps > 0.1);
  assert_true(c.write_gbps > 0.1);
  assert_true(c.gflops > 0.1);
}

/* The worker's identity is what `kf-harness identity` prints. */
static void test_identity(void **state) {
  (void)state;
  use_build_harness();
  assert_int_equal(kf_task_eval_identity(), 0);
  const char *b = kf_task_eval_harness_build();
  assert_int_equal(strlen(b), 64);
  char cmd[1200], out[4096] = "";
  snprintf(cmd, sizeof cmd, "'%s' identity", getenv("KF_HARNESS"));
  FILE *f = popen(cmd, "r");
  assert_non_null(f);
  size_t n = fread(out, 1, sizeof out - 1, f);
  out[n] = '\0';
  assert_int_equal(pclose(f), 0);
  assert_non_null(strstr(out, b));
  const char *cc = kf_task_eval_toolchain(false);
  assert_true(*cc);
  assert_non_null(strstr(out, cc));
}

static void test_eval_ok(void **state) {
  (void)state;
  use_build_harness();
  kf_task_eval_set_ceilings(&(kf_ceilings){0});
  size_t len;
  void *p = pack_request(SCALE_SPEC, SCALE_REF, SCALE_REF, &len);
  kf_task_exec t = {.task_id = 7, .attempt = 1, .kind = "eval", .payload = p,
                    .payload_len = len, .timeout_ms = 120000};
  kf_task_eval(&t);
  free(p);
  fprintf(stderr, "%s / %s / %s\n", kf_outcome_name(t.outcome), t.stage,
          t.reason);
  assert_int_equal(t.outcome, KF_OUTCOME_OK);
  assert_string_equal(t.stage, "time");
  assert_non_null(strstr(t.reason, "reference"));
  Kernelfleet__EvalResult *r =
      kernelfleet__eval_result__unpack(NULL, t.output_len, t.output);
  assert_non_null(r);
  assert_int_equal(r->outcome, KF_OUTCOME_OK);
  assert_true(r->time_ns_median > 0);
  kernelfleet__eval_result__free_unpacked(r, NULL);
  free(t.output);
}

static void test_task_timeout(void **state) {
  (void)state;
  use_build_harness();
  size_t len;
  void *p = pack_request(SCALE_SPEC, SCALE_REF,
                         "#include \"kf_candidate.h\"\n"
                         "int kf_launch(const kf_args *a) {\n"
                         "  (void)a; for (volatile int k = 0;; k++) {}\n}\n",
                         &len);
  kf_task_exec t = {.task_id = 8, .attempt = 1, .kind = "eval", .payload = p,
                    .payload_len = len, .timeout_ms = 2500};
  uint64_t t0 = kf_now_ms();
  kf_task_eval(&t);
  uint64_t took = kf_now_ms() - t0;
  free(p);
  /* What shows the task's deadline was enforced is who ended the eval, not
   * how fast: only the worker's deadline writes "after the task's 2500 ms;
   * killed".  Without it the harness's own per-call timeout (10 s) would
   * end the endless kf_launch instead, with its own reason, so no bound
   * sized for an idle machine is needed.  Never early: */
  assert_true(took >= 2500);
  /* An EvalResult that says the verdict depended on timing: it is never
   * reused, the key is measured again. */
  Kernelfleet__EvalResult *r =
      kernelfleet__eval_result__unpack(NULL, t.output_len, t.output);
  assert_non_null(r);
  assert_int_equal(r->outcome, KF_OUTCOME_TIMEOUT);
  assert_true(r->timing_dependent);
  kernelfleet__eval_result__free_unpacked(r, NULL);
  free(t.output);
  assert_int_equal(t.outcome, KF_OUTCOME_TIMEOUT);
  assert_non_null(strstr(t.reason, "the task's 2500 ms; killed"));
}

/* A reference too slow for the task's time: the worker gives the
 * harness its deadline (the task's time less a quarter), and the harness
 * names the reference -- spec_error, timing-dependent -- where before the
 * worker killed it at the task's time and the candidate got TIMEOUT.
 * The reference sleeps 0.8 s a call whatever the load, the task is 20 s:
 * verify's 20 calls and the timed repetitions need more than the 15 s
 * deadline; the worker's kill stays 5 s past it. */
static void test_slow_reference_named(void **state) {
  (void)state;
  use_build_harness();
  size_t len;
  void *p = pack_request(SCALE_SPEC, SLEEPY_SCALE_REF,
                         SCALE_REF, &len);
  kf_task_exec t = {.task_id = 9, .attempt = 1, .kind = "eval", .payload = p,
                    .payload_len = len, .timeout_ms = 20000};
  kf_task_eval(&t);
  free(p);
  fprintf(stderr, "%s / %s / %s\n", kf_outcome_name(t.outcome), t.stage,
          t.reason);
  assert_string_equal(kf_outcome_name(t.outcome),
                      kf_outcome_name(KF_OUTCOME_SPEC_ERROR));
  assert_non_null(strstr(t.reason, "the reference is too slow for this time"));
  Kernelfleet__EvalResult *r =
      kernelfleet__eval_result__unpack(NULL, t.output_len, t.output);
  assert_non_null(r);
  assert_true(r->timing_dependent);
  kernelfleet__eval_result__free_unpacked(r, NULL);
  free(t.output);
}

static void test_bad_payload(void **state) {
  (void)state;
  use_build_harness();
  kf_task_exec t = {.task_id = 9, .attempt = 1, .kind = "eval",
                    .payload = "\xff\xff\xff", .payload_len = 3,
                    .timeout_ms = 20000};
  kf_task_eval(&t);
  free(t.output);
  assert_int_equal(t.outcome, KF_OUTCOME_SPEC_ERROR);
  assert_non_null(strstr(t.reason, "malformed"));
}

static void test_missing_harness(void **state) {
  (void)state;
  setenv("KF_HARNESS", "/nonexistent/kf-harness", 1);
  kf_task_exec t = {.task_id = 10, .attempt = 1, .kind = "eval",
                    .payload = "", .payload_len = 0, .timeout_ms = 5000};
  kf_task_eval(&t);
  free(t.output);
  assert_int_equal(t.outcome, KF_OUTCOME_INFRA_ERROR);
  assert_true(kf_outcome_retryable(t.outcome));
}

int main(void) {
  kf_log_init('t', KF_LOG_WARN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ceilings),
      cmocka_unit_test(test_identity),
      cmocka_unit_test(test_eval_ok),
      cmocka_unit_test(test_task_timeout),
      cmocka_unit_test(test_slow_reference_named),
      cmocka_unit_test(test_bad_payload),
      cmocka_unit_test(test_missing_harness),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
