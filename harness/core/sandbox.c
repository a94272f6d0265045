/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/sandbox.c -- seccomp filter building blocks and small helpers
 * shared by the CPU and CUDA runners (harness/core/sandbox.h).  The filters are
 * classic BPF over struct seccomp_data; arguments are 64-bit and compared
 * as two 32-bit halves.
 */
#include "sandbox.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define KF_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define KF_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "harness sandbox: seccomp filters written for x86_64 and aarch64 only"
#endif

void kf_sandbox_emit(kf_sandbox_bpf *p, struct sock_filter f) {
  if (p->n < sizeof p->ins / sizeof p->ins[0]) p->ins[p->n] = f;
  p->n++;
}

void kf_sandbox_begin(kf_sandbox_bpf *p) {
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(
                         BPF_LD | BPF_W | BPF_ABS,
                         offsetof(struct seccomp_data, arch)));
  kf_sandbox_emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                                  KF_AUDIT_ARCH, 1, 0));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                  SECCOMP_RET_KILL_PROCESS));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(
                         BPF_LD | BPF_W | BPF_ABS,
                         offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
  /* x32 syscalls carry bit 30 */
  kf_sandbox_emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
                                                  0x40000000u, 0, 1));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                  SECCOMP_RET_KILL_PROCESS));
#endif
}

void kf_sandbox_ret_if(kf_sandbox_bpf *p, long nr, uint32_t action) {
  kf_sandbox_emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                                  (uint32_t)nr, 0, 1));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
}

/* Jumps to what follows when A (the syscall's number) is not nr, else
 * loads the low half of argument arg: the emitted jump's index. */
static size_t on_nr_load_arg(kf_sandbox_bpf *p, long nr, int arg) {
  size_t at = p->n;
  kf_sandbox_emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                                  (uint32_t)nr, 0, 0));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(
                         BPF_LD | BPF_W | BPF_ABS,
                         offsetof(struct seccomp_data, args[0]) +
                             8 * (unsigned)arg));
  return at;
}

/* The block from `at` (on_nr_load_arg's jump) ends here: its false
 * branch is set to land after it. */
static void block_end(kf_sandbox_bpf *p, size_t at) {
  if (at < sizeof p->ins / sizeof p->ins[0])
    p->ins[at].jf = (uint8_t)(p->n - at - 1);
}

void kf_sandbox_fd_ops(kf_sandbox_bpf *p) {
  /* fcntl commands that reach beyond this process, or leave a mark on a
   * file description another process shares: F_SETOWN (8), F_SETSIG
   * (10), F_SETOWN_EX (15), F_SETLEASE (1024), F_NOTIFY (1026),
   * F_SETPIPE_SZ (1031); and F_SETFL (4) with O_ASYNC */
  static const uint32_t fcmds[] = {8, 10, 15, 1024, 1026, 1031};
  enum { NF = sizeof fcmds / sizeof fcmds[0] };
  size_t at = on_nr_load_arg(p, SYS_fcntl, 1);
  /* after the loads: NF jumps, the F_SETFL test, its load, the O_ASYNC
   * test, allow, deny */
  for (size_t i = 0; i < NF; i++)
    kf_sandbox_emit(p, (struct sock_filter)BPF_JUMP(
                           BPF_JMP | BPF_JEQ | BPF_K, fcmds[i],
                           (uint8_t)(NF - i + 3), 0));
  kf_sandbox_emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                                  4 /* F_SETFL */, 0, 2));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(
                         BPF_LD | BPF_W | BPF_ABS,
                         offsetof(struct seccomp_data, args[2])));
  kf_sandbox_emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
                                                  020000 /* O_ASYNC */, 1,
                                                  0));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                  SECCOMP_RET_ALLOW));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                  SECCOMP_RET_ERRNO | EPERM));
  block_end(p, at);
  /* ioctl's: FIOASYNC (0x5452), FIOSETOWN (0x8901), SIOCSPGRP (0x8902) */
  static const uint32_t icmds[] = {0x5452, 0x8901, 0x8902};
  enum { NI = sizeof icmds / sizeof icmds[0] };
  at = on_nr_load_arg(p, SYS_ioctl, 1);
  for (size_t i = 0; i < NI; i++)
    kf_sandbox_emit(p, (struct sock_filter)BPF_JUMP(
                           BPF_JMP | BPF_JEQ | BPF_K, icmds[i],
                           (uint8_t)(NI - i), 0));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                  SECCOMP_RET_ALLOW));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                  SECCOMP_RET_ERRNO | EPERM));
  block_end(p, at);
}

void kf_sandbox_end(kf_sandbox_bpf *p, pid_t self) {
  /* tgkill: arg0 (high half 0, low half our pid) */
  kf_sandbox_emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                                  (uint32_t)SYS_tgkill, 0, 5));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(
                         BPF_LD | BPF_W | BPF_ABS,
                         offsetof(struct seccomp_data, args[0]) + 4));
  kf_sandbox_emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                                  0, 0, 3));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(
                         BPF_LD | BPF_W | BPF_ABS,
                         offsetof(struct seccomp_data, args[0])));
  kf_sandbox_emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                                  (uint32_t)self, 0, 1));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                  SECCOMP_RET_ALLOW));
  kf_sandbox_emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                  SECCOMP_RET_TRAP));
}

int kf_sandbox_install(const kf_sandbox_bpf *p) {
  if (p->n > sizeof p->ins / sizeof p->ins[0]) {
    errno = E2BIG;
    return -1;
  }
  struct sock_fprog prog = {.len = (unsigned short)p->n,
                            .filter = (struct sock_filter *)p->ins};
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int kf_sandbox_set_limit(int res, rlim_t soft, rlim_t hard) {
  struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};
  return setrlimit(res, &rl);
}

int kf_sandbox_parse_ull(const char *s, unsigned long long *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}
