/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-harness-eval.c -- kf-harness eval against honest and
 * hostile candidates: each cheat of BRIEF.md and each way a kernel can
 * fail must end in its specific outcome with a specific reason; and a
 * spec too large for the machine is refused before anything is mapped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include <cmocka.h>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "test-harness-fixture.h"

#define PRELUDE                                                               \
  "#include \"kf_candidate.h\"\n"                                             \
  "int kf_launch(const kf_args *a) {\n"                                       \
  "  const float *x = a->inputs[0].data; float *y = a->outputs[0].data;\n"    \
  "  int64_t n = a->outputs[0].numel;\n"

static void expect(const eval_case *c, int outcome, const char *stage,
                   const char *substr) {
  expect_result(run_eval(c), outcome, stage, substr);
}

static void test_honest(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 PRELUDE "  for (int64_t i = 0; i < n; i++) y[i] = x[i] * UNROLLISH;\n"
                         "  return 0;\n}\n",
                 "UNROLLISH", "2.0f", "--copy-gbps=10000"};
  Kernelfleet__EvalResult *r = run_eval(&c);
  assert_non_null(r);
  assert_int_equal(r->outcome, KF_OUTCOME_OK);
  const char *want[] = {"compile", "link", "load", "verify", "determinism",
                        "time"};
  assert_int_equal(r->n_stages, 6);
  for (size_t i = 0; i < 6; i++) {
    assert_string_equal(r->stages[i]->stage, want[i]);
    assert_int_equal(r->stages[i]->outcome, KF_OUTCOME_OK);
  }
  assert_true(r->time_ns_median > 0);
  assert_true(r->ref_time_ns_median > 0);
  /* 10 (the CPU backend's minimum) on a quiet machine; on a loaded one
   * the harness's own noise handling ends the loop after 3 once calls are
   * very slow (pipeline.c time_loop: 20 x the 300 ms budget), and reports
   * what it got.  This test asserts that rule, not the machine's speed. */
  assert_true(r->repetitions >= 3);
  assert_true(r->achieved_gbps > 0);
  assert_non_null(strstr(r->stages[2]->reason, "seccomp"));
  kernelfleet__eval_result__free_unpacked(r, NULL);
}

static void test_compile_error(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF, PRELUDE "  return nope;\n}\n"};
  expect(&c, KF_OUTCOME_COMPILE_ERROR, "compile", "nope");
}

static void test_bad_knob(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF, SCALE_REF, "X;rm", "1"};
  expect(&c, KF_OUTCOME_SPEC_ERROR, "compile", "must match");
  eval_case d = {SCALE_SPEC, SCALE_REF, SCALE_REF, "X", "1 -o/etc/x"};
  expect(&d, KF_OUTCOME_SPEC_ERROR, "compile", "must match");
}

static void test_crash(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 PRELUDE "  if (n > 5) *(volatile int *)0 = 1;\n"
                         "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];\n"
                         "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_CRASH, "verify", "SIGSEGV");
}

static void test_nonzero_return(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF, PRELUDE "  (void)x; (void)y; (void)n;"
                                        " return 3;\n}\n"};
  expect(&c, KF_OUTCOME_CRASH, "verify", "returned 3");
}

static void test_timeout(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 PRELUDE "  for (volatile int k = 0;; k++) {}\n"
                         "  (void)x; (void)y; (void)n; return 0;\n}\n"};
  expect(&c, KF_OUTCOME_TIMEOUT, "verify", "still running");
}

static void test_wrong_answer(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 PRELUDE "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i] "
                         "+ 1e-3f;\n  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_WRONG_ANSWER, "verify", "expected");
}

static void test_unwritten(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 PRELUDE "  for (int64_t i = 0; i < n / 2; i++) y[i] = 2 * x[i];\n"
                         "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_UNWRITTEN_OUTPUT, "verify", "never written");
}

static void test_out_of_bounds(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 PRELUDE "  for (int64_t i = 0; i <= n; i++) y[i] = 2 * x[i];\n"
                         "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_OUT_OF_BOUNDS, "verify", "past the end of output 'y'");
}

static void test_fopen(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 "#include <stdio.h>\n" PRELUDE
                 "  FILE *f = fopen(\"/etc/passwd\", \"r\"); (void)f;\n"
                 "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];\n"
                 "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_LINK_REJECTED, "link", "'fopen'");
}

static void test_fork(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 "#include <unistd.h>\n" PRELUDE
                 "  if (fork() == 0) for (;;) {}\n"
                 "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];\n"
                 "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_LINK_REJECTED, "link", "'fork'");
}

static void test_constructor(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 "static int hit;\n"
                 "__attribute__((constructor)) static void c(void) { hit = 1; }\n"
                 PRELUDE "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i] + hit - 1;\n"
                 "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_LINK_REJECTED, "link", "constructor");
}

/* A name the toolchain's startup code calls when something defines it is
 * a constructor under another name: crti's _init calls __gmon_start__
 * (red team, 2026-11-30: it ran before the draw, forged READY and did a
 * gemm outside the timed window).  Hidden, the definition is local in
 * the output but still satisfied crti's reference. */
static void test_startup_hooks(void **state) {
  (void)state;
  static const char *const hooks[] = {
      "void __gmon_start__(void) {}\n",
      "__attribute__((visibility(\"hidden\"))) void __gmon_start__(void) "
      "{}\n",
      "void _ITM_registerTMCloneTable(void *a, unsigned long n) { (void)a; "
      "(void)n; }\n",
  };
  for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
    char src[1024];
    snprintf(src, sizeof src, "%s" PRELUDE
             "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];\n"
             "  return 0;\n}\n", hooks[i]);
    eval_case c = {SCALE_SPEC, SCALE_REF, src};
    expect(&c, KF_OUTCOME_LINK_REJECTED, "link", "startup code calls");
  }
}

