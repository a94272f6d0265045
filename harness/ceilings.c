/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/ceilings.c -- rough ceilings of this CPU, one core: copy
 * bandwidth (a large memcpy, bytes read + written) and an FMA rate.  The
 * eval's roofline check rejects times faster than these allow, with a
 * generous factor (CPU ceilings measured this way are rough: turbo, SMT
 * neighbours, non-temporal stores).
 *
 * The FMA loop is built for several ISA levels with target_clones and the
 * best one the CPU supports runs, so the ceiling matches candidates that
 * are compiled with -march=native.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util.h"

double kf_harness__measure_copy_gbps(void) {
  size_t n = 128u << 20;
  unsigned char *a = malloc(n), *b = malloc(n);
  if (!a || !b) {
    free(a);
    free(b);
    return 0;
  }
  memset(a, 1, n);
  memset(b, 2, n);
  double best = 0;
  for (int rep = 0; rep < 5; rep++) {
    uint64_t t0 = kf_now_ns();
    memcpy(rep & 1 ? a : b, rep & 1 ? b : a, n);
    uint64_t t1 = kf_now_ns();
    double gbps = 2.0 * (double)n / (double)(t1 - t0);
    if (gbps > best) best = gbps;
  }
  volatile unsigned char sink = a[n / 2] ^ b[n / 3];
  (void)sink;
  free(a);
  free(b);
  return best;
}

typedef float v16f __attribute__((vector_size(64)));

#if defined(__x86_64__)
#define KF_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KF_CLONES
#endif

/* 12 independent accumulators cover FMA latency x ports; 2 FLOPs per lane
 * per FMA.  Returns FLOPs done. */
/* optimize("O3"): the ceiling must not depend on the build type (a Debug
 * build would measure -O0 code). */
KF_CLONES __attribute__((noinline, optimize("O3"),
                         no_sanitize("address", "undefined")))
static double fma_loop(long iters,
                                                             float *out) {
  v16f acc[12];
  v16f x, y;
  for (int i = 0; i < 16; i++) {
    x[i] = 1.0f + (float)i * 1e-7f;
    y[i] = 0.999999f;
  }
  for (int k = 0; k < 12; k++) acc[k] = x * (float)(k + 1) * 1e-3f;
  for (long it = 0; it < iters; it++) {
#pragma GCC unroll 12
    for (int k = 0; k < 12; k++) acc[k] = acc[k] * y + x;
  }
  v16f s = acc[0];
  for (int k = 1; k < 12; k++) s += acc[k];
  float t = 0;
  for (int i = 0; i < 16; i++) t += s[i];
  *out = t;
  return (double)iters * 12 * 16 * 2;
}

double kf_harness__measure_gflops(void) {
  double best = 0;
  float sink = 0;
  for (int rep = 0; rep < 3; rep++) {
    float o;
    uint64_t t0 = kf_now_ns();
    double flops = fma_loop(10 * 1000 * 1000, &o);
    uint64_t t1 = kf_now_ns();
    sink += o;
    double g = flops / (double)(t1 - t0);
    if (g > best) best = g;
  }
  volatile float v = sink;
  (void)v;
  return best;
}

size_t kf_harness__llc_bytes(int cpu) {
  size_t best = 0;
  for (int idx = 0; idx < 8; idx++) {
    char path[128];
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu < 0 ? 0 : cpu,
             idx);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    char buf[32] = "";
    if (fgets(buf, sizeof buf, f)) {
      char *end;
      unsigned long long v = strtoull(buf, &end, 10);
      if (*end == 'K') v <<= 10;
      else if (*end == 'M') v <<= 20;
      else if (*end == 'G') v <<= 30;
      if (v > best) best = (size_t)v;
    }
    fclose(f);
  }
  return best;
}
