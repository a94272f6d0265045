/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cpu/runner_client.c -- the eval process's side of a CPU runner:
 * creates the memfd, spawns the runner (harness/cpu/runner.c) with an
 * empty environment, times each call, and turns every way a runner can
 * end into a kf_outcome with a reason.
 *
 * A runner is a zygote that forks one child per call; the zygote's
 * FORKED/EXITED messages arrive on their own pipe, which no child holds,
 * so they are trusted; the child's READY/DONE are claims.  Before each call
 * a fresh child must have mapped that call's buffers, loaded the candidate
 * and said READY ("armed"); the time spent forking, mapping and loading is
 * outside the timed window.  (Stopping the armed child until RUN, as the
 * torch backend does, was tried on 2026-11-30: on a loaded machine the
 * SIGCONT's wake put milliseconds into a microsecond kernel's time; code
 * that runs on load is refused by the link check instead, elfcheck.c.)
 *
 * Timing is taken here, never in the runner: CLOCK_MONOTONIC just before
 * RUN is written and just after DONE is read.  Because the candidate
 * controls the child once kf_launch has run, DONE is only a claim that the
 * work is done; so right after DONE the child is killed with SIGKILL, so
 * that nothing it does later can touch its outputs, and only then is its
 * CPU-time clock read (it was read before RUN too): the call is charged
 * the larger of the wall time and all the CPU time the child used (work
 * after a forged "done" is charged, however late this process got to
 * run).  Its exit is reaped before anything else is timed.  The eval
 * process and every runner are pinned to one core: while this process
 * reads the reply, the child does not run.  The child has no threads or
 * children to hide work in (seccomp).  Every runner lives in the eval
 * process's process group, so a worker that kills the harness's group
 * kills the runners too.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "cpu.h"
#include "internal.h"
#include "log.h"
#include "outcome.h"
#include "util.h"


