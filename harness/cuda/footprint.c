/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/footprint.c -- the "footprint" mode of kf-harness-cuda:
 * copy, read and write rates at one footprint, each sample taken with the
 * cache state a timed call finds (runner.c: --warm-us of memsets over a
 * flush buffer of max(2 x L2, 64 MiB), that buffer memset, then read back
 * so that L2 holds clean lines).
 *
 * Why: a timed call starts with a clean L2 and its end event does not
 * wait for the dirty lines the kernel leaves, so a kernel whose footprint
 * is a few L2s honestly beats the worker's ceilings (a 1 GiB copy):
 * on an H100, rmsnorm's 268 MB at 100.5% of it, a copy of that footprint
 * at 102.4% (docs/gpu-runs/2026-11-26-l2-dirty).  The eval's too-fast
 * floor takes the larger of the worker's ceiling and this rate
 * (pipeline.c footprint_ceiling), as the CPU backend's does.
 *
 * An ordinary process that loads no candidate, started by the eval while
 * no runner is working: a candidate can neither raise its own floor nor
 * see this process.  Work a hostile runner left queued can only slow
 * these samples, which lowers the floor (stricter), never raises it.
 *
 *   kf-harness-cuda footprint --device N --bytes B [--warm-us U]
 *   -> {"bytes": B, "copy_gbps": C, "read_gbps": R, "write_gbps": W}
 *      (copy: B/2 bytes read and B/2 written; read and write: B bytes);
 *      exit 1 with {"error": "..."} when it cannot measure.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "proto.h"

#define FP_SAMPLES 5

typedef struct {
  void *flush, *a, *b;
  size_t flush_len, bytes;
  unsigned long long *sink;
  cudaEvent_t e0, e1;
  int sms, warm_n;
} fp_state;

static int fp_fail(const char *what, cudaError_t e) {
  printf("{\"error\": \"%s: %s\"}\n", what, cudaGetErrorString(e));
  return 1;
}

static int cmp_f(const void *x, const void *y) {
  float a = *(const float *)x, b = *(const float *)y;
  return a < b ? -1 : a > b;
}

/* The memsets that make --warm-us of GPU time, as runner.c's
 * calibrate_warm: the last 4 of 12 timed. */
static cudaError_t fp_calibrate(fp_state *f, int warm_us) {
  cudaError_t e = cudaSuccess;
  for (int i = 0; i < 12 && e == cudaSuccess; i++) {
    if (i == 8) e = cudaEventRecord(f->e0, 0);
    if (e == cudaSuccess) e = cudaMemsetAsync(f->flush, i, f->flush_len, 0);
  }
  float ms = 0;
  if (e != cudaSuccess || (e = cudaEventRecord(f->e1, 0)) != cudaSuccess ||
      (e = cudaEventSynchronize(f->e1)) != cudaSuccess ||
      (e = cudaEventElapsedTime(&ms, f->e0, f->e1)) != cudaSuccess)
    return e;
  ms /= 4;
  double n = ms > 0 ? (double)warm_us / (ms * 1e3) : 1;
  f->warm_n = n < 1 ? 1 : n > 1000 ? 1000 : (int)(n + 0.5);
  return cudaSuccess;
}

/* One sample of kind (0 copy, 1 read, 2 write) in *ms. */
static cudaError_t fp_sample(fp_state *f, int kind, int i, float *ms) {
  cudaError_t e = cudaSuccess;
  for (int k = 0; k < f->warm_n && e == cudaSuccess; k++)
    e = cudaMemsetAsync(f->flush, k & 0xff, f->flush_len, 0);
  if (e == cudaSuccess) e = cudaMemsetAsync(f->flush, i & 0xff, f->flush_len, 0);
  if (e == cudaSuccess)
    e = (cudaError_t)kf_cuda_read(f->flush, f->flush_len, f->sms, f->sink);
  if (e == cudaSuccess) e = cudaEventRecord(f->e0, 0);
  if (e == cudaSuccess) {
    if (kind == 0)
      e = cudaMemcpyAsync(f->b, f->a, f->bytes / 2, cudaMemcpyDeviceToDevice, 0);
    else if (kind == 1)
      e = (cudaError_t)kf_cuda_read(f->a, f->bytes, f->sms, f->sink);
    else
      e = cudaMemsetAsync(f->a, i & 0xff, f->bytes, 0);
  }
  if (e == cudaSuccess) e = cudaEventRecord(f->e1, 0);
  if (e == cudaSuccess) e = cudaEventSynchronize(f->e1);
  if (e == cudaSuccess) e = cudaEventElapsedTime(ms, f->e0, f->e1);
  return e;
}

