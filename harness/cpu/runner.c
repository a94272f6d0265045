/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cpu/runner.c -- the only code that loads a C candidate.  Runs in
 * the runner process, exec'd by the eval process (harness/cpu/
 * runner_client.c) with an empty environment and no secret in argv; it
 * talks over the pipes and the memfd of harness/cpu/runner_proto.h.
 *
 * The process exec'd is a zygote: it sets up the sandbox (steps 1-6) and
 * then forks one child per call (steps 7-10 and the call run in the child,
 * which the eval process kills right after its one kf_launch).  The
 * zygote itself never loads or runs candidate code, so nothing a call
 * leaves behind -- static or heap state, stack residue, registers,
 * mappings -- reaches the next call.
 *
 * Setup, in this order, before any candidate code runs:
 *   1. keep the memfd (fd 3) and a read-only descriptor of it (fd 4, from
 *      /proc/self/fd/3); close every other fd above 2;
 *   2. unshare net, mount, ipc and uts namespaces (as root; otherwise try a
 *      user namespace first, and record what worked);
 *   3. chroot into the jail (a directory holding only the .so), chdir /;
 *   4. rlimits: AS, CPU, FSIZE 0, NOFILE 8, CORE 0, MEMLOCK 0;
 *   5. as root: drop to uid/gid 65534 with no groups (this also drops every
 *      capability); RLIMIT_NPROC 0 in each child;
 *   6. PR_SET_NO_NEW_PRIVS; SIGSYS, SIGSEGV and SIGBUS handlers on an
 *      alternate stack;
 *   -- the zygote sends READY on the status pipe; for each ARM it forks a
 *      child; in the child: PR_SET_PDEATHSIG, the status pipe closed --
 *   7. the call's buffers, and nothing else of the memfd: each mapped at
 *      an address the kernel picks, between two PROT_NONE guard pages;
 *      inputs from the read-only descriptor (so mprotect cannot make them
 *      writable), outputs and workspace read-write; then both descriptors
 *      are closed, so no other buffer can be mapped again;
 *   8. seccomp filter 1 ("load"): what dlopen needs (openat, mmap, ...)
 *      but nothing that reaches outside (no socket, clone, execve, kill);
 *   9. dlopen(RTLD_NOW|RTLD_LOCAL), dlsym("kf_launch") -- constructors and
 *      IFUNC resolvers, if any slipped past the link check, run here under
 *      filter 1, in the jail, unprivileged;
 *  10. seccomp filter 2 ("run"): read, write, exit, memory management
 *      (mmap at most KF_HARNESS_MMAP_MAX at once; mremap fails, so no
 *      mapping can grow back over another buffer), clocks, futex, getpid
 *      and tgkill to itself (abort); no open, no sleep.
 * Then the child sends READY with the bitmask of defenses applied, serves
 * one RUN, replies DONE and blocks until the eval process kills it.
 *
 * A denied syscall traps (SECCOMP_RET_TRAP): the SIGSYS handler reports the
 * syscall number as a VIOLATION reply and exits; a fault reports where it
 * hit (a guard page, a read-only input) as a FAULT reply.  Filter 2 denies
 * rt_sigaction, so the candidate cannot replace these handlers.  A syscall
 * from a foreign ABI (x32, int 0x80) kills the process outright.
 *
 * What this file deliberately does not do: log (stderr is the status pipe),
 * allocate after setup, or link anything from kf_common -- it is built
 * into kf-harness-runner without sanitizers (ASan's shadow memory cannot
 * live under RLIMIT_AS), and into kf-harness as the fallback "runner" mode.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include <grp.h>

#include "kf_candidate.h"
#include "runner_proto.h"
#include "sandbox.h"

#define NOBODY 65534

static kf_harness_reply g_sys_reply; /* prepared before filters; handler
                                        fills sysno and writes it */
static int g_report_fd = 2;          /* setup failures: the status pipe in
                                        the zygote, the reply pipe in a
                                        child */
static char g_altstack[64 * 1024];

