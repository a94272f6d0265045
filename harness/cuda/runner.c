/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/runner.c -- the only code that loads a CUDA candidate: the
 * "runner" mode of kf-harness-cuda.  exec'd fresh by the eval process
 * (harness/cuda/backend.c) for each of candidate and reference, so each gets
 * its own process and its own CUDA context: an illegal address, a launch
 * failure or a hang ends this process and nothing else.  Wire:
 * harness/cuda/proto.h.
 *
 * Setup, in this order, before any candidate code runs:
 *   1. map the memfd (fd 3), close it and every fd above 2;
 *   2. as root: unshare net, mount, ipc and uts namespaces (single-
 *      threaded still; the driver needs none of them);
 *   3. CUDA: select the device, blocking sync, create the context, set
 *      the persisting-L2 limit to 0, allocate the device image of the
 *      memfd, the L2 flush buffer (2 x L2, at least 64 MiB) and two
 *      events (kf_launch gets the legacy default stream, or with --stream
 *      own one blocking stream created here); pin the memfd mapping when the
 *      driver lets us (faster copies); preload libstdc++/libgcc_s, which
 *      nvcc's host code needs and the jail does not hold.  The driver opens
 *      /dev/nvidia* and starts its helper threads here; they keep those
 *      fds and live on unfiltered by seccomp (see below);
 *   4. chroot into the jail (the .so only), chdir /;
 *   5. rlimits: CPU, FSIZE 0, CORE 0, NOFILE just above the fds the
 *      driver holds.  NOT applied, unlike the CPU runner: RLIMIT_AS (the
 *      driver reserves tens of GiB of address space for unified
 *      addressing) and RLIMIT_MEMLOCK (pinned staging);
 *   6. as root: uid/gid 65534, no groups (glibc applies it to the
 *      driver's threads too), then RLIMIT_NPROC 0;
 *   7. PR_SET_NO_NEW_PRIVS, SIGSYS handler, seccomp filter "load";
 *   8. dlopen the candidate: nvcc's registration constructor runs here
 *      (__cudaRegisterFatBinary), then dlsym(kf_launch);
 *   9. seccomp filter "run": the CPU runner's list plus what the driver
 *      uses to launch and wait (ioctl, poll/ppoll, epoll_wait/pwait,
 *      close, fcntl, sched_getaffinity); openat fails with EPERM instead
 *      of trapping (module loading may probe files; the jail holds none).
 *      Both filters are harness/cuda/filter.c's.
 *      --seccomp off skips 7-9's filters, for diagnosing a driver that
 *      needs more (the READY defenses then say so).
 *
 * Each call (RUN) then: the candidate's writable pages back to what they
 * held after dlopen and 1 MiB of stack below zeroed (this process serves
 * every call, unlike the CPU runner's fresh process per call); after the
 * call, any byte of those pages changed outside the toolchain's own
 * variables (--mutable, from the eval's link check) ends the runner with
 * KF_CUDA_R_STATE.  Timed calls queue, behind the outputs' poison, --warm-us
 * of memsets (clocks up after the eval's host work), the L2 flush and a
 * read sweep that leaves L2 clean (no write-back of harness data lands in
 * the candidate's time), then record the start event without a host
 * synchronize, so kf_launch's kernels are queued before the GPU reaches
 * them and no host launch latency lands in the time.
 *
 * What the CUDA sandbox does NOT give, compared with the CPU runner: no
 * address-space limit; ioctl is open (on the nvidia fds the driver
 * holds, a candidate's raw ioctls reach the driver); the driver's own
 * threads are unfiltered; and since the event time is taken in this
 * process, a candidate that takes over the host code could forge the
 * reply -- the eval process bounds it (event time <= its own wall time
 * around the call; roofline TOO_FAST).
 *
 * This file logs nothing (stderr is /dev/null) and links nothing of
 * KernelFleet but the seccomp/rlimit helpers it shares with the CPU
 * runner (harness/core/sandbox.c) and its own seccomp policy
 * (harness/cuda/filter.c); it is built without sanitizers.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <link.h>
#include <poll.h>
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
#include <time.h>
#include <unistd.h>

#include "cupti_attr.h"
#include "filter.h"
#include "kernels.h"
#include "proto.h"
#include "kf_candidate.h"
#include "sandbox.h"

#define NOBODY 65534
#define MAX_MUT 64 /* --mutable ranges */

static kf_cuda_reply g_sys_reply;
static char g_altstack[64 * 1024];

static void send_reply(int kind, uint32_t seq, int rc, int err, int cuda_err,
                       uint64_t ns, const char *msg) {
  kf_cuda_reply r;
  memset(&r, 0, sizeof r);
  r.magic = KF_CUDA_MAGIC;
  r.seq = seq;
  r.kind = kind;
  r.rc = rc;
  r.err = err;
  r.cuda_err = cuda_err;
  r.elapsed_ns = ns;
  if (msg) {
    size_t n = strlen(msg);
    if (n >= sizeof r.msg) n = sizeof r.msg - 1;
    memcpy(r.msg, msg, n);
  }
  ssize_t w;
  do {
    w = write(1, &r, sizeof r);
  } while (w < 0 && errno == EINTR);
}

static _Noreturn void setup_fail(const char *what, int err) {
  send_reply(KF_HARNESS_R_SETUP, 0, 0, err, 0, 0, what);
  _exit(KF_HARNESS_RUNNER_EXIT_SETUP);
}

/* A CUDA error: reply with its name and end (the context may be dead). */
static _Noreturn void cuda_fail(uint32_t seq, cudaError_t e, const char *where) {
  char msg[200];
  snprintf(msg, sizeof msg, "%s: %s (%s)", cudaGetErrorName(e),
           cudaGetErrorString(e), where);
  send_reply(KF_CUDA_R_CUDAERR, seq, 0, 0, (int)e, 0, msg);
  _exit(KF_HARNESS_RUNNER_EXIT_OK);
}

static void on_sigsys(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)uc;
  g_sys_reply.sysno = si->si_syscall;
  syscall(SYS_write, 1, &g_sys_reply, sizeof g_sys_reply);
  syscall(SYS_exit_group, KF_HARNESS_RUNNER_EXIT_SYS);
}

/* --------------------------------------------------------------- seccomp */

/* The policy is harness/cuda/filter.c's. */
static int install_filter(bool loading, pid_t self) {
  kf_sandbox_bpf p = {.n = 0};
  kf_harness__cuda_filter(&p, loading, self);
  return kf_sandbox_install(&p);
}

/* ------------------------------------------------------------- sandbox */

/* --relax NAMES: the comma-separated sandbox steps a profiled runner
 * leaves out (KF_CUDA_PROFILE_RELAX; docs/profiling.md).  Never given to a
 * timed runner. */
#define RELAX_FDS 1u    /* inherited descriptors kept (the profiler's) */
#define RELAX_NETNS 2u  /* the profiler's front end is reached over TCP */
#define RELAX_IPCNS 4u
#define RELAX_CHROOT 8u
#define RELAX_UID 16u
#define RELAX_SECCOMP 32u
static int parse_relax(const char *arg, unsigned *out) {
  static const struct {
    const char *name;
    unsigned bit;
  } steps[] = {{"fds", RELAX_FDS},       {"netns", RELAX_NETNS},
               {"ipcns", RELAX_IPCNS},   {"chroot", RELAX_CHROOT},
               {"uid", RELAX_UID},       {"seccomp", RELAX_SECCOMP}};
  *out = 0;
  const char *p = arg;
  while (*p) {
    size_t n = strcspn(p, ",");
    size_t i = 0;
    for (; i < sizeof steps / sizeof steps[0]; i++)
      if (strlen(steps[i].name) == n && !strncmp(p, steps[i].name, n)) break;
    if (i == sizeof steps / sizeof steps[0]) {
      if (n == 0 || (n == 4 && !strncmp(p, "none", 4))) {
        p += n + (p[n] == ',');
        continue;
      }
      return -1;
    }
    *out |= steps[i].bit;
    p += n + (p[n] == ',');
  }
  return 0;
}

static int highest_fd(void) {
  int hi = 2;
  DIR *d = opendir("/proc/self/fd");
  if (!d) return 64;
  struct dirent *e;
  while ((e = readdir(d))) {
    int fd = atoi(e->d_name);
    if (fd > hi) hi = fd;
  }
  closedir(d);
  return hi;
}

/* "none" or "OFF:LEN,OFF:LEN,..." in hex. */
static int parse_ranges(const char *s, uint64_t *off, uint64_t *len, int *n) {
  *n = 0;
  if (!strcmp(s, "none")) return 0;
  while (*s) {
    char *end;
    if (*n == MAX_MUT) return -1;
    errno = 0;
    off[*n] = strtoull(s, &end, 16);
    if (errno || end == s || *end != ':') return -1;
    s = end + 1;
    len[*n] = strtoull(s, &end, 16);
    if (errno || end == s || (*end && *end != ',')) return -1;
    (*n)++;
    s = *end ? end + 1 : end;
  }
  return 0;
}

/* ------------------------------------------------------- device image */

/* The device image between two unmapped guard ranges (the virtual memory
 * API): a kernel that reads or writes past the image, however far it
 * jumps within a guard, hits an address with nothing mapped and fails
 * with an illegal address instead of reaching another allocation.  Falls
 * back to cudaMalloc (no guards; reported) where the driver has no
 * virtual memory management. */
#define IMAGE_GUARD (32u << 20)
/* The trace check's allocation after each call: a whole granule, so it
 * is mapped for itself and unmapped by its free -- a small one would come
 * from a pool granule whose unowned rest stays mapped, and its pointer
 * stays in this frame, where the next call's host code could find it and
 * keep bytes there. */
#define MARK_ALLOC ((size_t)2 << 20)
/* The probe scratch when the VMM API is missing: cudaMalloc hands out
 * 2 MiB granules for requests of that size. */
#define SCRATCH_FALLBACK ((size_t)2 << 20)
static bool alloc_image(char **dev, size_t len, int device, size_t *granp) {
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  size_t gran = 0;
  if (cuMemGetAllocationGranularity(&gran, &prop,
                                    CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
          CUDA_SUCCESS ||
      !gran)
    return false;
  if (granp) *granp = gran;
  size_t sz = (len + gran - 1) / gran * gran;
  size_t guard = (IMAGE_GUARD + gran - 1) / gran * gran;
  CUdeviceptr va = 0;
  CUmemGenericAllocationHandle h = 0;
  if (cuMemAddressReserve(&va, sz + 2 * guard, 0, 0, 0) != CUDA_SUCCESS)
    return false;
  if (cuMemCreate(&h, sz, &prop, 0) != CUDA_SUCCESS) {
    cuMemAddressFree(va, sz + 2 * guard);
    return false;
  }
  CUmemAccessDesc acc;
  memset(&acc, 0, sizeof acc);
  acc.location = prop.location;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (cuMemMap(va + guard, sz, 0, h, 0) != CUDA_SUCCESS ||
      cuMemSetAccess(va + guard, sz, &acc, 1) != CUDA_SUCCESS) {
    cuMemRelease(h);
    cuMemAddressFree(va, sz + 2 * guard);
    return false;
  }
  *dev = (char *)(uintptr_t)(va + guard);
  return true;
}

/* ---------------------------------------------------------------- main */

/* The candidate's writable pages (its .data/.bss beyond RELRO, and the
 * tails of those pages), as they were right after dlopen.  Restored before
 * every call, so static memory carries nothing from one call to the next;
 * compared after every call, but for the ranges the eval process names
 * with --mutable (the toolchain's own symbols: nvcc's launch stubs set
 * their statics on each call), so a candidate that writes to static
 * memory -- through a pointer into a __constant__ variable's host shadow,
 * padding outside the toolchain's block, a page tail -- is caught, not
 * just defeated. */
#define MAX_WREG 4
typedef struct {
  unsigned char *addr;
  size_t len, so_off;      /* so_off: offset from the .so's load address */
  unsigned char *init;     /* contents after dlopen */
  unsigned char *watch;    /* 1: must still equal init after a call */
} wregion;

/* Host stack below the launcher's caller that is zeroed before each call:
 * a candidate could leave data in uninitialized stack and read it in the
 * next call (this process lives for all calls). */
#define STACK_SCRUB (1u << 20)

/* A call's trace, between a PREPPED RUN's DONE and its CHECK. */
typedef struct {
  bool pending;
  uint64_t c0, c1;     /* CUPTI's clock around kf_launch */
  size_t free0;        /* device memory free before the call */
  uint64_t t, gpu_ns;  /* the time before the trace; the events' */
  int rc;
} trace_state;

typedef struct {
  unsigned char *base; /* memfd mapping */
  size_t map_len;
  char *dev;           /* device image of the memfd */
  void *flush;
  size_t flush_len;
  cudaStream_t stream;
  cudaEvent_t ev0, ev1;
  wregion w[MAX_WREG];
  int n_w;
  bool check;                 /* --state-check (default on) */
  int warm_n;                 /* flush-buffer memsets for --warm-us (0:
                                 not calibrated yet) */
  int warm_us;                /* --warm-us */
  uint64_t mut_off[MAX_MUT], mut_len[MAX_MUT];
  int n_mut;
  unsigned long long *scratch; /* device: probe results, at the start of
                                  a mapping of its own (scratch_len
                                  bytes: whole granules), scrubbed before
                                  every call */
  size_t scratch_len;
  bool cupti;                  /* attribution on */
  uint32_t stream_id, ctx_id;  /* CUPTI's ids of the given stream */
  /* the timing gate of timed calls (kernels.h, run_step); off in the
   * profiled runner (--relax), whose times judge nothing and whose
   * profiler serializes every launch, the gate's among them */
  bool gate;
  int gate_blocks, gate_smem;
  volatile unsigned *gate_host; /* mapped host words KF_CUDA_GATE_* */
  unsigned *gate_host_dev;      /* their device address */
  uint64_t busy_base_ns;        /* gate-to-idle span beyond the events of a
                                   harness kernel (calibrated at the first
                                   timed call, under the GPU lock) */
  int sms, smem_bytes;         /* the shared-memory scrub (0: none) */
  int lmem_variant, lmem_blocks; /* the local-memory scrub (kernels.h) */
  kf_cuda_regscrub regs;        /* the register scrub (kernels.h) */
  /* the idle gate (--idle-gate: the reference's runner; idle_wait) */
  bool idle;
  uint64_t idle_lim;            /* the slowest probe that says idle */
  trace_state tr;
} rstate;

typedef struct {
  uintptr_t fn; /* kf_launch: the object that holds it is the candidate */
  rstate *s;
  int err;
} wfind;

static int find_writable(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  wfind *f = arg;
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t a = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && f->fn >= a && f->fn - a < ph->p_memsz)
      mine = true;
  }
  if (!mine) return 0;
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  uintptr_t relro_end = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    /* glibc makes [start, end rounded DOWN) read-only */
    if (ph->p_type == PT_GNU_RELRO)
      relro_end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(pg - 1);
  }
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
    uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(pg - 1);
    uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + pg - 1) &
                   ~(pg - 1);
    if (relro_end > lo) lo = relro_end < hi ? relro_end : hi;
    if (lo >= hi) continue;
    if (f->s->n_w == MAX_WREG) {
      f->err = E2BIG;
      return 1;
    }
    wregion *w = &f->s->w[f->s->n_w];
    w->addr = (unsigned char *)lo;
    w->len = hi - lo;
    w->so_off = lo - info->dlpi_addr;
    w->init = malloc(w->len);
    w->watch = malloc(w->len);
    if (!w->init || !w->watch) {
      f->err = ENOMEM;
      return 1;
    }
    memcpy(w->init, w->addr, w->len);
    memset(w->watch, 1, w->len);
    for (int m = 0; m < f->s->n_mut; m++) {
      uint64_t a = f->s->mut_off[m], b = a + f->s->mut_len[m];
      if (a < w->so_off) a = w->so_off;
      if (b > w->so_off + w->len) b = w->so_off + w->len;
      if (a < b) memset(w->watch + (a - w->so_off), 0, b - a);
    }
    f->s->n_w++;
  }
  return 1;
}

/* Before a call: static memory as it was after loading, stack zeroed. */
static __attribute__((noinline)) void scrub_stack(void) {
  unsigned char pad[STACK_SCRUB];
  explicit_bzero(pad, sizeof pad);
  __asm__ volatile("" : : "r"(pad) : "memory");
}

static void restore_state(const rstate *s) {
  for (int i = 0; i < s->n_w; i++)
    memcpy(s->w[i].addr, s->w[i].init, s->w[i].len);
  scrub_stack();
}

/* After a call: every watched byte as it was after loading?  An honest
 * candidate writes only its launch stubs' statics (unwatched). */
static void check_state(const rstate *s, uint32_t seq) {
  if (!s->check) return;
  for (int i = 0; i < s->n_w; i++) {
    const wregion *w = &s->w[i];
    size_t first = 0, n = 0;
    for (size_t k = w->len; k-- > 0;)
      if (w->watch[k] && w->addr[k] != w->init[k]) {
        first = k;
        n++;
      }
    if (n) {
      char msg[200];
      snprintf(msg, sizeof msg, "wrote %zu byte(s) of static memory (first "
               "at .so offset 0x%zx) outside the toolchain's launch-stub "
               "variables", n, w->so_off + first);
      send_reply(KF_CUDA_R_STATE, seq, 0, 0, 0, 0, msg);
      _exit(KF_HARNESS_RUNNER_EXIT_OK);
    }
  }
}

static bool region_ok(const rstate *s, uint64_t off, uint64_t len) {
  return off <= s->map_len && len <= s->map_len - off;
}

static void reply_done(uint32_t seq) {
  send_reply(KF_HARNESS_R_DONE, seq, 0, 0, 0, 0, NULL);
}

static void do_canary(const rstate *s, const kf_cuda_cmd *c) {
  if (c->n_regions < 0 || c->n_regions > KF_CUDA_MAX_REGIONS)
    _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  for (int i = 0; i < c->n_regions; i++) {
    const kf_cuda_region *r = &c->regions[i];
    if (!region_ok(s, r->off, r->len)) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
    int e = kf_cuda_canary((unsigned char *)s->dev, r->off, r->len,
                           c->canary_salt);
    if (e) cuda_fail(c->seq, (cudaError_t)e, "filling the canary");
  }
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) cuda_fail(c->seq, e, "filling the canary");
  reply_done(c->seq);
}

