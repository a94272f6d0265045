/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-spec-templates.c -- proves the shipped CPU templates are
 * correct: every template of every problem under problems/cpu is compiled
 * with every knob value (a diagonal walk, so each value of each knob is
 * used at least once without the full cartesian product), loaded with
 * dlopen next to the problem's reference, and compared with it within the
 * spec's tolerance on random data from every distribution the spec lists.
 *
 * Sizes: the first check size (all ones) and the largest check size whose
 * params are all odd, so every remainder path runs.  Outputs are poisoned
 * with NaN before each call, so an element left unwritten fails.
 *
 * Compiles with the system `cc -O2 -std=c11 -shared -fPIC -Wall -Werror
 * -I$KF_SOURCE_DIR/harness ... -lm` into a mkdtemp directory that is
 * removed at the end.  No libm in this file: normals are Irwin-Hall.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "../../harness/core/kf_candidate.h" /* not on the test include path */
#include "spec.h"

extern char **environ;

static const char *const shipped[] = {"softmax", "rmsnorm", "vecsum",
                                      "gemm"};

static const char *source_dir(void) {
  const char *d = getenv("KF_SOURCE_DIR");
  return d && *d ? d : ".";
}

/* ---- inputs ---------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double unit(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

static double normal(void) { /* Irwin-Hall: close enough for a test */
  double s = 0;
  for (int i = 0; i < 12; i++) s += unit();
  return s - 6.0;
}

/* The meanings of KF_DIST_MAP in common/spec.h. */
static double draw(kf_dist d) {
  switch (d) {
  case KF_DIST_NORMAL: return normal();
  case KF_DIST_UNIFORM: return 2.0 * unit() - 1.0;
  case KF_DIST_WIDE: return 200.0 * unit() - 100.0;
  case KF_DIST_OFFSET: return 1000.0 + normal();
  case KF_DIST_TINY: return 1e-3 * normal();
  case KF_DIST_MIXED: {
    static const kf_dist pick[] = {KF_DIST_NORMAL, KF_DIST_UNIFORM,
                                   KF_DIST_WIDE, KF_DIST_OFFSET,
                                   KF_DIST_TINY};
    int k = (int)(unit() * 8);
    if (k < 5) return draw(pick[k]);
    return k == 5 ? 0.0 : k == 6 ? 1.0 : -1.0;
  }
  default: return 0.0;
  }
}

/* ---- compiling ------------------------------------------------------- */

static int run_cc(char **argv) {
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
  if (rc) return -1;
  int st;
  if (waitpid(pid, &st, 0) < 0) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Compiles SRC with N_DEF "-DNAME=value" strings into OUT. */
static void compile(const char *src, char defs[][64], int n_def,
                    const char *out) {
  char inc[1100];
  snprintf(inc, sizeof inc, "-I%s/harness/core", source_dir());
  char *argv[40];
  int n = 0;
  argv[n++] = "cc";
  argv[n++] = "-O2";
  argv[n++] = "-std=c11";
  argv[n++] = "-shared";
  argv[n++] = "-fPIC";
  argv[n++] = "-Wall";
  argv[n++] = "-Werror";
  argv[n++] = inc;
  for (int i = 0; i < n_def; i++) argv[n++] = defs[i];
  argv[n++] = (char *)src;
  argv[n++] = "-o";
  argv[n++] = (char *)out;
  argv[n++] = "-lm";
  argv[n] = NULL;
  if (run_cc(argv) != 0) {
    char cmd[2048] = "";
    for (int i = 0; argv[i]; i++) {
      strncat(cmd, argv[i], sizeof cmd - strlen(cmd) - 2);
      strncat(cmd, " ", sizeof cmd - strlen(cmd) - 1);
    }
    fail_msg("compile failed: %s", cmd);
  }
}

static kf_launch_fn load(const char *so, void **handle) {
  *handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!*handle) fail_msg("dlopen %s: %s", so, dlerror());
  kf_launch_fn f = (kf_launch_fn)dlsym(*handle, "kf_launch");
  if (!f) fail_msg("%s: no kf_launch", so);
  return f;
}

