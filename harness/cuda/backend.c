/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/backend.c -- the CUDA backend: CUDA candidates built with
 * nvcc and run on one GPU, behind the pipeline's seam (core/backend.h).
 * Runs in the eval process, which never loads candidate code and never
 * creates a CUDA context: the GPU is driven through one runner process per
 * side (kf-harness-cuda runner, cuda/runner.c), each exec'd fresh with its
 * own context.
 *
 *   compile  nvcc, every side and an empty baseline in parallel
 *            (compile.c); the candidate's registers, shared memory and
 *            spills per kernel become the side's resources
 *   link     imports on the CUDA allow-list, no extra constructors, no
 *            writable device data, no writable host static state beyond
 *            that of the baseline (elfcheck.c)
 *   start    all runners spawned at once (contexts are created in
 *            parallel), then each waited for; the defenses they applied;
 *            for a deterministic spec each candidate gets a second
 *            runner, which takes over for the determinism check's second
 *            run (fresh_runner)
 *   --- the GPU lock is taken at the end of start and held to the end ---
 *   prepare  the canary written on the device by the runner's own kernel
 *   arm      before a timed call's draw (one side at a time:
 *            draw_per_side): PREP -- the idle gate, the warm-up, the
 *            clearing, the trace turned on (cuda_arm)
 *   gen      the key of each input sent to the runner(s), which draw the
 *            inputs on the device (core/gen.h): nothing crosses the bus,
 *            and the key arrives only with the draw
 *   call     outputs poisoned, workspace filled and (untimed) the flush
 *            buffer scrubbed on the device; then kf_launch timed with
 *            events, host time and the busy span; a timed call replies
 *            at once with digests of its outputs, and CHECK brings
 *            CUPTI's attribution of every GPU activity of the call
 *            (runner.c)
 *   fetch    regions downloaded into the side's host image (the memfd,
 *            pinned); a timed call's outputs must match its digests
 *   probe    guards and input digests computed on the device
 *
 * The time a runner reports is a claim (once kf_launch has run, the
 * candidate may own its process).  This file holds it to what it sees
 * from outside: a claim longer than the wall time around the call is
 * forged (SANDBOX_VIOLATION); the wall time of the side's draw and call
 * goes to its clock (kf_side.wall_ns), which the time stage holds a
 * shorter claim to (core/stats.c kf_harness__wall_bound); outputs that
 * changed after the call's reply are SANDBOX_VIOLATION; below the
 * clock's slack the roofline floor bounds a claim (docs/integrity.md
 * says what this leaves).
 *
 * The GPU lock (flock on --gpu-lock, default $TMPDIR/kf-gpu-<device>.lock)
 * serializes the GPU stages of every evaluation on one GPU, while compiles
 * (CPU only) of other evaluations run beside them.
 *
 * Errors are outcomes: a CUDA error in the candidate's run (illegal
 * address, launch failure) is CRASH with the error's name; a call that
 * does not return is TIMEOUT (the runner is killed, and its context with
 * it); GPU work outside the given stream is SANDBOX_VIOLATION.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "cuda_eval.h"
#include "err.h"
#include "internal.h"
#include "log.h"
#include "outcome.h"
#include "proto.h"
#include "spec.h"
#include "util.h"

#define MAX_SO (256u << 20)
/* See profile_relax(). */
#define KF_CUDA_PROFILE_RELAX_DEFAULT "fds,netns,seccomp"
/* Nsight Compute's injected library takes a lock under /tmp/nvidia; in
 * the chroot that is the jail's own, made for the profiled run only. */
#define KF_NCU_LOCK_DIR "/tmp/nvidia/nsight_compute"
/* The profiled runner's start under ncu, bounded well inside a task: a
 * profiler that cannot attach must cost a candidate seconds, not the
 * timed runners' minute. */
#define KF_CUDA_PROFILE_READY_MS 20000
#define MAX_KERNELS 64

typedef struct {
  int lock_fd;     /* the GPU lock, held from start's end (-1: not yet) */
  int quiet_fd;    /* the quiet lock (see quiet_lock) */
  bool quiet_ex;   /* held exclusively (the time stage) */
  const char *arch;
  char exe[PATH_MAX + 32];
  kf_harness_cuda_elf baseline;
  bool have_baseline;
  uint64_t op_n[12], op_ns[12]; /* commands by op: count, wall ns */
  struct crunner *runners[18]; /* every runner started, for cuda_idle */
  int n_runners;
  kf_side *last;               /* the side of the last timed call */
  struct crunner *held[36];    /* runners stopped for the reference's
                                  timed call, from its PREP to its RUN */
  int n_held;
  int n_cands;                 /* candidate sides started */
} cuda_ev;

typedef struct crunner crunner;
struct crunner {
  const char *who;
  kf_side *side;      /* whose commands' wall time it adds (wall_on) */
  bool prepped;       /* PREP ran for the next timed RUN */
  double ph_us[3];    /* timed RUNs: the runner's phases (its msg) */
  uint64_t wop[2][64]; /* the clock's GEN and RUN walls (diagnosis) */
  int n_wop[2];
  int ph_n;
  /* A PREPPED RUN's reply fixes its outputs: the eval's clock of the
   * side stops there (committed), and what is downloaded next must
   * digest to commit[] (cuda_collect) */
  bool committed, commit_on;
  uint64_t commit[KF_HARNESS_MAX_T];
  pid_t pid;
  int cmd_fd, reply_fd, memfd;
  unsigned char *map;
  size_t map_len;
  uint32_t seq, defenses;
  uint64_t l2_bytes, flush_bytes;
  bool dead;
  int status;
  bool loaded;        /* it said LOADING: its replies may be its code's */
  char note[200];     /* READY's message (why CUPTI is off) */
  kf_harness_cuda_elf ci; /* the link stage's facts (mutable ranges) */
  kf_harness_kres kres[MAX_KERNELS];
  int n_kres;
  Kernelfleet__KernelResources kr[MAX_KERNELS];
  Kernelfleet__KernelResources *kr_ptrs[MAX_KERNELS];
  cuda_ev *ev;           /* for the op statistics */
  /* A candidate's second runner, started with the first (contexts are
   * created in parallel) and swapped in for the determinism check's
   * second run (kf_call.fresh): one process cannot clear what its first
   * run left in registers (docs/integrity.md); a process that never ran
   * the candidate has nothing of it.  What it needs then: the last canary
   * and draw, replayed. */
  crunner *twin;
  /* convicted by the reference's idle gate: work it left running after a
   * call held the GPU when the reference's timed call came; the verdict
   * is given at its next call or fetch */
  bool left_work;
  unsigned held_after;   /* timed calls of the reference it held (IDLE_STRIKES) */
  char left_why[400];
  const kf_harness_layout *last_L;
  kf_gen last_gen;
  bool have_gen;
};

#define CE(e) ((cuda_ev *)(e)->bes)
#define CR(s) ((crunner *)(s)->be)

/* ----------------------------------------------------------- runners */

static void close_fds(crunner *r) {
  if (r->cmd_fd >= 0) close(r->cmd_fd);
  if (r->reply_fd >= 0) close(r->reply_fd);
  r->cmd_fd = r->reply_fd = -1;
}

static void kill_runner(crunner *r) {
  if (r->pid > 0 && !r->dead) {
    kill(r->pid, SIGKILL);
    r->status = kf_harness__reap(r->pid, 5000, false);
    r->dead = true;
  }
  close_fds(r);
}

/* 1 read, 0 EOF, -1 timeout, -2 error */
static int read_reply(crunner *r, kf_cuda_reply *rep, int timeout_ms) {
  size_t got = 0;
  uint64_t deadline = kf_now_ms() + (uint64_t)timeout_ms;
  while (got < sizeof *rep) {
    uint64_t now = kf_now_ms();
    if (now >= deadline) return -1;
    struct pollfd pf = {.fd = r->reply_fd, .events = POLLIN};
    /* while the side's clock runs, spun, not slept: a core woken from a
     * deep idle state puts tens of microseconds of noise into the clock
     * (kf_harness__wall_bound's slack is that noise) */
    bool spin = r->side && r->side->wall_on && !r->committed;
    int pr = poll(&pf, 1, spin ? 0 : (int)(deadline - now));
    if (pr == 0 && spin) continue;
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) return -2;
    if (pr == 0) return -1;
    ssize_t n = read(r->reply_fd, (char *)rep + got, sizeof *rep - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -2;
    if (n == 0) return got ? -2 : 0;
    got += (size_t)n;
  }
  rep->msg[sizeof rep->msg - 1] = '\0';
  return rep->magic == KF_CUDA_MAGIC ? 1 : -2;
}

/* The runner is gone: reap it and say why. */
static int classify_exit(crunner *r, char *why, size_t whylen) {
  if (!r->dead) {
    r->status = kf_harness__reap(r->pid, 5000, false);
    r->dead = true;
  }
  close_fds(r);
  int st = r->status;
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    switch (sig) {
    case SIGXCPU:
      snprintf(why, whylen, "%s used up its CPU time limit (SIGXCPU)", r->who);
      return KF_OUTCOME_TIMEOUT;
    case SIGXFSZ:
      snprintf(why, whylen, "%s tried to write a file (SIGXFSZ)", r->who);
      return KF_OUTCOME_RESOURCE_LIMIT;
    case SIGSYS:
      snprintf(why, whylen, "%s made a system call from a foreign ABI",
               r->who);
      return KF_OUTCOME_SANDBOX_VIOLATION;
    case SIGKILL:
      snprintf(why, whylen, "%s was killed by SIGKILL (memory exhausted?)",
               r->who);
      return KF_OUTCOME_RESOURCE_LIMIT;
    default:
      snprintf(why, whylen, "%s crashed: killed by %s", r->who,
               kf_harness__signame(sig));
      return KF_OUTCOME_CRASH;
    }
  }
  snprintf(why, whylen, "%s exited with status %d", r->who, WEXITSTATUS(st));
  return KF_OUTCOME_CRASH;
}