/* Raw syscalls get past the link check; seccomp stops them. */
#if defined(__x86_64__)
#define RAW_SYSCALL(nr, a1, a2)                                               \
  "  { long r; __asm__ volatile(\"syscall\" : \"=a\"(r) : \"a\"(" #nr "L), "  \
  "\"D\"(" #a1 "L), \"S\"(" #a2 "L), \"d\"(0L) : \"rcx\", \"r11\", "          \
  "\"memory\"); (void)r; }\n"

static void test_raw_socket(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 PRELUDE RAW_SYSCALL(41, 2, 1)
                 "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];\n"
                 "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_SANDBOX_VIOLATION, "verify",
         "blocked system call 41 (socket)");
}

static void test_raw_fork(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 PRELUDE RAW_SYSCALL(57, 0, 0)
                 "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];\n"
                 "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_SANDBOX_VIOLATION, "verify", "(fork)");
}

static void test_raw_open(void **state) {
  (void)state;
  /* openat(AT_FDCWD, "/", O_RDONLY) */
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 PRELUDE
                 "  { long r; __asm__ volatile(\"syscall\" : \"=a\"(r) : "
                 "\"a\"(257L), \"D\"(-100L), \"S\"(\"/\"), \"d\"(0L) : "
                 "\"rcx\", \"r11\", \"memory\"); (void)r; }\n"
                 "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];\n"
                 "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_SANDBOX_VIOLATION, "verify", "(openat)");
}

/* Computes, forges the runner's "done" reply (write(2) on fd 1) with the
 * call's sequence number, then keeps working (deferred work the timer would
 * not see).  The eval side sees CPU used after the reply.  (A reply forged
 * before the outputs are written is UNWRITTEN_OUTPUT.) */
static void test_forged_reply(void **state) {
  (void)state;
  /* "done" first, the work after it: the eval process takes the reply
   * and kills the child at once (then reads its CPU clock), so the work
   * never reaches the outputs */
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 "struct rep { unsigned magic, seq; int kind, rc; unsigned def;"
                 " int sysno, err; char msg[220]; int pid, status;"
                 " unsigned long long cpu_ns, arg1; };\n"
                 PRELUDE
                 /* the sequence number is random per call: read from the
                  * command, 916 bytes before params, as an attacker would */
                 "  unsigned seq = *(const unsigned *)((const char *)a->params - 916);\n"
                 "  struct rep r = {0x4b465231u, seq, 2, 0, 0, 0, 0, {0}, 0, 0, 0, 0};\n"
                 "  { long ret; __asm__ volatile(\"syscall\" : \"=a\"(ret) : "
                 "\"a\"(1L), \"D\"(1L), \"S\"(&r), \"d\"(sizeof r) : "
                 "\"rcx\", \"r11\", \"memory\"); (void)ret; }\n"
                 "  for (volatile long k = 0; k < 20000000; k++) {}\n"
                 "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];\n"
                 "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_UNWRITTEN_OUTPUT, "verify", "never written");
}
#endif

/* Remembers outputs by input pointer: the link check refuses the static
 * cache (fresh inputs at a reused address would expose it, and each call
 * runs in a fresh process anyway). */
static void test_pointer_cache(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 "#include <string.h>\n"
                 "static const void *seen[8]; static float cache[8][4096];\n"
                 "static int nseen;\n" PRELUDE
                 "  for (int k = 0; k < nseen; k++)\n"
                 "    if (seen[k] == x && n <= 4096) {\n"
                 "      memcpy(y, cache[k], (size_t)n * 4); return 0; }\n"
                 "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];\n"
                 "  if (nseen < 8 && n <= 4096) {\n"
                 "    seen[nseen] = x; memcpy(cache[nseen++], y, (size_t)n * 4); }\n"
                 "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_LINK_REJECTED, "link", "writable static state");
}

/* HardTanh "optimized" into the identity: passes on U(-1, 1) only. */
static void test_hardtanh_identity(void **state) {
  (void)state;
  eval_case c = {HARDTANH_SPEC, HARDTANH_REF,
                 PRELUDE "  for (int64_t i = 0; i < n; i++) y[i] = x[i];\n"
                         "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_WRONG_ANSWER, "verify", "distribution wide");
}

/* SCALE_SPEC whose bytes formula claims a thousand times what a call
 * moves: a fast time of it is a rate no memory reaches, the same verdict
 * as a forged short time of an honest spec. */
static char *overclaimed_spec_by(const char *mid) {
  const char *at = strstr(SCALE_SPEC, "\"bytes\": \"8*N\"");
  assert_non_null(at);
  size_t head = (size_t)(at - SCALE_SPEC);
  const char *tail = at + strlen("\"bytes\": \"8*N\"");
  char *s = malloc(sizeof SCALE_SPEC + 16);
  assert_non_null(s);
  memcpy(s, SCALE_SPEC, head);
  memcpy(s + head, mid, strlen(mid));
  memcpy(s + head + strlen(mid), tail, strlen(tail) + 1);
  return s;
}

/* Property (d): a time no memory allows is refused, even once the
 * ceiling is measured at the problem's footprint (the worker's ceiling
 * here is realistic; the footprint's rate cannot rescue 30000 x).  The
 * spec claims 983 MB a call: at 10-13 GB/s the floor is 72-94 ms.  The
 * candidate's call takes microseconds -- a loaded CI machine made it 4.4
 * ms, over the floor of the 1000 x claim this test had before, and the
 * verdict ok --, and the reference sleeps 300 ms a call, whatever the
 * load: a candidate is judged only when the reference itself is not too
 * fast. */
static void test_too_fast(void **state) {
  (void)state;
  char *spec = overclaimed_spec_by("\"bytes\": \"240000*N\"");
  eval_case c = {spec, KF_SLEEPY_SCALE_REF(300000000), SCALE_REF, NULL,
                 NULL, "--copy-gbps=10"};
  Kernelfleet__EvalResult *r = run_eval(&c);
  assert_non_null(r);
  assert_true(r->timing_dependent); /* never a permanent verdict */
  expect_result(r, KF_OUTCOME_TOO_FAST, "time", "measured bandwidth");
  free(spec);
}

/* The evaluation's deadline (the worker passes its task time less a
 * margin): whose own calls took the time is named.  A reference that
 * takes most of it makes the problem unevaluable in this time
 * (spec_error: before, the worker killed the harness at the task's time
 * and every candidate got TIMEOUT for the reference's slowness); a
 * candidate that takes it gets TIMEOUT.  Neither is a permanent verdict.
 * The deadline is long enough for the compiles on a loaded machine; the
 * slow side's calls (0.8 s asleep for the reference, 0.6-2.4 s of work for
 * the candidate -- the candidate may not sleep --; 20 of them in verify
 * alone) outlast it on an idle one, and the call timeout is raised past
 * what a loaded machine makes of one of them. */
static const char SLOW_CALL_SRC[] =
    "#include \"kf_candidate.h\"\n"
    "int kf_launch(const kf_args *a) {\n"
    "  const float *x = a->inputs[0].data; float *y = a->outputs[0].data;\n"
    "  for (volatile long k = 0; k < 2400000000L; k++) {}\n"
    "  for (int64_t i = 0; i < a->outputs[0].numel; i++) y[i] = 2.0f * x[i];\n"
    "  return 0;\n"
    "}\n";

static void test_deadline_slow_reference(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SLEEPY_SCALE_REF, SCALE_REF, NULL, NULL,
                 "--deadline-ms=8000", "--call-timeout-ms=20000"};
  Kernelfleet__EvalResult *r = run_eval(&c);
  assert_non_null(r);
  assert_true(r->timing_dependent);
  assert_string_equal(kf_outcome_name(r->outcome),
                      kf_outcome_name(KF_OUTCOME_SPEC_ERROR));
  if (!strstr(final_reason(r), "the reference is too slow for this time"))
    fprintf(stderr, "reason: %s\n", final_reason(r));
  assert_non_null(strstr(final_reason(r),
                         "the reference is too slow for this time"));
  kernelfleet__eval_result__free_unpacked(r, NULL);
}

