/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/filter.c -- the syscalls the CUDA runner lets a candidate
 * make (harness/cuda/filter.h).  The list is the CPU runner's plus what the
 * CUDA driver uses to launch work and wait for it on the fds it opened
 * before the filter went on; kept without CUDA headers so that CI, which
 * has no GPU, installs these very filters and probes them.
 */
#include "filter.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

/* Both filters: computing, memory management, clocks, and what the CUDA
 * driver uses on fds it already holds to launch work and wait for it. */
static const long base_allow[] = {
    SYS_read,          SYS_write,          SYS_exit,          SYS_exit_group,
    SYS_futex,         SYS_brk,            SYS_mmap,          SYS_munmap,
    SYS_mremap,        SYS_madvise,        SYS_mprotect,      SYS_rt_sigreturn,
    SYS_clock_gettime, SYS_gettimeofday,   SYS_getpid,        SYS_gettid,
    SYS_sched_yield,   SYS_rt_sigprocmask, SYS_nanosleep,     SYS_clock_nanosleep,
    SYS_getrandom,     SYS_ioctl,          SYS_ppoll,         SYS_epoll_pwait,
    SYS_close,         SYS_fcntl,          SYS_sched_getaffinity,
    SYS_clock_getres,  SYS_getuid,         SYS_geteuid,       SYS_getgid,
    SYS_getegid,       SYS_lseek,          SYS_fstat,         SYS_newfstatat,
    SYS_pread64,       SYS_restart_syscall, SYS_membarrier,
#if defined(__x86_64__)
    SYS_poll,          SYS_epoll_wait,     SYS_time,
#endif
#ifdef SYS_statx
    SYS_statx,
#endif
#ifdef SYS_rseq
    SYS_rseq,
#endif
};

/* Extra for dlopen: open the .so in the jail and map it; and seccomp, so
 * that the run filter can be stacked on this one. */
static const long load_allow[] = {SYS_openat, SYS_seccomp};

void kf_harness__cuda_filter(kf_sandbox_bpf *p, bool loading, pid_t self) {
  kf_sandbox_begin(p);
  /* before the allow-list's fcntl and ioctl: the commands that would let
   * the candidate's host code signal another runner through a shared
   * descriptor are refused */
  kf_sandbox_fd_ops(p);
  for (size_t i = 0; i < sizeof base_allow / sizeof base_allow[0]; i++)
    kf_sandbox_ret_if(p, base_allow[i], SECCOMP_RET_ALLOW);
  if (loading) {
    for (size_t i = 0; i < sizeof load_allow / sizeof load_allow[0]; i++)
      kf_sandbox_ret_if(p, load_allow[i], SECCOMP_RET_ALLOW);
  } else {
    /* a file probe from the driver fails quietly; the jail is empty */
    kf_sandbox_ret_if(p, SYS_openat, SECCOMP_RET_ERRNO | EPERM);
  }
  /* glibc's qsort asks the machine's memory and does without (see the
   * CPU runner's filter): an error, not a trap. */
  kf_sandbox_ret_if(p, SYS_sysinfo, SECCOMP_RET_ERRNO | EPERM);
#if defined(__x86_64__)
  /* In both: the run filter is stacked on the load filter and the kernel
   * takes the stricter answer, so a trap here would win over the run
   * filter's EPERM (found by test-harness-cudafilter). */
  kf_sandbox_ret_if(p, SYS_open, SECCOMP_RET_ERRNO | EPERM);
#endif
  kf_sandbox_end(p, self);
}
