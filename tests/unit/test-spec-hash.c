/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-spec-hash.c -- kf_spec_canonical_hash, the spec's part of
 * a measurement's identity: the same spec written differently (key order,
 * blanks, a number for a string, another spelling of a float) hashes the
 * same; every edit that changes what a candidate is measured against
 * changes it; what does not (description, templates, file names) does not.
 *
 * Each variant is the base text with one snippet replaced, so a row shows
 * exactly what changed.  No files, no server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "spec.h"
#include "util.h"

static const char base[] =
    "{\n"
    "  \"name\": \"t\", \"backend\": \"cpu\", \"params\": [\"M\", \"N\"],\n"
    "  \"description\": \"base\",\n"
    "  \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"M\", "
    "\"N\"], \"dists\": [\"normal\", \"wide\"]},\n"
    "             {\"name\": \"idx\", \"dtype\": \"i32\", \"shape\": [\"M\"], "
    "\"dists\": [\"index\"], \"range\": \"N\"}],\n"
    "  \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"M\", "
    "\"N\"]}],\n"
    "  \"sizes\": {\"check\": [{\"M\": 1, \"N\": 3}, {\"M\": 2, \"N\": 5}], "
    "\"bench\": {\"M\": 4, \"N\": 5}},\n"
    "  \"tolerance\": {\"f32\": {\"rtol\": 1e-4, \"atol\": 1e-6}},\n"
    "  \"allow_nan\": false, \"deterministic\": true,\n"
    "  \"flops\": \"M*N\", \"bytes\": \"8*M*N + 4*M\",\n"
    "  \"workspace_bytes\": 0,\n"
    "  \"reference\": \"ref.c\",\n"
    "  \"templates\": [{\"name\": \"a\", \"file\": \"a.c\", \"knobs\": "
    "[{\"name\": \"U\", \"values\": [1, 2, \"x4\"]}]}]\n"
    "}\n";

/* base with the first occurrence of FROM replaced by TO; caller frees. */
static char *edit(const char *from, const char *to) {
  const char *at = strstr(base, from);
  if (!at) fail_msg("snippet not in base: %s", from);
  size_t pre = (size_t)(at - base), fl = strlen(from), tl = strlen(to);
  char *out = malloc(strlen(base) - fl + tl + 1);
  assert_non_null(out);
  memcpy(out, base, pre);
  memcpy(out + pre, to, tl);
  strcpy(out + pre + tl, at + fl);
  return out;
}

/* Hash of a spec text; fails the test when it does not parse. */
static void hash_of(const char *text, char out[65]) {
  char err[512] = "";
  kf_spec *s = NULL;
  if (kf_spec_parse(text, strlen(text), NULL, &s, err, sizeof err))
    fail_msg("does not parse: %s\n%s", err, text);
  assert_int_equal(kf_spec_canonical_hash(s, out), 0);
  kf_spec_free(s);
  assert_int_equal(strlen(out), 64);
  for (int i = 0; i < 64; i++)
    assert_non_null(strchr("0123456789abcdef", out[i]));
}