/* A deadline that has passed before the first case: no call is made and
 * the candidate ends TIMEOUT in verify, with no calls of either side to
 * weigh.  (That nothing of a case not run is looked at afterwards -- the
 * reference's self-check once ran on inputs never drawn and called the
 * spec wrong, loaded CI of 2026-12-01 -- is what
 * test_deadline_slow_candidate catches: it fails without that fix.) */
static void test_deadline_before_any_call(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF, SCALE_REF, NULL, NULL,
                 "--deadline-ms=1"};
  Kernelfleet__EvalResult *r = run_eval(&c);
  assert_non_null(r);
  assert_true(r->timing_dependent);
  expect_result(r, KF_OUTCOME_TIMEOUT, "verify", "reached its deadline");
}

static void test_deadline_slow_candidate(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF, SLOW_CALL_SRC, NULL, NULL,
                 "--deadline-ms=8000", "--call-timeout-ms=20000"};
  Kernelfleet__EvalResult *r = run_eval(&c);
  assert_non_null(r);
  assert_true(r->timing_dependent);
  assert_string_equal(kf_outcome_name(r->outcome),
                      kf_outcome_name(KF_OUTCOME_TIMEOUT));
  if (!strstr(final_reason(r), "candidate's own calls at"))
    fprintf(stderr, "reason: %s\n", final_reason(r));
  assert_non_null(strstr(final_reason(r), "candidate's own calls at"));
  kernelfleet__eval_result__free_unpacked(r, NULL);
}

/* A candidate whose compile is slow (a million-entry table built by macro
 * expansion; ~2 s here) is not the reference's fault when the deadline
 * comes: the compile is the side's own time (cpu_compile adds it to its
 * busy_ns).  Red team 2026-12-01-s3: the compile was nobody's, and the
 * reference, whose calls sleep, was "too slow for this time" (spec_error,
 * a verdict against the problem).  The deadline is put 0.5 s past the
 * candidate's compile as measured by a first run, so that the reference's
 * calls (250 ms each) run before it: without the fix they outweigh the
 * candidate's nothing; with it, the compile outweighs them unless the
 * second compile is under ~60% of the first.  A deadline that falls in
 * the compile instead (a loaded machine) is TIMEOUT either way. */
static const char SLOW_COMPILE_SRC[] =
    "#include \"kf_candidate.h\"\n"
    "#define X1 2.0f,\n"
    "#define X4 X1 X1 X1 X1\n"
    "#define X16 X4 X4 X4 X4\n"
    "#define X64 X16 X16 X16 X16\n"
    "#define X256 X64 X64 X64 X64\n"
    "#define X1K X256 X256 X256 X256\n"
    "#define X4K X1K X1K X1K X1K\n"
    "#define X16K X4K X4K X4K X4K\n"
    "#define X64K X16K X16K X16K X16K\n"
    "#define X256K X64K X64K X64K X64K\n"
    "#define X1M X256K X256K X256K X256K\n"
    "static const float table[] = { X1M };\n"
    "int kf_launch(const kf_args *a) {\n"
    "  const float *x = a->inputs[0].data; float *y = a->outputs[0].data;\n"
    "  const int64_t n = a->outputs[0].numel;\n"
    "  const float k = table[n % (int64_t)(sizeof table / sizeof *table)];\n"
    "  for (int64_t i = 0; i < n; i++) y[i] = k * x[i];\n"
    "  return 0;\n"
    "}\n";

static uint64_t stage_us(const Kernelfleet__EvalResult *r, const char *name) {
  for (size_t i = 0; i < r->n_stages; i++)
    if (!strcmp(r->stages[i]->stage, name)) return r->stages[i]->elapsed_us;
  return 0;
}

