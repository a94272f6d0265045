/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/sandbox.h -- the pieces of a runner's sandbox that the CPU runner
 * (harness/runner.c) and the CUDA runner (harness/cuda_runner.c) share:
 * building and installing a seccomp filter, rlimits, a strict number
 * parser.  Plain libc only: both runners are built without sanitizers and
 * link nothing else of KernelFleet.  Which syscalls each runner allows,
 * and in what order it applies its defenses, stays in the runner.
 */
#ifndef KF_HARNESS_SANDBOX_H
#define KF_HARNESS_SANDBOX_H

#include <linux/filter.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

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
void kf_sandbox_end(kf_sandbox_bpf *p, pid_t self);
/* seccomp(SET_MODE_FILTER); 0 or -1 with errno (E2BIG: too long). */
int kf_sandbox_install(const kf_sandbox_bpf *p);

int kf_sandbox_set_limit(int res, rlim_t soft, rlim_t hard);
/* A whole decimal number; -1 for anything else. */
int kf_sandbox_parse_ull(const char *s, unsigned long long *out);

#endif
