/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/runner_client.c -- the eval process's side of a runner: creates
 * the memfd, spawns the runner (harness/runner.c) with an empty
 * environment, times each call, and turns every way a runner can end into
 * a kf_outcome with a reason.
 *
 * A runner is a zygote that forks one child per call (harness/runner.c);
 * the zygote's FORKED/EXITED messages arrive on their own pipe, which no
 * child holds, so they are trusted; the child's READY/DONE are claims.
 * Before each call a fresh child must have said READY ("armed"); the time
 * spent forking and loading is outside the timed window.
 *
 * Timing is taken here, never in the runner: CLOCK_MONOTONIC just before
 * the command is written and just after the reply is read.  Because the
 * candidate controls the child once kf_launch has run, a reply is only a
 * claim that the work is done.  Three checks keep it honest:
 *   - replies carry the command's sequence number; an extra or early
 *     reply shows up as out of sequence;
 *   - the child's CPU-time clock is read when it replies, and the zygote
 *     reports its total when it has exited: a child that keeps computing
 *     after "done" (work deferred past the end of timing) is a
 *     SANDBOX_VIOLATION, and so is one that does not end;
 *   - it has no threads or children to hide work in (seccomp).
 * Every runner lives in the eval process's process group, so a worker
 * that kills the harness's group kills the runners too.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "internal.h"
#include "log.h"
#include "outcome.h"
#include "util.h"

/* CPU a runner may use between its reply and the next command: the return
 * from write and the entry to read, plus scheduler noise. */
#define IDLE_SLACK_NS (2u * 1000u * 1000u)