static void test_deadline_slow_compile(void **state) {
  (void)state;
  eval_case first = {SCALE_SPEC, SCALE_REF, SLOW_COMPILE_SRC, NULL, NULL,
                     "--stop-after=verify"};
  Kernelfleet__EvalResult *r = run_eval(&first);
  assert_non_null(r);
  uint64_t compile_ms = stage_us(r, "compile") / 1000;
  expect_result(r, KF_OUTCOME_OK, "verify", NULL);
  assert_true(compile_ms > 0);
  char deadline[64];
  snprintf(deadline, sizeof deadline, "--deadline-ms=%llu",
           (unsigned long long)compile_ms + 500);
  eval_case c = {SCALE_SPEC, KF_SLEEPY_SCALE_REF(250000000), SLOW_COMPILE_SRC,
                 NULL, NULL, deadline, "--call-timeout-ms=20000"};
  r = run_eval(&c);
  assert_non_null(r);
  if ((int)r->outcome != KF_OUTCOME_TIMEOUT)
    fprintf(stderr, "compile %llu ms; reason: %s\n",
            (unsigned long long)compile_ms, final_reason(r));
  assert_string_equal(kf_outcome_name(r->outcome),
                      kf_outcome_name(KF_OUTCOME_TIMEOUT));
  assert_null(strstr(final_reason(r), "the reference is too slow"));
  kernelfleet__eval_result__free_unpacked(r, NULL);
}

/* The same overclaimed spec with its own reference as the candidate: the
 * reference is as fast, so the floor says the spec is wrong, not the
 * candidate (a problem from outside the repository made every honest
 * candidate too_fast that way: red team, 2026-11-30). */
static void test_reference_too_fast(void **state) {
  (void)state;
  /* 10^6 x the bytes: a reference call slowed 100-fold by a loaded
   * machine (2.5 ms for 4096 elements, seen beside a ctest -j2) still
   * claims far past any ceiling; 1000 x was not (13 GB/s against 12) */
  char *spec = overclaimed_spec_by("\"bytes\": \"8000000*N\"");
  eval_case c = {spec, SCALE_REF, SCALE_REF, NULL, NULL, "--copy-gbps=10"};
  expect(&c, KF_OUTCOME_SPEC_ERROR, "time", "the reference itself");
  free(spec);
}

/* Property (d) the other way: the worker's ceiling is measured far beyond
 * every cache, and a problem that fits in one may honestly beat it (a 4 MB
 * vecsum reached 100.7% of it).  Here the worker's ceiling is absurdly low
 * -- as if measured under heavy load -- so the honest kernel beats it by
 * orders of magnitude; the harness measures the rate at the bench
 * footprint with the timed call's flush and the kernel stays ok, with the
 * footprint's ceiling named in the reason. */
static void test_cache_resident_not_too_fast(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF, SCALE_REF, NULL, NULL,
                 "--copy-gbps=0.000001"};
  Kernelfleet__EvalResult *r = run_eval(&c);
  assert_non_null(r);
  assert_true(r->ceiling_gbps > 0.001); /* the footprint's, not 1e-6 */
  assert_true(r->timing_dependent);
  expect_result(r, KF_OUTCOME_OK, "time", "measured at this footprint");
}

/* Load only slows a measurement, so a worker that measured its ceilings
 * while the machine was busy has them too low, and the roofline fraction
 * the store divides by them too high -- high enough to end a campaign on
 * its roofline target after one slow kernel (a CI run, 2026-11-30).  A
 * side that claims half the worker's copy ceiling or more gets it
 * measured again beside the timing, by the worker's own code, and the
 * result carries that sample (the store takes the larger); a claim far
 * below the ceiling costs no measurement. */
static void test_low_ceiling_measured_again(void **state) {
  (void)state;
  eval_case lo = {SCALE_SPEC, SCALE_REF, SCALE_REF, NULL, NULL,
                  "--copy-gbps=0.000001"};
  Kernelfleet__EvalResult *r = run_eval(&lo);
  assert_non_null(r);
  /* any machine streams faster than 10 MB/s */
  assert_true(r->stream_gbps > 0.01);
  expect_result(r, KF_OUTCOME_OK, "time", "measured again beside this timing");
  eval_case hi = {SCALE_SPEC, SCALE_REF, SCALE_REF, NULL, NULL,
                  "--copy-gbps=1000000"};
  r = run_eval(&hi);
  assert_non_null(r);
  assert_true(r->stream_gbps == 0);
  assert_null(strstr(final_reason(r), "measured again"));
  expect_result(r, KF_OUTCOME_OK, "time", NULL);
}

/* A problem whose reference ignores its inputs at the bench size (a
 * problem from outside the repository: softmax over rows of one element
 * is 1.0 everywhere) is no problem: a kernel that writes the constant
 * without reading anything passed every check and was timed 12.6x
 * faster (red team, 2026-11-30).  The reference's outputs must differ
 * between the bench size's distributions; here they cannot, and the
 * honest kernel too gets SPEC_ERROR naming the reference's outputs.  A
 * reference whose output depends on its input only at the check sizes
 * is refused the same way. */
#define CONST_AT_BENCH                                                     \
  "#include \"kf_candidate.h\"\n"                                          \
  "int kf_launch(const kf_args *a) {\n"                                    \
  "  const float *x = a->inputs[0].data; float *y = a->outputs[0].data;\n" \
  "  int64_t n = a->outputs[0].numel;\n"                                  \
  "  for (int64_t i = 0; i < n; i++)\n"                                   \
  "    y[i] = n == 4096 ? 1.0f : 2.0f * x[i];\n"                          \
  "  return 0;\n"                                                         \
  "}\n"
static void test_reference_ignores_inputs(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, CONST_AT_BENCH, CONST_AT_BENCH, NULL, NULL,
                 "--copy-gbps=10000"};
  expect(&c, KF_OUTCOME_SPEC_ERROR, "verify", "do not depend on the inputs");
  /* the same problem, honest: its outputs vary, nothing refused */
  eval_case ok = {SCALE_SPEC, SCALE_REF, SCALE_REF, NULL, NULL,
                  "--copy-gbps=10000"};
  expect(&ok, KF_OUTCOME_OK, "time", NULL);
}

