/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-harness-parallel.c -- harness/core/parallel.c, the eval
 * process's data-parallel loops (linked in):
 *
 *  - kf_harness__par_range splits [0, n) into contiguous parts that cover
 *    every element exactly once, with boundaries on multiples of align
 *    (but for n itself), for n below, at and above parts, n = 0 and
 *    align 1 / 64 / 4096;
 *  - kf_harness__par_run runs every part exactly once, with the same
 *    `parts` on every call, also with more parts than cores, one part,
 *    none (clamped to 1) and more than its 16 (clamped), and returns the
 *    number of threads it used (1..parts, each seen running a part),
 *    also when threads cannot be created (pthread_create is wrapped at
 *    link time, -Wl,--wrap: the parts left run on the caller's);
 *  - kf_harness__par_parts is within 1..16;
 *  - kf_harness__par_memcpy copies exactly n bytes, below and above its
 *    8 MiB threshold, odd sizes, unaligned source and destination, and
 *    writes nothing around the destination.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"

/* parallel.c's MAX_PARTS: par_run never uses more. */
#define PAR_MAX 16

/* pthread_create as parallel.c calls it (tests/CMakeLists.txt links this
 * test with -Wl,--wrap=pthread_create): after `creates_left` successes
 * it fails with EAGAIN; -1, never. */
int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg);
static int creates_left = -1;
static int creates_refused;

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg) {
  if (creates_left == 0) {
    creates_refused++;
    return EAGAIN;
  }
  if (creates_left > 0) creates_left--;
  return __real_pthread_create(t, attr, fn, arg);
}

/* ------------------------------------------------------ par_range -- */

static const int64_t range_ns[] = {
    0,    1,    2,    3,    5,    7,     15,    16,    17,   63,
    64,   65,   100,  127,  1000, 4095,  4096,  4097,  8191, 12289,
    65536, 65537, 1000003, (int64_t)8 << 20, ((int64_t)8 << 20) + 3,
    ((int64_t)1 << 40) + 12345};
static const int range_parts[] = {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 64, 1000};
static const int64_t range_aligns[] = {1, 64, 4096};

static void check_split(int64_t n, int parts, int64_t align) {
  int64_t expect_lo = 0;
  for (int p = 0; p < parts; p++) {
    int64_t lo = -1, hi = -1;
    kf_harness__par_range(n, p, parts, align, &lo, &hi);
    if (lo != expect_lo || hi < lo || hi > n ||
        (lo != n && lo % align != 0) || (hi != n && hi % align != 0)) {
      fail_msg("par_range(n=%lld, part=%d, parts=%d, align=%lld) = "
               "[%lld, %lld), expected to start at %lld, within [0, n], "
               "boundaries multiples of align",
               (long long)n, p, parts, (long long)align, (long long)lo,
               (long long)hi, (long long)expect_lo);
    }
    expect_lo = hi;
  }
  if (expect_lo != n)
    fail_msg("par_range(n=%lld, parts=%d, align=%lld) covers [0, %lld) only",
             (long long)n, parts, (long long)align, (long long)expect_lo);
}

static void test_range_partitions(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof range_ns / sizeof range_ns[0]; i++)
    for (size_t j = 0; j < sizeof range_parts / sizeof range_parts[0]; j++)
      for (size_t k = 0; k < sizeof range_aligns / sizeof range_aligns[0]; k++)
        check_split(range_ns[i], range_parts[j], range_aligns[k]);
  /* every n up to 300 and every parts up to 20 */
  for (int64_t n = 0; n <= 300; n++)
    for (int parts = 1; parts <= 20; parts++)
      for (size_t k = 0; k < sizeof range_aligns / sizeof range_aligns[0]; k++)
        check_split(n, parts, range_aligns[k]);
}

