/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-harness-cudafilter.c -- the CUDA runner's seccomp policy
 * (harness/cuda/filter.c, linked in), installed for real in a forked child
 * and probed with raw syscalls: the kernel, not a reading of the BPF, says
 * what a CUDA candidate may do.  No GPU needed; the runner installs these
 * same filters after the driver has opened its device fds.
 *
 *  - run filter: computing, memory, clocks and the driver's calls on its
 *    own fds (ioctl, close, fcntl, poll) get through; tgkill to itself
 *    too; openat/open fail with EPERM instead of killing (the driver's
 *    file probes);
 *  - run filter: sockets, exec, fork/clone, signals to other processes,
 *    ptrace, reading another process's memory, privilege and namespace
 *    calls, prctl, a further seccomp filter -- each kills the child with
 *    SIGSYS;
 *  - load filter: openat succeeds (dlopen of the .so in the jail), the run
 *    filter can be stacked on it (the runner's order), and the same
 *    forbidden calls trap;
 *  - both filters fit the builder's capacity and install.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "filter.h"

/* What a probe reports through the child's exit status. */
enum { PROBE_OK = 0, PROBE_SETUP = 90, PROBE_INSTALL = 91, PROBE_WRONG = 92 };

typedef int (*probe_fn)(void);

static int install(bool loading) {
  kf_sandbox_bpf p = {.n = 0};
  kf_harness__cuda_filter(&p, loading, (pid_t)syscall(SYS_getpid));
  return kf_sandbox_install(&p);
}

/* Forks; the child installs the filter (load, or load then run as the
 * runner does) and runs the probe.  Returns the child's wait status. */
static int in_child(bool run_filter, probe_fn probe) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* cmocka catches SIGSYS (among its exception signals) to report a
     * crash; in the child that handler would turn the filter's trap into
     * cmocka's own exit (255), so the trap gets its default action back,
     * as in the runner. */
    signal(SIGSYS, SIG_DFL);
    struct rlimit no_core = {0, 0};
    if (setrlimit(RLIMIT_CORE, &no_core) != 0 ||
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
      _exit(PROBE_SETUP);
    if (install(true) != 0) _exit(PROBE_INSTALL);
    if (run_filter && install(false) != 0) _exit(PROBE_INSTALL);
    int r = probe();
    syscall(SYS_exit_group, r);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) assert_int_equal(errno, EINTR);
  return st;
}

