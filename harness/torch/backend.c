/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/torch/backend.c -- the torch backend: PyTorch problems (a
 * KernelBench Model or a GPU MODE ref_kernel as the reference, a ModelNew
 * or custom_kernel as the candidate) behind the pipeline's seam
 * (core/backend.h).  The pipeline -- seed, draws, layouts, comparison,
 * determinism, the timing loop and the roofline floor -- is core's; this
 * file only runs Python.
 *
 *   compile  nothing to build: the source is checked for size and NUL
 *            bytes here; its syntax by the runner's zygote at start
 *   link     the side's jail directory: runner.py (embedded at build
 *            time), side.py (the source) and torch.json (kind, role,
 *            knobs, init arguments, output names), all root-owned
 *   start    a runner per side (runner.py serve): a Python zygote that
 *            imports torch, locks itself down (chroot, uid nobody,
 *            seccomp) and forks one child per call; the side's buffers
 *            live in a memfd (fd 3), which is also the side's image
 *   gen      inputs drawn by this process into the first side's image,
 *            copied to the others (the same bits everywhere)
 *   arm      a fresh child that mapped exactly this call's buffers (inputs
 *            read-only), ran the side's code and built its model: READY;
 *            then stopped (SIGSTOP) until its call, so that nothing it
 *            does can see the inputs drawn after arming before the timer
 *            runs
 *   call     outputs poisoned, workspace filled, caches flushed (timed
 *            calls); RUN; the child calls forward / the kernel and copies
 *            the result into the outputs; DONE.  Charged the larger of the
 *            wall time from RUN to DONE and the CPU time the child used
 *            meanwhile (the same rule as the CPU backend); then the child
 *            is killed and its exit reaped (the zygote's EXITED)
 *   probe    canary around each buffer, input digests
 *
 * Channels: fd 0 commands (ARM, RUN, EXIT), fd 1 the zygote's status
 * (READY, FORKED, EXITED, FAIL), which no child holds, so it is trusted;
 * fd 2 the child's replies (READY, DONE, ERR, VIOL), which are claims of
 * the candidate's process.  Everything is one line of text.
 *
 * Device cuda (and --torch-persistent on CPU) uses the other model, the
 * "persistent runners" section below: one process per side serving every
 * call (runner.py persist), stopped between calls, timed on the GPU by its
 * own CUDA events -- a claim, held to this process's clock of the side's
 * draw, call and outputs (draw_per_side: WARM in arm, the draw copied in
 * gen_one, RUN..DONE and fix_outputs in p_call) -- with the JIT sandbox
 * that Triton, load_inline and torch.compile need, and the reference's
 * torch.compile, default mode and max-autotune-no-cudagraphs, timed
 * beside it (kf_side.t_base).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "cpu.h" /* the CPU's ceilings (cpu/ceilings.c) */
#include "internal.h"
#include "jitcache.h"
#include "log.h"
#include "outcome.h"
#include "sandbox.h"
#include "spec.h"
#include "torch.h"
#include "util.h"

#define MAX_SOURCE (1u << 20)
#define FLUSH_LEN (32u << 20)
#define START_MS 180000 /* importing torch on a loaded machine */
/* How long after WARMED the eval waits for QUEUED before its draw and go
 * word: the runner queues the call with the GPU held at the go word
 * (runner.py _gated_begin), which a function that waits on the GPU from
 * the host cannot finish until the go word is written.  Such a function
 * then pays its host time on the clock; every other one has queued in a
 * few ms of Python dispatch. */
#define GO_WAIT_MS 50
/* PREP: torch.compile's default mode, then max-autotune, which runner.py
 * gives up after TUNE_BUDGET_S (30 s) */
#define PREP_MS (START_MS + 60000)
#define LINE 2048
#define EXIT_VIOL 77

typedef struct {
  int cpu;
  unsigned char *flush;
  uint64_t flush_sink;
  char python[512];
  bool persist;         /* one process per side (runner.py persist) */
  bool cuda;            /* device cuda: JIT sandbox, GPU timing */
  bool no_gate;         /* KF_TORCH_GATE=0: the sleep's protocol, for a
                           side-by-side run or a driver whose wait
                           misbehaves (runner.py _GoGate) */
  bool trace_clock;     /* KF_TORCH_TRACE_CLOCK: log each timed call's
                           share of the clock (p_call) */
  bool jit;             /* the JIT sandbox (cuda, or --torch-jit) */
  int lock_fd;          /* the GPU lock, held from start's end (-1) */
  char eager[160];      /* baselines: what eager is */
  char view[64];        /* the JIT sandbox's file view, as a candidate's
                           LOCKED said it */
  kf_side *last;        /* the side whose call came last (GPU work it left
                           running is what the next call's gate waits for) */
  /* draw_per_side (the GPU): a repetition's inputs, drawn once into this
   * process's memory and copied into each side's image at its turn */
  unsigned char *stage;
  size_t stage_len;
  kf_gen staged;
  bool have_staged;
  /* distribution `sample`: a process of the reference's own that runs
   * its get_inputs() under each draw's key (runner.py sample) */
  kf_side *sampler;
} torch_ev;

typedef struct {
  char buf[LINE];
  size_t n;
} linebuf;

typedef struct {
  pid_t pid;            /* the zygote */
  int cmd_fd, status_fd, reply_fd, memfd;
  pid_t child;          /* armed or running child, 0: none */
  bool ready;           /* the child said READY */
  char plan[8192];      /* the armed child's ARM line */
  clockid_t cpuclock;
  bool cpuclock_ok;
  bool dead;
  linebuf st, rp;
  /* persistent runners: fd 1 of the process is status_fd (every line a
   * claim of the side once its code ran); it is stopped between calls */
  uint32_t seq;
  bool group;           /* leads a process group: signals go to it all */
  bool compile_ok;      /* the reference may time torch.compile */
  bool tuned_ok;        /* and its max-autotune-no-cudagraphs mode */
  char prepped[8192];   /* the last plan torch.compile was prepared for */
  unsigned n_timed;     /* timed GPU calls, and those whose work on other */
  unsigned n_side;      /* streams ran past their own stream's (DONE) */
  unsigned n_host;      /* the call's host dispatch outlasted its GPU work */
  unsigned n_base_host; /* the same for the torch.compile'd model */
  unsigned n_tuned_host;/* and for its max-autotune one */
  unsigned long long o_ns, o_bound_ns; /* LOCKED's timer=: the GPU timer's
                                          overhead (median, median - min) */
  bool o_known;
  bool private_tmp;     /* LOCKED said private-tmp: /tmp/kf-jit is its own */
  char torch_ver[64];   /* LOCKED's torch= */
  /* the last layout prepared and the last draw, for p_fresh */
  const kf_harness_layout *last_L;
  kf_gen last_gen;
  bool have_gen;
  /* the reference's gate found GPU work of this side's last call still
   * running (runner.py _IdleGate): its verdict, given at its next fetch
   * or call */
  bool left_work;
  unsigned held_after;  /* reference calls it held the GPU before */
  char left_why[400];
  /* the GPU: WARMED came for the timed call about to run; the outputs
   * of the last call copied to kf_side.out_map (out_len bytes, the
   * image's offsets) when its DONE came */
  bool warmed;
  uint64_t clock0;      /* when the side's clock of this call started: its
                           draw's copy into the image (gen_one) */
  bool out_fixed;
  size_t out_len;
  /* the GPU's go word (runner.py _GoGate): the first word of a page after
   * the image's buffers, at go_off (0: none); a timed call's GPU work
   * waits there for go_seq, written once its draw is in the image */
  size_t go_off;
  bool gated;           /* LOCKED said gate=yes */
  bool queued;          /* QUEUED came within GO_WAIT_MS of WARMED */
  uint32_t go_seq;
  const char *mode;     /* runner.py's mode when not the side's model
                           ("sample": the sampler), else NULL */
} torch_side;

#define TE(e) ((torch_ev *)(e)->bes)
#define TS(s) ((torch_side *)(s)->be)

/* ------------------------------------------------------------- lines -- */

/* Takes one line out of lb into out, if it holds one. */
static bool take_line(linebuf *lb, char *out, size_t outlen) {
  char *nl = memchr(lb->buf, '\n', lb->n);
  if (!nl) return false;
  size_t k = (size_t)(nl - lb->buf);
  size_t c = k < outlen - 1 ? k : outlen - 1;
  memcpy(out, lb->buf, c);
  out[c] = '\0';
  memmove(lb->buf, nl + 1, lb->n - k - 1);
  lb->n -= k + 1;
  return true;
}

/* Waits up to timeout_ms for a line on the status pipe (from = 1) or, when
 * want_reply, the reply pipe (from = 0; the status pipe first).  1: a line
 * in out; 0: the status pipe closed (the zygote is gone); -1: timeout; -2:
 * a line too long on the reply pipe (garbage from the child). */
static int wait_line(torch_side *t, bool want_reply, int timeout_ms,
                     int *from, char *out, size_t outlen) {
  uint64_t deadline = kf_now_ms() + (uint64_t)timeout_ms;
  for (;;) {
    if (take_line(&t->st, out, outlen)) {
      *from = 1;
      return 1;
    }
    if (want_reply && take_line(&t->rp, out, outlen)) {
      *from = 0;
      return 1;
    }
    if (want_reply && t->rp.n == sizeof t->rp.buf) return -2;
    if (t->st.n == sizeof t->st.buf) return 0;
    uint64_t now = kf_now_ms();
    if (now >= deadline) return -1;
    struct pollfd pf[2] = {
        {.fd = t->status_fd, .events = POLLIN},
        {.fd = want_reply ? t->reply_fd : -1, .events = POLLIN}};
    int pr = poll(pf, 2, (int)(deadline - now));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    for (int k = 0; k < 2; k++) {
      if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      linebuf *lb = k == 0 ? &t->st : &t->rp;
      ssize_t n = read(pf[k].fd, lb->buf + lb->n, sizeof lb->buf - lb->n);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 && k == 0) return 0;
      if (n <= 0) { /* the child closed its end: only the zygote counts */
        want_reply = false;
        continue;
      }
      lb->n += (size_t)n;
    }
  }
}

