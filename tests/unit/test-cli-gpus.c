/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-cli-gpus.c -- which GPUs `kf run` starts a worker for
 * (cli/cli_gpus.c, kf_cli__gpu_plan): every /dev/nvidiaN when
 * CUDA_VISIBLE_DEVICES is unset, else its entries as the CUDA runtime
 * reads them.  The decision needs no GPU, so it is tested on any machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// cmocka after the headers it needs
#include <cmocka.h>
#include <string.h>

#include "cli_internal.h"

static char ids[8][KF_CLI__GPU_ID_LEN];

static int plan(const char *vis, int ndev, int max) {
  memset(ids, 0, sizeof ids);
  return kf_cli__gpu_plan(vis, ndev, ids, max);
}

/* Unset: one worker per /dev/nvidiaN, capped. */
static void unset_counts_devices(void **state) {
  (void)state;
  assert_int_equal(plan(NULL, 0, 8), 0);
  assert_int_equal(plan(NULL, 1, 8), 1);
  assert_string_equal(ids[0], "0");
  assert_int_equal(plan(NULL, 4, 8), 4);
  assert_string_equal(ids[3], "3");
  assert_int_equal(plan(NULL, 16, 8), 8); /* KF_CLI__MAX_WORKERS-like cap */
}

/* Set by a scheduler: exactly its GPUs, in its order. */
static void visible_subset(void **state) {
  (void)state;
  assert_int_equal(plan("2,3", 4, 8), 2);
  assert_string_equal(ids[0], "2");
  assert_string_equal(ids[1], "3");
  assert_int_equal(plan(" 3 , 1 ", 4, 8), 2);
  assert_string_equal(ids[0], "3");
  assert_string_equal(ids[1], "1");
  /* Duplicates once. */
  assert_int_equal(plan("1,1,0", 2, 8), 2);
  /* UUIDs (ndev does not bound them). */
  assert_int_equal(plan("GPU-8f0c2f2a-1b2c-4d5e-9f00-aabbccddeeff,"
                        "MIG-GPU-1234/1/0", 1, 8), 2);
  assert_string_equal(ids[0], "GPU-8f0c2f2a-1b2c-4d5e-9f00-aabbccddeeff");
}

/* The runtime stops at the first entry that names no device. */
static void visible_stops_at_invalid(void **state) {
  (void)state;
  assert_int_equal(plan("", 4, 8), 0);
  assert_int_equal(plan("-1", 4, 8), 0);
  assert_int_equal(plan("none", 4, 8), 0);
  assert_int_equal(plan("0,-1,1", 4, 8), 1);
  assert_int_equal(plan("1,7,2", 4, 8), 1); /* 7: no such device */
  assert_int_equal(plan("0,,1", 4, 8), 1);
  assert_int_equal(plan("0,1x", 4, 8), 1);
  /* Without a device count (no /dev entries visible) indices pass. */
  assert_int_equal(plan("5,6", 0, 8), 2);
}

static void visible_capped(void **state) {
  (void)state;
  assert_int_equal(plan("0,1,2,3,4,5", 8, 3), 3);
  assert_string_equal(ids[2], "2");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unset_counts_devices),
      cmocka_unit_test(visible_subset),
      cmocka_unit_test(visible_stops_at_invalid),
      cmocka_unit_test(visible_capped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
