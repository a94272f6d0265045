/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-text-sanitize.c -- common/text.c: untrusted bytes made
 * into valid, display-safe, bounded UTF-8 (kf_text_sanitize), and the
 * checks that refuse them instead (kf_text_check, kf_text_check_wire), and
 * the in-place sanitizing of unpacked messages (kf_text_sanitize_pb).
 *
 * Every output of the sanitizer is also run through kf_text_check: what
 * the worker reports must be what the store accepts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "text.h"

/* Sanitizes n bytes into a cap-byte buffer; checks the result is valid
 * and fits; returns it (static). */
static const char *san(const void *in, size_t n, size_t cap, unsigned flags) {
  static char out[1 << 16];
  assert_true(cap <= sizeof out);
  memset(out, 'Z', sizeof out);
  size_t len = kf_text_sanitize(in, n, out, cap, flags);
  assert_true(len < cap);
  assert_int_equal(strlen(out), len);
  char why[128];
  if (kf_text_check(out, len, cap, why, sizeof why))
    fail_msg("sanitized text %s: '%s'", why, out);
  return out;
}

static void plain_text_unchanged(void **state) {
  (void)state;
  const char *s = "compile: error: 'x' undeclared (first use) — ñ 日本 😀";
  assert_string_equal(san(s, strlen(s), 256, 0), s);
  assert_true(kf_text_is_clean(s, strlen(s), 0));
  assert_string_equal(san("", 0, 16, 0), "");
  assert_string_equal(san(NULL, 0, 16, 0), "");
}

static void invalid_bytes_escaped(void **state) {
  (void)state;
  /* a lone continuation byte, FF, an overlong '/', a surrogate, a code
   * point above U+10FFFF, a sequence cut short by the end */
  const char in[] = "a\x80" "b\xff" "c\xc0\xaf" "d\xed\xa0\x80" "e"
                    "\xf4\x90\x80\x80" "f\xe6\x97";
  const char *want = "a\\x80b\\xffc\\xc0\\xafd\\xed\\xa0\\x80e"
                     "\\xf4\\x90\\x80\\x80f\\xe6\\x97";
  assert_string_equal(san(in, sizeof in - 1, 256, 0), want);
  assert_false(kf_text_is_clean(in, sizeof in - 1, 0));
  /* A symbol name that is not UTF-8, as a link check would quote it. */
  const char sym[] = "calls '\xfe\xfe\xfe_kernel', which candidates may not"
                     " use";
  assert_string_equal(san(sym, sizeof sym - 1, 256, 0),
                      "calls '\\xfe\\xfe\\xfe_kernel', which candidates may"
                      " not use");
}

static void nul_and_controls_dropped(void **state) {
  (void)state;
  const char in[] = "ab\0cd\x01\x7f\r\n\te\xc2\x85"
                    "f"; /* NUL, SOH, DEL, CR, LF, TAB, NEL (C1) */
  assert_string_equal(san(in, sizeof in - 1, 64, 0), "abcdef");
  assert_string_equal(san(in, sizeof in - 1, 64, KF_TEXT_MULTILINE),
                      "abcd\n\tef");
}

static void ansi_escapes_dropped(void **state) {
  (void)state;
  const char *in = "\x1b[31mred\x1b[0m \x1b]0;title\x07" "ok \x1b]8;;http://x"
                   "\x1b\\link\x1b]8;;\x1b\\ \x1b" "c\x1b[2J\x1b[?25l" "end\x1b";
  assert_string_equal(san(in, strlen(in), 256, 0), "red ok link end");
  /* An unterminated OSC ends at the line, not at the end of the text. */
  const char *osc = "a\x1b]0;never ends\nb";
  assert_string_equal(san(osc, strlen(osc), 64, KF_TEXT_MULTILINE), "a\nb");
}

static void bidi_overrides_dropped(void **state) {
  (void)state;
  /* U+202E RIGHT-TO-LEFT OVERRIDE, U+2066 LRI, U+2069 PDI, U+200F RLM,
   * U+061C ALM, U+202A LRE */
  const char *in = "ok\xe2\x80\xae" "evil\xe2\x81\xa6" "x\xe2\x81\xa9"
                   "\xe2\x80\x8f" "\xd8\x9c" "\xe2\x80\xaa" "y";
  assert_string_equal(san(in, strlen(in), 64, 0), "okevilxy");
  /* Neighbours of the ranges stay: U+2030 PER MILLE, U+2065. */
  const char *keep = "\xe2\x80\xb0 \xe2\x81\xa5";
  assert_string_equal(san(keep, strlen(keep), 64, 0), keep);
}