static int say(torch_side *t, const char *text) {
  size_t len = strlen(text), off = 0;
  while (off < len) {
    ssize_t n = write(t->cmd_fd, text + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    off += (size_t)n;
  }
  return 0;
}

static uint64_t cpu_ns(const torch_side *t) {
  struct timespec ts;
  if (!t->cpuclock_ok || clock_gettime(t->cpuclock, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void kill_zygote(torch_side *t) {
  if (t->pid > 0 && !t->dead) {
    if (t->child > 0) kill(t->child, SIGKILL);
    /* a persistent runner leads its process group (its compilers) */
    kill(t->group ? -t->pid : t->pid, SIGKILL);
    kf_harness__reap(t->pid, 2000, t->group);
    t->dead = true;
  }
  t->child = 0;
  t->ready = false;
}

/* The zygote is gone or garbled: the side's runner is dead. */
static int zygote_lost(kf_side *s, const char *what) {
  (void)what;
  kill_zygote(TS(s));
  return KF_OUTCOME_INFRA_ERROR;
}

/* What the exit of a call's child means (EXITED code, or -signal). */
static int classify_exit(const kf_side *s, int code, char *why,
                         size_t whylen) {
  if (code == EXIT_VIOL) {
    snprintf(why, whylen, "%s: left the sandbox (see the reply above)",
             s->who);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  if (code >= 0) {
    snprintf(why, whylen, "%s exited with status %d during the call", s->who,
             code);
    return KF_OUTCOME_CRASH;
  }
  int sig = -code;
  switch (sig) {
  case SIGSYS:
    snprintf(why, whylen, "%s made a forbidden system call (file, network,"
             " process or exec; killed by the seccomp filter, SIGSYS)",
             s->who);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  case SIGXCPU:
    snprintf(why, whylen, "%s used up its CPU time limit (SIGXCPU)", s->who);
    return KF_OUTCOME_TIMEOUT;
  case SIGXFSZ:
    snprintf(why, whylen, "%s tried to write a file (SIGXFSZ)", s->who);
    return KF_OUTCOME_RESOURCE_LIMIT;
  case SIGKILL:
    snprintf(why, whylen, "%s was killed by SIGKILL (memory exhausted?)",
             s->who);
    return KF_OUTCOME_RESOURCE_LIMIT;
  case SIGSEGV:
  case SIGBUS:
    snprintf(why, whylen, "%s crashed: killed by %s (a write into a "
             "read-only input, or past a buffer?)", s->who,
             kf_harness__signame(sig));
    return KF_OUTCOME_CRASH;
  default:
    snprintf(why, whylen, "%s crashed: killed by %s", s->who,
             kf_harness__signame(sig));
    return KF_OUTCOME_CRASH;
  }
}

/* A reply line of the child that is not the one expected. */
static int reply_outcome(const kf_side *s, const char *line, char *why,
                         size_t whylen) {
  if (!strncmp(line, "VIOL ", 5)) {
    snprintf(why, whylen, "%s tried to leave the sandbox: %.1500s", s->who,
             line + 5);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  if (!strncmp(line, "ERR ", 4)) {
    const char *k = line + 4, *msg = strchr(k, ' ');
    msg = msg ? msg + 1 : "";
    if (!strncmp(k, "syntax", 6) || !strncmp(k, "load", 4)) {
      snprintf(why, whylen, "%s: %.1500s", s->who, msg);
      return KF_OUTCOME_COMPILE_ERROR;
    }
    if (!strncmp(k, "shape", 5)) {
      snprintf(why, whylen, "%s: %.1500s", s->who, msg);
      return KF_OUTCOME_WRONG_ANSWER;
    }
    if (!strncmp(k, "infra", 5)) {
      /* Written on the reply pipe, which the side's code holds: from a
       * candidate it is a claim, and an infrastructure failure is no
       * judgement of a candidate (a showdown entry keeps its place on
       * one).  The runner's own infra failures on that pipe -- mapping
       * a call's buffers -- have not been seen; a candidate's process
       * answers for them. */
      if (!s->is_ref) {
        snprintf(why, whylen, "%s reported an infrastructure failure from "
                 "its own process (%.1400s): its crash", s->who, msg);
        return KF_OUTCOME_CRASH;
      }
      snprintf(why, whylen, "%s runner: %.1500s", s->who, msg);
      return KF_OUTCOME_INFRA_ERROR;
    }
    snprintf(why, whylen, "%s raised %s%.1500s", s->who,
             !strncmp(k, "init", 4) ? "while being built: " : "", msg);
    return KF_OUTCOME_CRASH;
  }
  snprintf(why, whylen, "%s: unexpected reply '%.200s'", s->who, line);
  return KF_OUTCOME_CRASH;
}

/* Kills the current child and waits for the zygote's EXITED.  Returns the
 * exit code (or -signal) in *code; 0, or INFRA_ERROR (zygote lost). */
static int end_child(kf_side *s, int timeout_ms, int *code, char *why,
                     size_t whylen) {
  torch_side *t = TS(s);
  if (!t->child) return 0;
  kill(t->child, SIGKILL);
  char line[LINE];
  int from;
  for (;;) {
    int k = wait_line(t, false, timeout_ms, &from, line, sizeof line);
    if (k != 1) {
      snprintf(why, whylen, "%s runner: no EXITED after killing the call's "
               "process", s->who);
      return zygote_lost(s, "exit");
    }
    if (!strncmp(line, "EXITED ", 7)) break;
  }
  t->child = 0;
  t->ready = false;
  t->rp.n = 0; /* whatever the child left unread is dropped */
  *code = atoi(line + 7);
  return 0;
}

/* The child died (EXITED on the status pipe) or replied something else
 * than wanted: its outcome. */
static int child_failed(kf_side *s, int from, const char *line, int tmo,
                        char *why, size_t whylen) {
  torch_side *t = TS(s);
  if (from == 1 && !strncmp(line, "EXITED ", 7)) {
    t->child = 0;
    t->ready = false;
    /* a reply it wrote before dying says more than the status */
    char rl[LINE];
    if (take_line(&t->rp, rl, sizeof rl) && strncmp(rl, "READY", 5))
      return reply_outcome(s, rl, why, whylen);
    return classify_exit(s, atoi(line + 7), why, whylen);
  }
  int oc = reply_outcome(s, line, why, whylen);
  int code;
  char w2[256];
  if (end_child(s, tmo, &code, w2, sizeof w2)) {
    snprintf(why, whylen, "%s", w2);
    return KF_OUTCOME_INFRA_ERROR;
  }
  return oc;
}

/* ------------------------------------------------------------ plans -- */

static const char *dt_name(int dt) { return kf_dtype_name((kf_dtype)dt); }

/* The ARM line of a call: each input and output as [offset, dtype, dims]. */
static int plan_cmd(const kf_harness_layout *L, const char *cmd,
                    const char *extra, char *out, size_t outlen);

static int plan_of(const kf_harness_layout *L, char *out, size_t outlen) {
  return plan_cmd(L, "ARM", "", out, outlen);
}

/* cmd {"in":[...],"out":[...]EXTRA}: extra is "" or ",\"k\":v..." */
static int plan_cmd(const kf_harness_layout *L, const char *cmd,
                    const char *extra, char *out, size_t outlen) {
  size_t n = 0;
  int w = snprintf(out, outlen, "%s {\"in\":[", cmd);
  if (w < 0) return -1;
  n = (size_t)w;
  for (int side = 0; side < 2; side++) {
    int cnt = side ? L->n_out : L->n_in;
    for (int i = 0; i < cnt; i++) {
      uint64_t off = side ? L->out_off[i] : L->in_off[i];
      int dt = side ? L->out_dt[i] : L->in_dt[i];
      int nd = side ? L->out_ndim[i] : L->in_ndim[i];
      const int64_t *d = side ? L->out_dims[i] : L->in_dims[i];
      w = snprintf(out + n, outlen - n, "%s[%" PRIu64 ",\"%s\",[", i ? "," : "",
                   off, dt_name(dt));
      if (w < 0 || (size_t)w >= outlen - n) return -1;
      n += (size_t)w;
      for (int k = 0; k < nd; k++) {
        w = snprintf(out + n, outlen - n, "%s%" PRId64, k ? "," : "", d[k]);
        if (w < 0 || (size_t)w >= outlen - n) return -1;
        n += (size_t)w;
      }
      w = snprintf(out + n, outlen - n, "]]");
      if (w < 0 || (size_t)w >= outlen - n) return -1;
      n += (size_t)w;
    }
    w = side ? snprintf(out + n, outlen - n, "]%s}\n", extra)
             : snprintf(out + n, outlen - n, "],\"out\":[");
    if (w < 0 || (size_t)w >= outlen - n) return -1;
    n += (size_t)w;
  }
  return 0;
}

/* The armed child is gone before the harness let it run: its own doing
 * (its code has run by READY -- a timer it set can kill it while it is
 * stopped), so its outcome is read from the zygote's EXITED, which it
 * cannot forge, not reported as the infrastructure's (red team,
 * 2026-11-30: a wrong candidate hid behind infra_error that way). */
static int child_vanished(kf_ev *e, kf_side *s, const char *when) {
  int code, oc;
  if ((oc = end_child(s, 10000, &code, e->why, KF_HARNESS_WHY))) return oc;
  TS(s)->ready = false;
  oc = classify_exit(s, code, e->why, KF_HARNESS_WHY);
  size_t n = strlen(e->why);
  if (n + strlen(when) + 4 < KF_HARNESS_WHY)
    snprintf(e->why + n, KF_HARNESS_WHY - n, " (%s)", when);
  return oc == KF_OUTCOME_INFRA_ERROR ? KF_OUTCOME_CRASH : oc;
}

/* Stops the armed child until its RUN.  Its code (the side's module and
 * constructor) has run by READY and can replace the runner's own Python:
 * a child left running could watch its input buffers for the draw, which
 * comes after arming, and compute before RUN, outside the timed window.
 * Stopped, it cannot: SIGCONT comes right after the timer starts.  0, or
 * INFRA_ERROR when it does not stop. */
static int stop_child(kf_ev *e, kf_side *s) {
  torch_side *t = TS(s);
  if (kill(t->child, SIGSTOP) != 0) {
    if (errno == ESRCH) return child_vanished(e, s, "before its call");
    snprintf(e->why, KF_HARNESS_WHY, "%s: SIGSTOP: %s", s->who,
             strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  uint64_t deadline = kf_now_ms() + 10000;
  for (;;) {
    char st = kf_harness__proc_state(t->child);
    if (st == 'T' || st == 't') return 0;
    if (!st || st == 'Z' || st == 'X')
      return child_vanished(e, s, "before its call");
    if (kf_now_ms() > deadline) break;
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  snprintf(e->why, KF_HARNESS_WHY, "%s: the armed process did not stop",
           s->who);
  return KF_OUTCOME_INFRA_ERROR;
}

/* Forks a fresh child for plan (NULL: no buffers, the load check) and
 * waits for its READY, then stops it.  Idempotent for the same plan. */
static int arm_plan(kf_ev *e, kf_side *s, const char *plan, int tmo) {
  torch_side *t = TS(s);
  if (t->dead) {
    snprintf(e->why, KF_HARNESS_WHY, "%s runner is not running", s->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  if (t->child && t->ready && !strcmp(t->plan, plan)) return 0;
  int code;
  if (t->child && end_child(s, tmo, &code, e->why, KF_HARNESS_WHY))
    return KF_OUTCOME_INFRA_ERROR;
  if (say(t, plan)) {
    snprintf(e->why, KF_HARNESS_WHY, "%s runner: command pipe closed", s->who);
    return zygote_lost(s, "write");
  }
  char line[LINE];
  int from, k = wait_line(t, false, tmo, &from, line, sizeof line);
  if (k != 1 || strncmp(line, "FORKED ", 7)) {
    snprintf(e->why, KF_HARNESS_WHY, "%s runner: no FORKED (%.1800s)", s->who,
             k == -1 ? "timeout" : k == 1 ? line : "gone");
    return zygote_lost(s, "fork");
  }
  t->child = (pid_t)atoi(line + 7);
  t->rp.n = 0; /* only this child's replies count from here */
  t->cpuclock_ok = clock_getcpuclockid(t->child, &t->cpuclock) == 0;
  kf_strlcpy(t->plan, plan, sizeof t->plan);
  k = wait_line(t, true, tmo, &from, line, sizeof line);
  if (k == -1) {
    int c2;
    end_child(s, tmo, &c2, e->why, KF_HARNESS_WHY);
    snprintf(e->why, KF_HARNESS_WHY, "%s: not loaded after %d ms (its "
             "module-level code or constructor runs too long)", s->who, tmo);
    return KF_OUTCOME_TIMEOUT;
  }
  if (k == 0) {
    snprintf(e->why, KF_HARNESS_WHY, "%s runner ended while loading", s->who);
    return zygote_lost(s, "load");
  }
  if (k == -2) {
    int c2;
    end_child(s, tmo, &c2, e->why, KF_HARNESS_WHY);
    snprintf(e->why, KF_HARNESS_WHY, "%s: garbled reply", s->who);
    return KF_OUTCOME_CRASH;
  }
  if (from == 0 && !strcmp(line, "READY")) {
    t->ready = true;
    return stop_child(e, s);
  }
  return child_failed(s, from, line, tmo, e->why, KF_HARNESS_WHY);
}

/* ------------------------------------------------ persistent runners -- */
/*
 * Device cuda (a CUDA context cannot survive fork), or --torch-persistent
 * on CPU (the same code path, testable without a GPU): one process per
 * side serves every call (runner.py persist).  It is stopped (SIGSTOP,
 * confirmed in /proc) from the end of each call -- and of its load --
 * until the next call's timer has started, so it never runs while the
 * harness draws inputs into its memfd or while another side is timed.
 * Every line it writes after LOCKED is a claim of the side's process.
 */

static uint32_t defenses_of(const char *words);
static int call_timeout(const kf_ev *e, const kf_side *s);
static void flush_caches(torch_ev *c);
static int start_one(kf_ev *e, kf_side *s, size_t map_len);
static bool spec_samples(const kf_spec *sp);
static int sampler_start(kf_ev *e, size_t map_len);
static void sampler_stop(kf_ev *e);
static int torch_prepare(kf_ev *e, kf_side *s, const kf_harness_layout *L);
static int torch_gen(kf_ev *e, kf_side **sides, int n, const kf_gen *g);

static void jit_snapshot(kf_ev *e, kf_side *s, bool prep);

/* Stops the side's process and waits until /proc says so.  0, or CRASH
 * (the process is killed) when it does not stop. */
static int p_stop(kf_ev *e, kf_side *s) {
  torch_side *t = TS(s);
  /* the whole group: on the GPU a side may have started processes (its
   * compilers; setsid and setpgid are refused to them), and none of them
   * may run while the inputs are drawn */
  if (kill(-t->pid, SIGSTOP) == 0) {
    uint64_t deadline = kf_now_ms() + 10000;
    for (;;) {
      char st = kf_harness__proc_state(t->pid);
      if (st == 'T' || st == 't') return 0;
      if (!st || kf_now_ms() > deadline) break;
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
  }
  snprintf(e->why, KF_HARNESS_WHY, "%s: its process did not stop between "
           "calls", s->who);
  kill_zygote(t);
  return KF_OUTCOME_CRASH;
}

/* The process closed its reply pipe (or garbled it): its exit, as an
 * outcome. */
static int p_gone(kf_ev *e, kf_side *s, const char *during) {
  torch_side *t = TS(s);
  if (t->dead) {
    snprintf(e->why, KF_HARNESS_WHY, "%s runner is not running", s->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  /* a line it wrote before dying says more than the status */
  char rl[LINE];
  bool have = take_line(&t->st, rl, sizeof rl);
  kill(-t->pid, SIGCONT);
  int st = kf_harness__reap(t->pid, 2000, t->group);
  if (t->group) kill(-t->pid, SIGKILL); /* what it started dies with it */
  t->dead = true;
  if (have && (!strncmp(rl, "VIOL ", 5) || !strncmp(rl, "ERR ", 4)))
    return reply_outcome(s, rl, e->why, KF_HARNESS_WHY);
  int code = WIFSIGNALED(st) ? -WTERMSIG(st) : WEXITSTATUS(st);
  int oc = classify_exit(s, code, e->why, KF_HARNESS_WHY);
  size_t n = strlen(e->why);
  if (!strstr(e->why, during))
    snprintf(e->why + n, KF_HARNESS_WHY - n, " (%s)", during);
  return oc;
}

/* A line that is not the one wanted: its outcome; the process is
 * killed (a side whose operation failed is dead). */
static int p_bad_line(kf_ev *e, kf_side *s, const char *line) {
  int oc = reply_outcome(s, line, e->why, KF_HARNESS_WHY);
  kill_zygote(TS(s));
  return oc;
}

/* The reply to a command just sent: 0 with it in line, or the outcome --
 * TIMEOUT when none came in tmo ms (the process killed; `late` names what
 * ran past), or the process's end (p_gone, `during`). */
static int p_reply(kf_ev *e, kf_side *s, int tmo, const char *late,
                   const char *during, char *line, size_t len) {
  torch_side *t = TS(s);
  int from, k = wait_line(t, false, tmo, &from, line, len);
  if (k == -1) {
    kill_zygote(t);
    snprintf(e->why, KF_HARNESS_WHY, "%s: %s ran past %d ms; its process was "
             "killed", s->who, late, tmo);
    return KF_OUTCOME_TIMEOUT;
  }
  return k == 1 ? 0 : p_gone(e, s, during);
}

/* What LOCKED says: the defenses, torch's version and whether it has
 * torch.compile (written before any of the side's code ran). */
static void p_locked(kf_ev *e, kf_side *s, const char *line) {
  torch_ev *c = TE(e);
  torch_side *t = TS(s);
  s->defenses = defenses_of(line + 6);
  if (t->mode) return; /* the sampler: no side of the evaluation */
  const char *tw = strstr(line, " timer=");
  t->o_known = tw && sscanf(tw + 7, "%llu/%llu", &t->o_ns,
                            &t->o_bound_ns) == 2;
  t->gated = t->go_off && strstr(line, " gate=yes") != NULL;
  /* runner.py _GoGate: without it the sleep's protocol, whose harness
   * work inside the clock a candidate's process can skip */
  if (c->cuda && t->go_off && !t->gated)
    kf_log(KF_LOG_INFO, "%s: its timed calls are not held at a go word "
           "(the driver has no stream wait on host memory, or the image "
           "is not page-locked): the sleep's protocol", s->who);
  /* runner.py _pin: pageable copies still work, slower and noisier */
  if (strstr(line, " pinned=no"))
    kf_log(KF_LOG_INFO, "%s: its image is not page-locked (the driver "
           "refused): its copies to and from the GPU are pageable",
           s->who);
  /* the JIT sandbox: its own filter, and compilers are processes */
  if (strstr(line, " seccomp-jit"))
    s->defenses = (s->defenses | KF_HARNESS_DEF_SECCOMP) &
                  ~(uint32_t)KF_HARNESS_DEF_NPROC0;
  t->private_tmp = strstr(line, " private-tmp") != NULL;
  const char *sd = strstr(line, " jit-seed=");
  if (sd)
    kf_log(KF_LOG_INFO, "jit cache: the %s started with %d entries of its "
           "snapshot", s->who, atoi(sd + 10));
  const char *tv = strstr(line, "torch=");
  kf_strlcpy(t->torch_ver, "?", sizeof t->torch_ver);
  if (tv) {
    size_t n = strcspn(tv + 6, " ");
    snprintf(t->torch_ver, sizeof t->torch_ver, "%.*s",
             (int)(n < 60 ? n : 60), tv + 6);
  }
  if (!s->is_ref) {
    snprintf(c->view, sizeof c->view, "%s%s",
             strstr(line, " private-tmp") ? "private /tmp" : "host /tmp",
             strstr(line, " hidden-fs") ? ", homes/work/var/opt hidden"
                                        : ", nothing hidden");
    return;
  }
  const char *ver = t->torch_ver;
  bool has = strstr(line, "compile=yes") != NULL;
  snprintf(e->toolchain, sizeof e->toolchain, "torch %.56s (%.56s)", ver,
           c->python);
  snprintf(c->eager, sizeof c->eager, "eager: the reference (torch %s, %s),"
           " timed with the candidate", ver, e->spec->torch_device);
  t->compile_ok = t->tuned_ok = has && c->cuda;
  snprintf(e->baselines, sizeof e->baselines, "%.110s; torch.compile: %s",
           c->eager,
           t->compile_ok ? "timed beside the reference (default mode and "
                           "max-autotune-no-cudagraphs), on the same inputs "
                           "by the same CUDA-event timer"
           : has ? "not timed (torch.compile needs the JIT sandbox of "
                   "device cuda)"
                 : "not timed (this torch has no torch.compile)");
}

/* After the spawn: LOCKED, then the side's load (READY or its failure),
 * then stopped.  0 or an outcome. */
static int p_start_wait(kf_ev *e, kf_side *s) {
  torch_side *t = TS(s);
  char line[LINE];
  int from, k = wait_line(t, false, START_MS, &from, line, sizeof line);
  if (k == 1 && !strncmp(line, "FAIL syntax ", 12)) {
    snprintf(e->why, KF_HARNESS_WHY, "%s: SyntaxError: %.1800s", s->who,
             line + 12);
    kill_zygote(t);
    return KF_OUTCOME_COMPILE_ERROR;
  }
  if (k != 1 || strncmp(line, "LOCKED", 6)) {
    snprintf(e->why, KF_HARNESS_WHY, "%s runner did not start: %.1800s",
             s->who, k == 1 ? line : k == -1 ? "timeout" : "exited");
    kill_zygote(t);
    return KF_OUTCOME_INFRA_ERROR;
  }
  p_locked(e, s, line);
  int tmo = e->o->call_timeout_ms * (s->is_ref ? 3 : 1) + 20000;
  /* on the GPU a module may build its kernels at load (load_inline runs
   * nvcc and a C++ compiler: tens of seconds) */
  if (TE(e)->jit && tmo < START_MS) tmo = START_MS;
  k = wait_line(t, false, tmo, &from, line, sizeof line);
  if (k == -1) {
    kill_zygote(t);
    snprintf(e->why, KF_HARNESS_WHY, "%s: not loaded after %d ms (its "
             "module-level code or constructor runs too long)", s->who, tmo);
    return KF_OUTCOME_TIMEOUT;
  }
  if (k != 1) return p_gone(e, s, "while loading");
  if (strcmp(line, "READY")) return p_bad_line(e, s, line);
  int oc = p_stop(e, s);
  if (!oc && !t->mode) jit_snapshot(e, s, false);
  return oc;
}

/* Sends the stopped process one command line, then continues it: the
 * command is waiting when it resumes, so there is no moment in which it
 * runs, sees the inputs drawn while it was stopped, and has no command
 * yet (on the GPU, where the side's own events time it, such a moment
 * would be outside the timed window). */
static int p_send(kf_ev *e, kf_side *s, const char *cmd) {
  torch_side *t = TS(s);
  if (say(t, cmd) || kill(-t->pid, SIGCONT) != 0) {
    snprintf(e->why, KF_HARNESS_WHY, "%s: its process is gone", s->who);
    return p_gone(e, s, "before the call");
  }
  return 0;
}

/* The reference, before a timed call at a new shape: torch.compile of its
 * model, in both modes, prepared (compiled, run twice) untimed, so that
 * the timed calls find it warm.  Never an outcome of the evaluation: a
 * failure only takes that baseline out, with the reason in baselines
 * (max-autotune failing keeps the default mode). */
static int p_prep(kf_ev *e, kf_side *s, const kf_call *c) {
  torch_side *t = TS(s);
  char plan[8192];
  if (plan_cmd(c->L, "PREP", "", plan, sizeof plan)) return 0;
  if (!strcmp(plan, t->prepped)) return 0;
  int oc = p_send(e, s, plan);
  if (oc) return oc;
  char line[LINE];
  if ((oc = p_reply(e, s, PREP_MS, "torch.compile of its model",
                    "compiling with torch.compile", line, sizeof line)))
    return oc;
  if (!strcmp(line, "PREPARED")) {
    kf_strlcpy(t->prepped, plan, sizeof t->prepped);
  } else if (!strncmp(line, "PREPARED NOTUNE", 15)) {
    kf_strlcpy(t->prepped, plan, sizeof t->prepped);
    t->tuned_ok = false;
    snprintf(e->baselines, sizeof e->baselines, "%.110s; torch.compile: "
             "timed beside the reference (default mode), on the same inputs "
             "by the same CUDA-event timer; max-autotune-no-cudagraphs: not "
             "timed (it failed: %.80s)", TE(e)->eager,
             line + 15 + strspn(line + 15, " "));
  } else if (!strncmp(line, "NOCOMPILE", 9)) {
    t->compile_ok = t->tuned_ok = false;
    snprintf(e->baselines, sizeof e->baselines, "%.110s; torch.compile: not "
             "timed, in either mode (it failed: %.80s)", TE(e)->eager,
             line + 9 + strspn(line + 9, " "));
  } else {
    return p_bad_line(e, s, line);
  }
  if ((oc = p_stop(e, s))) return oc;
  /* the reference is trusted, and what it has built is torch.compile's
   * code for these shapes: later evaluations of it on this worker start
   * from it (a candidate never gets a reference's snapshot: the key holds
   * the source and the role) */
  if (t->compile_ok) jit_snapshot(e, s, true);
  return 0;
}

/* kf_side.note from the side's counts (the words runner.py's _Charge.note
 * and _Charge.host_note use; tests/unit/test_torch_timer.py checks). */
static void side_note(const torch_side *t, kf_side *s) {
  size_t n = 0;
  s->note[0] = '\0';
  if (2 * t->n_side > t->n_timed)
    n += (size_t)snprintf(s->note + n, sizeof s->note - n, "work on streams "
                          "other than the current one in %u of %u timed "
                          "calls: charged", t->n_side, t->n_timed);
  /* the reference and a candidate are charged their host time when it
   * is the larger (runner.py _Charge.charge_call), the reference's
   * compiled models their GPU time (charge_trusted) */
  const char *trusted = "not charged (trusted: its GPU time)";
  if (2 * t->n_host > t->n_timed && n < sizeof s->note)
    n += (size_t)snprintf(s->note + n, sizeof s->note - n, "%sthe call's "
                          "host dispatch outlasted its GPU work in %u of %u "
                          "timed calls: host time charged", n ? "; " : "",
                          t->n_host, t->n_timed);
  if (2 * t->n_base_host > t->n_timed && n < sizeof s->note)
    n += (size_t)snprintf(s->note + n, sizeof s->note - n, "%storch.compile's"
                          " host dispatch outlasted its GPU work in %u of %u "
                          "timed calls: %s", n ? "; " : "", t->n_base_host,
                          t->n_timed, trusted);
  if (2 * t->n_tuned_host > t->n_timed && n < sizeof s->note)
    snprintf(s->note + n, sizeof s->note - n, "%smax-autotune's host "
             "dispatch outlasted its GPU work in %u of %u timed calls: %s",
             n ? "; " : "", t->n_tuned_host, t->n_timed, trusted);
}

/* A candidate whose call left GPU work running: its verdict. */
static int left_work(kf_ev *e, kf_side *s) {
  torch_side *t = TS(s);
  kf_strlcpy(e->why, t->left_why, KF_HARNESS_WHY);
  kill_zygote(t);
  return KF_OUTCOME_SANDBOX_VIOLATION;
}

/* The reference's gate (runner.py _IdleGate, FLAGS 16) waited for GPU work
 * of another process before its call: the one that ran the call before
 * it, which was stopped since -- a stopped process's queued GPU work goes
 * on running.  Honest calls leave none (the runner synchronizes the whole
 * device before DONE), so only a side whose runner was patched or whose
 * work outlives the synchronize is named.  Its verdict is given at its
 * next fetch or call (the pipeline judges one side per failure). */
static void gate_convicts(kf_side *ref, kf_side *prev, unsigned long long busy,
                          unsigned long long nslow, unsigned long long ranout) {
  if (!prev || prev == ref || prev->is_ref || prev->oc || !prev->be) {
    kf_log(KF_LOG_WARN, "%s: the GPU was busy with another process's work "
           "for %llu us before its call (%llu slow probes), and no candidate "
           "ran the call before it", ref->who, busy / 1000, nslow);
    return;
  }
  torch_side *p = TS(prev);
  if (p->left_work) return;
  /* after the second, as harness/cuda's idle_convicts (IDLE_STRIKES): one
   * wait is what another process or the driver can do */
  if (++p->held_after < 2) {
    kf_log(KF_LOG_WARN, "%s: the GPU was busy for %llu us (%llu slow "
           "probes) before the reference's call that followed its call; "
           "named if it happens again", prev->who, busy / 1000, nslow);
    return;
  }
  p->left_work = true;
  snprintf(p->left_why, sizeof p->left_why, "%s left GPU work running after "
           "its call returned: the next call waited %s%llu us for the GPU "
           "(%llu probes found it busy), a second time after one of its "
           "calls; work that outlives the call is not timed and slows what "
           "runs next", prev->who, ranout ? "over " : "", busy / 1000,
           nslow);
}

/* QUEUED n: the timed call queued behind the go word (_GoGate).  0, or
 * the outcome of a forged, stale or failing reply. */
static int queued_line(kf_ev *e, kf_side *s, const char *line, uint32_t seq) {
  unsigned long long q = 0;
  if (strncmp(line, "QUEUED ", 7)) return p_bad_line(e, s, line);
  if (sscanf(line + 7, "%llu", &q) != 1 || q != seq) {
    snprintf(e->why, KF_HARNESS_WHY, "%s: reply '%.100s' to warm-up %u: "
             "forged or stale reply", s->who, line, seq);
    kill_zygote(TS(s));
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  return 0;
}

/* The first half of a timed call on the GPU, before the side's inputs
 * are drawn (draw_per_side): WARM -- the gate, a null sample of the
 * timer, the side's function on dummies, all waited for (runner.py).
 * Its process is left running: from the draw on, everything until its
 * outputs are fixed is on its clock (p_call). */
static int p_warm(kf_ev *e, kf_side *s, const kf_call *c) {
  torch_ev *te = TE(e);
  torch_side *t = TS(s);
  if (t->left_work) return left_work(e, s);
  if (t->dead) {
    snprintf(e->why, KF_HARNESS_WHY, "%s runner is not running", s->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  char extra[64], plan[8192];
  uint32_t seq = ++t->seq;
  snprintf(extra, sizeof extra, ",\"seq\":%u,\"timed\":true", seq);
  if (plan_cmd(c->L, "WARM", extra, plan, sizeof plan)) {
    kf_strlcpy(e->why, "the call's buffer plan is too long", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  t->warmed = false;
  t->clock0 = 0;
  int oc = p_send(e, s, plan);
  if (oc) return oc;
  /* the side's function runs on dummies: as long as a call */
  int tmo = call_timeout(e, s);
  char line[LINE];
  if ((oc = p_reply(e, s, tmo, "the warm-up before its call",
                    "warming up for its call", line, sizeof line)))
    return oc;
  unsigned long long rseq = 0, flags = 0, busy = 0, nslow = 0, ranout = 0;
  if (strncmp(line, "WARMED ", 7)) return p_bad_line(e, s, line);
  if (sscanf(line + 7, "%llu %llu %llu %llu %llu", &rseq, &flags, &busy,
             &nslow, &ranout) != 5 || rseq != seq) {
    snprintf(e->why, KF_HARNESS_WHY, "%s: reply '%.100s' to warm-up %u: "
             "forged or stale reply", s->who, line, seq);
    kill_zygote(t);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  /* only the reference's runner is trusted to tell (p_call) */
  if (s->is_ref && (flags & 16))
    gate_convicts(s, te->last, busy, nslow, ranout);
  t->warmed = true;
  t->queued = false;
  t->go_seq = seq;
  if (!t->gated) return 0;
  /* the call queued behind the go word (runner.py _GoGate): a late
   * QUEUED comes before the call's DONE (p_call) */
  int from, k = wait_line(t, false, GO_WAIT_MS, &from, line, sizeof line);
  if (k == -1) return 0;
  if (k != 1) return p_gone(e, s, "queuing its call");
  if ((oc = queued_line(e, s, line, seq))) return oc;
  t->queued = true;
  return 0;
}

/* The outputs of the call that just replied, copied where the pipeline
 * reads them (kf_side.out_map): what the side's process or its GPU work
 * writes into its image later is not what is judged (torch_fetch names
 * it). */
static void fix_outputs(kf_side *s, const kf_harness_layout *L) {
  torch_side *t = TS(s);
  for (int i = 0; i < L->n_out; i++)
    kf_harness__par_memcpy(s->out_map + L->out_off[i], s->map + L->out_off[i],
                           L->out_b[i]);
  t->out_fixed = true;
}

/* One call of a persistent side.  Charged: on CPU the larger of the wall
 * time from RUN to DONE and the CPU time the process used from its
 * continue to its stop (the zygote's rule); on the GPU the process's
 * CUDA-event time -- a claim, held to the wall time this process saw
 * around it (a longer one is forged, as harness/cuda holds its runners),
 * and, timed, to the side's clock (kf_side.wall_ns: from its draw,
 * through RUN..DONE, to the outputs' copy; the pipeline's
 * kf_harness__wall_bound). */
static int p_call(kf_ev *e, kf_side *s, const kf_call *c, uint64_t *ns) {
  torch_ev *te = TE(e);
  torch_side *t = TS(s);
  if (t->dead) {
    snprintf(e->why, KF_HARNESS_WHY, "%s runner is not running", s->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  kf_side *prev = te->last;
  te->last = s;
  bool gpu_timed = te->cuda && c->timed;
  if (gpu_timed && !t->warmed) {
    snprintf(e->why, KF_HARNESS_WHY, "%s: a timed call without its warm-up "
             "(WARM)", s->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  t->warmed = false;
  t->out_fixed = false;
  uint64_t clock0 = t->clock0;
  t->clock0 = 0;
  char extra[64], plan[8192];
  uint32_t seq = ++t->seq;
  snprintf(extra, sizeof extra, ",\"seq\":%u,\"timed\":%s", seq,
           c->timed ? "true" : "false");
  if (plan_cmd(c->L, "RUN", extra, plan, sizeof plan)) {
    kf_strlcpy(e->why, "the call's buffer plan is too long", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  if (c->timed && !te->cuda) flush_caches(te);
  int tmo = call_timeout(e, s);
  /* on the GPU the first calls JIT-compile (Triton builds its launcher
   * with a C compiler, then ptxas): untimed calls get time for that */
  if (te->cuda && !c->timed && tmo < START_MS / 2) tmo = START_MS / 2;
  /* the draw is in the image (gen_one): the call's GPU work, queued at
   * WARM behind the go word, may start */
  bool gated = gpu_timed && t->gated;
  uint64_t c0 = cpu_ns(t), t0 = kf_now_ns();
  /* after t0: nothing of the call's GPU work can precede its RUN..DONE,
   * which bounds its claim */
  if (gated)
    __atomic_store_n((uint32_t *)(s->map + t->go_off), t->go_seq,
                     __ATOMIC_RELEASE);
  int oc = p_send(e, s, plan);
  if (oc) return oc;
  char line[LINE];
  oc = p_reply(e, s, tmo, "the call", "during the call", line, sizeof line);
  if (!oc && gated && !t->queued) {
    /* QUEUED came after GO_WAIT_MS (p_warm): its line first */
    if ((oc = queued_line(e, s, line, t->go_seq))) return oc;
    oc = p_reply(e, s, tmo, "the call", "during the call", line,
                 sizeof line);
  }
  uint64_t t1 = kf_now_ns();
  if (oc) return oc;
  unsigned long long rseq = 0, ev = 0, base = 0, tuned = 0, side = 0;
  unsigned long long busy = 0, nslow = 0, ranout = 0;
  if (strncmp(line, "DONE ", 5)) return p_bad_line(e, s, line);
  if (s->out_map) fix_outputs(s, c->L);
  uint64_t t2 = kf_now_ns();
  if (gpu_timed && s->wall_on)
    s->wall_ns += t2 - (clock0 ? clock0 : t0);
  /* a diagnosis of what the clock covers, side by side (the runner's
   * figures follow its reply's eight numbers; a candidate's are its own
   * word) */
  if (te->trace_clock && gpu_timed) {
    const char *tr = strstr(line, " t=");
    unsigned long long ra = 0, rb = 0, rc = 0, rd = 0, rs = 0;
    if (tr) sscanf(tr + 3, "%llu,%llu,%llu,%llu,%llu", &ra, &rb, &rc, &rd,
                   &rs);
    kf_log(KF_LOG_INFO, "clock of %s call %u: draw %" PRIu64 " us, send to "
           "reply %" PRIu64 " us (runner: args %llu, timed call %llu of "
           "which events %llu, outputs put %llu; sleep %llu cycles), reply "
           "to outputs fixed %" PRIu64 " us%s", s->who, seq,
           clock0 && t0 > clock0 ? (t0 - clock0) / 1000 : 0,
           (t1 - t0) / 1000, ra, rb, rd, rc, rs, (t2 - t1) / 1000,
           tr && strstr(tr, " g=") ? strstr(tr, " g=") : "");
  }
  if (sscanf(line + 5, "%llu %llu %llu %llu %llu %llu %llu %llu", &rseq, &ev,
             &base, &tuned, &side, &busy, &nslow, &ranout) != 8 ||
      rseq != seq) {
    snprintf(e->why, KF_HARNESS_WHY, "%s: reply '%.100s' to call %u: "
             "forged or stale reply", s->who, line, seq);
    kill_zygote(t);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  /* the reference's compiled models, timed after its DONE (runner.py
   * BASED_NEXT) */
  if (s->is_ref && (side & 32)) {
    unsigned long long bseq = 0, bflags = 0;
    /* they start once the outputs are copied (fix_outputs, above): the
     * reference's process adds nothing to its clock that a candidate's
     * does not */
    if (say(t, "BASE\n")) return p_gone(e, s, "before timing its compiled "
                                      "models");
    if ((oc = p_reply(e, s, tmo, "its compiled models' timing",
                      "timing its compiled models", line, sizeof line)))
      return oc;
    if (strncmp(line, "BASED ", 6) ||
        sscanf(line + 6, "%llu %llu %llu %llu", &bseq, &base, &tuned,
               &bflags) != 4 || bseq != seq)
      return p_bad_line(e, s, line);
    side |= bflags & 12;
  }
  if ((oc = p_stop(e, s))) return oc;
  /* only the reference's runner is trusted to tell: a candidate's could
   * name its rival in a showdown */
  if (s->is_ref && (side & 16)) gate_convicts(s, prev, busy, nslow, ranout);
  uint64_t c1 = cpu_ns(t);
  uint64_t wall = t1 - t0, cpu = c1 > c0 ? c1 - c0 : 0;
  if (te->cuda && c->timed) {
    if (ev > wall + 1000000) {
      snprintf(e->why, KF_HARNESS_WHY, "%s reported %llu ns for a call that "
               "took %" PRIu64 " ns: forged reply", s->who, ev, wall);
      kill_zygote(t);
      return KF_OUTCOME_SANDBOX_VIOLATION;
    }
    *ns = ev ? ev : wall;
    /* runner.py's _Charge.charge_call (for the reference too), FLAGS: 1
     * work left on another stream past the end of the call's own was
     * charged, 2 the call's host dispatch outlasted its GPU work (and was
     * charged instead), 4 the
     * same for the torch.compile'd model, 8 for its max-autotune one; each
     * said when most calls had it; 16 (any call) the gate found another
     * process's GPU work before the call: gate_convicts, above */
    t->n_timed++;
    if (side & 1) t->n_side++;
    if (side & 2) t->n_host++;
    if (side & 4) t->n_base_host++;
    if ((side & 8) && t->tuned_ok) t->n_tuned_host++;
    side_note(t, s);
  } else {
    *ns = wall > cpu ? wall : cpu;
  }
  if (s->is_ref && c->timed && base && t->compile_ok)
    s->t_base[KF_BASE_COMPILE] = base;
  if (s->is_ref && c->timed && tuned && t->tuned_ok)
    s->t_base[KF_BASE_TUNED] = tuned;
  return 0;
}

/* kf_call.fresh: the determinism check's second run goes to a new
 * process of the side -- the one that ran the first is killed with its
 * group, its memfd unmapped and closed -- which loads the side's code
 * anew and gets the last layout's canaries and the last draw, as the old
 * one had them before the first run.  Nothing the first run left in its
 * process (a Python global, a torch cache, device memory, registers a
 * Triton kernel reads through inline asm) reaches the second: a result
 * that depends on it differs, and the check says nondeterministic.  The
 * zygote model needs none of this: its every call is a fresh child. */
static int write_config(kf_ev *e, kf_side *s);

static int p_fresh(kf_ev *e, kf_side *s) {
  torch_side *t = TS(s);
  if (!t->last_L || !t->have_gen) {
    snprintf(e->why, KF_HARNESS_WHY, "%s: no fresh process for this call "
             "(no layout and draw to give it)", s->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  const kf_harness_layout *L = t->last_L;
  kf_gen g = t->last_gen;
  torch_side old = *t;
  kill_zygote(t);
  if (t->cmd_fd >= 0) close(t->cmd_fd);
  if (t->status_fd >= 0) close(t->status_fd);
  if (t->reply_fd >= 0) close(t->reply_fd);
  if (t->memfd >= 0) close(t->memfd);
  /* the buffers' length: start_one adds the go word's page again */
  size_t map_len = t->go_off ? t->go_off : s->map_len;
  if (s->map) munmap(s->map, s->map_len);
  s->map = NULL;
  s->map_len = 0;
  memset(t, 0, sizeof *t);
  t->cmd_fd = t->status_fd = t->reply_fd = t->memfd = -1;
  /* what the side's note counts is the evaluation's, not the process's */
  t->n_timed = old.n_timed;
  t->n_side = old.n_side;
  t->n_host = old.n_host;
  t->n_base_host = old.n_base_host;
  t->n_tuned_host = old.n_tuned_host;
  t->out_len = old.out_len; /* kf_side.out_map stays: the same map_len */
  /* its load's snapshot, taken when the first process said READY */
  int oc = write_config(e, s);
  if (oc) return oc;
  oc = start_one(e, s, map_len);
  if (oc) return oc;
  kf_side *one[1] = {s};
  if ((oc = torch_prepare(e, s, L)) || (oc = torch_gen(e, one, 1, &g)))
    return oc;
  return 0;
}

/* The GPU lock (--gpu-lock, default $TMPDIR/kf-gpu-<device>.lock, the
 * CUDA backend's file): one evaluation at a time runs on the GPU. */
static int take_gpu_lock(kf_ev *e) {
  torch_ev *c = TE(e);
  char path[1200];
  if (e->o->gpu_lock && *e->o->gpu_lock)
    kf_strlcpy(path, e->o->gpu_lock, sizeof path);
  else
    snprintf(path, sizeof path, "%s/kf-gpu-%d.lock",
             kf_getenv_or("TMPDIR", "/tmp"), e->o->device);
  c->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (c->lock_fd < 0) {
    snprintf(e->why, KF_HARNESS_WHY, "GPU lock %s: %s", path,
             strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  while (flock(c->lock_fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    snprintf(e->why, KF_HARNESS_WHY, "GPU lock %s: %s", path,
             strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  return 0;
}

/* --------------------------------------------------------- operations -- */

static int torch_open(kf_ev *e) {
  torch_ev *c = calloc(1, sizeof *c);
  if (!c) {
    kf_strlcpy(e->why, "out of memory", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  e->bes = c;
  c->lock_fd = -1;
  c->cuda = !strcmp(e->spec->torch_device, "cuda");
  c->jit = c->cuda || e->o->torch_jit;
  c->persist = c->jit || e->o->torch_persistent;
  /* on the GPU a side's time is its own process's claim */
  e->draw_per_side = c->cuda;
  c->trace_clock = getenv("KF_TORCH_TRACE_CLOCK") != NULL;
  const char *g = getenv("KF_TORCH_GATE");
  c->no_gate = g && !strcmp(g, "0");
  c->cpu = e->o->cpu >= 0 ? e->o->cpu : sched_getcpu();
  /* on the GPU the time is the device's; the runners' compilers and the
   * driver's threads are not squeezed onto one core */
  if (c->cpu >= 0 && !c->cuda) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(c->cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
      kf_log(KF_LOG_WARN, "cannot pin to cpu %d: %s; timing unpinned",
             c->cpu, strerror(errno));
  }
  kf_harness__torch_python(c->python, sizeof c->python);
  if (access(c->python, X_OK) != 0) {
    snprintf(e->why, KF_HARNESS_WHY, "torch problems need %s with torch "
             "(Debian: python3-torch; or set KF_PYTHON): %s", c->python,
             strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  return 0;
}

static void torch_idle(kf_ev *e) {
  torch_ev *c = TE(e);
  if (c && c->lock_fd >= 0) close(c->lock_fd);
  if (c) c->lock_fd = -1;
}

static void torch_close(kf_ev *e) {
  torch_ev *c = TE(e);
  if (!c) return;
  torch_idle(e);
  sampler_stop(e);
  free(c->flush);
  if (c->stage) munmap(c->stage, c->stage_len);
  free(c);
  e->bes = NULL;
}

static int torch_compile(kf_ev *e, kf_side **sides, int n, char *facts,
                         size_t factslen) {
  for (int i = 0; i < n; i++) {
    kf_side *s = sides[i];
    if (s->oc) continue;
    size_t len = strlen(s->source);
    const char *bad = len > MAX_SOURCE ? "is over 1 MiB" : NULL;
    if (bad && s->is_ref) {
      snprintf(e->why, KF_HARNESS_WHY, "reference.py %s", bad);
      return KF_OUTCOME_SPEC_ERROR;
    }
    if (bad) {
      s->oc = KF_OUTCOME_COMPILE_ERROR;
      snprintf(s->why, KF_HARNESS_WHY, "the candidate's source %s", bad);
    }
  }
  snprintf(facts, factslen, "python source: compiled by the runner's "
           "zygote (syntax only) before any of it runs");
  return 0;
}

/* torch.json of a side: what runner.py needs beside the source. */
static char *side_config(kf_ev *e, kf_side *s) {
  const kf_spec *sp = e->spec;
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "kind", sp->torch_kind);
  cJSON_AddStringToObject(j, "device", sp->torch_device);
  cJSON_AddStringToObject(j, "role", s->is_ref ? "reference" : "candidate");
  /* device cuda: the JIT sandbox (Triton, load_inline, torch.compile) */
  cJSON_AddBoolToObject(j, "jit", TE(e)->jit);
  cJSON_AddNumberToObject(j, "cuda_index", e->o->device);
  /* a side's process on the GPU queues its timed calls behind a go word
   * in its image's last page (start_one); the sampler times nothing */
  if (TE(e)->cuda && TE(e)->persist && !(s->be && TS(s)->mode) &&
      !TE(e)->no_gate)
    cJSON_AddBoolToObject(j, "go_page", true);
  cJSON *knobs = cJSON_AddObjectToObject(j, "knobs");
  for (int i = 0; knobs && i < s->n_knobs; i++)
    cJSON_AddStringToObject(knobs, s->knobs[i].name, s->knobs[i].value);
  cJSON *outs = cJSON_AddArrayToObject(j, "outputs");
  for (int i = 0; outs && i < sp->n_outputs; i++)
    cJSON_AddItemToArray(outs, cJSON_CreateString(sp->outputs[i].name));
  /* init, args, case and data come verbatim from the spec's torch section */
  cJSON *root = cJSON_ParseWithLength(sp->json, sp->json_len);
  cJSON *tsec = root ? cJSON_GetObjectItemCaseSensitive(root, "torch") : NULL;
  static const char *const verbatim[] = {"init", "args", "case", "data"};
  for (size_t k = 0; k < sizeof verbatim / sizeof *verbatim; k++) {
    cJSON *v = tsec ? cJSON_GetObjectItemCaseSensitive(tsec, verbatim[k])
                    : NULL;
    if (v) cJSON_AddItemToObject(j, verbatim[k], cJSON_Duplicate(v, true));
  }
  cJSON_Delete(root);
  /* GPU MODE's case per size, each size as its values in params order
   * (spec.c gm_cases), which the sampler matches a SAMPLE's size against */
  cJSON *x = cJSON_Parse(sp->torch_extra);
  cJSON *cases = x ? cJSON_DetachItemFromObjectCaseSensitive(x, "cases") : NULL;
  if (cases) cJSON_AddItemToObject(j, "cases", cases);
  cJSON_Delete(x);
  char *text = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return text;
}

static int write_file(const char *dir, const char *name, const char *text,
                      char *why) {
  char path[1400];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0644);
  if (fd < 0) {
    snprintf(why, KF_HARNESS_WHY, "%s: %s", path, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  size_t len = strlen(text), off = 0;
  while (off < len) {
    ssize_t n = write(fd, text + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      snprintf(why, KF_HARNESS_WHY, "%s: %s", path, strerror(errno));
      close(fd);
      return KF_OUTCOME_INFRA_ERROR;
    }
    off += (size_t)n;
  }
  close(fd);
  return 0;
}

/* The JIT cache's key of a side (jitcache.h); 0 or -1.  The GPUs the
 * worker was given count too: a build for one GPU's architecture must not
 * seed a process on another kind sharing the host's cache.  prep: the key
 * of the reference's state after PREP (its torch.compile builds too),
 * kept apart from its load's. */
static int side_key(kf_ev *e, kf_side *s, bool prep, char *key,
                    size_t keylen) {
  char *cfg = side_config(e, s);
  if (!cfg) return -1;
  char py[800];
  snprintf(py, sizeof py, "%s\n%.256s%s", TE(e)->python,
           kf_getenv_or("CUDA_VISIBLE_DEVICES", ""),
           prep ? "\nafter PREP" : "");
  int rc = kf_harness__jit_key(s->source, cfg, py, key, keylen);
  free(cfg);
  return rc;
}

/* The side's torch.json, (re)written: with "jit_seed", the directory of
 * its load's snapshot, when the JIT cache holds one -- for the reference
 * the one taken after its torch.compile builds, when there is one (only
 * as root: the runner reads it before it drops to nobody). */
static int write_config(kf_ev *e, kf_side *s) {
  char *cfg = side_config(e, s);
  if (!cfg) {
    kf_strlcpy(e->why, "out of memory", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  char key[80], seed[1400];
  bool cache = TE(e)->jit && geteuid() == 0;
  bool after_prep = cache && s->is_ref &&
                    side_key(e, s, true, key, sizeof key) == 0 &&
                    kf_harness__jit_lookup(key, seed, sizeof seed) == 0;
  if (after_prep || (cache && side_key(e, s, false, key, sizeof key) == 0 &&
                     kf_harness__jit_lookup(key, seed, sizeof seed) == 0)) {
    cJSON *j = cJSON_Parse(cfg);
    char *with = j && cJSON_AddStringToObject(j, "jit_seed", seed)
                     ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (with) {
      free(cfg);
      cfg = with;
      kf_log(KF_LOG_INFO, "jit cache: the %s starts from the snapshot of "
             "its %s (%.12s)", s->who,
             after_prep ? "torch.compile builds" : "load", key);
    }
  }
  char path[1400];
  snprintf(path, sizeof path, "%s/torch.json", s->jail);
  int oc = 0;
  if (unlink(path) != 0 && errno != ENOENT) {
    snprintf(e->why, KF_HARNESS_WHY, "%s: %s", path, strerror(errno));
    oc = KF_OUTCOME_INFRA_ERROR;
  }
  if (!oc) oc = write_file(s->jail, "torch.json", cfg, e->why);
  free(cfg);
  return oc;
}

/* Right after a JIT side's READY, stopped, before any input exists in its
 * image: its /tmp/kf-jit into the JIT cache, unless its key has a
 * snapshot (a side seeded from one is never snapshotted again).  A
 * failure costs later processes a compile, never the evaluation. */
static void jit_snapshot(kf_ev *e, kf_side *s, bool prep) {
  torch_side *t = TS(s);
  char key[80], path[1400], why[300];
  if (!TE(e)->jit || geteuid() != 0 || !t->private_tmp ||
      side_key(e, s, prep, key, sizeof key) != 0 ||
      kf_harness__jit_lookup(key, path, sizeof path) == 0)
    return;
  int rc = kf_harness__jit_store(key, t->pid, t->torch_ver, why, sizeof why);
  kf_log(rc < 0 ? KF_LOG_WARN : KF_LOG_INFO, "jit cache: the %s's %s %s "
         "(%.12s): %s", s->who, prep ? "torch.compile builds" : "load",
         rc == 0 ? "kept" : "not kept", key, why);
}

static int torch_link(kf_ev *e, kf_side *s, char *facts, size_t factslen) {
  int oc = kf_harness__workdir_jail(&e->wd, s->base, s->jail, sizeof s->jail,
                                    e->why, KF_HARNESS_WHY);
  if (oc) return oc;
  oc = write_config(e, s);
  if (!oc) oc = write_file(s->jail, "side.py", s->source, e->why);
  /* a GPU MODE reference that kf import gave its directory's modules
   * (task.py, utils.py): a candidate gets them too, as the runner reads
   * them from the reference's text (runner.py _read_modules) */
  if (!oc && !s->is_ref && e->reference_source &&
      strstr(e->reference_source, "\n_kf_module(\""))
    oc = write_file(s->jail, "modules.py", e->reference_source, e->why);
  if (!oc) oc = write_file(s->jail, "runner.py", kf_harness__torch_runner_py,
                           e->why);
  if (!oc && !s->is_ref)
    snprintf(facts, factslen, "python: no link step (the runner's sandbox "
             "and audit hook apply at run time)");
  return oc;
}

static uint32_t defenses_of(const char *words) {
  static const struct {
    const char *w;
    uint32_t bit;
  } m[] = {{"chroot", KF_HARNESS_DEF_CHROOT},
           {"uid-nobody", KF_HARNESS_DEF_SETUID},
           {"no-new-privs", KF_HARNESS_DEF_NO_NEW_PRIVS},
           {"seccomp", KF_HARNESS_DEF_SECCOMP},
           {"netns", KF_HARNESS_DEF_NETNS}};
  uint32_t d = KF_HARNESS_DEF_RLIMITS | KF_HARNESS_DEF_NPROC0;
  char buf[LINE];
  kf_strlcpy(buf, words, sizeof buf);
  char *save = NULL;
  for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
      if (!strcmp(w, m[i].w)) d |= m[i].bit;
  return d;
}

static int start_one(kf_ev *e, kf_side *s, size_t map_len) {
  torch_ev *c = TE(e);
  torch_side *t = TS(s);
  /* one process serving every command: the persistent runners and the
   * sampler */
  bool persist = c->persist || t->mode;
  /* the go word's page after the buffers (side_config's go_page) */
  t->go_off = 0;
  if (c->cuda && c->persist && !t->mode && !c->no_gate) {
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    t->go_off = (map_len + pg - 1) / pg * pg;
    map_len = t->go_off + pg;
  }
  t->memfd = memfd_create(s->who, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (t->memfd < 0) {
    snprintf(e->why, KF_HARNESS_WHY, "memfd_create: %s", strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  if (ftruncate(t->memfd, (off_t)map_len) != 0 ||
      fcntl(t->memfd, F_ADD_SEALS,
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    snprintf(e->why, KF_HARNESS_WHY, "memfd of %zu bytes: %s", map_len,
             strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  s->map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, t->memfd,
                0);
  if (s->map == MAP_FAILED) {
    s->map = NULL;
    snprintf(e->why, KF_HARNESS_WHY, "mmap memfd: %s", strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  s->map_len = map_len;
  /* on the GPU the outputs are judged from a copy taken at DONE
   * (fix_outputs): only the pages of outputs are ever touched */
  if (TE(e)->cuda && !s->out_map && !t->mode) {
    s->out_map = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s->out_map == MAP_FAILED) {
      s->out_map = NULL;
      snprintf(e->why, KF_HARNESS_WHY, "mmap of %zu bytes for the outputs: "
               "%s", map_len, strerror(errno));
      return KF_OUTCOME_INFRA_ERROR;
    }
    t->out_len = map_len;
  }
  /* The GPUs the worker was given (kf run runs one worker per GPU with
   * CUDA_VISIBLE_DEVICES=i and --device cuda:0): the runner's cuda_index
   * then counts among those, as kf-harness-cuda's --device does for the
   * footprint rate and for the CUDA backend's runners.  Without them the
   * runner saw every GPU and measured GPU 0 for every worker.  Refused,
   * not cut, when too long: a cut list names other GPUs. */
  static const char *const gpu_vars[] = {"CUDA_VISIBLE_DEVICES",
                                         "CUDA_DEVICE_ORDER"};
  char gpu_env[2][256];
  int ngpu = 0;
  for (int i = 0; c->cuda && i < 2; i++) {
    const char *v = getenv(gpu_vars[i]);
    if (!v) continue;
    int k = snprintf(gpu_env[ngpu], sizeof gpu_env[ngpu], "%s=%s",
                     gpu_vars[i], v);
    if (k < 0 || (size_t)k >= sizeof gpu_env[ngpu]) {
      snprintf(e->why, KF_HARNESS_WHY, "%s is longer than %zu bytes",
               gpu_vars[i], sizeof gpu_env[0] - 1);
      return KF_OUTCOME_INFRA_ERROR;
    }
    ngpu++;
  }
  int cp[2], sp[2], rp[2];
  if (pipe2(cp, O_CLOEXEC)) goto pipefail;
  if (pipe2(sp, O_CLOEXEC)) {
    close(cp[0]);
    close(cp[1]);
    goto pipefail;
  }
  if (pipe2(rp, O_CLOEXEC)) {
    close(cp[0]);
    close(cp[1]);
    close(sp[0]);
    close(sp[1]);
    goto pipefail;
  }
  char script[1400];
  snprintf(script, sizeof script, "%s/runner.py", s->jail);
  /* -s -B and an environment built whole here, not -I: -I ignores
   * PYTHONHASHSEED, and the sides' processes hashed strings each its own
   * way (runner.py's head says what that broke; it drops the jail from
   * the import path itself) */
  char *argv[] = {c->python, "-s", "-B", script,
                  (char *)(t->mode ? t->mode : c->persist ? "persist"
                                                          : "serve"),
                  s->jail, NULL};
  /* one thread: the timed process runs alone on the pinned core, as the
   * CPU backend's does.  The GPU's JIT finds nvcc in CUDA's usual place;
   * no LD_LIBRARY_PATH is passed (a bundle's Debian libraries would
   * shadow the Python's own). */
  char cuda_home[600] = "CUDA_HOME=/usr/local/cuda";
  const char *ch = getenv("CUDA_HOME");
  if (ch && ch[0] == '/') snprintf(cuda_home, sizeof cuda_home,
                                   "CUDA_HOME=%.500s", ch);
  /* On the GPU also the Python's own bin directory: a virtualenv keeps
   * the tools its packages install there (ninja, which load_inline
   * requires), and the JIT sandbox lets the side run them anyway. */
  char gpu_path[700] = "PATH=/usr/local/cuda/bin:/usr/bin:/bin";
  const char *slash = strrchr(c->python, '/');
  if (slash && slash != c->python && (size_t)(slash - c->python) < 500 &&
      strncmp(c->python, "/usr/bin/", 9) && strncmp(c->python, "/bin/", 5))
    snprintf(gpu_path, sizeof gpu_path,
             "PATH=%.*s:/usr/local/cuda/bin:/usr/bin:/bin",
             (int)(slash - c->python), c->python);
  char *envp[9] = {"OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1",
                   c->cuda ? gpu_path : "PATH=/usr/bin:/bin",
                   "LC_ALL=C.UTF-8", "PYTHONHASHSEED=0"};
  int ne = 5;
  if (c->cuda) envp[ne++] = cuda_home;
  for (int i = 0; i < ngpu; i++) envp[ne++] = gpu_env[i];
  envp[ne] = NULL;
  /* a persistent process serves every call of the evaluation */
  int cpu_s = e->o->call_timeout_ms / 1000 * (persist ? 60 : 20) +
              (persist ? 600 : 120);
  kf_harness_spawn_opts so = {
      .path = c->python,
      .argv = argv,
      .envp = envp,
      /* persistent: fd 1 is the process's replies, its stderr nowhere */
      .fd = {cp[0], sp[1], persist ? -1 : rp[1], t->memfd},
      .isolate = true,
      .new_pgrp = persist,
      .limits = {{RLIMIT_CORE, 0},
                 {RLIMIT_FSIZE, 0},
                 {RLIMIT_NOFILE, 64},
                 {RLIMIT_CPU, (rlim_t)cpu_s},
                 {RLIMIT_AS, (rlim_t)map_len + ((rlim_t)16 << 30)}},
      .n_limits = 5,
  };
  if (c->jit) {
    /* the JIT writes its caches and runs compilers with many files open */
    so.limits[1].soft = (rlim_t)4 << 30;
    so.limits[2].soft = 4096;
  }
  /* the driver reserves tens of GiB of address space (no RLIMIT_AS, as
   * for harness/cuda's runners) */
  if (c->cuda) so.n_limits = 4;
  char err[512];
  int rc = kf_harness__spawn(&so, &t->pid, err, sizeof err);
  t->group = persist;
  close(cp[0]);
  close(sp[1]);
  close(rp[1]);
  t->cmd_fd = cp[1];
  t->status_fd = sp[0];
  t->reply_fd = rp[0];
  if (rc) {
    t->pid = 0;
    t->dead = true;
    snprintf(e->why, KF_HARNESS_WHY, "cannot start the %s runner: %s",
             s->who, err);
    return KF_OUTCOME_INFRA_ERROR;
  }
  if (persist) {
    /* the CPU time of the whole process, charged when it exceeds the
     * wall time (p_call) */
    t->cpuclock_ok = clock_getcpuclockid(t->pid, &t->cpuclock) == 0;
    return p_start_wait(e, s);
  }
  char line[LINE];
  int from, k = wait_line(t, false, START_MS, &from, line, sizeof line);
  if (k == 1 && !strncmp(line, "READY", 5)) {
    s->defenses = defenses_of(line + 5);
    const char *tv = strstr(line, "torch=");
    if (s->is_ref && tv) {
      char ver[64];
      size_t n = strcspn(tv + 6, " ");
      snprintf(ver, sizeof ver, "%.*s", (int)(n < 60 ? n : 60), tv + 6);
      bool compile = strstr(line, "compile=yes") != NULL;
      /* a measurement's identity: torch is the toolchain here (a stored
       * number is reused only under the same one) */
      snprintf(e->toolchain, sizeof e->toolchain, "torch %.56s (%.56s)", ver,
               TE(e)->python);
      snprintf(e->baselines, sizeof e->baselines,
               "eager: the reference (torch %s, %s), timed with the "
               "candidate; torch.compile: %s", ver, e->spec->torch_device,
               compile ? "not timed (this harness times eager only)"
                       : "not timed (this torch has no torch.compile)");
    }
    int tmo = e->o->call_timeout_ms * (s->is_ref ? 3 : 1) + 20000;
    /* a first child runs the side's code and builds its model now (no
     * buffers): load failures show up in this stage */
    return arm_plan(e, s, "ARM {}\n", tmo);
  }
  if (k == 1 && !strncmp(line, "FAIL syntax ", 12)) {
    snprintf(e->why, KF_HARNESS_WHY, "%s: SyntaxError: %.1800s", s->who,
             line + 12);
    kill_zygote(t);
    return KF_OUTCOME_COMPILE_ERROR;
  }
  snprintf(e->why, KF_HARNESS_WHY, "%s runner did not start: %.1800s",
           s->who, k == 1 ? line : k == -1 ? "timeout" : "exited");
  kill_zygote(t);
  return KF_OUTCOME_INFRA_ERROR;
pipefail:
  snprintf(e->why, KF_HARNESS_WHY, "pipe: %s", strerror(errno));
  return KF_OUTCOME_INFRA_ERROR;
}

static int torch_start(kf_ev *e, kf_side **sides, int n, size_t map_len,
                       char *facts, size_t factslen) {
  torch_ev *c = TE(e);
  for (int i = 0; i < n; i++) {
    kf_side *s = sides[i];
    torch_side *t = calloc(1, sizeof *t);
    if (!t) {
      kf_strlcpy(e->why, "out of memory", KF_HARNESS_WHY);
      return KF_OUTCOME_INFRA_ERROR;
    }
    t->cmd_fd = t->status_fd = t->reply_fd = t->memfd = -1;
    s->be = t;
    if (s->oc) continue;
    int oc = start_one(e, s, map_len);
    if (oc && s->is_ref) return oc;
    if (oc) {
      s->oc = oc;
      kf_strlcpy(s->why, e->why, KF_HARNESS_WHY);
    }
  }
  c->flush = malloc(FLUSH_LEN);
  if (!c->flush) {
    kf_strlcpy(e->why, "no memory for the cache flush buffer", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  memset(c->flush, 1, FLUSH_LEN);
  uint32_t def = 0;
  for (int i = 1; i < n; i++)
    if (!sides[i]->oc) def = sides[i]->defenses;
  char defs[256];
  kf_harness__defenses_str(def, defs, sizeof defs);
  if (!(def & KF_HARNESS_DEF_SECCOMP) ||
      (!(def & KF_HARNESS_DEF_CHROOT) && !c->jit))
    kf_log(KF_LOG_WARN, "torch sandbox incomplete: %s", defs);
  if (c->cuda) {
    int oc = take_gpu_lock(e);
    if (oc) return oc;
    int l = snprintf(facts, factslen, "defenses: %s, audit hook; python "
                     "%s; one process per side on GPU %d, CUDA-event timing, "
                     "JIT allowed (Triton, load_inline, torch.compile: "
                     "compilers may run; %s)", defs, c->python,
                     e->o->device, c->view);
    /* what each process's timer subtracts for its synchronize, and the
     * most side-stream work one call could leave uncharged (runner.py's
     * _Charge), as calibrated before the side's code ran */
    bool any = false;
    for (int i = 0; i < n; i++) {
      torch_side *t = TS(sides[i]);
      if (sides[i]->oc || !t->o_known || l < 0 || (size_t)l >= factslen)
        continue;
      l += snprintf(facts + l, factslen - (size_t)l, "%s%s %.1f/%.1f",
                    any ? ", " : "; timer overhead o (median/median-min us):"
                                 " ",
                    sides[i]->who, t->o_ns / 1e3, t->o_bound_ns / 1e3);
      any = true;
    }
  } else {
    snprintf(facts, factslen, "defenses: %s, audit hook; python %s, one "
             "thread, pinned to cpu %d; %s", defs, c->python, c->cpu,
             c->persist ? "one process per side serving every call, "
                          "stopped between calls"
                        : "a fresh process per call");
  }
  if (spec_samples(e->spec)) {
    int oc = sampler_start(e, map_len);
    if (oc) return oc;
    size_t l = strlen(facts);
    snprintf(facts + l, factslen - l, "; inputs of distribution 'sample' "
             "drawn by the reference's %s in a process of its own",
             strcmp(e->spec->torch_kind, "gpumode") ? "get_inputs()"
                                                    : "generate_input()");
  }
  return 0;
}

/* ----------------------------------------------------------- sampler -- */

/* Distribution `sample` (spec.h): an input drawn by the reference's own
 * get_inputs(), run under the draw's key by a process of its own -- the
 * reference's source, trusted, locked down as the reference's runners
 * are (runner.py sample) -- so that it keeps whatever structure its
 * author gave it (a scale, an offset, 0/1 masks, integral labels, a
 * permutation, a minimum), which fixed distributions lose (red team of
 * 2026-12-01, docs/redteam/2026-12-01/import).  It writes the draw into
 * its own image at the layout's offsets; gen copies it from there. */

static bool spec_samples(const kf_spec *sp) {
  for (int i = 0; i < sp->n_inputs; i++)
    for (int j = 0; j < sp->inputs[i].n_dists; j++)
      if (sp->inputs[i].dists[j] == KF_DIST_SAMPLE) return true;
  return false;
}

static int sampler_start(kf_ev *e, size_t map_len) {
  torch_ev *c = TE(e);
  kf_side *s = calloc(1, sizeof *s);
  torch_side *t = calloc(1, sizeof *t);
  if (!s || !t) {
    free(s);
    free(t);
    kf_strlcpy(e->why, "out of memory", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  t->cmd_fd = t->status_fd = t->reply_fd = t->memfd = -1;
  t->mode = "sample";
  s->be = t;
  kf_strlcpy(s->who, strcmp(e->spec->torch_kind, "gpumode")
                         ? "the reference's get_inputs()"
                         : "the reference's generate_input()", sizeof s->who);
  kf_strlcpy(s->base, "sampler", sizeof s->base);
  s->is_ref = true; /* its torch.json says role reference */
  s->source = e->reference_source;
  c->sampler = s;
  int oc = kf_harness__workdir_jail(&e->wd, s->base, s->jail, sizeof s->jail,
                                    e->why, KF_HARNESS_WHY);
  char *cfg = oc ? NULL : side_config(e, s);
  if (!oc && !cfg) {
    kf_strlcpy(e->why, "out of memory", KF_HARNESS_WHY);
    oc = KF_OUTCOME_INFRA_ERROR;
  }
  if (!oc) oc = write_file(s->jail, "torch.json", cfg, e->why);
  free(cfg);
  if (!oc) oc = write_file(s->jail, "side.py", s->source, e->why);
  if (!oc) oc = write_file(s->jail, "runner.py", kf_harness__torch_runner_py,
                           e->why);
  if (!oc) oc = start_one(e, s, map_len);
  /* whatever fails here is the problem's or the machine's, not a
   * candidate's: the reference's own get_inputs() does not load */
  if (oc == KF_OUTCOME_COMPILE_ERROR || oc == KF_OUTCOME_CRASH ||
      oc == KF_OUTCOME_TIMEOUT || oc == KF_OUTCOME_SANDBOX_VIOLATION) {
    size_t l = strlen(e->why);
    snprintf(e->why + l, KF_HARNESS_WHY - l, " (distribution 'sample')");
    oc = KF_OUTCOME_SPEC_ERROR;
  }
  return oc;
}

/* The inputs of draw g whose distribution is `sample`, drawn by the
 * sampler into its image; *which gets a bit per such input (0: none).
 * 0, or the outcome (SPEC_ERROR: get_inputs() failed or gave a tensor
 * the spec's size does not have). */
static int sampler_draw(kf_ev *e, const kf_gen *g, uint32_t *which) {
  torch_ev *c = TE(e);
  const kf_harness_layout *L = g->L;
  char extra[900];
  size_t n = 0;
  uint64_t key = 0;
  *which = 0;
  for (int i = 0; i < L->n_in; i++) {
    if (g->dist[i] != KF_DIST_SAMPLE) continue;
    if (!*which) key = g->key[i];
    *which |= 1u << i;
    n += (size_t)snprintf(extra + n, sizeof extra - n, "%s%d",
                          n ? "," : ",\"which\":[", i);
  }
  if (!*which) return 0;
  kf_side *s = c->sampler;
  if (!s || TS(s)->dead) {
    snprintf(e->why, KF_HARNESS_WHY, "distribution 'sample': %s",
             s ? "the reference's get_inputs() is not running"
               : "no process runs the reference's get_inputs()");
    return KF_OUTCOME_INFRA_ERROR;
  }
  n += (size_t)snprintf(extra + n, sizeof extra - n, "],\"key\":%" PRIu64
                        ",\"size\":[", key);
  /* the size drawn: a GPU MODE problem's case is the size's (torch.cases) */
  for (int k = 0; k < e->spec->n_params && n < sizeof extra; k++)
    n += (size_t)snprintf(extra + n, sizeof extra - n, "%s%" PRId64,
                          k ? "," : "", L->size.v[k]);
  if (n < sizeof extra) snprintf(extra + n, sizeof extra - n, "]");
  char plan[8192];
  if (plan_cmd(L, "SAMPLE", extra, plan, sizeof plan)) {
    kf_strlcpy(e->why, "the draw's buffer plan is too long", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  uint64_t t0 = kf_now_ns();
  int oc = p_send(e, s, plan);
  if (oc) return oc == KF_OUTCOME_INFRA_ERROR ? oc : KF_OUTCOME_SPEC_ERROR;
  char line[LINE];
  oc = p_reply(e, s, e->o->call_timeout_ms * 3 + 5000, "drawing the inputs",
               "drawing the inputs", line, sizeof line);
  e->draw_ns += kf_now_ns() - t0;
  if (!oc && !strcmp(line, "SAMPLED")) return 0;
  if (!oc && !strncmp(line, "ERR spec ", 9)) {
    snprintf(e->why, KF_HARNESS_WHY, "%s (distribution 'sample'): %.1800s",
             s->who, line + 9);
    return KF_OUTCOME_SPEC_ERROR;
  }
  /* its timeout or its exit, named (p_reply), or a reply it has no
   * business giving */
  char why[600];
  if (oc)
    kf_strlcpy(why, e->why, sizeof why);
  else
    snprintf(why, sizeof why, "%s: %.500s", s->who, line);
  snprintf(e->why, KF_HARNESS_WHY, "distribution 'sample': %s", why);
  sampler_stop(e);
  /* as at its start (sampler_start): the problem's, not a candidate's,
   * unless the machine's */
  return !oc || oc == KF_OUTCOME_INFRA_ERROR ? KF_OUTCOME_INFRA_ERROR
                                             : KF_OUTCOME_SPEC_ERROR;
}

static int torch_prepare(kf_ev *e, kf_side *s, const kf_harness_layout *L) {
  /* a new layout: a staged draw of another (same_draw compares the
   * layout's address, which a later layout may reuse) is not reused */
  if (TE(e)) TE(e)->have_staged = false;
  if (s->be) TS(s)->last_L = L;
  kf_harness_region r[2 * KF_HARNESS_MAX_T + 2];
  int n = kf_harness__gap_regions(L, r);
  for (int i = 0; i < n; i++)
    kf_harness__canary(s->map, r[i].off, r[i].off + r[i].len, L->canary_salt);
  return 0;
}

static bool same_draw(const kf_gen *a, const kf_gen *b) {
  if (a->L != b->L) return false;
  for (int i = 0; i < a->L->n_in; i++)
    if (a->key[i] != b->key[i] || a->dist[i] != b->dist[i] ||
        a->range[i] != b->range[i])
      return false;
  return true;
}

/* Input i of draw g into dst: the sampler's bytes where its
 * distribution is `sample` (smp, sampler_draw), else the spec's fill. */
static void draw_input(kf_ev *e, const kf_gen *g, int i, uint32_t smp,
                       unsigned char *dst) {
  const kf_harness_layout *L = g->L;
  if (smp & (1u << i))
    kf_harness__par_memcpy(dst, TE(e)->sampler->map + L->in_off[i],
                           L->in_b[i]);
  else
    kf_harness__fill(dst, L->in_dt[i], L->in_n[i], g->dist[i], g->range[i],
                     g->key[i]);
}

/* One side's draw (draw_per_side): the repetition's inputs drawn once
 * into this process's own memory, then copied into the side's image.
 * The side's clock (wall_on) starts with the copy, where its process
 * (running since WARM) can first see them, and runs without a break to
 * the copy of its outputs at DONE (p_call): whatever the eval process
 * does in between, its process could use. */
static int gen_one(kf_ev *e, kf_side *s, const kf_gen *g) {
  torch_ev *c = TE(e);
  const kf_harness_layout *L = g->L;
  size_t need = 0;
  for (int i = 0; i < L->n_in; i++) need += L->in_b[i];
  if (!c->have_staged || !same_draw(&c->staged, g)) {
    if (need > c->stage_len) {
      if (c->stage) munmap(c->stage, c->stage_len);
      c->stage_len = 0;
      c->have_staged = false;
      c->stage = mmap(NULL, need, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (c->stage == MAP_FAILED) {
        c->stage = NULL;
        snprintf(e->why, KF_HARNESS_WHY, "mmap of %zu bytes for the draw: "
                 "%s", need, strerror(errno));
        /* left running since WARM: nothing of it may run on */
        if (s->be) kill_zygote(TS(s));
        return KF_OUTCOME_INFRA_ERROR;
      }
      c->stage_len = need;
    }
    uint32_t smp;
    int oc = sampler_draw(e, g, &smp);
    if (oc) {
      if (s->be) kill_zygote(TS(s)); /* running since WARM */
      return oc;
    }
    size_t o = 0;
    for (int i = 0; i < L->n_in; i++) {
      draw_input(e, g, i, smp, c->stage + o);
      o += L->in_b[i];
    }
    c->staged = *g;
    c->have_staged = true;
  }
  if (s->be) TS(s)->clock0 = kf_now_ns();
  size_t o = 0;
  for (int i = 0; i < L->n_in; i++) {
    kf_harness__par_memcpy(s->map + L->in_off[i], c->stage + o, L->in_b[i]);
    o += L->in_b[i];
  }
  if (s->be) {
    TS(s)->last_gen = *g;
    TS(s)->have_gen = true;
  }
  return 0;
}

static int torch_gen(kf_ev *e, kf_side **sides, int n, const kf_gen *g) {
  if (e->draw_per_side && n == 1) return gen_one(e, sides[0], g);
  const kf_harness_layout *L = g->L;
  uint32_t smp;
  int oc = sampler_draw(e, g, &smp);
  if (oc) return oc;
  for (int i = 0; i < L->n_in; i++) {
    unsigned char *dst = sides[0]->map + L->in_off[i];
    draw_input(e, g, i, smp, dst);
    for (int k = 1; k < n; k++)
      if (sides[k]->map)
        kf_harness__par_memcpy(sides[k]->map + L->in_off[i], dst, L->in_b[i]);
  }
  for (int k = 0; k < n; k++)
    if (sides[k]->be) {
      TS(sides[k])->last_gen = *g;
      TS(sides[k])->have_gen = true;
    }
  return 0;
}

static int call_timeout(const kf_ev *e, const kf_side *s) {
  return e->o->call_timeout_ms * (s->is_ref ? 3 : 1) + 5000;
}

/* The call's outputs and workspace in the side's image set to the poison
 * (unwritten elements stay recognisable). */
static void poison_outputs(kf_side *s, const kf_call *c) {
  const kf_harness_layout *L = c->L;
  for (int i = 0; i < L->n_out; i++)
    memset(s->map + L->out_off[i],
           kf_harness__out_poison(L->out_dt[i], c->alt_poison), L->out_b[i]);
  if (L->ws_b) memset(s->map + L->ws_off, c->ws_poison, L->ws_b);
}

static int torch_arm(kf_ev *e, kf_side *s, const kf_call *c) {
  if (TE(e)->persist) {
    /* a showdown reports no compile baseline: nothing to compile for */
    int oc = s->is_ref && c->timed && TS(s)->compile_ok &&
                     strcmp(e->mode, "showdown")
                 ? p_prep(e, s, c)
                 : 0;
    if (!oc && c->timed && TE(e)->cuda) {
      /* poisoned before the side's clock starts (torch_call skips it):
       * a memset of the outputs is no part of what the clock measures */
      poison_outputs(s, c);
      oc = p_warm(e, s, c);
    }
    return oc;
  }
  char plan[8192];
  if (plan_of(c->L, plan, sizeof plan)) {
    kf_strlcpy(e->why, "the call's buffer plan is too long", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  /* Outputs and workspace poisoned before the child that maps them
   * exists: left as the previous call wrote them, they carried a counter
   * from one call process to the next (red team, 2026-11-30).  The call
   * poisons them again after the child's warm call. */
  poison_outputs(s, c);
  /* loading runs the side's code and builds its model: the call timeout
   * and the time python needs to fork */
  return arm_plan(e, s, plan, call_timeout(e, s) + 20000);
}

__attribute__((no_sanitize("address", "undefined")))
static void flush_caches(torch_ev *c) {
  memset(c->flush, (int)(c->flush_sink & 0xff), FLUSH_LEN);
  uint64_t x = 0;
  for (size_t i = 0; i < FLUSH_LEN; i += 64) x += c->flush[i];
  c->flush_sink += x + 1;
}

static int torch_call(kf_ev *e, kf_side *s, const kf_call *c, uint64_t *ns) {
  if (TS(s)->left_work) return left_work(e, s);
  if (TE(e)->persist && c->fresh && !s->is_ref) {
    int oc = p_fresh(e, s);
    if (oc) return oc;
  }
  torch_side *t = TS(s);
  if (!t->warmed) poison_outputs(s, c); /* else torch_arm did */
  if (TE(e)->persist) return p_call(e, s, c, ns);
  int oc = torch_arm(e, s, c);
  if (oc) return oc;
  if (c->timed || c->cold) flush_caches(TE(e));
  int tmo = call_timeout(e, s);
  uint64_t c0 = cpu_ns(t), t0 = kf_now_ns();
  /* everything after the child is continued is charged */
  if (kill(t->child, SIGCONT) != 0) {
    if (errno == ESRCH) return child_vanished(e, s, "before its call");
    snprintf(e->why, KF_HARNESS_WHY, "%s: SIGCONT: %s", s->who,
             strerror(errno));
    return zygote_lost(s, "cont");
  }
  if (say(t, "RUN\n")) {
    snprintf(e->why, KF_HARNESS_WHY, "%s runner: command pipe closed",
             s->who);
    return zygote_lost(s, "run");
  }
  char line[LINE];
  int from, k = wait_line(t, true, tmo, &from, line, sizeof line);
  uint64_t t1 = kf_now_ns();
  /* killed before its clock is read, as the CPU backend does
   * (runner_client.c): once SIGKILL is pending the child runs no more of
   * its code, so work after a forged DONE is in the reading however late
   * this process got the core; read first, only the scheduler's order
   * charged it (red team, 2026-11-30) */
  uint64_t c1 = cpu_ns(t);
  if (k == 1 && from == 0 && t->child > 0) {
    /* a reading after the kill can fail (the zygote reaped it): the one
     * before stands, this process held the core in between */
    if (kill(t->child, SIGKILL) == 0) {
      uint64_t c2 = cpu_ns(t);
      if (c2 > c1) c1 = c2;
    }
  }
  uint64_t wall = t1 - t0, cpu = c1 > c0 ? c1 - c0 : 0;
  *ns = wall > cpu ? wall : cpu;
  if (k == 1 && from == 0 && !strcmp(line, "DONE")) {
    int code;
    oc = end_child(s, tmo, &code, e->why, KF_HARNESS_WHY);
    return oc;
  }
  if (k == -1) {
    int code;
    end_child(s, tmo, &code, e->why, KF_HARNESS_WHY);
    snprintf(e->why, KF_HARNESS_WHY, "%s: the call ran past %d ms", s->who,
             tmo);
    return KF_OUTCOME_TIMEOUT;
  }
  if (k == 0) {
    snprintf(e->why, KF_HARNESS_WHY, "%s runner ended during a call", s->who);
    return zygote_lost(s, "call");
  }
  if (k == -2) {
    int code;
    end_child(s, tmo, &code, e->why, KF_HARNESS_WHY);
    snprintf(e->why, KF_HARNESS_WHY, "%s: garbled reply", s->who);
    return KF_OUTCOME_CRASH;
  }
  return child_failed(s, from, line, tmo, e->why, KF_HARNESS_WHY);
}

/* The memfd is the side's memory: nothing to fetch.  On the GPU the
 * outputs judged are the copy fix_outputs took at DONE; one that differs
 * from the image now was written after the side said its call was done
 * (a device-to-host copy left running, work on another thread). */
static int torch_fetch(kf_ev *e, kf_side *s, const kf_harness_region *r,
                       int n) {
  torch_side *t = TS(s);
  if (t->left_work) return left_work(e, s);
  if (!s->out_map) return 0;
  if (!t->out_fixed) {
    snprintf(e->why, KF_HARNESS_WHY, "%s: outputs fetched with no call's "
             "reply to fix them", s->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  for (int i = 0; i < n; i++)
    if (memcmp(s->out_map + r[i].off, s->map + r[i].off, r[i].len)) {
      snprintf(e->why, KF_HARNESS_WHY, "%s: its outputs changed after its "
               "call said DONE (bytes %" PRIu64 "..%" PRIu64 " of its "
               "image): work that outlives its call is not timed", s->who,
               r[i].off, r[i].off + r[i].len);
      kill_zygote(t);
      return KF_OUTCOME_SANDBOX_VIOLATION;
    }
  return 0;
}

static int torch_probe(kf_ev *e, kf_side *s, const kf_harness_layout *L,
                       kf_probe *out) {
  (void)e;
  kf_harness_region g[2 * (2 * KF_HARNESS_MAX_T + 1)];
  int n = kf_harness__guard_regions(L, g);
  out->bad = UINT64_MAX;
  for (int i = 0; i < n && out->bad == UINT64_MAX; i++) {
    size_t b = kf_harness__canary_bad(s->map, g[i].off, g[i].off + g[i].len,
                                      L->canary_salt);
    if (b != g[i].off + g[i].len) out->bad = b;
  }
  for (int i = 0; i < L->n_in; i++)
    out->in_digest[i] = kf_harness__digest(s->map + L->in_off[i], L->in_b[i]);
  return 0;
}

static void torch_stop(kf_ev *e, kf_side *s);

static void sampler_stop(kf_ev *e) {
  torch_ev *c = TE(e);
  if (!c || !c->sampler) return;
  /* trusted, and stopped or waiting for its next command: killed */
  if (c->sampler->be) kill_zygote(TS(c->sampler));
  torch_stop(e, c->sampler);
  free(c->sampler);
  c->sampler = NULL;
}

static void torch_stop(kf_ev *e, kf_side *s) {
  if (!s || !s->be) return;
  torch_side *t = TS(s);
  /* a persistent process is stopped: nothing of it needs a clean end */
  if (TE(e) && TE(e)->persist) kill_zygote(t);
  if (t->pid > 0 && !t->dead) {
    if (t->child > 0) kill(t->child, SIGKILL);
    if (say(t, "EXIT\n") == 0 && !t->child) {
      kf_harness__reap(t->pid, 2000, false);
      t->dead = true;
    }
    kill_zygote(t);
  }
  if (t->cmd_fd >= 0) close(t->cmd_fd);
  if (t->status_fd >= 0) close(t->status_fd);
  if (t->reply_fd >= 0) close(t->reply_fd);
  if (t->memfd >= 0) close(t->memfd);
  if (s->map) munmap(s->map, s->map_len);
  s->map = NULL;
  if (s->out_map) munmap(s->out_map, t->out_len);
  s->out_map = NULL;
  free(t);
  s->be = NULL;
}

/* On the GPU, the rate at a layout's footprint with a timed call's caches
 * (the runner's flush leaves L2 clean, as the CUDA runner's does), for
 * the too-fast floor; on the CPU the worker's ceilings stand alone. */
static double torch_footprint_gbps(kf_ev *e, size_t bytes) {
  if (!TE(e)->cuda) return 0;
  return kf_harness__gpu_footprint_gbps(e->o->device, e->o->cuda_warm_us,
                                        bytes);
}

/* On the CPU the worker's ceilings come from `kf-harness ceilings`, whose
 * copy loop this is; a GPU the worker has to itself. */
static double torch_stream_gbps(kf_ev *e) {
  if (TE(e)->cuda) return 0;
  return kf_harness__measure_copy_gbps();
}

const kf_backend kf_harness_torch_backend = {
    .name = "torch",
    .language = "python",
    .guard = KF_SPEC_GUARD_CPU,
    .roof_factor = KF_HARNESS_ROOF_FACTOR,
    .min_reps = 10,
    .open = torch_open,
    .compile = torch_compile,
    .link = torch_link,
    .start = torch_start,
    .prepare = torch_prepare,
    .gen = torch_gen,
    .arm = torch_arm,
    .call = torch_call,
    .fetch = torch_fetch,
    .probe = torch_probe,
    .footprint_gbps = torch_footprint_gbps,
    .stream_gbps = torch_stream_gbps,
    .idle = torch_idle,
    .stop = torch_stop,
    .close = torch_close,
};
