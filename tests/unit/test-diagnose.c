/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-diagnose.c -- common/profile.c (the parser of Nsight
 * Compute's `--csv --page raw` output) and common/diagnose.c (the
 * bottleneck classes and their numbers).
 *
 * Two kinds of ncu sample: tests/unit/data/ncu-raw-h100.csv is real
 * output, captured on an H100 with ncu 2025.3.1 (`--csv --page raw
 * --clock-control none` with kf_prof_ncu_metrics, a program of three
 * kernels: two named k_gen like the harness's own, then a vector add);
 * the inline samples are written from the same format (a quoted header
 * row of column names, a units row, one row per kernel launch, "==PROF=="
 * notes around them) to reach the edge cases.
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

#include "diagnose.h"
#include "err.h"
#include "profile.h"

#define HDR                                                                  \
  "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\","   \
  "\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\","  \
  "\"gpu__time_duration.sum\","                                             \
  "\"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed\","             \
  "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","                   \
  "\"sm__warps_active.avg.pct_of_peak_sustained_active\","                  \
  "\"l1tex__t_sector_hit_rate.pct\",\"lts__t_sector_hit_rate.pct\","        \
  "\"launch__registers_per_thread\","                                       \
  "\"launch__shared_mem_per_block_static\","                                \
  "\"launch__shared_mem_per_block_dynamic\","                               \
  "\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\","   \
  "\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\"," \
  "\"smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio\"," \
  "\"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio\"\n"
#define UNITS                                                                \
  "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"nsecond\",\"%\"," \
  "\"%\",\"%\",\"%\",\"%\",\"register/thread\",\"byte/block\","             \
  "\"byte/block\",\"\",\"\",\"\",\"\"\n"

static const char *const harness_kernels[] = {"k_gen", "k_canary",
                                              "k_canary_check", "k_digest",
                                              "k_read", NULL};

static void ncu_raw_page_parsed(void **state) {
  (void)state;
  const char *text =
      "==PROF== Connected to process 4242 (/opt/kf/kf-harness-cuda)\n"
      HDR UNITS
      "\"0\",\"4242\",\"kf-harness-cuda\",\"127.0.0.1\",\"k_gen(unsigned "
      "char *, int, unsigned long, int, unsigned long)\",\"1\",\"7\",\"(256, "
      "1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\",\"99,999\",\"90\",\"10\","
      "\"80\",\"0\",\"0\",\"16\",\"0\",\"0\",\"0\",\"1\",\"0\",\"0\"\n"
      "\"1\",\"4242\",\"kf-harness-cuda\",\"127.0.0.1\",\"rmsnorm_kernel("
      "const __nv_bfloat16 *, __nv_bfloat16 *, int)\",\"1\",\"7\",\"(256, 1,"
      " 1)\",\"(8192, 1, 1)\",\"0\",\"9.0\",\"41,216\",\"88.52\",\"31.4\","
      "\"71.25\",\"12.5\",\"40.75\",\"32\",\"1,024\",\"512\",\"0.21\","
      "\"14.8\",\"3.1\",\"0.9\"\n"
      "\"2\",\"4242\",\"kf-harness-cuda\",\"127.0.0.1\",\"rmsnorm_tail()\","
      "\"1\",\"7\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"2,100\","
      "\"1.0\",\"0.5\",\"3.0\",\"n/a\",\"50\",\"8\",\"0\",\"0\",\"0\",\"0\","
      "\"0\",\"9\"\n"
      "==PROF== Disconnected from process 4242\n";
  kf_prof p;
  char err[256] = "";
  assert_int_equal(kf_prof_parse_ncu_csv(text, strlen(text), harness_kernels,
                                         &p, err, sizeof err), 0);
  assert_int_equal(p.status, KF_PROF_OK);
  assert_string_equal(p.reason, "");
  assert_string_equal(p.tool, "ncu");
  /* the harness's k_gen (longest of all) is not the candidate's */
  assert_int_equal(p.kernels, 2);
  assert_true(strncmp(p.kernel, "rmsnorm_kernel(", 15) == 0);
  assert_true(fabs(p.duration_ns - 41216) < 1e-9);
  assert_true(fabs(p.dram_pct - 88.52) < 1e-9);
  assert_true(fabs(p.sm_pct - 31.4) < 1e-9);
  assert_true(fabs(p.occupancy_pct - 71.25) < 1e-9);
  assert_true(fabs(p.l1_hit_pct - 12.5) < 1e-9);
  assert_true(fabs(p.l2_hit_pct - 40.75) < 1e-9);
  assert_int_equal(p.registers, 32);
  assert_int_equal(p.shared_bytes, 1536);
  assert_int_equal(p.n_stalls, 3);
  assert_string_equal(p.stalls[0].name, "long_scoreboard");
  assert_true(fabs(p.stalls[0].cycles - 14.8) < 1e-9);
  assert_string_equal(p.stalls[1].name, "lg_throttle");
  assert_string_equal(p.stalls[2].name, "wait");
}

/* The captured H100 output: ~300 columns, thousands separators, a
 * "selected" pseudo-stall, the harness-named kernels left out. */
static void ncu_captured_h100(void **state) {
  (void)state;
  const char *src = getenv("KF_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/unit/data/ncu-raw-h100.csv",
           src ? src : ".");
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s (KF_SOURCE_DIR)", path);
  static char text[1 << 20];
  size_t n = fread(text, 1, sizeof text, f);
  fclose(f);
  assert_true(n > 1000 && n < sizeof text);
  kf_prof p;
  char err[256] = "";
  assert_int_equal(kf_prof_parse_ncu_csv(text, n, harness_kernels, &p, err,
                                         sizeof err), 0);
  assert_int_equal(p.kernels, 1);
  assert_string_equal(p.kernel,
                      "vadd(const float *, const float *, float *, int)");
  assert_true(fabs(p.duration_ns - 72352) < 1e-9);
  assert_true(fabs(p.dram_pct - 78.84) < 1e-9);
  assert_true(fabs(p.sm_pct - 33.09) < 1e-9);
  assert_true(fabs(p.occupancy_pct - 76.31) < 1e-9);
  assert_true(fabs(p.l1_hit_pct - 0) < 1e-9);
  assert_true(fabs(p.l2_hit_pct - 34.22) < 1e-9);
  assert_int_equal(p.registers, 16);
  assert_int_equal(p.shared_bytes, 0);
  assert_int_equal(p.n_stalls, 3);
  assert_string_equal(p.stalls[0].name, "long_scoreboard");
  assert_true(fabs(p.stalls[0].cycles - 73.11) < 1e-9);
  assert_string_equal(p.stalls[1].name, "wait");
  assert_string_equal(p.stalls[2].name, "short_scoreboard");
  /* all three kernels when none is skipped: the longest is still vadd */
  assert_int_equal(kf_prof_parse_ncu_csv(text, n, NULL, &p, err, sizeof err),
                   0);
  assert_int_equal(p.kernels, 3);
  /* its diagnosis: 78.8% DRAM is memory-bound by the counters when the
   * spec's bytes say less */
  kf_diag d;
  kf_diag_in in = {.gpu = true, .time_ns = 72352, .gbps = 1000,
                   .ceil_gbps = 3000, .prof = &p};
  assert_int_equal(kf_diag_classify(&in, &d), 0);
  assert_int_equal(d.bound, KF_DIAG_MEMORY);
  assert_true(d.profiled);
}

static void ncu_unmeasured_cells_are_negative(void **state) {
  (void)state;
  const char *text = HDR UNITS
      "\"0\",\"1\",\"p\",\"h\",\"k\",\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\","
      "\"0\",\"9.0\",\"1000\",\"n/a\",\"\",\"-3\",\"abc\",\"5\",\"0\",\"0\","
      "\"0\",\"0\",\"0\",\"0\",\"0\"\n";
  kf_prof p;
  char err[256];
  assert_int_equal(kf_prof_parse_ncu_csv(text, strlen(text), NULL, &p, err,
                                         sizeof err), 0);
  assert_true(p.dram_pct < 0 && p.sm_pct < 0 && p.occupancy_pct < 0 &&
              p.l1_hit_pct < 0);
  assert_true(fabs(p.l2_hit_pct - 5) < 1e-9);
  assert_int_equal(p.n_stalls, 0);
}

static void ncu_counters_restricted(void **state) {
  (void)state;
  const char *text =
      "==PROF== Connected to process 99 (/opt/kf/kf-harness-cuda)\n"
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to "
      "access NVIDIA GPU Performance Counters on the target device 0.\n";
  kf_prof p;
  char err[256];
  assert_int_equal(kf_prof_parse_ncu_csv(text, strlen(text), NULL, &p, err,
                                         sizeof err), KF_EINVAL);
  assert_int_equal(p.status, KF_PROF_RESTRICTED);
  assert_non_null(strstr(p.reason, "ERR_NVGPUCTRPERM"));
  assert_string_equal(kf_prof_status_name(p.status), "restricted");
}

static void ncu_no_rows(void **state) {
  (void)state;
  kf_prof p;
  char err[256];
  const char *junk = "==PROF== nothing profiled\nhello, world\n\"unterminated\n";
  assert_int_equal(kf_prof_parse_ncu_csv(junk, strlen(junk), NULL, &p, err,
                                         sizeof err), KF_EINVAL);
  assert_int_equal(p.status, KF_PROF_FAILED);
  assert_non_null(strstr(err, "Kernel Name"));
  /* a header, but only the harness's own kernels */
  const char *own = HDR UNITS
      "\"0\",\"1\",\"p\",\"h\",\"k_digest(const unsigned char *)\",\"1\","
      "\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"1000\",\"1\",\"1\","
      "\"1\",\"1\",\"1\",\"1\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\"\n";
  assert_int_equal(kf_prof_parse_ncu_csv(own, strlen(own), harness_kernels,
                                         &p, err, sizeof err), KF_EINVAL);
  assert_int_equal(p.status, KF_PROF_FAILED);
  assert_non_null(strstr(p.reason, "none of the candidate's kernels"));
  /* not NUL-terminated, cut in the middle of a row: no crash, no row */
  assert_int_equal(kf_prof_parse_ncu_csv(own, strlen(HDR UNITS) + 20, NULL,
                                         &p, err, sizeof err), KF_EINVAL);
  assert_int_equal(kf_prof_parse_ncu_csv(NULL, 0, NULL, &p, err, sizeof err),
                   KF_EINVAL);
}

static void status_names_round_trip(void **state) {
  (void)state;
  for (int s = KF_PROF_NONE; s <= KF_PROF_SKIPPED; s++)
    assert_int_equal(kf_prof_status_parse(kf_prof_status_name(s)), s);
  assert_int_equal(kf_prof_status_parse("bogus"), -1);
  assert_null(kf_prof_status_name((kf_prof_status)99));
}

static void policy_parsed(void **state) {
  (void)state;
  int k = 99;
  assert_int_equal(kf_prof_policy_parse("all", &k), 0);
  assert_int_equal(k, -1);
  assert_int_equal(kf_prof_policy_parse("none", &k), 0);
  assert_int_equal(k, 0);
  assert_int_equal(kf_prof_policy_parse("top:12", &k), 0);
  assert_int_equal(k, 12);
  assert_int_equal(kf_prof_policy_parse("top:999", &k), 0);
  assert_int_equal(kf_prof_policy_parse("", &k), 0);
  assert_int_equal(k, 5);
  assert_int_equal(kf_prof_policy_parse(NULL, &k), 0);
  assert_int_equal(k, 5);
  const char *bad[] = {"top:0", "top:", "top:1000", "top:-1", "top:1x",
                       "ALL", "top:01", " all", "some"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    if (kf_prof_policy_parse(bad[i], &k) != KF_EINVAL)
      fail_msg("policy '%s' accepted", bad[i]);
}

/* The wire: what the harness makes passes the coordinator's check
 * unchanged; what a worker should not send is refused, field named. */
static void wire_checked(void **state) {
  (void)state;
  kf_prof p;
  kf_prof_init(&p, KF_PROF_OK);
  snprintf(p.tool, sizeof p.tool, "ncu");
  memset(p.kernel, 'k', sizeof p.kernel - 1); /* as long as it may be */
  p.kernel[sizeof p.kernel - 1] = '\0';
  p.dram_pct = 88.5;
  p.l2_hit_pct = 100.17;
  p.registers = 40;
  p.n_stalls = 2;
  snprintf(p.stalls[0].name, sizeof p.stalls[0].name, "long_scoreboard");
  p.stalls[0].cycles = 70;
  snprintf(p.stalls[1].name, sizeof p.stalls[1].name, "wait");
  p.stalls[1].cycles = 3;
  Kernelfleet__ProfileReport pb;
  Kernelfleet__ProfileStall st[KF_PROF_MAX_STALLS], *sp[KF_PROF_MAX_STALLS];
  kf_prof_to_pb(&p, &pb, st, sp);
  assert_string_equal(pb.status, "ok");
  kf_prof back;
  char bad[200] = "";
  assert_int_equal(kf_prof_from_pb(&pb, &back, bad, sizeof bad), 0);
  assert_string_equal(back.kernel, p.kernel);
  assert_true(back.sm_pct < 0 && fabs(back.l2_hit_pct - 100.17) < 1e-12);
  assert_int_equal(back.n_stalls, 2);
  assert_string_equal(back.stalls[1].name, "wait");
  /* one byte longer than the field */
  char longer[sizeof p.kernel + 1];
  memset(longer, 'k', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  pb.kernel = longer;
  assert_int_equal(kf_prof_from_pb(&pb, &back, bad, sizeof bad), KF_EINVAL);
  assert_non_null(strstr(bad, "profile.kernel is longer than 127 bytes"));
  pb.kernel = p.kernel;
  pb.sm_pct = 1000.5;
  assert_int_equal(kf_prof_from_pb(&pb, &back, bad, sizeof bad), KF_EINVAL);
  assert_non_null(strstr(bad, "profile.sm_pct"));
  pb.sm_pct = INFINITY;
  assert_int_equal(kf_prof_from_pb(&pb, &back, bad, sizeof bad), KF_EINVAL);
  pb.sm_pct = -1;
  Kernelfleet__ProfileStall *four[4] = {sp[0], sp[1], sp[0], sp[1]};
  pb.stalls = four;
  pb.n_stalls = 4;
  assert_int_equal(kf_prof_from_pb(&pb, &back, bad, sizeof bad), KF_EINVAL);
  assert_non_null(strstr(bad, "profile.stalls holds 4 entries"));
  pb.stalls = sp;
  pb.n_stalls = 2;
  st[1].reason = "wa\x1b[31mit";
  assert_int_equal(kf_prof_from_pb(&pb, &back, bad, sizeof bad), 0);
  st[1].reason = "w\xc3";
  assert_int_equal(kf_prof_from_pb(&pb, &back, bad, sizeof bad), KF_EINVAL);
  assert_non_null(strstr(bad, "profile.stalls[1].reason"));
  st[1].reason = "wait";
  pb.status = NULL;
  assert_int_equal(kf_prof_from_pb(&pb, &back, bad, sizeof bad), KF_EINVAL);
  assert_non_null(strstr(bad, "profile.status"));
}

/* ------------------------------------------------------------ classes */

static kf_diag classify(bool gpu, double ns, double gbps, double gflops,
                        double cg, double cf, const kf_prof *p, int want_rc) {
  kf_diag d;
  kf_diag_in in = {.gpu = gpu, .time_ns = ns, .gbps = gbps, .gflops = gflops,
                   .ceil_gbps = cg, .ceil_gflops = cf, .prof = p};
  assert_int_equal(kf_diag_classify(&in, &d), want_rc);
  return d;
}

static void memory_bound_with_its_fraction(void **state) {
  (void)state;
  /* 1650 of 1772 GB/s: 93.1% */
  kf_diag d = classify(true, 2e6, 1650, 12, 1772, 50000, NULL, 0);
  assert_int_equal(d.bound, KF_DIAG_MEMORY);
  assert_true(fabs(d.bw_frac - 1650.0 / 1772) < 1e-12);
  assert_false(d.profiled);
  assert_non_null(strstr(d.detail, "memory-bound at 93.1% of the measured "
                                   "bandwidth"));
  assert_string_equal(kf_diag_bound_name(d.bound), "memory");
  /* exactly the threshold is bound */
  d = classify(false, 5e6, 6, 0, 10, 0, NULL, 0);
  assert_int_equal(d.bound, KF_DIAG_MEMORY);
  /* just below it is not */
  d = classify(false, 5e6, 5.99, 0, 10, 0, NULL, 0);
  assert_int_equal(d.bound, KF_DIAG_LATENCY);
}

static void compute_bound(void **state) {
  (void)state;
  kf_diag d = classify(false, 1e8, 2, 45, 20, 60, NULL, 0);
  assert_int_equal(d.bound, KF_DIAG_COMPUTE);
  assert_true(fabs(d.fl_frac - 0.75) < 1e-12);
  assert_non_null(strstr(d.detail, "compute-bound at 75.0%"));
  /* both near: the larger fraction decides */
  d = classify(false, 1e8, 7, 54, 10, 60, NULL, 0);
  assert_int_equal(d.bound, KF_DIAG_COMPUTE);
  d = classify(false, 1e8, 9.5, 54, 10, 60, NULL, 0);
  assert_int_equal(d.bound, KF_DIAG_MEMORY);
}

static void launch_bound_only_when_short(void **state) {
  (void)state;
  kf_diag d = classify(true, 4000, 100, 0, 3000, 0, NULL, 0);
  assert_int_equal(d.bound, KF_DIAG_LAUNCH);
  assert_non_null(strstr(d.detail, "launch-bound"));
  /* the same time on a CPU is a long call */
  d = classify(false, 4000, 1, 0, 30, 0, NULL, 0);
  assert_int_equal(d.bound, KF_DIAG_LATENCY);
  /* short but at the ceiling: memory, not launch */
  d = classify(true, 4000, 2900, 0, 3000, 0, NULL, 0);
  assert_int_equal(d.bound, KF_DIAG_MEMORY);
}

static void profile_refines_open_cases(void **state) {
  (void)state;
  kf_prof p;
  kf_prof_init(&p, KF_PROF_OK);
  p.dram_pct = 85;
  p.sm_pct = 20;
  p.occupancy_pct = 40;
  /* timing says 30%: the spec undercounts traffic, DRAM says memory */
  kf_diag d = classify(true, 1e6, 900, 0, 3000, 50000, &p, 0);
  assert_int_equal(d.bound, KF_DIAG_MEMORY);
  assert_true(d.profiled);
  assert_non_null(strstr(d.detail, "DRAM throughput 85.0% of peak"));
  p.dram_pct = 20;
  p.sm_pct = 75;
  d = classify(true, 1e6, 900, 0, 3000, 50000, &p, 0);
  assert_int_equal(d.bound, KF_DIAG_COMPUTE);
  assert_true(d.profiled);
  p.sm_pct = 30;
  p.n_stalls = 1;
  snprintf(p.stalls[0].name, sizeof p.stalls[0].name, "long_scoreboard");
  p.stalls[0].cycles = 21.5;
  d = classify(true, 1e6, 900, 0, 3000, 50000, &p, 0);
  assert_int_equal(d.bound, KF_DIAG_LATENCY);
  assert_non_null(strstr(d.detail, "achieved occupancy 40.0%"));
  assert_non_null(strstr(d.detail, "long_scoreboard"));
  /* a profile that did not succeed is not evidence */
  p.status = KF_PROF_RESTRICTED;
  p.dram_pct = 99;
  d = classify(true, 1e6, 900, 0, 3000, 50000, &p, 0);
  assert_int_equal(d.bound, KF_DIAG_LATENCY);
  assert_false(d.profiled);
  /* timing at the ceiling wins over the counters */
  p.status = KF_PROF_OK;
  p.dram_pct = 10;
  p.sm_pct = 95;
  d = classify(true, 1e6, 2950, 0, 3000, 50000, &p, 0);
  assert_int_equal(d.bound, KF_DIAG_MEMORY);
}

static void nothing_to_diagnose(void **state) {
  (void)state;
  kf_diag d = classify(true, 0, 1, 1, 1, 1, NULL, KF_EINVAL);
  assert_int_equal(d.bound, KF_DIAG_NONE);
  d = classify(true, NAN, 1, 1, 1, 1, NULL, KF_EINVAL);
  assert_int_equal(d.bound, KF_DIAG_NONE);
  /* no ceilings at all: latency with zero fractions, never a division */
  d = classify(false, 1e6, 5, 5, 0, 0, NULL, 0);
  assert_int_equal(d.bound, KF_DIAG_LATENCY);
  assert_true(d.bw_frac == 0 && d.fl_frac == 0);
  assert_null(kf_diag_bound_name(KF_DIAG_NONE));
  assert_int_equal(kf_diag_bound_parse("compute"), KF_DIAG_COMPUTE);
  assert_int_equal(kf_diag_bound_parse("fast"), KF_DIAG_NONE);
  assert_int_equal(kf_diag_bound_parse(NULL), KF_DIAG_NONE);
}

static void knobs_by_class(void **state) {
  (void)state;
  assert_true(kf_diag_knob_relevant(KF_DIAG_MEMORY, "VPT"));
  assert_true(kf_diag_knob_relevant(KF_DIAG_MEMORY, "vpl"));
  assert_false(kf_diag_knob_relevant(KF_DIAG_MEMORY, "THREADS"));
  assert_true(kf_diag_knob_relevant(KF_DIAG_LATENCY, "THREADS"));
  assert_true(kf_diag_knob_relevant(KF_DIAG_LATENCY, "BLOCKS_PER_SM"));
  assert_true(kf_diag_knob_relevant(KF_DIAG_COMPUTE, "MATH"));
  assert_false(kf_diag_knob_relevant(KF_DIAG_COMPUTE, "THREADS"));
  assert_true(kf_diag_knob_relevant(KF_DIAG_LAUNCH, "ITERS"));
  assert_false(kf_diag_knob_relevant(KF_DIAG_NONE, "VPT"));
  assert_false(kf_diag_knob_relevant(KF_DIAG_MEMORY, NULL));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ncu_raw_page_parsed),
      cmocka_unit_test(ncu_captured_h100),
      cmocka_unit_test(ncu_unmeasured_cells_are_negative),
      cmocka_unit_test(ncu_counters_restricted),
      cmocka_unit_test(ncu_no_rows),
      cmocka_unit_test(status_names_round_trip),
      cmocka_unit_test(policy_parsed),
      cmocka_unit_test(wire_checked),
      cmocka_unit_test(memory_bound_with_its_fraction),
      cmocka_unit_test(compute_bound),
      cmocka_unit_test(launch_bound_only_when_short),
      cmocka_unit_test(profile_refines_open_cases),
      cmocka_unit_test(nothing_to_diagnose),
      cmocka_unit_test(knobs_by_class),
  };
  return cmocka_run_group_tests_name("diagnose", tests, NULL, NULL);
}
