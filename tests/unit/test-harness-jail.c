/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-harness-jail.c -- the compiler's mount jail
 * (harness/core/compile_jail.c), through `kf-harness eval-files`.
 *
 * A candidate whose inline asm spells .incbin by joining two string
 * literals passes the compile stage's text check; the jail is what stops
 * it.  With cc and with nvcc (host code), it names files the compiling
 * uid could read on the host -- a world-readable secret written here to
 * /tmp, /etc/hostname, this checkout's README.md, /proc/self/environ --
 * and must end in COMPILE_ERROR with "file not found" for each, the
 * secret never appearing in anything kf-harness prints.  A file in the
 * build directory stays visible (the control), and every shipped template
 * (problems/cpu/ fully evaluated, problems/cuda/ through compile and link)
 * still builds, with no "no mount jail" warning.
 *
 * The jail needs root and a mount namespace: elsewhere (and without nvcc
 * for the CUDA cases) the tests print "SKIPPED: ..." and skip.  The
 * median compile stage time is printed for information, not asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spec.h"
#include "test-nvcc.h"

extern char **environ;

static const char *source_dir(void) {
  const char *d = getenv("KF_SOURCE_DIR");
  return d && *d ? d : ".";
}

/* Root, and a mount namespace may be made: what the jail needs. */
static bool jail_possible(void) {
  if (geteuid() != 0) return false;
  pid_t p = fork();
  if (p < 0) return false;
  if (p == 0) _exit(unshare(CLONE_NEWNS) == 0 ? 0 : 1);
  int st;
  return waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

#define NEED_JAIL()                                                           \
  do {                                                                        \
    if (!jail_possible()) {                                                   \
      fprintf(stderr, "SKIPPED: not root or no mount namespace: the "         \
              "compiler jail is not applied here\n");                         \
      skip();                                                                 \
    }                                                                         \
  } while (0)

/* `kf-harness eval-files --spec spec --source source [args...]`: its
 * stdout (the JSON result) and stderr (the log), merged, NUL-terminated;
 * the caller frees it. */
static char *eval_files(const char *spec, const char *source,
                        const char *const *args) {
  char exe[1200];
  snprintf(exe, sizeof exe, "%s/kf-harness",
           getenv("KF_BIN_DIR") ? getenv("KF_BIN_DIR") : ".");
  char *argv[48] = {"kf-harness", "eval-files", "--spec", (char *)spec,
                    "--source", (char *)source, "--seed", "7",
                    "--time-budget-ms", "300", "--call-timeout-ms", "3000"};
  int a = 12;
  for (int i = 0; args && args[i] && a < 47; i++) argv[a++] = (char *)args[i];
  argv[a] = NULL;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, p[1], 2);
  pid_t pid;
  int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  if (rc) {
    close(p[0]);
    fprintf(stderr, "spawn %s: %s\n", exe, strerror(rc));
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  char *out = malloc(cap);
  for (;;) {
    if (len + 1 >= cap) out = realloc(out, cap *= 2);
    ssize_t r = read(p[0], out + len, cap - len - 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
  }
  close(p[0]);
  out[len] = '\0';
  int st;
  waitpid(pid, &st, 0);
  return out;
}

/* The top-level outcome of eval-files' JSON (its first "outcome"). */
static bool outcome_is(const char *out, const char *want) {
  const char *o = strstr(out, "\"outcome\":");
  if (!o) return false;
  o += strlen("\"outcome\":");
  while (*o == ' ' || *o == '\t') o++;
  return *o == '"' && !strncmp(o + 1, want, strlen(want)) &&
         o[1 + strlen(want)] == '"';
}

/* The compile stage's elapsed_us (the first after "compile"), or -1. */
static long compile_us(const char *out) {
  const char *s = strstr(out, "\"stage\":\t\"compile\"");
  const char *e = s ? strstr(s, "\"elapsed_us\":") : NULL;
  return e ? strtol(e + strlen("\"elapsed_us\":"), NULL, 10) : -1;
}

static void print_median(const char *what, long *us, int n) {
  for (int i = 1; i < n; i++)
    for (int k = i; k > 0 && us[k - 1] > us[k]; k--) {
      long t = us[k];
      us[k] = us[k - 1];
      us[k - 1] = t;
    }
  if (n) fprintf(stderr, "%s: median compile stage %.1f ms over %d\n", what,
                 us[n / 2] / 1000.0, n);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(fputs(text, f) < 0, 0);
  assert_int_equal(fclose(f), 0);
}

/* A world-readable file outside every build directory, with a token that
 * must never come back. */
typedef struct {
  char path[64], token[64], dir[64];
} secret;

static void secret_make(secret *s) {
  snprintf(s->path, sizeof s->path, "/tmp/kf-jail-secret-XXXXXX");
  int fd = mkstemp(s->path);
  assert_true(fd >= 0);
  snprintf(s->token, sizeof s->token, "KF-JAIL-SECRET-%d-%lx", (int)getpid(),
           (unsigned long)random());
  assert_int_equal(write(fd, s->token, strlen(s->token)),
                   (ssize_t)strlen(s->token));
  assert_int_equal(fchmod(fd, 0644), 0); /* uid nobody could read it */
  assert_int_equal(close(fd), 0);
  snprintf(s->dir, sizeof s->dir, "/tmp/kf-jail-test-XXXXXX");
  assert_non_null(mkdtemp(s->dir));
}

static void secret_drop(secret *s) {
  unlink(s->path);
  char p[512];
  DIR *d = opendir(s->dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.') {
      snprintf(p, sizeof p, "%s/%s", s->dir, e->d_name);
      unlink(p);
    }
  if (d) closedir(d);
  rmdir(s->dir);
}

/* `.incbin` of each host file, spelled past the text check. */
static void joined_incbins(char *buf, size_t len, const secret *s) {
  char readme[1200];
  snprintf(readme, sizeof readme, "%s/README.md", source_dir());
  const char *files[] = {s->path, "/etc/hostname", readme,
                         "/proc/self/environ"};
  size_t n = (size_t)snprintf(buf, len, "__asm__(\".pushsection .rodata\\n\"\n");
  for (int i = 0; i < 4; i++)
    n += (size_t)snprintf(buf + n, len - n,
                          "        \"leak%d: .inc\" \"bin \\\"%s\\\"\\n\"\n", i,
                          files[i]);
  snprintf(buf + n, len - n, "        \".popsection\\n\");\n");
}

static void expect_not_found(const char *out, const secret *s) {
  assert_non_null(out);
  if (!outcome_is(out, "compile_error")) fprintf(stderr, "%s\n", out);
  assert_true(outcome_is(out, "compile_error"));
  char want[1300];
  snprintf(want, sizeof want, "file not found: %s", s->path);
  assert_non_null(strstr(out, want));
  assert_non_null(strstr(out, "file not found: /etc/hostname"));
  assert_non_null(strstr(out, "file not found: /proc/self/environ"));
  /* the checkout: unless it lies in /usr, which the jail shows */
  if (strncmp(source_dir(), "/usr/", 5) != 0) {
    snprintf(want, sizeof want, "file not found: %s/README.md",
             source_dir());
    assert_non_null(strstr(out, want));
  }
  assert_null(strstr(out, s->token));
  assert_null(strstr(out, "no mount jail"));
}

static void test_c_joined_incbin(void **state) {
  (void)state;
  NEED_JAIL();
  secret s;
  secret_make(&s);
  char src[4096], path[128], spec[1200];
  size_t n = (size_t)snprintf(src, sizeof src, "#include \"kf_candidate.h\"\n");
  joined_incbins(src + n, sizeof src - n, &s);
  strncat(src, "int kf_launch(const kf_args *a) { (void)a; return 0; }\n",
          sizeof src - strlen(src) - 1);
  snprintf(path, sizeof path, "%s/candidate.c", s.dir);
  write_text(path, src);
  snprintf(spec, sizeof spec, "%s/problems/cpu/softmax", source_dir());
  char *out = eval_files(spec, path, NULL);
  fprintf(stderr, "%s\n", out ? out : "(no output)");
  expect_not_found(out, &s);
  free(out);
  secret_drop(&s);
}

/* The control: .incbin of a file in the build directory (the embedded
 * kf_candidate.h) works in the jail, and the kernel is still honest. */
static void test_c_build_dir_visible(void **state) {
  (void)state;
  NEED_JAIL();
  secret s;
  secret_make(&s);
  char tp[1300], spec[1200], path[128];
  snprintf(spec, sizeof spec, "%s/problems/cpu/softmax", source_dir());
  snprintf(tp, sizeof tp, "%s/three_pass.c", spec);
  FILE *f = fopen(tp, "r");
  assert_non_null(f);
  static char src[1 << 16];
  size_t n = fread(src, 1, sizeof src - 512, f);
  fclose(f);
  src[n] = '\0';
  strcat(src, "__asm__(\".pushsection .rodata\\nkf_hdr: .inc\" "
              "\"bin \\\"kf_candidate.h\\\"\\n.popsection\\n\");\n");
  snprintf(path, sizeof path, "%s/candidate.c", s.dir);
  write_text(path, src);
  const char *args[] = {"--knob", "UNROLL=1", NULL};
  char *out = eval_files(spec, path, args);
  assert_non_null(out);
  if (!outcome_is(out, "ok")) fprintf(stderr, "%s\n", out);
  assert_true(outcome_is(out, "ok"));
  free(out);
  secret_drop(&s);
}

static void test_cuda_joined_incbin(void **state) {
  (void)state;
  NEED_JAIL();
  NEED_NVCC();
  secret s;
  secret_make(&s);
  char src[4096], path[128], spec[1200];
  size_t n = (size_t)snprintf(src, sizeof src,
                              "#include <cuda_runtime.h>\n"
                              "#include \"kf_candidate.h\"\n");
  joined_incbins(src + n, sizeof src - n, &s);
  strncat(src,
          "__global__ void k(float *y) { y[threadIdx.x] = 0.0f; }\n"
          "extern \"C\" int kf_launch(const kf_args *a) {\n"
          "  k<<<1, 1, 0, (cudaStream_t)a->stream>>>("
          "(float *)a->outputs[0].data);\n  return 0;\n}\n",
          sizeof src - strlen(src) - 1);
  snprintf(path, sizeof path, "%s/candidate.cu", s.dir);
  write_text(path, src);
  snprintf(spec, sizeof spec, "%s/tests/exploits/problems/hardtanh_cuda",
           source_dir());
  const char *args[] = {"--stop-after", "link", "--cuda-arch", "sm_90a",
                        NULL};
  char *out = eval_files(spec, path, args);
  fprintf(stderr, "%s\n", out ? out : "(no output)");
  expect_not_found(out, &s);
  free(out);
  secret_drop(&s);
}

/* Every shipped template with the first value of each knob: cpu ones
 * evaluated in full, cuda ones (with nvcc) through the link stage. */
static void templates_of(const char *backend, bool jail, long *us, int *n_us) {
  char root[1200];
  snprintf(root, sizeof root, "%s/problems/%s", source_dir(), backend);
  DIR *d = opendir(root);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    char dir[1600], err[256];
    snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
    char sp[1700];
    snprintf(sp, sizeof sp, "%s/spec.json", dir);
    if (e->d_name[0] == '.' || access(sp, R_OK) != 0) continue;
    kf_spec *s;
    if (kf_spec_load_dir(dir, &s, err, sizeof err)) fail_msg("%s", err);
    for (int t = 0; t < s->n_templates; t++) {
      const kf_spec_template *tp = &s->templates[t];
      char file[1800];
      snprintf(file, sizeof file, "%s/%s", dir, tp->file);
      const char *args[40];
      char kv[KF_SPEC_MAX_KNOBS][64];
      int a = 0;
      for (int k = 0; k < tp->n_knobs; k++) {
        snprintf(kv[k], sizeof kv[k], "%s=%s", tp->knobs[k].name,
                 tp->knobs[k].values[0]);
        args[a++] = "--knob";
        args[a++] = kv[k];
      }
      if (!strcmp(backend, "cuda")) {
        args[a++] = "--stop-after";
        args[a++] = "link";
        args[a++] = "--cuda-arch";
        args[a++] = "sm_90a";
      }
      args[a] = NULL;
      char *out = eval_files(dir, file, args);
      assert_non_null(out);
      bool ok = outcome_is(out, "ok");
      fprintf(stderr, "%s/%s/%s: %s\n", backend, e->d_name, tp->file,
              ok ? "ok" : "FAILED");
      if (!ok || (jail && strstr(out, "no mount jail")))
        fprintf(stderr, "%s\n", out);
      assert_true(ok);
      if (jail) assert_null(strstr(out, "no mount jail"));
      long t_us = compile_us(out);
      if (t_us >= 0 && *n_us < 64) us[(*n_us)++] = t_us;
      free(out);
    }
    kf_spec_free(s);
  }
  closedir(d);
}

static void test_templates_build(void **state) {
  (void)state;
  bool jail = jail_possible();
  if (!jail) fprintf(stderr, "(no compiler jail here: templates only)\n");
  long us[64];
  int n = 0;
  templates_of("cpu", jail, us, &n);
  print_median(jail ? "cpu templates, jailed cc" : "cpu templates, cc", us,
               n);
  if (!have_nvcc()) {
    fprintf(stderr, "SKIPPED: cuda templates: no nvcc\n");
    return;
  }
  n = 0;
  templates_of("cuda", jail, us, &n);
  print_median(jail ? "cuda templates, jailed nvcc" : "cuda templates, nvcc",
               us, n);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_c_joined_incbin),
      cmocka_unit_test(test_c_build_dir_visible),
      cmocka_unit_test(test_cuda_joined_incbin),
      cmocka_unit_test(test_templates_build),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
