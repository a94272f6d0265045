/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-metrics-text.c -- common/metrics.c: the Prometheus text
 * format as we write it: HELP escaping, label escaping and truncation at
 * a UTF-8 boundary, non-finite values, histograms (bounds checked,
 * cumulative buckets, +Inf == count), and a buffer that grows past its
 * first allocation.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics.h"

static void help_is_escaped(void **state) {
  (void)state;
  kf_metrics_buf b = {0};
  kf_metrics_family(&b, "kf_x", "gauge", "a \\ b\nc");
  assert_false(b.oom);
  assert_string_equal(b.p, "# HELP kf_x a \\\\ b\\nc\n# TYPE kf_x gauge\n");
  kf_metrics_buf_free(&b);
}

static void labels_are_escaped(void **state) {
  (void)state;
  char l[128];
  kf_metrics_labels(l, sizeof l, "a", "x\"y\\z\nw", "b", "", "c", NULL,
                    (char *)NULL);
  assert_string_equal(l, "a=\"x\\\"y\\\\z\\nw\",b=\"\",c=\"\"");
  kf_metrics_labels(l, sizeof l, (char *)NULL);
  assert_string_equal(l, "");
}

/* A value cut for room ends at a character boundary, and the label set
 * is still closed. */
static void truncation_keeps_utf8(void **state) {
  (void)state;
  char big[64];
  for (size_t cap = 8; cap < sizeof big; cap++) {
    memset(big, 'Q', sizeof big);
    kf_metrics_labels(big, cap, "m", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                      "\xe2\x82\xac\xe2\x82\xac", (char *)NULL);
    size_t n = strlen(big);
    assert_true(n < cap);
    if (n == 0) continue; /* too small for even the name */
    assert_int_equal(big[n - 1], '"');
    /* every multi-byte sequence complete */
    for (size_t i = 3; i < n - 1;) {
      unsigned char c = (unsigned char)big[i];
      size_t len = c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      assert_true(i + len <= n - 1);
      for (size_t j = 1; j < len; j++)
        assert_int_equal((unsigned char)big[i + j] & 0xC0, 0x80);
      i += len;
    }
  }
}

static void values(void **state) {
  (void)state;
  kf_metrics_buf b = {0};
  kf_metrics_sample(&b, "a", NULL, 3);
  kf_metrics_sample(&b, "b", "", 0.5);
  kf_metrics_sample(&b, "c", "k=\"v\"", NAN);
  kf_metrics_sample(&b, "d", NULL, INFINITY);
  kf_metrics_sample(&b, "e", NULL, -INFINITY);
  assert_string_equal(b.p, "a 3\nb 0.5\nc{k=\"v\"} NaN\nd +Inf\ne -Inf\n");
  kf_metrics_buf_free(&b);
}

static void histogram(void **state) {
  (void)state;
  kf_metrics_hist h;
  const double bad[] = {1, 1};
  assert_int_equal(kf_metrics_hist_init(&h, bad, 2), -1);
  const double inf[] = {1, INFINITY};
  assert_int_equal(kf_metrics_hist_init(&h, inf, 2), -1);
  double many[KF_METRICS_MAX_BUCKETS + 1];
  for (size_t i = 0; i <= KF_METRICS_MAX_BUCKETS; i++) many[i] = (double)i;
  assert_int_equal(kf_metrics_hist_init(&h, many, KF_METRICS_MAX_BUCKETS + 1),
                   -1);
  const double le[] = {0.01, 0.1, 1};
  assert_int_equal(kf_metrics_hist_init(&h, le, 3), 0);
  /* on a bound counts in that bucket (le is "less or equal") */
  const double obs[] = {0.005, 0.01, 0.05, 0.5, 1, 7};
  for (size_t i = 0; i < 6; i++) kf_metrics_hist_observe(&h, obs[i]);
  kf_metrics_buf b = {0};
  kf_metrics_hist_render(&b, "h", "c=\"x\"", &h);
  assert_false(b.oom);
  assert_string_equal(b.p,
                      "h_bucket{c=\"x\",le=\"0.01\"} 2\n"
                      "h_bucket{c=\"x\",le=\"0.1\"} 3\n"
                      "h_bucket{c=\"x\",le=\"1\"} 5\n"
                      "h_bucket{c=\"x\",le=\"+Inf\"} 6\n"
                      "h_sum{c=\"x\"} 8.5649999999999995\n"
                      "h_count{c=\"x\"} 6\n");
  kf_metrics_buf_free(&b);
  kf_metrics_hist_render(&b, "h", NULL, &h);
  assert_non_null(strstr(b.p, "h_bucket{le=\"+Inf\"} 6\nh_sum 8.56"));
  kf_metrics_buf_free(&b);
}

static void buffer_grows(void **state) {
  (void)state;
  kf_metrics_buf b = {0};
  char line[1000];
  memset(line, 'x', sizeof line - 1);
  line[sizeof line - 1] = '\0';
  for (int i = 0; i < 50; i++) kf_metrics_printf(&b, "%s\n", line);
  assert_false(b.oom);
  assert_int_equal(b.len, 50 * 1000);
  assert_int_equal(strlen(b.p), b.len);
  kf_metrics_buf_free(&b);
  assert_null(b.p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(help_is_escaped),
      cmocka_unit_test(labels_are_escaped),
      cmocka_unit_test(truncation_keeps_utf8),
      cmocka_unit_test(values),
      cmocka_unit_test(histogram),
      cmocka_unit_test(buffer_grows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
