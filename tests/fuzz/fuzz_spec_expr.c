/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_spec_expr.c -- libFuzzer target: spec expressions
 * (common/spec_expr.c), the integer arithmetic a spec writes its shapes,
 * flops and bytes in.
 *
 * Input: 8 bytes of values for the params M, N and K (each an int64 made
 * from 8 bytes would mostly be huge, so each value is one signed byte
 * scaled by a shift from the next), then the expression text.  It is
 * evaluated once for syntax only (values NULL) and once with values; a
 * syntax-only refusal must also refuse with values, and every refusal has
 * a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spec_internal.h"

static const char names[3][32] = {"M", "N", "K"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 6 || size > 4096) return 0;
  int64_t values[3];
  for (int i = 0; i < 3; i++) {
    int64_t v = (int8_t)data[2 * i];
    values[i] = (int64_t)((uint64_t)v << (data[2 * i + 1] % 63));
  }
  char *expr = malloc(size - 6 + 1);
  if (!expr) return 0;
  memcpy(expr, data + 6, size - 6);
  expr[size - 6] = '\0';
  char why[256];
  int64_t out = -1;
  why[0] = '\0';
  int syn = kf_spec__expr(expr, names, 3, NULL, &out, why, sizeof why);
  if (syn != 0 && !why[0]) abort();
  if (syn == 0 && out != 0) abort(); /* syntax-only sets 0 */
  why[0] = '\0';
  int rc = kf_spec__expr(expr, names, 3, values, &out, why, sizeof why);
  if (rc != 0 && !why[0]) abort();
  if (syn != 0 && rc == 0) abort();
  free(expr);
  return 0;
}