/* SCALE_SPEC with a workspace of 4096 bytes. */
static char *workspace_spec(void) {
  const char *at = strstr(SCALE_SPEC, "\"workspace_bytes\": 0");
  assert_non_null(at);
  size_t head = (size_t)(at - SCALE_SPEC);
  const char *mid = "\"workspace_bytes\": 4096";
  const char *tail = at + strlen("\"workspace_bytes\": 0");
  char *s = malloc(sizeof SCALE_SPEC + 16);
  assert_non_null(s);
  memcpy(s, SCALE_SPEC, head);
  memcpy(s + head, mid, strlen(mid));
  memcpy(s + head + strlen(mid), tail, strlen(tail) + 1);
  return s;
}

/* A reference that reads its workspace before writing it (a careless
 * problem from outside: it accumulated into the workspace unzeroed)
 * judged every honest candidate wrong_answer, the problem never named
 * (red team, 2026-11-30).  The reference is run twice on the same inputs,
 * its workspace filled with other bytes, and must agree with itself
 * within the tolerance: here it cannot, and the evaluation is the
 * problem's SPEC_ERROR, whatever the candidate. */
static void test_reference_disagrees_with_itself(void **state) {
  (void)state;
  char *spec = workspace_spec();
  static const char careless[] =
      "#include \"kf_candidate.h\"\n"
      "int kf_launch(const kf_args *a) {\n"
      "  const float *x = a->inputs[0].data; float *y = a->outputs[0].data;\n"
      "  float *acc = a->workspace;\n"
      "  for (int64_t i = 0; i < a->outputs[0].numel; i++)\n"
      "    y[i] = 2.0f * x[i] + acc[0];\n"
      "  return 0;\n"
      "}\n";
  eval_case c = {spec, careless, SCALE_REF, NULL, NULL, "--copy-gbps=10000"};
  expect(&c, KF_OUTCOME_SPEC_ERROR, "verify", "disagrees with itself");
  free(spec);
}

/* A reference from outside that sorts with glibc's qsort (a median, a
 * top-k) made every evaluation a SPEC_ERROR naming a blocked sysinfo,
 * which qsort calls for arrays over 1 KiB (red team, 2026-11-30).  The
 * call fails instead and qsort sorts without it. */
static void test_reference_may_qsort(void **state) {
  (void)state;
  static const char sorting[] =
      "#include <stdlib.h>\n"
      "#include \"kf_candidate.h\"\n"
      "static int cmp(const void *p, const void *q) {\n"
      "  float u = *(const float *)p, v = *(const float *)q;\n"
      "  return (u > v) - (u < v);\n"
      "}\n"
      "int kf_launch(const kf_args *a) {\n"
      "  const float *x = a->inputs[0].data; float *y = a->outputs[0].data;\n"
      "  int64_t n = a->outputs[0].numel;\n"
      "  float *s = malloc((size_t)n * sizeof *s);\n"
      "  if (!s) return 1;\n"
      "  for (int64_t i = 0; i < n; i++) s[i] = x[i];\n"
      "  qsort(s, (size_t)n, sizeof *s, cmp);\n"
      "  for (int64_t i = 1; i < n; i++) if (s[i - 1] > s[i]) abort();\n"
      "  free(s);\n"
      "  for (int64_t i = 0; i < n; i++) y[i] = 2.0f * x[i];\n"
      "  return 0;\n"
      "}\n";
  eval_case c = {SCALE_SPEC, sorting,
                 PRELUDE "  for (int64_t i = 0; i < n; i++) y[i] = 2.0f * x[i];\n"
                         "  return 0;\n}\n",
                 NULL, NULL, "--copy-gbps=10000"};
  expect(&c, KF_OUTCOME_OK, "time", NULL);
}

/* A one-input integer problem: y = f(x), x drawn by the index
 * distribution from [0, range), compared exactly. */
static char *int_spec(const char *dt, const char *range) {
  static const char fmt[] =
      "{\"name\": \"ints\", \"backend\": \"cpu\", \"params\": [\"N\"],"
      " \"inputs\": [{\"name\": \"x\", \"dtype\": \"%s\", \"shape\": [\"N\"],"
      "   \"dists\": [\"index\"], \"range\": \"%s\"}],"
      " \"outputs\": [{\"name\": \"y\", \"dtype\": \"%s\", \"shape\": [\"N\"]}],"
      " \"sizes\": {\"check\": [{\"N\": 1}, {\"N\": 33}, {\"N\": 1000}],"
      "   \"bench\": {\"N\": 4096}},"
      " \"tolerance\": {\"%s\": {\"rtol\": 0, \"atol\": 0}},"
      " \"allow_nan\": false, \"deterministic\": true,"
      " \"flops\": \"N\", \"bytes\": \"16*N\", \"workspace_bytes\": 0,"
      " \"reference\": \"reference.c\", \"templates\": []}";
  char *out = NULL;
  assert_true(asprintf(&out, fmt, dt, range, dt, dt) > 0);
  return out;
}

#define INT_KERNEL(T, EXPR)                                                   \
  "#include \"kf_candidate.h\"\n"                                             \
  "int kf_launch(const kf_args *a) {\n"                                       \
  "  const " T " *x = a->inputs[0].data; " T " *y = a->outputs[0].data;\n"    \
  "  for (int64_t i = 0; i < a->outputs[0].numel; i++) " EXPR ";\n"           \
  "  return 0;\n"                                                             \
  "}\n"

/* An i64 drawn over [0, 2^60) went through a double, so no input had its
 * low bits set, and a candidate doing the math in double passed an exact
 * spec (red team, 2026-11-30).  Integers are drawn as integers. */
static void test_int_draws_keep_low_bits(void **state) {
  (void)state;
  char *spec = int_spec("i64", "1152921504606846976");
  eval_case c = {spec, INT_KERNEL("int64_t", "y[i] = x[i] + 1"),
                 INT_KERNEL("int64_t", "y[i] = (int64_t)((double)x[i] + 1.0)")};
  expect(&c, KF_OUTCOME_WRONG_ANSWER, "verify", "elements differ");
  free(spec);
}

