/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-harness-fixture.h -- runs `kf-harness eval` (from
 * $KF_BIN_DIR) as a child on an EvalRequest built here, and returns the
 * unpacked EvalResult, and checks its outcome (expect_result).  Small
 * inline problems keep each eval short.
 */
#ifndef KF_TEST_HARNESS_FIXTURE_H
#define KF_TEST_HARNESS_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernelfleet.pb-c.h"
#include "outcome.h"

/* y = 2 x over N f32 elements; tiny bench size. */
static const char SCALE_SPEC[] =
    "{\"name\": \"scale\", \"backend\": \"cpu\","
    " \"params\": [\"N\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"],"
    "   \"dists\": [\"normal\", \"uniform\", \"wide\", \"mixed\"]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
    " \"sizes\": {\"check\": [{\"N\": 1}, {\"N\": 7}, {\"N\": 33}, {\"N\": 1000}],"
    "   \"bench\": {\"N\": 4096}},"
    " \"tolerance\": {\"f32\": {\"rtol\": 1e-6, \"atol\": 1e-7}},"
    " \"allow_nan\": false, \"deterministic\": true,"
    " \"flops\": \"N\", \"bytes\": \"8*N\", \"workspace_bytes\": 0,"
    " \"reference\": \"reference.c\", \"templates\": []}";

static const char SCALE_REF[] =
    "#include \"kf_candidate.h\"\n"
    "int kf_launch(const kf_args *a) {\n"
    "  const float *x = a->inputs[0].data; float *y = a->outputs[0].data;\n"
    "  for (int64_t i = 0; i < a->outputs[0].numel; i++) y[i] = 2.0f * x[i];\n"
    "  return 0;\n"
    "}\n";

/* SCALE_REF asleep for NS nanoseconds (under a second) in every call (a
 * futex wait with a timeout: seccomp allows it), whatever the load on
 * the machine: a reference slower than a bound by the same margin on any
 * machine, where a busy loop is slowed by the load along with the
 * candidate. */
#define KF_SLEEPY_SCALE_REF(NS)                                              \
  "#include <linux/futex.h>\n"                                               \
  "#include <sys/syscall.h>\n"                                               \
  "#include <time.h>\n"                                                      \
  "#include <unistd.h>\n"                                                    \
  "#include \"kf_candidate.h\"\n"                                            \
  "static int word;\n"                                                       \
  "int kf_launch(const kf_args *a) {\n"                                      \
  "  const float *x = a->inputs[0].data; float *y = a->outputs[0].data;\n"   \
  "  struct timespec ts = {0, " #NS "};\n"                                   \
  "  syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);\n"      \
  "  for (int64_t i = 0; i < a->outputs[0].numel; i++) y[i] = 2.0f * x[i];\n" \
  "  return 0;\n"                                                            \
  "}\n"
static const char SLEEPY_SCALE_REF[] = KF_SLEEPY_SCALE_REF(800000000);

/* y = clamp(x, -1, 1): the identity on the usual range. */
static const char HARDTANH_SPEC[] =
    "{\"name\": \"hardtanh\", \"backend\": \"cpu\","
    " \"params\": [\"N\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"],"
    "   \"dists\": [\"uniform\", \"wide\"]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
    " \"sizes\": {\"check\": [{\"N\": 5}, {\"N\": 100}], \"bench\": {\"N\": 1024}},"
    " \"tolerance\": {\"f32\": {\"rtol\": 0, \"atol\": 0}},"
    " \"allow_nan\": false, \"deterministic\": true,"
    " \"flops\": \"2*N\", \"bytes\": \"8*N\","
    " \"reference\": \"reference.c\", \"templates\": []}";

static const char HARDTANH_REF[] =
    "#include \"kf_candidate.h\"\n"
    "int kf_launch(const kf_args *a) {\n"
    "  const float *x = a->inputs[0].data; float *y = a->outputs[0].data;\n"
    "  for (int64_t i = 0; i < a->outputs[0].numel; i++)\n"
    "    y[i] = x[i] < -1.0f ? -1.0f : x[i] > 1.0f ? 1.0f : x[i];\n"
    "  return 0;\n"
    "}\n";

/* Outputs always near zero: only the 'tiny' distribution, wide atol. */
static const char ZEROISH_SPEC[] =
    "{\"name\": \"zeroish\", \"backend\": \"cpu\","
    " \"params\": [\"N\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"],"
    "   \"dists\": [\"tiny\"]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
    " \"sizes\": {\"check\": [{\"N\": 16}], \"bench\": {\"N\": 64}},"
    " \"tolerance\": {\"f32\": {\"rtol\": 1e-3, \"atol\": 1.0}},"
    " \"allow_nan\": false, \"deterministic\": false,"
    " \"flops\": \"N\", \"bytes\": \"8*N\","
    " \"reference\": \"reference.c\", \"templates\": []}";

typedef struct {
  const char *spec, *ref, *src;
  const char *knob_name, *knob_value; /* one optional knob */
  const char *extra_arg;              /* optional kf-harness arguments */
  const char *extra_arg2;             /* (the second only with the first) */
} eval_case;