static void send_on(int fd, int kind, uint32_t seq, int rc,
                    uint32_t defenses, int err, const char *msg) {
  kf_harness_reply r;
  memset(&r, 0, sizeof r);
  r.magic = KF_HARNESS_MAGIC;
  r.seq = seq;
  r.kind = kind;
  r.rc = rc;
  r.defenses = defenses;
  r.err = err;
  if (msg) {
    size_t n = strlen(msg);
    if (n >= sizeof r.msg) n = sizeof r.msg - 1;
    memcpy(r.msg, msg, n);
  }
  ssize_t w;
  do {
    w = write(fd, &r, sizeof r);
  } while (w < 0 && errno == EINTR);
}

static void send_reply(int kind, uint32_t seq, int rc, uint32_t defenses,
                       int err, const char *msg) {
  send_on(1, kind, seq, rc, defenses, err, msg);
}

/* zygote -> eval, on the status pipe */
static void send_status(int kind, pid_t pid, int status, uint64_t cpu_ns,
                        uint32_t defenses) {
  kf_harness_reply r;
  memset(&r, 0, sizeof r);
  r.magic = KF_HARNESS_MAGIC;
  r.kind = kind;
  r.pid = pid;
  r.status = status;
  r.cpu_ns = cpu_ns;
  r.defenses = defenses;
  ssize_t w;
  do {
    w = write(2, &r, sizeof r);
  } while (w < 0 && errno == EINTR);
}

static _Noreturn void setup_fail(const char *what, int err) {
  send_on(g_report_fd, KF_HARNESS_R_SETUP, 0, 0, 0, err, what);
  _exit(KF_HARNESS_RUNNER_EXIT_SETUP);
}

static void on_sigsys(int sig, siginfo_t *si, void *ucv) {
  (void)sig;
  g_sys_reply.sysno = si->si_syscall;
  ucontext_t *uc = ucv;
#if defined(__x86_64__)
  g_sys_reply.arg1 = (uint64_t)uc->uc_mcontext.gregs[REG_RSI];
#elif defined(__aarch64__)
  g_sys_reply.arg1 = (uint64_t)uc->uc_mcontext.regs[1];
#endif
  /* raw syscalls: libc wrappers may touch state the candidate broke */
  syscall(SYS_write, 1, &g_sys_reply, sizeof g_sys_reply);
  syscall(SYS_exit_group, KF_HARNESS_RUNNER_EXIT_SYS);
}

/* PROT_NONE bytes on each side of every buffer: a write that jumps a
 * small guard still lands in one. */
#define GUARD_BYTES (64u << 10)

/* The call's buffers as this child mapped them (fault reports). */
typedef struct {
  unsigned char *addr; /* the data's first byte */
  size_t len;          /* bytes mapped (whole pages) */
  bool writable;
} cmap;
static cmap g_maps[KF_HARNESS_MAX_MAPS];
static int g_n_maps;
static kf_harness_reply g_fault_reply;

/* SIGSEGV/SIGBUS: says where, then exits.  Only raw syscalls: the
 * candidate may have broken libc's state. */
static void on_fault(int sig, siginfo_t *si, void *ucv) {
  (void)sig;
  uintptr_t a = (uintptr_t)si->si_addr;
  int write = 0;
#if defined(__x86_64__)
  ucontext_t *uc = ucv;
  write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
  (void)ucv;
#endif
  g_fault_reply.sysno = KF_HARNESS_FAULT_ELSEWHERE;
  g_fault_reply.pid = -1;
  g_fault_reply.rc = write;
  for (int k = 0; k < g_n_maps; k++) {
    uintptr_t lo = (uintptr_t)g_maps[k].addr, hi = lo + g_maps[k].len;
    if (a >= lo - GUARD_BYTES && a < lo) {
      g_fault_reply.sysno = KF_HARNESS_FAULT_BEFORE;
    } else if (a >= hi && a < hi + GUARD_BYTES) {
      g_fault_reply.sysno = KF_HARNESS_FAULT_AFTER;
    } else if (a >= lo && a < hi && !g_maps[k].writable) {
      g_fault_reply.sysno = KF_HARNESS_FAULT_READONLY;
    } else {
      continue;
    }
    g_fault_reply.pid = k;
    g_fault_reply.arg1 = (uint64_t)(a - lo);
    break;
  }
  syscall(SYS_write, 1, &g_fault_reply, sizeof g_fault_reply);
  syscall(SYS_exit_group, KF_HARNESS_RUNNER_EXIT_SYS);
}

