/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/evalfiles.c -- `kf-harness eval-files`: one evaluation from
 * files on disk, for people and scripts (tests/e2e/test_exploits.py,
 * scripts/run-exploits) rather than for the worker.
 *
 *   kf-harness eval-files --spec DIR --source FILE [--knob NAME=VALUE]...
 *                         [--seed N] [--profile] [eval options...]
 *
 * Builds the EvalRequest the worker would send (DIR/spec.json verbatim, the
 * reference named in it, the candidate source, the knobs, a seed: random
 * unless given, language from the spec's backend), runs `kf-harness eval`
 * on it as a child -- the same program, so every check is the production
 * one -- and prints the EvalResult as one JSON object on stdout.
 *
 * What it does not do: judge anything itself, or hide the seed (a user who
 * passes --seed chose to know it; the candidate still never sees it).
 * Exit status: 0 when a result was printed, whatever the outcome; 1 when
 * none could be had; 2 on bad usage.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "kernelfleet.pb-c.h"
#include "outcome.h"
#include "spec.h"
#include "util.h"

#define MAX_KNOBS 32
#define MAX_PASS 24

static void usage(FILE *f) {
  fprintf(f,
"usage: kf-harness eval-files --spec DIR --source FILE [--knob NAME=VALUE]...\n"
"                             [--seed N] [--profile] [eval options]\n"
"\n"
"Evaluates FILE against the problem in DIR (spec.json and its reference)\n"
"exactly as a worker would, and prints the result as JSON.  --profile asks\n"
"for the profiling pass after timing (CUDA: Nsight Compute; the result's\n"
"\"profile\" says what it found or why there is none; docs/profiling.md).\n"
"Eval options\n"
"(--copy-gbps, --read-gbps, --write-gbps, --gflops, --min-reps, --cpu,\n"
"--workdir, --call-timeout-ms, --compile-timeout-ms, --time-budget-ms,\n"
"--deadline-ms, --stop-after; for CUDA --device, --cuda-arch, --gpu-lock,\n"
"--cuda-warm-us, --cuda-stream, --cuda-no-cupti, --cuda-no-seccomp; for torch\n"
"--torch-persistent, --torch-jit) are passed to\n"
"`kf-harness eval`.\n"
"The seed is random unless --seed is given.\n");
}

static int write_full(int fd, const void *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p = (const char *)p + w;
    n -= (size_t)w;
  }
  return 0;
}

/* Runs `self eval ARGS` with the packed request on stdin; returns the
 * unpacked result or NULL (reason on stderr). */