static void cap_never_cuts_a_character(void **state) {
  (void)state;
  /* "é" is 2 bytes: 10 of them are 20 bytes.  A cap of 12 (11 bytes of
   * text) keeps 4 characters (8 bytes) and the 3-byte mark. */
  const char *e10 = "éééééééééé";
  assert_string_equal(san(e10, strlen(e10), 12, 0), "éééé...");
  for (size_t cap = 1; cap <= 24; cap++) {
    const char *o = san(e10, strlen(e10), cap, 0);
    if (cap > 20) assert_string_equal(o, e10);
  }
  /* An escape is not split either: "\xff" takes 4 bytes. */
  const char bad[] = "\xff\xff\xff\xff";
  assert_string_equal(san(bad, 4, 12, 0), "\\xff\\xff...");
  /* Tiny caps: no room for the mark. */
  assert_string_equal(san("abcdef", 6, 3, 0), "ab");
  char one[1] = {'Z'};
  assert_int_equal(kf_text_sanitize("abc", 3, one, 1, 0), 0);
  assert_int_equal(one[0], '\0');
  assert_int_equal(kf_text_sanitize("abc", 3, one, 0, 0), 0);
}

static void one_megabyte(void **state) {
  (void)state;
  /* A 1 MB reason: a compiler message echoing a huge identifier of
   * two-byte characters, cut by someone mid-character at an odd length,
   * with an escape every so often. */
  size_t n = 1u << 20;
  char *in = malloc(n);
  assert_non_null(in);
  for (size_t i = 0; i + 1 < n; i += 2) {
    in[i] = '\xc3';
    in[i + 1] = '\xa9';
  }
  for (size_t i = 1000; i + 4 < n; i += 100000) memcpy(in + i, "\x1b[1m", 4);
  char *out = kf_text_sanitize_dup(in, n - 1, KF_TEXT_REASON_MAX,
                                   KF_TEXT_MULTILINE);
  assert_non_null(out);
  size_t len = strlen(out);
  assert_true(len <= KF_TEXT_REASON_MAX);
  assert_true(len >= KF_TEXT_REASON_MAX - 4);
  assert_string_equal(out + len - 3, "...");
  char why[128];
  assert_int_equal(kf_text_check(out, len, KF_TEXT_REASON_MAX, why,
                                 sizeof why), 0);
  free(out);
  /* Unbounded: the whole megabyte, the cut last character escaped. */
  out = kf_text_sanitize_dup(in, n - 1, SIZE_MAX - 1, 0);
  assert_non_null(out);
  len = strlen(out);
  assert_string_equal(out + len - 4, "\\xc3");
  assert_int_equal(kf_text_check(out, len, SIZE_MAX, why, sizeof why), 0);
  free(out);
  free(in);
}

static void check_names_the_problem(void **state) {
  (void)state;
  char why[128];
  assert_int_equal(kf_text_check("fine ü", 7, 64, why, sizeof why), 0);
  assert_int_equal(kf_text_check(NULL, 0, 0, why, sizeof why), 0);
  assert_int_equal(kf_text_check("ab\xff", 3, 64, why, sizeof why), KF_EINVAL);
  assert_string_equal(why, "is not valid UTF-8 (byte 2)");
  assert_int_equal(kf_text_check("ab\0c", 4, 64, why, sizeof why), KF_EINVAL);
  assert_string_equal(why, "contains a NUL byte (byte 2)");
  assert_int_equal(kf_text_check("abcdef", 6, 4, why, sizeof why), KF_EINVAL);
  assert_string_equal(why, "is longer than 4 bytes (6)");
  /* cut mid-character */
  assert_int_equal(kf_text_check("x\xe6\x97", 3, 64, why, sizeof why),
                   KF_EINVAL);
  assert_string_equal(why, "is not valid UTF-8 (byte 1)");
}

/* A SubmitTasksRequest whose second task's kind holds a NUL: unpacked,
 * the kind would silently read "chec". */
