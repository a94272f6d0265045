/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/gpu_footprint.c -- the eval process's side of
 * `kf-harness-cuda footprint`: the bandwidth a GPU reaches at one
 * footprint with the cache state a timed call finds, for the too-fast
 * floor of every backend that times on a GPU (cuda; torch on device
 * cuda).  The measuring process loads no candidate, so no candidate can
 * raise its own floor (harness/cuda/footprint.c says how it measures).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "internal.h"
#include "log.h"

double kf_harness__gpu_footprint_gbps(int device, int warm_us, size_t bytes) {
  char exe[PATH_MAX];
  if (!kf_harness__cuda_exe(exe, sizeof exe)) {
    kf_log(KF_LOG_WARN, "footprint rate not measured: no %s", exe);
    return 0;
  }
  char dev[16], by[32], warm[16];
  snprintf(dev, sizeof dev, "%d", device);
  snprintf(by, sizeof by, "%zu", bytes);
  snprintf(warm, sizeof warm, "%d", warm_us);
  char *argv[] = {"kf-harness-cuda", "footprint", "--device", dev, "--bytes",
                  by, "--warm-us", warm, NULL};
  /* what a CUDA process needs of ours: which devices, and the libraries */
  static const char *const pass[] = {"CUDA_VISIBLE_DEVICES",
                                     "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH"};
  char store[3][8192];
  char *envp[4];
  int n = 0;
  for (int i = 0; i < 3; i++) {
    const char *v = getenv(pass[i]);
    if (!v) continue;
    int k = snprintf(store[n], sizeof store[n], "%s=%s", pass[i], v);
    if (k < 0 || (size_t)k >= sizeof store[n]) {
      kf_log(KF_LOG_WARN, "footprint rate not measured: %s is longer than "
             "%zu bytes", pass[i], sizeof store[n] - 1);
      return 0;
    }
    envp[n] = store[n];
    n++;
  }
  envp[n] = NULL;
  kf_harness_spawn_opts so = {.path = exe, .argv = argv, .envp = envp,
                              .fd = {-1, -1, -1, -1}, .new_pgrp = true};
  char text[2048], err[256];
  int st = 0;
  bool to = false;
  if (kf_harness__run(&so, 120000, text, sizeof text, &st, &to, err,
                      sizeof err)) {
    kf_log(KF_LOG_WARN, "footprint rate not measured: %s", err);
    return 0;
  }
  const char *start = strchr(text, '{');
  cJSON *j = start ? cJSON_Parse(start) : NULL;
  double best = 0;
  static const char *const key[] = {"copy_gbps", "read_gbps", "write_gbps"};
  for (int i = 0; j && i < 3; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key[i]);
    if (cJSON_IsNumber(v) && v->valuedouble > best) best = v->valuedouble;
  }
  if (!best || to || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    kf_log(KF_LOG_WARN, "footprint rate not measured (%s): %.300s",
           to ? "timed out" : "no rates", text);
    best = 0;
  } else {
    kf_log(KF_LOG_INFO, "GPU %d, %zu bytes with a timed call's caches: %s",
           device, bytes, start);
  }
  cJSON_Delete(j);
  return best;
}