/* An integer answer equal to the output poison (0xA5 bytes) is an answer:
 * y = x ^ 0xA5A5A5A5 at x = 0 made the reference "leave y unwritten" and
 * the problem a SPEC_ERROR (red team, 2026-11-30). */
static void test_int_answer_is_the_poison(void **state) {
  (void)state;
  char *spec = int_spec("i32", "4");
  eval_case c = {spec,
                 INT_KERNEL("int32_t", "y[i] = x[i] ^ (int32_t)0xA5A5A5A5u"),
                 INT_KERNEL("int32_t", "y[i] = ~(~x[i] ^ (int32_t)0xA5A5A5A5u)"),
                 NULL, NULL, "--copy-gbps=10000"};
  expect(&c, KF_OUTCOME_OK, "time", NULL);
  free(spec);
}

/* ... and an integer element the reference never writes is still found,
 * even when the candidate skips it too (the two then agree byte for
 * byte): the reference's self-check poisons with the other byte, and the
 * element follows.  A candidate that writes it disagrees with the poison
 * pattern, which the comparison names as either side's fault. */
static void test_int_reference_unwritten(void **state) {
  (void)state;
  char *spec = int_spec("i32", "1000");
  const char *skips = INT_KERNEL("int32_t", "if (i > 0) y[i] = 3 * x[i]");
  eval_case c = {spec, skips, skips};
  expect(&c, KF_OUTCOME_SPEC_ERROR, "verify", "left y[0] unwritten");
  eval_case d = {spec, skips, INT_KERNEL("int32_t", "y[i] = 3 * x[i]")};
  expect(&d, KF_OUTCOME_SPEC_ERROR, "verify", "holds the poison pattern");
  free(spec);
}

/* Evidence is per output: y = 2x beside z = 1e-12 x (always within the
 * atol of zero), and a candidate writing zeros into z passed every case,
 * the cases being evidence through y (red team, 2026-11-30: the mean
 * beside the tensor it summarises).  The problem cannot check z. */
static void test_evidence_per_output(void **state) {
  (void)state;
  static const char spec[] =
      "{\"name\": \"two\", \"backend\": \"cpu\", \"params\": [\"N\"],"
      " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"],"
      "   \"dists\": [\"normal\", \"uniform\"]}],"
      " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]},"
      "   {\"name\": \"z\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
      " \"sizes\": {\"check\": [{\"N\": 7}, {\"N\": 1000}],"
      "   \"bench\": {\"N\": 4096}},"
      " \"tolerance\": {\"f32\": {\"rtol\": 1e-6, \"atol\": 1e-7}},"
      " \"allow_nan\": false, \"deterministic\": true,"
      " \"flops\": \"N\", \"bytes\": \"12*N\", \"workspace_bytes\": 0,"
      " \"reference\": \"reference.c\", \"templates\": []}";
  static const char ref[] =
      "#include \"kf_candidate.h\"\n"
      "int kf_launch(const kf_args *a) {\n"
      "  const float *x = a->inputs[0].data;\n"
      "  float *y = a->outputs[0].data, *z = a->outputs[1].data;\n"
      "  for (int64_t i = 0; i < a->outputs[0].numel; i++) {\n"
      "    y[i] = 2.0f * x[i]; z[i] = 1e-12f * x[i];\n"
      "  }\n"
      "  return 0;\n"
      "}\n";
  static const char zeros[] =
      "#include \"kf_candidate.h\"\n"
      "int kf_launch(const kf_args *a) {\n"
      "  const float *x = a->inputs[0].data;\n"
      "  float *y = a->outputs[0].data, *z = a->outputs[1].data;\n"
      "  for (int64_t i = 0; i < a->outputs[0].numel; i++) {\n"
      "    y[i] = 2.0f * x[i]; z[i] = 0.0f;\n"
      "  }\n"
      "  return 0;\n"
      "}\n";
  eval_case c = {spec, ref, zeros};
  expect(&c, KF_OUTCOME_SPEC_ERROR, "verify", "output 'z' is within the "
         "tolerance around zero");
}

/* A spec whose index range is one too large ("V+1"): the reference reads
 * one element past its table, into the canary after it -- the same bytes
 * in every call, so they were the truth, and a careful candidate was
 * wrong_answer (red team, 2026-11-30).  Its self-check salts the canary:
 * it disagrees with itself, and the problem is named. */
static void test_reference_reads_past_input(void **state) {
  (void)state;
  static const char spec[] =
      "{\"name\": \"gather\", \"backend\": \"cpu\", \"params\": [\"V\", \"N\"],"
      " \"inputs\": [{\"name\": \"table\", \"dtype\": \"f32\","
      "   \"shape\": [\"V\"], \"dists\": [\"normal\"]},"
      "  {\"name\": \"idx\", \"dtype\": \"i32\", \"shape\": [\"N\"],"
      "   \"dists\": [\"index\"], \"range\": \"V+1\"}],"
      " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
      " \"sizes\": {\"check\": [{\"V\": 16, \"N\": 1000}],"
      "   \"bench\": {\"V\": 16, \"N\": 4096}},"
      " \"tolerance\": {\"f32\": {\"rtol\": 1e-6, \"atol\": 1e-7}},"
      " \"allow_nan\": true, \"deterministic\": true,"
      " \"flops\": \"N\", \"bytes\": \"8*N+4*V\", \"workspace_bytes\": 0,"
      " \"reference\": \"reference.c\", \"templates\": []}";
  static const char ref[] =
      "#include \"kf_candidate.h\"\n"
      "int kf_launch(const kf_args *a) {\n"
      "  const float *t = a->inputs[0].data;\n"
      "  const int32_t *k = a->inputs[1].data;\n"
      "  float *y = a->outputs[0].data;\n"
      "  for (int64_t i = 0; i < a->outputs[0].numel; i++) y[i] = t[k[i]];\n"
      "  return 0;\n"
      "}\n";
  static const char careful[] =
      "#include \"kf_candidate.h\"\n"
      "int kf_launch(const kf_args *a) {\n"
      "  const float *t = a->inputs[0].data;\n"
      "  const int32_t *k = a->inputs[1].data;\n"
      "  float *y = a->outputs[0].data;\n"
      "  int64_t v = a->inputs[0].numel;\n"
      "  for (int64_t i = 0; i < a->outputs[0].numel; i++)\n"
      "    y[i] = k[i] < v ? t[k[i]] : 0.0f;\n"
      "  return 0;\n"
      "}\n";
  eval_case c = {spec, ref, careful};
  expect(&c, KF_OUTCOME_SPEC_ERROR, "verify", "disagrees with itself");
}