static int unexpected(crunner *r, const kf_cuda_reply *x, char *why,
                      size_t whylen) {
  int oc;
  switch (x->kind) {
  case KF_HARNESS_R_VIOLATION:
    snprintf(why, whylen, "%s: blocked system call %d (%s)", r->who, x->sysno,
             kf_harness__sysname(x->sysno));
    oc = KF_OUTCOME_SANDBOX_VIOLATION;
    break;
  case KF_HARNESS_R_SETUP:
    /* after LOADING a setup failure is the candidate's code's claim
     * (harness/cpu/runner_client.c says why) */
    snprintf(why, whylen, "%s runner setup failed%s: %s%s%s", r->who,
             r->loaded ? " after its code was loaded (the code's own "
                         "claim)" : "",
             x->msg, x->err ? ": " : "", x->err ? strerror(x->err) : "");
    oc = r->loaded ? KF_OUTCOME_CRASH : KF_OUTCOME_INFRA_ERROR;
    break;
  case KF_HARNESS_R_LOADFAIL:
    snprintf(why, whylen, "%s cannot be loaded: %s", r->who, x->msg);
    oc = KF_OUTCOME_LINK_REJECTED;
    break;
  case KF_CUDA_R_STATE:
    snprintf(why, whylen, "%s kept state across calls: %s", r->who, x->msg);
    oc = KF_OUTCOME_SANDBOX_VIOLATION;
    break;
  case KF_CUDA_R_TIMING:
    snprintf(why, whylen, "%s: %s", r->who, x->msg);
    oc = KF_OUTCOME_SANDBOX_VIOLATION;
    break;
  case KF_CUDA_R_CUDAERR:
    snprintf(why, whylen, "%s: CUDA error %s", r->who, x->msg);
    /* 2 = cudaErrorMemoryAllocation */
    oc = x->cuda_err == 2 ? KF_OUTCOME_RESOURCE_LIMIT : KF_OUTCOME_CRASH;
    break;
  default:
    snprintf(why, whylen, "%s sent a reply out of sequence (kind %d, seq %u, "
             "expected %u): forged or early reply", r->who, x->kind, x->seq,
             r->seq);
    oc = KF_OUTCOME_SANDBOX_VIOLATION;
    break;
  }
  kill_runner(r);
  return oc;
}

static void child_env(char **envp, char store[][512], int max) {
  static const char *const pass[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
                                     "LD_LIBRARY_PATH"};
  int n = 0;
  for (size_t i = 0; i < sizeof pass / sizeof pass[0] && n < max - 1; i++) {
    const char *v = getenv(pass[i]);
    if (!v) continue;
    snprintf(store[n], 512, "%s=%s", pass[i], v);
    envp[n] = store[n];
    n++;
  }
  envp[n] = NULL;
}


/* Sandbox steps the profiled runner leaves out: $KF_CUDA_PROFILE_RELAX
 * (names as the runner's --relax: fds, netns, ipcns, chroot, uid; "none"),
 * else the default below.  Nsight Compute's injected library keeps a
 * connection to its front end (ncu) open from before the runner's main;
 * the timed runners never get any of this. */
static const char *profile_relax(void) {
  const char *v = getenv("KF_CUDA_PROFILE_RELAX");
  if (v && *v && strlen(v) < 64 && strspn(v, "abcdefghijklmnopqrstuvwxyz,") == strlen(v))
    return v;
  return KF_CUDA_PROFILE_RELAX_DEFAULT;
}

/* Creates the memfd and spawns the runner; READY is waited for later
 * (runner_ready), so that all sides create their contexts at once.
 * wrap (NULL: none): a profiler's argv, NULL-terminated, that runs the
 * runner (its path first): the profiling pass; CUPTI is then left to the
 * profiler. */