static void wire_check_names_the_field(void **state) {
  (void)state;
  Kernelfleet__TaskSpec a = KERNELFLEET__TASK_SPEC__INIT;
  Kernelfleet__TaskSpec b = KERNELFLEET__TASK_SPEC__INIT;
  a.kind = "checksum";
  a.payload.data = (uint8_t *)"\0\xff binary is fine";
  a.payload.len = 18;
  b.kind = "chec#sum";
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.model = "cpu";
  b.device_class = &dc;
  Kernelfleet__TaskSpec *ts[] = {&a, &b};
  Kernelfleet__SubmitTasksRequest r = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  r.tasks = ts;
  r.n_tasks = 2;
  uint8_t buf[256];
  size_t n = kernelfleet__submit_tasks_request__pack(&r, buf);
  char why[256];
  const ProtobufCMessageDescriptor *d =
      &kernelfleet__submit_tasks_request__descriptor;
  assert_int_equal(kf_text_check_wire(d, buf, n, why, sizeof why), 0);
  uint8_t *hash = memchr(buf, '#', n);
  assert_non_null(hash);
  *hash = 0;
  assert_int_equal(kf_text_check_wire(d, buf, n, why, sizeof why), KF_EINVAL);
  assert_string_equal(why, "tasks[1].kind contains a NUL byte (byte 4)");
  *hash = 0xC3; /* a lead byte with no continuation */
  assert_int_equal(kf_text_check_wire(d, buf, n, why, sizeof why), KF_EINVAL);
  assert_string_equal(why, "tasks[1].kind is not valid UTF-8 (byte 4)");
  *hash = '#';
  /* nested: the device class's model */
  uint8_t *u = memmem(buf, n, "cpu", 3);
  assert_non_null(u);
  u[1] = 0xFF;
  assert_int_equal(kf_text_check_wire(d, buf, n, why, sizeof why), KF_EINVAL);
  assert_string_equal(why,
                      "tasks[1].device_class.model is not valid UTF-8 (byte 1)");
  /* not a message at all */
  assert_int_equal(kf_text_check_wire(d, (const uint8_t *)"\x0a\x50", 2, why,
                                      sizeof why), KF_EPROTO);
  assert_int_equal(kf_text_check_wire(d, NULL, 0, why, sizeof why), 0);
}

/* An EvalResult as a harness could write it: every string field is
 * sanitized, numbers are left alone, defaults are not freed. */
static void sanitize_unpacked_message(void **state) {
  (void)state;
  Kernelfleet__StageResult s1 = KERNELFLEET__STAGE_RESULT__INIT;
  Kernelfleet__StageResult s2 = KERNELFLEET__STAGE_RESULT__INIT;
  s1.stage = "compile";
  s1.reason = "fine";
  s2.stage = "li\x1b[5mnk";
  s2.reason = "symbol '\xff\xfe' \xe2\x80\xae" "cba";
  s2.outcome = KERNELFLEET__OUTCOME__OUTCOME_LINK_REJECTED;
  Kernelfleet__StageResult *st[] = {&s1, &s2};
  Kernelfleet__EvalResult e = KERNELFLEET__EVAL_RESULT__INIT;
  e.outcome = KERNELFLEET__OUTCOME__OUTCOME_LINK_REJECTED;
  e.stages = st;
  e.n_stages = 2;
  e.toolchain = "gcc\n12";
  e.time_ns_median = 12.5;
  uint8_t buf[512];
  size_t n = kernelfleet__eval_result__pack(&e, buf);
  Kernelfleet__EvalResult *u = kernelfleet__eval_result__unpack(NULL, n, buf);
  assert_non_null(u);
  const char *dflt = u->harness_build; /* never set: the default "" */
  assert_int_equal(kf_text_sanitize_pb(&u->base, 8, 0), 0);
  assert_string_equal(u->stages[0]->stage, "compile");
  assert_string_equal(u->stages[0]->reason, "fine");
  assert_string_equal(u->stages[1]->stage, "link");
  assert_string_equal(u->stages[1]->reason, "symbo..."); /* capped at 8 */
  assert_string_equal(u->toolchain, "gcc12");
  assert_ptr_equal(u->harness_build, dflt);
  assert_true(u->time_ns_median == 12.5);
  assert_int_equal(u->stages[1]->outcome,
                   KERNELFLEET__OUTCOME__OUTCOME_LINK_REJECTED);
  kernelfleet__eval_result__free_unpacked(u, NULL);

  u = kernelfleet__eval_result__unpack(NULL, n, buf);
  assert_non_null(u);
  assert_int_equal(kf_text_sanitize_pb(&u->base, 1024, KF_TEXT_MULTILINE), 0);
  assert_string_equal(u->stages[1]->reason, "symbol '\\xff\\xfe' cba");
  assert_string_equal(u->toolchain, "gcc\n12");
  kernelfleet__eval_result__free_unpacked(u, NULL);
  assert_int_equal(kf_text_sanitize_pb(NULL, 8, 0), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plain_text_unchanged),
      cmocka_unit_test(invalid_bytes_escaped),
      cmocka_unit_test(nul_and_controls_dropped),
      cmocka_unit_test(ansi_escapes_dropped),
      cmocka_unit_test(bidi_overrides_dropped),
      cmocka_unit_test(cap_never_cuts_a_character),
      cmocka_unit_test(one_megabyte),
      cmocka_unit_test(check_names_the_problem),
      cmocka_unit_test(wire_check_names_the_field),
      cmocka_unit_test(sanitize_unpacked_message),
  };
  return cmocka_run_group_tests_name("text-sanitize", tests, NULL, NULL);
}