int kf_harness_cuda_footprint_main(int argc, char **argv) {
  long long device = 0, warm_us = 2000;
  unsigned long long bytes = 0;
  for (int i = 0; i + 1 < argc; i += 2) {
    char *end = NULL;
    if (!strcmp(argv[i], "--device"))
      device = strtoll(argv[i + 1], &end, 10);
    else if (!strcmp(argv[i], "--bytes"))
      bytes = strtoull(argv[i + 1], &end, 10);
    else if (!strcmp(argv[i], "--warm-us"))
      warm_us = strtoll(argv[i + 1], &end, 10);
    if (!end || *end || end == argv[i + 1]) {
      printf("{\"error\": \"usage: kf-harness-cuda footprint --device N "
             "--bytes B [--warm-us U]\"}\n");
      return 2;
    }
  }
  if (argc % 2 || device < 0 || device > 255 || warm_us < 0 ||
      warm_us > 1000000 || bytes < 64 || bytes > (1ull << 40)) {
    printf("{\"error\": \"usage: kf-harness-cuda footprint --device N "
           "--bytes B (64 <= B <= 2^40) [--warm-us U (<= 1000000)]\"}\n");
    return 2;
  }
  fp_state f = {.bytes = (size_t)bytes & ~(size_t)31};
  cudaError_t e;
  int l2 = 0;
  if ((e = cudaSetDevice((int)device)) != cudaSuccess)
    return fp_fail("selecting the device", e);
  if ((e = cudaDeviceGetAttribute(&f.sms, cudaDevAttrMultiProcessorCount,
                                  (int)device)) != cudaSuccess ||
      (e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, (int)device)) !=
          cudaSuccess)
    return fp_fail("reading the device's attributes", e);
  f.flush_len = (size_t)(l2 > 0 ? l2 : 0) * 2;
  if (f.flush_len < (64u << 20)) f.flush_len = 64u << 20;
  if ((e = cudaMalloc(&f.flush, f.flush_len)) != cudaSuccess ||
      (e = cudaMalloc(&f.a, f.bytes)) != cudaSuccess ||
      (e = cudaMalloc(&f.b, f.bytes / 2)) != cudaSuccess ||
      (e = cudaMalloc((void **)&f.sink, sizeof *f.sink)) != cudaSuccess)
    return fp_fail("allocating the buffers", e);
  if ((e = cudaEventCreate(&f.e0)) != cudaSuccess ||
      (e = cudaEventCreate(&f.e1)) != cudaSuccess)
    return fp_fail("creating events", e);
  if ((e = cudaMemset(f.a, 0x3c, f.bytes)) != cudaSuccess ||
      (e = cudaMemset(f.b, 0x5a, f.bytes / 2)) != cudaSuccess)
    return fp_fail("filling the buffers", e);
  if ((e = fp_calibrate(&f, (int)warm_us)) != cudaSuccess)
    return fp_fail("timing a memset for --warm-us", e);
  static const char *const name[] = {"copy", "read", "write"};
  double gbps[3];
  for (int kind = 0; kind < 3; kind++) {
    float t[FP_SAMPLES + 1];
    for (int i = 0; i <= FP_SAMPLES; i++)
      if ((e = fp_sample(&f, kind, i, &t[i])) != cudaSuccess)
        return fp_fail(name[kind], e);
    /* the first sample wakes what the warm-up did not */
    qsort(t + 1, FP_SAMPLES, sizeof *t, cmp_f);
    double ms = t[1 + FP_SAMPLES / 2];
    gbps[kind] = ms > 0 ? (double)f.bytes / (ms * 1e6) : 0;
  }
  printf("{\"bytes\": %zu, \"copy_gbps\": %.3f, \"read_gbps\": %.3f, "
         "\"write_gbps\": %.3f}\n", f.bytes, gbps[0], gbps[1], gbps[2]);
  return 0;
}