static void expect_exit(int st, int code, const char *what) {
  if (!WIFEXITED(st) || WEXITSTATUS(st) != code)
    fail_msg("%s: expected exit %d, got %s %d", what, code,
             WIFEXITED(st) ? "exit" : "signal",
             WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

static void expect_sigsys(int st, const char *what) {
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
    fail_msg("%s: expected death by SIGSYS, got %s %d", what,
             WIFEXITED(st) ? "exit" : "signal",
             WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

/* ------------------------------------------------------------ allowed */

static int probe_allowed(void) {
  if (syscall(SYS_getpid) <= 0) return PROBE_WRONG;
  struct timespec ts;
  if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) != 0) return PROBE_WRONG;
  void *m = (void *)syscall(SYS_mmap, NULL, 1 << 20, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return PROBE_WRONG;
  memset(m, 7, 1 << 20);
  if (syscall(SYS_mprotect, m, 4096, PROT_READ) != 0) return PROBE_WRONG;
  if (syscall(SYS_munmap, m, 1 << 20) != 0) return PROBE_WRONG;
  /* the driver's calls on fds: allowed, so a bad fd says EBADF */
  if (syscall(SYS_ioctl, -1, 0, 0) != -1 || errno != EBADF) return PROBE_WRONG;
  if (syscall(SYS_close, -1) != -1 || errno != EBADF) return PROBE_WRONG;
  if (syscall(SYS_fcntl, -1, F_GETFD) != -1 || errno != EBADF) return PROBE_WRONG;
  if (syscall(SYS_ppoll, NULL, 0, &(struct timespec){0, 0}, NULL, 8) != 0)
    return PROBE_WRONG;
  /* abort() signals itself through tgkill: allowed to self */
  long self = syscall(SYS_getpid);
  if (syscall(SYS_tgkill, self, syscall(SYS_gettid), 0) != 0) return PROBE_WRONG;
  return PROBE_OK;
}

static void test_run_allows_compute_and_driver_calls(void **state) {
  (void)state;
  expect_exit(in_child(true, probe_allowed), PROBE_OK, "run filter");
  expect_exit(in_child(false, probe_allowed), PROBE_OK, "load filter");
}

/* A descriptor shared with the harness (the command pipe) must not be
 * made to signal anyone: the harness's next write to it would send the
 * signal, from a process no kill(2) rule sees.  The pipe is made before
 * the filters, as the runner's are; the driver's own uses stay. */
static int pipe_fds[2];

static int probe_fd_signals_refused(void) {
  int fd = pipe_fds[0];
  long fl = syscall(SYS_fcntl, fd, F_GETFL);
  if (fl < 0) return PROBE_WRONG;
  static const int cmds[] = {F_SETOWN, F_SETSIG, F_SETPIPE_SZ, F_SETLEASE,
                             F_NOTIFY};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (syscall(SYS_fcntl, fd, cmds[i], 1) != -1 || errno != EPERM)
      return PROBE_WRONG;
  struct f_owner_ex own = {F_OWNER_PID, 1};
  if (syscall(SYS_fcntl, fd, F_SETOWN_EX, &own) != -1 || errno != EPERM)
    return PROBE_WRONG;
  if (syscall(SYS_fcntl, fd, F_SETFL, fl | O_ASYNC) != -1 || errno != EPERM)
    return PROBE_WRONG;
  int on = 1, pid = 1;
  if (syscall(SYS_ioctl, fd, FIOASYNC, &on) != -1 || errno != EPERM ||
      syscall(SYS_ioctl, fd, FIOSETOWN, &pid) != -1 || errno != EPERM ||
      syscall(SYS_ioctl, fd, SIOCSPGRP, &pid) != -1 || errno != EPERM)
    return PROBE_WRONG;
  /* what the driver does on its own descriptors still works */
  if (syscall(SYS_fcntl, fd, F_SETFL, fl | O_NONBLOCK) != 0 ||
      syscall(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC) != 0 ||
      syscall(SYS_fcntl, fd, F_GETOWN) != 0)
    return PROBE_WRONG;
  return PROBE_OK;
}

static void test_run_refuses_fd_signals(void **state) {
  (void)state;
  assert_int_equal(pipe(pipe_fds), 0);
  expect_exit(in_child(true, probe_fd_signals_refused), PROBE_OK,
              "run filter");
  expect_exit(in_child(false, probe_fd_signals_refused), PROBE_OK,
              "load filter");
  /* nothing of it reached the pipe the parent shares */
  assert_int_equal(fcntl(pipe_fds[0], F_GETOWN), 0);
  assert_int_equal(fcntl(pipe_fds[0], F_GETSIG), 0);
  assert_false(fcntl(pipe_fds[0], F_GETFL) & O_ASYNC);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

static int probe_open_eperm(void) {
  if (syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY) != -1 ||
      errno != EPERM)
    return PROBE_WRONG;
#ifdef SYS_open
  if (syscall(SYS_open, "/dev/null", O_RDONLY) != -1 || errno != EPERM)
    return PROBE_WRONG;
#endif
  return PROBE_OK;
}

static void test_run_open_fails_with_eperm(void **state) {
  (void)state;
  expect_exit(in_child(true, probe_open_eperm), PROBE_OK, "run filter open");
}

static int probe_open_works(void) {
  long fd = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PROBE_WRONG;
  syscall(SYS_close, fd);
  /* then the runner stacks the run filter: open is refused from there on */
  if (install(false) != 0) return PROBE_INSTALL;
  return probe_open_eperm();
}

static void test_load_opens_then_stacks_run(void **state) {
  (void)state;
  expect_exit(in_child(false, probe_open_works), PROBE_OK, "load then run");
}

/* ------------------------------------------------------------ trapped */

/* Each returns only if the call was let through. */
static int try_socket(void) {
  syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
  return PROBE_WRONG;
}
static int try_execve(void) {
  char *argv[] = {"true", NULL}, *envp[] = {NULL};
  syscall(SYS_execve, "/bin/true", argv, envp);
  return PROBE_WRONG;
}
static int try_clone(void) {
  long r = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
  if (r == 0) syscall(SYS_exit_group, 0);
  return PROBE_WRONG;
}
static int try_kill_parent(void) {
  syscall(SYS_kill, getppid(), 0);
  return PROBE_WRONG;
}
static int try_tgkill_parent(void) {
  pid_t pp = getppid();
  syscall(SYS_tgkill, pp, pp, 0);
  return PROBE_WRONG;
}
static int try_ptrace(void) {
  syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0);
  return PROBE_WRONG;
}
static int try_process_vm_readv(void) {
  syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL, 0, 0);
  return PROBE_WRONG;
}
static int try_setuid(void) {
  syscall(SYS_setuid, 0);
  return PROBE_WRONG;
}
static int try_unshare(void) {
  syscall(SYS_unshare, 0);
  return PROBE_WRONG;
}
static int try_prctl(void) {
  syscall(SYS_prctl, PR_GET_DUMPABLE, 0, 0, 0, 0);
  return PROBE_WRONG;
}
static int try_seccomp_in_run(void) {
  install(false);
  return PROBE_WRONG;
}
static int try_mount(void) {
  syscall(SYS_mount, "none", "/", "tmpfs", 0, NULL);
  return PROBE_WRONG;
}

static const struct {
  const char *name;
  probe_fn fn;
  bool also_load; /* trapped by the load filter as well */
} forbidden[] = {
    {"socket", try_socket, true},
    {"execve", try_execve, true},
    {"clone", try_clone, true},
    {"kill(parent)", try_kill_parent, true},
    {"tgkill(parent)", try_tgkill_parent, true},
    {"ptrace", try_ptrace, true},
    {"process_vm_readv", try_process_vm_readv, true},
    {"setuid", try_setuid, true},
    {"unshare", try_unshare, true},
    {"prctl", try_prctl, true},
    {"mount", try_mount, true},
    {"seccomp", try_seccomp_in_run, false},
};

static void test_run_traps_forbidden(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof forbidden / sizeof forbidden[0]; i++)
    expect_sigsys(in_child(true, forbidden[i].fn), forbidden[i].name);
}

