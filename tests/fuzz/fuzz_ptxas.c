/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_ptxas.c -- libFuzzer target: the parser of ptxas's
 * resource report (harness/cuda/usage.c), which reads compiler output the
 * candidate's source steers (kernel names, and lines its own #warning or
 * #error text can imitate).
 *
 * The input is the report text (cut at its first NUL, as the harness reads
 * it); the parser must stay within `max` kernels and keep every name
 * terminated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_eval.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  kf_harness_kres out[4];
  int n = kf_harness__parse_resource_usage(text, out, 4);
  if (n < 0 || n > 4) abort();
  for (int i = 0; i < n; i++)
    if (memchr(out[i].kernel, '\0', sizeof out[i].kernel) == NULL) abort();
  /* max 0: nothing may be written */
  if (kf_harness__parse_resource_usage(text, NULL, 0) != 0) abort();
  free(text);
  return 0;
}
