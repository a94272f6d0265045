/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/main.c -- kf-harness: dispatches to eval and showdown
 * (core/pipeline.c), ceilings (cpu/ceilings.c), cuda-info, identity,
 * eval-files or the internal runner mode (cpu/runner.c).  See
 * core/harness.h for the modes.
 */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu.h"
#include "harness.h"
#include "internal.h"
#include "log.h"
#include "util.h"

static void usage(FILE *f) {
  fprintf(f,
"usage: kf-harness eval [OPTIONS] < request 3> result\n"
"       kf-harness showdown [OPTIONS] < request 3> result\n"
"       kf-harness eval-files --spec DIR --source FILE [--knob K=V]... [--seed N]\n"
"       kf-harness ceilings\n"
"       kf-harness cuda-info [--device N] [--no-measure]\n"
"       kf-harness identity    (the harness build hash and compilers, JSON)\n"
"\n"
"eval reads one length-prefixed EvalRequest on stdin and writes one\n"
"length-prefixed EvalResult to fd 3 (stdout if fd 3 is closed); showdown\n"
"does the same with a ShowdownRequest and a ShowdownResult.\n"
"\n"
"  --copy-gbps X          measured copy bandwidth (roofline check)\n"
"  --read-gbps X          measured read-only bandwidth (roofline check)\n"
"  --write-gbps X         measured write-only bandwidth (roofline check)\n"
"  --gflops Y             measured FMA rate (roofline check)\n"
"  --cpu N                core to pin to             [the current one]\n"
"  --workdir DIR          parent of the temp dir     [$TMPDIR, /tmp]\n"
"  --call-timeout-ms N    per kf_launch call         [10000]\n"
"                         (the reference's calls get 3 x N)\n"
"  --compile-timeout-ms N per compile                [30000]\n"
"  --time-budget-ms N     timing loop budget         [3000]: the loop ends\n"
"                         when every side's times are stable and --min-reps\n"
"                         ran, at the budget once --min-reps ran, or after\n"
"                         3 repetitions past 20 x the budget (slow calls)\n"
"  --deadline-ms N        the whole evaluation's time [none]: past it no\n"
"                         further call is made; the reference's own calls\n"
"                         having taken most of it is the spec's error\n"
"                         (spec_error), else the candidate's (timeout)\n"
"  --min-reps N           timed repetitions at least [backend's: 10; 30 in\n"
"                         a showdown]\n"
"  --stop-after STAGE     compile|link|load|verify: end there\n"
"CUDA problems (language \"cuda\" or spec backend \"cuda\"):\n"
"  --device N             CUDA device index          [0]\n"
"  --cuda-arch sm_XY[a]   nvcc target                [sm_90a]\n"
"  --gpu-lock FILE        flock'ed around the GPU stages, so that compiles of\n"
"                         other evals overlap them   [$TMPDIR/kf-gpu-N.lock]\n"

"  --cuda-warm-us N       GPU kept busy (memsets) this long before each\n"
"                         timed call, so clocks are up as in a busy\n"
"                         program, not ramping up from idle   [2000]\n"
"  --cuda-no-seccomp      diagnosis: CUDA runner without its seccomp filters\n"
"  --cuda-no-cupti        diagnosis: no CUPTI activity tracing (work on\n"
"                         other streams is then not attributed)\n"
"  --cuda-stream legacy|own  the stream kf_launch gets: the legacy default\n"
"                         stream, which the timing events use, or one the\n"
"                         runner creates (diagnosis)        [legacy]\n"
"Torch problems (spec backend \"torch\", docs/torch.md):\n"
"  --torch-persistent     on CPU too, one runner process per side serving\n"
"                         every call (device cuda always runs so), instead\n"
"                         of a fresh process per call\n"
"  --torch-jit            on CPU too, the JIT sandbox device cuda gets\n"
"                         (compilers may run: load_inline, torch.compile;\n"
"                         implies --torch-persistent); each side's load is\n"
"                         kept in the harness cache's jit/ for its next\n"
"                         process (docs/torch.md, \"The JIT cache\")\n"
"\n"
"ceilings prints {\"copy_gbps\": X, \"read_gbps\": R, \"write_gbps\": W,\n"
"\"gflops\": Y} for one core.\n");
}

static int parse_double(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (!*s || *end || v < 0 || v != v) return -1;
  *out = v;
  return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out) {
  uint64_t v;
  if (kf_parse_u64(s, &v) || (int64_t)v < lo || v > (uint64_t)hi) return -1;
  *out = (int)v;
  return 0;
}

