/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cpu/ceilings.c -- ceilings of this CPU, one core: streaming
 * bandwidth three ways (a large memcpy counted as bytes read + written, a
 * read-only scan, a write-only fill) and an FMA rate.  The roofline floor
 * takes the best of the three bandwidths, since a kernel that mostly reads
 * streams faster than a copy; the worker measures these once at start.
 *
 * The FMA loop is built for several ISA levels with target_clones and the
 * best one the CPU supports runs, so the ceiling matches candidates that
 * are compiled with -march=native.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "internal.h"
#include "util.h"

typedef float v16f __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));

#if defined(__x86_64__)
#define KF_CLONES_BW \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KF_CLONES_BW
#endif

/* Sums n bytes (a multiple of 256) as 64-byte vectors, 4 accumulators:
 * reads at the core's streaming rate.  optimize("O3") and no sanitizers:
 * the rate must not depend on the build type. */
KF_CLONES_BW __attribute__((noinline, optimize("O3"),
                            no_sanitize("address", "undefined")))
static uint64_t read_loop(const unsigned char *p, size_t n) {
  v8u a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
  for (size_t i = 0; i < n; i += 256) {
    v8u x0, x1, x2, x3;
    memcpy(&x0, p + i, 64);
    memcpy(&x1, p + i + 64, 64);
    memcpy(&x2, p + i + 128, 64);
    memcpy(&x3, p + i + 192, 64);
    a0 += x0;
    a1 += x1;
    a2 += x2;
    a3 += x3;
  }
  v8u s = a0 + a1 + a2 + a3;
  uint64_t t = 0;
  for (int k = 0; k < 8; k++) t += s[k];
  return t;
}

/* GB/s of op over a 256 MiB buffer (far beyond any cache), best of 5.
 * kind: 0 copy (bytes read + written), 1 read, 2 write. */
static double stream_gbps(int kind) {
  size_t n = 256u << 20;
  unsigned char *a = malloc(n), *b = kind == 0 ? malloc(n) : NULL;
  if (!a || (kind == 0 && !b)) {
    free(a);
    free(b);
    return 0;
  }
  memset(a, 1, n);
  if (b) memset(b, 2, n);
  double best = 0;
  uint64_t sink = 0;
  for (int rep = 0; rep < 5; rep++) {
    uint64_t t0 = kf_now_ns();
    if (kind == 0) memcpy(rep & 1 ? a : b, rep & 1 ? b : a, n);
    else if (kind == 1) sink += read_loop(a, n);
    else memset(a, rep, n);
    uint64_t t1 = kf_now_ns();
    double bytes = kind == 0 ? 2.0 * (double)n : (double)n;
    double gbps = bytes / (double)(t1 - t0);
    if (gbps > best) best = gbps;
  }
  volatile uint64_t v = sink + a[n / 2];
  (void)v;
  free(a);
  free(b);
  return best;
}

double kf_harness__measure_copy_gbps(void) { return stream_gbps(0); }
double kf_harness__measure_read_gbps(void) { return stream_gbps(1); }
double kf_harness__measure_write_gbps(void) { return stream_gbps(2); }

/* The rate at a footprint: the worker's ceilings above stream 256 MiB, far
 * beyond every cache, but a problem whose buffers fit in the last-level
 * cache may be served faster than that even after the timed call's flush
 * (a victim cache the flush does not fully evict, the prefetchers' ramp
 * over a short buffer).  So the same three loops run over exactly the
 * footprint, each sample after flush(arg) -- the call the timed call gets
 * -- and the best is the rate a kernel of that footprint can reach.  The
 * samples are short; the flushes dominate. */
__attribute__((optimize("O3"), no_sanitize("address", "undefined")))
double kf_harness__footprint_gbps(size_t bytes, void (*flush)(void *),
                                  void *arg, int samples,
                                  kf_harness_fp_rates *rates) {
  if (rates) memset(rates, 0, sizeof *rates);
  if (bytes > KF_HARNESS_FP_MAX) bytes = KF_HARNESS_FP_MAX;
  /* the read loop works in 256-byte steps; the copy moves two halves */
  size_t n = (bytes + 511) & ~(size_t)511;
  if (n < 512) n = 512;
  unsigned char *a = malloc(n);
  if (!a) return 0;
  memset(a, 3, n);
  double best[3] = {0, 0, 0};
  uint64_t sink = 0;
  for (int rep = 0; rep < samples; rep++)
    for (int kind = 0; kind < 3; kind++) {
      if (flush) flush(arg);
      uint64_t t0 = kf_now_ns();
      if (kind == 0)
        memcpy(a + (rep & 1 ? 0 : n / 2), a + (rep & 1 ? n / 2 : 0), n / 2);
      else if (kind == 1) sink += read_loop(a, n);
      else memset(a, rep, n);
      uint64_t t1 = kf_now_ns();
      /* a copy counts what it read and what it wrote, as the worker's */
      double g = (double)n / (double)(t1 > t0 ? t1 - t0 : 1);
      if (g > best[kind]) best[kind] = g;
    }
  volatile uint64_t v = sink + a[n / 2];
  (void)v;
  free(a);
  if (rates) {
    rates->copy = best[0];
    rates->read = best[1];
    rates->write = best[2];
    rates->bytes = n;
  }
  double m = best[0];
  if (best[1] > m) m = best[1];
  if (best[2] > m) m = best[2];
  return m;
}

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