static void same_spec_same_hash(void **state) {
  (void)state;
  char h0[65], h[65];
  hash_of(base, h0);
  hash_of(base, h);
  assert_string_equal(h, h0);
  /* Written differently, meaning the same. */
  static const struct {
    const char *from, *to;
  } t[] = {
      /* key order */
      {"\"name\": \"t\", \"backend\": \"cpu\"",
       "\"backend\": \"cpu\", \"name\": \"t\""},
      {"{\"rtol\": 1e-4, \"atol\": 1e-6}", "{\"atol\": 1e-6, \"rtol\": 1e-4}"},
      {"{\"M\": 4, \"N\": 5}", "{\"N\": 5, \"M\": 4}"},
      /* blanks, also inside expressions */
      {"\"flops\": \"M*N\"", "\"flops\"   :\n\t\"M * N\""},
      {"\"8*M*N + 4*M\"", "\"8*M*N+4*M\""},
      /* the same number spelt another way */
      {"1e-4", "0.0001"},
      {"\"shape\": [\"M\"], ", "\"shape\": [\"M\"],"},
      /* not part of what is measured */
      {"\"description\": \"base\"", "\"description\": \"other words\""},
      {"\"reference\": \"ref.c\"", "\"reference\": \"ref2.c\""},
      {"\"values\": [1, 2, \"x4\"]", "\"values\": [1, 2, 3, 4]"},
      {"\"name\": \"a\", \"file\": \"a.c\"", "\"name\": \"b\", \"file\": \"b.c\""},
      /* workspace 0 is the default */
      {"  \"workspace_bytes\": 0,\n", ""},
      /* one bench size, in a list or not */
      {"\"bench\": {\"M\": 4, \"N\": 5}", "\"bench\": [{\"M\": 4, \"N\": 5}]"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    char *text = edit(t[i].from, t[i].to);
    hash_of(text, h);
    if (strcmp(h, h0))
      fail_msg("'%s' -> '%s' changed the hash", t[i].from, t[i].to);
    free(text);
  }
}

static void every_semantic_edit_changes_it(void **state) {
  (void)state;
  static const struct {
    const char *from, *to;
  } t[] = {
      {"\"name\": \"t\"", "\"name\": \"t2\""},
      {"\"params\": [\"M\", \"N\"]", "\"params\": [\"N\", \"M\"]"},
      /* tensors: name, dtype, shape, distributions and their order, range */
      {"\"name\": \"x\"", "\"name\": \"xx\""},
      {"\"name\": \"x\", \"dtype\": \"f32\"", "\"name\": \"x\", \"dtype\": \"f64\""},
      {"\"shape\": [\"M\", \"N\"], \"dists\"",
       "\"shape\": [\"N\", \"M\"], \"dists\""},
      {"\"shape\": [\"M\", \"N\"], \"dists\"",
       "\"shape\": [\"M*N\"], \"dists\""},
      {"[\"normal\", \"wide\"]", "[\"wide\", \"normal\"]"},
      {"[\"normal\", \"wide\"]", "[\"normal\", \"uniform\"]"},
      {"[\"normal\", \"wide\"]", "[\"normal\"]"},
      {"\"range\": \"N\"", "\"range\": \"N+1\""},
      {"\"name\": \"y\"", "\"name\": \"out\""},
      {"\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"M\", \"N\"]",
       "\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"M\", \"N\", \"1\"]"},
      /* sizes */
      {"{\"M\": 1, \"N\": 3}, {\"M\": 2, \"N\": 5}",
       "{\"M\": 1, \"N\": 3}, {\"M\": 2, \"N\": 7}"},
      {"{\"M\": 1, \"N\": 3}, {\"M\": 2, \"N\": 5}", "{\"M\": 1, \"N\": 3}"},
      {"{\"M\": 1, \"N\": 3}, {\"M\": 2, \"N\": 5}",
       "{\"M\": 2, \"N\": 5}, {\"M\": 1, \"N\": 3}"},
      {"\"bench\": {\"M\": 4, \"N\": 5}", "\"bench\": {\"M\": 4, \"N\": 6}"},
      /* every timed size, and their order (the first is the one profiled
       * and whose outputs must vary) */
      {"\"bench\": {\"M\": 4, \"N\": 5}",
       "\"bench\": [{\"M\": 4, \"N\": 5}, {\"M\": 8, \"N\": 5}]"},
      {"\"bench\": {\"M\": 4, \"N\": 5}",
       "\"bench\": [{\"M\": 8, \"N\": 5}, {\"M\": 4, \"N\": 5}]"},
      /* tolerances and flags */
      {"\"rtol\": 1e-4", "\"rtol\": 2e-4"},
      {"\"atol\": 1e-6", "\"atol\": 1e-7"},
      {"\"allow_nan\": false", "\"allow_nan\": true"},
      {"\"deterministic\": true", "\"deterministic\": false"},
      /* formulas and workspace */
      {"\"flops\": \"M*N\"", "\"flops\": \"2*M*N\""},
      {"\"8*M*N + 4*M\"", "\"8*M*N + 8*M\""},
      {"\"workspace_bytes\": 0", "\"workspace_bytes\": 64"},
  };
  char h0[65], h[65];
  hash_of(base, h0);
  char (*seen)[65] = calloc(sizeof t / sizeof t[0], sizeof *seen);
  assert_non_null(seen);
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    char *text = edit(t[i].from, t[i].to);
    hash_of(text, h);
    if (!strcmp(h, h0))
      fail_msg("'%s' -> '%s' kept the hash", t[i].from, t[i].to);
    /* and no two edits collide either */
    for (size_t j = 0; j < i; j++)
      if (!strcmp(h, seen[j]))
        fail_msg("edits %zu and %zu hash alike", i, j);
    memcpy(seen[i], h, sizeof h);
    free(text);
  }
  free(seen);
}

/* The shipped problems: each its own identity, stable across loads. */
static void shipped_problems_differ(void **state) {
  (void)state;
  static const char *const names[] = {"softmax", "rmsnorm", "vecsum", "gemm"};
  enum { N = sizeof names / sizeof names[0] };
  const char *src = getenv("KF_SOURCE_DIR");
  char h[N][65], again[65];
  for (int i = 0; i < N; i++) {
    char dir[1024], err[1024] = "";
    snprintf(dir, sizeof dir, "%s/problems/cpu/%s", src && *src ? src : ".",
             names[i]);
    kf_spec *s = NULL;
    if (kf_spec_load_dir(dir, &s, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(kf_spec_canonical_hash(s, h[i]), 0);
    kf_spec_free(s);
    /* Parsed from its JSON alone (dir NULL, as the coordinator does):
     * the same hash. */
    char path[1100], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/spec.json", dir);
    assert_int_equal(kf_read_file(path, 1 << 20, &text, &len, err, sizeof err),
                     0);
    assert_int_equal(kf_spec_parse(text, len, NULL, &s, err, sizeof err), 0);
    assert_int_equal(kf_spec_canonical_hash(s, again), 0);
    assert_string_equal(again, h[i]);
    kf_spec_free(s);
    free(text);
    for (int j = 0; j < i; j++) assert_string_not_equal(h[i], h[j]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_spec_same_hash),
      cmocka_unit_test(every_semantic_edit_changes_it),
      cmocka_unit_test(shipped_problems_differ),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