/* ---- checking -------------------------------------------------------- */

typedef struct {
  const kf_spec *s;
  kf_launch_fn ref;
  float *in[KF_SPEC_MAX_TENSORS];
  float *want[KF_SPEC_MAX_TENSORS], *got[KF_SPEC_MAX_TENSORS];
  kf_tensor tin[KF_SPEC_MAX_TENSORS], tout[KF_SPEC_MAX_TENSORS];
} bench;

static void call(bench *b, kf_launch_fn f, const kf_size *z, float **outs,
                 const char *what) {
  const kf_spec *s = b->s;
  for (int o = 0; o < s->n_outputs; o++) {
    for (int64_t e = 0; e < b->tout[o].numel; e++) outs[o][e] = NAN;
    b->tout[o].data = outs[o];
  }
  kf_args a = {.abi_version = KF_ABI_VERSION,
               .n_inputs = s->n_inputs,
               .n_outputs = s->n_outputs,
               .n_params = s->n_params,
               .inputs = b->tin,
               .outputs = b->tout,
               .params = z->v};
  if (f(&a) != 0) fail_msg("%s: kf_launch returned non-zero", what);
}

/* Allocates buffers for size Z and fills the inputs, input i drawing from
 * its dists[(pick + i) % n_dists]. */
static void setup(bench *b, const kf_size *z, int pick) {
  const kf_spec *s = b->s;
  char err[512];
  for (int io = 0; io < 2; io++) {
    int n = io ? s->n_outputs : s->n_inputs;
    for (int i = 0; i < n; i++) {
      const kf_spec_tensor *t = io ? &s->outputs[i] : &s->inputs[i];
      assert_int_equal(t->dtype, KF_DT_F32); /* all shipped CPU problems */
      kf_tensor *kt = io ? &b->tout[i] : &b->tin[i];
      memset(kt, 0, sizeof *kt);
      kt->dtype = t->dtype;
      kt->ndim = t->ndim;
      if (kf_spec_shape(s, t, z, kt->dims, &kt->numel, err, sizeof err))
        fail_msg("%s", err);
      if (io) {
        b->want[i] = malloc((size_t)kt->numel * sizeof(float));
        b->got[i] = malloc((size_t)kt->numel * sizeof(float));
        assert_non_null(b->want[i]);
        assert_non_null(b->got[i]);
      } else {
        b->in[i] = malloc((size_t)kt->numel * sizeof(float));
        assert_non_null(b->in[i]);
        kf_dist d = t->dists[(pick + i) % t->n_dists];
        for (int64_t e = 0; e < kt->numel; e++) b->in[i][e] = (float)draw(d);
        kt->data = b->in[i];
      }
    }
  }
}

static void teardown_bufs(bench *b) {
  for (int i = 0; i < KF_SPEC_MAX_TENSORS; i++) {
    free(b->in[i]);
    free(b->want[i]);
    free(b->got[i]);
    b->in[i] = b->want[i] = b->got[i] = NULL;
  }
}

/* Runs reference and candidate at Z over every distribution and compares
 * each output element within the spec tolerance. */
static void check(bench *b, kf_launch_fn cand, const kf_size *z,
                  const char *label) {
  const kf_spec *s = b->s;
  int max_d = 1;
  for (int i = 0; i < s->n_inputs; i++)
    if (s->inputs[i].n_dists > max_d) max_d = s->inputs[i].n_dists;
  char sz[128];
  kf_spec_size_format(s, z, sz, sizeof sz);
  for (int d = 0; d < max_d; d++) {
    setup(b, z, d);
    call(b, b->ref, z, b->want, "reference");
    call(b, cand, z, b->got, label);
    for (int o = 0; o < s->n_outputs; o++) {
      for (int64_t e = 0; e < b->tout[o].numel; e++) {
        double w = b->want[o][e], g = b->got[o][e];
        if (!isfinite(w))
          fail_msg("%s: reference gave %g at %s[%lld], %s, draw %d",
                   s->name, w, s->outputs[o].name, (long long)e, sz, d);
        if (!kf_spec_within_tol(s, s->outputs[o].dtype, g, w))
          fail_msg("%s %s: %s[%lld] = %.9g, reference %.9g (%s, "
                   "distribution %s)",
                   s->name, label, s->outputs[o].name, (long long)e, g, w,
                   sz, kf_dist_name(s->inputs[0].dists[d %
                                                       s->inputs[0].n_dists]));
      }
    }
    teardown_bufs(b);
  }
}

