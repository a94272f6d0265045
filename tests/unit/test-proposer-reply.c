/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-proposer-reply.c -- proposer/reply.c: what a model's
 * reply means (kf_llm_reply_parse).  The kernel is the first C-family
 * fenced block, the knob space the first ```json block; every malformed
 * reply is KF_EPROTO with a reason naming what was wrong, and leaves
 * nothing allocated (ASan's leak check runs with the test).
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
#include "llm.h"

static const char *KERNEL =
    "#ifndef BLOCK\n#define BLOCK 64\n#endif\n"
    "void kf_run(void) { int b = BLOCK; (void)b; }\n";

/* Expects a parse failure whose reason contains `want`. */
static void expect_bad(const char *reply, const char *want) {
  kf_proposal p;
  char err[512];
  int rc = kf_llm_reply_parse(reply, &p, err, sizeof err);
  assert_int_equal(rc, KF_EPROTO);
  if (!strstr(err, want)) fail_msg("reason '%s' lacks '%s'", err, want);
  assert_null(p.source);
  assert_int_equal(p.n_knobs, 0);
}

static char *reply_with(const char *code_info, const char *code,
                        const char *json) {
  static char buf[8192];
  int n = snprintf(buf, sizeof buf,
                   "Here is a faster kernel.\n\n```%s\n%s```\n", code_info,
                   code);
  if (json)
    snprintf(buf + n, sizeof buf - (size_t)n,
             "\nKnobs:\n```json\n%s\n```\nDone.\n", json);
  return buf;
}

static void code_only(void **state) {
  (void)state;
  kf_proposal p;
  char err[256];
  assert_int_equal(kf_llm_reply_parse(reply_with("c", KERNEL, NULL), &p, err,
                                      sizeof err), 0);
  assert_string_equal(p.source, KERNEL);
  assert_int_equal(p.n_knobs, 0);
  assert_string_equal(p.name, "");
  kf_proposal_clear(&p);
}

static void info_strings(void **state) {
  (void)state;
  static const char *const ok[] = {"", "c", "C", "cuda", "cu", "cpp", "c++",
                                   "c title=kernel.c"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    kf_proposal p;
    char err[256];
    assert_int_equal(kf_llm_reply_parse(reply_with(ok[i], KERNEL, NULL), &p,
                                        err, sizeof err), 0);
    assert_string_equal(p.source, KERNEL);
    kf_proposal_clear(&p);
  }
  /* a python block is no kernel */
  expect_bad(reply_with("python", "print(1)\n", NULL),
             "no fenced code block");
}

static void knobs_object_form(void **state) {
  (void)state;
  kf_proposal p;
  char err[256];
  const char *j = "{\"name\": \"tiled-1\", \"knobs\": {\"BLOCK\": [64, 128,"
                  " \"256\"], \"UNROLL\": [1.5, 2]}}";
  const char *code = "#define X BLOCK\nint UNROLL;\n";
  assert_int_equal(kf_llm_reply_parse(reply_with("c", code, j), &p, err,
                                      sizeof err), 0);
  assert_string_equal(p.name, "tiled-1");
  assert_int_equal(p.n_knobs, 2);
  assert_string_equal(p.knobs[0].name, "BLOCK");
  assert_int_equal(p.knobs[0].n_values, 3);
  assert_string_equal(p.knobs[0].values[0], "64");
  assert_string_equal(p.knobs[0].values[2], "256");
  assert_string_equal(p.knobs[1].name, "UNROLL");
  assert_string_equal(p.knobs[1].values[0], "1.5");
  assert_string_equal(p.knobs[1].values[1], "2");
  kf_proposal_clear(&p);
}

static void knobs_array_form(void **state) {
  (void)state;
  kf_proposal p;
  char err[256];
  const char *j = "{\"knobs\": [{\"name\": \"BLOCK\", \"values\": [\"a_1\","
                  " \"b-2\"]}]}";
  assert_int_equal(kf_llm_reply_parse(reply_with("cuda", KERNEL, j), &p, err,
                                      sizeof err), 0);
  assert_int_equal(p.n_knobs, 1);
  assert_string_equal(p.knobs[0].values[1], "b-2");
  kf_proposal_clear(&p);
}

/* The json block may come before the code, and text may surround both;
 * a later second code block is ignored. */
static void order_and_extra_blocks(void **state) {
  (void)state;
  char buf[4096];
  snprintf(buf, sizeof buf,
           "Plan:\n```json\n{\"knobs\": {\"BLOCK\": [1, 2]}}\n```\n"
           "Code:\n```c\n%s```\nAnd a test harness:\n```c\nint main(void)"
           " { return 0; }\n```\n", KERNEL);
  kf_proposal p;
  char err[256];
  assert_int_equal(kf_llm_reply_parse(buf, &p, err, sizeof err), 0);
  assert_string_equal(p.source, KERNEL);
  assert_int_equal(p.n_knobs, 1);
  kf_proposal_clear(&p);
}