/* The steps below do their work and end the runner on a CUDA error;
 * the do_* commands reply.  CASE (do_case) chains draw, call, download and
 * probe in one command, one reply: a verification case costs one round
 * trip per runner instead of four. */
static void gen_step(const rstate *s, const kf_cuda_cmd *c) {
  static const size_t dt_size[] = {4, 8, 2, 2, 4, 8};
  if (c->n_gen < 0 || c->n_gen > KF_HARNESS_MAX_T)
    _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  for (int i = 0; i < c->n_gen; i++) {
    const kf_cuda_draw *g = &c->gen[i];
    if (g->dtype < 0 || g->dtype > 5 || g->n > s->map_len ||
        !region_ok(s, g->off, g->n * dt_size[g->dtype]))
      _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
    int e = kf_cuda_gen((unsigned char *)s->dev + g->off, g->dtype, g->n,
                        g->dist, g->range, g->key);
    if (e) cuda_fail(c->seq, (cudaError_t)e, "drawing inputs");
  }
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) cuda_fail(c->seq, e, "drawing inputs");
}

static void do_gen(const rstate *s, const kf_cuda_cmd *c) {
  gen_step(s, c);
  reply_done(c->seq);
}

static void download_step(const rstate *s, uint32_t seq,
                          const kf_cuda_region *reg, int n) {
  if (n < 0 || n > KF_CUDA_MAX_REGIONS) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  for (int i = 0; i < n; i++) {
    const kf_cuda_region *r = &reg[i];
    if (!region_ok(s, r->off, r->len)) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
    if (!r->len) continue;
    cudaError_t e = cudaMemcpy(s->base + r->off, s->dev + r->off, r->len,
                               cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) cuda_fail(seq, e, "download");
  }
}