/* --------------------------------------------------------------- seccomp */

/* Syscalls both filters allow: the runner's loop and what a computing
 * kernel (and libc's malloc, memcpy, libm) may need.  mmap is allowed up
 * to KF_HARNESS_MMAP_MAX per call (install_filter).  No sleeping: a kernel
 * has nothing to wait for, and sleep only serves to steer the timer. */
static const long base_allow[] = {
    SYS_read,          SYS_write,        SYS_exit,         SYS_exit_group,
    SYS_futex,         SYS_brk,          SYS_munmap,
    SYS_madvise,       SYS_mprotect,     SYS_rt_sigreturn,
    SYS_clock_gettime, SYS_gettimeofday, SYS_getpid,       SYS_gettid,
    SYS_sched_yield,   SYS_rt_sigprocmask,
    SYS_getrandom,
};

/* Extra for dlopen: open the .so in the jail, read it, map it. */
static const long load_allow[] = {
    SYS_openat, SYS_close,  SYS_fstat, SYS_newfstatat, SYS_pread64,
    SYS_lseek,  SYS_seccomp, /* the second filter; any other only narrows */
#ifdef SYS_statx
    SYS_statx,
#endif
};

static int install_filter(bool loading, pid_t self) {
  kf_sandbox_bpf p = {.n = 0};
  kf_sandbox_begin(&p);
  for (size_t i = 0; i < sizeof base_allow / sizeof base_allow[0]; i++)
    kf_sandbox_ret_if(&p, base_allow[i], SECCOMP_RET_ALLOW);
  if (loading)
    for (size_t i = 0; i < sizeof load_allow / sizeof load_allow[0]; i++)
      kf_sandbox_ret_if(&p, load_allow[i], SECCOMP_RET_ALLOW);
  /* glibc's qsort asks sysinfo for the machine's memory on arrays over
   * 1 KiB and sorts without it when refused; a trap would make a
   * reference that sorts unusable.  An error also keeps the machine's
   * load and free memory, which move with the harness's own work, from
   * the kernel. */
  kf_sandbox_ret_if(&p, SYS_sysinfo, SECCOMP_RET_ERRNO | EPERM);
  /* a mapping may not grow: mremap of an input's mapping would reach the
   * memfd beyond it.  glibc's realloc falls back to malloc+copy. */
  kf_sandbox_ret_if(&p, SYS_mremap, SECCOMP_RET_ERRNO | (ENOMEM & 0xffff));
  /* mmap(any, len <= KF_HARNESS_MMAP_MAX, ...): a bigger one (a huge
   * malloc) traps and is reported with its length. */
  kf_sandbox_emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                                   (uint32_t)SYS_mmap, 0, 6));
  kf_sandbox_emit(&p, (struct sock_filter)BPF_STMT(
                          BPF_LD | BPF_W | BPF_ABS,
                          offsetof(struct seccomp_data, args[1]) + 4));
  kf_sandbox_emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                                   0, 0, 3));
  kf_sandbox_emit(&p, (struct sock_filter)BPF_STMT(
                          BPF_LD | BPF_W | BPF_ABS,
                          offsetof(struct seccomp_data, args[1])));
  kf_sandbox_emit(&p, (struct sock_filter)BPF_JUMP(
                          BPF_JMP | BPF_JGT | BPF_K,
                          (uint32_t)KF_HARNESS_MMAP_MAX, 1, 0));
  kf_sandbox_emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                   SECCOMP_RET_ALLOW));
  kf_sandbox_emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                   SECCOMP_RET_TRAP));
  kf_sandbox_end(&p, self);
  return kf_sandbox_install(&p);
}

/* ------------------------------------------------------------- sandbox */