static int eval_main(int argc, char **argv, bool showdown) {
  kf_harness_eval_opts o = {
      .cpu = -1,
      .call_timeout_ms = 10000,
      .compile_timeout_ms = 30000,
      .time_budget_ms = 3000,
      .cuda_warm_us = 2000,
  };
  static const struct option opts[] = {
      {"copy-gbps", required_argument, 0, 'b'},
      {"read-gbps", required_argument, 0, 'r'},
      {"write-gbps", required_argument, 0, 'x'},
      {"min-reps", required_argument, 0, 'm'},
      {"cuda-no-cupti", no_argument, 0, 'U'},
      {"torch-persistent", no_argument, 0, 'P'},
      {"torch-jit", no_argument, 0, 'J'},
      {"gflops", required_argument, 0, 'f'},
      {"cpu", required_argument, 0, 'c'},
      {"workdir", required_argument, 0, 'w'},
      {"call-timeout-ms", required_argument, 0, 't'},
      {"compile-timeout-ms", required_argument, 0, 'C'},
      {"time-budget-ms", required_argument, 0, 'B'},
      {"deadline-ms", required_argument, 0, 'D'},
      {"device", required_argument, 0, 'd'},
      {"cuda-arch", required_argument, 0, 'a'},
      {"gpu-lock", required_argument, 0, 'L'},
      {"stop-after", required_argument, 0, 'S'},
      {"cuda-no-seccomp", no_argument, 0, 'N'},
      {"cuda-warm-us", required_argument, 0, 'W'},
      {"cuda-stream", required_argument, 0, 'T'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    int bad = 0;
    switch (c) {
    case 'b': bad = parse_double(optarg, &o.copy_gbps); break;
    case 'r': bad = parse_double(optarg, &o.read_gbps); break;
    case 'x': bad = parse_double(optarg, &o.write_gbps); break;
    case 'm': bad = parse_int(optarg, 1, 500, &o.min_reps); break;
    case 'U': o.cuda_no_cupti = true; break;
    case 'P': o.torch_persistent = true; break;
    case 'J': o.torch_jit = true; break;
    case 'f': bad = parse_double(optarg, &o.gflops); break;
    case 'c': bad = parse_int(optarg, 0, 4095, &o.cpu); break;
    case 'w': o.workdir = optarg; break;
    case 't': bad = parse_int(optarg, 1, 600000, &o.call_timeout_ms); break;
    case 'C': bad = parse_int(optarg, 1, 600000, &o.compile_timeout_ms); break;
    case 'B': bad = parse_int(optarg, 1, 600000, &o.time_budget_ms); break;
    case 'D': bad = parse_int(optarg, 1, 86400000, &o.deadline_ms); break;
    case 'd': bad = parse_int(optarg, 0, 255, &o.device); break;
    case 'a': o.cuda_arch = optarg; break;
    case 'L': o.gpu_lock = optarg; break;
    case 'S':
      o.stop_after = optarg;
      bad = strcmp(optarg, "compile") && strcmp(optarg, "link") &&
            strcmp(optarg, "load") && strcmp(optarg, "verify");
      break;
    case 'N': o.cuda_no_seccomp = true; break;
    case 'T':
      bad = strcmp(optarg, "legacy") && strcmp(optarg, "own");
      o.cuda_own_stream = !strcmp(optarg, "own");
      break;
    case 'W': bad = parse_int(optarg, 0, 1000000, &o.cuda_warm_us); break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
    if (bad) {
      fprintf(stderr, "kf-harness: bad option value '%s'\n", optarg);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "kf-harness: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  int lv = kf_log_parse_level(kf_getenv_or("KF_LOG_LEVEL", "info"));
  kf_log_init('h', lv < 0 ? KF_LOG_INFO : (kf_log_level)lv);
  signal(SIGPIPE, SIG_IGN);
  int out = fcntl(3, F_GETFD) >= 0 ? 3 : 1;
  if (showdown) return kf_harness_showdown(&o, 0, out) == 0 ? 0 : 1;
  return kf_harness_eval(&o, 0, out) == 0 ? 0 : 1;
}

static int ceilings_main(void) {
  double gbps = kf_harness__measure_copy_gbps();
  double rd = kf_harness__measure_read_gbps();
  double wr = kf_harness__measure_write_gbps();
  double gflops = kf_harness__measure_gflops();
  printf("{\"copy_gbps\": %.3f, \"read_gbps\": %.3f, \"write_gbps\": %.3f, "
         "\"gflops\": %.3f}\n", gbps, rd, wr, gflops);
  return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "eval"))
    return eval_main(argc - 1, argv + 1, false);
  if (argc >= 2 && !strcmp(argv[1], "showdown"))
    return eval_main(argc - 1, argv + 1, true);
  if (argc >= 2 && !strcmp(argv[1], "ceilings")) return ceilings_main();
  if (argc >= 2 && !strcmp(argv[1], "cuda-info"))
    return kf_harness__cuda_info_cmd(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "identity"))
    return kf_harness__identity_cmd(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "eval-files"))
    return kf_harness_eval_files_main(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "runner"))
    return kf_harness_runner_main(argc - 2, argv + 2);
  usage(argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
            ? stdout
            : stderr);
  return 2;
}
