/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/proc.c -- the harness's one spawn path (compiler and
 * runners) and its reaper.  fork + exec only: between the two the child
 * calls nothing but syscalls, and any failure there is written to a
 * close-on-exec pipe as (step, errno), so the parent learns at spawn time
 * that the exec did not happen.  The same pipe carries notes that do not
 * stop the exec: a compiler jail (compile_jail.c) that could not begin, a
 * network namespace refused.  Deadlines end in SIGKILL to the child's
 * process group.
 * The eval process is single-threaded whenever it forks (parallel.c's
 * threads are joined before their call returns), so fork is safe here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grp.h>

#include "err.h"
#include "internal.h"
#include "sandbox.h"
#include "util.h"

enum { STEP_DUP = 1, STEP_CWD, STEP_LIMIT, STEP_UID, STEP_EXEC, STEP_PGRP,
       STEP_JAIL };
/* notes: the child goes on */
enum { NOTE_JAIL_OFF = 100, NOTE_NO_NETNS };

static const char *step_name(int s) {
  switch (s) {
  case STEP_DUP: return "dup2";
  case STEP_CWD: return "chdir";
  case STEP_LIMIT: return "setrlimit";
  case STEP_UID: return "setuid";
  case STEP_EXEC: return "execve";
  case STEP_PGRP: return "setpgid";
  case STEP_JAIL: return "compiler jail";
  }
  return "setup";
}

/* (step, errno, detail): one pipe write, atomic */
static void child_msg(int efd, int step, int detail) {
  int msg[3] = {step, errno, detail};
  ssize_t w = write(efd, msg, sizeof msg);
  (void)w;
}

static _Noreturn void child_fail(int efd, int step) {
  child_msg(efd, step, 0);
  _exit(127);
}

int kf_harness__spawn(const kf_harness_spawn_opts *o, pid_t *pid, char *err,
                      size_t errlen) {
  int ep[2];
  if (pipe2(ep, O_CLOEXEC) != 0)
    return kf_seterr(KF_ESPAWN, err, errlen, "pipe: %s", strerror(errno));
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) {
    close(ep[0]);
    close(ep[1]);
    return kf_seterr(KF_ESPAWN, err, errlen, "/dev/null: %s", strerror(errno));
  }
  static char *const empty_env[] = {NULL};
  pid_t p = fork();
  if (p < 0) {
    int e = errno;
    close(ep[0]);
    close(ep[1]);
    close(devnull);
    return kf_seterr(KF_ESPAWN, err, errlen, "fork: %s", strerror(e));
  }
  if (p == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (o->new_pgrp && setpgid(0, 0) != 0) child_fail(ep[1], STEP_PGRP);
    /* Move sources above 3 first so dup2 onto 0..3 cannot clobber one. */
    int src[4];
    for (int i = 0; i < 4; i++) {
      int f = o->fd[i] >= 0 ? o->fd[i] : (i < 3 ? devnull : -1);
      src[i] = f >= 0 ? fcntl(f, F_DUPFD_CLOEXEC, 10) : -1;
      if (f >= 0 && src[i] < 0) child_fail(ep[1], STEP_DUP);
    }
    for (int i = 0; i < 4; i++) {
      if (src[i] < 0) {
        close(i);
        continue;
      }
      if (dup2(src[i], i) < 0) child_fail(ep[1], STEP_DUP);
    }
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (o->cwd && chdir(o->cwd) != 0) child_fail(ep[1], STEP_CWD);
    if (o->jail) {
      int jstep = 0, jrc = kf_harness__jail_enter(o->jail, &jstep);
      if (jrc < 0) {
        child_msg(ep[1], STEP_JAIL, jstep);
        _exit(127);
      }
      if (jrc > 0) child_msg(ep[1], NOTE_JAIL_OFF, jstep);
    }
    if (o->isolate && geteuid() == 0 &&
        unshare(CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) != 0)
      child_msg(ep[1], NOTE_NO_NETNS, 0);
    for (int i = 0; i < o->n_limits; i++) {
      struct rlimit rl = {o->limits[i].soft, o->limits[i].soft};
      if (setrlimit(o->limits[i].res, &rl) != 0) child_fail(ep[1], STEP_LIMIT);
    }
    if (o->nobody && geteuid() == 0) {
      if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
        child_fail(ep[1], STEP_UID);
      prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    }
    execve(o->path, o->argv, o->envp ? o->envp : empty_env);
    child_fail(ep[1], STEP_EXEC);
  }
  close(ep[1]);
  close(devnull);
  if (o->jail) o->jail->state = KF_HARNESS_JAIL_ON; /* unless a note says */
  int msg[3];
  ssize_t r;
  for (;;) {
    r = read(ep[0], msg, sizeof msg);
    if (r < 0 && errno == EINTR) continue;
    if (r != (ssize_t)sizeof msg || msg[0] < NOTE_JAIL_OFF) break;
    if (!o->jail) continue;
    if (msg[0] == NOTE_NO_NETNS) {
      o->jail->no_netns = true;
      continue;
    }
    o->jail->state = KF_HARNESS_JAIL_OFF;
    kf_harness__jail_why(o->jail, msg[2], msg[1], o->jail->note,
                         sizeof o->jail->note);
  }
  close(ep[0]);
  if (r == (ssize_t)sizeof msg) {
    int st;
    waitpid(p, &st, 0);
    if (msg[0] == STEP_JAIL) {
      char what[256];
      kf_harness__jail_why(o->jail, msg[2], msg[1], what, sizeof what);
      return kf_seterr(KF_ESPAWN, err, errlen, "%s: compiler jail: %s",
                       o->path, what);
    }
    return kf_seterr(KF_ESPAWN, err, errlen, "%s: %s: %s", o->path,
                     step_name(msg[0]), strerror(msg[1]));
  }
  *pid = p;
  return 0;
}