static void do_download(const rstate *s, const kf_cuda_cmd *c) {
  download_step(s, c->seq, c->regions, c->n_regions);
  reply_done(c->seq);
}

/* Guards (regions) and input digests (in[]) into r.bad / r.digest. */
static void probe_step(const rstate *s, const kf_cuda_cmd *c,
                       kf_cuda_reply *r);

static void do_probe(const rstate *s, const kf_cuda_cmd *c) {
  kf_cuda_reply r;
  memset(&r, 0, sizeof r);
  r.magic = KF_CUDA_MAGIC;
  r.seq = c->seq;
  r.kind = KF_HARNESS_R_DONE;
  probe_step(s, c, &r);
  ssize_t w;
  do {
    w = write(1, &r, sizeof r);
  } while (w < 0 && errno == EINTR);
}

static void probe_step(const rstate *s, const kf_cuda_cmd *c,
                       kf_cuda_reply *r) {
  static const size_t dt_size[] = {4, 8, 2, 2, 4, 8};
  if (c->n_regions < 0 || c->n_regions > KF_CUDA_MAX_REGIONS ||
      c->n_inputs < 0 || c->n_inputs > KF_HARNESS_MAX_T)
    _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  unsigned long long init[1 + KF_HARNESS_MAX_T];
  init[0] = ~0ull;
  memset(init + 1, 0, sizeof init - sizeof init[0]);
  cudaError_t e = cudaMemcpy(s->scratch, init, sizeof init,
                             cudaMemcpyHostToDevice);
  if (e != cudaSuccess) cuda_fail(c->seq, e, "probe");
  for (int i = 0; i < c->n_regions; i++) {
    const kf_cuda_region *r = &c->regions[i];
    if (!region_ok(s, r->off, r->len)) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
    int ke = kf_cuda_canary_check((const unsigned char *)s->dev, r->off,
                                  r->len, c->canary_salt, &s->scratch[0]);
    if (ke) cuda_fail(c->seq, (cudaError_t)ke, "checking guards");
  }
  for (int i = 0; i < c->n_inputs; i++) {
    const kf_harness_tdesc *d = &c->in[i];
    if (d->dtype < 0 || d->dtype > 5 || d->numel < 0 ||
        (uint64_t)d->numel > s->map_len ||
        !region_ok(s, d->off, (uint64_t)d->numel * dt_size[d->dtype]))
      _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
    int ke = kf_cuda_digest((const unsigned char *)s->dev + d->off,
                            (uint64_t)d->numel * dt_size[d->dtype],
                            &s->scratch[1 + i]);
    if (ke) cuda_fail(c->seq, (cudaError_t)ke, "digesting inputs");
  }
  unsigned long long out[1 + KF_HARNESS_MAX_T];
  e = cudaMemcpy(out, s->scratch, sizeof out, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) cuda_fail(c->seq, e, "probe");
  r->bad = out[0];
  for (int i = 0; i < KF_HARNESS_MAX_T; i++) r->digest[i] = out[1 + i];
}

static void timing_fail(uint32_t seq, const char *what) {
  send_reply(KF_CUDA_R_TIMING, seq, 0, 0, 0, 0, what);
  _exit(KF_HARNESS_RUNNER_EXIT_OK);
}

/* The timing gate (kernels.h kf_cuda_gate).  Its device words sit in the
 * probe scratch, past the probe's results: zeroed with it before every
 * call, and again here (the calibration holds it several times). */
#define GATE_OFF 4096
#define GATE_WAIT_NS 2000000000ull  /* for every SM to hold a gate block */
#define GATE_EXPIRE_NS 200000000ull /* a gate not opened by then opens */

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Queues the gate behind the work already on the stream and waits until
 * it holds every SM; returns the host time it saw that. */
static uint64_t gate_hold(rstate *s, uint32_t seq) {
  kf_cuda_gate_dev *d = (kf_cuda_gate_dev *)((char *)s->scratch + GATE_OFF);
  s->gate_host[KF_CUDA_GATE_RESIDENT] = 0;
  s->gate_host[KF_CUDA_GATE_OPEN] = 0;
  s->gate_host[KF_CUDA_GATE_EXPIRED] = 0;
  __sync_synchronize();
  cudaError_t e = cudaMemsetAsync(d, 0, sizeof *d, s->stream);
  if (e == cudaSuccess)
    e = (cudaError_t)kf_cuda_gate(d, s->gate_host_dev, s->gate_blocks,
                                  s->gate_smem, GATE_EXPIRE_NS);
  if (e != cudaSuccess) cuda_fail(seq, e, "launching the timing gate");
  uint64_t t0 = now_ns(), t = t0;
  while (!s->gate_host[KF_CUDA_GATE_RESIDENT]) {
    if ((t = now_ns()) - t0 > GATE_WAIT_NS)
      cuda_fail(seq, cudaErrorTimeout, "the timing gate did not hold every "
                "SM within 2 s: is another process using this GPU?");
  }
  return now_ns();
}

/* Opens the gate; returns the host time just before. */
static uint64_t gate_open(rstate *s) {
  uint64_t t = now_ns();
  __sync_synchronize();
  s->gate_host[KF_CUDA_GATE_OPEN] = 1;
  __sync_synchronize();
  return t;
}

/* busy_base_ns: how much longer than its events a gated harness kernel
 * keeps the host waiting, from the opening of the gate to the return of
 * the synchronize (the opening's trip to the device, the gate's exit, the
 * wake of the synchronize).  The median of 15: what an honest call adds,
 * so that only work the events did not see is charged beyond them. */
static void calibrate_gate(rstate *s, uint32_t seq) {
  uint64_t x[15];
  for (int i = 0; i < 15; i++) {
    gate_hold(s, seq);
    cudaError_t e = cudaEventRecord(s->ev0, 0);
    if (e == cudaSuccess)
      e = (cudaError_t)kf_cuda_canary((unsigned char *)s->flush, 0, 4096, 0);
    if (e == cudaSuccess) e = cudaEventRecord(s->ev1, 0);
    uint64_t to = gate_open(s);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    uint64_t ti = now_ns();
    float ms = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, s->ev0, s->ev1);
    if (e != cudaSuccess) cuda_fail(seq, e, "calibrating the timing gate");
    uint64_t ev = (uint64_t)((double)ms * 1e6 + 0.5), busy = ti - to;
    x[i] = busy > ev ? busy - ev : 0;
  }
  for (int i = 1; i < 15; i++)
    for (int j = i; j > 0 && x[j] < x[j - 1]; j--) {
      uint64_t t = x[j];
      x[j] = x[j - 1];
      x[j - 1] = t;
    }
  s->busy_base_ns = x[7] ? x[7] : 1;
}

/* The idle gate (--idle-gate), before each timed call of the reference.
 * Each side is a process of its own, and a candidate's process can leave
 * GPU work running past its DONE (its runner's code taken over, or work
 * the synchronize does not wait for): contexts of different processes
 * share the GPU by time slices, so that work ran inside the reference's
 * timed window (red team, 2026-11-30: a 20 ms kernel queued after every
 * reply timed the reference at 2,699 us against 311 us, 16.7x for a 1.9x
 * kernel).  A probe -- one tiny kernel, then the host's wait for it --
 * waits a time slice while another context holds the GPU.  The gate
 * probes until they have been quick for IDLE_QUIET_NS in a row, and says
 * how long it waited and how often it found the GPU held; the eval
 * process names the side that ran before (backend.c).  harness/torch's
 * runner.py _IdleGate measured the probe on an H200: a held GPU answers
 * in 0.2-1.4 ms, an idle one in ~10 us. */
#define IDLE_OFF (GATE_OFF - 64) /* the probe's word, in the scratch */
/* the output digests of a PREPPED RUN (commit_outputs), in the scratch */
#define COMMIT_OFF 1024
#define IDLE_CAL 32
#define IDLE_QUIET 3
/* Quick probes for this long in a row: a context that got the GPU keeps
 * it for a time slice only, and the other's work comes back after it
 * (~2.3 ms on an H200, runner.py's measurements), so a few quick probes
 * in a row said nothing -- the red team's 20 ms kernel came back inside
 * the reference's timed call.  Longer than two time slices. */