static uint64_t cpu_ns(const kf_harness_runner *r) {
  struct timespec ts;
  if (!r->cpuclock_ok || clock_gettime(r->cpuclock, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What a wait status of a call's child means. */
static int classify_status(const kf_harness_runner *r, int st, char *why,
                           size_t whylen) {
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
      snprintf(why, whylen,
               "%s made a system call from a foreign ABI (killed by SIGSYS)",
               r->who);
      return KF_OUTCOME_SANDBOX_VIOLATION;
    case SIGKILL:
      snprintf(why, whylen,
               "%s was killed by SIGKILL (CPU time or memory exhausted?)",
               r->who);
      return KF_OUTCOME_RESOURCE_LIMIT;
    default:
      snprintf(why, whylen, "%s crashed: killed by %s", r->who,
               kf_harness__signame(sig));
      return KF_OUTCOME_CRASH;
    }
  }
  if (WEXITSTATUS(st) == KF_HARNESS_RUNNER_EXIT_MAP && !r->loaded) {
    snprintf(why, whylen, "%s runner could not map its buffers", r->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  snprintf(why, whylen, "%s exited with status %d inside kf_launch", r->who,
           WEXITSTATUS(st));
  return KF_OUTCOME_CRASH;
}

static void close_fds(kf_harness_runner *r) {
  if (r->cmd_fd >= 0) close(r->cmd_fd);
  if (r->reply_fd >= 0) close(r->reply_fd);
  if (r->status_fd >= 0) close(r->status_fd);
  r->cmd_fd = r->reply_fd = r->status_fd = -1;
}

/* Kills the zygote; the call's child follows it (PR_SET_PDEATHSIG). */
static void kill_runner(kf_harness_runner *r) {
  if (r->pid > 0 && !r->dead) {
    if (r->child > 0) kill(r->child, SIGKILL); /* not yet reaped: the
                                                  zygote is alive */
    kill(r->pid, SIGKILL);
    r->status = kf_harness__reap(r->pid, 1000, false);
    r->dead = true;
  }
  r->child = 0;
  close_fds(r);
}

/* The zygote is gone without saying why. */
static int zygote_gone(kf_harness_runner *r, char *why, size_t whylen) {
  if (!r->dead) {
    r->status = kf_harness__reap(r->pid, 2000, false);
    r->dead = true;
  }
  close_fds(r);
  char st[96];
  if (WIFSIGNALED(r->status))
    snprintf(st, sizeof st, "killed by %s",
             kf_harness__signame(WTERMSIG(r->status)));
  else
    snprintf(st, sizeof st, "exit status %d", WEXITSTATUS(r->status));
  snprintf(why, whylen, "%s runner ended unexpectedly (%s)", r->who, st);
  return KF_OUTCOME_INFRA_ERROR;
}

/* Not on the wire: read_msg's name for a torn message on the reply pipe
 * (.rc: the bytes that came). */
#define R_TORN 100

/* Reads one message from the reply or the status pipe within timeout_ms,
 * preferring the reply pipe.  Returns 1 when read (*from = 0 reply, 1
 * status), 0 on EOF of the status pipe (the zygote is gone), -1 on
 * timeout, -2 on error or a torn or foreign message. */
static int read_msg(kf_harness_runner *r, bool want_reply, bool want_status,
                    kf_harness_reply *rep, int *from, int timeout_ms) {
  uint64_t deadline = kf_now_ms() + (uint64_t)timeout_ms;
  for (;;) {
    uint64_t now = kf_now_ms();
    if (now >= deadline) return -1;
    struct pollfd pf[2] = {{.fd = want_reply ? r->reply_fd : -1, .events = POLLIN},
                           {.fd = want_status ? r->status_fd : -1,
                            .events = POLLIN}};
    int pr = poll(pf, 2, (int)(deadline - now));
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) return -2;
    if (pr == 0) return -1;
    int k = (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) ? 0 : 1;
    int fd = k == 0 ? r->reply_fd : r->status_fd;
    size_t got = 0;
    while (got < sizeof *rep) {
      /* A message is one write of less than PIPE_BUF, so it arrives
       * whole.  A torn one on the reply pipe was written by the side's
       * code (red team 2026-12-01-s3: one byte, then an exit, held the
       * eval in read() for good -- the zygote keeps that pipe open): it
       * is read as R_TORN, which every caller takes for a forged reply.
       * On the zygote's pipe the rest is waited for until the
       * deadline. */
      if (got && k == 0) {
        unsigned n = (unsigned)got;
        memset(rep, 0, sizeof *rep);
        rep->magic = KF_HARNESS_MAGIC;
        rep->kind = R_TORN;
        rep->rc = (int)n;
        *from = 0;
        return 1;
      }
      if (got) {
        uint64_t t = kf_now_ms();
        struct pollfd pt = {.fd = fd, .events = POLLIN};
        int q = t < deadline ? poll(&pt, 1, (int)(deadline - t)) : 0;
        if (q < 0 && errno == EINTR) continue;
        if (q < 0) return -2;
        if (q == 0) return -1;
      }
      ssize_t n = read(fd, (char *)rep + got, sizeof *rep - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return -2;
      if (n == 0) {
        if (got) return -2;
        if (k == 1) return 0;
        /* reply pipe EOF: only the zygote holds it now; it is ending */
        want_reply = false;
        break;
      }
      got += (size_t)n;
    }
    if (got < sizeof *rep) continue;
    *from = k;
    return rep->magic == KF_HARNESS_MAGIC ? 1 : -2;
  }
}

/* Outcome for a reply that is not the one waited for; kills the runner. */
static int unexpected_reply(kf_harness_runner *r, const kf_harness_reply *rep,
                            char *why, size_t whylen) {
  kf_harness_reply x = *rep;
  x.msg[sizeof x.msg - 1] = '\0';
  int oc;
  switch (x.kind) {
  case KF_HARNESS_R_VIOLATION:
    if (x.sysno == SYS_mmap && x.arg1 > KF_HARNESS_MMAP_MAX) {
      snprintf(why, whylen, "%s asked for %.3g GiB in one mmap (a huge "
               "malloc?); a kernel gets at most %llu GiB beyond its buffers",
               r->who, (double)x.arg1 / (double)(1ull << 30),
               (unsigned long long)(KF_HARNESS_MMAP_MAX >> 30));
      oc = KF_OUTCOME_RESOURCE_LIMIT;
      break;
    }
    snprintf(why, whylen, "%s: blocked system call %d (%s)", r->who, x.sysno,
             kf_harness__sysname(x.sysno));
    oc = KF_OUTCOME_SANDBOX_VIOLATION;
    break;
  case KF_HARNESS_R_FAULT: {
    const char *what = x.pid >= 0 && x.pid < KF_HARNESS_MAX_MAPS &&
                               r->names[x.pid][0]
                           ? r->names[x.pid]
                           : "a buffer";
    const char *rw = x.rc ? "wrote" : "read";
    switch (x.sysno) {
    case KF_HARNESS_FAULT_BEFORE:
      snprintf(why, whylen, "%s %s before the start of %s (hit the guard "
               "page below it)", r->who, rw, what);
      oc = KF_OUTCOME_OUT_OF_BOUNDS;
      break;
    case KF_HARNESS_FAULT_AFTER:
      snprintf(why, whylen, "%s %s past the end of %s (hit the guard page "
               "after it, %llu bytes from its start)", r->who, rw, what,
               (unsigned long long)x.arg1);
      oc = KF_OUTCOME_OUT_OF_BOUNDS;
      break;
    case KF_HARNESS_FAULT_READONLY:
      snprintf(why, whylen, "%s wrote into %s (inputs are read-only; byte "
               "%llu)", r->who, what, (unsigned long long)x.arg1);
      oc = KF_OUTCOME_OUT_OF_BOUNDS;
      break;
    default:
      snprintf(why, whylen, "%s crashed: killed by SIGSEGV (an address "
               "outside every buffer)", r->who);
      oc = KF_OUTCOME_CRASH;
      break;
    }
    break;
  }
  case KF_HARNESS_R_SETUP:
    /* after LOADING the side's code shares the process and its reply
     * pipe: a setup failure then is its claim, never the harness's (an
     * infra error is not a verdict, and would be retried; red team
     * 2026-12-01-s3: a wrong kernel ended infra_error so) */
    snprintf(why, whylen, "%s runner setup failed%s: %s%s%s", r->who,
             r->loaded ? " after its code was loaded (the code's own "
                         "claim)" : "",
             x.msg, x.err ? ": " : "", x.err ? strerror(x.err) : "");
    oc = r->loaded ? KF_OUTCOME_CRASH : KF_OUTCOME_INFRA_ERROR;
    break;
  case KF_HARNESS_R_LOADFAIL:
    if (strstr(x.msg, "annot allocate memory") || strstr(x.msg, "map segment") ||
        strstr(x.msg, "map zero-fill")) {
      snprintf(why, whylen, "%s cannot be loaded within the memory limit: %s",
               r->who, x.msg);
      oc = KF_OUTCOME_RESOURCE_LIMIT;
    } else {
      snprintf(why, whylen, "%s cannot be loaded: %s", r->who, x.msg);
      oc = KF_OUTCOME_LINK_REJECTED;
    }
    break;
  case R_TORN:
    snprintf(why, whylen, "%s sent a torn reply (%d of %zu bytes): forged",
             r->who, x.rc, sizeof x);
    oc = KF_OUTCOME_SANDBOX_VIOLATION;
    break;
  case KF_HARNESS_R_DONE:
    if (x.seq == r->seq && r->seq) {
      snprintf(why, whylen, "%s sent a second 'done' for call %u: the first "
               "was forged", r->who, x.seq);
      oc = KF_OUTCOME_SANDBOX_VIOLATION;
      break;
    }
    /* fall through */
  default:
    snprintf(why, whylen,
             "%s sent a reply out of sequence (kind %d, seq %u, expected seq "
             "%u): forged or early reply",
             r->who, x.kind, x.seq, r->seq);
    oc = KF_OUTCOME_SANDBOX_VIOLATION;
    break;
  }
  kill_runner(r);
  return oc;
}

static int write_cmd(kf_harness_runner *r, const kf_harness_cmd *c, char *why,
                     size_t whylen) {
  ssize_t w;
  do {
    w = write(r->cmd_fd, c, sizeof *c);
  } while (w < 0 && errno == EINTR);
  if (w == (ssize_t)sizeof *c) return 0;
  kill_runner(r);
  snprintf(why, whylen, "%s runner stopped reading commands", r->who);
  return KF_OUTCOME_INFRA_ERROR;
}

/* Kills the current child (if any) and waits for the zygote's EXITED. */
static int end_child(kf_harness_runner *r, int timeout_ms, char *why,
                     size_t whylen) {
  if (!r->child) return 0;
  kill(r->child, SIGKILL);
  kf_harness_reply rep;
  int from = 0;
  for (;;) {
    int k = read_msg(r, true, true, &rep, &from, timeout_ms);
    /* a late claim of the dead child; a torn one leaves the pipe out of
     * step, so it ends the runner */
    if (k == 1 && from == 0 && rep.kind == R_TORN)
      return unexpected_reply(r, &rep, why, whylen);
    if (k == 1 && from == 0) continue;
    if (k == 0) return zygote_gone(r, why, whylen);
    if (k != 1 || rep.kind != KF_HARNESS_R_EXITED || rep.pid != r->child) {
      kill_runner(r);
      snprintf(why, whylen, "%s runner: protocol error after a call", r->who);
      return KF_OUTCOME_INFRA_ERROR;
    }
    break;
  }
  r->exit_cpu_ns = rep.cpu_ns;
  r->child = 0;
  r->cpuclock_ok = false;
  return 0;
}


int kf_harness__runner_arm(kf_harness_runner *r, const kf_harness_cmd *plan,
                           int timeout_ms, char *why, size_t whylen) {
  if (r->dead || r->cmd_fd < 0) {
    snprintf(why, whylen, "%s runner is not running", r->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  if (r->child && r->plan.n_maps == plan->n_maps &&
      !memcmp(r->plan.maps, plan->maps,
              (size_t)plan->n_maps * sizeof plan->maps[0]))
    return 0;
  int oc = end_child(r, timeout_ms, why, whylen);
  if (oc) return oc;
  r->plan = *plan;
  r->plan.magic = KF_HARNESS_MAGIC;
  r->plan.op = KF_HARNESS_OP_ARM;
  if ((oc = write_cmd(r, &r->plan, why, whylen))) return oc;
  kf_harness_reply rep;
  int from = 0;
  int k = read_msg(r, false, true, &rep, &from, timeout_ms);
  if (k == 0) return zygote_gone(r, why, whylen);
  if (k == 1 && rep.kind == KF_HARNESS_R_SETUP)
    return unexpected_reply(r, &rep, why, whylen);
  if (k != 1 || rep.kind != KF_HARNESS_R_FORKED || rep.pid <= 0) {
    kill_runner(r);
    snprintf(why, whylen, "%s runner did not start a call's process",
             r->who);
    return k == -1 ? KF_OUTCOME_TIMEOUT : KF_OUTCOME_INFRA_ERROR;
  }
  r->child = rep.pid;
  r->loaded = false;
  r->cpuclock_ok = clock_getcpuclockid(r->child, &r->cpuclock) == 0;
  k = read_msg(r, true, true, &rep, &from, timeout_ms);
  if (k == 1 && from == 0 && rep.kind == KF_HARNESS_R_LOADING &&
      !r->loaded) {
    r->loaded = true;
    k = read_msg(r, true, true, &rep, &from, timeout_ms);
  }
  if (k == 1 && from == 0 && rep.kind == KF_HARNESS_R_READY) {
    r->defenses |= rep.defenses;
    return 0;
  }
  if (k == 1 && from == 0) return unexpected_reply(r, &rep, why, whylen);
  if (k == 1 && rep.kind == KF_HARNESS_R_EXITED) {
    r->child = 0;
    oc = classify_status(r, rep.status, why, whylen);
    size_t l = strlen(why);
    snprintf(why + l, whylen - l, " (while loading)");
    kill_runner(r);
    return oc;
  }
  if (k == 0) return zygote_gone(r, why, whylen);
  kill_runner(r);
  if (k == -1) {
    snprintf(why, whylen, "%s not loaded after %d ms (constructor "
             "running?)", r->who, timeout_ms);
    return KF_OUTCOME_TIMEOUT;
  }
  snprintf(why, whylen, "%s runner: protocol error while loading", r->who);
  return KF_OUTCOME_INFRA_ERROR;
}

int kf_harness__runner_start(kf_harness_runner *r, const char *who,
                             const char *exe, const char *jail_dir,
                             const char *so_name, size_t map_len, int cpu_s,
                             int timeout_ms, char *why, size_t whylen) {
  memset(r, 0, sizeof *r);
  r->who = who;
  r->cmd_fd = r->reply_fd = r->status_fd = r->memfd = -1;
  r->map = MAP_FAILED;
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
    snprintf(why, whylen, "mmap memfd: %s", strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  r->map_len = map_len;
  int cp[2], rp[2], sp[2];
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
  if (pipe2(sp, O_CLOEXEC) != 0) {
    close(cp[0]);
    close(cp[1]);
    close(rp[0]);
    close(rp[1]);
    snprintf(why, whylen, "pipe: %s", strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  char as[32], cpu[32];
  /* the buffers (mapped per call), the runner's own image and libc, and
   * 1 GiB for the candidate */
  snprintf(as, sizeof as, "%zu", map_len + ((size_t)1 << 30) + ((size_t)64 << 20));
  snprintf(cpu, sizeof cpu, "%d", cpu_s);
  char *argv[] = {"kf-harness-runner", "runner", "--jail", (char *)jail_dir,
                  "--so", (char *)so_name, "--as-bytes", as, "--cpu-s", cpu,
                  NULL};
  kf_harness_spawn_opts so = {
      .path = exe,
      .argv = argv,
      .envp = NULL,
      .fd = {cp[0], rp[1], sp[1], r->memfd},
  };
  char err[512];
  int rc = kf_harness__spawn(&so, &r->pid, err, sizeof err);
  close(cp[0]);
  close(rp[1]);
  close(sp[1]);
  r->cmd_fd = cp[1];
  r->reply_fd = rp[0];
  r->status_fd = sp[0];
  if (rc) {
    close_fds(r);
    r->pid = 0;
    snprintf(why, whylen, "cannot start the %s runner: %s", who, err);
    return KF_OUTCOME_INFRA_ERROR;
  }
  kf_harness_reply rep;
  int from = 0;
  int k = read_msg(r, false, true, &rep, &from, timeout_ms);
  if (k == 1 && rep.kind == KF_HARNESS_R_READY) {
    r->defenses = rep.defenses;
    /* a first child loads the candidate now (no buffers): load failures
     * and constructors show up here, before any call */
    kf_harness_cmd none;
    memset(&none, 0, sizeof none);
    return kf_harness__runner_arm(r, &none, timeout_ms, why, whylen);
  }
  if (k == 1) return unexpected_reply(r, &rep, why, whylen);
  if (k == -1) {
    kill_runner(r);
    snprintf(why, whylen, "%s runner not ready after %d ms", who, timeout_ms);
    return KF_OUTCOME_TIMEOUT;
  }
  return zygote_gone(r, why, whylen);
}

/* The sequence number of the next call: random, nonzero, not the last
 * one.  The child reads its command (it must echo the number in DONE), so
 * a counter there would be a call counter: the first calls are the
 * checks, the later ones timed.  A random number tells it nothing. */
static uint32_t next_seq(const kf_harness_runner *r) {
  for (;;) {
    uint32_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
      /* no entropy call: the clock's low bits still count nothing */
      v = (uint32_t)(kf_now_ns() * 0x9E3779B97F4A7C15ull >> 32);
    }
    if (v && v != r->seq) return v;
  }
}

int kf_harness__runner_call(kf_harness_runner *r, kf_harness_cmd *c,
                            int timeout_ms, uint64_t *ns, char *why,
                            size_t whylen) {
  int oc = kf_harness__runner_arm(r, c, timeout_ms, why, whylen);
  if (oc) return oc;
  c->magic = KF_HARNESS_MAGIC;
  c->op = KF_HARNESS_OP_RUN;
  c->seq = r->seq = next_seq(r);
  uint64_t c0 = cpu_ns(r);
  uint64_t t0 = kf_now_ns();
  if ((oc = write_cmd(r, c, why, whylen))) return oc;
  kf_harness_reply rep;
  int from = 0;
  int k = read_msg(r, true, true, &rep, &from, timeout_ms);
  uint64_t t1 = kf_now_ns();
  /* The child is killed before its clock is read: once SIGKILL is pending
   * it runs no more of its own code, so everything it did since RUN is in
   * the reading, however long this process waited for the core (a forged
   * DONE followed by work, on a loaded machine, used to finish between the
   * reading and the kill: outputs written, work uncharged).  The reading
   * fails only when the zygote already reaped it; then its final CPU time
   * comes with EXITED (end_child). */
  bool replied = k == 1 && from == 0;
  if (replied && r->child > 0) kill(r->child, SIGKILL);
  uint64_t c1 = replied ? cpu_ns(r) : 0;
  uint64_t wall = t1 - t0, used = c1 > c0 ? c1 - c0 : 0;
  *ns = used > wall ? used : wall;
  if (k == -1) {
    kill_runner(r);
    snprintf(why, whylen, "%s: kf_launch still running after %d ms; killed",
             r->who, timeout_ms);
    return KF_OUTCOME_TIMEOUT;
  }
  if (k == 0) return zygote_gone(r, why, whylen);
  if (k != 1) {
    kill_runner(r);
    snprintf(why, whylen, "%s sent a torn or foreign reply", r->who);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  if (from == 1) { /* the zygote: the child ended without replying */
    if (rep.kind != KF_HARNESS_R_EXITED) {
      kill_runner(r);
      snprintf(why, whylen, "%s runner: protocol error during a call", r->who);
      return KF_OUTCOME_INFRA_ERROR;
    }
    r->child = 0;
    oc = classify_status(r, rep.status, why, whylen);
    kill_runner(r);
    return oc;
  }
  if (rep.kind != KF_HARNESS_R_DONE || rep.seq != r->seq)
    return unexpected_reply(r, &rep, why, whylen);
  /* whatever it does after DONE cannot touch its outputs any more */
  if ((oc = end_child(r, timeout_ms, why, whylen))) return oc;
  if (c1 == 0 && r->exit_cpu_ns > c0 && r->exit_cpu_ns - c0 > *ns)
    *ns = r->exit_cpu_ns - c0;
  if (rep.rc != 0) {
    snprintf(why, whylen, "%s: kf_launch returned %d", r->who, rep.rc);
    kill_runner(r);
    return KF_OUTCOME_CRASH;
  }
  return 0;
}

void kf_harness__runner_stop(kf_harness_runner *r) {
  if (!r || !r->who) return; /* never started */
  if (r->pid > 0 && !r->dead) {
    if (r->child > 0) kill(r->child, SIGKILL);
    /* EOF on the command pipe ends the zygote */
    if (r->cmd_fd >= 0) close(r->cmd_fd);
    r->cmd_fd = -1;
    r->status = kf_harness__reap(r->pid, 500, false);
    r->dead = true;
    r->child = 0;
  }
  close_fds(r);
  if (r->map && r->map != MAP_FAILED) munmap(r->map, r->map_len);
  r->map = MAP_FAILED;
  if (r->memfd >= 0) close(r->memfd);
  r->memfd = -1;
}