/* Element by element: each index in exactly one part. */
static void test_range_counts_each_element_once(void **state) {
  (void)state;
  static const int64_t ns[] = {0, 1, 3, 64, 100, 4097, 9000, 20000};
  unsigned char *seen = malloc(20000);
  assert_non_null(seen);
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (size_t j = 0; j < sizeof range_parts / sizeof range_parts[0]; j++)
      for (size_t k = 0; k < sizeof range_aligns / sizeof range_aligns[0];
           k++) {
        int64_t n = ns[i];
        int parts = range_parts[j];
        memset(seen, 0, (size_t)n);
        for (int p = 0; p < parts; p++) {
          int64_t lo, hi;
          kf_harness__par_range(n, p, parts, range_aligns[k], &lo, &hi);
          for (int64_t e = lo; e < hi; e++) seen[e]++;
        }
        for (int64_t e = 0; e < n; e++)
          if (seen[e] != 1)
            fail_msg("n=%lld parts=%d align=%lld: element %lld seen %d "
                     "times",
                     (long long)n, parts, (long long)range_aligns[k],
                     (long long)e, seen[e]);
      }
  free(seen);
}

/* Fewer elements than parts: the first parts take one (align 1), the
 * rest are empty at n; with align, the first part takes all. */
static void test_range_small_n(void **state) {
  (void)state;
  int64_t lo, hi;
  for (int p = 0; p < 8; p++) {
    kf_harness__par_range(3, p, 8, 1, &lo, &hi);
    assert_int_equal(lo, p < 3 ? p : 3);
    assert_int_equal(hi, p < 3 ? p + 1 : 3);
    kf_harness__par_range(3, p, 8, 64, &lo, &hi);
    assert_int_equal(lo, p == 0 ? 0 : 3);
    assert_int_equal(hi, 3);
  }
  for (int p = 0; p < 4; p++) {
    kf_harness__par_range(0, p, 4, 4096, &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 0);
  }
  /* one part: everything */
  kf_harness__par_range(12345, 0, 1, 4096, &lo, &hi);
  assert_int_equal(lo, 0);
  assert_int_equal(hi, 12345);
}

/* -------------------------------------------------------- par_run -- */

typedef struct {
  pthread_mutex_t mu;
  int calls[PAR_MAX + 8];
  int bad_part;         /* calls with part outside [0, parts) */
  int parts_seen[4];    /* distinct `parts` arguments */
  int n_parts_seen;
  pthread_t threads[PAR_MAX + 8];
  int n_threads;
  bool caller_ran;
  pthread_t caller;
} run_log;

static void log_part(void *arg, int part, int parts) {
  run_log *l = arg;
  /* a little work, so that threads overlap */
  volatile unsigned x = 0;
  for (int i = 0; i < 20000; i++) x += (unsigned)i;
  pthread_mutex_lock(&l->mu);
  if (part < 0 || part >= parts || part >= PAR_MAX + 8) {
    l->bad_part++;
  } else {
    l->calls[part]++;
  }
  bool known = false;
  for (int i = 0; i < l->n_parts_seen; i++)
    known = known || l->parts_seen[i] == parts;
  if (!known && l->n_parts_seen < 4) l->parts_seen[l->n_parts_seen++] = parts;
  if (pthread_equal(pthread_self(), l->caller)) l->caller_ran = true;
  bool seen = false;
  for (int i = 0; i < l->n_threads; i++)
    seen = seen || pthread_equal(l->threads[i], pthread_self());
  if (!seen && l->n_threads < PAR_MAX + 8)
    l->threads[l->n_threads++] = pthread_self();
  pthread_mutex_unlock(&l->mu);
}

/* par_run(parts): every part of `expect_parts` exactly once, the same
 * `parts` on every call, and as many distinct threads as it says. */
static void check_run(int parts, int expect_parts) {
  run_log l;
  memset(&l, 0, sizeof l);
  pthread_mutex_init(&l.mu, NULL);
  l.caller = pthread_self();
  int used = kf_harness__par_run(parts, log_part, &l);
  pthread_mutex_destroy(&l.mu);
  assert_int_equal(l.bad_part, 0);
  assert_int_equal(l.n_parts_seen, 1);
  assert_int_equal(l.parts_seen[0], expect_parts);
  for (int p = 0; p < expect_parts; p++)
    if (l.calls[p] != 1)
      fail_msg("par_run(%d): part %d of %d ran %d times", parts, p,
               expect_parts, l.calls[p]);
  for (int p = expect_parts; p < PAR_MAX + 8; p++)
    assert_int_equal(l.calls[p], 0);
  if (used < 1 || used > expect_parts)
    fail_msg("par_run(%d) says %d threads, expected 1..%d", parts, used,
             expect_parts);
  /* the threads it reports are the threads that ran parts, the caller's
   * included */
  assert_int_equal(l.n_threads, used);
  assert_true(l.caller_ran);
}

