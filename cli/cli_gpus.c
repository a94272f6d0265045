/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_gpus.c -- which GPUs `kf run` starts a worker for (cli_internal.h,
 * kf_cli__gpu_plan).
 *
 * Why not just /dev/nvidia0..N-1: under a scheduler (Slurm's gres,
 * Kubernetes' device plugin, a person's CUDA_VISIBLE_DEVICES) the machine
 * shows every GPU while this job owns some of them.  The CUDA runtime then
 * sees only the ones CUDA_VISIBLE_DEVICES names, in its order, up to the
 * first entry that is not a device; so does this plan, and each worker is
 * given one entry of it as its own CUDA_VISIBLE_DEVICES (it then sees its
 * GPU as cuda:0).  Pure: no CUDA and no files, so it is tested anywhere.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_internal.h"

/* An entry the CUDA runtime takes: a device index, or a GPU or MIG UUID
 * ("GPU-8f0c...", "MIG-..."), or a unique prefix of one. */
static bool entry_ok(const char *e, size_t n, int ndev) {
  if (n == 0) return false;
  if (isdigit((unsigned char)e[0])) {
    long v = 0;
    for (size_t i = 0; i < n; i++) {
      if (!isdigit((unsigned char)e[i])) return false;
      v = v * 10 + (e[i] - '0');
      if (v > 4096) return false;
    }
    return ndev <= 0 || v < ndev;
  }
  if (n < 5 || (strncmp(e, "GPU-", 4) && strncmp(e, "MIG-", 4)))
    return false;
  for (size_t i = 4; i < n; i++)
    if (!isalnum((unsigned char)e[i]) && e[i] != '-' && e[i] != '/')
      return false;
  return true;
}

int kf_cli__gpu_plan(const char *visible, int ndev,
                     char ids[][KF_CLI__GPU_ID_LEN], int max) {
  int n = 0;
  if (!visible) {
    for (int i = 0; i < ndev && n < max; i++)
      snprintf(ids[n++], KF_CLI__GPU_ID_LEN, "%d", i);
    return n;
  }
  const char *p = visible;
  while (*p && n < max) {
    while (*p == ' ' || *p == '\t') p++;
    const char *e = p;
    while (*p && *p != ',') p++;
    size_t len = (size_t)(p - e);
    while (len && (e[len - 1] == ' ' || e[len - 1] == '\t')) len--;
    /* The runtime stops at the first entry that names no device. */
    if (!entry_ok(e, len, ndev) || len >= KF_CLI__GPU_ID_LEN) break;
    bool dup = false;
    for (int i = 0; i < n && !dup; i++)
      dup = strlen(ids[i]) == len && !strncmp(ids[i], e, len);
    if (!dup) {
      memcpy(ids[n], e, len);
      ids[n][len] = '\0';
      n++;
    }
    if (*p == ',') p++;
  }
  return n;
}