#define IDLE_QUIET_NS 8000000ull
#define IDLE_SLOW_MIN_NS 50000ull
#define IDLE_SLOW_MAX_NS 500000ull
#define IDLE_DEADLINE_NS 5000000000ull

static uint64_t idle_probe(rstate *s, uint32_t seq) {
  unsigned *w = (unsigned *)((char *)s->scratch + IDLE_OFF);
  cudaError_t e = (cudaError_t)kf_cuda_probe(w);
  uint64_t t0 = now_ns();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) cuda_fail(seq, e, "probing whether the GPU is idle");
  return now_ns() - t0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The slowest probe that still says idle, from IDLE_CAL probes before any
 * candidate code runs: the median plus three times its distance to the
 * 90th percentile, within [IDLE_SLOW_MIN_NS, IDLE_SLOW_MAX_NS].  Fixed
 * from then on: probes the gate takes later are not added (probes just
 * under the limit would ratchet it up). */
static void idle_calibrate(rstate *s, uint32_t seq) {
  uint64_t v[IDLE_CAL];
  for (int i = 0; i < IDLE_CAL; i++) v[i] = idle_probe(s, seq);
  qsort(v, IDLE_CAL, sizeof v[0], cmp_u64);
  uint64_t med = v[(IDLE_CAL - 1) / 2], q9 = v[(int)(0.9 * (IDLE_CAL - 1))];
  uint64_t d = 3 * (q9 - med);
  if (d < IDLE_SLOW_MIN_NS) d = IDLE_SLOW_MIN_NS;
  if (d > IDLE_SLOW_MAX_NS) d = IDLE_SLOW_MAX_NS;
  s->idle_lim = med + d;
}

static void idle_wait(rstate *s, uint32_t seq, kf_cuda_reply *r) {
  uint64_t lim = s->idle_lim, t0 = now_ns(), busy_end = t0, since = t0;
  int quick = 0;
  uint32_t slow = 0;
  for (;;) {
    uint64_t d = idle_probe(s, seq), t = now_ns();
    if (d <= lim) {
      if (!quick++) since = t - d;
      if (quick >= IDLE_QUIET && t - since >= IDLE_QUIET_NS) break;
      continue;
    }
    quick = 0;
    slow++;
    busy_end = t;
    if (busy_end - t0 > IDLE_DEADLINE_NS) {
      r->idle_ranout = 1;
      break;
    }
  }
  r->idle_slow = slow;
  r->idle_busy_ns = slow ? busy_end - t0 : 0;
}

/* How many flush memsets make --warm-us of GPU time: the last 4 of 12
 * timed, the first 8 wake the GPU.  Runs at the first timed call, under
 * the eval's GPU lock (the runner starts before it is taken). */
static void calibrate_warm(rstate *s, uint32_t seq) {
  float ms = 0;
  cudaError_t e = cudaSuccess;
  for (int i = 0; i < 12 && e == cudaSuccess; i++) {
    if (i == 8) e = cudaEventRecord(s->ev0, s->stream);
    if (e == cudaSuccess)
      e = cudaMemsetAsync(s->flush, i, s->flush_len, s->stream);
  }
  if (e != cudaSuccess ||
      (e = cudaEventRecord(s->ev1, s->stream)) != cudaSuccess ||
      (e = cudaStreamSynchronize(s->stream)) != cudaSuccess ||
      (e = cudaEventElapsedTime(&ms, s->ev0, s->ev1)) != cudaSuccess)
    cuda_fail(seq, e, "timing a memset for --warm-us");
  ms /= 4; /* the last 4 of 12, clocks up by then */
  double n = ms > 0 ? (double)s->warm_us / (ms * 1e3) : 1;
  s->warm_n = n < 1 ? 1 : n > 1000 ? 1000 : (int)(n + 0.5);
}

/* What no call may find from the one before, cleared before each call:
 * local memory, the flush buffer (and with it L2), the probe scratch,
 * shared memory; before a timed call the GPU is also kept busy for
 * --warm-us first and persisting L2 lines are reset.  Part of RUN, or
 * done ahead by PREP for a timed call (do_prep). */
static void clear_step(rstate *s, const kf_cuda_cmd *c) {
  /* Local memory is not cleared between kernels: a thread's
   * uninitialized local array holds what the last thread on its hardware
   * slot left (tests/exploits/cuda/local_carry.cu kept run 1's seed there
   * for run 2).  Every slot's window is zeroed, up to the candidate's
   * largest frame and the stack limit; first of all, so that the L2 flush
   * below also evicts its lines.  Not best effort: a scrub that cannot
   * run ends the runner. */
  cudaError_t e =
      (cudaError_t)kf_cuda_lmem_scrub(s->lmem_variant, s->lmem_blocks);
  if (e != cudaSuccess) cuda_fail(c->seq, e, "scrubbing local memory");
  if (c->flags & KF_CUDA_RUN_TIMED) {
    /* Between calls the GPU idles for the eval's host work and its clocks
     * drop; a program that runs the kernel keeps it busy.  So it is kept
     * busy for --warm-us first. */
    for (int i = 0; i < s->warm_n; i++) {
      e = cudaMemsetAsync(s->flush, i & 0xff, s->flush_len, s->stream);
      if (e != cudaSuccess) cuda_fail(c->seq, e, "warming up");
    }
  }
  /* every call: the flush buffer scrubbed (it can carry nothing from one
   * call to the next) and L2 flushed; the probe scratch scrubbed whole,
   * the rest of its granules included (what a candidate wrote there in
   * one call -- the first determinism run's output, a call counter --
   * is gone before the next) */
  {
    /* the byte counts nothing (the sequence number would: a call counter
     * readable on the device) */
    struct timespec fb;
    clock_gettime(CLOCK_MONOTONIC, &fb);
    e = cudaMemsetAsync(s->flush, (int)((fb.tv_nsec >> 6) & 0xff),
                        s->flush_len, s->stream);
  }
  if (e != cudaSuccess) cuda_fail(c->seq, e, "L2 flush");
  e = cudaMemsetAsync(s->scratch, 0, s->scratch_len, s->stream);
  if (e != cudaSuccess) cuda_fail(c->seq, e, "scrubbing the probe scratch");
  /* shared memory is not cleared between kernels: what one call's kernel
   * left there (run 1's seed for run 2) is zeroed on every SM.  Best
   * effort: a launch the device refuses is skipped, not fatal. */
  if (s->smem_bytes && kf_cuda_smem_scrub(s->sms, s->smem_bytes))
    cudaGetLastError();
  if (c->flags & KF_CUDA_RUN_TIMED) {
    /* persisting lines a previous run may have left go back to normal */
    e = cudaCtxResetPersistingL2Cache();
    if (e != cudaSuccess) cuda_fail(c->seq, e, "resetting persisting L2");
  }
}

static void send_done(kf_cuda_reply *r, uint32_t seq);

/* Tracing on for a call: in RUN, or in PREP for a timed one (do_prep). */
static void trace_on(rstate *s, uint32_t seq) {
  kf_cupti_reset(); /* tracing was off since the last call's records */
  if (kf_cupti_scope(true) != 0)
    timing_fail(seq, "CUPTI activity tracing could not be turned on");
}

/* The trace of a call (CUPTI): the harness's own marker work after it,
 * then every activity attributed (cupti.c).  Part of RUN, or of CHECK
 * after a PREPPED RUN's DONE; fails the runner on what it finds, else
 * raises r's time to the trace's span. */