static void test_run_every_part_once(void **state) {
  (void)state;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  /* 1, a few, more than the cores here, the 16 it allows */
  int ps[] = {1, 2, 3, 4, 7, 8, 13, 16, (int)(cores < 15 ? cores + 1 : 16)};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
    for (int rep = 0; rep < 5; rep++) check_run(ps[i], ps[i]);
}

static void test_run_clamps_parts(void **state) {
  (void)state;
  check_run(0, 1);
  check_run(-5, 1);
  check_run(17, PAR_MAX);
  check_run(1000, PAR_MAX);
}

/* Threads that cannot be created: the parts without one run on the
 * caller's, each still once, and the count says how many threads ran. */
static void test_run_without_threads(void **state) {
  (void)state;
  static const int ps[] = {2, 5, 8, 16};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
    for (int ok = 0; ok < ps[i]; ok++) {
      creates_left = ok;
      creates_refused = 0;
      run_log l;
      memset(&l, 0, sizeof l);
      pthread_mutex_init(&l.mu, NULL);
      l.caller = pthread_self();
      int used = kf_harness__par_run(ps[i], log_part, &l);
      creates_left = -1;
      pthread_mutex_destroy(&l.mu);
      /* ps[i] - 1 threads wanted, ok of them granted */
      assert_true(ok < ps[i] - 1 ? creates_refused >= 1 : !creates_refused);
      assert_int_equal(used, ok + 1);
      assert_int_equal(l.n_threads, used);
      assert_true(l.caller_ran);
      assert_int_equal(l.bad_part, 0);
      for (int p = 0; p < ps[i]; p++)
        if (l.calls[p] != 1)
          fail_msg("par_run(%d) with %d thread(s) created: part %d ran %d "
                   "times",
                   ps[i], ok, p, l.calls[p]);
    }
}

/* One part: no thread, on the caller's. */
static void test_run_one_part_inline(void **state) {
  (void)state;
  run_log l;
  memset(&l, 0, sizeof l);
  pthread_mutex_init(&l.mu, NULL);
  l.caller = pthread_self();
  assert_int_equal(kf_harness__par_run(1, log_part, &l), 1);
  pthread_mutex_destroy(&l.mu);
  assert_int_equal(l.calls[0], 1);
  assert_int_equal(l.n_threads, 1);
  assert_true(pthread_equal(l.threads[0], pthread_self()));
}

/* par_run + par_range as the eval uses them: a sum over n elements is the
 * same with any number of parts, however many threads it got. */
typedef struct {
  const uint32_t *v;
  int64_t n, align;
  uint64_t partial[PAR_MAX];
  int64_t covered[PAR_MAX];
} sum_job;

static void sum_part(void *arg, int part, int parts) {
  sum_job *s = arg;
  int64_t lo, hi;
  kf_harness__par_range(s->n, part, parts, s->align, &lo, &hi);
  uint64_t acc = 0;
  for (int64_t i = lo; i < hi; i++) acc += s->v[i];
  s->partial[part] = acc;
  s->covered[part] = hi - lo;
}

static void test_run_with_range_sums(void **state) {
  (void)state;
  const int64_t n = 300001;
  uint32_t *v = malloc((size_t)n * sizeof *v);
  assert_non_null(v);
  uint64_t want = 0;
  for (int64_t i = 0; i < n; i++) {
    v[i] = (uint32_t)(i * 2654435761u);
    want += v[i];
  }
  static const int ps[] = {1, 2, 5, 16, 40};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
    for (size_t k = 0; k < sizeof range_aligns / sizeof range_aligns[0];
         k++) {
      sum_job s;
      memset(&s, 0, sizeof s);
      s.v = v;
      s.n = n;
      s.align = range_aligns[k];
      kf_harness__par_run(ps[i], sum_part, &s);
      uint64_t got = 0;
      int64_t cov = 0;
      for (int p = 0; p < PAR_MAX; p++) {
        got += s.partial[p];
        cov += s.covered[p];
      }
      assert_int_equal(cov, n);
      assert_int_equal(got, want);
    }
  free(v);
}