/* No call can count from what the harness hands it: the workspace fill
 * was 0x5A ^ n in the n-th check (and timed repetition), so a kernel
 * exact only while the fill decodes to a small index passed all 20
 * checks of this spec (it ended nondeterministic, at the determinism
 * check's 0xA5).  Drawn per call from the seed, the fill counts nothing:
 * the checks catch it (the fixture's seed is fixed: no lottery). */
static void test_workspace_fill_says_nothing(void **state) {
  (void)state;
  char *spec = workspace_spec();
  eval_case c = {spec, SCALE_REF,
                 PRELUDE "  const unsigned char *w = a->workspace;\n"
                         "  float k = w && (w[0] ^ 0x5A) < 24 ? 2.0f : 3.0f;\n"
                         "  for (int64_t i = 0; i < n; i++) y[i] = k * x[i];\n"
                         "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_WRONG_ANSWER, "verify", "elements differ");
  free(spec);
}

/* The command's sequence number was a per-runner counter the child can
 * read (it echoes it in DONE): exact through the 22 checks and
 * determinism runs of this spec, wrong after.  A random number per call
 * counts nothing: the checks catch it. */
static void test_no_call_counter(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 "#define CMD_SEQ(p) (*(const unsigned *)((const char *)(p) - 916))\n"
                 PRELUDE "  float k = CMD_SEQ(a->params) <= 22 ? 2.0f : 3.0f;\n"
                         "  for (int64_t i = 0; i < n; i++) y[i] = k * x[i];\n"
                         "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_WRONG_ANSWER, "verify", "elements differ");
}

static void test_all_zeros_spec(void **state) {
  (void)state;
  eval_case c = {ZEROISH_SPEC, SCALE_REF,
                 PRELUDE "  (void)x; for (int64_t i = 0; i < n; i++) y[i] = 0;\n"
                         "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_SPEC_ERROR, "verify", "all-zeros");
}

/* y = 2 x at a bench size of 2^37 f32 per tensor: 1 TiB of images per
 * runner, more than any machine this runs on may map (the harness's limit
 * is 70% of MemAvailable over the runners).  Small check sizes: only the
 * bench size is too large. */
static const char HUGE_SPEC[] =
    "{\"name\": \"huge\", \"backend\": \"cpu\","
    " \"params\": [\"N\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"],"
    "   \"dists\": [\"normal\"]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
    " \"sizes\": {\"check\": [{\"N\": 1}, {\"N\": 33}],"
    "   \"bench\": {\"N\": 137438953472}},"
    " \"tolerance\": {\"f32\": {\"rtol\": 1e-6, \"atol\": 1e-7}},"
    " \"allow_nan\": false, \"deterministic\": true,"
    " \"flops\": \"N\", \"bytes\": \"8*N\", \"workspace_bytes\": 0,"
    " \"reference\": \"reference.c\", \"templates\": []}";

/* Issue 10's memory bomb: the harness refuses the layout with a clear
 * error naming the size, and does so before it maps anything.  "Before"
 * is made observable with RLIMIT_FSIZE, inherited by kf-harness: the
 * runners' images are memfds sized with ftruncate, so any attempt to make
 * an image larger than 1 GiB fails with EFBIG (SIGXFSZ ignored), an
 * INFRA_ERROR "memfd of ... bytes: File too large" -- a different outcome.
 * So this passes only if the refusal comes before the first image is
 * made; and without the refusal nothing is touched either (the mapping
 * fails first), so the test cannot exhaust the machine.  RLIMIT_AS would
 * say the same but cannot be used: ASan's shadow needs terabytes of
 * address space. */
static void test_layout_too_large(void **state) {
  (void)state;
  struct rlimit old, lim;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  lim = old;
  lim.rlim_cur = 1ull << 30;
  if (old.rlim_max != RLIM_INFINITY && old.rlim_max < lim.rlim_cur)
    lim.rlim_cur = old.rlim_max;
  void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
  eval_case c = {HUGE_SPEC, SCALE_REF, SCALE_REF};
  Kernelfleet__EvalResult *r = run_eval(&c);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, old_xfsz);
  assert_non_null(r);
  /* names the size and the bytes it needs (2 x 2^39 B = 1.02e+03 GiB) */
  assert_non_null(strstr(final_reason(r), "at size N=137438953472 the "
                         "tensors and workspace take 1.02e+03 GiB per "
                         "runner"));
  expect_result(r, KF_OUTCOME_SPEC_ERROR, "load",
                "too large for this machine");
}

static void test_nondeterministic(void **state) {
  (void)state;
  eval_case c = {SCALE_SPEC, SCALE_REF,
                 "static unsigned long long tick(void) {\n"
                 "#if defined(__x86_64__)\n"
                 "  return __builtin_ia32_rdtsc();\n"
                 "#else\n"
                 "  unsigned long long v; __asm__ volatile(\"mrs %0, cntvct_el0\""
                 " : \"=r\"(v)); return v;\n"
                 "#endif\n}\n" PRELUDE
                 "  for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];\n"
                 "  for (int64_t i = 0; i < n; i++)\n"
                 "    if ((tick() * 0x9E3779B97F4A7C15ull) >> 63) y[i] *= 1.00000012f;\n"
                 "  return 0;\n}\n"};
  /* elements wobble in the last bit by the clock: inside the tolerance,
   * so verify passes, but not bitwise stable */
  expect(&c, KF_OUTCOME_NONDETERMINISTIC, "determinism", "differ");
}