int kf_harness__reap(pid_t pid, int timeout_ms, bool group) {
  uint64_t deadline = kf_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
  int st = 0;
  for (;;) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) return st;
    if (w < 0 && errno != EINTR) return 0;
    if (kf_now_ms() >= deadline) {
      if (group) kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      return st;
    }
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

int kf_harness__run(const kf_harness_spawn_opts *o, int timeout_ms,
                    char *out, size_t outcap, int *status, bool *timed_out,
                    char *err, size_t errlen) {
  int op[2];
  if (pipe2(op, O_CLOEXEC) != 0)
    return kf_seterr(KF_ESPAWN, err, errlen, "pipe: %s", strerror(errno));
  kf_harness_spawn_opts so = *o;
  so.fd[1] = op[1];
  so.fd[2] = op[1];
  pid_t pid;
  int rc = kf_harness__spawn(&so, &pid, err, errlen);
  close(op[1]);
  if (rc) {
    close(op[0]);
    return rc;
  }
  *timed_out = false;
  size_t n = 0; /* bytes in out (a sliding tail) */
  uint64_t deadline = kf_now_ms() + (uint64_t)timeout_ms;
  char buf[4096];
  for (;;) {
    uint64_t now = kf_now_ms();
    if (now >= deadline) {
      *timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      break;
    }
    struct pollfd pf = {.fd = op[0], .events = POLLIN};
    int pr = poll(&pf, 1, (int)(deadline - now));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    ssize_t r = read(op[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    kf_harness__tail_append(out, outcap, &n, buf, (size_t)r);
  }
  close(op[0]);
  if (outcap) out[n < outcap ? n : outcap - 1] = '\0';
  int remain = (int)(deadline > kf_now_ms() ? deadline - kf_now_ms() : 0);
  *status = kf_harness__reap(pid, *timed_out ? 0 : remain + 100, true);
  /* anything left in the group (cc1 after the driver died) goes too */
  kill(-pid, SIGKILL);
  if (!*timed_out && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL &&
      kf_now_ms() >= deadline)
    *timed_out = true;
  return 0;
}

const char *kf_harness__signame(int sig) {
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGABRT: return "SIGABRT";
  case SIGILL: return "SIGILL";
  case SIGTRAP: return "SIGTRAP";
  case SIGKILL: return "SIGKILL";
  case SIGSYS: return "SIGSYS";
  case SIGXCPU: return "SIGXCPU";
  case SIGXFSZ: return "SIGXFSZ";
  case SIGPIPE: return "SIGPIPE";
  case SIGTERM: return "SIGTERM";
  case SIGALRM: return "SIGALRM";
  }
  static _Thread_local char buf[32];
  snprintf(buf, sizeof buf, "signal %d", sig);
  return buf;
}

void kf_harness__tail_append(char *out, size_t cap, size_t *n,
                             const char *src, size_t k) {
  if (cap < 2) return;
  if (k >= cap - 1) {
    src += k - (cap - 1);
    k = cap - 1;
    *n = 0;
  } else if (*n + k > cap - 1) {
    size_t drop = *n + k - (cap - 1);
    memmove(out, out + drop, *n - drop);
    *n -= drop;
  }
  memcpy(out + *n, src, k);
  *n += k;
}

bool kf_harness__cuda_exe(char *out, size_t outlen) {
  kf_self_sibling("KF_HARNESS_CUDA", "kf-harness-cuda", out, outlen);
  return access(out, X_OK) == 0;
}

void kf_harness__runner_exe(char *out, size_t outlen) {
  char dir[PATH_MAX];
  if (kf_self_dir(dir, sizeof dir) == 0) {
    snprintf(out, outlen, "%s/kf-harness-runner", dir);
    if (access(out, X_OK) == 0) return;
  }
  /* kf-harness itself has the runner mode */
  if (kf_self_exe(out, outlen) != 0) kf_strlcpy(out, "/proc/self/exe", outlen);
}

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


char kf_harness__proc_state(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  /* gone only when /proc says so; out of descriptors is not a verdict */
  if (fd < 0) return errno == ENOENT || errno == ESRCH ? 0 : '?';
  ssize_t n = read(fd, buf, sizeof buf - 1);
  int err = errno;
  close(fd);
  if (n < 0) return err == ESRCH ? 0 : '?';
  if (n == 0) return 0;
  buf[n] = '\0';
  char *rp = strrchr(buf, ')'); /* the command name may hold anything */
  return rp && rp[1] == ' ' ? rp[2] : '?';
}

int kf_harness__stop_confirmed(pid_t pid, bool group, int timeout_ms) {
  if (kill(group ? -pid : pid, SIGSTOP) != 0) return -1;
  uint64_t deadline = kf_now_ms() + (uint64_t)timeout_ms;
  for (;;) {
    char st = kf_harness__proc_state(pid);
    if (st == 'T' || st == 't') return 0;
    if (!st || st == 'Z' || st == 'X') return -1;
    if (kf_now_ms() > deadline) return 1;
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
  }
}
