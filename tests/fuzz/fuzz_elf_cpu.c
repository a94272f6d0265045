/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_elf_cpu.c -- libFuzzer target: the CPU link check
 * (harness/cpu/elfcheck.c), which reads a shared object the candidate's
 * compiler produced -- bytes the candidate's source steers.
 *
 * Each input is checked twice: without a baseline (how the harness reads
 * its own baseline) and against a fixed baseline (how it reads a
 * candidate).  Either must end in 0 or LINK_REJECTED with a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "outcome.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* the harness reads the .so into a malloc'd buffer of exactly its size */
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  kf_harness_elf_info base, info;
  char why[512];
  why[0] = '\0';
  int rc = kf_harness__elf_check(buf, size, NULL, &base, why, sizeof why);
  if (rc != 0 && (rc != KF_OUTCOME_LINK_REJECTED || !why[0])) abort();
  if (rc != 0) memset(&base, 0, sizeof base);
  base.init_size = 4;
  why[0] = '\0';
  rc = kf_harness__elf_check(buf, size, &base, &info, why, sizeof why);
  if (rc != 0 && (rc != KF_OUTCOME_LINK_REJECTED || !why[0])) abort();
  free(buf);
  return 0;
}