static void trace_step(rstate *s, uint32_t seq, kf_cuda_reply *r) {
  trace_state tr = s->tr;
  s->tr.pending = false;
  cudaError_t e;
  size_t tot = 0;
  if (s->cupti) {
    /* The harness's own work after the call, traced like the call: if
     * the candidate switched tracing off inside it, these records are
     * missing and nothing it did can be believed (kf_cupti_end).  The
     * flush buffer is scratch, scrubbed before every call. */
    kf_cupti_mark(true);
    void *mp = NULL;
    if ((e = cudaMemsetAsync(s->flush, 0x5b, 256, s->stream)) != cudaSuccess ||
        (e = (cudaError_t)kf_cuda_canary(s->flush, 256, 256, 0)) !=
            cudaSuccess ||
        (e = cudaMemcpyAsync((unsigned char *)s->flush + 512, s->flush, 256,
                             cudaMemcpyDeviceToDevice, s->stream)) !=
            cudaSuccess ||
        (e = cudaMalloc(&mp, MARK_ALLOC)) != cudaSuccess ||
        (e = cudaFree(mp)) != cudaSuccess ||
        (e = cudaDeviceSynchronize()) != cudaSuccess)
      cuda_fail(seq, e, "the trace check after the call");
  }
  /* no device memory kept from one call to the next: with CUPTI, the
   * allocation records of this process (below); without, the device's
   * free memory, which other processes also move (diagnosis only) */
  size_t fr = 0;
  if (s->check && !kf_cupti_memory() &&
      cudaMemGetInfo(&fr, &tot) == cudaSuccess &&
      fr + (4u << 20) < tr.free0) {
    char msg[200];
    snprintf(msg, sizeof msg, "kept %zu MiB of device memory allocated "
             "after the call (device memory must not carry state from one "
             "call to the next)", (tr.free0 - fr) >> 20);
    send_reply(KF_CUDA_R_STATE, seq, 0, 0, 0, 0, msg);
    _exit(KF_HARNESS_RUNNER_EXIT_OK);
  }
  uint64_t t = tr.t;
  uint32_t n_act = 0;
  if (s->cupti) {
    kf_cupti_call cc;
    int got = kf_cupti_end(tr.c0, tr.c1, s->stream_id, s->ctx_id, &cc);
    kf_cupti_scope(false);
    if (got == 0) {
      char msg[220];
      if (cc.lost) {
        snprintf(msg, sizeof msg, "%u GPU activity records were lost: the "
                 "call's work cannot be attributed", cc.lost);
        timing_fail(seq, msg);
      }
      if (cc.bad == KF_CUPTI_FOREIGN_STREAM) {
        snprintf(msg, sizeof msg, "GPU work outside the stream it was "
                 "given: %.150s", cc.what);
        timing_fail(seq, msg);
      }
      if (cc.bad == KF_CUPTI_BLIND) {
        snprintf(msg, sizeof msg, "GPU activity tracing was switched off "
                 "during the call: %.150s", cc.what);
        timing_fail(seq, msg);
      }
      if (cc.bad == KF_CUPTI_EARLY) {
        snprintf(msg, sizeof msg, "GPU work outside the timed window: "
                 "%.160s", cc.what);
        timing_fail(seq, msg);
      }
      if (s->check && cc.mem_kept > 0) { /* the reference is trusted */
        snprintf(msg, sizeof msg, "kept %lld bytes of device memory "
                 "allocated after the call (first: %.40s; device memory must "
                 "not carry state from one call to the next)",
                 (long long)cc.mem_kept, cc.mem_what);
        send_reply(KF_CUDA_R_STATE, seq, 0, 0, 0, 0, msg);
        _exit(KF_HARNESS_RUNNER_EXIT_OK);
      }
      n_act = cc.n;
      if (cc.n && cc.last_end > cc.pre_end && cc.last_end - cc.pre_end > t)
        t = cc.last_end - cc.pre_end;
    }
  }
  r->rc = tr.rc;
  r->elapsed_ns = t;
  r->event_ns = tr.gpu_ns;
  r->n_activity = n_act;
}

/* Digests (core/gen.h's) of every output of the call into r->digest, on
 * the device, in the scratch's commit words. */
static void commit_outputs(rstate *s, const kf_cuda_cmd *c,
                           kf_cuda_reply *r) {
  static const size_t dt_size[] = {4, 8, 2, 2, 4, 8};
  unsigned long long *sum =
      (unsigned long long *)((char *)s->scratch + COMMIT_OFF);
  cudaError_t e = cudaMemsetAsync(sum, 0, KF_HARNESS_MAX_T * sizeof *sum,
                                  s->stream);
  for (int i = 0; i < c->n_outputs && e == cudaSuccess; i++) {
    const kf_harness_tdesc *d = &c->out[i];
    e = (cudaError_t)kf_cuda_digest((const unsigned char *)s->dev + d->off,
                                    (uint64_t)d->numel * dt_size[d->dtype],
                                    &sum[i]);
  }
  unsigned long long out[KF_HARNESS_MAX_T];
  if (e == cudaSuccess)
    e = cudaMemcpy(out, sum, sizeof out, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) cuda_fail(c->seq, e, "digesting the outputs");
  for (int i = 0; i < c->n_outputs; i++) r->digest[i] = out[i];
}

/* CHECK, after a PREPPED RUN's DONE: its trace, and the time it adds. */
static void do_check(rstate *s, const kf_cuda_cmd *c) {
  kf_cuda_reply r;
  memset(&r, 0, sizeof r);
  if (!s->tr.pending) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  trace_step(s, c->seq, &r);
  send_done(&r, c->seq);
}

static void run_step(rstate *s, const kf_cuda_cmd *c, kf_launch_fn fn,
                     kf_cuda_reply *r) {
  static const size_t dt_size[] = {4, 8, 2, 2, 4, 8};
  static kf_tensor tin[KF_HARNESS_MAX_T], tout[KF_HARNESS_MAX_T];
  if (c->n_inputs < 0 || c->n_inputs > KF_HARNESS_MAX_T || c->n_outputs < 0 ||
      c->n_outputs > KF_HARNESS_MAX_T || c->n_params < 0 ||
      c->n_params > KF_HARNESS_MAX_P)
    _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  uint64_t ph[4] = {now_ns()}; /* where the call's time went (msg) */
  restore_state(s);
  /* the GPU idle, and every record of earlier work delivered and
   * forgotten, so that what CUPTI reports next is this call's */
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) cuda_fail(c->seq, e, "before the call");
  /* a timed call comes after its PREP (do_prep), always */
  bool prepped = (c->flags & KF_CUDA_RUN_PREPPED) != 0;
  if ((c->flags & KF_CUDA_RUN_TIMED) && !prepped)
    _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  if (s->cupti && !prepped) trace_on(s, c->seq);
  size_t free0 = 0, tot = 0;
  bool gated = (c->flags & KF_CUDA_RUN_TIMED) && s->gate;
  if (gated && !s->busy_base_ns) calibrate_gate(s, c->seq);
  if (cudaMemGetInfo(&free0, &tot) != cudaSuccess) free0 = 0;
  for (int side = 0; side < 2; side++) {
    int n = side ? c->n_outputs : c->n_inputs;
    for (int i = 0; i < n; i++) {
      const kf_harness_tdesc *d = side ? &c->out[i] : &c->in[i];
      kf_tensor *t = side ? &tout[i] : &tin[i];
      if (d->dtype < 0 || d->dtype > 5 || d->numel < 0 || d->ndim < 0 ||
          d->ndim > KF_MAX_DIMS || d->off > s->map_len ||
          (uint64_t)d->numel > (s->map_len - d->off) / dt_size[d->dtype])
        _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
      t->data = s->dev + d->off;
      t->dtype = d->dtype;
      t->ndim = d->ndim;
      for (int k = 0; k < KF_MAX_DIMS; k++) t->dims[k] = d->dims[k];
      t->numel = d->numel;
      if (side) {
        e = cudaMemsetAsync(t->data, c->out_poison[i],
                            (size_t)d->numel * dt_size[d->dtype], s->stream);
        if (e != cudaSuccess) cuda_fail(c->seq, e, "poisoning outputs");
      }
    }
  }
  if (c->ws_off > s->map_len || c->ws_bytes > s->map_len - c->ws_off)
    _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  if (c->ws_bytes) {
    e = cudaMemsetAsync(s->dev + c->ws_off, c->ws_poison, c->ws_bytes,
                        s->stream);
    if (e != cudaSuccess) cuda_fail(c->seq, e, "filling the workspace");
  }
  if (!prepped) clear_step(s, c);
  if (c->flags & KF_CUDA_RUN_TIMED) {
    /* The memsets of clear_step (and the draw of a PREPPED call's
     * inputs since) leave L2 full of dirty lines, and the kernel that
     * evicts them pays their write-back: up to one L2 of DRAM writes
     * charged to the candidate (6 us of a 74 us rmsnorm on an H200,
     * docs/gpu-runs/2026-11-26-l2-dirty).  A read sweep of the flush
     * buffer, last before the start event, writes them back now and
     * leaves L2 holding clean lines of harness scratch (none of the
     * inputs: the call starts cold).  Its sink is the flush buffer's
     * first word, scratch like the rest. */
    e = (cudaError_t)kf_cuda_read(s->flush, s->flush_len, s->sms,
                                  (unsigned long long *)s->flush);
    if (e != cudaSuccess) cuda_fail(c->seq, e, "cleaning L2");
  }
  /* Registers are not cleared between kernels either: a kernel that reads
   * registers it never wrote (its loads predicated off) found what the
   * last call's kernels held, through every other kernel of this function
   * (H200, 2026-11-29; tests/exploits/cuda/register_carry.cu kept its
   * seed there).  The registers of every SM are overwritten with
   * flush-buffer words (loads only: L2 stays clean), last, so that no
   * harness kernel moves the candidate's warps.  Not all of them: the top
   * two of each scrub warp keep theirs (kernels.cu), which is why the
   * determinism check's second run has a runner of its own (backend.c
   * fresh_runner).  Not best effort either. */
  e = (cudaError_t)kf_cuda_reg_scrub(s->flush, &s->regs);
  if (e != cudaSuccess) cuda_fail(c->seq, e, "scrubbing registers");
  /* A timed call runs behind the gate: kf_launch is called once every SM
   * holds a gate block (after the flush and the sweep), and the gate opens
   * when it returns.  So the start event, and the candidate's kernels
   * behind it, run the moment the gate opens -- the time starts when the
   * GPU turns to them, not a host launch latency earlier -- and nothing
   * the candidate queues, on any stream, runs beside the harness's work
   * before the call or before the gate opens, traced or not. */
  uint64_t t_held = gated ? gate_hold(s, c->seq) : 0;
  kf_args a = {
      .abi_version = KF_ABI_VERSION,
      .n_inputs = c->n_inputs,
      .n_outputs = c->n_outputs,
      .n_params = c->n_params,
      .inputs = tin,
      .outputs = tout,
      .params = c->params,
      .workspace = c->ws_bytes ? s->dev + c->ws_off : NULL,
      .workspace_bytes = (size_t)c->ws_bytes,
      .stream = (void *)s->stream,
  };
  e = cudaEventRecord(s->ev0, 0);
  if (e != cudaSuccess) cuda_fail(c->seq, e, "recording the start event");
  struct timespec h0, h1;
  uint64_t c0 = s->cupti ? kf_cupti_now() : 0;
  clock_gettime(CLOCK_MONOTONIC, &h0);
  ph[1] = now_ns();
  int rc = fn(&a);
  clock_gettime(CLOCK_MONOTONIC, &h1);
  uint64_t c1 = s->cupti ? kf_cupti_now() : 0;
  cudaError_t le = cudaGetLastError();
  e = cudaEventRecord(s->ev1, 0);
  uint64_t t_open = t_held ? gate_open(s) : 0;
  /* every stream, the candidate's hidden ones included */
  cudaError_t se = cudaDeviceSynchronize();
  uint64_t t_idle = now_ns();
  if (se != cudaSuccess) cuda_fail(c->seq, se, "kf_launch's kernels");
  if (le != cudaSuccess) cuda_fail(c->seq, le, "launching from kf_launch");
  if (e != cudaSuccess) cuda_fail(c->seq, e, "recording the end event");
  float ms = 0;
  e = cudaEventElapsedTime(&ms, s->ev0, s->ev1);
  if (e != cudaSuccess) cuda_fail(c->seq, e, "reading the events");
  ph[2] = now_ns();
  check_state(s, c->seq);
  uint64_t gpu_ns = (uint64_t)((double)ms * 1e6 + 0.5);
  uint64_t host_ns = (uint64_t)(h1.tv_sec - h0.tv_sec) * 1000000000u +
                     (uint64_t)h1.tv_nsec - (uint64_t)h0.tv_nsec;
  uint64_t t = host_ns > gpu_ns ? host_ns : gpu_ns;
  /* The busy span: from the opening of the gate to the return of the
   * synchronize that waits for every stream -- work the events and the
   * trace did not see (a stream the candidate made, tracing switched off
   * and on again inside the call) keeps it open.  Beyond what an honest
   * call adds to its events (busy_base_ns), it is charged; host noise
   * then lengthens a repetition now and then, which the median absorbs,
   * where hidden work lengthens every one.  A gate that opened itself
   * (kf_launch kept the host past GATE_EXPIRE_NS) let the work start
   * before t_open: the span then runs from the gate's hold. */
  if (t_held) {
    uint64_t from =
        s->gate_host[KF_CUDA_GATE_EXPIRED] ? t_held : t_open;
    uint64_t busy = t_idle > from ? t_idle - from : 0;
    if (busy > s->busy_base_ns && busy - s->busy_base_ns > t)
      t = busy - s->busy_base_ns;
  }
  s->tr = (trace_state){.pending = true, .c0 = c0, .c1 = c1,
                        .free0 = free0, .t = t, .gpu_ns = gpu_ns, .rc = rc};
  r->rc = rc;
  r->elapsed_ns = t;
  r->event_ns = gpu_ns;
  if (prepped) {
    /* the outputs as they are now, committed in the reply: the eval's
     * clock stops at this DONE, and what it downloads later must be
     * these bytes (backend.c); the trace follows in CHECK */
    commit_outputs(s, c, r);
  } else {
    trace_step(s, c->seq, r);
  }
  ph[3] = now_ns();
  /* host microseconds: before the call, the call to the synchronize's
   * return, the rest of RUN */
  snprintf(r->msg, sizeof r->msg, "phases %" PRIu64 " %" PRIu64 " %" PRIu64,
           (ph[1] - ph[0]) / 1000, (ph[2] - ph[1]) / 1000,
           (ph[3] - ph[2]) / 1000);
}