static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t n = strlen(text);
  ssize_t w = write(fd, text, n);
  int e = errno;
  close(fd);
  errno = e;
  return w == (ssize_t)n ? 0 : -1;
}

static uint32_t enter_namespaces(bool root) {
  uint32_t def = 0;
  if (!root) {
    /* Unprivileged: a user namespace grants the capabilities the rest of
     * this function and chroot need, where the kernel allows it. */
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER) != 0) return 0;
    char map[64];
    write_file("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    write_file("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    write_file("/proc/self/gid_map", map);
  }
  static const struct {
    int flag;
    uint32_t bit;
  } ns[] = {
      {CLONE_NEWNET, KF_HARNESS_DEF_NETNS},
      {CLONE_NEWNS, KF_HARNESS_DEF_MNTNS},
      {CLONE_NEWIPC, KF_HARNESS_DEF_IPCNS},
      {CLONE_NEWUTS, KF_HARNESS_DEF_UTSNS},
  };
  if (unshare(CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS) == 0)
    return KF_HARNESS_DEF_NETNS | KF_HARNESS_DEF_MNTNS | KF_HARNESS_DEF_IPCNS |
           KF_HARNESS_DEF_UTSNS;
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    if (unshare(ns[i].flag) == 0) def |= ns[i].bit;
  return def;
}

/* Maps the call's buffers (step 7): each between two PROT_NONE guards at
 * an address the kernel picks.  0, or -1 with errno. */
static int map_buffers(const kf_harness_cmd *plan, size_t map_len) {
  const size_t pg = 4096, gb = GUARD_BYTES;
  if (plan->n_maps < 0 || plan->n_maps > KF_HARNESS_MAX_MAPS) {
    errno = EINVAL;
    return -1;
  }
  for (int k = 0; k < plan->n_maps; k++) {
    const kf_harness_map *m = &plan->maps[k];
    size_t len = (m->len + pg - 1) & ~(pg - 1);
    if (!len) len = pg; /* an empty buffer still gets a page of its own */
    if (m->off % pg || m->off > map_len || len > map_len - m->off) {
      errno = EINVAL;
      return -1;
    }
    unsigned char *res = mmap(NULL, len + 2 * gb, PROT_NONE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                              0);
    if (res == MAP_FAILED) return -1;
    void *at = mmap(res + gb, len, m->writable ? PROT_READ | PROT_WRITE
                                               : PROT_READ,
                    MAP_SHARED | MAP_FIXED | MAP_POPULATE,
                    m->writable ? 3 : 4,
                    (off_t)m->off);
    if (at == MAP_FAILED) return -1;
    g_maps[k] = (cmap){.addr = res + gb, .len = len,
                       .writable = m->writable != 0};
  }
  g_n_maps = plan->n_maps;
  return 0;
}

/* Where memfd offset `off` (n bytes) lies in this child, or NULL when
 * outside every mapped buffer. */
static unsigned char *child_ptr(const kf_harness_cmd *plan, uint64_t off,
                                uint64_t n) {
  for (int k = 0; k < g_n_maps; k++) {
    const kf_harness_map *m = &plan->maps[k];
    if (off >= m->off && off - m->off <= g_maps[k].len &&
        n <= g_maps[k].len - (off - m->off))
      return g_maps[k].addr + (off - m->off);
  }
  return NULL;
}

/* What the zygote learned from the last child -- its wait status (an
 * exit code the child chooses), its CPU time, its pid, and the reply
 * built from them below this frame -- would be copied into the next
 * child by fork: one call could leave bytes for the next (a seed that
 * makes the two determinism runs agree).  So the zygote forgets it
 * before it forks again: the stack below its loop is zeroed here. */
#define ZYGOTE_SCRUB (64u << 10)
__attribute__((noinline)) static void scrub_below(void) {
  unsigned char buf[ZYGOTE_SCRUB];
  explicit_bzero(buf, sizeof buf);
  __asm__ volatile("" : : "r"(buf) : "memory");
}

/* One call in a fresh process: steps 7-10 of the header, READY, one RUN,
 * DONE, then wait to be killed.  Everything the candidate touches dies
 * with this process. */