/* SCALE_SPEC with two bench sizes, N=4096 and N=65536 (not a check
 * size). */
static char *two_bench_spec(void) {
  static const char from[] = "\"bench\": {\"N\": 4096}";
  static const char to[] = "\"bench\": [{\"N\": 4096}, {\"N\": 65536}]";
  const char *at = strstr(SCALE_SPEC, from);
  assert_non_null(at);
  char *s = malloc(sizeof SCALE_SPEC + sizeof to);
  assert_non_null(s);
  size_t head = (size_t)(at - SCALE_SPEC);
  memcpy(s, SCALE_SPEC, head);
  strcpy(s + head, to);
  strcat(s, at + strlen(from));
  return s;
}

/* Every bench size of a list is verified under every distribution: a
 * kernel wrong only at the second (a size no check covers) is caught in
 * verify, not ranked by the first. */
static void test_every_bench_size_verified(void **state) {
  (void)state;
  char *spec = two_bench_spec();
  eval_case c = {spec, SCALE_REF,
                 PRELUDE "  for (int64_t i = 0; i < n; i++)\n"
                         "    y[i] = n == 65536 && i == 7 ? 0 : 2.0f * x[i];\n"
                         "  return 0;\n}\n"};
  expect(&c, KF_OUTCOME_WRONG_ANSWER, "verify", "size N=65536");
  free(spec);
}

/* A time over a list of bench sizes is the geometric mean of the medians
 * at each (GPU MODE's score over its benchmarks): the reference here
 * sleeps 1 ms a call at N=4096 and 100 ms at N=65536, so its time is
 * about 10 ms -- not 1 (the first size alone), 100 (the second alone) or
 * 50 (the arithmetic mean).  Sleeps only lengthen under load: up to 9 ms
 * at the first size still keeps the mean within the bound below. */
static void test_bench_sizes_geometric_mean(void **state) {
  (void)state;
  char *spec = two_bench_spec();
  eval_case c = {spec,
                 "#include <linux/futex.h>\n"
                 "#include <sys/syscall.h>\n"
                 "#include <time.h>\n"
                 "#include \"kf_candidate.h\"\n"
                 "static int word;\n"
                 "int kf_launch(const kf_args *a) {\n"
                 "  const float *x = a->inputs[0].data;\n"
                 "  float *y = a->outputs[0].data;\n"
                 "  int64_t n = a->outputs[0].numel;\n"
                 "  struct timespec ts = {0, n == 65536 ? 100000000 :\n"
                 "                           n == 4096 ? 1000000 : 0};\n"
                 "  if (ts.tv_nsec)\n"
                 "    syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts,\n"
                 "            NULL, 0);\n"
                 "  for (int64_t i = 0; i < n; i++) y[i] = 2.0f * x[i];\n"
                 "  return 0;\n"
                 "}\n",
                 SCALE_REF};
  Kernelfleet__EvalResult *r = run_eval(&c);
  assert_non_null(r);
  assert_int_equal(r->outcome, KF_OUTCOME_OK);
  if (r->ref_time_ns_median < 8e6 || r->ref_time_ns_median > 30e6)
    fail_msg("the reference's time over N=4096 (1 ms) and N=65536 (100 ms) "
             "is %.0f ns, not their geometric mean", r->ref_time_ns_median);
  const char *why = r->stages[r->n_stages - 1]->reason;
  assert_non_null(strstr(why, "size N=4096:"));
  assert_non_null(strstr(why, "size N=65536:"));
  assert_non_null(strstr(why, "over the 2 bench sizes, their medians' "
                              "geometric mean"));
  assert_true(r->time_ns_median > 0);
  assert_true(r->repetitions >= 3);
  kernelfleet__eval_result__free_unpacked(r, NULL);
  free(spec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_honest),
      cmocka_unit_test(test_compile_error),
      cmocka_unit_test(test_bad_knob),
      cmocka_unit_test(test_crash),
      cmocka_unit_test(test_nonzero_return),
      cmocka_unit_test(test_timeout),
      cmocka_unit_test(test_wrong_answer),
      cmocka_unit_test(test_unwritten),
      cmocka_unit_test(test_out_of_bounds),
      cmocka_unit_test(test_fopen),
      cmocka_unit_test(test_fork),
      cmocka_unit_test(test_constructor),
      cmocka_unit_test(test_startup_hooks),
#if defined(__x86_64__)
      cmocka_unit_test(test_raw_socket),
      cmocka_unit_test(test_raw_fork),
      cmocka_unit_test(test_raw_open),
      cmocka_unit_test(test_forged_reply),
#endif
      cmocka_unit_test(test_pointer_cache),
      cmocka_unit_test(test_hardtanh_identity),
      cmocka_unit_test(test_too_fast),
      cmocka_unit_test(test_deadline_slow_reference),
      cmocka_unit_test(test_deadline_slow_candidate),
      cmocka_unit_test(test_deadline_before_any_call),
      cmocka_unit_test(test_deadline_slow_compile),
      cmocka_unit_test(test_reference_too_fast),
      cmocka_unit_test(test_cache_resident_not_too_fast),
      cmocka_unit_test(test_low_ceiling_measured_again),
      cmocka_unit_test(test_reference_ignores_inputs),
      cmocka_unit_test(test_reference_disagrees_with_itself),
      cmocka_unit_test(test_reference_may_qsort),
      cmocka_unit_test(test_int_draws_keep_low_bits),
      cmocka_unit_test(test_int_answer_is_the_poison),
      cmocka_unit_test(test_int_reference_unwritten),
      cmocka_unit_test(test_evidence_per_output),
      cmocka_unit_test(test_reference_reads_past_input),
      cmocka_unit_test(test_all_zeros_spec),
      cmocka_unit_test(test_workspace_fill_says_nothing),
      cmocka_unit_test(test_no_call_counter),
      cmocka_unit_test(test_nondeterministic),
      cmocka_unit_test(test_layout_too_large),
      cmocka_unit_test(test_every_bench_size_verified),
      cmocka_unit_test(test_bench_sizes_geometric_mean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