static int write_all_fd(int fd, const void *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p = (const char *)p + w;
    n -= (size_t)w;
  }
  return 0;
}

/* Runs `argv` (argv[0] is kf-harness's name; the program is $KF_BIN_DIR/
 * kf-harness) with req, length-prefixed, on its stdin, and returns the
 * result it writes on fd 3 (free with kernelfleet__eval_result__free_unpacked)
 * or NULL; prints the outcome and the stages. */
static __attribute__((unused)) Kernelfleet__EvalResult *
run_request(const Kernelfleet__EvalRequest *req, char *const *argv) {
  size_t n = kernelfleet__eval_request__get_packed_size(req);
  unsigned char *buf = malloc(n + 4);
  if (!buf) return NULL;
  buf[0] = (unsigned char)n;
  buf[1] = (unsigned char)(n >> 8);
  buf[2] = (unsigned char)(n >> 16);
  buf[3] = (unsigned char)(n >> 24);
  kernelfleet__eval_request__pack(req, buf + 4);

  char exe[1024];
  snprintf(exe, sizeof exe, "%s/kf-harness",
           getenv("KF_BIN_DIR") ? getenv("KF_BIN_DIR") : ".");
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
    free(buf);
    return NULL;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 3);
  pid_t pid;
  extern char **environ;
  int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  if (rc) {
    fprintf(stderr, "spawn %s: %s\n", exe, strerror(rc));
    free(buf);
    return NULL;
  }
  signal(SIGPIPE, SIG_IGN);
  write_all_fd(in[1], buf, n + 4);
  close(in[1]);
  free(buf);
  size_t cap = 1 << 16, len = 0;
  unsigned char *res = malloc(cap);
  for (;;) {
    if (len == cap) res = realloc(res, cap *= 2);
    ssize_t r = read(out[0], res + len, cap - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
  }
  close(out[0]);
  int st;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || len < 4) {
    fprintf(stderr, "kf-harness: status %d, %zu result bytes\n", st, len);
    free(res);
    return NULL;
  }
  size_t rl = (size_t)res[0] | (size_t)res[1] << 8 | (size_t)res[2] << 16 |
              (size_t)res[3] << 24;
  Kernelfleet__EvalResult *r =
      rl + 4 == len ? kernelfleet__eval_result__unpack(NULL, rl, res + 4)
                    : NULL;
  free(res);
  if (r) {
    fprintf(stderr, "=> %s\n", kf_outcome_name(r->outcome));
    for (size_t i = 0; i < r->n_stages; i++)
      fprintf(stderr, "   %-12s %-18s %s\n", r->stages[i]->stage,
              kf_outcome_name(r->stages[i]->outcome), r->stages[i]->reason);
  }
  return r;
}

/* One CPU evaluation of c through `kf-harness eval`. */
static __attribute__((unused)) Kernelfleet__EvalResult *run_eval(const eval_case *c) {
  Kernelfleet__EvalRequest req = KERNELFLEET__EVAL_REQUEST__INIT;
  Kernelfleet__Knob knob = KERNELFLEET__KNOB__INIT;
  Kernelfleet__Knob *knobs[1] = {&knob};
  req.problem = "test";
  req.problem_spec.data = (uint8_t *)c->spec;
  req.problem_spec.len = strlen(c->spec);
  req.source = (char *)c->src;
  req.reference_source = (char *)c->ref;
  req.seed = 0x5eed1234abcdull;
  req.candidate_id = 1;
  req.language = "c";
  if (c->knob_name) {
    knob.name = (char *)c->knob_name;
    knob.value = (char *)c->knob_value;
    req.knobs = knobs;
    req.n_knobs = 1;
  }
  char *argv[] = {"kf-harness",           "eval",
                  "--call-timeout-ms",    "1500",
                  "--time-budget-ms",     "300",
                  (char *)c->extra_arg,   (char *)c->extra_arg2,
                  NULL};
  return run_request(&req, argv);
}

/* The reason of the stage that decided the outcome (the last one). */
static __attribute__((unused)) const char *final_reason(const Kernelfleet__EvalResult *r) {
  return r->n_stages ? r->stages[r->n_stages - 1]->reason : "";
}

/* Asserts (cmocka, included before this header) that r ended in outcome at
 * stage, with substr (unless NULL) in that stage's reason; frees r. */
static __attribute__((unused)) void expect_result(Kernelfleet__EvalResult *r,
                                                  int outcome,
                                                  const char *stage,
                                                  const char *substr) {
  assert_non_null(r);
  int got = r->outcome;
  bool stage_ok = r->n_stages > 0 &&
                  !strcmp(r->stages[r->n_stages - 1]->stage, stage);
  bool reason_ok = !substr || strstr(final_reason(r), substr);
  if (!reason_ok)
    fprintf(stderr, "reason '%s' lacks '%s'\n", final_reason(r), substr);
  kernelfleet__eval_result__free_unpacked(r, NULL);
  assert_string_equal(kf_outcome_name(got), kf_outcome_name(outcome));
  assert_true(stage_ok);
  assert_true(reason_ok);
}

#endif