static void malformed(void **state) {
  (void)state;
  expect_bad("", "empty reply");
  expect_bad("I cannot help with that.", "no fenced code block");
  expect_bad("```c\nint x;\n", "no fenced code block"); /* unclosed */
  expect_bad("```c\n\n  \n```\n", "code block is empty");
  expect_bad(reply_with("c", KERNEL, "{\"knobs\": {\"BLOCK\": [64,"),
             "not valid JSON");
  expect_bad(reply_with("c", KERNEL, "[1, 2]"), "must be an object");
  expect_bad(reply_with("c", KERNEL, "{\"knobs\": 7}"),
             "\"knobs\" must be an object");
  expect_bad(reply_with("c", KERNEL, "{\"knobs\": {\"BLOCK\": []}}"),
             "BLOCK needs an array of 1..16 values");
  expect_bad(reply_with("c", KERNEL, "{\"knobs\": {\"BLOCK\": 64}}"),
             "BLOCK needs an array");
  expect_bad(reply_with("c", KERNEL,
                        "{\"knobs\": {\"BLOCK\": [1,2,3,4,5,6,7,8,9,10,11,"
                        "12,13,14,15,16,17]}}"),
             "1..16 values");
  expect_bad(reply_with("c", KERNEL, "{\"knobs\": {\"KF_SEED\": [1]}}"),
             "not starting with KF_");
  expect_bad(reply_with("c", KERNEL, "{\"knobs\": {\"2X\": [1]}}"),
             "C identifier");
  expect_bad(reply_with("c", KERNEL, "{\"knobs\": {\"BLOCK\": [\"a b\"]}}"),
             "BLOCK[0] must be");
  expect_bad(reply_with("c", KERNEL,
                        "{\"knobs\": {\"BLOCK\": [\"$(rm -rf /)\"]}}"),
             "BLOCK[0] must be");
  expect_bad(reply_with("c", KERNEL,
                        "{\"knobs\": {\"BLOCK\": [\"123456789012345678901"
                        "234\"]}}"),
             "BLOCK[0] must be");
  expect_bad(reply_with("c", KERNEL, "{\"knobs\": {\"BLOCK\": [64, \"64\"]}}"),
             "BLOCK value 64 repeats");
  expect_bad(reply_with("c", KERNEL, "{\"knobs\": {\"BLOCK\": [true]}}"),
             "BLOCK[0] must be");
  expect_bad(reply_with("c", KERNEL,
                        "{\"knobs\": [{\"name\": \"BLOCK\", \"values\": [1]},"
                        " {\"name\": \"BLOCK\", \"values\": [2]}]}"),
             "knob BLOCK repeats");
  expect_bad(reply_with("c", KERNEL, "{\"knobs\": {\"WIDTH\": [4, 8]}}"),
             "WIDTH does not appear in the code");
  expect_bad(reply_with("c", KERNEL, "{\"name\": \"a/b\", \"knobs\": {}}"),
             "name must be");
  /* 13 knobs */
  char j[2048] = "{\"knobs\": {";
  char code[2048] = "";
  for (int i = 0; i < 13; i++) {
    char k[64];
    snprintf(k, sizeof k, "%s\"K%d\": [1]", i ? ", " : "", i);
    strcat(j, k);
    snprintf(k, sizeof k, "int K%d;\n", i);
    strcat(code, k);
  }
  strcat(j, "}}");
  expect_bad(reply_with("c", code, j), "at most 12 knobs");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(code_only),
      cmocka_unit_test(info_strings),
      cmocka_unit_test(knobs_object_form),
      cmocka_unit_test(knobs_array_form),
      cmocka_unit_test(order_and_extra_blocks),
      cmocka_unit_test(malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