static void send_done(kf_cuda_reply *r, uint32_t seq) {
  r->magic = KF_CUDA_MAGIC;
  r->seq = seq;
  r->kind = KF_HARNESS_R_DONE;
  ssize_t w;
  do {
    w = write(1, r, sizeof *r);
  } while (w < 0 && errno == EINTR);
}

static void do_run(rstate *s, const kf_cuda_cmd *c, kf_launch_fn fn) {
  kf_cuda_reply r;
  memset(&r, 0, sizeof r);
  run_step(s, c, fn, &r);
  send_done(&r, c->seq);
}

/* PREP, before a timed call's inputs are drawn: everything of the call
 * that is not the call -- the idle gate, the warm-up, clearing what the
 * last call left, the trace turned on -- so that between the draw and the
 * reply that fixes the outputs (commit_outputs) the runner does only the
 * call and a short remainder (the sweep that evicts the drawn inputs
 * from L2, the register scrub, the digests).  The eval's clock of those
 * commands is the lower bound it holds the runner's claim to (backend.c,
 * core/stats.c kf_harness__wall_bound): whatever of the harness's own is
 * inside them, a hijacked runner could skip and spend on uncharged work,
 * so it is kept short and alike for every side. */
static void do_prep(rstate *s, const kf_cuda_cmd *c) {
  kf_cuda_reply r;
  memset(&r, 0, sizeof r);
  if (!(c->flags & KF_CUDA_RUN_TIMED)) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  restore_state(s);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) cuda_fail(c->seq, e, "before the call");
  if (s->idle) idle_wait(s, c->seq, &r);
  if (s->warm_us && !s->warm_n) calibrate_warm(s, c->seq);
  clear_step(s, c);
  if ((e = cudaDeviceSynchronize()) != cudaSuccess)
    cuda_fail(c->seq, e, "clearing before the call");
  if (s->cupti) {
    /* Tracing on here, not in RUN: turning it on costs a millisecond of
     * host time that differs from process to process by more than a
     * hundred microseconds (its kernels, CUPTI's instrumentation of
     * them), which the eval's clock of the call would carry.  And each
     * harness kernel of the clocked commands launched once now, tiny:
     * the first launch of a function after tracing turned on pays for
     * its instrumentation (the draw took 1.2 ms instead of 0.45 on the
     * H200 without this, 2026-11-30). */
    trace_on(s, c->seq);
    unsigned long long *w =
        (unsigned long long *)((char *)s->scratch + COMMIT_OFF);
    int ke = kf_cuda_gen((unsigned char *)w, 0, 1, 0, 0, 1);
    if (!ke) ke = kf_cuda_read(s->flush, 4096, 1,
                               (unsigned long long *)s->flush);
    if (!ke) ke = kf_cuda_digest((const unsigned char *)w, 8, w + 1);
    if (!ke) ke = (int)cudaMemsetAsync(w, 0, 64, s->stream);
    if (!ke) ke = kf_cuda_reg_scrub(s->flush, &s->regs);
    if (!ke) ke = (int)cudaDeviceSynchronize();
    if (ke) cuda_fail(c->seq, (cudaError_t)ke, "priming the trace");
  }
  send_done(&r, c->seq);
}

/* A whole untimed verification case: draw, call, the outputs downloaded,
 * guards and inputs probed.  A failed kf_launch (rc != 0) still replies
 * DONE with its rc, after which the eval stops the runner. */
static void do_case(rstate *s, const kf_cuda_cmd *c, kf_launch_fn fn) {
  static const size_t dt_size[] = {4, 8, 2, 2, 4, 8};
  if (c->flags & KF_CUDA_RUN_TIMED) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
  gen_step(s, c);
  kf_cuda_reply r;
  memset(&r, 0, sizeof r);
  run_step(s, c, fn, &r);
  if (r.rc == 0) {
    kf_cuda_region out[KF_HARNESS_MAX_T];
    for (int i = 0; i < c->n_outputs; i++) {
      const kf_harness_tdesc *d = &c->out[i];
      out[i] = (kf_cuda_region){d->off,
                                (uint64_t)d->numel * dt_size[d->dtype]};
    }
    download_step(s, c->seq, out, c->n_outputs);
    probe_step(s, c, &r);
  }
  send_done(&r, c->seq);
}

