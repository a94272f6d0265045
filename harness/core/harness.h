/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/harness.h -- kf-harness, the trusted program that compiles,
 * checks and times candidate kernels against their reference.
 *
 *   kf-harness eval [--copy-gbps X] [--gflops Y] [--cpu N] [--workdir DIR]
 *       reads one EvalRequest from stdin (4-byte little-endian length, then
 *       the protobuf bytes), writes one EvalResult to fd 3 (same framing;
 *       stdout when fd 3 is not open), logs to stderr (role 'h').  Exit 0
 *       whenever a result was written: a failing candidate is a result.
 *   kf-harness showdown [same options]
 *       reads one ShowdownRequest (same framing) and writes one
 *       ShowdownResult: several candidates re-verified and re-timed
 *       together with the reference, interleaved, in this one process.
 *   kf-harness identity
 *       prints the harness build hash and the compilers' versions.
 *   kf-harness eval-files --spec DIR --source FILE [--knob K=V]... [--seed N]
 *       builds the EvalRequest from a problem directory and a source file,
 *       runs eval on it as a child and prints the EvalResult as JSON
 *       (harness/core/evalfiles.c); for people and test scripts.
 *   kf-harness ceilings
 *       prints {"copy_gbps": X, "gflops": Y} for this CPU, one core.
 *   kf-harness cuda-info [--device N] [--no-measure]
 *       prints one GPU's identity and measured ceilings as JSON
 *       (harness/cuda/info_cmd.c).
 *   kf-harness runner ...
 *       internal: the sandboxed process that loads a C candidate
 *       (harness/cpu/runner.c); exec'd by eval, never by users.
 *
 * Stages of an eval, in order, each a StageResult; the first that fails
 * ends the evaluation with its outcome: compile, link, load, verify,
 * determinism, time.  harness/core/pipeline.c describes each; the
 * backends (harness/cpu, harness/cuda) sit behind harness/core/backend.h.
 */
#ifndef KF_HARNESS_H
#define KF_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  double copy_gbps;        /* measured copy bandwidth, GB/s; 0: no roofline */
  double read_gbps;        /* measured read-only bandwidth; 0: unknown */
  double write_gbps;       /* measured write-only bandwidth; 0: unknown */
  double gflops;           /* measured FMA rate, GFLOP/s; 0: no roofline */
  int cpu;                 /* core to pin eval and runners to; -1: current */
  const char *workdir;     /* parent of the private temp dir; NULL: $TMPDIR
                              or /tmp */
  int call_timeout_ms;     /* per kf_launch call (default 10000) */
  int compile_timeout_ms;  /* per compiler run (default 30000) */
  int time_budget_ms;      /* soft budget of the timing loop (default 3000) */
  int min_reps;            /* timed repetitions at least; 0: backend's */
  int deadline_ms;         /* the whole evaluation's time (0: none): past
                              it no further call is made, and the side
                              whose own calls took most of it is named
                              (pipeline.c past_deadline) */
  /* CUDA problems only (harness/cuda/backend.c): */
  int device;              /* CUDA device index, as the process sees it */
  const char *cuda_arch;   /* nvcc target, "sm_90a"; NULL: sm_90a */
  const char *gpu_lock;    /* file flock'ed around the GPU stages; NULL:
                              $TMPDIR/kf-gpu-<device>.lock */
  const char *stop_after;  /* "compile", "link", "load", "verify": end
                              there (compile/link need no GPU) */
  bool cuda_no_seccomp;    /* diagnosis: CUDA runner without seccomp */
  bool cuda_own_stream;    /* diagnosis: launch on a created stream, not on
                              the legacy default stream the events use */
  int cuda_warm_us;        /* GPU time spent busy right before each timed
                              call (steady clocks, as in a busy program);
                              default 2000, 0: none */
  bool cuda_no_cupti;      /* diagnosis: no CUPTI activity tracing (GPU work
                              on other streams is then not attributed) */
  bool torch_persistent;   /* torch on CPU: one process per side serving
                              every call, as device cuda always does
                              (harness/torch/backend.c) */
  bool torch_jit;          /* torch on CPU: the JIT sandbox of device cuda
                              (compilers may run; implies persistent) */
} kf_harness_eval_opts;

/* Runs one evaluation: request from in_fd, result to out_fd.  Returns 0
 * when a result was written, KF_EIO / KF_EPROTO when none could be (the
 * caller exits non-zero: an infrastructure failure). */
int kf_harness_eval(const kf_harness_eval_opts *o, int in_fd, int out_fd);

/* Runs one showdown: ShowdownRequest from in_fd, ShowdownResult to
 * out_fd.  Same return values. */
int kf_harness_showdown(const kf_harness_eval_opts *o, int in_fd, int out_fd);

/* `kf-harness eval-files`: argv after the mode.  Returns the exit status. */
int kf_harness_eval_files_main(int argc, char **argv);

#endif
