/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-dash-session.c -- the dashboard's login sessions
 * (dashboard/dash_session.c): what counts as a credential, session ids
 * that are random and not the token, lookup, logout, idle expiry and
 * eviction of the least recently used session when the table is full.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "dash_internal.h"
#include "err.h"

static void test_token_shape(void **state) {
  (void)state;
  assert_true(kf_dash__token_ok("kft_0123abcd"));
  assert_true(kf_dash__token_ok("e2e-secret-token+/="));
  assert_false(kf_dash__token_ok(NULL));
  assert_false(kf_dash__token_ok(""));
  assert_false(kf_dash__token_ok("two words"));
  assert_false(kf_dash__token_ok("line\nbreak"));
  assert_false(kf_dash__token_ok("tab\there"));
  assert_false(kf_dash__token_ok("caf\xc3\xa9"));
  char big[KF_DASH_TOKEN_MAX + 2];
  memset(big, 'a', sizeof big);
  big[KF_DASH_TOKEN_MAX] = '\0';
  assert_true(kf_dash__token_ok(big));
  big[KF_DASH_TOKEN_MAX] = 'a';
  big[KF_DASH_TOKEN_MAX + 1] = '\0';
  assert_false(kf_dash__token_ok(big));
}

static void test_add_lookup_drop(void **state) {
  (void)state;
  kf_dash_sessions *t = kf_dash__sessions_new(4, 60000);
  assert_non_null(t);
  char a[KF_DASH_SID_LEN + 1], b[KF_DASH_SID_LEN + 1];
  char tok[KF_DASH_TOKEN_MAX + 1];
  assert_int_equal(kf_dash__session_add(t, "tok-a", a), 0);
  assert_int_equal(kf_dash__session_add(t, "tok-b", b), 0);
  assert_int_equal(strlen(a), KF_DASH_SID_LEN);
  assert_string_not_equal(a, b);
  assert_null(strstr(a, "tok"));
  assert_true(kf_dash__session_token(t, a, tok, sizeof tok));
  assert_string_equal(tok, "tok-a");
  assert_true(kf_dash__session_token(t, b, tok, sizeof tok));
  assert_string_equal(tok, "tok-b");
  /* a near miss, a wrong shape, nothing */
  char near[KF_DASH_SID_LEN + 1];
  memcpy(near, a, sizeof near);
  near[KF_DASH_SID_LEN - 1] = near[KF_DASH_SID_LEN - 1] == '0' ? '1' : '0';
  assert_false(kf_dash__session_token(t, near, tok, sizeof tok));
  assert_false(kf_dash__session_token(t, "tok-a", tok, sizeof tok));
  assert_false(kf_dash__session_token(t, "", tok, sizeof tok));
  /* logout */
  kf_dash__session_drop(t, a);
  assert_false(kf_dash__session_token(t, a, tok, sizeof tok));
  assert_true(kf_dash__session_token(t, b, tok, sizeof tok));
  /* not a credential: no session */
  assert_int_equal(kf_dash__session_add(t, "bad token", a), KF_EINVAL);
  kf_dash__sessions_free(t);
}

static void test_full_table_evicts_oldest(void **state) {
  (void)state;
  kf_dash_sessions *t = kf_dash__sessions_new(2, 60000);
  assert_non_null(t);
  char s1[KF_DASH_SID_LEN + 1], s2[KF_DASH_SID_LEN + 1],
      s3[KF_DASH_SID_LEN + 1], tok[KF_DASH_TOKEN_MAX + 1];
  struct timespec ms = {0, 5 * 1000 * 1000};
  assert_int_equal(kf_dash__session_add(t, "one", s1), 0);
  nanosleep(&ms, NULL);
  assert_int_equal(kf_dash__session_add(t, "two", s2), 0);
  nanosleep(&ms, NULL);
  /* using s1 makes s2 the least recently used */
  assert_true(kf_dash__session_token(t, s1, tok, sizeof tok));
  nanosleep(&ms, NULL);
  assert_int_equal(kf_dash__session_add(t, "three", s3), 0);
  assert_true(kf_dash__session_token(t, s1, tok, sizeof tok));
  assert_false(kf_dash__session_token(t, s2, tok, sizeof tok));
  assert_true(kf_dash__session_token(t, s3, tok, sizeof tok));
  assert_string_equal(tok, "three");
  kf_dash__sessions_free(t);
}

static void test_idle_expiry(void **state) {
  (void)state;
  kf_dash_sessions *t = kf_dash__sessions_new(4, 50);
  assert_non_null(t);
  char s[KF_DASH_SID_LEN + 1], tok[KF_DASH_TOKEN_MAX + 1];
  assert_int_equal(kf_dash__session_add(t, "short", s), 0);
  /* idle longer than 50 ms (any amount of load only makes it longer) */
  struct timespec wait = {0, 200 * 1000 * 1000};
  nanosleep(&wait, NULL);
  assert_false(kf_dash__session_token(t, s, tok, sizeof tok));
  kf_dash__sessions_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_token_shape),
      cmocka_unit_test(test_add_lookup_drop),
      cmocka_unit_test(test_full_table_evicts_oldest),
      cmocka_unit_test(test_idle_expiry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
