/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_elf_cuda.c -- libFuzzer target: the CUDA link check
 * (harness/cuda/elfcheck.c): the host ELF, its .nv_fatbin and the cubins
 * inside, and the writable-state ranges it computes for the runner.
 *
 * Each input is checked without a baseline and then against the first
 * pass's own result (a candidate identical to its baseline), so the
 * comparisons and the mutable-range code run too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_eval.h"
#include "outcome.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  static kf_harness_cuda_elf base, info; /* large: off the stack */
  char why[512];
  why[0] = '\0';
  int rc = kf_harness__elf_check_cuda(buf, size, NULL, &base, why, sizeof why);
  if (rc != 0 && (rc != KF_OUTCOME_LINK_REJECTED || !why[0])) abort();
  if (rc == 0) {
    why[0] = '\0';
    rc = kf_harness__elf_check_cuda(buf, size, &base, &info, why, sizeof why);
    if (rc != 0 && (rc != KF_OUTCOME_LINK_REJECTED || !why[0])) abort();
    if (info.n_mut < 0 || info.n_mut > KF_HARNESS_CUDA_MAX_MUT) abort();
  }
  free(buf);
  return 0;
}
