/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-spec-parse.c -- the spec module on its own: every
 * shipped problem loads and keeps the sweep rules of problems/README.md,
 * the expression language evaluates and refuses what it must, and a table
 * of malformed specs is refused with the expected "file: field: reason".
 *
 * Malformed specs are made from one valid base text by replacing one
 * snippet, so each row shows exactly what is wrong with it.  No files are
 * written except by the missing-template test (a mkdtemp directory it
 * removes).  KF_SOURCE_DIR points at the repository.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "err.h"
#include "spec.h"
#include "util.h"

static const char *const shipped[] = {"softmax", "rmsnorm", "vecsum",
                                      "gemm"};

static const char *source_dir(void) {
  const char *d = getenv("KF_SOURCE_DIR");
  return d && *d ? d : ".";
}

/* ---- shipped problems ------------------------------------------------ */

static bool is_pow2_pm1(int64_t v) {
  for (int k = 1; k < 40; k++) {
    int64_t p = INT64_C(1) << k;
    if (v == p - 1 || v == p + 1) return true;
  }
  return false;
}

static void test_shipped_load(void **state) {
  (void)state;
  for (size_t p = 0; p < sizeof shipped / sizeof shipped[0]; p++) {
    char dir[1024], err[1024] = "";
    snprintf(dir, sizeof dir, "%s/problems/cpu/%s", source_dir(), shipped[p]);
    kf_spec *s = NULL;
    int rc = kf_spec_load_dir(dir, &s, err, sizeof err);
    if (rc) fail_msg("%s: %s", shipped[p], err);
    assert_string_equal(s->name, shipped[p]);
    assert_string_equal(s->backend, "cpu");
    assert_non_null(s->reference_source);
    assert_true(strstr(s->reference_source, "kf_launch") != NULL);
    assert_true(s->n_templates >= 2);
    assert_true(s->deterministic);
    assert_false(s->allow_nan);
    assert_true(strlen(s->description) > 100); /* tolerances justified */
    for (int t = 0; t < s->n_templates; t++) {
      assert_non_null(s->templates[t].source);
      assert_true(s->templates[t].n_knobs >= 1);
      for (int k = 0; k < s->templates[t].n_knobs; k++)
        assert_true(s->templates[t].knobs[k].n_values >= 1);
      assert_ptr_equal(kf_spec_template_find(s, s->templates[t].name),
                       &s->templates[t]);
    }
    /* The sweep rules the README asks of every problem: each param takes
     * the value 1, an odd value > 1, and a 2^k +- 1 value somewhere. */
    for (int i = 0; i < s->n_params; i++) {
      bool one = false, odd = false, pm1 = false;
      for (int z = 0; z < s->n_check_sizes; z++) {
        int64_t v = s->check_sizes[z].v[i];
        one |= v == 1;
        odd |= v > 1 && v % 2 == 1;
        pm1 |= is_pow2_pm1(v);
      }
      if (!one || !odd || !pm1)
        fail_msg("%s: param %s: sweep lacks 1 / odd / 2^k+-1", shipped[p],
                 s->params[i]);
    }
    /* Every input's distributions include something beyond N(0,1). */
    for (int i = 0; i < s->n_inputs; i++) assert_true(s->inputs[i].n_dists >= 3);
    int64_t flops, bytes;
    assert_int_equal(kf_spec_eval(s, s->flops, &s->bench_size, &flops, err,
                                  sizeof err), 0);
    assert_int_equal(kf_spec_eval(s, s->bytes, &s->bench_size, &bytes, err,
                                  sizeof err), 0);
    assert_true(bytes > 0);

    /* The same text parses without a directory: sources stay NULL. */
    kf_spec *s2 = NULL;
    assert_int_equal(kf_spec_parse(s->json, s->json_len, NULL, &s2, err,
                                   sizeof err), 0);
    assert_null(s2->reference_source);
    assert_null(s2->templates[0].source);
    assert_int_equal(s2->n_check_sizes, s->n_check_sizes);
    kf_spec_free(s2);
    kf_spec_free(s);
  }
}

static void test_shipped_values(void **state) {
  (void)state;
  char dir[1024], err[1024] = "";
  snprintf(dir, sizeof dir, "%s/problems/cpu/gemm", source_dir());
  kf_spec *s = NULL;
  if (kf_spec_load_dir(dir, &s, err, sizeof err)) fail_msg("%s", err);
  /* The roofline numbers are exactly the minimum: 2MNK flops, each
   * operand read once and C written once. */
  int64_t M = 128, N = 192, K = 160, v;
  assert_int_equal(s->bench_size.v[0], M);
  assert_int_equal(kf_spec_eval(s, s->flops, &s->bench_size, &v, err,
                                sizeof err), 0);
  assert_int_equal(v, 2 * M * N * K);
  assert_int_equal(kf_spec_eval(s, s->bytes, &s->bench_size, &v, err,
                                sizeof err), 0);
  assert_int_equal(v, 4 * (M * K + K * N + M * N));
  int64_t dims[KF_SPEC_MAX_DIMS], numel;
  assert_int_equal(kf_spec_shape(s, &s->inputs[1], &s->bench_size, dims,
                                 &numel, err, sizeof err), 0);
  assert_int_equal(dims[0], K);
  assert_int_equal(dims[1], N);
  assert_int_equal(numel, K * N);
  char buf[64];
  assert_string_equal(kf_spec_size_format(s, &s->bench_size, buf, sizeof buf),
                      "M=128 N=192 K=160");
  const kf_spec_template *t = kf_spec_template_find(s, "loops");
  assert_non_null(t);
  assert_string_equal(t->knobs[0].name, "ORDER");
  assert_string_equal(t->knobs[0].values[1], "ikj");
  assert_null(kf_spec_template_find(s, "nope"));
  assert_true(s->tol[KF_DT_F32].atol > 0);
  kf_spec_free(s);
}

/* ---- expressions ----------------------------------------------------- */

static const char mini[] =
    "{\"name\": \"e\", \"backend\": \"cpu\", \"params\": [\"M\", \"N\", "
    "\"K\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"M\"],"
    " \"dists\": [\"normal\"]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"M\"]}],"
    " \"sizes\": {\"check\": [{\"M\": 1, \"N\": 1, \"K\": 1}],"
    " \"bench\": {\"M\": 2, \"N\": 2, \"K\": 2}},"
    " \"tolerance\": {\"f32\": {\"rtol\": 0, \"atol\": 0}},"
    " \"flops\": \"M\", \"bytes\": \"M\", \"reference\": \"r.c\","
    " \"templates\": []}";

