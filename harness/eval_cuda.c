/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/eval_cuda.c -- one evaluation of a CUDA candidate (EvalRequest
 * language "cuda", or a spec whose backend is "cuda").  Runs in the eval
 * process, which holds the seed and the expected outputs, never loads
 * candidate code and never creates a CUDA context: the GPU is driven
 * through two runner processes (kf-harness-cuda runner,
 * harness/cuda_runner.c), one for the reference and one for the
 * candidate, each exec'd fresh with its own context.
 *
 *   compile      nvcc, reference and candidate in parallel
 *                (harness/cuda_compile.c); the candidate's registers,
 *                shared memory and spills per kernel go into
 *                EvalResult.resources
 *   link         imports on the CUDA allow-list, no extra constructors,
 *                no writable device data, no writable host static state
 *                beyond that of an empty kf_launch built by the same nvcc
 *                command line (compiled beside the others)
 *                (harness/elfcheck_cuda.c)
 *   --- the GPU lock is taken here and held to the end ---
 *   load         both runners; the reason lists the defenses that applied
 *   verify       every check size x every distribution: inputs drawn here
 *                from the seed (harness/inputs.c, as for CPU problems),
 *                uploaded through the memfd; outputs poisoned on the device
 *                before each call; 64 KiB canary guards around every
 *                buffer; the whole device image downloaded and checked
 *                (guards, inputs unchanged, every output written, within
 *                tolerance of the reference's)
 *   determinism  (spec.deterministic) two runs, bit for bit
 *   time         the bench size, 3 device input sets used in rotation;
 *                before each use a set is refreshed from the host with a
 *                new secret cyclic shift of inputs drawn once from the
 *                seed (at most 2^24 values drawn per input, larger
 *                inputs filled with copies of them at secret offsets;
 *                i.i.d. inputs stay i.i.d. under a shift, and no two
 *                repetitions see the same data), so every repetition is on fresh
 *                inputs at memcpy cost instead of a fresh draw.  Each
 *                call: outputs poisoned, the GPU kept busy for
 *                --cuda-warm-us, L2 flushed (a memset of >= 2 x L2),
 *                persisting L2 reset, then events on the legacy stream
 *                around kf_launch and a device-wide synchronize
 *                (cuda_runner.c).  Candidate and reference alternate who
 *                goes first.  Every timed output is downloaded and checked
 *                against the reference's output on the same inputs, and
 *                the guards after every call; inputs at the end.  The
 *                medians are then held against the roofline of the
 *                worker's measured ceilings (TOO_FAST).  The host work
 *                on big tensors (compare, refresh) is split over threads
 *                (parallel.c).
 *
 * The GPU lock (flock on --gpu-lock, default $TMPDIR/kf-gpu-<device>.lock)
 * serializes the GPU stages of every evaluation on one GPU, while compiles
 * (CPU only) of other evaluations run beside them: a worker with
 * --slots 4 compiles ahead while one evaluation measures.
 *
 * Errors are outcomes, as in eval.c: a CUDA error in the candidate's run
 * (illegal address, launch failure) is CRASH with the error's name; a
 * call that does not return is TIMEOUT (the runner is killed, and its
 * context with it); the reference failing is SPEC_ERROR.
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

#include "cuda_internal.h"
#include "cuda_proto.h"
#include "err.h"
#include "harness.h"
#include "internal.h"
#include "kernelfleet.pb-c.h"
#include "log.h"
#include "outcome.h"
#include "spec.h"
#include "util.h"

#define GUARD (64u << 10)
#define WHY KF_HARNESS_WHY
#define TIME_SETS KF_HARNESS_TIME_SETS
#define MIN_REPS 10
#define MAX_REPS 500
#define MAX_SO (256u << 20)
#define MAX_KERNELS 64
/* Roofline factors against ceilings measured on this GPU: a read-mostly
 * kernel streams ~10% faster than a device-to-device copy, and a tuned
 * GEMM can beat cuBLAS's default by a little; beyond these it is not a
 * faster kernel but a broken measurement. */
#define COPY_FACTOR 1.2
#define FLOPS_FACTOR 1.3

typedef kf_harness_layout layout;

typedef struct {
  const char *who;
  pid_t pid;
  int cmd_fd, reply_fd, memfd;
  unsigned char *map;
  size_t map_len;
  uint32_t seq, defenses;
  uint64_t l2_bytes, flush_bytes;
  bool dead;
  int status;
} crunner;

typedef struct {
  const kf_harness_eval_opts *o;
  Kernelfleet__EvalRequest *req;
  kf_spec *spec;
  kf_harness_workdir wd;
  crunner cand, ref;
  Kernelfleet__EvalResult res;
  kf_harness_stages st;
  char why[WHY];
  double max_abs, max_rel;
  int dists[KF_DIST_COUNT], n_dists;
  kf_harness_kres kres[MAX_KERNELS];
  int n_kres;
  Kernelfleet__KernelResources kr[MAX_KERNELS];
  Kernelfleet__KernelResources *kr_ptrs[MAX_KERNELS];
  int lock_fd;
  const char *arch;
  kf_harness_cuda_elf ci; /* the candidate's link-stage facts */
  uint64_t ph_ns[4]; /* time stage, host side: refresh, calls, fetch, compare */
} ev;

/* ------------------------------------------------------------ stages */

static int stage_begin(ev *e, const char *name) {
  return kf_harness__stage_begin(&e->st, &e->res, e->why, name);
}

static int stage_end(ev *e, int outcome, const char *reason) {
  return kf_harness__stage_end(&e->st, &e->res, outcome, reason);
}

/* ------------------------------------------------------------ layout */

static int make_layout(ev *e, const kf_size *size, int sets, int slots,
                       layout *L) {
  return kf_harness__make_layout(e->spec, size, sets, slots, GUARD, L, e->why,
                                 WHY);
}

/* Buffer b of the layout in placement order: inputs by set, outputs by
 * slot, then the workspace.  Returns false past the end. */
static bool buffer_at(const layout *L, int b, uint64_t *off, size_t *len) {
  int nin = L->n_in * L->sets, nout = L->n_out * L->slots;
  if (b < nin) {
    *off = L->in_off[b / L->n_in][b % L->n_in];
    *len = L->in_b[b % L->n_in];
  } else if (b < nin + nout) {
    b -= nin;
    *off = L->out_off[b / L->n_out][b % L->n_out];
    *len = L->out_b[b % L->n_out];
  } else if (b == nin + nout) {
    *off = L->ws_off;
    *len = L->ws_b;
  } else {
    return false;
  }
  return true;
}

static void fill_cmd(ev *e, const layout *L, int set, int slot,
                     kf_cuda_cmd *c) {
  memset(c, 0, sizeof *c);
  c->op = KF_CUDA_OP_RUN;
  c->n_inputs = L->n_in;
  c->n_outputs = L->n_out;
  kf_harness__fill_tdescs(L, set, slot, c->in, c->out);
  for (int i = 0; i < L->n_out; i++)
    c->out_poison[i] = kf_harness__is_float(L->out_dt[i]) ? 0xFF : 0xA5;
  c->ws_off = L->ws_off;
  c->ws_bytes = L->ws_b;
  c->ws_poison = (uint8_t)(0x5A ^ slot);
  c->n_params = e->spec->n_params;
  for (int i = 0; i < e->spec->n_params && i < KF_HARNESS_MAX_P; i++)
    c->params[i] = L->size.v[i];
}

static unsigned char poison_byte(int dt) {
  return kf_harness__is_float(dt) ? 0xFF : 0xA5;
}

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
    int pr = poll(&pf, 1, (int)(deadline - now));
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
    snprintf(why, whylen, "%s runner setup failed: %s%s%s", r->who, x->msg,
             x->err ? ": " : "", x->err ? strerror(x->err) : "");
    oc = KF_OUTCOME_INFRA_ERROR;
    break;
  case KF_HARNESS_R_LOADFAIL:
    snprintf(why, whylen, "%s cannot be loaded: %s", r->who, x->msg);
    oc = KF_OUTCOME_LINK_REJECTED;
    break;
  case KF_CUDA_R_STATE:
    snprintf(why, whylen, "%s kept state across calls: %s (static memory "
             "is restored before each call and checked after it)", r->who,
             x->msg);
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

static int runner_start(ev *e, crunner *r, const char *who, const char *exe,
                        const char *jail, const char *so, size_t map_len,
                        char *why, size_t whylen) {
  memset(r, 0, sizeof *r);
  r->who = who;
  r->cmd_fd = r->reply_fd = -1;
  r->map = MAP_FAILED;
  /* the candidate's static memory may change only where the toolchain's
   * own symbols lie; the reference is trusted */
  char mut[KF_HARNESS_CUDA_MAX_MUT * 36 + 8] = "";
  const char *state_opt = "--mutable";
  if (r == &e->ref) {
    state_opt = "--state-check";
    strcpy(mut, "off");
  } else {
    size_t ml = 0;
    int i = 0;
    for (; i < e->ci.n_mut && ml + 36 < sizeof mut; i++)
      ml += (size_t)snprintf(mut + ml, sizeof mut - ml, "%s%" PRIx64 ":%" PRIx64,
                             i ? "," : "", e->ci.mut_off[i], e->ci.mut_len[i]);
    if (i < e->ci.n_mut) {
      snprintf(why, whylen, "the candidate's %d mutable ranges do not fit "
               "the runner's command line", e->ci.n_mut);
      return KF_OUTCOME_INFRA_ERROR;
    }
    if (!ml) strcpy(mut, "none");
  }

  r->memfd = memfd_create(who, MFD_CLOEXEC | MFD_ALLOW_SEALING);
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
  char dev[16], cpu[32], warm[16];
  snprintf(dev, sizeof dev, "%d", e->o->device);
  snprintf(warm, sizeof warm, "%d", e->o->cuda_warm_us);
  snprintf(cpu, sizeof cpu, "%d", e->o->call_timeout_ms / 1000 * 4 + 60);
  char *argv[] = {"kf-harness-cuda", "runner", "--jail", (char *)jail,
                  "--so", (char *)so, "--device", dev, "--cpu-s", cpu,
                  "--seccomp", e->o->cuda_no_seccomp ? "off" : "on",
                  (char *)state_opt, mut, "--warm-us", warm, "--stream",
                  e->o->cuda_own_stream ? "own" : "legacy", NULL};
  char store[4][512];
  char *envp[4];
  child_env(envp, store, 4);
  kf_harness_spawn_opts spo = {
      .path = exe,
      .argv = argv,
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
    snprintf(why, whylen, "cannot start the %s runner: %s", who, err);
    return KF_OUTCOME_INFRA_ERROR;
  }
  kf_cuda_reply rep;
  int timeout = e->o->call_timeout_ms > 60000 ? e->o->call_timeout_ms : 60000;
  int k = read_reply(r, &rep, timeout);
  if (k == 1 && rep.kind == KF_HARNESS_R_READY) {
    r->defenses = rep.defenses;
    r->l2_bytes = rep.l2_bytes;
    r->flush_bytes = rep.flush_bytes;
    return 0;
  }
  if (k == 1) return unexpected(r, &rep, why, whylen);
  if (k == -1) {
    kill_runner(r);
    snprintf(why, whylen, "%s runner not ready after %d ms", who, timeout);
    return KF_OUTCOME_TIMEOUT;
  }
  int oc = classify_exit(r, why, whylen);
  size_t l = strlen(why);
  snprintf(why + l, whylen - l, " (while loading)");
  return oc;
}

/* One command.  *wall_ns: this process's clock around it; *gpu_ns: the
 * runner's event time (RUN).  0, or an outcome with why; once not 0 the
 * runner is dead. */
static int runner_call(crunner *r, kf_cuda_cmd *c, int timeout_ms,
                       uint64_t *wall_ns, uint64_t *gpu_ns, int *rc_out,
                       char *why, size_t whylen) {
  if (r->dead || r->cmd_fd < 0) {
    snprintf(why, whylen, "%s runner is not running", r->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  c->magic = KF_CUDA_MAGIC;
  c->seq = ++r->seq;
  uint64_t t0 = kf_now_ns();
  ssize_t w;
  do {
    w = write(r->cmd_fd, c, sizeof *c);
  } while (w < 0 && errno == EINTR);
  if (w != (ssize_t)sizeof *c) return classify_exit(r, why, whylen);
  kf_cuda_reply rep;
  int k = read_reply(r, &rep, timeout_ms);
  uint64_t t1 = kf_now_ns();
  if (wall_ns) *wall_ns = t1 - t0;
  if (k == -1) {
    kill_runner(r);
    snprintf(why, whylen, "%s: %s still running after %d ms; killed (its "
             "CUDA context with it)", r->who,
             c->op == KF_CUDA_OP_RUN ? "kf_launch" : "a copy", timeout_ms);
    return KF_OUTCOME_TIMEOUT;
  }
  if (k != 1) return classify_exit(r, why, whylen);
  if (rep.kind != KF_HARNESS_R_DONE || rep.seq != r->seq)
    return unexpected(r, &rep, why, whylen);
  if (gpu_ns) *gpu_ns = rep.elapsed_ns;
  if (rc_out) *rc_out = rep.rc;
  if (c->op == KF_CUDA_OP_RUN && rep.rc != 0) {
    snprintf(why, whylen, "%s: kf_launch returned %d", r->who, rep.rc);
    kill_runner(r);
    return KF_OUTCOME_CRASH;
  }
  if (c->op == KF_CUDA_OP_RUN && rep.elapsed_ns > t1 - t0 + 1000000) {
    snprintf(why, whylen, "%s reported %.0f ns of GPU time for a call that "
             "took %.0f ns: forged reply", r->who, (double)rep.elapsed_ns,
             (double)(t1 - t0));
    kill_runner(r);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  return 0;
}

static void runner_stop(crunner *r) {
  if (!r || !r->who) return;
  if (r->pid > 0 && !r->dead) {
    if (r->cmd_fd >= 0) {
      kf_cuda_cmd c;
      memset(&c, 0, sizeof c);
      c.magic = KF_CUDA_MAGIC;
      c.op = KF_CUDA_OP_EXIT;
      ssize_t w = write(r->cmd_fd, &c, sizeof c);
      (void)w;
    }
    close_fds(r);
    r->status = kf_harness__reap(r->pid, 3000, false);
    r->dead = true;
  }
  close_fds(r);
  if (r->map && r->map != MAP_FAILED) munmap(r->map, r->map_len);
  r->map = MAP_FAILED;
  if (r->memfd > 0) close(r->memfd);
  r->memfd = -1;
}

/* A failure of the reference is the problem's. */
static int as_ref(ev *e, int oc, const char *ctx, const char *why) {
  snprintf(e->why, WHY, "%.300s: reference failed: %.1700s", ctx, why);
  return oc == KF_OUTCOME_INFRA_ERROR ? oc : KF_OUTCOME_SPEC_ERROR;
}

static int call(ev *e, crunner *r, kf_cuda_cmd *c, uint64_t *gpu_ns,
                const char *ctx) {
  char why[WHY];
  bool is_ref = r == &e->ref;
  int timeout = c->op == KF_CUDA_OP_RUN
                    ? e->o->call_timeout_ms * (is_ref ? 3 : 1)
                    : 60000 + (int)(r->map_len >> 24); /* ~16 MB/ms floor */
  uint64_t wall;
  int oc = runner_call(r, c, timeout, &wall, gpu_ns, NULL, why, sizeof why);
  if (!oc) return 0;
  if (is_ref) return as_ref(e, oc, ctx, why);
  snprintf(e->why, WHY, "%.300s: %.1700s", ctx, why);
  return oc;
}

/* Copies regions (batched) between the memfd and the device. */
static int xfer(ev *e, crunner *r, int op, const kf_cuda_region *reg, int n,
                const char *ctx) {
  for (int i = 0; i < n; i += KF_CUDA_MAX_REGIONS) {
    kf_cuda_cmd c;
    memset(&c, 0, sizeof c);
    c.op = (uint32_t)op;
    c.n_regions = n - i < KF_CUDA_MAX_REGIONS ? n - i : KF_CUDA_MAX_REGIONS;
    memcpy(c.regions, reg + i, (size_t)c.n_regions * sizeof *reg);
    int oc = call(e, r, &c, NULL, ctx);
    if (oc) return oc;
  }
  return 0;
}

static int xfer1(ev *e, crunner *r, int op, uint64_t off, uint64_t len,
                 const char *ctx) {
  kf_cuda_region g = {off, len};
  return xfer(e, r, op, &g, 1, ctx);
}

/* Canary everywhere that is not data, in both maps, and upload it. */
static int prepare(ev *e, const layout *L, const char *ctx) {
  kf_cuda_region gaps[2 * (2 * TIME_SETS * KF_HARNESS_MAX_T + 1) + 2];
  int ng = 0;
  uint64_t prev = 0, off;
  size_t len;
  for (int b = 0; buffer_at(L, b, &off, &len); b++) {
    gaps[ng++] = (kf_cuda_region){prev, off - prev};
    prev = off + len;
  }
  gaps[ng++] = (kf_cuda_region){prev, L->total - prev};
  for (int i = 0; i < ng; i++) {
    kf_harness__canary(e->cand.map, gaps[i].off, gaps[i].off + gaps[i].len);
    memcpy(e->ref.map + gaps[i].off, e->cand.map + gaps[i].off, gaps[i].len);
  }
  int oc = xfer(e, &e->cand, KF_CUDA_OP_UPLOAD, gaps, ng, ctx);
  if (!oc) oc = xfer(e, &e->ref, KF_CUDA_OP_UPLOAD, gaps, ng, ctx);
  return oc;
}

/* Guards of every buffer, downloaded from the candidate's device. */
static int fetch_guards(ev *e, const layout *L, const char *ctx) {
  kf_cuda_region g[2 * (2 * TIME_SETS * KF_HARNESS_MAX_T + 1)];
  int n = 0;
  uint64_t off;
  size_t len;
  for (int b = 0; buffer_at(L, b, &off, &len); b++) {
    g[n++] = (kf_cuda_region){off - GUARD, GUARD};
    g[n++] = (kf_cuda_region){off + len, GUARD};
  }
  return xfer(e, &e->cand, KF_CUDA_OP_DOWNLOAD, g, n, ctx);
}

static int upload_inputs(ev *e, const layout *L, int set, const char *ctx) {
  kf_cuda_region g[KF_HARNESS_MAX_T];
  for (int i = 0; i < L->n_in; i++)
    g[i] = (kf_cuda_region){L->in_off[set][i], L->in_b[i]};
  int oc = xfer(e, &e->cand, KF_CUDA_OP_UPLOAD, g, L->n_in, ctx);
  if (!oc) oc = xfer(e, &e->ref, KF_CUDA_OP_UPLOAD, g, L->n_in, ctx);
  return oc;
}

static int download_outputs(ev *e, crunner *r, const layout *L, int slot,
                            const char *ctx) {
  kf_cuda_region g[KF_HARNESS_MAX_T];
  for (int i = 0; i < L->n_out; i++)
    g[i] = (kf_cuda_region){L->out_off[slot][i], L->out_b[i]};
  return xfer(e, r, KF_CUDA_OP_DOWNLOAD, g, L->n_out, ctx);
}

/* ------------------------------------------------------------ checks */

/* Draws set `set`'s inputs into the candidate's map (dst NULL) or into
 * dst[i] (host buffers of in_b[i] bytes).  With dst, at most DRAW_CAP
 * elements per input are drawn and the rest is filled with copies of
 * them taken at secret offsets (fill_rest): every value still comes from
 * the distribution, and a 2^28-element bench input costs ~1 s, not ~15. */
#define DRAW_CAP ((int64_t)1 << 24)
static void fill_rest(unsigned char *p, size_t es, int64_t n, int64_t m,
                      kf_harness_rng *r) {
  for (int64_t j = m; j < n;) {
    int64_t off = (int64_t)(kf_harness__rng_next(r) % (uint64_t)m);
    int64_t k = m - off < n - j ? m - off : n - j;
    memcpy(p + (size_t)j * es, p + (size_t)off * es, (size_t)k * es);
    j += k;
  }
}

static int draw_inputs(ev *e, const layout *L, int set, uint64_t case_id,
                       int dist, unsigned char **dst) {
  for (int i = 0; i < L->n_in; i++) {
    const kf_spec_tensor *t = &e->spec->inputs[i];
    int d = kf_harness__input_dist(t, dist);
    int64_t range;
    int oc = kf_harness__input_range(e->spec, t, d, &L->size, &range, e->why,
                                     WHY);
    if (oc) return oc;
    kf_harness_rng r;
    kf_harness__rng_seed(&r, e->req->seed, case_id, (uint64_t)d, (uint64_t)i);
    unsigned char *p = dst ? dst[i] : e->cand.map + L->in_off[set][i];
    int64_t m = dst && L->in_n[i] > DRAW_CAP ? DRAW_CAP : L->in_n[i];
    kf_harness__fill(p, L->in_dt[i], m, d, range, &r);
    if (m < L->in_n[i])
      fill_rest(p, kf_dtype_size(L->in_dt[i]), L->in_n[i], m, &r);
    if (!dst) memcpy(e->ref.map + L->in_off[set][i], p, L->in_b[i]);
  }
  return 0;
}

static int check_guards(ev *e, const layout *L, const char *ctx) {
  const unsigned char *m = e->cand.map;
  uint64_t off;
  size_t b;
  int nin = L->n_in * L->sets, nout = L->n_out * L->slots;
  for (int k = 0; buffer_at(L, k, &off, &b); k++) {
    const char *kind = k < nin ? "input" : k < nin + nout ? "output" : "buffer";
    const char *name = k < nin ? e->spec->inputs[k % L->n_in].name
                       : k < nin + nout
                           ? e->spec->outputs[(k - nin) % L->n_out].name
                           : "workspace";
    size_t bad = kf_harness__canary_bad(m, off - GUARD, off);
    if (bad != off) {
      snprintf(e->why, WHY, "%s: wrote %zu bytes before the start of %s '%s' "
               "(device byte offset -%zu)", ctx, (size_t)(off - bad), kind,
               name, (size_t)(off - bad));
      return KF_OUTCOME_OUT_OF_BOUNDS;
    }
    size_t end = off + b;
    bad = kf_harness__canary_bad(m, end, end + GUARD);
    if (bad != end + GUARD) {
      snprintf(e->why, WHY, "%s: wrote past the end of %s '%s' (%zu bytes "
               "long; first bad byte at offset %zu)", ctx, kind, name, b,
               bad - off);
      return KF_OUTCOME_OUT_OF_BOUNDS;
    }
  }
  return 0;
}

/* The candidate's map holds what its device holds after a download; the
 * reference's map holds the inputs as drawn. */
static int check_inputs(ev *e, const layout *L, int set, const char *ctx) {
  return kf_harness__check_inputs(e->spec, L, e->cand.map, e->ref.map, set,
                                  ctx, e->why, WHY);
}

static inline double load(const unsigned char *p, int dt, int64_t i) {
  switch (dt) {
  case KF_DT_F32: {
    float f;
    memcpy(&f, p + 4 * i, 4);
    return f;
  }
  case KF_DT_BF16: {
    uint32_t u = (uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  default: return kf_harness__load(p, dt, i);
  }
}

/* The common case of compare(), bf16 outputs without NaN allowed, split
 * over threads: no per-byte poison tests or switch per element.  A part
 * stops at the first element that needs the general path (NaN/Inf, the
 * poison 0xFFFF included, or outside the tolerance); compare() takes it
 * from the lowest such index on. */
typedef struct {
  const unsigned char *pc, *pr;
  int64_t n;
  double atol, rtol;
  struct {
    double mabs, mrel;
    bool evd;
    int64_t stop; /* first index for the general path; INT64_MAX: none */
  } r[KF_HARNESS_PAR_MAX];
} bf16_job;

static void bf16_part(void *arg, int part, int parts) {
  bf16_job *j = arg;
  int64_t lo, hi, i;
  kf_harness__par_range(j->n, part, parts, 64, &lo, &hi);
  const double at = j->atol, rt = j->rtol;
  double fmabs = 0, fmrel = 0;
  bool evd = false;
  for (i = lo; i < hi; i++) {
    uint16_t x, y;
    memcpy(&x, j->pc + 2 * i, 2);
    memcpy(&y, j->pr + 2 * i, 2);
    if ((y & 0x7F80) == 0x7F80 || (x & 0x7F80) == 0x7F80) break;
    if (x == y && evd) continue; /* same bits: nothing to learn */
    uint32_t ux = (uint32_t)x << 16, uy = (uint32_t)y << 16;
    float g, w;
    memcpy(&g, &ux, 4);
    memcpy(&w, &uy, 4);
    double d = fabs((double)g - (double)w), aw = fabs((double)w);
    double lim = at + rt * aw;
    if (!(d <= lim)) break;
    if (d > fmabs) fmabs = d;
    if (aw > at && d > fmrel * aw) fmrel = d / aw;
    evd |= aw > lim;
  }
  j->r[part].mabs = fmabs;
  j->r[part].mrel = fmrel;
  j->r[part].evd = evd;
  j->r[part].stop = i < hi ? i : INT64_MAX;
}

static int compare(ev *e, const layout *L, int slot, const char *ctx,
                   bool *evidence) {
  const kf_spec *s = e->spec;
  for (int j = 0; j < L->n_out; j++) {
    int dt = L->out_dt[j];
    size_t es = kf_dtype_size(dt);
    unsigned char pb = poison_byte(dt);
    const unsigned char *pc = e->cand.map + L->out_off[slot][j];
    const unsigned char *pr = e->ref.map + L->out_off[slot][j];
    const char *name = s->outputs[j].name;
    int64_t n = L->out_n[j], unwritten = 0, first_unw = -1, bad = 0, first = -1;
    const kf_tol *tol = &s->tol[dt];
    double fg = 0, fw = 0, mabs = 0, mrel = 0;
    int64_t i0 = 0;
    if (dt == KF_DT_BF16 && !s->allow_nan) {
      bf16_job bj = {.pc = pc, .pr = pr, .n = n, .atol = tol->atol,
                    .rtol = tol->rtol};
      int parts = n >= (1 << 20) ? kf_harness__par_parts() : 1;
      kf_harness__par_run(parts, bf16_part, &bj);
      i0 = n;
      for (int p = 0; p < parts; p++) {
        if (bj.r[p].mabs > mabs) mabs = bj.r[p].mabs;
        if (bj.r[p].mrel > mrel) mrel = bj.r[p].mrel;
        if (bj.r[p].evd) *evidence = true;
        if (bj.r[p].stop < i0) i0 = bj.r[p].stop;
      }
    }
    for (int64_t i = i0; i < n; i++) {
      const unsigned char *a = pc + (size_t)i * es, *b = pr + (size_t)i * es;
      bool ap = true, bp = true;
      for (size_t k = 0; k < es; k++) {
        ap &= a[k] == pb;
        bp &= b[k] == pb;
      }
      if (bp) {
        snprintf(e->why, WHY, "%s: the reference left %s[%" PRId64 "] "
                 "unwritten", ctx, name, i);
        return KF_OUTCOME_SPEC_ERROR;
      }
      if (ap) {
        if (first_unw < 0) first_unw = i;
        unwritten++;
        continue;
      }
      double g = load(pc, dt, i), w = load(pr, dt, i);
      bool ok;
      if (!isfinite(w)) {
        if (!s->allow_nan) {
          snprintf(e->why, WHY, "%s: the reference's %s[%" PRId64 "] is %g "
                   "but the spec does not allow NaN/Inf", ctx, name, i, w);
          return KF_OUTCOME_SPEC_ERROR;
        }
        ok = isnan(w) ? isnan(g) : g == w;
      } else if (!isfinite(g)) {
        ok = false;
      } else {
        double d = fabs(g - w), aw = fabs(w);
        ok = d <= tol->atol + tol->rtol * aw;
        if (d > mabs) mabs = d;
        if (aw > tol->atol) {
          double rel = d / aw;
          if (rel > mrel) mrel = rel;
        }
        if (!(aw <= tol->atol + tol->rtol * aw)) *evidence = true;
      }
      if (!ok) {
        if (first < 0) {
          first = i;
          fg = g;
          fw = w;
        }
        bad++;
      }
    }
    if (unwritten) {
      snprintf(e->why, WHY, "%s: output '%s': %" PRId64 " of %" PRId64
               " elements never written (first at index %" PRId64 ")",
               ctx, name, unwritten, n, first_unw);
      return KF_OUTCOME_UNWRITTEN_OUTPUT;
    }
    if (mabs > e->max_abs) e->max_abs = mabs;
    if (mrel > e->max_rel) e->max_rel = mrel;
    if (bad) {
      snprintf(e->why, WHY,
               "%s: output '%s' index %" PRId64 " (of %" PRId64 "): got %.9g, "
               "expected %.9g (tolerance %g + %g*|expected|); %" PRId64
               " elements differ; max abs err %.3g, max rel err %.3g",
               ctx, name, first, n, fg, fw, tol->atol, tol->rtol, bad, mabs,
               mrel);
      return KF_OUTCOME_WRONG_ANSWER;
    }
  }
  return 0;
}

static void size_str(const ev *e, const kf_size *sz, char *buf, size_t len) {
  kf_spec_size_format(e->spec, sz, buf, len);
}

/* ------------------------------------------------------------ stages */

static int do_compile(ev *e) {
  stage_begin(e, "compile");
  int oc = kf_harness__workdir_make(&e->wd, e->o->workdir, e->why, WHY);
  if (oc) return stage_end(e, oc, e->why);
  if (e->req->n_knobs > 32)
    return stage_end(e, KF_OUTCOME_SPEC_ERROR, "more than 32 knobs");
  const char *kn[32], *kv[32];
  for (size_t i = 0; i < e->req->n_knobs; i++) {
    kn[i] = e->req->knobs[i]->name;
    kv[i] = e->req->knobs[i]->value;
  }
  int timeout = e->o->compile_timeout_ms * 4; /* nvcc runs five tools */
  kf_harness_nvcc_job jr = {.dir = e->wd.build, .base = "reference",
                            .src = e->req->reference_source, .arch = e->arch,
                            .timeout_ms = timeout};
  kf_harness_nvcc_job jc = {.dir = e->wd.build, .base = "candidate",
                            .src = e->req->source, .knob_names = kn,
                            .knob_values = kv, .n_knobs = (int)e->req->n_knobs,
                            .arch = e->arch, .timeout_ms = timeout};
  /* the link check's baseline: an empty candidate, same command line
   * but for the knobs (toolchain state only) */
  kf_harness_nvcc_job jb = {.dir = e->wd.build, .base = "baseline",
                            .src = KF_HARNESS_CUDA_BASELINE_SRC,
                            .arch = e->arch, .timeout_ms = timeout};
  char why[WHY], w2[WHY], wb[WHY];
  static char out_r[65536], out_c[65536], out_b[4096];
  int pr = 0, pc = 0, pb = 0, fr = -1, fc = -1, fb = -1;
  oc = kf_harness__nvcc_start(&jc, &pc, &fc, why, sizeof why);
  if (oc) return stage_end(e, oc, why);
  int roc = kf_harness__nvcc_start(&jr, &pr, &fr, w2, sizeof w2);
  int boc = kf_harness__nvcc_start(&jb, &pb, &fb, wb, sizeof wb);
  oc = kf_harness__nvcc_finish(&jc, pc, fc, out_c, sizeof out_c, why,
                               sizeof why);
  if (!roc) roc = kf_harness__nvcc_finish(&jr, pr, fr, out_r, sizeof out_r, w2,
                                          sizeof w2);
  if (!boc) boc = kf_harness__nvcc_finish(&jb, pb, fb, out_b, sizeof out_b, wb,
                                          sizeof wb);
  if (roc) {
    char w3[WHY];
    snprintf(w3, sizeof w3, "reference: %.2000s", w2);
    return stage_end(e, roc == KF_OUTCOME_INFRA_ERROR ? roc
                                                      : KF_OUTCOME_SPEC_ERROR,
                     w3);
  }
  if (oc) return stage_end(e, oc, why);
  if (boc) {
    char w3[WHY];
    snprintf(w3, sizeof w3, "empty baseline kernel: %.2000s", wb);
    return stage_end(e, KF_OUTCOME_INFRA_ERROR, w3);
  }
  e->n_kres = kf_harness__parse_resource_usage(out_c, e->kres, MAX_KERNELS);
  uint32_t max_regs = 0, spills = 0, max_smem = 0;
  for (int i = 0; i < e->n_kres; i++) {
    kernelfleet__kernel_resources__init(&e->kr[i]);
    e->kr[i].kernel = e->kres[i].kernel;
    e->kr[i].registers = e->kres[i].registers;
    e->kr[i].shared_bytes = e->kres[i].shared_bytes;
    e->kr[i].spill_bytes = e->kres[i].spill_bytes;
    e->kr_ptrs[i] = &e->kr[i];
    if (e->kres[i].registers > max_regs) max_regs = e->kres[i].registers;
    if (e->kres[i].shared_bytes > max_smem) max_smem = e->kres[i].shared_bytes;
    spills += e->kres[i].spill_bytes;
  }
  e->res.resources = e->kr_ptrs;
  e->res.n_resources = (size_t)e->n_kres;
  char msg[WHY];
  snprintf(msg, sizeof msg, "nvcc for %s: %d kernel(s), max %u registers, "
           "max %u bytes static shared memory, %u bytes of spill stores; %.1000s",
           e->arch, e->n_kres, max_regs, max_smem, spills, why);
  return stage_end(e, 0, msg);
}

static int do_link(ev *e) {
  stage_begin(e, "link");
  unsigned char *rb = NULL, *cb = NULL;
  size_t rl = 0, cl = 0;
  int oc = kf_harness__take_so(e->wd.build, "reference", e->wd.jail_r,
                               MAX_SO, &rb, &rl, e->why, WHY);
  if (oc) return stage_end(e, oc, e->why);
  static kf_harness_cuda_elf bi, ri;
  char why[WHY];
  char bpath[1200], err[256];
  snprintf(bpath, sizeof bpath, "%s/baseline.so", e->wd.build);
  char *bbuf;
  size_t blen;
  if (kf_read_file(bpath, MAX_SO, &bbuf, &blen, err, sizeof err)) {
    free(rb);
    snprintf(e->why, WHY, "baseline.so: %s", err);
    return stage_end(e, KF_OUTCOME_INFRA_ERROR, e->why);
  }
  if (kf_harness__elf_check_cuda((unsigned char *)bbuf, blen, NULL, &bi, why,
                                 sizeof why))
    kf_log(KF_LOG_WARN, "the empty baseline would not pass the link check: "
           "%s", why);
  free(bbuf);
  if (kf_harness__elf_check_cuda(rb, rl, &bi, &ri, why, sizeof why))
    kf_log(KF_LOG_WARN, "the reference would not pass the link check: %s", why);
  free(rb);
  oc = kf_harness__take_so(e->wd.build, "candidate", e->wd.jail_c, MAX_SO,
                           &cb, &cl, e->why, WHY);
  if (oc) return stage_end(e, oc, e->why);
  oc = kf_harness__elf_check_cuda(cb, cl, &bi, &e->ci, why, sizeof why);
  free(cb);
  if (!oc) {
    uint64_t b = 0;
    for (int i = 0; i < e->ci.n_mut; i++) b += e->ci.mut_len[i];
    snprintf(why, sizeof why, "imports on the allow-list; host static data: "
             "%d range(s), %" PRIu64 " bytes, of the toolchain's own "
             "variables (launch stubs), left out of the runner's check for "
             "writes", e->ci.n_mut, b);
  }
  return stage_end(e, oc, why);
}

static void lock_path(const ev *e, char *out, size_t len) {
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

static int take_gpu_lock(ev *e, char *msg, size_t len) {
  char path[1200];
  lock_path(e, path, sizeof path);
  e->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (e->lock_fd < 0) {
    snprintf(e->why, WHY, "GPU lock %s: %s", path, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  fchmod(e->lock_fd, 0666);
  uint64_t t0 = kf_now_ms();
  while (flock(e->lock_fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    snprintf(e->why, WHY, "GPU lock %s: %s", path, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  snprintf(msg, len, "GPU lock %s after %" PRIu64 " ms", path,
           kf_now_ms() - t0);
  return 0;
}

static int do_load(ev *e) {
  stage_begin(e, "load");
  char lockmsg[1400];
  int oc = take_gpu_lock(e, lockmsg, sizeof lockmsg);
  if (oc) return stage_end(e, oc, e->why);
  layout L;
  size_t need = GUARD;
  for (int i = 0; i < e->spec->n_check_sizes; i++) {
    if ((oc = make_layout(e, &e->spec->check_sizes[i], 1, 2, &L)))
      return stage_end(e, oc, e->why);
    if (L.total > need) need = L.total;
  }
  if ((oc = make_layout(e, &e->spec->bench_size, TIME_SETS, TIME_SETS, &L)))
    return stage_end(e, oc, e->why);
  if (L.total > need) need = L.total;
  char exe[PATH_MAX + 32], why[WHY];
  if (!kf_harness__cuda_exe(exe, sizeof exe)) {
    snprintf(why, sizeof why, "this kf-harness was built without CUDA (no "
             "kf-harness-cuda beside it): it cannot run CUDA candidates");
    return stage_end(e, KF_OUTCOME_INFRA_ERROR, why);
  }
  oc = runner_start(e, &e->ref, "reference", exe, e->wd.jail_r, "reference.so",
                    need, why, sizeof why);
  if (oc)
    return stage_end(e, oc == KF_OUTCOME_INFRA_ERROR ? oc
                                                     : KF_OUTCOME_SPEC_ERROR,
                     why);
  oc = runner_start(e, &e->cand, "candidate", exe, e->wd.jail_c, "candidate.so",
                    need, why, sizeof why);
  if (oc) return stage_end(e, oc, why);
  char defs[256], msg[2048];
  kf_harness__defenses_str(e->cand.defenses, defs, sizeof defs);
  snprintf(msg, sizeof msg, "defenses: %s; device %d, L2 %" PRIu64 " KiB, "
           "flush %" PRIu64 " MiB, %zu MiB of buffers per runner; %s", defs,
           e->o->device, e->cand.l2_bytes >> 10, e->cand.flush_bytes >> 20,
           need >> 20, lockmsg);
  if (!(e->cand.defenses & KF_HARNESS_DEF_SECCOMP) ||
      !(e->cand.defenses & KF_HARNESS_DEF_CHROOT))
    kf_log(KF_LOG_WARN, "CUDA sandbox incomplete: %s", defs);
  return stage_end(e, 0, msg);
}

/* One untimed call of each on set 0 / slot `slot`, everything fetched. */
static int run_case(ev *e, const layout *L, int slot, bool with_ref,
                    const char *ctx) {
  kf_cuda_cmd c;
  int oc;
  if (with_ref) {
    fill_cmd(e, L, 0, slot, &c);
    if ((oc = call(e, &e->ref, &c, NULL, ctx))) return oc;
    if ((oc = download_outputs(e, &e->ref, L, slot, ctx))) return oc;
  }
  fill_cmd(e, L, 0, slot, &c);
  if ((oc = call(e, &e->cand, &c, NULL, ctx))) return oc;
  return xfer1(e, &e->cand, KF_CUDA_OP_DOWNLOAD, 0, L->total, ctx);
}

static int do_verify(ev *e) {
  stage_begin(e, "verify");
  kf_harness__collect_dists(e->spec, e->dists, &e->n_dists);
  int cases = 0, evidence_cases = 0;
  for (int si = 0; si < e->spec->n_check_sizes; si++) {
    const kf_size *sz = &e->spec->check_sizes[si];
    layout L;
    int oc = make_layout(e, sz, 1, 2, &L);
    char szs[256];
    size_str(e, sz, szs, sizeof szs);
    if (!oc) oc = prepare(e, &L, szs);
    if (oc) return stage_end(e, oc, e->why);
    for (int di = 0; di < e->n_dists; di++) {
      char ctx[400];
      snprintf(ctx, sizeof ctx, "size %s, distribution %s", szs,
               kf_dist_name((kf_dist)e->dists[di]));
      if ((oc = draw_inputs(e, &L, 0, (uint64_t)si << 8 | (uint64_t)di,
                            e->dists[di], NULL)) ||
          (oc = upload_inputs(e, &L, 0, ctx)) ||
          (oc = run_case(e, &L, 0, true, ctx)) ||
          (oc = check_guards(e, &L, ctx)) ||
          (oc = check_inputs(e, &L, 0, ctx)))
        return stage_end(e, oc, e->why);
      bool ev_case = false;
      if ((oc = compare(e, &L, 0, ctx, &ev_case)))
        return stage_end(e, oc, e->why);
      cases++;
      evidence_cases += ev_case;
    }
  }
  if (!evidence_cases) {
    snprintf(e->why, WHY, "none of the %d correctness cases has an expected "
             "output outside the tolerance around zero: an all-zeros kernel "
             "would pass; the spec needs sizes or distributions with larger "
             "outputs", cases);
    return stage_end(e, KF_OUTCOME_SPEC_ERROR, e->why);
  }
  char msg[256];
  snprintf(msg, sizeof msg, "%d cases (%d sizes x %d distributions), %d far "
           "from zero; max abs err %.3g, max rel err %.3g", cases,
           e->spec->n_check_sizes, e->n_dists, evidence_cases, e->max_abs,
           e->max_rel);
  return stage_end(e, 0, msg);
}

static int do_determinism(ev *e) {
  stage_begin(e, "determinism");
  int best = 0;
  size_t best_total = 0;
  layout L;
  for (int si = 0; si < e->spec->n_check_sizes; si++) {
    if (make_layout(e, &e->spec->check_sizes[si], 1, 2, &L)) continue;
    if (L.total > best_total) {
      best_total = L.total;
      best = si;
    }
  }
  const kf_size *sz = &e->spec->check_sizes[best];
  char szs[256], ctx[300];
  size_str(e, sz, szs, sizeof szs);
  snprintf(ctx, sizeof ctx, "size %s", szs);
  int oc = make_layout(e, sz, 1, 2, &L);
  if (!oc) oc = prepare(e, &L, ctx);
  if (!oc) oc = draw_inputs(e, &L, 0, 0xde7e000ull, e->dists[0], NULL);
  if (!oc) oc = upload_inputs(e, &L, 0, ctx);
  for (int slot = 0; slot < 2 && !oc; slot++) {
    kf_cuda_cmd c;
    fill_cmd(e, &L, 0, slot, &c);
    oc = call(e, &e->cand, &c, NULL, ctx);
  }
  if (!oc) oc = xfer1(e, &e->cand, KF_CUDA_OP_DOWNLOAD, 0, L.total, ctx);
  if (!oc) oc = check_guards(e, &L, ctx);
  if (oc) return stage_end(e, oc, e->why);
  if ((oc = kf_harness__check_same_outputs(e->spec, &L, e->cand.map, ctx,
                                           e->why, WHY)))
    return stage_end(e, oc, e->why);
  return stage_end(e, 0, ctx);
}

/* Set `set` := the master inputs, each cyclically shifted by a secret
 * offset; both maps, then both devices. */
static int refresh_set(ev *e, const layout *L, int set, unsigned char **master,
                       kf_harness_rng *rng, const char *ctx) {
  for (int i = 0; i < L->n_in; i++) {
    size_t es = kf_dtype_size(L->in_dt[i]);
    size_t n = (size_t)L->in_n[i];
    size_t r = n ? (size_t)(kf_harness__rng_next(rng) % n) : 0;
    unsigned char *dst = e->cand.map + L->in_off[set][i];
    kf_harness__par_memcpy(dst, master[i] + r * es, (n - r) * es);
    kf_harness__par_memcpy(dst + (n - r) * es, master[i], r * es);
    kf_harness__par_memcpy(e->ref.map + L->in_off[set][i], dst, n * es);
  }
  return upload_inputs(e, L, set, ctx);
}

/* One repetition on set/slot k.  Each side first runs once, untimed, on
 * the next set (other inputs: nothing to cache), so that the GPU is busy
 * and clocked up, not idle after the host's checks, when the timed call
 * starts; then flush, events, the timed call. */
static int one_rep(ev *e, const layout *L, int k, bool cand_first,
                   uint64_t *tc, uint64_t *tr, const char *ctx) {
  int oc;
  uint64_t t0 = kf_now_ns();
  for (int turn = 0; turn < 2; turn++) {
    bool cand_turn = (turn == 0) == cand_first;
    crunner *r = cand_turn ? &e->cand : &e->ref;
    kf_cuda_cmd c;
    int w = (k + 1) % L->sets;
    fill_cmd(e, L, w, w, &c);
    if ((oc = call(e, r, &c, NULL, ctx))) return oc;
    fill_cmd(e, L, k, k, &c);
    c.flags = KF_CUDA_RUN_TIMED;
    if ((oc = call(e, r, &c, cand_turn ? tc : tr, ctx))) return oc;
  }
  uint64_t t1 = kf_now_ns();
  if ((oc = download_outputs(e, &e->cand, L, k, ctx)) ||
      (oc = download_outputs(e, &e->ref, L, k, ctx)) ||
      (oc = fetch_guards(e, L, ctx)) || (oc = check_guards(e, L, ctx)))
    return oc;
  uint64_t t2 = kf_now_ns();
  bool unused = false;
  oc = compare(e, L, k, ctx, &unused);
  e->ph_ns[1] += t1 - t0;
  e->ph_ns[2] += t2 - t1;
  e->ph_ns[3] += kf_now_ns() - t2;
  return oc;
}

static int do_time(ev *e) {
  stage_begin(e, "time");
  layout L;
  const kf_size *sz = &e->spec->bench_size;
  char szs[256], ctx[400];
  size_str(e, sz, szs, sizeof szs);
  int oc = make_layout(e, sz, TIME_SETS, TIME_SETS, &L);
  if (!oc) oc = prepare(e, &L, szs);
  if (oc) return stage_end(e, oc, e->why);
  unsigned char *master[KF_HARNESS_MAX_T] = {0};
  uint64_t *tc = calloc(MAX_REPS, sizeof *tc), *tr = calloc(MAX_REPS, sizeof *tr);
  uint64_t *tmp = calloc(MAX_REPS, sizeof *tmp);
  bool mem_ok = tc && tr && tmp;
  for (int i = 0; i < L.n_in; i++)
    mem_ok &= (master[i] = malloc(L.in_b[i] ? L.in_b[i] : 1)) != NULL;
  int n = 0;
  if (!mem_ok) {
    oc = KF_OUTCOME_INFRA_ERROR;
    snprintf(e->why, WHY, "out of host memory for the bench inputs");
    goto out;
  }
  uint64_t t_draw = kf_now_ms();
  if ((oc = draw_inputs(e, &L, 0, 0x71e00000ull, e->dists[0], master)))
    goto out;
  t_draw = kf_now_ms() - t_draw;
  kf_harness_rng rng;
  kf_harness__rng_seed(&rng, e->req->seed, 0x5417f7ull, 0, 0);
  /* warm-up: module load, first launches, page-in; checked, not timed */
  for (int k = 0; k < TIME_SETS; k++) {
    snprintf(ctx, sizeof ctx, "warm-up at size %s", szs);
    uint64_t a, b;
    if ((oc = refresh_set(e, &L, k, master, &rng, ctx)) ||
        (oc = one_rep(e, &L, k, true, &a, &b, ctx)))
      goto out;
  }
  uint64_t t_start = kf_now_ms();
  uint64_t budget = (uint64_t)e->o->time_budget_ms;
  for (; n < MAX_REPS; n++) {
    int k = n % TIME_SETS;
    snprintf(ctx, sizeof ctx, "timed run %d at size %s", n, szs);
    uint64_t tf = kf_now_ns();
    if ((oc = refresh_set(e, &L, k, master, &rng, ctx))) goto out;
    e->ph_ns[0] += kf_now_ns() - tf;
    if ((oc = one_rep(e, &L, k, n % 2 == 0, &tc[n], &tr[n], ctx))) goto out;
    int m = n + 1;
    if (kf_harness__reps_enough(tc, tr, m, MIN_REPS, kf_now_ms() - t_start,
                                budget, tmp)) {
      n = m;
      break;
    }
  }
  if (n > MAX_REPS) n = MAX_REPS;
  /* inputs: unchanged on the candidate's device, every set */
  snprintf(ctx, sizeof ctx, "after timing at size %s", szs);
  for (int k = 0; k < TIME_SETS; k++) {
    kf_cuda_region g[KF_HARNESS_MAX_T];
    for (int i = 0; i < L.n_in; i++)
      g[i] = (kf_cuda_region){L.in_off[k][i], L.in_b[i]};
    if ((oc = xfer(e, &e->cand, KF_CUDA_OP_DOWNLOAD, g, L.n_in, ctx)) ||
        (oc = check_inputs(e, &L, k, ctx)))
      goto out;
  }
  {
    int64_t bytes, flops;
    kf_harness__time_results(e->spec, sz, tc, tr, n, tmp, &e->res, &bytes,
                             &flops);
    double cm = e->res.time_ns_median, cs = e->res.time_ns_spread;
    double rm = e->res.ref_time_ns_median, rs = e->res.ref_time_ns_spread;
    char msg[WHY];
    int l = snprintf(msg, sizeof msg, "size %s: candidate %.0f ns (spread "
                     "%.1f%%), reference %.0f ns (spread %.1f%%), %d "
                     "repetitions (GPU events); %.1f GB/s, %.1f GFLOP/s",
                     szs, cm, cs * 100, rm, rs * 100, n, e->res.achieved_gbps,
                     e->res.achieved_gflops);
    if (e->o->copy_gbps > 0 && l > 0 && (size_t)l < sizeof msg)
      l += snprintf(msg + l, sizeof msg - (size_t)l, " (%.1f%% of the "
                    "measured copy bandwidth %.0f GB/s)",
                    100 * e->res.achieved_gbps / e->o->copy_gbps,
                    e->o->copy_gbps);
    if (l > 0 && (size_t)l < sizeof msg)
      snprintf(msg + l, sizeof msg - (size_t)l, "; L2 flush %" PRIu64
               " MiB; inputs drawn in %" PRIu64 " ms, refreshed by shifts; "
               "per repetition: refresh %.1f ms, calls %.1f ms, fetch %.1f "
               "ms, compare %.1f ms", e->cand.flush_bytes >> 20, t_draw,
               e->ph_ns[0] / 1e6 / n, e->ph_ns[1] / 1e6 / n,
               e->ph_ns[2] / 1e6 / n, e->ph_ns[3] / 1e6 / n);
    if (e->o->copy_gbps > 0 &&
        e->res.achieved_gbps > COPY_FACTOR * e->o->copy_gbps) {
      snprintf(e->why, WHY, "size %s: moving at least %" PRId64 " bytes in "
               "%.0f ns is %.4g GB/s, above %.2f x the measured copy "
               "bandwidth of %.4g GB/s", szs, bytes, cm, e->res.achieved_gbps,
               COPY_FACTOR, e->o->copy_gbps);
      oc = KF_OUTCOME_TOO_FAST;
      goto out;
    }
    if (e->o->gflops > 0 &&
        e->res.achieved_gflops > FLOPS_FACTOR * e->o->gflops) {
      snprintf(e->why, WHY, "size %s: %" PRId64 " FLOPs in %.0f ns is %.4g "
               "GFLOP/s, above %.2f x the measured peak of %.4g GFLOP/s", szs,
               flops, cm, e->res.achieved_gflops, FLOPS_FACTOR, e->o->gflops);
      oc = KF_OUTCOME_TOO_FAST;
      goto out;
    }
    if (e->o->copy_gbps <= 0 && e->o->gflops <= 0) {
      size_t ml = strlen(msg);
      snprintf(msg + ml, sizeof msg - ml, "; no ceilings given: roofline not "
               "checked");
    }
    kf_strlcpy(e->why, msg, WHY);
  }
out:
  for (int i = 0; i < KF_HARNESS_MAX_T; i++) free(master[i]);
  free(tc);
  free(tr);
  free(tmp);
  return stage_end(e, oc, e->why);
}

/* --------------------------------------------------------------- I/O */

static bool stop_here(const ev *e, const char *stage) {
  return e->o->stop_after && !strcmp(e->o->stop_after, stage);
}

static void run_stages(ev *e) {
  int oc = do_compile(e);
  if (!oc && stop_here(e, "compile")) goto stopped;
  if (!oc) oc = do_link(e);
  if (!oc && stop_here(e, "link")) goto stopped;
  if (!oc) oc = do_load(e);
  if (!oc && stop_here(e, "load")) goto stopped;
  if (!oc) oc = do_verify(e);
  if (!oc && stop_here(e, "verify")) goto stopped;
  if (!oc && e->spec->deterministic) oc = do_determinism(e);
  if (!oc) oc = do_time(e);
  if (!oc) e->res.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  return;
stopped:
  e->res.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  kf_log(KF_LOG_INFO, "stopped after %s (--stop-after)", e->o->stop_after);
}

bool kf_harness__is_cuda_request(const Kernelfleet__EvalRequest *req) {
  if (req->language && !strcmp(req->language, "cuda")) return true;
  if (req->language && *req->language) return false;
  kf_spec *s = NULL;
  char err[256];
  if (kf_spec_parse((const char *)req->problem_spec.data,
                    req->problem_spec.len, NULL, &s, err, sizeof err))
    return false;
  bool cuda = !strcmp(s->backend, "cuda");
  kf_spec_free(s);
  return cuda;
}

int kf_harness__eval_cuda(const kf_harness_eval_opts *o,
                          Kernelfleet__EvalRequest *req, int out_fd) {
  ev *e = calloc(1, sizeof *e);
  if (!e) return KF_ENOMEM;
  e->o = o;
  e->req = req;
  e->lock_fd = -1;
  e->cand.memfd = e->ref.memfd = -1;
  e->arch = o->cuda_arch && *o->cuda_arch ? o->cuda_arch : "sm_90a";
  kernelfleet__eval_result__init(&e->res);
  e->res.stages = e->st.ptrs;
  uint64_t t0 = kf_now_ms();
  stage_begin(e, "request");
  char err[512];
  if (!req->source || !*req->source || !req->reference_source ||
      !*req->reference_source) {
    stage_end(e, KF_OUTCOME_SPEC_ERROR, "the request has no candidate or no "
              "reference source");
  } else if (kf_spec_parse((const char *)req->problem_spec.data,
                           req->problem_spec.len, NULL, &e->spec, err,
                           sizeof err)) {
    snprintf(e->why, WHY, "problem spec: %s", err);
    stage_end(e, KF_OUTCOME_SPEC_ERROR, e->why);
  } else if (strcmp(e->spec->backend, "cuda") != 0) {
    snprintf(e->why, WHY, "language 'cuda' for a '%s' problem",
             e->spec->backend);
    stage_end(e, KF_OUTCOME_SPEC_ERROR, e->why);
  } else if (e->spec->n_check_sizes < 1 || e->spec->n_outputs < 1) {
    stage_end(e, KF_OUTCOME_SPEC_ERROR, "the spec has no check sizes or no "
              "outputs");
  } else {
    stage_end(e, 0, NULL);
    e->res.n_stages = 0;
    kf_log(KF_LOG_INFO, "eval (cuda %s, device %d): problem %s, candidate %"
           PRId64 ", %zu knobs", e->arch, o->device, e->spec->name,
           req->candidate_id, req->n_knobs);
    run_stages(e);
  }
  runner_stop(&e->cand);
  runner_stop(&e->ref);
  if (e->lock_fd >= 0) close(e->lock_fd); /* releases the GPU lock */
  kf_harness__workdir_remove(&e->wd);
  e->res.max_abs_err = e->max_abs;
  e->res.max_rel_err = e->max_rel;
  kf_log(KF_LOG_INFO, "eval done: %s in %" PRIu64 " ms",
         kf_outcome_name(e->res.outcome), kf_now_ms() - t0);
  int rc = kf_harness__write_result(&e->res, out_fd);
  kf_spec_free(e->spec);
  free(e);
  return rc;
}
