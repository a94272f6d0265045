/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/info_cmd.c -- `kf-harness cuda-info [--device N]
 * [--no-measure]`: one GPU's identity and measured ceilings as JSON.
 *
 * This process never touches CUDA: it runs `kf-harness-cuda info` (the
 * one program of ours linked with the CUDA runtime, harness/cuda/info.c)
 * as a child with our environment (CUDA_VISIBLE_DEVICES, library paths),
 * adds the nvcc version the compile stage will use, and prints the merged
 * object.  Exit 0 with the object; 1 with {"error": "..."} when there is
 * no CUDA build, no device, or the child fails.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cuda_eval.h"
#include "internal.h"
#include "util.h"

/* Prints {"error": MSG}.  The message is as long as it needs to be (it
 * may hold a path of PATH_MAX bytes): a fixed buffer would cut it, which
 * gcc -O3 rightly refuses under -Werror=format-truncation. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = NULL;
  if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
  va_end(ap);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "error", msg ? msg : "out of memory");
  free(msg);
  char *s = cJSON_Print(j);
  printf("%s\n", s ? s : "{\"error\": \"?\"}");
  free(s);
  cJSON_Delete(j);
}

/* "13.0.48" from `nvcc --version` ("Cuda compilation tools, release 13.0,
 * V13.0.48"); empty when unknown. */
static void nvcc_version(char *out, size_t len) {
  out[0] = '\0';
  const char *nvcc = kf_harness__nvcc_path();
  if (!nvcc) return;
  char *argv[] = {(char *)nvcc, "--version", NULL};
  extern char **environ;
  kf_harness_spawn_opts so = {.path = nvcc, .argv = argv, .envp = environ,
                              .fd = {-1, -1, -1, -1}, .new_pgrp = true};
  char text[4096], err[256];
  int st;
  bool to;
  if (kf_harness__run(&so, 20000, text, sizeof text, &st, &to, err,
                      sizeof err) || to)
    return;
  const char *v = strstr(text, ", V");
  if (!v) return;
  v += 3;
  size_t n = strcspn(v, " \n");
  if (n >= len) n = len - 1;
  memcpy(out, v, n);
  out[n] = '\0';
}

int kf_harness__cuda_info_cmd(int argc, char **argv) {
  const char *device = "0";
  bool measure = true;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
    else if (!strncmp(argv[i], "--device=", 9)) device = argv[i] + 9;
    else if (!strcmp(argv[i], "--no-measure")) measure = false;
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf("usage: kf-harness cuda-info [--device N] [--no-measure]\n"
             "prints the GPU's name, compute capability, SMs, L2, memory,\n"
             "driver and runtime versions, nvcc, and measured ceilings:\n"
             "copy_gbps (device-to-device copy, read+write) and peak_gflops\n"
             "(bf16 GEMM 8192^3 through cuBLAS) as JSON\n");
      return 0;
    } else {
      fprintf(stderr, "kf-harness cuda-info: unexpected argument '%s'\n",
              argv[i]);
      return 2;
    }
  }
  uint64_t dv;
  if (kf_parse_u64(device, &dv) || dv > 255) {
    fprintf(stderr, "kf-harness cuda-info: --device '%s': expected 0..255\n",
            device);
    return 2;
  }
  char exe[PATH_MAX + 32];
  if (!kf_harness__cuda_exe(exe, sizeof exe)) {
    fail("kf-harness was built without CUDA (no %s): configure with the "
         "CUDA toolkit installed (KF_CUDA=ON)", exe);
    return 1;
  }
  char *cargv[] = {exe, "info", "--device", (char *)device,
                   measure ? NULL : "--no-measure", NULL};
  extern char **environ;
  kf_harness_spawn_opts so = {.path = exe, .argv = cargv, .envp = environ,
                              .fd = {-1, -1, -1, -1}, .new_pgrp = true};
  static char text[65536];
  char err[512];
  int st = 0;
  bool to = false;
  if (kf_harness__run(&so, 180000, text, sizeof text, &st, &to, err,
                      sizeof err)) {
    fail("%s", err);
    return 1;
  }
  /* stdout and stderr are merged: the object is from the first '{' */
  const char *start = strchr(text, '{');
  cJSON *j = start ? cJSON_Parse(start) : NULL;
  if (!j || to) {
    cJSON_Delete(j);
    char why[600];
    snprintf(why, sizeof why, "kf-harness-cuda info %s: %.400s",
             to ? "timed out" : "printed no JSON", text);
    fail("%s", why);
    return 1;
  }
  char ver[64];
  nvcc_version(ver, sizeof ver);
  cJSON_AddStringToObject(j, "nvcc", ver);
  char *s = cJSON_Print(j);
  printf("%s\n", s ? s : "{}");
  free(s);
  bool ok = !cJSON_GetObjectItemCaseSensitive(j, "error") && WIFEXITED(st) &&
            WEXITSTATUS(st) == 0;
  cJSON_Delete(j);
  return ok ? 0 : 1;
}
