/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-worker-checksum.c -- the "checksum" task kind honours
 * its task's timeout_ms (worker/tasks.c).
 *
 * A 500 ms task once ran 19 s: the sleep and the hashing ignored the
 * budget.  Here a task that would sleep ten minutes, and one that would
 * hash for hours, must both end TIMEOUT (on the old code the first one
 * outlives the test's own ctest timeout).  Nothing is timed against a
 * wall-clock bound: the outcome says whether the budget was honoured.
 * A task within its budget still computes the right checksum.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "outcome.h"
#include "tasks.h"

static kf_task_exec run(const char *payload, uint32_t timeout_ms) {
  kf_task_exec t = {.task_id = 1, .attempt = 1, .kind = "checksum",
                    .payload = payload, .payload_len = strlen(payload),
                    .timeout_ms = timeout_ms};
  kf_task_checksum(&t);
  return t;
}

static void sleep_past_budget_times_out(void **state) {
  (void)state;
  kf_task_exec t = run("{\"data\": \"x\", \"sleep_ms\": 600000}", 500);
  assert_int_equal(t.outcome, KF_OUTCOME_TIMEOUT);
  assert_string_equal(t.stage, "checksum");
  assert_non_null(strstr(t.reason, "after the task's 500 ms"));
  assert_null(t.output);
}

static void hashing_past_budget_times_out(void **state) {
  (void)state;
  /* 1e6 x 100 KB: about 1e11 bytes of FNV-1a, hours on one core. */
  size_t n = 100000;
  char *p = malloc(n + 64);
  assert_non_null(p);
  int o = snprintf(p, 64, "{\"repeat\": 1000000, \"data\": \"");
  memset(p + o, 'a', n);
  strcpy(p + o + n, "\"}");
  kf_task_exec t = run(p, 500);
  free(p);
  assert_int_equal(t.outcome, KF_OUTCOME_TIMEOUT);
  assert_null(t.output);
}

static void within_budget_is_right(void **state) {
  (void)state;
  /* FNV-1a 64 of "abab": a short sleep, well within a generous budget. */
  kf_task_exec t = run("{\"data\": \"ab\", \"repeat\": 2, \"sleep_ms\": 5}",
                       600000);
  assert_int_equal(t.outcome, KF_OUTCOME_OK);
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char *c = "abab"; *c; c++) {
    h ^= (unsigned char)*c;
    h *= 0x100000001b3ull;
  }
  char want[64];
  snprintf(want, sizeof want, "{\"fnv1a64\": \"%016llx\"}",
           (unsigned long long)h);
  assert_int_equal(t.output_len, strlen(want));
  assert_memory_equal(t.output, want, t.output_len);
  free(t.output);
  /* timeout_ms 0: no budget at all. */
  t = run("{\"data\": \"ab\", \"repeat\": 2}", 0);
  assert_int_equal(t.outcome, KF_OUTCOME_OK);
  free(t.output);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sleep_past_budget_times_out),
      cmocka_unit_test(hashing_past_budget_times_out),
      cmocka_unit_test(within_budget_is_right),
  };
  return cmocka_run_group_tests_name("worker-checksum", tests, NULL, NULL);
}