static void test_expr(void **state) {
  (void)state;
  char err[512];
  kf_spec *s = NULL;
  if (kf_spec_parse(mini, strlen(mini), NULL, &s, err, sizeof err))
    fail_msg("%s", err);
  const kf_size z = {{6, 4, 10}};
  static const struct {
    const char *e;
    int64_t want;
  } ok[] = {
      {"M*N", 24},         {"M + N*K", 46},     {"(M+N)*K", 100},
      {"-M + 10", 4},      {"--M", 6},          {"M/4", 1},
      {"-7/2", -3},        {"7 % 4", 3},        {"-7 % 4", -3},
      {" 2 * ( N + 1 ) ", 10}, {"K%N", 2},      {"123", 123},
      {"M-N-1", 1},        {"M/N*K", 10},       {"((((M))))", 6},
      {"9223372036854775807", INT64_MAX},
      {"-9223372036854775807 - 1", INT64_MIN},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    int64_t v = -12345;
    if (kf_spec_eval(s, ok[i].e, &z, &v, err, sizeof err))
      fail_msg("'%s': %s", ok[i].e, err);
    if (v != ok[i].want)
      fail_msg("'%s' = %lld, want %lld", ok[i].e, (long long)v,
               (long long)ok[i].want);
  }
  static const struct {
    const char *e, *why;
  } bad[] = {
      {"", "empty expression"},
      {"   ", "empty expression"},
      {"M*", "syntax error: expression ends early at column 3"},
      {"M N", "unexpected 'N' (expected an operator) at column 3"},
      {"M $ N", "unexpected '$' (expected an operator) at column 3"},
      {"(M", "expected ')' at column 3"},
      {"M)", "unmatched ')' at column 2"},
      {"2N", "letter after number"},
      {"M + $", "unexpected '$' (expected a number, a param or '(') at "
                "column 5"},
      {"M/(N-4)", "division by zero at column 2"},
      {"M%(N-4)", "modulo by zero at column 2"},
      {"9223372036854775807 + 1", "overflow at column 21"},
      {"99999999999999999999", "integer literal too large at column 1"},
      {"(-9223372036854775807 - 1) / -1", "overflow"},
      {"-(-9223372036854775807 - 1)", "overflow at column 1"},
      {"K*K*K*K*K*K*K*K*K*K*K*K*K*K*K*K*K*K*K*K", "overflow"},
      {"Q + 1", "unknown name 'Q' (params: M, N, K)"},
      {"m", "unknown name 'm'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int64_t v = 7;
    err[0] = '\0';
    int rc = kf_spec_eval(s, bad[i].e, &z, &v, err, sizeof err);
    if (rc != KF_ESPEC || !strstr(err, bad[i].why))
      fail_msg("'%s': rc %d, got \"%s\", want \"%s\"", bad[i].e, rc, err,
               bad[i].why);
  }
  /* Nesting is capped rather than trusted to the stack. */
  char deep[400];
  size_t n = 0;
  for (int i = 0; i < 150; i++) deep[n++] = '(';
  deep[n++] = '1';
  for (int i = 0; i < 150; i++) deep[n++] = ')';
  deep[n] = '\0';
  int64_t v;
  assert_int_equal(kf_spec_eval(s, deep, &z, &v, err, sizeof err), KF_ESPEC);
  assert_non_null(strstr(err, "nested too deeply"));
  kf_spec_free(s);
}

/* ---- malformed specs ------------------------------------------------- */

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

static void test_base_is_valid(void **state) {
  (void)state;
  char err[512] = "";
  kf_spec *s = NULL;
  if (kf_spec_parse(base, strlen(base), NULL, &s, err, sizeof err))
    fail_msg("%s", err);
  assert_int_equal(s->n_inputs, 2);
  assert_int_equal(s->inputs[1].dists[0], KF_DIST_INDEX);
  assert_string_equal(s->inputs[1].range, "N");
  assert_string_equal(s->templates[0].knobs[0].values[2], "x4");
  assert_string_equal(s->templates[0].file, "a.c");
  assert_int_equal(s->check_sizes[1].v[1], 5);
  assert_true(s->json_len == strlen(base));
  assert_string_equal(s->json, base);
  kf_spec_free(s);
}

/* sizes.bench as a list: every size kept in order, the first as
 * bench_size; the bytes over them their geometric mean (8*M*N + 4*M at
 * M=4,N=5 is 176 and at M=16,N=5 704: the mean 352) */
static void test_bench_list(void **state) {
  (void)state;
  char err[512] = "", *text = edit("\"bench\": {\"M\": 4, \"N\": 5}",
                                   "\"bench\": [{\"M\": 4, \"N\": 5}, "
                                   "{\"M\": 16, \"N\": 5}]");
  kf_spec *s = NULL;
  if (kf_spec_parse(text, strlen(text), NULL, &s, err, sizeof err))
    fail_msg("%s", err);
  assert_int_equal(kf_spec_n_bench(s), 2);
  assert_ptr_equal(kf_spec_bench(s, 0), &s->bench_size);
  assert_int_equal(s->bench_size.v[0], 4);
  assert_int_equal(kf_spec_bench(s, 1)->v[0], 16);
  int64_t b = 0;
  assert_int_equal(kf_spec_bench_bytes(s, &b, err, sizeof err), 0);
  assert_int_equal(b, 352);
  kf_spec_free(s);
  free(text);
  /* one size: exactly its bytes */
  assert_int_equal(kf_spec_parse(base, strlen(base), NULL, &s, err,
                                 sizeof err), 0);
  assert_int_equal(kf_spec_n_bench(s), 1);
  assert_int_equal(kf_spec_bench_bytes(s, &b, err, sizeof err), 0);
  assert_int_equal(b, 176);
  kf_spec_free(s);
}

static void test_malformed(void **state) {
  (void)state;
  static const struct {
    const char *from, *to, *want;
  } t[] = {
      /* shapes and expressions */
      {"\"y\", \"dtype\": \"f32\", \"shape\": [\"M\", \"N\"]",
       "\"y\", \"dtype\": \"f32\", \"shape\": [\"M\", \"K\"]",
       "spec.json: outputs[0].shape[1]: unknown name 'K' (params: M, N)"},
      {"\"shape\": [\"M\", \"N\"]", "\"shape\": [\"M\", \"N*\"]",
       "spec.json: inputs[0].shape[1]: syntax error: expression ends early "
       "at column 3"},
      {"\"shape\": [\"M\", \"N\"]", "\"shape\": [\"M\", \"N-3\"]",
       "spec.json: inputs[0].shape[1]: is 0 at sizes.check[0] (M=1 N=3); "
       "every dimension must be >= 1"},
      {"\"shape\": [\"M\", \"N\"]", "\"shape\": [\"M\", \"M/(N-3)\"]",
       "inputs[0].shape[1]: division by zero at column 2 at sizes.check[0]"},
      {"\"shape\": [\"M\", \"N\"]", "\"shape\": [\"M\", \"N\", \"M\", \"N\", "
                                    "\"M\"]",
       "inputs[0].shape: needs 1 to 4 dimensions (got 5)"},
      {"\"shape\": [\"M\", \"N\"]", "\"shape\": []",
       "inputs[0].shape: needs 1 to 4 dimensions (got 0)"},
      {"\"shape\": [\"M\", \"N\"]", "\"shape\": [\"M\", 0]",
       "inputs[0].shape[1]: must be between 1 and"},
      {"\"shape\": [\"M\", \"N\"]", "\"shape\": [\"M\", true]",
       "inputs[0].shape[1]: must be an expression string, not a boolean"},
      {"\"flops\": \"M*N\"", "\"flops\": \"0 - M\"",
       "spec.json: flops: is -1 at sizes.check[0] (M=1 N=3); must be >= 0"},
      {"\"bytes\": \"8*M*N + 4*M\"", "\"bytes\": \"M - M\"",
       "bytes: is 0 at sizes.check[0] (M=1 N=3); must be >= 1"},
      {"\"bytes\": \"8*M*N + 4*M\"",
       "\"bytes\": \"M*N*1000000000000*1000000000\"", "bytes: overflow"},

      {"\"flops\": \"M*N\"", "\"flops\": \"\"", "flops: empty expression"},
      {"\"flops\": \"M*N\", ", "", "spec.json: flops: missing (required)"},
      {"\"range\": \"N\"", "\"range\": \"N - 3\"",
       "inputs[1].range: is 0 at sizes.check[0]"},
      {"\"range\": \"N\"", "\"range\": \"2147483647 * 2\"",
       "inputs[1].range: is 4294967294"},
      /* dtypes and distributions */
      {"\"dtype\": \"f32\"", "\"dtype\": \"f33\"",
       "spec.json: inputs[0].dtype: unknown dtype 'f33' (expected one of "
       "f32, f64, bf16, f16, i32, i64, bool)"},
      {"\"dtype\": \"f32\"", "\"dtype\": 32",
       "inputs[0].dtype: must be a string, not a number"},
      {"\"normal\", \"wide\"", "\"normal\", \"gauss\"",
       "inputs[0].dists[1]: unknown distribution 'gauss' (expected one of "
       "normal, uniform, wide, offset, tiny, mixed, index, unit, sample)"},
      /* get_inputs() draws it: a torch kernelbench reference only */
      {"\"normal\", \"wide\"", "\"normal\", \"sample\"",
       "inputs[0].dists: distribution 'sample' draws through the "
       "reference's get_inputs() or generate_input(): torch problems only"},
      {"\"normal\", \"wide\"", "\"normal\", \"normal\"",
       "inputs[0].dists[1]: distribution 'normal' listed twice"},
      {"\"dists\": [\"normal\", \"wide\"]", "\"dists\": []",
       "inputs[0].dists: needs 1 to 8 distributions (got 0)"},
      {"\"dists\": [\"normal\", \"wide\"]}",
       "\"dists\": [\"normal\", \"index\"], \"range\": \"N\"}",
       "inputs[0].dists[1]: 'index' does not fit dtype f32"},
      {"\"dists\": [\"index\"]", "\"dists\": [\"normal\"]",
       "inputs[1].dists[0]: 'normal' does not fit dtype i32"},
      /* a mask (torch.bool) is drawn as 0/1 by 'index', never by a float
       * distribution */
      {"\"dtype\": \"i32\", \"shape\": [\"M\"], \"dists\": [\"index\"]",
       "\"dtype\": \"bool\", \"shape\": [\"M\"], \"dists\": [\"uniform\"]",
       "inputs[1].dists[0]: 'uniform' does not fit dtype bool"},
      {", \"range\": \"N\"", "",
       "inputs[1].range: missing: distribution 'index' needs a range"},
      {"\"dists\": [\"normal\", \"wide\"]}",
       "\"dists\": [\"normal\", \"wide\"], \"range\": \"N\"}",
       "inputs[0].range: only meaningful with distribution 'index'"},
      {"\"shape\": [\"M\", \"N\"]}]", "\"shape\": [\"M\", \"N\"], "
                                       "\"dists\": [\"normal\"]}]",
       "outputs[0].dists: unknown field (expected one of name, dtype, "
       "shape)"},
      /* sizes */
      {"{\"M\": 1, \"N\": 3}", "{\"M\": 1}",
       "spec.json: sizes.check[0]: missing param 'N'"},
      {"{\"M\": 1, \"N\": 3}", "{\"M\": 1, \"N\": 3, \"K\": 2}",
       "sizes.check[0].K: unknown param 'K' (params: M, N)"},
      {"{\"M\": 1, \"N\": 3}", "{\"M\": 1, \"N\": 3.5}",
       "sizes.check[0].N: must be an integer, not 3.5"},
      {"{\"M\": 1, \"N\": 3}", "{\"M\": 1, \"N\": 0}",
       "sizes.check[0].N: must be between 1 and"},
      {"{\"M\": 1, \"N\": 3}", "{\"M\": 1, \"N\": \"3\"}",
       "sizes.check[0].N: must be an integer, not a string"},
      {"{\"M\": 1, \"N\": 3}", "{\"M\": 1, \"N\": 3, \"M\": 2}",
       "sizes.check[0].M: given twice"},
      {"[{\"M\": 1, \"N\": 3}, {\"M\": 2, \"N\": 5}]", "[]",
       "spec.json: sizes.check: empty: the correctness sweep needs at least "
       "one size"},
      {"{\"M\": 2, \"N\": 5}]", "{\"M\": 1, \"N\": 3}]",
       "sizes.check[1]: same size as sizes.check[0]"},
      {"\"bench\": {\"M\": 4, \"N\": 5}", "\"bench\": {\"N\": 5}",
       "sizes.bench: missing param 'M'"},
      {", \"bench\": {\"M\": 4, \"N\": 5}", "",
       "sizes.bench: missing (required)"},
      /* a list of bench sizes (GPU MODE's benchmarks): 1 to 8, distinct,
       * each named by its place */
      {"\"bench\": {\"M\": 4, \"N\": 5}", "\"bench\": []",
       "sizes.bench: a list of 1 to 8 sizes (got 0)"},
      {"\"bench\": {\"M\": 4, \"N\": 5}",
       "\"bench\": [{\"M\": 1, \"N\": 1}, {\"M\": 1, \"N\": 2}, "
       "{\"M\": 1, \"N\": 3}, {\"M\": 1, \"N\": 4}, {\"M\": 1, \"N\": 5}, "
       "{\"M\": 1, \"N\": 6}, {\"M\": 1, \"N\": 7}, {\"M\": 1, \"N\": 8}, "
       "{\"M\": 1, \"N\": 9}]",
       "sizes.bench: a list of 1 to 8 sizes (got 9)"},
      {"\"bench\": {\"M\": 4, \"N\": 5}",
       "\"bench\": [{\"M\": 4, \"N\": 5}, {\"M\": 4}]",
       "sizes.bench[1]: missing param 'N'"},
      {"\"bench\": {\"M\": 4, \"N\": 5}",
       "\"bench\": [{\"M\": 4, \"N\": 5}, {\"N\": 5, \"M\": 4}]",
       "sizes.bench[1]: same size as sizes.bench[0]"},
      {"\"bench\": {\"M\": 4, \"N\": 5}", "\"bench\": [{\"M\": 4, "
       "\"N\": 5}, {\"M\": 4, \"N\": 0}]",
       "sizes.bench[1].N: must be between 1 and"},
      {"\"check\":", "\"chekc\":",
       "sizes.chekc: unknown field (expected one of check, bench)"},
      /* tolerance */
      {"\"atol\": 1e-6", "\"atol\": -1",
       "spec.json: tolerance.f32.atol: must be finite and >= 0 (got -1)"},
      {"\"atol\": 1e-6", "\"atol\": 1e400",
       "spec.json: tolerance.f32.atol: must be finite and >= 0 (got inf)"},
      /* a refused name is quoted display-safe: no escape reaches a
       * terminal */
      {"\"name\": \"t\"", "\"name\": \"t\\u001b]0;TITLE\\u0007x\"",
       "spec.json: name: 'tx' must be letters"},
      {"\"rtol\": 1e-4", "\"rtol\": -1e-4",
       "tolerance.f32.rtol: must be finite and >= 0"},
      {"\"rtol\": 1e-4", "\"rtol\": 1",
       "tolerance.f32: rtol 1 accepts any answer within 100%; must be < 1"},
      {"\"rtol\": 1e-4, ", "", "tolerance.f32.rtol: missing (required)"},
      {"\"atol\": 1e-6", "\"atol\": \"small\"",
       "tolerance.f32.atol: must be a number, not a string"},
      {"{\"f32\": {", "{\"f64\": {", "tolerance.f64: no output has dtype f64"},
      {"{\"f32\": {", "{\"f31\": {",
       "tolerance.f31: unknown field (expected one of f32, f64, bf16, f16, "
       "i32, i64, bool)"},
      {"\"tolerance\": {\"f32\": {\"rtol\": 1e-4, \"atol\": 1e-6}}",
       "\"tolerance\": {}",
       "spec.json: tolerance: no entry for dtype f32 of outputs[0] (y)"},
      /* knobs and templates */
      {"\"values\": [1, 2, \"x4\"]", "\"values\": []",
       "spec.json: templates[0].knobs[0].values: knob 'U' has no values"},
      {"\"values\": [1, 2, \"x4\"]", "\"values\": [1, 1]",
       "templates[0].knobs[0].values[1]: value 1 listed twice"},
      {"\"values\": [1, 2, \"x4\"]", "\"values\": [1, \"2 -o /etc/x\"]",
       "templates[0].knobs[0].values[1]: '2 -o /etc/x' is not 1 to 23 "
       "characters of [A-Za-z0-9_.+-] (it becomes -DU=value)"},
      {"\"values\": [1, 2, \"x4\"]", "\"values\": [1.5]",
       "templates[0].knobs[0].values[0]: must be an integer, not 1.5"},
      {"\"values\": [1, 2, \"x4\"]", "\"values\": [null]",
       "templates[0].knobs[0].values[0]: must be an integer or a string, not "
       "null"},
      {"\"values\": [1, 2, \"x4\"]", "\"values\": 4",
       "templates[0].knobs[0].values: must be an array, not a number"},
      {"{\"name\": \"U\",", "{\"name\": \"KF_U\",",
       "templates[0].knobs[0].name: 'KF_U' is not a C identifier of at most "
       "31 chars outside the reserved KF_ prefix"},
      {"{\"name\": \"U\",", "{\"name\": \"9U\",",
       "templates[0].knobs[0].name: '9U' is not a C identifier"},
      {"[{\"name\": \"U\", \"values\": [1, 2, \"x4\"]}]",
       "[{\"name\": \"U\", \"values\": [1]}, {\"name\": \"U\", \"values\": "
       "[2]}]",
       "templates[0].knobs[1].name: duplicate knob 'U'"},
      {"\"file\": \"a.c\"", "\"file\": \"a.cu\"",
       "templates[0].file: 'a.cu' must end in .c for backend cpu"},
      {"\"file\": \"a.c\"", "\"file\": \"../a.c\"",
       "templates[0].file: '../a.c' is not a plain file name"},
      {"\"file\": \"a.c\", ", "", "templates[0].file: missing (required)"},
      {"\"templates\": [{\"name\": \"a\", \"file\": \"a.c\", ",
       "\"templates\": [{\"name\": \"a\", \"file\": \"a.c\"}, {\"name\": "
       "\"a\", \"file\": \"b.c\", ",
       "templates[1].name: duplicate template name 'a'"},
      {"\"knobs\":", "\"knbos\":",
       "templates[0].knbos: unknown field (expected one of name, file, "
       "description, knobs, devices)"},
      {"\"reference\": \"ref.c\"", "\"reference\": \"/etc/passwd.c\"",
       "spec.json: reference: '/etc/passwd.c' is not a plain file name"},
      {"\"reference\": \"ref.c\"", "\"reference\": \".ref.c\"",
       "reference: '.ref.c' is not a plain file name"},
      {"\"reference\": \"ref.c\",", "", "reference: missing (required)"},
      /* names, types, structure */
      {"\"params\": [\"M\", \"N\"]", "\"params\": [\"M\", \"M\"]",
       "spec.json: params[1]: duplicate param 'M'"},
      {"\"params\": [\"M\", \"N\"]", "\"params\": \"M\"",
       "spec.json: params: must be an array, not a string"},
      {"\"params\": [\"M\", \"N\"]", "\"params\": []",
       "params: needs 1 to 8 names (got 0)"},
      {"\"params\": [\"M\", \"N\"]", "\"params\": [\"M\", \"N-1\"]",
       "params[1]: 'N-1' is not a C identifier"},
      {"{\"name\": \"y\"", "{\"name\": \"x\"",
       "outputs[0].name: duplicate tensor name 'x'"},
      {"{\"name\": \"x\"", "{\"name\": \"x-1\"",
       "inputs[0].name: 'x-1' is not a C identifier"},
      {"\"name\": \"t\",", "\"name\": \"t\", \"name\": \"t2\",",
       "spec.json: name: given twice"},
      {"\"name\": \"t\",", "", "spec.json: name: missing (required)"},
      {"\"flops\":", "\"flop\":",
       "spec.json: flop: unknown field (expected one of name, backend"},
      {"\"backend\": \"cpu\"", "\"backend\": \"tpu\"",
       "backend: unknown backend 'tpu' (expected cpu, cuda or torch)"},
      {"\"backend\": \"cpu\"", "\"backend\": \"cuda\"",
       "reference: 'ref.c' must end in .cu for backend cuda"},
      {"\"allow_nan\": false", "\"allow_nan\": 0",
       "allow_nan: must be true or false, not a number"},
      {"\"workspace_bytes\": 0", "\"workspace_bytes\": -1",
       "workspace_bytes: must be between 0 and"},
      {"\"outputs\": [{", "\"outputs\": [[{",
       "(top level): not valid JSON near line "},
      {"\"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": "
       "[\"M\", \"N\"]}]",
       "\"outputs\": []", "outputs: needs 1 to 8 tensors (got 0)"},
      {"\"inputs\": [{", "\"inputs\": [7, {",
       "inputs[0]: must be an object, not a number"},
      {"\"description\": \"base\"",
       "\"description\": \"" /* 1100 x's appended below */,
       "description: too long (at most 1023 characters)"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    char *text;
    if (strstr(t[i].want, "description: too long")) {
      char to[1200];
      memset(to, 'x', sizeof to);
      to[0] = '"';
      memcpy(to, "\"description\": \"", 16);
      to[sizeof to - 2] = '"';
      to[sizeof to - 1] = '\0';
      text = edit(t[i].from, to);
    } else {
      text = edit(t[i].from, t[i].to);
    }
    char err[1024] = "";
    kf_spec *s = (kf_spec *)0x1;
    int rc = kf_spec_parse(text, strlen(text), NULL, &s, err, sizeof err);
    if (rc != KF_ESPEC || s != NULL || !strstr(err, t[i].want))
      fail_msg("case %zu: rc %d, got \"%s\", want \"%s\"", i, rc, err,
               t[i].want);
    free(text);
  }
  /* Top level that is not an object, and not JSON at all. */
  char err[512];
  kf_spec *s;
  assert_int_equal(kf_spec_parse("[]", 2, NULL, &s, err, sizeof err),
                   KF_ESPEC);
  assert_non_null(strstr(err, "spec.json: (top level): must be an object, "
                              "not an array"));
  assert_int_equal(kf_spec_parse("{\"name\"", 7, NULL, &s, err, sizeof err),
                   KF_ESPEC);
  assert_non_null(strstr(err, "not valid JSON near line 1"));
  /* Length is honoured: the text after len is never read. */
  assert_int_equal(kf_spec_parse(base, strlen(base) - 3, NULL, &s, err,
                                 sizeof err), KF_ESPEC);
}

/* Files: a missing template is named by its field, a missing spec.json by
 * its path. */
static void test_missing_files(void **state) {
  (void)state;
  char dir[] = "/tmp/kf-spec-parse-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256], err[1024] = "";
  snprintf(path, sizeof path, "%s/spec.json", dir);
  kf_spec *s = (kf_spec *)0x1;
  assert_int_equal(kf_spec_load_dir(dir, &s, err, sizeof err), KF_EIO);
  assert_null(s);
  assert_non_null(strstr(err, "spec.json"));

  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(base, f);
  fclose(f);
  snprintf(path, sizeof path, "%s/ref.c", dir);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs("/* ref */\n", f);
  fclose(f);
  assert_int_equal(kf_spec_load_dir(dir, &s, err, sizeof err), KF_ESPEC);
  char want[512];
  snprintf(want, sizeof want,
           "%s/spec.json: templates[0].file: cannot read: %s/a.c: No such "
           "file",
           dir, dir);
  if (!strstr(err, want)) fail_msg("got \"%s\", want \"%s\"", err, want);

  snprintf(path, sizeof path, "%s/a.c", dir);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs("/* a */\n", f);
  fclose(f);
  if (kf_spec_load_dir(dir, &s, err, sizeof err)) fail_msg("%s", err);
  assert_string_equal(s->templates[0].source, "/* a */\n");
  assert_string_equal(s->reference_source, "/* ref */\n");
  kf_spec_free(s);

  unlink(path);
  snprintf(path, sizeof path, "%s/ref.c", dir);
  unlink(path);
  assert_int_equal(kf_spec_load_dir(dir, &s, err, sizeof err), KF_ESPEC);
  assert_non_null(strstr(err, "reference: cannot read"));
  snprintf(path, sizeof path, "%s/spec.json", dir);
  unlink(path);
  rmdir(dir);
  kf_spec_free(NULL);
}

/* A problem's files are regular files inside its directory: a link out
 * of it (to /etc/passwd, whose text the compile error then showed) and a
 * FIFO (the reader blocked for ever) are refused by name; a link to a
 * file inside it is followed (red team, 2026-11-30). */
/* Writes text to dir/name. */
static void put_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void test_files_inside_dir(void **state) {
  (void)state;
  char dir[] = "/tmp/kf-spec-parse-XXXXXX", out[] = "/tmp/kf-spec-out-XXXXXX";
  assert_non_null(mkdtemp(dir));
  int ofd = mkstemp(out);
  assert_true(ofd >= 0);
  assert_int_equal(write(ofd, "/* secret */\n", 13), 13);
  close(ofd);
  char path[256], sub[256], err[2048] = "";
  put_file(dir, "spec.json", base);
  put_file(dir, "a.c", "/* a */\n");
  snprintf(path, sizeof path, "%s/ref.c", dir);
  kf_spec *s = NULL;

  assert_int_equal(symlink(out, path), 0);
  assert_int_equal(kf_spec_load_dir(dir, &s, err, sizeof err), KF_ESPEC);
  if (!strstr(err, "reference: cannot read") ||
      !strstr(err, "outside the problem directory") || strstr(err, "secret"))
    fail_msg("a link out of the directory: %s", err);
  unlink(path);

  assert_int_equal(mkfifo(path, 0600), 0);
  assert_int_equal(kf_spec_load_dir(dir, &s, err, sizeof err), KF_ESPEC);
  if (!strstr(err, "not a regular file (a FIFO)"))
    fail_msg("a FIFO: %s", err);
  unlink(path);

  snprintf(sub, sizeof sub, "%s/sub", dir);
  assert_int_equal(mkdir(sub, 0700), 0);
  put_file(dir, "sub/real.c", "/* ref */\n");
  snprintf(sub, sizeof sub, "%s/sub/real.c", dir);
  assert_int_equal(symlink("sub/real.c", path), 0);
  if (kf_spec_load_dir(dir, &s, err, sizeof err)) fail_msg("%s", err);
  assert_string_equal(s->reference_source, "/* ref */\n");
  kf_spec_free(s);

  unlink(path);
  unlink(sub);
  snprintf(sub, sizeof sub, "%s/sub", dir);
  rmdir(sub);
  snprintf(path, sizeof path, "%s/a.c", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/spec.json", dir);
  unlink(path);
  rmdir(dir);
  unlink(out);
}

/* ---- helpers --------------------------------------------------------- */

/* ---- torch problems (harness/torch, docs/torch.md) ------------------ */

static void test_torch_shipped(void **state) {
  (void)state;
  char root[1024];
  snprintf(root, sizeof root, "%s/problems/torch", source_dir());
  DIR *d = opendir(root);
  assert_non_null(d);
  int n = 0, kb = 0, gm = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char dir[1400], err[1024] = "";
    snprintf(dir, sizeof dir, "%s/%s", root, de->d_name);
    kf_spec *s = NULL;
    if (kf_spec_load_dir(dir, &s, err, sizeof err))
      fail_msg("%s: %s", de->d_name, err);
    assert_string_equal(s->name, de->d_name);
    assert_string_equal(s->backend, "torch");
    assert_string_equal(s->torch_device, "cpu");
    bool is_kb = !strcmp(s->torch_kind, "kernelbench");
    kb += is_kb;
    gm += !is_kb;
    assert_true(strstr(s->reference_source,
                       is_kb ? "class Model" : "def ref_kernel") != NULL);
    assert_true(s->n_templates >= 1);
    assert_true(strstr(s->templates[0].source,
                       is_kb ? "class ModelNew" : "def custom_kernel") != NULL);
    kf_spec_free(s);
    n++;
  }
  closedir(d);
  assert_true(kb >= 13 && gm >= 2 && n == kb + gm);
}

static const char TORCH_BASE[] =
    "{\"name\": \"t\", \"backend\": \"torch\", \"params\": [\"N\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\":"
    " [\"N\"], \"dists\": [\"normal\"]}], \"outputs\": [{\"name\":"
    " \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}], \"sizes\":"
    " {\"check\": [{\"N\": 3}], \"bench\": {\"N\": 8}}, \"tolerance\":"
    " {\"f32\": {\"rtol\": 0, \"atol\": 0}}, \"flops\": \"N\","
    " \"bytes\": \"8*N\", \"reference\": \"reference.py\", \"templates\":"
    " [], \"torch\": TORCH}";

/* TORCH_BASE with its torch section replaced; parsed without files. */
static int parse_torch(const char *torch, const char *backend, kf_spec **out,
                       char *err, size_t errlen) {
  char buf[4096];
  const char *at = strstr(TORCH_BASE, "TORCH");
  snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - TORCH_BASE), TORCH_BASE,
           torch, at + 5);
  if (backend) {
    char *b = strstr(buf, "\"torch\", \"params");
    assert_non_null(b);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%.*s\"%s\"%s", (int)(b - buf), buf, backend,
             b + 7);
    memcpy(buf, tmp, strlen(tmp) + 1);
  }
  *out = NULL;
  return kf_spec_parse(buf, strlen(buf), NULL, out, err, errlen);
}