static int runner_spawn_as(kf_ev *e, kf_side *s, crunner *r, size_t map_len,
                           const char *const *wrap, char *why,
                           size_t whylen) {
  cuda_ev *c = CE(e);
  r->who = s->who;
  r->side = s;
  r->cmd_fd = r->reply_fd = r->memfd = -1;
  r->map = MAP_FAILED;
  /* the candidate's static memory may change only where the toolchain's
   * own symbols lie; the reference is trusted */
  char mut[KF_HARNESS_CUDA_MAX_MUT * 36 + 8] = "";
  const char *state_opt = "--mutable";
  /* the profiled run is observation only, after the verdict: its
   * profiler allocates device memory in the process, which the state
   * check would take for the candidate's */
  if (s->is_ref || wrap) {
    state_opt = "--state-check";
    strcpy(mut, "off");
  } else {
    size_t ml = 0;
    int i = 0;
    for (; i < r->ci.n_mut && ml + 36 < sizeof mut; i++)
      ml += (size_t)snprintf(mut + ml, sizeof mut - ml, "%s%" PRIx64 ":%" PRIx64,
                             i ? "," : "", r->ci.mut_off[i], r->ci.mut_len[i]);
    if (i < r->ci.n_mut) {
      snprintf(why, whylen, "the candidate's %d mutable ranges do not fit "
               "the runner's command line", r->ci.n_mut);
      return KF_OUTCOME_INFRA_ERROR;
    }
    if (!ml) strcpy(mut, "none");
  }
  r->memfd = memfd_create(s->base, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (r->memfd < 0) {
    snprintf(why, whylen, "memfd_create: %s", strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  if (ftruncate(r->memfd, (off_t)map_len) != 0 ||
      fcntl(r->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    snprintf(why, whylen, "memfd of %zu bytes: %s", map_len, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  r->map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
  if (r->map == MAP_FAILED) {
    snprintf(why, whylen, "mmap memfd of %zu bytes: %s", map_len,
             strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  r->map_len = map_len;
  int cp[2], rp[2];
  if (pipe2(cp, O_CLOEXEC) != 0) {
    snprintf(why, whylen, "pipe: %s", strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  if (pipe2(rp, O_CLOEXEC) != 0) {
    close(cp[0]);
    close(cp[1]);
    snprintf(why, whylen, "pipe: %s", strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  char dev[16], cpu[32], warm[16], lmem[16];
  snprintf(dev, sizeof dev, "%d", e->o->device);
  /* the local-memory scrub covers the candidate's largest stack frame
   * (ptxas -v, compile stage); the reference's are trusted */
  uint32_t frame = 0;
  for (int i = 0; i < r->n_kres; i++)
    if (r->kres[i].stack_bytes > frame) frame = r->kres[i].stack_bytes;
  snprintf(lmem, sizeof lmem, "%u", frame);
  snprintf(warm, sizeof warm, "%d", e->o->cuda_warm_us);
  snprintf(cpu, sizeof cpu, "%d", e->o->call_timeout_ms / 1000 * 4 + 60);
  char *argv[48] = {"kf-harness-cuda", "runner", "--jail", s->jail,
                  "--so", "kernel.so", "--device", dev, "--cpu-s", cpu,
                  "--seccomp", e->o->cuda_no_seccomp ? "off" : "on",
                  "--cupti", e->o->cuda_no_cupti || wrap ? "off" : "on",
                  (char *)state_opt, mut, "--warm-us", warm, "--stream",
                  e->o->cuda_own_stream ? "own" : "legacy", "--lmem-bytes",
                  lmem, NULL};
  char *const *av = argv;
  char *wargv[48 + 32];
  /* Every runner waits, before each timed call, until no other process's
   * work holds the GPU (runner.c idle_wait), so that work a candidate
   * left running slows no one's timed call; only the reference's report
   * convicts (idle_convicts). */
  if (!wrap) {
    int n = 0;
    while (argv[n]) n++;
    argv[n++] = "--idle-gate";
    argv[n++] = "on";
    argv[n] = NULL;
  }
  /* The profiled runner only: the sandbox steps its profiler cannot live
   * with (profile_relax(); docs/profiling.md). */
  if (wrap) {
    int n = 0;
    while (argv[n]) n++;
    argv[n++] = "--relax";
    argv[n++] = (char *)profile_relax();
    argv[n] = NULL;
  }
  if (wrap) {
    int n = 0;
    for (; wrap[n] && n < 31; n++) wargv[n] = (char *)wrap[n];
    wargv[n++] = c->exe; /* the runner itself, by path */
    for (int i = 1; argv[i]; i++) wargv[n++] = argv[i];
    wargv[n] = NULL;
    av = wargv;
  }
  char store[4][512], home[1100];
  char *envp[6];
  child_env(envp, store, 4);
  if (wrap) {
    /* ncu reads and writes its settings under $HOME (seen: it refuses to
     * start when it cannot): the evaluation's own directory */
    int n = 0;
    while (envp[n]) n++;
    snprintf(home, sizeof home, "HOME=%s", e->wd.work);
    envp[n++] = home;
    envp[n] = NULL;
  }
  kf_harness_spawn_opts spo = {
      .path = wrap ? wrap[0] : c->exe,
      .argv = av,
      .envp = envp,
      .fd = {cp[0], rp[1], -1, r->memfd},
  };
  char err[512];
  int rc = kf_harness__spawn(&spo, &r->pid, err, sizeof err);
  close(cp[0]);
  close(rp[1]);
  r->cmd_fd = cp[1];
  r->reply_fd = rp[0];
  if (rc) {
    close_fds(r);
    r->pid = 0;
    snprintf(why, whylen, "cannot start the %s runner: %s", s->who, err);
    return KF_OUTCOME_INFRA_ERROR;
  }
  return 0;
}

static int runner_spawn(kf_ev *e, kf_side *s, crunner *r, size_t map_len,
                        char *why, size_t whylen) {
  return runner_spawn_as(e, s, r, map_len, NULL, why, whylen);
}

static int runner_ready_ms(crunner *r, int timeout, char *why, size_t whylen) {
  kf_cuda_reply rep;
  r->loaded = false;
  int k = read_reply(r, &rep, timeout);
  if (k == 1 && rep.kind == KF_HARNESS_R_LOADING) {
    r->loaded = true;
    k = read_reply(r, &rep, timeout);
  }
  if (k == 1 && rep.kind == KF_HARNESS_R_READY) {
    r->defenses = rep.defenses;
    r->l2_bytes = rep.l2_bytes;
    r->flush_bytes = rep.flush_bytes;
    kf_strlcpy(r->note, rep.msg, sizeof r->note);
    return 0;
  }
  if (k == 1) return unexpected(r, &rep, why, whylen);
  if (k == -1) {
    kill_runner(r);
    snprintf(why, whylen, "%s runner not ready after %d ms", r->who, timeout);
    return KF_OUTCOME_TIMEOUT;
  }
  int oc = classify_exit(r, why, whylen);
  size_t l = strlen(why);
  snprintf(why + l, whylen - l, " (while loading)");
  return oc;
}

static int runner_ready(kf_ev *e, crunner *r, char *why, size_t whylen) {
  int timeout = e->o->call_timeout_ms > 60000 ? e->o->call_timeout_ms : 60000;
  return runner_ready_ms(r, timeout, why, whylen);
}

/* Sends a command (one write).  0, or an outcome with why (the runner
 * is then dead). */
static int runner_send(crunner *r, kf_cuda_cmd *c, uint64_t *t0, char *why,
                       size_t whylen) {
  if (r->dead || r->cmd_fd < 0) {
    snprintf(why, whylen, "%s runner is not running", r->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  c->magic = KF_CUDA_MAGIC;
  c->seq = ++r->seq;
  *t0 = kf_now_ns();
  ssize_t w;
  do {
    w = write(r->cmd_fd, c, sizeof *c);
  } while (w < 0 && errno == EINTR);
  if (w != (ssize_t)sizeof *c) return classify_exit(r, why, whylen);
  return 0;
}

/* Waits for the reply to the command sent at t0.  *rep_out: the reply
 * (DONE).  *wall_ns: this process's clock around it.  0, or an outcome
 * with why; once not 0 the runner is dead. */
static int runner_recv(crunner *r, const kf_cuda_cmd *c, uint64_t t0,
                       int timeout_ms, kf_cuda_reply *rep_out,
                       uint64_t *wall_ns, char *why, size_t whylen) {
  kf_cuda_reply rep;
  int k = read_reply(r, &rep, timeout_ms);
  uint64_t t1 = kf_now_ns();
  if (wall_ns) *wall_ns = t1 - t0;
  if (r->side && r->side->wall_on && !r->committed) {
    r->side->wall_ns += t1 - t0;
    int w = c->op == KF_CUDA_OP_GEN ? 0 : c->op == KF_CUDA_OP_RUN ? 1 : -1;
    if (w >= 0 && r->n_wop[w] < 64) r->wop[w][r->n_wop[w]++] = t1 - t0;
  }
  if (r->ev && c->op < 12) {
    r->ev->op_n[c->op]++;
    r->ev->op_ns[c->op] += t1 - t0;
  }
  if (k == -1) {
    kill_runner(r);
    snprintf(why, whylen, "%s: %s still running after %d ms; killed (its "
             "CUDA context with it)", r->who,
             c->op == KF_CUDA_OP_RUN ? "kf_launch" : "a harness step",
             timeout_ms);
    return KF_OUTCOME_TIMEOUT;
  }
  if (k != 1) return classify_exit(r, why, whylen);
  if (rep.kind != KF_HARNESS_R_DONE || rep.seq != r->seq)
    return unexpected(r, &rep, why, whylen);
  if ((c->op == KF_CUDA_OP_RUN || c->op == KF_CUDA_OP_CASE) && rep.rc != 0) {
    snprintf(why, whylen, "%s: kf_launch returned %d", r->who, rep.rc);
    kill_runner(r);
    return KF_OUTCOME_CRASH;
  }
  if (c->op == KF_CUDA_OP_RUN && rep.elapsed_ns > t1 - t0 + 1000000) {
    snprintf(why, whylen, "%s reported %.0f ns for a call that took %.0f ns: "
             "forged reply", r->who, (double)rep.elapsed_ns,
             (double)(t1 - t0));
    kill_runner(r);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  if (rep_out) *rep_out = rep;
  return 0;
}

/* One command, start to reply. */
static int runner_cmd(crunner *r, kf_cuda_cmd *c, int timeout_ms,
                      kf_cuda_reply *rep_out, uint64_t *wall_ns, char *why,
                      size_t whylen) {
  uint64_t t0;
  int oc = runner_send(r, c, &t0, why, whylen);
  if (oc) return oc;
  return runner_recv(r, c, t0, timeout_ms, rep_out, wall_ns, why, whylen);
}

/* Asks the runner to end (EXIT, and EOF on its command pipe); the reap
 * comes later (runner_stop), so several runners tear down at once. */
static void runner_exit(crunner *r) {
  if (!r || !r->who || r->pid <= 0 || r->dead) return;
  if (r->cmd_fd >= 0) {
    kf_cuda_cmd c;
    memset(&c, 0, sizeof c);
    c.magic = KF_CUDA_MAGIC;
    c.op = KF_CUDA_OP_EXIT;
    ssize_t w = write(r->cmd_fd, &c, sizeof c);
    (void)w;
  }
  close_fds(r);
}

static void runner_stop(crunner *r) {
  if (!r || !r->who) return;
  if (r->pid > 0 && !r->dead) {
    runner_exit(r);
    r->status = kf_harness__reap(r->pid, 3000, false);
    r->dead = true;
  }
  close_fds(r);
  if (r->map && r->map != MAP_FAILED) munmap(r->map, r->map_len);
  r->map = MAP_FAILED;
  if (r->memfd >= 0) close(r->memfd);
  r->memfd = -1;
}

/* A harness step (not kf_launch): a bounded time, ~16 MB/ms at worst. */
static int step_timeout(const crunner *r) {
  return 60000 + (int)(r->map_len >> 24);
}

/* Regions in batches of KF_CUDA_MAX_REGIONS. */
static int regions_cmd(kf_ev *e, kf_side *s, int op, uint8_t salt,
                       const kf_harness_region *reg, int n) {
  crunner *r = CR(s);
  for (int i = 0; i < n; i += KF_CUDA_MAX_REGIONS) {
    kf_cuda_cmd c;
    memset(&c, 0, sizeof c);
    c.op = (uint32_t)op;
    c.canary_salt = salt;
    c.n_regions = n - i < KF_CUDA_MAX_REGIONS ? n - i : KF_CUDA_MAX_REGIONS;
    for (int k = 0; k < c.n_regions; k++)
      c.regions[k] = (kf_cuda_region){reg[i + k].off, reg[i + k].len};
    int oc = runner_cmd(r, &c, step_timeout(r), NULL, NULL, e->why,
                        KF_HARNESS_WHY);
    if (oc) return oc;
  }
  return 0;
}

/* --------------------------------------------------------- GPU lock */

static void lock_path(const kf_ev *e, char *out, size_t len) {
  if (e->o->gpu_lock && *e->o->gpu_lock) {
    kf_strlcpy(out, e->o->gpu_lock, len);
    return;
  }
  /* the device's identity under CUDA_VISIBLE_DEVICES, when set */
  char id[64];
  snprintf(id, sizeof id, "%d", e->o->device);
  const char *vis = getenv("CUDA_VISIBLE_DEVICES");
  if (vis && *vis) {
    const char *p = vis;
    for (int i = 0; i < e->o->device && p; i++) {
      p = strchr(p, ',');
      if (p) p++;
    }
    if (p) {
      size_t n = strcspn(p, ",");
      size_t k = 0;
      for (size_t i = 0; i < n && k + 1 < sizeof id; i++)
        if ((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z') ||
            (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '-')
          id[k++] = p[i];
      id[k] = '\0';
    }
  }
  snprintf(out, len, "%s/kf-gpu-%s.lock", kf_getenv_or("TMPDIR", "/tmp"), id);
}

/* flock(op) on the lock file path + suffix, opened into *fd (kept open:
 * closing it releases the lock).  0 or INFRA_ERROR with why; *waited_ms. */
static int lock_file(kf_ev *e, const char *suffix, int op, int *fd,
                     uint64_t *waited_ms) {
  char path[1200], full[1300];
  lock_path(e, path, sizeof path);
  snprintf(full, sizeof full, "%s%s", path, suffix);
  if (*fd < 0) *fd = open(full, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (*fd < 0) {
    snprintf(e->why, KF_HARNESS_WHY, "GPU lock %s: %s", full, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  if (fchmod(*fd, 0666) != 0)
    kf_log(KF_LOG_DEBUG, "chmod %s: %s", full, strerror(errno));
  uint64_t t0 = kf_now_ms();
  while (flock(*fd, op) != 0) {
    if (errno == EINTR) continue;
    snprintf(e->why, KF_HARNESS_WHY, "GPU lock %s: %s", full, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  if (waited_ms) *waited_ms = kf_now_ms() - t0;
  return 0;
}

/* The GPU lock: held exclusively from the end of start to the end of the
 * evaluation, so one evaluation at a time runs kernels on the GPU. */
static int take_gpu_lock(kf_ev *e, char *msg, size_t len) {
  cuda_ev *c = CE(e);
  uint64_t w = 0;
  int oc = lock_file(e, "", LOCK_EX, &c->lock_fd, &w);
  if (oc) return oc;
  char path[1200];
  lock_path(e, path, sizeof path);
  snprintf(msg, len, "GPU lock %s after %" PRIu64 " ms", path, w);
  return 0;
}

/* The quiet lock: runners start (contexts, allocations the driver clears
 * on the GPU, module loads) under it shared, outside the GPU lock; the
 * evaluation that times takes it exclusively for its time stage, so no
 * start runs beside a timed call. */
static int quiet_lock(kf_ev *e, int op) {
  cuda_ev *c = CE(e);
  if (op == LOCK_UN) {
    if (c->quiet_fd >= 0) close(c->quiet_fd);
    c->quiet_fd = -1;
    return 0;
  }
  return lock_file(e, ".quiet", op, &c->quiet_fd, NULL);
}

/* -------------------------------------------------------- operations */

static int cuda_open(kf_ev *e) {
  cuda_ev *c = calloc(1, sizeof *c);
  if (!c) {
    kf_strlcpy(e->why, "out of memory", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  c->lock_fd = c->quiet_fd = -1;
  c->arch = e->o->cuda_arch && *e->o->cuda_arch ? e->o->cuda_arch : "sm_90a";
  e->bes = c;
  e->draw_per_side = true; /* the runner is the candidate's process */
  return 0;
}

static void release_others(crunner *const *held, int n);

static void cuda_close(kf_ev *e) {
  cuda_ev *c = CE(e);
  if (!c) return;
  static const char *const opname[10] = {"?", "canary", "download", "run",
                                         "exit", "gen", "probe", "case",
                                         "prep", "check"};
  char msg[512];
  size_t l = 0;
  for (int i = 1; i < 10; i++)
    if (c->op_n[i] && l < sizeof msg)
      l += (size_t)snprintf(msg + l, sizeof msg - l, " %s %" PRIu64 " x %.2f ms",
                            opname[i], c->op_n[i],
                            c->op_ns[i] / 1e6 / (double)c->op_n[i]);
  if (l) kf_log(KF_LOG_INFO, "runner commands:%s", msg);
  quiet_lock(e, LOCK_UN);
  if (c->lock_fd >= 0) close(c->lock_fd); /* releases the GPU lock */
  free(c);
  e->bes = NULL;
}

static int side_state(kf_ev *e, kf_side *s) {
  if (s->be) return 0;
  crunner *r = calloc(1, sizeof *r);
  if (!r) {
    kf_strlcpy(e->why, "out of memory", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  r->cmd_fd = r->reply_fd = r->memfd = -1;
  r->map = MAP_FAILED;
  r->ev = CE(e);
  s->be = r;
  return 0;
}

static int cuda_compile(kf_ev *e, kf_side **sides, int n, char *facts,
                        size_t factslen) {
  cuda_ev *c = CE(e);
  int timeout = e->o->compile_timeout_ms * 4; /* nvcc runs five tools */
  kf_harness_nvcc_job jobs[18];
  const char *kn[18][KF_HARNESS_MAX_KNOBS], *kv[18][KF_HARNESS_MAX_KNOBS];
  int pid[18], fd[18], started[18], cached = 0;
  bool keyed[18];
  char key[18][80];
  static char outs[18][65536];
  char why[18][KF_HARNESS_WHY];
  int nj = n + 1 <= 18 ? n + 1 : 18;
  /* a candidate's job runs from here until its finish is collected: its
   * own time, for the deadline's "whose fault" (pipeline.c; cpu_compile
   * says why the reference's is not counted) */
  uint64_t t_jobs = kf_now_ns();
  /* job 0: the link check's baseline, an empty candidate built by the same
   * command line but for the knobs (toolchain state only) */
  for (int j = 0; j < nj; j++) {
    kf_side *s = j ? sides[j - 1] : NULL;
    jobs[j] = (kf_harness_nvcc_job){.dir = e->wd.build,
                                    .base = s ? s->base : "baseline",
                                    .src = s ? s->source
                                             : KF_HARNESS_CUDA_BASELINE_SRC,
                                    .arch = c->arch, .timeout_ms = timeout};
    if (s) {
      if (side_state(e, s)) return KF_OUTCOME_INFRA_ERROR;
      for (int k = 0; k < s->n_knobs; k++) {
        kn[j][k] = s->knobs[k].name;
        kv[j][k] = s->knobs[k].value;
      }
      jobs[j].knob_names = kn[j];
      jobs[j].knob_values = kv[j];
      jobs[j].n_knobs = s->n_knobs;
    }
    started[j] = !(s && s->oc);
    /* trusted objects (the baseline, the reference) come from the cache
     * when this harness and toolchain built the same source before */
    keyed[j] = false;
    if (started[j] && (!s || s->is_ref)) {
      char tc[256];
      kf_harness__toolchain(true, tc, sizeof tc);
      const char *parts[] = {tc, c->arch, jobs[j].src};
      keyed[j] = kf_harness__cache_key(parts, 3, key[j], sizeof key[j]) == 0;
      char so[1200];
      snprintf(so, sizeof so, "%s/%s.so", e->wd.build, jobs[j].base);
      if (keyed[j] && kf_harness__cache_get(key[j], so)) {
        started[j] = 0;
        cached++;
      }
    }
    if (started[j]) {
      int oc = kf_harness__nvcc_start(&jobs[j], &pid[j], &fd[j], why[j],
                                      sizeof why[j]);
      if (oc) {
        started[j] = 0;
        if (!s || s->is_ref) {
          for (int k = 0; k < j; k++)
            if (started[k])
              kf_harness__nvcc_finish(&jobs[k], pid[k], fd[k], outs[k],
                                      sizeof outs[k], why[k], sizeof why[k]);
          snprintf(e->why, KF_HARNESS_WHY, "%s%.2000s",
                   s ? "" : "empty baseline kernel: ", why[j]);
          return s ? oc : KF_OUTCOME_INFRA_ERROR;
        }
        s->oc = oc;
        kf_strlcpy(s->why, why[j], KF_HARNESS_WHY);
      }
    }
  }
  int ret = 0;
  for (int j = 0; j < nj; j++) {
    if (!started[j]) continue;
    kf_side *s = j ? sides[j - 1] : NULL;
    int oc = kf_harness__nvcc_finish(&jobs[j], pid[j], fd[j], outs[j],
                                     sizeof outs[j], why[j], sizeof why[j]);
    if (s && !s->is_ref) s->busy_ns += kf_now_ns() - t_jobs;
    if (!oc && keyed[j]) {
      char so[1200];
      snprintf(so, sizeof so, "%s/%s.so", e->wd.build, jobs[j].base);
      kf_harness__cache_put(key[j], so);
    }
    if (oc && !s) {
      snprintf(e->why, KF_HARNESS_WHY, "empty baseline kernel: %.2000s",
               why[j]);
      ret = KF_OUTCOME_INFRA_ERROR;
    } else if (oc && s->is_ref) {
      if (!ret) {
        kf_strlcpy(e->why, why[j], KF_HARNESS_WHY);
        ret = oc;
      }
    } else if (oc) {
      s->oc = oc;
      kf_strlcpy(s->why, why[j], KF_HARNESS_WHY);
    } else if (s && !s->is_ref) {
      crunner *r = CR(s);
      r->n_kres = kf_harness__parse_resource_usage(outs[j], r->kres,
                                                   MAX_KERNELS);
      uint32_t max_regs = 0, spills = 0, max_smem = 0;
      for (int i = 0; i < r->n_kres; i++) {
        kernelfleet__kernel_resources__init(&r->kr[i]);
        r->kr[i].kernel = r->kres[i].kernel;
        r->kr[i].registers = r->kres[i].registers;
        r->kr[i].shared_bytes = r->kres[i].shared_bytes;
        r->kr[i].spill_bytes = r->kres[i].spill_bytes;
        r->kr_ptrs[i] = &r->kr[i];
        if (r->kres[i].registers > max_regs) max_regs = r->kres[i].registers;
        if (r->kres[i].shared_bytes > max_smem)
          max_smem = r->kres[i].shared_bytes;
        spills += r->kres[i].spill_bytes;
      }
      s->res = r->kr_ptrs;
      s->n_res = (uint32_t)r->n_kres;
      if (!facts[0])
        snprintf(facts, factslen, "nvcc for %s: %d kernel(s), max %u "
                 "registers, max %u bytes static shared memory, %u bytes of "
                 "spill stores; %.1000s", c->arch, r->n_kres, max_regs,
                 max_smem, spills, why[j]);
    }
  }
  if (cached) kf_log(KF_LOG_INFO, "compile: %d trusted object(s) from the "
                     "cache", cached);
  return ret;
}

static int cuda_link(kf_ev *e, kf_side *s, char *facts, size_t factslen) {
  cuda_ev *c = CE(e);
  crunner *r = CR(s);
  int oc = kf_harness__workdir_jail(&e->wd, s->base, s->jail, sizeof s->jail,
                                    e->why, KF_HARNESS_WHY);
  if (oc) return oc;
  char why[KF_HARNESS_WHY];
  if (!c->have_baseline) {
    char bpath[1200], err[256];
    snprintf(bpath, sizeof bpath, "%s/baseline.so", e->wd.build);
    char *bbuf;
    size_t blen;
    if (kf_read_file(bpath, MAX_SO, &bbuf, &blen, err, sizeof err)) {
      snprintf(e->why, KF_HARNESS_WHY, "baseline.so: %s", err);
      return KF_OUTCOME_INFRA_ERROR;
    }
    if (kf_harness__elf_check_cuda((unsigned char *)bbuf, blen, NULL,
                                   &c->baseline, why, sizeof why))
      kf_log(KF_LOG_WARN, "the empty baseline would not pass the link "
             "check: %s", why);
    free(bbuf);
    c->have_baseline = true;
  }
  unsigned char *buf = NULL;
  size_t len = 0;
  oc = kf_harness__take_so(e->wd.build, s->base, s->jail, "kernel.so", MAX_SO,
                           &buf, &len, e->why, KF_HARNESS_WHY);
  if (oc) return oc;
  oc = kf_harness__elf_check_cuda(buf, len, &c->baseline, &r->ci, why,
                                  sizeof why);
  free(buf);
  if (s->is_ref) {
    if (oc)
      kf_log(KF_LOG_WARN, "the reference would not pass the link check: %s",
             why);
    return 0;
  }
  if (oc) {
    kf_strlcpy(e->why, why, KF_HARNESS_WHY);
    return oc;
  }
  uint64_t b = 0;
  for (int i = 0; i < r->ci.n_mut; i++) b += r->ci.mut_len[i];
  snprintf(facts, factslen, "imports on the allow-list; host static data: "
           "%d range(s), %" PRIu64 " bytes, of the toolchain's own variables "
           "(launch stubs), left out of the runner's check for writes",
           r->ci.n_mut, b);
  return 0;
}

static int cuda_start(kf_ev *e, kf_side **sides, int n, size_t map_len,
                      char *facts, size_t factslen) {
  cuda_ev *c = CE(e);
  char lockmsg[1400];
  int oc;
  if (!kf_harness__cuda_exe(c->exe, sizeof c->exe)) {
    snprintf(e->why, KF_HARNESS_WHY, "this kf-harness was built without "
             "CUDA (no kf-harness-cuda beside it): it cannot run CUDA "
             "candidates");
    return KF_OUTCOME_INFRA_ERROR;
  }
  /* all at once: context creation is most of a runner's start; never
   * beside another evaluation's timed calls */
  if ((oc = quiet_lock(e, LOCK_SH))) return oc;
  for (int i = 0; i < n; i++) {
    kf_side *s = sides[i];
    if ((oc = side_state(e, s))) return oc;
    if (c->n_runners < 18) c->runners[c->n_runners++] = CR(s);
    if (!s->is_ref) c->n_cands++;
    oc = runner_spawn(e, s, CR(s), map_len, e->why, KF_HARNESS_WHY);
    if (oc && s->is_ref) return oc;
    /* the twin for the determinism check's second run (crunner.twin) */
    if (!oc && !s->is_ref && e->spec->deterministic) {
      crunner *t = calloc(1, sizeof *t);
      if (!t) {
        kf_strlcpy(e->why, "out of memory", KF_HARNESS_WHY);
        return KF_OUTCOME_INFRA_ERROR;
      }
      t->ci = CR(s)->ci;
      t->ev = c;
      CR(s)->twin = t;
      oc = runner_spawn(e, s, t, map_len, e->why, KF_HARNESS_WHY);
    }
    if (oc) {
      s->oc = oc;
      kf_strlcpy(s->why, e->why, KF_HARNESS_WHY);
    }
  }
  for (int i = 0; i < n; i++) {
    kf_side *s = sides[i];
    if (s->oc) continue;
    crunner *r = CR(s);
    oc = runner_ready(e, r, e->why, KF_HARNESS_WHY);
    if (!oc && r->twin) oc = runner_ready(e, r->twin, e->why, KF_HARNESS_WHY);
    if (oc && s->is_ref) return oc;
    if (oc) {
      s->oc = oc;
      kf_strlcpy(s->why, e->why, KF_HARNESS_WHY);
      continue;
    }
    if (!(r->defenses & KF_HARNESS_DEF_CUPTI) && !e->o->cuda_no_cupti) {
      snprintf(e->why, KF_HARNESS_WHY, "%s runner: CUPTI activity tracing "
               "is unavailable (%s): GPU work on other streams could not be "
               "attributed (--cuda-no-cupti runs without it)", s->who,
               r->note[0] ? r->note : "no reason given");
      return KF_OUTCOME_INFRA_ERROR;
    }
    s->map = r->map;
    s->map_len = r->map_len;
    s->defenses = r->defenses;
    kf_log(KF_LOG_INFO, "%s runner ready; start (ms since exec): %s", s->who,
           r->note);
  }
  /* The runners started (contexts, memory, loads) before the GPU lock:
   * that is most of a start; everything that runs kernels waits for it. */
  quiet_lock(e, LOCK_UN);
  if ((oc = take_gpu_lock(e, lockmsg, sizeof lockmsg))) return oc;
  crunner *any = NULL;
  for (int i = 1; i < n; i++)
    if (!sides[i]->oc) any = CR(sides[i]);
  if (!any) any = CR(sides[0]);
  char defs[256];
  kf_harness__defenses_str(any->defenses, defs, sizeof defs);
  snprintf(facts, factslen, "defenses: %s; device %d, L2 %" PRIu64 " KiB, "
           "flush %" PRIu64 " MiB, %zu MiB of buffers per runner; %s", defs,
           e->o->device, any->l2_bytes >> 10, any->flush_bytes >> 20,
           map_len >> 20, lockmsg);
  if (!(any->defenses & KF_HARNESS_DEF_SECCOMP) ||
      !(any->defenses & KF_HARNESS_DEF_CHROOT))
    kf_log(KF_LOG_WARN, "CUDA sandbox incomplete: %s", defs);
  return 0;
}

/* Everything of the image that is not a buffer of L: its gaps and the
 * tail beyond L (the image is sized for the largest layout), so that no
 * byte a stray write can reach on the device goes unchecked. */
static int outside_regions(const kf_side *s, const kf_harness_layout *L,
                           bool guards_only, kf_harness_region *r) {
  int n = guards_only ? kf_harness__guard_regions(L, r)
                      : kf_harness__gap_regions(L, r);
  if (s->map_len > L->total)
    r[n++] = (kf_harness_region){L->total, s->map_len - L->total};
  return n;
}

static int cuda_prepare(kf_ev *e, kf_side *s, const kf_harness_layout *L) {
  kf_harness_region r[2 * (2 * KF_HARNESS_MAX_T + 1) + 2];
  int n = outside_regions(s, L, false, r);
  CR(s)->last_L = L;
  return regions_cmd(e, s, KF_CUDA_OP_CANARY, L->canary_salt, r, n);
}

static int cuda_gen(kf_ev *e, kf_side **sides, int n, const kf_gen *g) {
  const kf_harness_layout *L = g->L;
  kf_cuda_cmd c;
  memset(&c, 0, sizeof c);
  c.op = KF_CUDA_OP_GEN;
  c.n_gen = L->n_in;
  for (int i = 0; i < L->n_in; i++)
    c.gen[i] = (kf_cuda_draw){.off = L->in_off[i], .n = (uint64_t)L->in_n[i],
                             .dtype = L->in_dt[i], .dist = g->dist[i],
                             .range = g->range[i], .key = g->key[i]};
  for (int k = 0; k < n; k++) {
    CR(sides[k])->last_gen = *g;
    CR(sides[k])->have_gen = true;
  }
  /* to every runner first, then every reply: the draws run at once */
  kf_cuda_cmd ck[18];
  uint64_t t0[18];
  int sent = 0, oc = 0;
  for (int k = 0; k < n && k < 18; k++) {
    if (sides[k]->oc) continue;
    ck[k] = c;
    if ((oc = runner_send(CR(sides[k]), &ck[k], &t0[k], e->why,
                          KF_HARNESS_WHY)))
      break;
    sent = k + 1;
  }
  for (int k = 0; k < sent; k++) {
    if (sides[k]->oc) continue;
    crunner *r = CR(sides[k]);
    int rc = runner_recv(r, &ck[k], t0[k], step_timeout(r), NULL, NULL,
                         e->why, KF_HARNESS_WHY);
    if (rc && !oc) oc = rc; /* a runner step failing is the machine's */
  }
  return oc;
}

static void run_cmd_of(kf_ev *e, const kf_call *call, kf_cuda_cmd *c) {
  const kf_harness_layout *L = call->L;
  memset(c, 0, sizeof *c);
  c->op = KF_CUDA_OP_RUN;
  c->flags = call->timed ? KF_CUDA_RUN_TIMED : 0;
  c->n_inputs = L->n_in;
  c->n_outputs = L->n_out;
  for (int i = 0; i < L->n_in; i++) {
    c->in[i] = (kf_harness_tdesc){.off = L->in_off[i], .dtype = L->in_dt[i],
                                  .ndim = L->in_ndim[i], .numel = L->in_n[i]};
    memcpy(c->in[i].dims, L->in_dims[i], sizeof c->in[i].dims);
  }
  for (int i = 0; i < L->n_out; i++) {
    c->out[i] = (kf_harness_tdesc){.off = L->out_off[i],
                                   .dtype = L->out_dt[i],
                                   .ndim = L->out_ndim[i],
                                   .numel = L->out_n[i]};
    memcpy(c->out[i].dims, L->out_dims[i], sizeof c->out[i].dims);
    c->out_poison[i] = kf_harness__out_poison(L->out_dt[i], call->alt_poison);
  }
  c->ws_off = L->ws_off;
  c->ws_bytes = L->ws_b;
  c->ws_poison = call->ws_poison;
  c->n_params = e->spec->n_params;
  for (int i = 0; i < e->spec->n_params && i < KF_HARNESS_MAX_P; i++)
    c->params[i] = call->size->v[i];
}

/* kf_call.fresh: the side's twin replaces the runner that ran before --
 * stopped, its image unmapped -- and gets the last layout's canary and
 * the last draw, as the runner had them before its first call of this
 * layout.  The pipeline reads the side's image through s->map, which now
 * is the twin's. */
static int fresh_runner(kf_ev *e, kf_side *s) {
  crunner *r = CR(s), *t = r->twin;
  if (!t || !r->last_L || !r->have_gen) {
    snprintf(e->why, KF_HARNESS_WHY, "%s: no fresh runner for this call "
             "(none was started, or no layout and draw to give it)", s->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  runner_stop(r);
  r->pid = t->pid;
  r->cmd_fd = t->cmd_fd;
  r->reply_fd = t->reply_fd;
  r->memfd = t->memfd;
  r->map = t->map;
  r->map_len = t->map_len;
  r->seq = t->seq;
  r->defenses = t->defenses;
  r->dead = t->dead;
  r->status = t->status;
  free(t);
  r->twin = NULL;
  s->map = r->map;
  s->map_len = r->map_len;
  kf_side *one[1] = {s};
  int oc = cuda_prepare(e, s, r->last_L);
  if (!oc) {
    kf_gen g = r->last_gen;
    oc = cuda_gen(e, one, 1, &g);
  }
  return oc;
}

/* A candidate convicted by the reference's idle gate: its verdict. */
static int left_work(kf_ev *e, kf_side *s) {
  crunner *r = CR(s);
  kf_strlcpy(e->why, r->left_why, KF_HARNESS_WHY);
  kill_runner(r);
  return KF_OUTCOME_SANDBOX_VIOLATION;
}

/* The reference's idle gate waited for another process's GPU work before
 * its timed call: the side timed just before it, whose process's queued
 * work goes on after its DONE.  An honest call leaves none (the runner
 * synchronizes the device before DONE).  Named only when the GPU was held
 * for long: IDLE_CONVICT slow probes over IDLE_CONVICT_NS, or a wait that
 * ran out (runner.py _IdleGate's rule); shorter bursts are waited for. */
#define IDLE_CONVICT 3
#define IDLE_CONVICT_NS 10000000ull
/* Named after the second such wait, not the first: once is what another
 * process or the driver can do (an honest template was convicted by one
 * 13 ms wait on the H200, 2026-12-01, and was ok in four runs after),
 * and one slowed call of the reference moves no median; work left after
 * every call is named at its second. */
#define IDLE_STRIKES 2
static void idle_convicts(const cuda_ev *ce, kf_side *ref, kf_side *prev,
                          const kf_cuda_reply *rep) {
  if (!rep->idle_slow) return;
  bool named = rep->idle_ranout || (rep->idle_slow >= IDLE_CONVICT &&
                                    rep->idle_busy_ns >= IDLE_CONVICT_NS);
  /* with several candidates (a showdown) every runner got commands since
   * the last timed call, and work queued after any reply is anyone's:
   * the gate then waited it out, and no one is named */
  if (!named || !prev || prev == ref || prev->is_ref || prev->oc ||
      ce->n_cands != 1) {
    kf_log(KF_LOG_INFO, "%s: the GPU was held by another process for %"
           PRIu64 " us before its timed call (%u slow probes)%s", ref->who,
           rep->idle_busy_ns / 1000, rep->idle_slow,
           named ? ", and no candidate ran the call before it" : "");
    return;
  }
  crunner *p = CR(prev);
  if (p->left_work) return;
  if (++p->held_after < IDLE_STRIKES) {
    kf_log(KF_LOG_WARN, "%s: the GPU was held for %" PRIu64 " us (%u slow "
           "probes) before the reference's timed call that followed its "
           "call; named if it happens again", prev->who,
           rep->idle_busy_ns / 1000, rep->idle_slow);
    return;
  }
  p->left_work = true;
  snprintf(p->left_why, sizeof p->left_why, "%s left GPU work running after "
           "its call returned: the reference's next timed call waited %s%"
           PRIu64 " us for the GPU (%u probes found it held), a second time "
           "after one of its calls; work that outlives the call is not timed "
           "and slows what runs next (the harness needs the GPU to itself: "
           "another user's process on it reads the same)",
           prev->who, rep->idle_ranout ? "over " : "",
           rep->idle_busy_ns / 1000, rep->idle_slow);
}

/* Stops every other runner for the reference's timed call (confirmed in
 * /proc), into held; returns how many.  The gate waits out GPU work they
 * queued before; stopped, none of them can queue more from the host
 * while the reference is timed (a callback of the driver's that sleeps
 * past the gate's quiet window, then releases a kernel waiting on a flag,
 * was the review's case).  A runner that does not stop is left running:
 * the gate still waited for a quiet GPU. */
static int hold_others(const cuda_ev *ce, const crunner *self,
                       crunner **held, int cap) {
  int n = 0;
  for (int i = 0; i < ce->n_runners; i++) {
    crunner *rs[2] = {ce->runners[i],
                      ce->runners[i] ? ce->runners[i]->twin : NULL};
    for (int k = 0; k < 2; k++) {
      crunner *o = rs[k];
      if (!o || o == self || o->dead || o->pid <= 0 || n == cap) continue;
      if (kf_harness__stop_confirmed(o->pid, false, 2000) == 0)
        held[n++] = o;
      else
        kill(o->pid, SIGCONT); /* stopped late, or gone: never left so */
    }
  }
  return n;
}

static void release_others(crunner *const *held, int n) {
  for (int i = 0; i < n; i++)
    if (!held[i]->dead) kill(held[i]->pid, SIGCONT);
}

/* The time stage's first timed command takes the quiet lock
 * exclusively: no runner starts beside the timed calls. */
static int timed_begin(kf_ev *e) {
  cuda_ev *ce = CE(e);
  if (ce->quiet_ex) return 0;
  int oc = quiet_lock(e, LOCK_EX);
  if (oc) return oc;
  ce->quiet_ex = true;
  return 0;
}

/* Before a timed call's draw: PREP (the gate, the warm-up, the clearing,
 * the trace turned on; runner.c do_prep), so that the commands on the
 * side's clock -- its draw and its call, up to the reply that fixes the
 * outputs -- hold little but the call.  For the reference every other
 * runner is stopped from here to the end of its RUN, and its gate's wait
 * convicts the side timed before it when long (idle_convicts). */
static int cuda_arm(kf_ev *e, kf_side *s, const kf_call *call) {
  crunner *r = CR(s);
  r->prepped = r->committed = r->commit_on = false;
  if (!call->timed) return 0;
  if (!s->is_ref && r->left_work) return left_work(e, s);
  cuda_ev *ce = CE(e);
  int oc = timed_begin(e);
  if (oc) return oc;
  kf_cuda_cmd c;
  run_cmd_of(e, call, &c);
  c.op = KF_CUDA_OP_PREP;
  release_others(ce->held, ce->n_held);
  ce->n_held = s->is_ref ? hold_others(ce, r, ce->held, 36) : 0;
  kf_cuda_reply rep;
  oc = runner_cmd(r, &c, e->o->call_timeout_ms * (s->is_ref ? 3 : 1), &rep,
                  NULL, e->why, KF_HARNESS_WHY);
  if (oc) {
    release_others(ce->held, ce->n_held);
    ce->n_held = 0;
    return oc;
  }
  if (s->is_ref) idle_convicts(ce, s, ce->last, &rep);
  r->prepped = true;
  return 0;
}

static int cuda_call(kf_ev *e, kf_side *s, const kf_call *call, uint64_t *ns) {
  crunner *r = CR(s);
  if (!s->is_ref && r->left_work) return left_work(e, s);
  if (call->fresh && !s->is_ref) {
    int foc = fresh_runner(e, s);
    if (foc) return foc;
  }
  kf_cuda_cmd c;
  run_cmd_of(e, call, &c);
  cuda_ev *ce = CE(e);
  if (call->timed) {
    /* PREP (cuda_arm) did the gate and the hold: the pipeline arms every
     * side before its timed call (draw_per_side) */
    if (!r->prepped) {
      snprintf(e->why, KF_HARNESS_WHY, "%s: a timed call without its PREP "
               "(the pipeline did not arm the side)", s->who);
      return KF_OUTCOME_INFRA_ERROR;
    }
    c.flags |= KF_CUDA_RUN_PREPPED;
    ce->last = s;
  }
  r->prepped = false;
  kf_cuda_reply rep;
  uint64_t wall = 0;
  int oc = runner_cmd(r, &c, e->o->call_timeout_ms * (s->is_ref ? 3 : 1),
                      &rep, &wall, e->why, KF_HARNESS_WHY);
  if (!oc && (c.flags & KF_CUDA_RUN_PREPPED)) {
    /* the outputs are fixed: the side's clock stops, the trace follows */
    r->committed = r->commit_on = true;
    memcpy(r->commit, rep.digest, sizeof r->commit);
    kf_cuda_cmd k;
    memset(&k, 0, sizeof k);
    k.op = KF_CUDA_OP_CHECK;
    kf_cuda_reply tr;
    oc = runner_cmd(r, &k, step_timeout(r), &tr, NULL, e->why,
                    KF_HARNESS_WHY);
    if (!oc && tr.elapsed_ns > wall + 1000000) {
      snprintf(e->why, KF_HARNESS_WHY, "%s's trace reported %.0f ns for a "
               "call that took %.0f ns: forged reply", s->who,
               (double)tr.elapsed_ns, (double)wall);
      kill_runner(r);
      oc = KF_OUTCOME_SANDBOX_VIOLATION;
    }
    if (!oc && tr.elapsed_ns > rep.elapsed_ns) rep.elapsed_ns = tr.elapsed_ns;
  }
  release_others(ce->held, ce->n_held);
  ce->n_held = 0;
  if (oc) return oc;
  double ph[3];
  if (call->timed && sscanf(rep.msg, "phases %lf %lf %lf", &ph[0], &ph[1],
                            &ph[2]) == 3) {
    for (int i = 0; i < 3; i++) r->ph_us[i] += ph[i];
    r->ph_n++;
  }
  *ns = rep.elapsed_ns;
  return 0;
}

/* Sends cmd[i] to every side without a failure, then collects every
 * reply: the runners work at once.  oc[i] and the side's why get each
 * outcome; rep[i] each reply. */
static void all_at_once(kf_ev *e, kf_side **sides, int n, kf_cuda_cmd *cmd,
                        kf_cuda_reply *rep, int *oc, int timeout_ms) {
  uint64_t t0[18];
  bool sent[18] = {false};
  /* while a side's clock runs (wall_on), one at a time: a reply read
   * after another side's would be charged that side's wait */
  bool one_by_one = false;
  for (int i = 0; i < n && i < 18; i++) one_by_one |= sides[i]->wall_on;
  for (int i = 0; i < n && i < 18 && one_by_one; i++) {
    if (sides[i]->oc || oc[i]) continue;
    crunner *r = CR(sides[i]);
    uint64_t w = 0;
    oc[i] = runner_cmd(r, &cmd[i],
                       timeout_ms ? timeout_ms * (sides[i]->is_ref ? 3 : 1)
                                  : step_timeout(r),
                       &rep[i], &w, sides[i]->why, KF_HARNESS_WHY);
    sides[i]->busy_ns += w;
  }
  if (one_by_one) return;
  for (int i = 0; i < n && i < 18; i++) {
    if (sides[i]->oc || oc[i]) continue;
    oc[i] = runner_send(CR(sides[i]), &cmd[i], &t0[i], sides[i]->why,
                        KF_HARNESS_WHY);
    sent[i] = !oc[i];
  }
  for (int i = 0; i < n && i < 18; i++) {
    if (!sent[i]) continue;
    crunner *r = CR(sides[i]);
    /* each side's wall from its command to its reply, to its account
     * (busy_ns) when this process had to wait for that reply: one that
     * was already there when the sides before it were read took at most
     * their time, and was not what the evaluation waited for */
    uint64_t w = 0, rd = kf_now_ns();
    oc[i] = runner_recv(r, &cmd[i], t0[i],
                        timeout_ms ? timeout_ms * (sides[i]->is_ref ? 3 : 1)
                                   : step_timeout(r),
                        &rep[i], &w, sides[i]->why, KF_HARNESS_WHY);
    if (i == 0 || kf_now_ns() - rd > 50000) sides[i]->busy_ns += w;
  }
}

static int cuda_calls(kf_ev *e, kf_side **sides, int n, const kf_call *call,
                      int *oc) {
  kf_cuda_cmd cmd[18];
  kf_cuda_reply rep[18];
  for (int i = 0; i < n && i < 18; i++) run_cmd_of(e, call, &cmd[i]);
  all_at_once(e, sides, n, cmd, rep, oc, e->o->call_timeout_ms);
  return 0;
}

static int cuda_case_all(kf_ev *e, kf_side **sides, int n, const kf_gen *g,
                         const kf_call *call, kf_probe *probes, int *oc) {
  kf_cuda_cmd cmd[18];
  kf_cuda_reply rep[18];
  const kf_harness_layout *L = call->L;
  kf_harness_region reg[2 * (2 * KF_HARNESS_MAX_T + 1) + 2];
  for (int i = 0; i < n && i < 18; i++) {
    run_cmd_of(e, call, &cmd[i]);
    cmd[i].op = KF_CUDA_OP_CASE;
    cmd[i].n_gen = L->n_in;
    for (int k = 0; k < L->n_in; k++)
      cmd[i].gen[k] = (kf_cuda_draw){.off = L->in_off[k],
                                     .n = (uint64_t)L->in_n[k],
                                     .dtype = L->in_dt[k], .dist = g->dist[k],
                                     .range = g->range[k], .key = g->key[k]};
    int ng = kf_harness__guard_regions(L, reg);
    if (sides[i]->map_len > L->total)
      reg[ng++] = (kf_harness_region){L->total, sides[i]->map_len - L->total};
    cmd[i].n_regions = ng;
    for (int k = 0; k < ng; k++)
      cmd[i].regions[k] = (kf_cuda_region){reg[k].off, reg[k].len};
  }
  all_at_once(e, sides, n, cmd, rep, oc, e->o->call_timeout_ms);
  for (int i = 0; i < n && i < 18; i++) {
    if (sides[i]->oc || oc[i]) continue;
    probes[i].bad = rep[i].bad;
    for (int k = 0; k < L->n_in; k++) probes[i].in_digest[k] = rep[i].digest[k];
  }
  return 0;
}

/* A candidate's outputs as downloaded against the digests its call's
 * reply fixed: bytes that differ were written after the eval's clock of
 * the call stopped (the runner taken over: work after a forged DONE).
 * The reference is trusted. */
static int check_commit(kf_ev *e, kf_side *s, const kf_harness_layout *L) {
  crunner *r = CR(s);
  if (!r->commit_on || s->is_ref) return 0;
  r->commit_on = false;
  for (int k = 0; k < L->n_out; k++) {
    uint64_t d = kf_harness__digest(s->map + L->out_off[k],
                                    (size_t)L->out_b[k]);
    if (d == r->commit[k]) continue;
    snprintf(s->why, KF_HARNESS_WHY, "%s: output '%s' changed after its "
             "call's reply fixed it (digest %016" PRIx64 " at the reply, "
             "%016" PRIx64 " downloaded): work done after the call's time "
             "was taken", s->who, e->spec->outputs[k].name, r->commit[k], d);
    kill_runner(r);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  return 0;
}

static int cuda_collect(kf_ev *e, kf_side **sides, int n,
                        const kf_harness_layout *L, kf_probe *probes,
                        int *oc) {
  kf_cuda_cmd cmd[18];
  kf_cuda_reply rep[18];
  kf_harness_region g[2 * (2 * KF_HARNESS_MAX_T + 1) + 2];
  for (int i = 0; i < n && i < 18; i++) {
    memset(&cmd[i], 0, sizeof cmd[i]);
    cmd[i].op = KF_CUDA_OP_DOWNLOAD;
    cmd[i].n_regions = L->n_out;
    for (int k = 0; k < L->n_out; k++)
      cmd[i].regions[k] = (kf_cuda_region){L->out_off[k], L->out_b[k]};
  }
  all_at_once(e, sides, n, cmd, rep, oc, 0);
  for (int i = 0; i < n && i < 18; i++) {
    if (sides[i]->oc || oc[i]) continue;
    oc[i] = check_commit(e, sides[i], L);
  }
  for (int i = 0; i < n && i < 18; i++) {
    if (sides[i]->oc || oc[i]) continue;
    int ng = 0;
    /* the same regions as cuda_probe */
    ng = kf_harness__guard_regions(L, g);
    if (sides[i]->map_len > L->total)
      g[ng++] = (kf_harness_region){L->total, sides[i]->map_len - L->total};
    memset(&cmd[i], 0, sizeof cmd[i]);
    cmd[i].op = KF_CUDA_OP_PROBE;
    cmd[i].canary_salt = L->canary_salt;
    cmd[i].n_regions = ng;
    for (int k = 0; k < ng; k++)
      cmd[i].regions[k] = (kf_cuda_region){g[k].off, g[k].len};
    cmd[i].n_inputs = L->n_in;
    for (int k = 0; k < L->n_in; k++)
      cmd[i].in[k] = (kf_harness_tdesc){.off = L->in_off[k],
                                        .dtype = L->in_dt[k],
                                        .ndim = L->in_ndim[k],
                                        .numel = L->in_n[k]};
  }
  all_at_once(e, sides, n, cmd, rep, oc, 0);
  for (int i = 0; i < n && i < 18; i++) {
    if (sides[i]->oc || oc[i]) continue;
    probes[i].bad = rep[i].bad;
    for (int k = 0; k < L->n_in; k++) probes[i].in_digest[k] = rep[i].digest[k];
  }
  return 0;
}

static int cuda_fetch(kf_ev *e, kf_side *s, const kf_harness_region *r,
                      int n) {
  if (!s->is_ref && CR(s)->left_work) return left_work(e, s);
  return regions_cmd(e, s, KF_CUDA_OP_DOWNLOAD, 0, r, n);
}

static int cuda_probe(kf_ev *e, kf_side *s, const kf_harness_layout *L,
                      kf_probe *out) {
  crunner *r = CR(s);
  kf_harness_region g[2 * (2 * KF_HARNESS_MAX_T + 1) + 2];
  int n = outside_regions(s, L, true, g);
  if (n > KF_CUDA_MAX_REGIONS) {
    kf_strlcpy(e->why, "too many guard regions for one probe",
               KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  kf_cuda_cmd c;
  memset(&c, 0, sizeof c);
  c.op = KF_CUDA_OP_PROBE;
  c.canary_salt = L->canary_salt;
  c.n_regions = n;
  for (int i = 0; i < n; i++) c.regions[i] = (kf_cuda_region){g[i].off, g[i].len};
  c.n_inputs = L->n_in;
  for (int i = 0; i < L->n_in; i++)
    c.in[i] = (kf_harness_tdesc){.off = L->in_off[i], .dtype = L->in_dt[i],
                                 .ndim = L->in_ndim[i], .numel = L->in_n[i]};
  kf_cuda_reply rep;
  int oc = runner_cmd(r, &c, step_timeout(r), &rep, NULL, e->why,
                      KF_HARNESS_WHY);
  if (oc) return oc;
  out->bad = rep.bad;
  for (int i = 0; i < L->n_in; i++) out->in_digest[i] = rep.digest[i];
  return 0;
}

/* The evaluation is done with the GPU: the GPU lock goes now, so the next
 * evaluation's verify can run while these runners end; their ends (context
 * teardown) happen under the quiet lock shared, never beside a timed
 * call. */
static void cuda_idle(kf_ev *e) {
  cuda_ev *c = CE(e);
  for (int i = 0; i < c->n_runners; i++) {
    runner_exit(c->runners[i]);
    runner_exit(c->runners[i]->twin);
  }
  if (c->quiet_fd >= 0) {
    while (flock(c->quiet_fd, LOCK_SH) != 0 && errno == EINTR) {
    }
    c->quiet_ex = false;
  } else if (c->n_runners) {
    quiet_lock(e, LOCK_SH);
  }
  if (c->lock_fd >= 0) close(c->lock_fd);
  c->lock_fd = -1;
}

/* The rate at a layout's footprint with the cache state a timed call
 * finds, for the too-fast floor (pipeline.c footprint_ceiling); called
 * while no runner works (the eval still holds the GPU lock). */
static double cuda_footprint_gbps(kf_ev *e, size_t bytes) {
  /* a process of the harness's own works on the GPU now (and tears its
   * context down after): what the reference's idle gate finds next is
   * not the last side's (an honest candidate was named so, H200) */
  CE(e)->last = NULL;
  return kf_harness__gpu_footprint_gbps(e->o->device, e->o->cuda_warm_us,
                                        bytes);
}

/* ------------------------------------------------------- profiling */

/* Nsight Compute's CLI: $KF_NCU, else ncu on PATH, else the toolkit's. */
static bool find_ncu(char *out, size_t len) {
  const char *env = getenv("KF_NCU");
  if (env && *env) {
    kf_strlcpy(out, env, len);
    return access(out, X_OK) == 0;
  }
  const char *path = getenv("PATH");
  char dirs[4096];
  kf_strlcpy(dirs, path ? path : "", sizeof dirs);
  char *save = NULL;
  for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    snprintf(out, len, "%s/ncu", d);
    if (access(out, X_OK) == 0) return true;
  }
  static const char *const known[] = {"/usr/local/cuda/bin/ncu",
                                      "/opt/nvidia/nsight-compute/ncu"};
  for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
    kf_strlcpy(out, known[i], len);
    if (access(out, X_OK) == 0) return true;
  }
  return false;
}

/* The harness's own kernels (kernels.cu) in the profiled process: not the
 * candidate's. */
static const char *const own_kernels[] = {"k_gen", "k_canary",
                                          "k_canary_check", "k_digest",
                                          "k_read", NULL};

/* The profiling pass (backend.h): a fresh runner of the candidate, under
 * `ncu --clock-control none --csv --page raw`, in the same sandbox and
 * as the same user as the timed runners (the runner sandboxes itself
 * after exec, under the profiler); the GPU lock is still held, so no
 * other evaluation times beside the profiler's replays. */
static void cuda_profile(kf_ev *e, kf_side *s, const kf_gen *g,
                         const kf_call *call, kf_prof *out) {
  kf_prof_init(out, KF_PROF_UNAVAILABLE);
  kf_strlcpy(out->tool, "ncu", sizeof out->tool);
  char ncu[PATH_MAX];
  if (!find_ncu(ncu, sizeof ncu)) {
    snprintf(out->reason, sizeof out->reason, "Nsight Compute (ncu) not "
             "found: set KF_NCU, or put ncu on the worker's PATH");
    return;
  }
  /* the lock directory the injected library wants, inside the jail,
   * writable by the sandbox user (files stay empty: RLIMIT_FSIZE is 0) */
  {
    char d[PATH_MAX];
    size_t jl = strlen(s->jail);
    const char *lock = KF_NCU_LOCK_DIR;
    for (const char *p = lock + 1;; p++) {
      if (*p != '/' && *p) continue;
      snprintf(d, sizeof d, "%s%.*s", s->jail, (int)(p - lock), lock);
      if (jl + (size_t)(p - lock) >= sizeof d ||
          (mkdir(d, 0755) != 0 && errno != EEXIST) || chmod(d, 01777) != 0) {
        out->status = KF_PROF_FAILED;
        snprintf(out->reason, sizeof out->reason, "profiler lock directory %s "
                 "in the jail: %s", lock, strerror(errno));
        return;
      }
      if (!*p) break;
    }
  }
  crunner *orig = CR(s);
  crunner *pr = calloc(1, sizeof *pr);
  if (!orig || !pr) {
    free(pr);
    out->status = KF_PROF_FAILED;
    kf_strlcpy(out->reason, "out of memory", sizeof out->reason);
    return;
  }
  pr->cmd_fd = pr->reply_fd = pr->memfd = -1;
  pr->map = MAP_FAILED;
  pr->ev = CE(e);
  pr->ci = orig->ci;
  char log[1200];
  snprintf(log, sizeof log, "%s/ncu-%s.csv", e->wd.work, s->base);
  /* Only the candidate's kernels, by the entry names ptxas reported at
   * compile time: the harness's own (draws, canaries) are not replayed
   * under the profiler at all.  Names are identifiers; anything else is
   * escaped for ncu's regex. */
  static char filter[MAX_KERNELS * 260 + 16];
  size_t fl = 0;
  if (orig->n_kres > 0) {
    fl = (size_t)snprintf(filter, sizeof filter, "regex:^(");
    for (int i = 0; i < orig->n_kres && fl + 260 < sizeof filter; i++) {
      if (i) filter[fl++] = '|';
      for (const char *k = orig->kres[i].kernel; *k; k++) {
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
              (*k >= '0' && *k <= '9') || *k == '_'))
          filter[fl++] = '\\';
        filter[fl++] = *k;
      }
    }
    fl += (size_t)snprintf(filter + fl, sizeof filter - fl, ")$");
  }
  /* ncu and the runner share one fresh network namespace with only
   * loopback up (kf-harness-cuda netns-exec): the injected library reaches
   * its front end, and the candidate still reaches no network. */
  const char *wrap[26] = {CE(e)->exe, "netns-exec", ncu, "--clock-control", "none",
                          "--csv", "--page", "raw", "--metrics",
                          kf_prof_ncu_metrics, "--target-processes", "all",
                          "--launch-count", "64", "--log-file", log};
  int nw = 16;
  if (fl) {
    wrap[nw++] = "--kernel-name-base";
    wrap[nw++] = "mangled";
    wrap[nw++] = "--kernel-name";
    wrap[nw++] = filter;
  }
  wrap[nw] = NULL;
  /* The timed runners are done (every stage passed): ended first, so
   * their device memory is free for the profiled one and nothing of
   * theirs runs beside ncu's replays.  Their records stay (the
   * candidate's kernel resources are still reported). */
  cuda_ev *ce = CE(e);
  for (int i = 0; i < ce->n_runners; i++) runner_exit(ce->runners[i]);
  for (int i = 0; i < ce->n_runners; i++) runner_stop(ce->runners[i]);
  char why[KF_HARNESS_WHY] = "";
  void *keep = s->be;
  s->be = pr; /* the ops below address the profiled runner */
  int oc = runner_spawn_as(e, s, pr, orig->map_len, wrap, why, sizeof why);
  if (!oc) oc = runner_ready_ms(pr, KF_CUDA_PROFILE_READY_MS, why, sizeof why);
  if (!oc) oc = cuda_prepare(e, s, call->L);
  kf_side *one[1] = {s};
  if (!oc) oc = cuda_gen(e, one, 1, g);
  uint64_t ns = 0;
  if (!oc) oc = cuda_call(e, s, call, &ns);
  if (oc && !why[0]) kf_strlcpy(why, e->why, sizeof why);
  /* ncu writes its report when the runner ends: wait for it, bounded
   * well inside the task's deadline (the evaluation must still report) */
  runner_exit(pr);
  if (pr->pid > 0 && !pr->dead) {
    pr->status = kf_harness__reap(pr->pid, 30000, false);
    pr->dead = true;
  }
  runner_stop(pr);
  s->be = keep;
  free(pr);
  int fd = open(log, O_RDONLY | O_CLOEXEC);
  char *text = NULL;
  ssize_t got = 0;
  if (fd >= 0) {
    text = malloc(4u << 20);
    if (text) {
      ssize_t k;
      while (got < (4 << 20) - 1 &&
             (k = read(fd, text + got, (size_t)((4 << 20) - 1 - got))) > 0)
        got += k;
      text[got] = '\0';
    }
    close(fd);
    /* diagnosis: $KF_NCU_LOG_DIR keeps ncu's whole log */
    const char *keepdir = getenv("KF_NCU_LOG_DIR");
    if (keepdir && *keepdir && text) {
      char kp[PATH_MAX];
      snprintf(kp, sizeof kp, "%s/ncu-%d-%s.log", keepdir, (int)getpid(), s->base);
      int kfd = open(kp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (kfd >= 0) {
        if (write(kfd, text, (size_t)got) < 0) { /* diagnosis only */ }
        close(kfd);
      }
    }
    unlink(log);
  }
  char err[256];
  if (text && kf_prof_parse_ncu_csv(text, (size_t)got, own_kernels, out, err,
                                    sizeof err) == 0) {
    /* spills are a compile fact (ptxas), the largest of the kernels */
    for (int i = 0; i < orig->n_kres; i++)
      if (orig->kres[i].spill_bytes > out->spill_bytes)
        out->spill_bytes = orig->kres[i].spill_bytes;
  } else if (text && strstr(text, "An error was reported by the driver") &&
             !strstr(profile_relax(), "uid") && geteuid() == 0) {
    /* Seen on the lent H100/H200 (driver 580, the default
     * NVreg_RestrictProfilingToAdminUsers=1): the same run profiles as
     * root, and as the sandbox's unprivileged user the driver refuses
     * ncu.  That is the driver's restriction, recorded, not a failure. */
    out->status = KF_PROF_RESTRICTED;
    snprintf(out->reason, sizeof out->reason,
             "driver: GPU counters for admins only; the profiled runner "
             "keeps the sandbox's unprivileged user (ncu: driver error). "
             "Trusted fleets: KF_CUDA_PROFILE_RELAX (docs/profiling.md)");
  } else if (!text || out->status != KF_PROF_RESTRICTED) {
    out->status = KF_PROF_FAILED;
    /* ncu's own first error line says most (a sandbox step it could not
     * live with, a connection it could not make) */
    char ncu_err[160] = "";
    const char *el = text ? strstr(text, "==ERROR==") : NULL;
    if (el) {
      size_t k = strcspn(el, "\n");
      snprintf(ncu_err, sizeof ncu_err, "; %.*s", (int)(k < 150 ? k : 150),
               el);
    }
    char r[800];
    snprintf(r, sizeof r, "%s%s%s%.160s", text ? err : "ncu wrote no report",
             ncu_err, oc ? "; the profiled run: " : "", oc ? why : "");
    kf_strlcpy(out->reason, r, sizeof out->reason);
  }
  free(text);
}

static void cuda_stop(kf_ev *e, kf_side *s) {
  if (!s || !s->be) return;
  crunner *cr = CR(s);
  for (int w = 0; w < 2; w++) {
    uint64_t tmp[64], dev[64];
    int n = cr->n_wop[w];
    if (n < 3) continue;
    double med = kf_harness__median(cr->wop[w], 0, n, tmp);
    for (int i = 0; i < n; i++)
      dev[i] = (uint64_t)fabs((double)cr->wop[w][i] - med);
    kf_log(KF_LOG_INFO, "%s: %s on the eval's clock: median %.1f us, "
           "deviation %.1f us (%d)", s->who, w ? "RUN" : "GEN", med / 1e3,
           kf_harness__median(dev, 0, n, tmp) / 1e3, n);
  }
  if (cr->ph_n)
    kf_log(KF_LOG_INFO, "%s: its runner's %d timed calls, host us each: "
           "%.0f before the call, %.0f to the synchronize, %.0f after it",
           s->who, cr->ph_n, cr->ph_us[0] / cr->ph_n,
           cr->ph_us[1] / cr->ph_n, cr->ph_us[2] / cr->ph_n);
  cuda_ev *ce = CE(e);
  if (ce) { /* an armed reference's hold, never released by its call */
    release_others(ce->held, ce->n_held);
    ce->n_held = 0;
  }
  if (CR(s)->twin) {
    runner_stop(CR(s)->twin);
    free(CR(s)->twin);
  }
  runner_stop(CR(s));
  free(s->be);
  s->be = NULL;
  s->map = NULL;
  s->res = NULL;
  s->n_res = 0;
}

const kf_backend kf_harness_cuda_backend = {
    .name = "cuda",
    .language = "cuda",
    .guard = KF_SPEC_GUARD_CUDA,
    .roof_factor = KF_HARNESS_ROOF_FACTOR,
    .min_reps = 10,
    .open = cuda_open,
    .compile = cuda_compile,
    .link = cuda_link,
    .start = cuda_start,
    .prepare = cuda_prepare,
    .gen = cuda_gen,
    .arm = cuda_arm,
    .call = cuda_call,
    .fetch = cuda_fetch,
    .probe = cuda_probe,
    .calls = cuda_calls,
    .collect = cuda_collect,
    .case_all = cuda_case_all,
    .profile = cuda_profile,
    .idle = cuda_idle,
    .footprint_gbps = cuda_footprint_gbps,
    .stop = cuda_stop,
    .close = cuda_close,
};