static _Noreturn void run_child(uint32_t def, const char *path,
                                const kf_harness_cmd *plan, size_t map_len,
                                bool root, pid_t zygote) {
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != zygote) _exit(KF_HARNESS_RUNNER_EXIT_SETUP);
  close(2); /* the zygote's channel */
  g_report_fd = 1;
  if (root && kf_sandbox_set_limit(RLIMIT_NPROC, 0, 0) == 0) def |= KF_HARNESS_DEF_NPROC0;

  /* 7. this call's buffers, nothing else */
  if (map_buffers(plan, map_len) != 0) {
    send_reply(KF_HARNESS_R_SETUP, 0, 0, def, errno, "mapping the buffers");
    _exit(KF_HARNESS_RUNNER_EXIT_MAP);
  }
  close(3);
  close(4);
  def |= KF_HARNESS_DEF_GUARD_PAGES;
  /* The buffers were mapped populated; fault some stack in now too, so
   * the timed call pays no page faults the reference does not. */
  volatile unsigned char stack_pages[64 * 1024];
  for (size_t o = 0; o < sizeof stack_pages; o += 4096) stack_pages[o] = 1;

  /* 8. filter for loading */
  pid_t self = getpid();
  if (install_filter(true, self) != 0) setup_fail("seccomp (load)", errno);
  def |= KF_HARNESS_DEF_SECCOMP_LOAD;

  /* 9. load; what this process says from here on, its constructors may
   * have said (runner_client.c: no setup failure after LOADING is ours) */
  send_reply(KF_HARNESS_R_LOADING, 0, 0, def, 0, NULL);
  dlerror();
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    send_reply(KF_HARNESS_R_LOADFAIL, 0, 0, def, 0, e ? e : "dlopen failed");
    _exit(KF_HARNESS_RUNNER_EXIT_SETUP);
  }
  kf_launch_fn fn = (kf_launch_fn)dlsym(h, "kf_launch");
  if (!fn) {
    send_reply(KF_HARNESS_R_LOADFAIL, 0, 0, def, 0,
               "the shared object defines no kf_launch");
    _exit(KF_HARNESS_RUNNER_EXIT_SETUP);
  }

  /* 10. filter for running */
  if (install_filter(false, self) != 0) setup_fail("seccomp (run)", errno);
  def |= KF_HARNESS_DEF_SECCOMP;
  send_reply(KF_HARNESS_R_READY, 0, 0, def, 0, NULL);

  static const size_t dt_size[] = {4, 8, 2, 2, 4, 8};
  static kf_harness_cmd cmd;
  static kf_tensor tin[KF_HARNESS_MAX_T], tout[KF_HARNESS_MAX_T];
  size_t got = 0;
  while (got < sizeof cmd) {
    ssize_t r = read(0, (char *)&cmd + got, sizeof cmd - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) _exit(got == 0 && r == 0 ? 0 : KF_HARNESS_RUNNER_EXIT_PROTO);
    got += (size_t)r;
  }
  if (cmd.magic != KF_HARNESS_MAGIC) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  if (cmd.op == KF_HARNESS_OP_EXIT) _exit(KF_HARNESS_RUNNER_EXIT_OK);
  if (cmd.op != KF_HARNESS_OP_RUN || cmd.n_inputs < 0 ||
      cmd.n_inputs > KF_HARNESS_MAX_T || cmd.n_outputs < 0 ||
      cmd.n_outputs > KF_HARNESS_MAX_T || cmd.n_params < 0 ||
      cmd.n_params > KF_HARNESS_MAX_P)
    _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  for (int side = 0; side < 2; side++) {
    int n = side ? cmd.n_outputs : cmd.n_inputs;
    for (int i = 0; i < n; i++) {
      const kf_harness_tdesc *d = side ? &cmd.out[i] : &cmd.in[i];
      kf_tensor *t = side ? &tout[i] : &tin[i];
      if (d->dtype < 0 || d->dtype > 5 || d->numel < 0 || d->ndim < 0 ||
          d->ndim > KF_MAX_DIMS || (uint64_t)d->numel > map_len)
        _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
      t->data = child_ptr(plan, d->off,
                          (uint64_t)d->numel * dt_size[d->dtype]);
      if (!t->data) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
      t->dtype = d->dtype;
      t->ndim = d->ndim;
      for (int k = 0; k < KF_MAX_DIMS; k++) t->dims[k] = d->dims[k];
      t->numel = d->numel;
    }
  }
  void *ws = NULL;
  if (cmd.ws_bytes && !(ws = child_ptr(plan, cmd.ws_off, cmd.ws_bytes)))
    _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  kf_args a = {
      .abi_version = KF_ABI_VERSION,
      .n_inputs = cmd.n_inputs,
      .n_outputs = cmd.n_outputs,
      .n_params = cmd.n_params,
      .inputs = tin,
      .outputs = tout,
      .params = cmd.params,
      .workspace = ws,
      .workspace_bytes = (size_t)cmd.ws_bytes,
      .stream = NULL,
  };
  int rc = fn(&a);
  send_reply(KF_HARNESS_R_DONE, cmd.seq, rc, 0, 0, NULL);
  /* the eval process reads our CPU clock, then kills us; anything we
   * still do is charged to the call (it reads the clock after DONE) */
  for (;;) {
    kf_harness_cmd rel;
    if (read(0, &rel, sizeof rel) <= 0) break;
  }
  _exit(KF_HARNESS_RUNNER_EXIT_CALLED);
}

