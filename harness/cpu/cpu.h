/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cpu/cpu.h -- names the CPU backend's files share: the C
 * compiler (compile.c), the link check of a C candidate (elfcheck.c), the
 * eval side of a CPU runner (runner_client.c) and this CPU's ceilings
 * (ceilings.c).  The backend's operations, as the pipeline sees them, are
 * in backend.c.
 */
#ifndef KF_HARNESS_CPU_H
#define KF_HARNESS_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "elf_util.h"
#include "internal.h"
#include "runner_proto.h"

/* --------------------------------------------------------- compile.c -- */

/* Writes dir/<base>.c (and dir/kf_candidate.h, embedded at build time),
 * compiles it to dir/<base>.so as uid nobody (when root) in its own
 * process group, in the compiler's mount jail.  0, COMPILE_ERROR (with the
 * compiler output's tail), COMPILE_TIMEOUT or INFRA_ERROR.  On success
 * `why` says which defenses applied (kf_harness__jail_defenses). */
int kf_harness__compile(const char *dir, const char *base, const char *src,
                        const kf_harness_knob *knobs, int n_knobs,
                        int timeout_ms, char *why, size_t whylen);

/* --------------------------------------------------------- elfcheck.c -- */

#define KF_HARNESS_ELF_MAX_STATE 16

typedef struct {
  uint64_t init_size, fini_size;  /* .init / .fini section bytes */
  uint64_t init_array, fini_array; /* DT_INIT_ARRAYSZ / FINI (entries) */
  bool preinit;                   /* DT_PREINIT_ARRAY present */
  uint64_t state_bytes;           /* bytes of writable sections that hold
                                     program state (.data, .bss, ...; not
                                     the GOT, .dynamic or init arrays) */
  char state_syms[KF_HARNESS_ELF_MAX_STATE][48]; /* symbols defined there
                                                    (the toolchain's, in a
                                                    baseline) */
  int n_state_syms;
  kf_harness_elf_undefs undefs; /* a baseline's: names its toolchain code
                                   calls (elf_util.h) */
} kf_harness_elf_info;

/* Checks a candidate shared object: undefined dynamic symbols on the
 * allow-list, DT_NEEDED libc/libm only, no constructors or destructors
 * beyond the toolchain's one each, .init/.fini the size of `baseline`'s
 * (an empty kernel built by the same compiler; NULL skips the comparisons),
 * no IFUNC, and no writable static state: no symbol in .data/.bss (or any
 * other writable section that is not the toolchain's) that the baseline
 * does not define, and no more such bytes than the baseline has.
 * 0 or LINK_REJECTED naming the offending symbol or section. */
int kf_harness__elf_check(const unsigned char *buf, size_t len,
                          const kf_harness_elf_info *baseline,
                          kf_harness_elf_info *info, char *why, size_t whylen);

/* ---------------------------------------------------- runner_client.c -- */

typedef struct {
  const char *who;      /* "candidate" / "reference" */
  pid_t pid;            /* the zygote; 0 when not running */
  int cmd_fd, reply_fd; /* -1 when closed */
  int status_fd;        /* the zygote's FORKED/EXITED; -1 when closed */
  int memfd;
  unsigned char *map;   /* the eval side's mapping of the memfd */
  size_t map_len;
  uint32_t seq;
  uint32_t defenses;    /* KF_HARNESS_DEF_* of the zygote and a child */
  pid_t child;          /* the armed child; 0 when none */
  kf_harness_cmd plan;  /* its buffers (ARM) */
  char names[KF_HARNESS_MAX_MAPS][48]; /* "input 'x'", per plan map, for
                                          fault reports */
  clockid_t cpuclock;   /* the child's CPU-time clock */
  bool cpuclock_ok;
  uint64_t exit_cpu_ns; /* the last child's CPU time, from EXITED */
  bool dead;            /* exited or killed; status below */
  int status;
  bool loaded;          /* the armed child said LOADING: its replies and
                           its exit status may be the side's code's */
} kf_harness_runner;

/* Creates the memfd (map_len bytes, sealed against resizing), spawns the
 * runner in jail_dir loading so_name, waits for the zygote's READY, and
 * has a first child load the candidate (without buffers), so that load
 * failures show up here.  0, or the outcome of a failed start
 * (LINK_REJECTED for a .so that cannot load, SANDBOX_VIOLATION for a
 * constructor that tried, RESOURCE_LIMIT, ...). */
int kf_harness__runner_start(kf_harness_runner *r, const char *who,
                             const char *exe, const char *jail_dir,
                             const char *so_name, size_t map_len, int cpu_s,
                             int timeout_ms, char *why, size_t whylen);

/* Has a child ready for the buffers of plan (an ARM command: maps[] and
 * n_maps): the last child (if any) reaped, a fresh one forked, mapped,
 * loaded.  Idempotent for the same plan.  0, or the outcome of a failed
 * load (then the runner is dead). */
int kf_harness__runner_arm(kf_harness_runner *r, const kf_harness_cmd *plan,
                           int timeout_ms, char *why, size_t whylen);

/* One kf_launch on an armed child (armed here with c's buffers if not).
 * *ns: the time charged, max(this process's CLOCK_MONOTONIC from just
 * before RUN to just after DONE, the CPU time the child used meanwhile).
 * The child is killed after DONE and reaped before this returns.  0, or
 * CRASH / OUT_OF_BOUNDS / TIMEOUT / SANDBOX_VIOLATION / RESOURCE_LIMIT /
 * INFRA_ERROR with the reason; once not 0 the runner is dead. */
int kf_harness__runner_call(kf_harness_runner *r, kf_harness_cmd *c,
                            int timeout_ms, uint64_t *ns, char *why,
                            size_t whylen);

/* Sends EXIT, reaps (kills after a short grace), unmaps.  NULL-safe,
 * idempotent. */
void kf_harness__runner_stop(kf_harness_runner *r);

/* -------------------------------------------------------- ceilings.c -- */

/* Streaming rates of one core, GB/s, best of a few runs over buffers far
 * larger than any cache: memcpy (bytes read + written), a read-only scan,
 * a write-only fill. */
double kf_harness__measure_copy_gbps(void);
double kf_harness__measure_read_gbps(void);
double kf_harness__measure_write_gbps(void);
/* The same three rates over a buffer of `bytes` (at most
 * KF_HARNESS_FP_MAX: beyond it the rates above are the footprint's), each
 * sample taken right after flush(arg) -- the caches as a timed call finds
 * them -- best of `samples`.  Returns the best of the three, GB/s (0: no
 * memory); *rates (may be NULL) gets each and the bytes moved. */
#define KF_HARNESS_FP_MAX ((size_t)256 << 20)
typedef struct {
  double copy, read, write;
  size_t bytes;
} kf_harness_fp_rates;
double kf_harness__footprint_gbps(size_t bytes, void (*flush)(void *),
                                  void *arg, int samples,
                                  kf_harness_fp_rates *rates);
/* FMA rate of one core, GFLOP/s. */
double kf_harness__measure_gflops(void);
/* Largest CPU cache of `cpu` from sysfs, 0 when unknown. */
size_t kf_harness__llc_bytes(int cpu);

#endif