const char *kf_harness__sysname(long nr) {
  static const struct {
    long nr;
    const char *name;
  } t[] = {
#define S(n) {SYS_##n, #n},
      S(read) S(write) S(openat) S(close) S(socket) S(connect) S(bind)
      S(listen) S(accept4) S(sendto) S(recvfrom) S(clone) S(execve)
      S(execveat) S(kill) S(tgkill) S(ptrace) S(rt_sigaction) S(mmap)
      S(mprotect) S(ioctl) S(prctl) S(seccomp) S(unshare) S(setns)
      S(getdents64) S(newfstatat) S(fstat) S(statx) S(unlinkat) S(mkdirat)
      S(ftruncate) S(sched_setaffinity) S(sched_getaffinity) S(setpriority)
      S(clone3) S(wait4) S(exit_group) S(perf_event_open) S(bpf)
      S(process_vm_readv) S(process_vm_writev) S(memfd_create) S(socketpair)
      S(pipe2) S(dup) S(dup3) S(fcntl) S(chdir) S(getcwd) S(uname)
      S(sysinfo) S(getrusage) S(times) S(timer_create) S(setitimer)
      S(rt_sigqueueinfo) S(sigaltstack) S(mincore) S(personality)
      S(io_uring_setup) S(userfaultfd) S(readlinkat) S(faccessat)
      S(getppid) S(nanosleep) S(clock_nanosleep) S(munmap) S(mremap)
#if defined(__x86_64__)
      S(open) S(fork) S(vfork) S(stat) S(lstat) S(access) S(pipe) S(dup2)
      S(arch_prctl) S(time) S(alarm) S(pause) S(readlink) S(getdents)
      S(unlink) S(mkdir) S(iopl) S(ioperm) S(modify_ldt)
#endif
#undef S
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (t[i].nr == nr) return t[i].name;
  return "?";
}

void kf_harness__defenses_str(uint32_t def, char *out, size_t outlen) {
  size_t n = 0;
  out[0] = '\0';
#define XX(name, bit, text)                                                   \
  if ((def & KF_HARNESS_DEF_##name) && n < outlen)                            \
    n += (size_t)snprintf(out + n, outlen - n, "%s%s", n ? " " : "", text);
  KF_HARNESS_DEF_MAP(XX)
#undef XX
  if (!n) kf_strlcpy(out, "none", outlen);
}

static uint64_t cpu_ns(const kf_harness_runner *r) {
  struct timespec ts;
  if (!r->cpuclock_ok || clock_gettime(r->cpuclock, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What a wait status of the call's child means. */
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
  r->armed = r->replied = false;
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

/* Reads one message from fd 0..1 (reply, status) within timeout_ms,
 * preferring the reply pipe.  Returns 1 when read (*from = the fd index),
 * 0 on EOF of the status pipe (the zygote is gone), -1 on timeout, -2 on
 * error or a torn or foreign message. */
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

/* Outcome for a reply that is not the one we waited for. */
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
  case KF_HARNESS_R_SETUP:
    snprintf(why, whylen, "%s runner setup failed: %s%s%s", r->who, x.msg,
             x.err ? ": " : "", x.err ? strerror(x.err) : "");
    oc = KF_OUTCOME_INFRA_ERROR;
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
  case KF_HARNESS_R_DONE:
    if (x.seq == r->seq && r->seq) {
      snprintf(why, whylen, "%s sent a second 'done' for call %u: the first "
               "was forged and the work went on after replying 'done' "
               "(timing escaped)", r->who, x.seq);
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
  close_fds(r);
  return oc;
}

/* The last call's child: wait for the zygote's EXITED and hold the child
 * to its reply.  0 when it ended cleanly with no work after DONE. */
static int finish_child(kf_harness_runner *r, int timeout_ms, char *why,
                        size_t whylen) {
  if (!r->replied) return 0;
  kf_harness_reply rep;
  int from = 0;
  int k = read_msg(r, false, true, &rep, &from, timeout_ms);
  if (k == -1) {
    uint64_t used = cpu_ns(r);
    kill_runner(r);
    close_fds(r);
    snprintf(why, whylen, "%s kept running %d ms after replying 'done' "
             "(%.3f ms of CPU since; work deferred past the end of timing)",
             r->who, timeout_ms,
             used > r->cpu_at_reply ? (double)(used - r->cpu_at_reply) / 1e6
                                    : 0.0);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  if (k == 0) return zygote_gone(r, why, whylen);
  if (k != 1 || rep.kind != KF_HARNESS_R_EXITED || rep.pid != r->child) {
    kill_runner(r);
    close_fds(r);
    snprintf(why, whylen, "%s runner: protocol error after a call", r->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  r->replied = false;
  r->child = 0;
  r->cpuclock_ok = false;
  if (rep.cpu_ns > r->cpu_at_reply + IDLE_SLACK_NS) {
    snprintf(why, whylen,
             "%s used %.3f ms of CPU after replying 'done' (work deferred "
             "past the end of timing)",
             r->who, (double)(rep.cpu_ns - r->cpu_at_reply) / 1e6);
    kill_runner(r);
    close_fds(r);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  if (!WIFEXITED(rep.status) ||
      WEXITSTATUS(rep.status) != KF_HARNESS_RUNNER_EXIT_CALLED) {
    int oc = classify_status(r, rep.status, why, whylen);
    size_t l = strlen(why);
    snprintf(why + l, whylen - l, " after replying 'done'");
    kill_runner(r);
    close_fds(r);
    return oc == KF_OUTCOME_CRASH ? KF_OUTCOME_SANDBOX_VIOLATION : oc;
  }
  return 0;
}

/* Makes sure a fresh child has loaded the candidate and waits for a
 * command: FORKED from the zygote, then READY from the child. */
static int arm(kf_harness_runner *r, int timeout_ms, char *why,
               size_t whylen) {
  if (r->armed) return 0;
  int oc = finish_child(r, timeout_ms, why, whylen);
  if (oc) return oc;
  kf_harness_reply rep;
  int from = 0;
  int k = read_msg(r, false, true, &rep, &from, timeout_ms);
  if (k == 0) return zygote_gone(r, why, whylen);
  if (k == 1 && rep.kind == KF_HARNESS_R_SETUP)
    return unexpected_reply(r, &rep, why, whylen);
  if (k != 1 || rep.kind != KF_HARNESS_R_FORKED || rep.pid <= 0) {
    kill_runner(r);
    close_fds(r);
    snprintf(why, whylen, "%s runner did not start a call's process",
             r->who);
    return k == -1 ? KF_OUTCOME_TIMEOUT : KF_OUTCOME_INFRA_ERROR;
  }
  r->child = rep.pid;
  r->cpuclock_ok = clock_getcpuclockid(r->child, &r->cpuclock) == 0;
  k = read_msg(r, true, true, &rep, &from, timeout_ms);
  if (k == 1 && from == 0 && rep.kind == KF_HARNESS_R_READY) {
    r->defenses |= rep.defenses;
    r->armed = true;
    return 0;
  }
  if (k == 1 && from == 0) return unexpected_reply(r, &rep, why, whylen);
  if (k == 1 && rep.kind == KF_HARNESS_R_EXITED) {
    oc = classify_status(r, rep.status, why, whylen);
    size_t l = strlen(why);
    snprintf(why + l, whylen - l, " (while loading)");
    kill_runner(r);
    close_fds(r);
    return oc;
  }
  if (k == 0) return zygote_gone(r, why, whylen);
  kill_runner(r);
  close_fds(r);
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
  /* the memfd, the runner's own image and libc, and 1 GiB for the
   * candidate */
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
    /* the first call's child loads the candidate now: load failures and
     * constructors show up here, as before any call */
    return arm(r, timeout_ms, why, whylen);
  }
  if (k == 1) return unexpected_reply(r, &rep, why, whylen);
  if (k == -1) {
    kill_runner(r);
    close_fds(r);
    snprintf(why, whylen, "%s runner not ready after %d ms", who, timeout_ms);
    return KF_OUTCOME_TIMEOUT;
  }
  return zygote_gone(r, why, whylen);
}

int kf_harness__runner_arm(kf_harness_runner *r, int timeout_ms, char *why,
                           size_t whylen) {
  if (r->dead || r->cmd_fd < 0) return 0; /* its own call reports that */
  return arm(r, timeout_ms, why, whylen);
}

int kf_harness__runner_idle_check(kf_harness_runner *r, char *why,
                                  size_t whylen) {
  if (r->dead || r->status_fd < 0) return 0;
  return finish_child(r, 2000, why, whylen);
}

int kf_harness__runner_call(kf_harness_runner *r, kf_harness_cmd *c,
                            int timeout_ms, uint64_t *ns, char *why,
                            size_t whylen) {
  if (r->dead || r->cmd_fd < 0) {
    snprintf(why, whylen, "%s runner is not running", r->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  int oc = arm(r, timeout_ms, why, whylen);
  if (oc) return oc;
  c->magic = KF_HARNESS_MAGIC;
  c->op = KF_HARNESS_OP_RUN;
  c->seq = ++r->seq;
  r->armed = false;
  uint64_t t0 = kf_now_ns();
  ssize_t w;
  do {
    w = write(r->cmd_fd, c, sizeof *c);
  } while (w < 0 && errno == EINTR);
  if (w != (ssize_t)sizeof *c) {
    kill_runner(r);
    close_fds(r);
    snprintf(why, whylen, "%s runner stopped reading commands", r->who);
    return KF_OUTCOME_INFRA_ERROR;
  }
  kf_harness_reply rep;
  int from = 0;
  int k = read_msg(r, true, true, &rep, &from, timeout_ms);
  uint64_t t1 = kf_now_ns();
  if (k == 1 && from == 0) r->cpu_at_reply = cpu_ns(r);
  *ns = t1 - t0;
  if (k == -1) {
    kill_runner(r);
    close_fds(r);
    snprintf(why, whylen, "%s: kf_launch still running after %d ms; killed",
             r->who, timeout_ms);
    return KF_OUTCOME_TIMEOUT;
  }
  if (k == 0) return zygote_gone(r, why, whylen);
  if (k != 1) {
    kill_runner(r);
    close_fds(r);
    snprintf(why, whylen, "%s sent a torn or foreign reply", r->who);
    return KF_OUTCOME_SANDBOX_VIOLATION;
  }
  if (from == 1) { /* the zygote: the child ended without replying */
    if (rep.kind != KF_HARNESS_R_EXITED) {
      kill_runner(r);
      close_fds(r);
      snprintf(why, whylen, "%s runner: protocol error during a call", r->who);
      return KF_OUTCOME_INFRA_ERROR;
    }
    oc = classify_status(r, rep.status, why, whylen);
    kill_runner(r);
    close_fds(r);
    return oc;
  }
  if (rep.kind != KF_HARNESS_R_DONE || rep.seq != r->seq)
    return unexpected_reply(r, &rep, why, whylen);
  r->replied = true;
  /* The child waits for RELEASE after DONE, so its CPU clock could be
   * read above while it still exists. */
  kf_harness_cmd rel;
  memset(&rel, 0, sizeof rel);
  rel.magic = KF_HARNESS_MAGIC;
  rel.op = KF_HARNESS_OP_RELEASE;
  rel.seq = r->seq;
  do {
    w = write(r->cmd_fd, &rel, sizeof rel);
  } while (w < 0 && errno == EINTR);
  if (rep.rc != 0) {
    snprintf(why, whylen, "%s: kf_launch returned %d", r->who, rep.rc);
    kill_runner(r);
    close_fds(r);
    return KF_OUTCOME_CRASH;
  }
  return 0;
}

void kf_harness__runner_stop(kf_harness_runner *r) {
  if (!r || !r->who) return; /* never started */
  if (r->pid > 0 && !r->dead) {
    /* EOF on the command pipe ends an armed child, and the zygote after
     * it; a child still busy is killed with the zygote */
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