int kf_harness_runner_main(int argc, char **argv) {
  const char *jail = NULL, *so = NULL;
  unsigned long long as_bytes = 0, cpu_s = 60;
  for (int i = 0; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--jail")) jail = argv[i + 1];
    else if (!strcmp(argv[i], "--so")) so = argv[i + 1];
    else if (!strcmp(argv[i], "--as-bytes")) {
      if (kf_sandbox_parse_ull(argv[i + 1], &as_bytes)) setup_fail("bad --as-bytes", 0);
    } else if (!strcmp(argv[i], "--cpu-s")) {
      if (kf_sandbox_parse_ull(argv[i + 1], &cpu_s)) setup_fail("bad --cpu-s", 0);
    } else {
      setup_fail("unknown runner option", 0);
    }
  }
  if (!jail || !so || strchr(so, '/')) setup_fail("usage: runner --jail DIR --so NAME", 0);

  /* 1. the memfd, read-write (3) and read-only (4); nothing else open */
  struct stat st;
  if (fstat(3, &st) != 0) setup_fail("fstat memfd", errno);
  size_t map_len = (size_t)st.st_size;
  int ro = open("/proc/self/fd/3", O_RDONLY | O_CLOEXEC);
  if (ro < 0) setup_fail("open the memfd read-only", errno);
  if (ro != 4) {
    if (dup2(ro, 4) != 4) setup_fail("dup2 memfd", errno);
    close(ro);
  }
  fcntl(3, F_SETFD, FD_CLOEXEC);
  fcntl(4, F_SETFD, FD_CLOEXEC);
#ifdef SYS_close_range
  syscall(SYS_close_range, 5u, ~0u, 0u);
#endif
  signal(SIGPIPE, SIG_DFL);

  bool root = geteuid() == 0;
  uint32_t def = 0;
  /* libm must already be resident: the jail holds no libraries */
  volatile double keep = 2.0;
  keep = sqrt(keep) + expf((float)keep);
  (void)keep;

  /* 2. namespaces */
  def |= enter_namespaces(root);

  /* 3. jail */
  if (chroot(jail) == 0) {
    if (chdir("/") != 0) setup_fail("chdir / in jail", errno);
    def |= KF_HARNESS_DEF_CHROOT;
  } else if (chdir(jail) != 0) {
    setup_fail("chdir jail", errno);
  }

  /* 4. limits */
  int bad = 0;
  if (as_bytes) bad |= kf_sandbox_set_limit(RLIMIT_AS, as_bytes, as_bytes);
  bad |= kf_sandbox_set_limit(RLIMIT_CPU, cpu_s, cpu_s + 1);
  bad |= kf_sandbox_set_limit(RLIMIT_FSIZE, 0, 0);
  bad |= kf_sandbox_set_limit(RLIMIT_NOFILE, 8, 8);
  bad |= kf_sandbox_set_limit(RLIMIT_CORE, 0, 0);
  bad |= kf_sandbox_set_limit(RLIMIT_MEMLOCK, 0, 0);
  if (bad) setup_fail("setrlimit", errno);
  def |= KF_HARNESS_DEF_RLIMITS;

  /* 5. unprivileged */
  if (root) {
    if (setgroups(0, NULL) != 0) setup_fail("setgroups", errno);
    if (setgid(NOBODY) != 0) setup_fail("setgid", errno);
    if (setuid(NOBODY) != 0) setup_fail("setuid", errno);
    if (setuid(0) == 0) setup_fail("could regain root", 0);
    def |= KF_HARNESS_DEF_SETUID;
  }

  /* 6. no way back up; handlers that work on a broken stack */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    setup_fail("PR_SET_NO_NEW_PRIVS", errno);
  def |= KF_HARNESS_DEF_NO_NEW_PRIVS;
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  stack_t ss = {.ss_sp = g_altstack, .ss_size = sizeof g_altstack};
  if (sigaltstack(&ss, NULL) != 0) setup_fail("sigaltstack", errno);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigfillset(&sa.sa_mask);
  if (sigaction(SIGSYS, &sa, NULL) != 0) setup_fail("sigaction SIGSYS", errno);
  sa.sa_sigaction = on_fault;
  if (sigaction(SIGSEGV, &sa, NULL) != 0 || sigaction(SIGBUS, &sa, NULL) != 0)
    setup_fail("sigaction SIGSEGV", errno);
  memset(&g_sys_reply, 0, sizeof g_sys_reply);
  g_sys_reply.magic = KF_HARNESS_MAGIC;
  g_sys_reply.kind = KF_HARNESS_R_VIOLATION;
  memset(&g_fault_reply, 0, sizeof g_fault_reply);
  g_fault_reply.magic = KF_HARNESS_MAGIC;
  g_fault_reply.kind = KF_HARNESS_R_FAULT;

  /* 7-10 and the call happen in a fresh child per call (run_child) */
  char path[256];
  snprintf(path, sizeof path, "%s%s", (def & KF_HARNESS_DEF_CHROOT) ? "/" : "./",
           so);
  send_status(KF_HARNESS_R_READY, 0, 0, 0, def);
  pid_t zygote = getpid();
  static kf_harness_cmd plan;
  for (;;) {
    size_t got = 0;
    while (got < sizeof plan) {
      ssize_t r = read(0, (char *)&plan + got, sizeof plan - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) _exit(got == 0 && r == 0 ? KF_HARNESS_RUNNER_EXIT_OK
                                           : KF_HARNESS_RUNNER_EXIT_PROTO);
      got += (size_t)r;
    }
    if (plan.magic != KF_HARNESS_MAGIC) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
    if (plan.op == KF_HARNESS_OP_EXIT) _exit(KF_HARNESS_RUNNER_EXIT_OK);
    if (plan.op != KF_HARNESS_OP_ARM) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
    pid_t c = fork();
    if (c < 0) setup_fail("fork a call's child", errno);
    if (c == 0) run_child(def, path, &plan, map_len, root, zygote);
    send_status(KF_HARNESS_R_FORKED, c, 0, 0, 0);
    int wst = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(c, &wst, 0, &ru) < 0) {
      if (errno != EINTR) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
    }
    uint64_t cpu = ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
                       1000000000ull +
                   ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) *
                       1000ull;
    send_status(KF_HARNESS_R_EXITED, c, wst, cpu, 0);
    explicit_bzero(&wst, sizeof wst);
    explicit_bzero(&ru, sizeof ru);
    explicit_bzero(&cpu, sizeof cpu);
    explicit_bzero(&c, sizeof c);
    scrub_below();
  }
}