static Kernelfleet__EvalResult *run_child(char **pass, int n_pass,
                                          const unsigned char *req,
                                          size_t req_len) {
  char self[4096];
  if (kf_self_exe(self, sizeof self) != 0) {
    fprintf(stderr, "kf-harness: cannot find myself: %s\n", strerror(errno));
    return NULL;
  }
  char *argv[MAX_PASS + 4];
  int a = 0;
  argv[a++] = "kf-harness";
  argv[a++] = "eval";
  for (int i = 0; i < n_pass; i++) argv[a++] = pass[i];
  argv[a] = NULL;
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    fprintf(stderr, "kf-harness: pipe: %s\n", strerror(errno));
    return NULL;
  }
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "kf-harness: fork: %s\n", strerror(errno));
    return NULL;
  }
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 3);
    extern char **environ;
    execve(self, argv, environ);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  signal(SIGPIPE, SIG_IGN);
  unsigned char hdr[4] = {(unsigned char)req_len,
                          (unsigned char)(req_len >> 8),
                          (unsigned char)(req_len >> 16),
                          (unsigned char)(req_len >> 24)};
  int wr = write_full(in[1], hdr, 4) || write_full(in[1], req, req_len);
  close(in[1]);
  size_t cap = 1 << 16, len = 0;
  unsigned char *res = malloc(cap);
  for (;;) {
    if (!res) break;
    if (len == cap) {
      unsigned char *nr = realloc(res, cap *= 2);
      if (!nr) {
        free(res);
        res = NULL;
        break;
      }
      res = nr;
    }
    ssize_t r = read(out[0], res + len, cap - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
  }
  close(out[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  Kernelfleet__EvalResult *r = NULL;
  if (res && len >= 4) {
    size_t rl = (size_t)res[0] | (size_t)res[1] << 8 | (size_t)res[2] << 16 |
                (size_t)res[3] << 24;
    if (rl + 4 == len)
      r = kernelfleet__eval_result__unpack(NULL, rl, res + 4);
  }
  free(res);
  if (!r)
    fprintf(stderr, "kf-harness: eval %s (status %d, %zu result bytes)%s\n",
            wr ? "did not take the request" : "wrote no result", st, len,
            WIFEXITED(st) && WEXITSTATUS(st) == 127 ? ": exec failed" : "");
  return r;
}

static void print_json(const Kernelfleet__EvalResult *r, uint64_t seed) {
  cJSON *o = cJSON_CreateObject();
  const char *oc = kf_outcome_name(r->outcome);
  cJSON_AddStringToObject(o, "outcome", oc ? oc : "unspecified");
  const Kernelfleet__StageResult *last =
      r->n_stages ? r->stages[r->n_stages - 1] : NULL;
  cJSON_AddStringToObject(o, "stage", last ? last->stage : "");
  cJSON_AddStringToObject(o, "reason", last ? last->reason : "");
  cJSON_AddNumberToObject(o, "seed", (double)seed);
  cJSON_AddNumberToObject(o, "time_ns_median", r->time_ns_median);
  cJSON_AddNumberToObject(o, "time_ns_spread", r->time_ns_spread);
  cJSON_AddNumberToObject(o, "ref_time_ns_median", r->ref_time_ns_median);
  cJSON_AddNumberToObject(o, "ref_time_ns_spread", r->ref_time_ns_spread);
  cJSON_AddNumberToObject(o, "repetitions", r->repetitions);
  cJSON_AddNumberToObject(o, "max_abs_err", r->max_abs_err);
  cJSON_AddNumberToObject(o, "max_rel_err", r->max_rel_err);
  cJSON_AddNumberToObject(o, "achieved_gbps", r->achieved_gbps);
  cJSON_AddNumberToObject(o, "achieved_gflops", r->achieved_gflops);
  if (r->ceiling_gbps > 0)
    cJSON_AddNumberToObject(o, "ceiling_gbps", r->ceiling_gbps);
  if (r->stream_gbps > 0)
    cJSON_AddNumberToObject(o, "stream_gbps", r->stream_gbps);
  if (r->speedup_eager > 0)
    cJSON_AddNumberToObject(o, "speedup_eager", r->speedup_eager);
  if (r->speedup_compile > 0) {
    cJSON_AddNumberToObject(o, "speedup_compile", r->speedup_compile);
    cJSON_AddNumberToObject(o, "compile_time_ns_median",
                            r->compile_time_ns_median);
  }
  if (r->speedup_max_autotune > 0) {
    cJSON_AddNumberToObject(o, "speedup_max_autotune", r->speedup_max_autotune);
    cJSON_AddNumberToObject(o, "max_autotune_time_ns_median",
                            r->max_autotune_time_ns_median);
  }
  if (r->baselines && *r->baselines)
    cJSON_AddStringToObject(o, "baselines", r->baselines);
  if (r->toolchain && *r->toolchain)
    cJSON_AddStringToObject(o, "toolchain", r->toolchain);
  cJSON *st = cJSON_AddArrayToObject(o, "stages");
  for (size_t i = 0; i < r->n_stages; i++) {
    cJSON *s = cJSON_CreateObject();
    const char *so = kf_outcome_name(r->stages[i]->outcome);
    cJSON_AddStringToObject(s, "stage", r->stages[i]->stage);
    cJSON_AddStringToObject(s, "outcome", so ? so : "unspecified");
    cJSON_AddStringToObject(s, "reason", r->stages[i]->reason);
    cJSON_AddNumberToObject(s, "elapsed_us", (double)r->stages[i]->elapsed_us);
    cJSON_AddItemToArray(st, s);
  }
  const Kernelfleet__ProfileReport *pf = r->profile;
  if (pf) {
    cJSON *j = cJSON_AddObjectToObject(o, "profile");
    cJSON_AddStringToObject(j, "status", pf->status);
    cJSON_AddStringToObject(j, "reason", pf->reason);
    cJSON_AddStringToObject(j, "kernel", pf->kernel);
    cJSON_AddNumberToObject(j, "kernels", pf->kernels);
    cJSON_AddNumberToObject(j, "duration_ns", pf->duration_ns);
    cJSON_AddNumberToObject(j, "dram_pct", pf->dram_pct);
    cJSON_AddNumberToObject(j, "sm_pct", pf->sm_pct);
    cJSON_AddNumberToObject(j, "occupancy_pct", pf->occupancy_pct);
    cJSON_AddNumberToObject(j, "l1_hit_pct", pf->l1_hit_pct);
    cJSON_AddNumberToObject(j, "l2_hit_pct", pf->l2_hit_pct);
    cJSON_AddNumberToObject(j, "registers", pf->registers);
    cJSON_AddNumberToObject(j, "shared_bytes", pf->shared_bytes);
    cJSON_AddNumberToObject(j, "spill_bytes", pf->spill_bytes);
    cJSON *sa = cJSON_AddArrayToObject(j, "stalls");
    for (size_t i = 0; i < pf->n_stalls; i++) {
      cJSON *s = cJSON_CreateObject();
      cJSON_AddStringToObject(s, "reason", pf->stalls[i]->reason);
      cJSON_AddNumberToObject(s, "cycles", pf->stalls[i]->cycles);
      cJSON_AddItemToArray(sa, s);
    }
    cJSON_AddNumberToObject(j, "profile_ms", pf->profile_ms);
  }
  char *txt = cJSON_Print(o);
  if (txt) printf("%s\n", txt);
  free(txt);
  cJSON_Delete(o);
}

int kf_harness_eval_files_main(int argc, char **argv) {
  const char *spec_dir = NULL, *source = NULL;
  char *knob_txt[MAX_KNOBS];
  int n_knobs = 0;
  uint64_t seed = 0;
  bool have_seed = false, profile = false;
  char *pass[MAX_PASS];
  int n_pass = 0;
  static const struct option opts[] = {
      {"spec", required_argument, 0, 's'},
      {"source", required_argument, 0, 'S'},
      {"knob", required_argument, 0, 'k'},
      {"seed", required_argument, 0, 'e'},
      {"copy-gbps", required_argument, 0, 'p'},
      {"read-gbps", required_argument, 0, 'p'},
      {"write-gbps", required_argument, 0, 'p'},
      {"min-reps", required_argument, 0, 'p'},
      {"gflops", required_argument, 0, 'p'},
      {"cpu", required_argument, 0, 'p'},
      {"workdir", required_argument, 0, 'p'},
      {"call-timeout-ms", required_argument, 0, 'p'},
      {"compile-timeout-ms", required_argument, 0, 'p'},
      {"time-budget-ms", required_argument, 0, 'p'},
      {"deadline-ms", required_argument, 0, 'p'},
      {"device", required_argument, 0, 'p'},
      {"cuda-arch", required_argument, 0, 'p'},
      {"gpu-lock", required_argument, 0, 'p'},
      {"stop-after", required_argument, 0, 'p'},
      {"cuda-warm-us", required_argument, 0, 'p'},
      {"cuda-stream", required_argument, 0, 'p'},
      {"cuda-no-cupti", no_argument, 0, 'n'},
      {"cuda-no-seccomp", no_argument, 0, 'n'},
      {"torch-persistent", no_argument, 0, 'n'},
      {"torch-jit", no_argument, 0, 'n'},
      {"profile", no_argument, 0, 'P'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  int c, idx = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
    switch (c) {
    case 's': spec_dir = optarg; break;
    case 'S': source = optarg; break;
    case 'k':
      if (n_knobs == MAX_KNOBS || !strchr(optarg, '=')) {
        fprintf(stderr, "kf-harness: --knob NAME=VALUE (at most %d)\n",
                MAX_KNOBS);
        return 2;
      }
      knob_txt[n_knobs++] = optarg;
      break;
    case 'e':
      if (kf_parse_u64(optarg, &seed)) {
        fprintf(stderr, "kf-harness: bad --seed '%s'\n", optarg);
        return 2;
      }
      have_seed = true;
      break;
    case 'p': {
      if (n_pass + 2 > MAX_PASS) return 2;
      static char flags[MAX_PASS][40];
      static int nf;
      char *flag = flags[nf++];
      snprintf(flag, sizeof flags[0], "--%s", opts[idx].name);
      pass[n_pass++] = flag;
      pass[n_pass++] = optarg;
      break;
    }
    case 'n': {
      if (n_pass + 1 > MAX_PASS) return 2;
      static char nflags[MAX_PASS][40];
      static int nn;
      snprintf(nflags[nn], sizeof nflags[0], "--%s", opts[idx].name);
      pass[n_pass++] = nflags[nn++];
      break;
    }
    case 'P': profile = true; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
    idx = 0;
  }
  if (!spec_dir || !source || optind < argc) {
    usage(stderr);
    return 2;
  }
  char err[1024];
  kf_spec *spec = NULL;
  if (kf_spec_load_dir(spec_dir, &spec, err, sizeof err)) {
    fprintf(stderr, "kf-harness: %s\n", err);
    return 1;
  }
  char *src = NULL;
  size_t src_len = 0;
  if (kf_read_file(source, 1u << 20, &src, &src_len, err, sizeof err)) {
    fprintf(stderr, "kf-harness: %s: %s\n", source, err);
    kf_spec_free(spec);
    return 1;
  }
  if (!have_seed && getrandom(&seed, sizeof seed, 0) != sizeof seed)
    seed = kf_now_ns();
  Kernelfleet__EvalRequest req = KERNELFLEET__EVAL_REQUEST__INIT;
  Kernelfleet__Knob kb[MAX_KNOBS], *kp[MAX_KNOBS];
  for (int i = 0; i < n_knobs; i++) {
    kernelfleet__knob__init(&kb[i]);
    char *eq = strchr(knob_txt[i], '=');
    *eq = '\0';
    kb[i].name = knob_txt[i];
    kb[i].value = eq + 1;
    kp[i] = &kb[i];
  }
  req.problem = spec->name;
  req.problem_spec.data = (uint8_t *)spec->json;
  req.problem_spec.len = spec->json_len;
  req.source = src;
  req.reference_source = spec->reference_source;
  req.knobs = kp;
  req.n_knobs = (size_t)n_knobs;
  req.seed = seed;
  req.candidate_id = 1;
  req.language = !strcmp(spec->backend, "cuda")    ? "cuda"
                 : !strcmp(spec->backend, "torch") ? "python"
                                                   : "c";
  req.profile = profile ? "on" : "off";
  size_t n = kernelfleet__eval_request__get_packed_size(&req);
  unsigned char *buf = malloc(n ? n : 1);
  Kernelfleet__EvalResult *r = NULL;
  if (buf) {
    kernelfleet__eval_request__pack(&req, buf);
    r = run_child(pass, n_pass, buf, n);
  }
  free(buf);
  free(src);
  kf_spec_free(spec);
  if (!r) return 1;
  print_json(r, seed);
  kernelfleet__eval_result__free_unpacked(r, NULL);
  return fflush(stdout) == 0 ? 0 : 1;
}