static void test_load_traps_forbidden(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof forbidden / sizeof forbidden[0]; i++)
    if (forbidden[i].also_load)
      expect_sigsys(in_child(false, forbidden[i].fn), forbidden[i].name);
}

/* The probes themselves can tell: without a filter each forbidden call
 * returns to the probe (PROBE_WRONG), so death by SIGSYS above is the
 * filter's doing.  Only harmless ones here (no exec, no mount). */
static void test_probes_return_without_filter(void **state) {
  (void)state;
  probe_fn unfiltered[] = {try_socket, try_kill_parent, try_prctl, try_clone};
  for (size_t i = 0; i < sizeof unfiltered / sizeof unfiltered[0]; i++) {
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) syscall(SYS_exit_group, unfiltered[i]());
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) assert_int_equal(errno, EINTR);
    expect_exit(st, PROBE_WRONG, "unfiltered probe");
  }
  /* the clone probe's own child */
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

static void test_filters_fit(void **state) {
  (void)state;
  kf_sandbox_bpf load = {.n = 0}, run = {.n = 0};
  kf_harness__cuda_filter(&load, true, 1);
  kf_harness__cuda_filter(&run, false, 1);
  assert_true(load.n > 10 && load.n <= sizeof load.ins / sizeof load.ins[0]);
  assert_true(run.n > 10 && run.n <= sizeof run.ins / sizeof run.ins[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_filters_fit),
      cmocka_unit_test(test_run_allows_compute_and_driver_calls),
      cmocka_unit_test(test_run_open_fails_with_eperm),
      cmocka_unit_test(test_run_refuses_fd_signals),
      cmocka_unit_test(test_load_opens_then_stacks_run),
      cmocka_unit_test(test_run_traps_forbidden),
      cmocka_unit_test(test_load_traps_forbidden),
      cmocka_unit_test(test_probes_return_without_filter),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