/* The largest check size (by sum of params) whose params are all odd. */
static const kf_size *odd_size(const kf_spec *s) {
  const kf_size *best = NULL;
  int64_t best_sum = -1;
  for (int z = 0; z < s->n_check_sizes; z++) {
    const kf_size *c = &s->check_sizes[z];
    bool odd = true;
    int64_t sum = 0;
    for (int i = 0; i < s->n_params; i++) {
      odd &= c->v[i] % 2 == 1;
      sum += c->v[i];
    }
    if (odd && sum > best_sum) {
      best = c;
      best_sum = sum;
    }
  }
  return best;
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char p[1200];
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  closedir(d);
  rmdir(dir);
}

static void check_problem(const char *name, const char *tmp) {
  char dir[1024], err[1024] = "";
  snprintf(dir, sizeof dir, "%s/problems/cpu/%s", source_dir(), name);
  kf_spec *s = NULL;
  if (kf_spec_load_dir(dir, &s, err, sizeof err)) fail_msg("%s", err);

  char src[1200], so[1200];
  snprintf(src, sizeof src, "%s/%s", dir, s->reference_file);
  snprintf(so, sizeof so, "%s/%s-reference.so", tmp, name);
  compile(src, NULL, 0, so);
  void *ref_h;
  bench b = {.s = s};
  b.ref = load(so, &ref_h);

  const kf_size *sizes[2] = {&s->check_sizes[0], odd_size(s)};
  assert_non_null(sizes[1]);
  int variants = 0;
  for (int t = 0; t < s->n_templates; t++) {
    const kf_spec_template *tp = &s->templates[t];
    int n_var = 1;
    for (int k = 0; k < tp->n_knobs; k++)
      if (tp->knobs[k].n_values > n_var) n_var = tp->knobs[k].n_values;
    snprintf(src, sizeof src, "%s/%s", dir, tp->file);
    for (int v = 0; v < n_var; v++) {
      char defs[KF_SPEC_MAX_KNOBS][64], label[256];
      size_t off = (size_t)snprintf(label, sizeof label, "%s", tp->name);
      for (int k = 0; k < tp->n_knobs; k++) {
        const kf_spec_knob *kn = &tp->knobs[k];
        const char *val = kn->values[v % kn->n_values];
        snprintf(defs[k], sizeof defs[k], "-D%s=%s", kn->name, val);
        if (off < sizeof label)
          off += (size_t)snprintf(label + off, sizeof label - off, " %s=%s",
                                  kn->name, val);
      }
      snprintf(so, sizeof so, "%s/%s-%s-%d.so", tmp, name, tp->name, v);
      compile(src, defs, tp->n_knobs, so);
      void *h;
      kf_launch_fn cand = load(so, &h);
      for (int z = 0; z < 2; z++) check(&b, cand, sizes[z], label);
      dlclose(h);
      variants++;
    }
  }
  print_message("%s: reference + %d template variants agree\n", name,
                variants);
  dlclose(ref_h);
  kf_spec_free(s);
}

static void test_templates(void **state) {
  (void)state;
  char tmp[] = "/tmp/kf-spec-templates-XXXXXX";
  assert_non_null(mkdtemp(tmp));
  for (size_t p = 0; p < sizeof shipped / sizeof shipped[0]; p++)
    check_problem(shipped[p], tmp);
  remove_dir(tmp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_templates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