static void test_parts_bounds(void **state) {
  (void)state;
  int p = kf_harness__par_parts();
  assert_in_range(p, 1, PAR_MAX);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores >= 2) assert_true(p <= cores);
}

/* ----------------------------------------------------- par_memcpy -- */

#define GUARD 64

static void fill_pattern(unsigned char *p, size_t n, uint32_t seed) {
  uint32_t x = seed ? seed : 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (unsigned char)(x >> 7);
  }
}

/* Copies n bytes from src+soff to dst+doff, GUARD bytes of sentinel on
 * both sides of the destination. */
static void check_copy(size_t n, size_t soff, size_t doff) {
  unsigned char *src = malloc(n + soff + 1);
  unsigned char *dst = malloc(n + doff + 2 * GUARD);
  assert_non_null(src);
  assert_non_null(dst);
  fill_pattern(src, n + soff + 1, (uint32_t)(n * 31 + soff * 7 + doff + 1));
  memset(dst, 0xA5, n + doff + 2 * GUARD);
  unsigned char *d = dst + GUARD + doff;
  kf_harness__par_memcpy(d, src + soff, n);
  if (n && memcmp(d, src + soff, n) != 0) {
    size_t at = 0;
    while (at < n && d[at] == src[soff + at]) at++;
    fail_msg("par_memcpy(n=%zu, src+%zu, dst+%zu): byte %zu differs", n,
             soff, doff, at);
  }
  for (size_t i = 0; i < GUARD + doff; i++)
    if (dst[i] != 0xA5)
      fail_msg("par_memcpy(n=%zu, src+%zu, dst+%zu) wrote %zu bytes before "
               "the destination",
               n, soff, doff, GUARD + doff - i);
  for (size_t i = 0; i < GUARD; i++)
    if (d[n + i] != 0xA5)
      fail_msg("par_memcpy(n=%zu, src+%zu, dst+%zu) wrote past the end "
               "(+%zu)",
               n, soff, doff, i);
  free(src);
  free(dst);
}

static void test_memcpy_small(void **state) {
  (void)state;
  static const size_t ns[] = {0, 1, 2, 3, 7, 8, 15, 4095, 4096, 4097, 65537,
                              (1u << 20) + 3};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (size_t s = 0; s < 4; s++)
      for (size_t d = 0; d < 4; d++) check_copy(ns[i], s * 3, d * 5);
}

/* At and around the 8 MiB threshold, and well above it: the threaded
 * path (parts on 4096-byte boundaries relative to dst, the last one
 * short), with odd sizes and unaligned pointers. */
static void test_memcpy_large(void **state) {
  (void)state;
  const size_t t = (size_t)8 << 20;
  static const size_t offs[][2] = {{0, 0}, {1, 0}, {0, 3}, {5, 11}};
  const size_t ns[] = {t - 1, t, t + 1, t + 4095, t + 4097,
                       (size_t)24 << 20 | 13, ((size_t)33 << 20) - 4093};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (size_t o = 0; o < sizeof offs / sizeof offs[0]; o++)
      check_copy(ns[i], offs[o][0], offs[o][1]);
}

/* An overwrite of earlier contents: nothing of the old buffer stays. */
static void test_memcpy_overwrites(void **state) {
  (void)state;
  const size_t n = ((size_t)9 << 20) + 77;
  unsigned char *a = malloc(n), *b = malloc(n);
  assert_non_null(a);
  assert_non_null(b);
  fill_pattern(a, n, 12345);
  fill_pattern(b, n, 54321);
  kf_harness__par_memcpy(b, a, n);
  assert_memory_equal(a, b, n);
  free(a);
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_range_partitions),
      cmocka_unit_test(test_range_counts_each_element_once),
      cmocka_unit_test(test_range_small_n),
      cmocka_unit_test(test_run_every_part_once),
      cmocka_unit_test(test_run_clamps_parts),
      cmocka_unit_test(test_run_one_part_inline),
      cmocka_unit_test(test_run_without_threads),
      cmocka_unit_test(test_run_with_range_sums),
      cmocka_unit_test(test_parts_bounds),
      cmocka_unit_test(test_memcpy_small),
      cmocka_unit_test(test_memcpy_large),
      cmocka_unit_test(test_memcpy_overwrites),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
