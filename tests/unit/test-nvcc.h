/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-nvcc.h -- whether the CUDA compile tests can run: nvcc
 * looked up the way the harness does (kf_harness__nvcc_path in
 * harness/cuda/compile.c: $KF_NVCC, /usr/local/cuda/bin/nvcc, then PATH),
 * so that a test skips exactly where the harness would find no nvcc.
 * Include after <cmocka.h>.
 */
#ifndef KF_TEST_NVCC_H
#define KF_TEST_NVCC_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static __attribute__((unused)) bool test_find_nvcc(char *out, size_t outlen) {
  const char *env = getenv("KF_NVCC");
  if (env && *env) {
    snprintf(out, outlen, "%s", env);
    return access(out, X_OK) == 0;
  }
  snprintf(out, outlen, "/usr/local/cuda/bin/nvcc");
  if (access(out, X_OK) == 0) return true;
  for (const char *p = getenv("PATH"); p && *p;) {
    size_t n = strcspn(p, ":");
    snprintf(out, outlen, "%.*s/nvcc", n ? (int)n : 1, n ? p : ".");
    if (access(out, X_OK) == 0) return true;
    p += n;
    if (*p == ':') p++;
  }
  return false;
}

static __attribute__((unused)) bool have_nvcc(void) {
  char path[1024];
  return test_find_nvcc(path, sizeof path);
}

#define NEED_NVCC()                                                           \
  do {                                                                        \
    if (!have_nvcc()) {                                                       \
      fprintf(stderr, "SKIPPED: no nvcc\n");                                  \
      skip();                                                                 \
    }                                                                         \
  } while (0)

#endif