static void test_torch_section(void **state) {
  (void)state;
  char err[1024];
  kf_spec *s = NULL;
  assert_int_equal(parse_torch("{\"kind\": \"kernelbench\", \"init\": [4, 0.5],"
                               " \"args\": [{\"t\": 0}, {\"v\": 2}]}", NULL,
                               &s, err, sizeof err), 0);
  assert_string_equal(s->torch_kind, "kernelbench");
  assert_string_equal(s->torch_device, "cpu");
  assert_string_equal(s->torch_extra,
                      "{\"init\":[4,0.5],\"args\":[{\"t\":0},{\"v\":2}]}");
  char h1[65], h2[65];
  assert_int_equal(kf_spec_canonical_hash(s, h1), 0);
  kf_spec_free(s);
  /* the init arguments are part of what a candidate is measured against */
  assert_int_equal(parse_torch("{\"kind\": \"kernelbench\", \"init\": [5, 0.5],"
                               " \"args\": [{\"t\": 0}, {\"v\": 2}]}", NULL,
                               &s, err, sizeof err), 0);
  assert_int_equal(kf_spec_canonical_hash(s, h2), 0);
  assert_string_not_equal(h1, h2);
  kf_spec_free(s);
  /* a float a JSON number would not keep one: {"float": 2} or "-inf" */
  assert_int_equal(parse_torch("{\"kind\": \"kernelbench\", \"init\": "
                               "[{\"float\": 2}], \"args\": [{\"t\": 0}, "
                               "{\"v\": {\"float\": \"-inf\"}}]}", NULL,
                               &s, err, sizeof err), 0);
  kf_spec_free(s);
  /* an integer beyond 2^53 as {"int": digits}: kept exactly, so 2^61 - 1
   * and 2^61 are two problems (as JSON numbers they were one) */
  assert_int_equal(parse_torch("{\"kind\": \"kernelbench\", \"init\": "
                               "[{\"int\": \"2305843009213693951\"}], "
                               "\"args\": [{\"t\": 0}, {\"v\": {\"int\": "
                               "\"-9\"}}]}", NULL, &s, err, sizeof err), 0);
  assert_int_equal(kf_spec_canonical_hash(s, h1), 0);
  kf_spec_free(s);
  assert_int_equal(parse_torch("{\"kind\": \"kernelbench\", \"init\": "
                               "[{\"int\": \"2305843009213693952\"}], "
                               "\"args\": [{\"t\": 0}, {\"v\": {\"int\": "
                               "\"-9\"}}]}", NULL, &s, err, sizeof err), 0);
  assert_int_equal(kf_spec_canonical_hash(s, h2), 0);
  assert_string_not_equal(h1, h2);
  kf_spec_free(s);
  /* a GPU MODE case is part of the problem: another size or seed is
   * another hash */
  assert_int_equal(parse_torch("{\"kind\": \"gpumode\", \"case\": "
                               "{\"size\": 4, \"seed\": 7, \"mode\": "
                               "\"fast\", \"flag\": true}, \"data\": "
                               "\"tuple\"}", NULL, &s, err, sizeof err), 0);
  assert_int_equal(kf_spec_canonical_hash(s, h1), 0);
  kf_spec_free(s);
  assert_int_equal(parse_torch("{\"kind\": \"gpumode\", \"case\": "
                               "{\"size\": 4, \"seed\": 8, \"mode\": "
                               "\"fast\", \"flag\": true}, \"data\": "
                               "\"tuple\"}", NULL, &s, err, sizeof err), 0);
  assert_int_equal(kf_spec_canonical_hash(s, h2), 0);
  assert_string_not_equal(h1, h2);
  kf_spec_free(s);
  /* GPU MODE: a case per size (task.yml's tests and the benchmark), each
   * size as its values in params order for the sampler; the cases are part
   * of the problem too */
  assert_int_equal(parse_torch("{\"kind\": \"gpumode\", \"cases\": ["
                               "{\"size\": {\"N\": 3}, \"case\": {\"n\": 3, "
                               "\"k\": 1}}, {\"size\": {\"N\": 8}, \"case\": "
                               "{\"n\": 8, \"k\": 1}}]}", NULL, &s, err,
                               sizeof err), 0);
  assert_string_equal(s->torch_extra,
                      "{\"cases\":[{\"size\":[3],\"case\":{\"n\":3,\"k\":1}},"
                      "{\"size\":[8],\"case\":{\"n\":8,\"k\":1}}]}");
  assert_int_equal(kf_spec_canonical_hash(s, h1), 0);
  kf_spec_free(s);
  assert_int_equal(parse_torch("{\"kind\": \"gpumode\", \"cases\": ["
                               "{\"size\": {\"N\": 3}, \"case\": {\"n\": 3, "
                               "\"k\": 2}}, {\"size\": {\"N\": 8}, \"case\": "
                               "{\"n\": 8, \"k\": 1}}]}", NULL, &s, err,
                               sizeof err), 0);
  assert_int_equal(kf_spec_canonical_hash(s, h2), 0);
  assert_string_not_equal(h1, h2);
  kf_spec_free(s);
  static const struct {
    const char *torch, *backend, *want;
  } bad[] = {
      {"{}", NULL, "torch.kind: missing"},
      /* torch.cases: one case for every size, no other */
      {"{\"kind\": \"kernelbench\", \"cases\": [{\"size\": {\"N\": 8}, "
       "\"case\": {}}]}", NULL, "torch.cases: only a gpumode problem"},
      {"{\"kind\": \"gpumode\", \"cases\": []}", NULL,
       "torch.cases: must be an array of 1 to"},
      {"{\"kind\": \"gpumode\", \"cases\": [{\"size\": {\"N\": 3}, "
       "\"case\": {}}]}", NULL, "torch.cases: sizes.bench has no case"},
      {"{\"kind\": \"gpumode\", \"cases\": [{\"size\": {\"N\": 8}, "
       "\"case\": {}}]}", NULL, "torch.cases: sizes.check[0] has no case"},
      {"{\"kind\": \"gpumode\", \"cases\": [{\"size\": {\"N\": 8}, "
       "\"case\": {}}, {\"size\": {\"N\": 8}, \"case\": {\"a\": 1}}]}", NULL,
       "torch.cases[1]: has the size of torch.cases[0]"},
      {"{\"kind\": \"gpumode\", \"cases\": [{\"size\": {\"M\": 8}, "
       "\"case\": {}}]}", NULL, "unknown param 'M'"},
      {"{\"kind\": \"gpumode\", \"cases\": [{\"size\": {\"N\": 8}, "
       "\"case\": {\"a-b\": 1}}]}", NULL,
       "torch.cases[0].case: [0]: 'a-b' is not a Python keyword"},
      {"{\"kind\": \"gpumode\", \"cases\": [{\"size\": {\"N\": 8}, "
       "\"case\": {}, \"seed\": 1}]}", NULL, "seed"},
      /* cases that hold, then a field that does not: nothing leaks */
      {"{\"kind\": \"gpumode\", \"cases\": [{\"size\": {\"N\": 3}, "
       "\"case\": {}}, {\"size\": {\"N\": 8}, \"case\": {}}], \"data\": "
       "\"dict\"}", NULL, "torch.data: must be"},
      {"{\"kind\": \"triton\"}", NULL, "torch.kind: 'triton'"},
      {"{\"kind\": \"gpumode\", \"device\": \"tpu\"}", NULL,
       "torch.device: 'tpu'"},
      {"{\"kind\": \"gpumode\", \"init\": 3}", NULL, "torch.init: must be"},
      {"{\"kind\": \"gpumode\", \"args\": [{\"t\": 1}]}", NULL,
       "torch.args: [0] must be"},
      {"{\"kind\": \"gpumode\", \"args\": [{\"t\": 0, \"v\": 1}]}", NULL,
       "torch.args: [0] must be"},
      {"{\"kind\": \"gpumode\", \"args\": [{\"t\": 0}, "
       "{\"v\": {\"float\": \"big\"}}]}", NULL, "torch.args: [1] must be"},
      {"{\"kind\": \"gpumode\", \"extra\": 1}", NULL, "extra"},
      /* integers a JSON number does not hold: the file's value is lost */
      {"{\"kind\": \"kernelbench\", \"init\": [2305843009213693951]}", NULL,
       "torch.init: [0]: the number"},
      {"{\"kind\": \"kernelbench\", \"init\": [1, [2, -9007199254740993]]}",
       NULL, "torch.init: [1]: the number"},
      {"{\"kind\": \"kernelbench\", \"args\": [{\"t\": 0}, "
       "{\"v\": 1e300}]}", NULL, "torch.args: [1]: the number"},
      {"{\"kind\": \"kernelbench\", \"init\": [{\"int\": \"12a\"}]}", NULL,
       "torch.init: [0]: {\"int\": ...} takes"},
      {"{\"kind\": \"kernelbench\", \"args\": [{\"t\": 0}, "
       "{\"v\": {\"int\": \"\"}}]}", NULL, "torch.args: [1] must be"},
      /* a 0-d input is one element, held as shape ["1"] */
      {"{\"kind\": \"kernelbench\", \"args\": [{\"t\": 0, \"0d\": true}]}",
       NULL, "torch.args: [0]: input 'x' passed 0-d must have shape"},
      {"{\"kind\": \"kernelbench\", \"args\": [{\"t\": 0, \"0d\": 1}]}",
       NULL, "torch.args: [0] must be"},
      /* GPU MODE: generate_input()'s arguments and the data's form */
      {"{\"kind\": \"kernelbench\", \"case\": {\"size\": 4}}", NULL,
       "torch.case: only a gpumode problem has one"},
      {"{\"kind\": \"gpumode\", \"case\": [4]}", NULL,
       "torch.case: must be an object"},
      {"{\"kind\": \"gpumode\", \"case\": {\"a-b\": 4}}", NULL,
       "torch.case: [0]: 'a-b' is not a Python keyword argument name"},
      {"{\"kind\": \"gpumode\", \"case\": {\"size\": [4]}}", NULL,
       "torch.case: 'size' must be a number"},
      {"{\"kind\": \"gpumode\", \"case\": {\"seed\": 1e300}}", NULL,
       "torch.case: [0]: the number"},
      {"{\"kind\": \"gpumode\", \"data\": \"dict\"}", NULL,
       "torch.data: must be \"tuple\""},
      {"{\"kind\": \"kernelbench\", \"data\": \"tuple\"}", NULL,
       "torch.data: only a gpumode problem"},
      {"{\"kind\": \"gpumode\"}", "cpu", "only a backend"},
      {"{\"kind\": \"gpumode\"}", "jax", "unknown backend 'jax'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    int rc = parse_torch(bad[i].torch, bad[i].backend, &s, err, sizeof err);
    if (rc == 0 || !strstr(err, bad[i].want))
      fail_msg("row %zu: rc %d, err '%s', want '%s'", i, rc, err, bad[i].want);
    assert_null(s);
  }
  /* valid JSON nested past cJSON's limit is named as such, not as
   * invalid JSON */
  {
    char deep[4096] = "{\"kind\": \"kernelbench\", \"init\": ";
    size_t dl = strlen(deep);
    for (int k = 0; k < 1200; k++) deep[dl++] = '[';
    for (int k = 0; k < 1200; k++) deep[dl++] = ']';
    snprintf(deep + dl, sizeof deep - dl, "}");
    char *big = malloc(8192);
    assert_non_null(big);
    const char *at = strstr(TORCH_BASE, "TORCH");
    snprintf(big, 8192, "%.*s%s%s", (int)(at - TORCH_BASE), TORCH_BASE, deep,
             at + 5);
    assert_int_not_equal(kf_spec_parse(big, strlen(big), NULL, &s, err,
                                       sizeof err), 0);
    free(big);
    if (!strstr(err, "nested deeper than 1000 levels")) fail_msg("%s", err);
  }
  /* a torch spec without the section, and a .c reference for torch */
  const char *nosec = "{\"name\": \"t\", \"backend\": \"torch\", "
                      "\"params\": [\"N\"], \"inputs\": [{\"name\": \"x\", "
                      "\"dtype\": \"f32\", \"shape\": [\"N\"], \"dists\": "
                      "[\"normal\"]}], \"outputs\": "
                      "[{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": "
                      "[\"N\"]}], \"sizes\": {\"check\": [{\"N\": 3}], "
                      "\"bench\": {\"N\": 8}}, \"tolerance\": {\"f32\": "
                      "{\"rtol\": 0, \"atol\": 0}}, \"flops\": \"N\", "
                      "\"bytes\": \"8*N\", \"reference\": \"REF\", "
                      "\"templates\": []}";
  char buf[2048];
  const char *at = strstr(nosec, "REF");
  snprintf(buf, sizeof buf, "%.*sreference.py%s", (int)(at - nosec), nosec,
           at + 3);
  assert_int_not_equal(kf_spec_parse(buf, strlen(buf), NULL, &s, err,
                                     sizeof err), 0);
  if (!strstr(err, "torch: required for backend torch")) fail_msg("%s", err);
  snprintf(buf, sizeof buf, "%.*sreference.c%s", (int)(at - nosec), nosec,
           at + 3);
  size_t bl = strlen(buf); /* with a valid torch section */
  snprintf(buf + bl - 1, sizeof buf - bl + 1,
           ", \"torch\": {\"kind\": \"gpumode\"}}");
  assert_int_not_equal(kf_spec_parse(buf, strlen(buf), NULL, &s, err,
                                     sizeof err), 0);
  if (!strstr(err, "must end in .py for backend torch")) fail_msg("%s", err);
}

/* A template's "devices": left out (its file unread) on a spec whose
 * torch device is not listed, kept on one whose is; the offered ones keep
 * their order; every shipped torch problem loads as a GPU copy with all of
 * its templates' files present. */
static void write_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static int load_devices(const char *dir, const char *device,
                        const char *templates, kf_spec **s, char *err,
                        size_t errlen) {
  char torch[128], json[4096];
  snprintf(torch, sizeof torch, "{\"kind\": \"kernelbench\", \"device\": "
           "\"%s\"}", device);
  const char *at = strstr(TORCH_BASE, "TORCH");
  const char *tp = strstr(TORCH_BASE, "\"templates\": []");
  assert_true(at && tp && tp < at);
  snprintf(json, sizeof json, "%.*s\"templates\": %s%.*s%s%s",
           (int)(tp - TORCH_BASE), TORCH_BASE, templates,
           (int)(at - (tp + 15)), tp + 15, torch, at + 5);
  write_file(dir, "spec.json", json);
  *s = NULL;
  return kf_spec_load_dir(dir, s, err, errlen);
}

static void test_torch_template_devices(void **state) {
  (void)state;
  char dir[] = "/tmp/kf-spec-devices-XXXXXX";
  assert_non_null(mkdtemp(dir));
  write_file(dir, "reference.py", "class Model: pass\n");
  write_file(dir, "ops.py", "# ops\n");
  const char *two =
      "[{\"name\": \"tri\", \"file\": \"tri.py\", \"devices\": [\"cuda\"]},"
      " {\"name\": \"ops\", \"file\": \"ops.py\"}]";
  char err[1024] = "";
  kf_spec *s = NULL;
  /* cpu: the Triton one is left out before its (missing) file is read */
  if (load_devices(dir, "cpu", two, &s, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(s->n_templates, 1);
  assert_string_equal(s->templates[0].name, "ops");
  assert_string_equal(s->templates[0].source, "# ops\n");
  assert_null(kf_spec_template_find(s, "tri"));
  kf_spec_free(s);
  /* cuda: both, in order; the missing file is named */
  assert_int_equal(load_devices(dir, "cuda", two, &s, err, sizeof err),
                   KF_ESPEC);
  if (!strstr(err, "templates[0].file: cannot read")) fail_msg("%s", err);
  write_file(dir, "tri.py", "# triton\n");
  if (load_devices(dir, "cuda", two, &s, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(s->n_templates, 2);
  assert_string_equal(s->templates[0].name, "tri");
  assert_string_equal(s->templates[0].source, "# triton\n");
  assert_string_equal(s->templates[1].source, "# ops\n");
  kf_spec_free(s);
  /* listing both devices is the same as listing none */
  if (load_devices(dir, "cpu", "[{\"name\": \"a\", \"file\": \"tri.py\", "
                   "\"devices\": [\"cuda\", \"cpu\"]}]", &s, err, sizeof err))
    fail_msg("%s", err);
  assert_int_equal(s->n_templates, 1);
  kf_spec_free(s);

  static const struct {
    const char *templates, *want;
  } bad[] = {
      {"[{\"name\": \"a\", \"file\": \"ops.py\", \"devices\": [\"tpu\"]}]",
       "templates[0].devices[0]: must be \"cpu\" or \"cuda\""},
      {"[{\"name\": \"a\", \"file\": \"ops.py\", \"devices\": []}]",
       "templates[0].devices: lists no device"},
      {"[{\"name\": \"a\", \"file\": \"ops.py\", \"devices\": \"cuda\"}]",
       "templates[0].devices: must be an array"},
      {"[{\"name\": \"a\", \"file\": \"tri.py\", \"devices\": [\"cuda\"]}]",
       "templates: none is offered on torch device 'cpu'"},
      {"[{\"name\": \"a\", \"file\": \"tri.py\", \"devices\": [\"cuda\"]},"
       " {\"name\": \"a\", \"file\": \"ops.py\"}]",
       "templates[1].name: duplicate template name 'a'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    assert_int_equal(load_devices(dir, "cpu", bad[i].templates, &s, err,
                                  sizeof err), KF_ESPEC);
    assert_null(s);
    if (!strstr(err, bad[i].want))
      fail_msg("%zu: got \"%s\", want \"%s\"", i, err, bad[i].want);
  }
  /* devices belong to torch templates only */
  char json[4096];
  snprintf(json, sizeof json, "%s", base);
  char *a = strstr(json, "\"file\": \"a.c\"");
  assert_non_null(a);
  char tail[2048];
  snprintf(tail, sizeof tail, "%s", a + strlen("\"file\": \"a.c\""));
  snprintf(a, sizeof json - (size_t)(a - json),
           "\"file\": \"a.c\", \"devices\": [\"cpu\"]%s", tail);
  assert_int_equal(kf_spec_parse(json, strlen(json), NULL, &s, err,
                                 sizeof err), KF_ESPEC);
  if (!strstr(err, "templates[0].devices: only a backend \"torch\""))
    fail_msg("%s", err);

  static const char *const files[] = {"spec.json", "reference.py", "ops.py",
                                      "tri.py"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    assert_int_equal(unlink(path), 0);
  }
  assert_int_equal(rmdir(dir), 0);

  /* The shipped problems as GPU copies (scripts/torch_gpu_copies.py sets
   * torch.device to cuda): every template offered there has its file. */
  char root[1024];
  snprintf(root, sizeof root, "%s/problems/torch", source_dir());
  DIR *d = opendir(root);
  assert_non_null(d);
  struct dirent *de;
  int gpu_only = 0;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char pdir[1400], path[1500];
    snprintf(pdir, sizeof pdir, "%s/%s", root, de->d_name);
    snprintf(path, sizeof path, "%s/spec.json", pdir);
    char *text = NULL;
    size_t len = 0;
    if (kf_read_file(path, 1 << 20, &text, &len, err, sizeof err))
      fail_msg("%s", err);
    const char *dev = strstr(text, "\"device\": \"cpu\"");
    if (!dev) fail_msg("%s: no \"device\": \"cpu\"", path);
    size_t cl = len + 8;
    char *cuda = malloc(cl);
    assert_non_null(cuda);
    snprintf(cuda, cl, "%.*s\"device\": \"cuda\"%s", (int)(dev - text), text,
             dev + strlen("\"device\": \"cpu\""));
    kf_spec *sc = NULL, *sg = NULL;
    if (kf_spec_load_dir(pdir, &sc, err, sizeof err))
      fail_msg("%s: %s", de->d_name, err);
    if (kf_spec_parse(cuda, strlen(cuda), pdir, &sg, err, sizeof err))
      fail_msg("%s as a GPU copy: %s", de->d_name, err);
    assert_string_equal(sg->torch_device, "cuda");
    assert_true(sg->n_templates >= sc->n_templates);
    for (int t = 0; t < sg->n_templates; t++)
      assert_non_null(sg->templates[t].source);
    gpu_only += sg->n_templates - sc->n_templates;
    kf_spec_free(sc);
    kf_spec_free(sg);
    free(cuda);
    free(text);
  }
  /* the level-1 problems' Triton templates (docs/torch.md, Problems) */
  assert_true(gpu_only >= 10);
  closedir(d);
}

static void test_helpers(void **state) {
  (void)state;
  char err[512];
  kf_spec *s = NULL;
  if (kf_spec_parse(base, strlen(base), NULL, &s, err, sizeof err))
    fail_msg("%s", err);
  /* |got - want| <= atol + rtol * |want|, with rtol 1e-4, atol 1e-6. */
  assert_true(kf_spec_within_tol(s, KF_DT_F32, 1.0, 1.0));
  assert_true(kf_spec_within_tol(s, KF_DT_F32, 1.0001, 1.0));
  assert_false(kf_spec_within_tol(s, KF_DT_F32, 1.0002, 1.0));
  assert_true(kf_spec_within_tol(s, KF_DT_F32, 0.0, 9e-7));
  assert_false(kf_spec_within_tol(s, KF_DT_F32, 0.0, 2e-6));
  assert_true(kf_spec_within_tol(s, KF_DT_F32, -1.00005, -1.0));
  /* Without allow_nan nothing non-finite passes, not even NaN vs NaN. */
  assert_false(kf_spec_within_tol(s, KF_DT_F32, NAN, NAN));
  assert_false(kf_spec_within_tol(s, KF_DT_F32, INFINITY, INFINITY));
  assert_false(kf_spec_within_tol(s, KF_DT_F32, NAN, 1.0));
  assert_false(kf_spec_within_tol(s, KF_DT_F32, 1.0, NAN));
  s->allow_nan = true;
  assert_true(kf_spec_within_tol(s, KF_DT_F32, NAN, NAN));
  assert_true(kf_spec_within_tol(s, KF_DT_F32, -INFINITY, -INFINITY));
  assert_false(kf_spec_within_tol(s, KF_DT_F32, INFINITY, -INFINITY));
  assert_false(kf_spec_within_tol(s, KF_DT_F32, NAN, INFINITY));
  assert_false(kf_spec_within_tol(s, KF_DT_F32, 1e30, INFINITY));
  kf_spec_free(s);

  assert_true(kf_spec_knob_name_ok("BLOCK_M"));
  assert_true(kf_spec_knob_name_ok("_x9"));
  assert_false(kf_spec_knob_name_ok("KF_ABI"));
  assert_false(kf_spec_knob_name_ok("A B"));
  assert_false(kf_spec_knob_name_ok(""));
  assert_false(kf_spec_knob_name_ok(NULL));
  assert_false(kf_spec_knob_name_ok("ABCDEFGHIJKLMNOPQRSTUVWXYZ789012"));
  assert_true(kf_spec_knob_value_ok("-1.5e+3"));
  assert_true(kf_spec_knob_value_ok("ikj"));
  assert_false(kf_spec_knob_value_ok("1;rm"));
  assert_false(kf_spec_knob_value_ok("a b"));
  assert_false(kf_spec_knob_value_ok("\"x\""));
  assert_false(kf_spec_knob_value_ok(""));
  assert_false(kf_spec_knob_value_ok("123456789012345678901234"));

  kf_dtype d;
  kf_dist ds;
  assert_int_equal(kf_dtype_parse("bf16", &d), 0);
  assert_int_equal(d, KF_DT_BF16);
  assert_int_equal(kf_dtype_size(d), 2);
  assert_string_equal(kf_dtype_name(KF_DT_I64), "i64");
  /* torch.bool: one byte, compared exactly (KernelBench's masked_cumsum
   * takes a bool mask) */
  assert_int_equal(kf_dtype_parse("bool", &d), 0);
  assert_int_equal(d, KF_DT_BOOL);
  assert_int_equal(kf_dtype_size(d), 1);
  assert_true(kf_dtype_exact(KF_DT_BOOL) && kf_dtype_exact(KF_DT_I32) &&
              kf_dtype_exact(KF_DT_I64));
  assert_false(kf_dtype_exact(KF_DT_F32) || kf_dtype_exact(KF_DT_BF16));
  assert_int_equal(kf_dtype_parse("f8", &d), KF_ESPEC);
  assert_int_equal(kf_dist_parse("offset", &ds), 0);
  assert_int_equal(ds, KF_DIST_OFFSET);
  assert_string_equal(kf_dist_name(KF_DIST_MIXED), "mixed");
  assert_int_equal(kf_dist_parse("Normal", &ds), KF_ESPEC);
  assert_string_equal(kf_dtype_name((kf_dtype)99), "?");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shipped_load),
      cmocka_unit_test(test_shipped_values),
      cmocka_unit_test(test_expr),
      cmocka_unit_test(test_base_is_valid),
      cmocka_unit_test(test_bench_list),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_missing_files),
      cmocka_unit_test(test_files_inside_dir),
      cmocka_unit_test(test_helpers),
      cmocka_unit_test(test_torch_shipped),
      cmocka_unit_test(test_torch_section),
      cmocka_unit_test(test_torch_template_devices),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
