/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/sandbox.h -- the pieces of a runner's sandbox that the CPU
 * runner (harness/cpu/runner.c) and the CUDA runner (harness/cuda/runner.c)
 * share: the defense bits they report, building and installing a seccomp
 * filter, rlimits, a strict number parser.  Plain libc only: both runners are built without sanitizers and
 * link nothing else of KernelFleet.  Which syscalls each runner allows,
 * and in what order it applies its defenses, stays in the runner.
 */
#ifndef KF_HARNESS_SANDBOX_H
#define KF_HARNESS_SANDBOX_H

#include <linux/filter.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/* Defenses the runner applied (bit set = active). */
#define KF_HARNESS_DEF_MAP(XX)                                                \
  XX(RLIMITS, 0, "rlimits")                                                   \
  XX(NETNS, 1, "netns")                                                       \
  XX(MNTNS, 2, "mntns")                                                       \
  XX(IPCNS, 3, "ipcns")                                                       \
  XX(UTSNS, 4, "utsns")                                                       \
  XX(CHROOT, 5, "chroot")                                                     \
  XX(SETUID, 6, "uid-nobody")                                                 \
  XX(NPROC0, 7, "nproc0")                                                     \
  XX(NO_NEW_PRIVS, 8, "no-new-privs")                                         \
  XX(SECCOMP_LOAD, 9, "seccomp-load")                                         \
  XX(SECCOMP, 10, "seccomp")                                                  \
  XX(GUARD_PAGES, 11, "guard-pages")                                          \
  XX(CUPTI, 12, "cupti")

enum {
#define XX(name, bit, text) KF_HARNESS_DEF_##name = 1u << (bit),
  KF_HARNESS_DEF_MAP(XX)
#undef XX
};

typedef struct {
  struct sock_filter ins[320];
  unsigned n; /* may exceed the capacity: install then fails with E2BIG */
} kf_sandbox_bpf;

void kf_sandbox_emit(kf_sandbox_bpf *p, struct sock_filter f);
/* The prologue: a foreign architecture (and, on x86_64, an x32 syscall)
 * kills the process; then the syscall number is loaded for what follows. */
void kf_sandbox_begin(kf_sandbox_bpf *p);
/* nr -> action (SECCOMP_RET_*). */
void kf_sandbox_ret_if(kf_sandbox_bpf *p, long nr, uint32_t action);
/* The epilogue: tgkill(self, any, sig) allowed (abort() raises SIGABRT
 * that way), everything not decided before traps (SIGSYS). */
/* fcntl and ioctl allowed (A back to the syscall's number after, for
 * the rules that follow), except the commands by which a descriptor
 * signals a process -- F_SETOWN, F_SETOWN_EX, F_SETSIG, O_ASYNC by
 * F_SETFL, FIOASYNC, FIOSETOWN, SIOCSPGRP --, leases or watches a file
 * (F_SETLEASE, F_NOTIFY), or resizes a pipe (F_SETPIPE_SZ): EPERM.  A
 * runner's descriptors are shared with the harness, and one of the
 * runner's uid could make the harness's next write to them signal
 * another side's runner: kill, stop, with no kill(2) (red team
 * 2026-12-02-s3-cand, sigio_ref.py). */
void kf_sandbox_fd_ops(kf_sandbox_bpf *p);

void kf_sandbox_end(kf_sandbox_bpf *p, pid_t self);
/* seccomp(SET_MODE_FILTER); 0 or -1 with errno (E2BIG: too long). */
int kf_sandbox_install(const kf_sandbox_bpf *p);

int kf_sandbox_set_limit(int res, rlim_t soft, rlim_t hard);
/* A whole decimal number; -1 for anything else. */
int kf_sandbox_parse_ull(const char *s, unsigned long long *out);

#endif