int kf_harness_cuda_runner_main(int argc, char **argv) {
  const char *jail = NULL, *so = NULL;
  unsigned long long cpu_s = 120, device = 0, warm_us = 0, lmem_bytes = 0;
  bool seccomp_on = true, pin = true, check = true, own_stream = false;
  bool cupti_on = true, idle = false;
  /* --relax: sandbox steps left out, for the profiled runner only (a
   * profiler's injected library lives in this process and talks to its
   * front end); bits below */
  unsigned relax = 0;
  uint64_t mut_off[MAX_MUT], mut_len[MAX_MUT];
  int n_mut = 0;
  for (int i = 0; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--jail")) jail = argv[i + 1];
    else if (!strcmp(argv[i], "--so")) so = argv[i + 1];
    else if (!strcmp(argv[i], "--cpu-s")) {
      if (kf_sandbox_parse_ull(argv[i + 1], &cpu_s)) setup_fail("bad --cpu-s", 0);
    } else if (!strcmp(argv[i], "--device")) {
      if (kf_sandbox_parse_ull(argv[i + 1], &device) || device > 255)
        setup_fail("bad --device", 0);
    } else if (!strcmp(argv[i], "--seccomp")) {
      seccomp_on = strcmp(argv[i + 1], "off") != 0;
    } else if (!strcmp(argv[i], "--cupti")) {
      cupti_on = strcmp(argv[i + 1], "off") != 0;
    } else if (!strcmp(argv[i], "--stream")) {
      own_stream = !strcmp(argv[i + 1], "own");
      if (!own_stream && strcmp(argv[i + 1], "legacy"))
        setup_fail("bad --stream (legacy|own)", 0);
    } else if (!strcmp(argv[i], "--warm-us")) {
      if (kf_sandbox_parse_ull(argv[i + 1], &warm_us) || warm_us > 1000000)
        setup_fail("bad --warm-us", 0);
    } else if (!strcmp(argv[i], "--lmem-bytes")) {
      if (kf_sandbox_parse_ull(argv[i + 1], &lmem_bytes) ||
          lmem_bytes > (1u << 20))
        setup_fail("bad --lmem-bytes", 0);
    } else if (!strcmp(argv[i], "--idle-gate")) {
      idle = !strcmp(argv[i + 1], "on");
    } else if (!strcmp(argv[i], "--state-check")) {
      check = strcmp(argv[i + 1], "off") != 0;
    } else if (!strcmp(argv[i], "--mutable")) {
      if (parse_ranges(argv[i + 1], mut_off, mut_len, &n_mut))
        setup_fail("bad --mutable (HEX:HEX,...)", 0);
    } else if (!strcmp(argv[i], "--pin")) {
      pin = strcmp(argv[i + 1], "off") != 0;
    } else if (!strcmp(argv[i], "--relax")) {
      if (parse_relax(argv[i + 1], &relax)) setup_fail("bad --relax", 0);
    } else {
      setup_fail("unknown runner option", 0);
    }
  }
  if (!jail || !so || strchr(so, '/'))
    setup_fail("usage: runner --jail DIR --so NAME --device N", 0);
  if (relax & RELAX_SECCOMP) seccomp_on = false;

  /* 1. the shared memory; nothing else stays open */
  struct stat st;
  if (fstat(3, &st) != 0) setup_fail("fstat memfd", errno);
  rstate s = {.map_len = (size_t)st.st_size, .check = check, .n_mut = n_mut};
  memcpy(s.mut_off, mut_off, sizeof mut_off);
  memcpy(s.mut_len, mut_len, sizeof mut_len);
  if (!s.map_len) setup_fail("empty memfd", 0);
  s.base = mmap(NULL, s.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0);
  if (s.base == MAP_FAILED) setup_fail("mmap memfd", errno);
  close(3);
#ifdef SYS_close_range
  if (!(relax & RELAX_FDS)) syscall(SYS_close_range, 4u, ~0u, 0u);
#endif
  signal(SIGPIPE, SIG_DFL);
  bool root = geteuid() == 0;
  uint32_t def = 0;

  /* 2. namespaces, while single-threaded */
  {
    int ns = CLONE_NEWNS | CLONE_NEWUTS;
    uint32_t nsdef = KF_HARNESS_DEF_MNTNS | KF_HARNESS_DEF_UTSNS;
    if (!(relax & RELAX_NETNS)) {
      ns |= CLONE_NEWNET;
      nsdef |= KF_HARNESS_DEF_NETNS;
    }
    if (!(relax & RELAX_IPCNS)) {
      ns |= CLONE_NEWIPC;
      nsdef |= KF_HARNESS_DEF_IPCNS;
    }
    if (root && unshare(ns) == 0) def |= nsdef;
  }

  /* 3. CUDA (and CUPTI), everything the run needs; the time of each
   * step goes into READY's message (where a runner's start goes) */
  struct timespec tp0, tp;
  clock_gettime(CLOCK_MONOTONIC, &tp0);
  char setup_ms[200] = "";
  size_t sml = 0;
#define MARK(what)                                                            \
  do {                                                                        \
    clock_gettime(CLOCK_MONOTONIC, &tp);                                      \
    if (sml < sizeof setup_ms)                                                \
      sml += (size_t)snprintf(                                                \
          setup_ms + sml, sizeof setup_ms - sml, "%s %ld", what,               \
          (long)((tp.tv_sec - tp0.tv_sec) * 1000 +                            \
                 (tp.tv_nsec - tp0.tv_nsec) / 1000000));                      \
  } while (0)
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  char cerr[160] = "";
  if (cupti_on) s.cupti = kf_cupti_init(cerr, sizeof cerr) == 0;
  cudaError_t e = cudaSetDevice((int)device);
  if (e != cudaSuccess) cuda_fail(0, e, "cudaSetDevice");
  /* Spin: a synchronize returns within a microsecond or so of the device
   * going idle, where a blocking one waits for an interrupt and a wake
   * (tens of microseconds, noisy) -- the busy span of a timed call ends
   * there (run_step). */
  cudaSetDeviceFlags(cudaDeviceScheduleSpin);
  e = cudaFree(0);
  if (e != cudaSuccess) cuda_fail(0, e, "creating the context");
  MARK("ctx");
  int l2 = 0, sms = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, (int)device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, (int)device);
  int persist_max = 0;
  cudaDeviceGetAttribute(&persist_max, cudaDevAttrMaxPersistingL2CacheSize,
                         (int)device);
  if (persist_max > 0) cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  cudaGetLastError();
  s.flush_len = (size_t)(l2 > 0 ? l2 : 0) * 2;
  if (s.flush_len < (64u << 20)) s.flush_len = 64u << 20;
  if (alloc_image(&s.dev, s.map_len, (int)device, NULL)) {
    def |= KF_HARNESS_DEF_GUARD_PAGES;
  } else if ((e = cudaMalloc((void **)&s.dev, s.map_len)) != cudaSuccess) {
    cuda_fail(0, e, "allocating the tensors");
  }
  if ((e = cudaMalloc(&s.flush, s.flush_len)) != cudaSuccess)
    cuda_fail(0, e, "allocating the L2 flush buffer");
  /* The probe's results need a few words, but a small cudaMalloc shares
   * a granule with memory no allocation owns and nothing rewrites: a
   * candidate that found the pointer could keep bytes there from one call
   * to the next (run 1's output for run 2 of the determinism check).  So
   * the scratch is whole granules of its own, between unmapped ranges as
   * the image is, and all of it is scrubbed before every call. */
  size_t sgran = 0;
  s.scratch_len = (1 + KF_HARNESS_MAX_T) * sizeof *s.scratch;
  if (alloc_image((char **)&s.scratch, s.scratch_len, (int)device, &sgran)) {
    s.scratch_len = (s.scratch_len + sgran - 1) / sgran * sgran;
  } else {
    s.scratch_len = SCRATCH_FALLBACK; /* a whole granule of the pool */
    if ((e = cudaMalloc((void **)&s.scratch, s.scratch_len)) != cudaSuccess)
      cuda_fail(0, e, "allocating the probe buffer");
  }
  /* The launch stream: by default the legacy default stream, the one the
   * events are on, so no cross-stream dependency sits between the start
   * event and the first kernel (as when a program times its kernels on
   * one stream); --stream own: a stream of ours (blocking). */
  if (!own_stream) s.stream = 0;
  else if ((e = cudaStreamCreate(&s.stream)) != cudaSuccess)
    cuda_fail(0, e, "creating the stream");
  if ((e = cudaEventCreate(&s.ev0)) != cudaSuccess ||
      (e = cudaEventCreate(&s.ev1)) != cudaSuccess)
    cuda_fail(0, e, "creating events");
  MARK(" alloc");
  s.warm_us = (int)warm_us; /* calibrated at the first timed call: it is
                               GPU work, done under the GPU lock */
  if (s.cupti) {
    /* CUPTI's ids of the given stream and of this context: from a memset
     * on it, traced like any activity (this also has CUPTI start whatever
     * it starts now, before the sandbox closes) */
    if ((e = cudaMemsetAsync(s.flush, 0, 4096, s.stream)) != cudaSuccess ||
        (e = cudaDeviceSynchronize()) != cudaSuccess)
      cuda_fail(0, e, "a memset for CUPTI");
    s.stream_id = kf_cupti_stream_of_last();
    if ((e = cudaMemsetAsync(s.flush, 0, 4096, s.stream)) != cudaSuccess ||
        (e = cudaDeviceSynchronize()) != cudaSuccess)
      cuda_fail(0, e, "a memset for CUPTI");
    s.ctx_id = kf_cupti_context_of_last();
    kf_cupti_scope(false); /* on only inside calls from now on */
    def |= KF_HARNESS_DEF_CUPTI;
  }
  MARK(" cupti");
  bool pinned = pin && cudaHostRegister(s.base, s.map_len,
                                        cudaHostRegisterDefault) == cudaSuccess;
  if (!pinned) cudaGetLastError(); /* pageable copies then; slower */
  MARK(pinned ? " pin" : " nopin");
  /* a probe now, so the trusted kernels are loaded before the sandbox */
  {
    unsigned long long v = 0;
    if (kf_cuda_digest((const unsigned char *)s.dev, 8, &s.scratch[0]) ||
        kf_cuda_canary((unsigned char *)s.dev, 0, 8, 0) ||
        kf_cuda_gen((unsigned char *)s.dev, 0, 1, 0, 0, 1) ||
        kf_cuda_canary_check((const unsigned char *)s.dev, 0, 8, 0, &s.scratch[0]) ||
        cudaMemcpy(&v, s.scratch, sizeof v, cudaMemcpyDeviceToHost) !=
            cudaSuccess)
      cuda_fail(0, cudaGetLastError(), "loading the harness's kernels");
  }
  /* the shared-memory scrub of every call, set up while the driver may
   * still open what it likes */
  if (cudaDeviceGetAttribute(&s.sms, cudaDevAttrMultiProcessorCount,
                             (int)device) != cudaSuccess ||
      kf_cuda_smem_prepare((int)device, &s.smem_bytes) != 0 ||
      kf_cuda_smem_scrub(s.sms, s.smem_bytes) != 0 ||
      cudaDeviceSynchronize() != cudaSuccess) {
    cudaGetLastError();
    s.smem_bytes = 0;
  }
  /* the local-memory scrub, sized here (the candidate's frames are known
   * from its compile: --lmem-bytes) and run once before any of its code */
  {
    cudaError_t le = (cudaError_t)kf_cuda_lmem_prepare(
        (int)device, (uint32_t)lmem_bytes, &s.lmem_variant, &s.lmem_blocks);
    if (le == cudaSuccess)
      le = (cudaError_t)kf_cuda_lmem_scrub(s.lmem_variant, s.lmem_blocks);
    if (le == cudaSuccess) le = cudaDeviceSynchronize();
    if (le != cudaSuccess)
      setup_fail("the local-memory scrub (a stack frame over 64 KiB?)",
                 (int)le);
  }
  /* the register scrub of every call: the flush buffer is its scratch */
  {
    cudaError_t re = (cudaError_t)kf_cuda_reg_prepare(
        (int)device, (uint64_t)s.flush_len, &s.regs);
    if (re == cudaSuccess)
      re = (cudaError_t)kf_cuda_reg_scrub(s.flush, &s.regs);
    if (re == cudaSuccess) re = cudaDeviceSynchronize();
    if (re != cudaSuccess)
      setup_fail("the register scrub (no cooperative launch, or an SM it "
                 "cannot fill?)", (int)re);
  }
  /* the timing gate: its host words mapped for the device, and the gate
   * sized (one block an SM); its device words sit in the scratch */
  s.gate = relax == 0;
  if (s.gate) {
    void *hp = NULL, *dp = NULL;
    cudaError_t ge = cudaHostAlloc(&hp, 4096, cudaHostAllocMapped);
    if (ge == cudaSuccess) ge = cudaHostGetDevicePointer(&dp, hp, 0);
    if (ge == cudaSuccess)
      ge = (cudaError_t)kf_cuda_gate_prepare((int)device, &s.gate_blocks,
                                             &s.gate_smem);
    if (ge == cudaSuccess && s.scratch_len < GATE_OFF + sizeof(kf_cuda_gate_dev))
      ge = cudaErrorInvalidValue;
    if (ge != cudaSuccess)
      setup_fail("the timing gate (mapped host memory, or an SM that holds "
                 "two of its blocks?)", (int)ge);
    memset(hp, 0, 4096);
    s.gate_host = (volatile unsigned *)hp;
    s.gate_host_dev = (unsigned *)dp;
  }
  /* the idle gate's idea of an idle GPU, before any candidate code runs */
  s.idle = idle && relax == 0;
  if (s.idle) {
    if (s.scratch_len < GATE_OFF) setup_fail("the idle gate's scratch", 0);
    idle_calibrate(&s, 0);
  }
  /* nvcc's host code needs these; the jail has no library to load */
  dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
  dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL);
  dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL);
  MARK(" kernels");
  int maxfd = highest_fd();

  /* 4. jail */
  if (relax & RELAX_CHROOT) {
    if (chdir(jail) != 0) setup_fail("chdir jail", errno);
  } else if (chroot(jail) == 0) {
    if (chdir("/") != 0) setup_fail("chdir / in jail", errno);
    def |= KF_HARNESS_DEF_CHROOT;
  } else if (chdir(jail) != 0) {
    setup_fail("chdir jail", errno);
  }

  /* 5. limits */
  int bad = 0;
  bad |= kf_sandbox_set_limit(RLIMIT_CPU, cpu_s, cpu_s + 1);
  bad |= kf_sandbox_set_limit(RLIMIT_FSIZE, 0, 0);
  bad |= kf_sandbox_set_limit(RLIMIT_NOFILE, (rlim_t)maxfd + 16, (rlim_t)maxfd + 16);
  bad |= kf_sandbox_set_limit(RLIMIT_CORE, 0, 0);
  if (bad) setup_fail("setrlimit", errno);
  def |= KF_HARNESS_DEF_RLIMITS;

  /* 6. unprivileged */
  if (root && !(relax & RELAX_UID)) {
    if (setgroups(0, NULL) != 0) setup_fail("setgroups", errno);
    if (setgid(NOBODY) != 0) setup_fail("setgid", errno);
    if (setuid(NOBODY) != 0) setup_fail("setuid", errno);
    if (setuid(0) == 0) setup_fail("could regain root", 0);
    def |= KF_HARNESS_DEF_SETUID;
    if (kf_sandbox_set_limit(RLIMIT_NPROC, 0, 0) == 0) def |= KF_HARNESS_DEF_NPROC0;
  }

  /* 7. no way back up */
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
  memset(&g_sys_reply, 0, sizeof g_sys_reply);
  g_sys_reply.magic = KF_CUDA_MAGIC;
  g_sys_reply.kind = KF_HARNESS_R_VIOLATION;
  pid_t self = getpid();
  if (seccomp_on) {
    if (install_filter(true, self) != 0) setup_fail("seccomp (load)", errno);
    def |= KF_HARNESS_DEF_SECCOMP_LOAD;
  }

  /* 8. load: the registration constructor runs here; what this process
   * says from here on, the candidate's code may have said (backend.c:
   * no setup failure after LOADING is the harness's) */
  send_reply(KF_HARNESS_R_LOADING, 0, 0, 0, 0, 0, NULL);
  char path[256];
  snprintf(path, sizeof path, "%s%s", (def & KF_HARNESS_DEF_CHROOT) ? "/" : "./",
           so);
  dlerror();
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *m = dlerror();
    send_reply(KF_HARNESS_R_LOADFAIL, 0, 0, 0, 0, 0, m ? m : "dlopen failed");
    _exit(KF_HARNESS_RUNNER_EXIT_SETUP);
  }
  kf_launch_fn fn = (kf_launch_fn)dlsym(h, "kf_launch");
  if (!fn) {
    send_reply(KF_HARNESS_R_LOADFAIL, 0, 0, 0, 0, 0,
               "the shared object defines no kf_launch");
    _exit(KF_HARNESS_RUNNER_EXIT_SETUP);
  }
  if ((e = cudaDeviceSynchronize()) != cudaSuccess)
    cuda_fail(0, e, "after loading");
  MARK(" load");
  wfind wf = {.fn = (uintptr_t)fn, .s = &s, .err = 0};
  if (!dl_iterate_phdr(find_writable, &wf))
    setup_fail("kf_launch is in no loaded object", 0);
  if (wf.err) setup_fail("the candidate's writable segments", wf.err);

  /* 9. filter for running */
  if (seccomp_on) {
    if (install_filter(false, self) != 0) setup_fail("seccomp (run)", errno);
    def |= KF_HARNESS_DEF_SECCOMP;
  }
  {
    kf_cuda_reply r;
    memset(&r, 0, sizeof r);
    r.magic = KF_CUDA_MAGIC;
    r.kind = KF_HARNESS_R_READY;
    r.defenses = def;
    r.l2_bytes = (uint64_t)(l2 > 0 ? l2 : 0);
    r.flush_bytes = s.flush_len;
    /* why CUPTI is off when it is, else where the start went (ms) */
    snprintf(r.msg, sizeof r.msg, "%s",
             s.cupti || !cupti_on ? setup_ms : cerr);
    (void)sms;
    ssize_t w;
    do {
      w = write(1, &r, sizeof r);
    } while (w < 0 && errno == EINTR);
  }

  static kf_cuda_cmd cmd;
  uint32_t last_op = 0;
  for (;;) {
    size_t got = 0;
    /* after PREP or GEN the next command follows at once, on the eval's
     * clock of the call: waited for awake (a core woken from a deep idle
     * state adds tens of microseconds of noise), a few ms at most */
    if (last_op == KF_CUDA_OP_PREP || last_op == KF_CUDA_OP_GEN) {
      struct pollfd pf = {.fd = 0, .events = POLLIN};
      uint64_t until = now_ns() + 5000000;
      while (poll(&pf, 1, 0) == 0 && now_ns() < until) {
      }
    }
    while (got < sizeof cmd) {
      ssize_t r = read(0, (char *)&cmd + got, sizeof cmd - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) _exit(got == 0 && r == 0 ? 0 : KF_HARNESS_RUNNER_EXIT_PROTO);
      got += (size_t)r;
    }
    if (cmd.magic != KF_CUDA_MAGIC) _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
    last_op = cmd.op;
    switch (cmd.op) {
    case KF_CUDA_OP_EXIT: _exit(KF_HARNESS_RUNNER_EXIT_OK);
    case KF_CUDA_OP_CANARY: do_canary(&s, &cmd); break;
    case KF_CUDA_OP_GEN: do_gen(&s, &cmd); break;
    case KF_CUDA_OP_DOWNLOAD: do_download(&s, &cmd); break;
    case KF_CUDA_OP_PROBE: do_probe(&s, &cmd); break;
    case KF_CUDA_OP_RUN: do_run(&s, &cmd, fn); break;
    case KF_CUDA_OP_PREP: do_prep(&s, &cmd); break;
    case KF_CUDA_OP_CHECK: do_check(&s, &cmd); break;
    case KF_CUDA_OP_CASE: do_case(&s, &cmd, fn); break;
    default: _exit(KF_HARNESS_RUNNER_EXIT_PROTO);
    }
  }
}
