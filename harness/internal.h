/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/internal.h -- names shared between the eval-side files of the
 * harness (kf_harness__*).  Nothing here is used outside harness/.
 *
 * Conventions: a function that judges the candidate returns 0 (passed) or
 * a kf_outcome with a specific reason in `why`; a failure of the machine
 * itself is KF_OUTCOME_INFRA_ERROR, also with a reason.  Everything here
 * runs in the eval process, single-threaded but for the short-lived
 * threads of parallel.c.
 */
#ifndef KF_HARNESS_INTERNAL_H
#define KF_HARNESS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include "kernelfleet.pb-c.h"
#include "runner_proto.h"
#include "spec.h"

/* ------------------------------------------------------------ proc.c -- */

struct kf_harness_jail;

typedef struct {
  int res;     /* RLIMIT_* */
  rlim_t soft; /* hard is the same */
} kf_harness_limit;

typedef struct {
  const char *path;       /* executable (execv: no PATH search) */
  char *const *argv;
  char *const *envp;      /* NULL: empty environment */
  int fd[4];              /* dup'ed onto 0..3; -1: /dev/null (0..2) or
                             closed (3) */
  const char *cwd;        /* NULL: unchanged */
  bool new_pgrp;          /* setpgid(0, 0) */
  bool nobody;            /* as root: drop to uid/gid 65534 */
  bool isolate;           /* unshare net/ipc/uts when permitted */
  kf_harness_limit limits[8];
  int n_limits;
  struct kf_harness_jail *jail; /* non-NULL: the compiler's mount jail
                                   (compile_jail.c), entered in cwd; its
                                   state and note are set at spawn */
} kf_harness_spawn_opts;

/* fork + exec.  Exec (and setup) failure comes back over a close-on-exec
 * pipe, so a 0 return means the program is running.  Children get
 * PR_SET_PDEATHSIG(SIGKILL).  Returns 0 or KF_ESPAWN with text in err. */
int kf_harness__spawn(const kf_harness_spawn_opts *o, pid_t *pid, char *err,
                      size_t errlen);

/* Runs a program to completion, collecting stdout+stderr (the last
 * outcap-1 bytes, NUL-terminated).  After timeout_ms the child's process
 * group is killed and *timed_out set.  Returns 0 (status valid) or
 * KF_ESPAWN. */
int kf_harness__run(const kf_harness_spawn_opts *o, int timeout_ms,
                    char *out, size_t outcap, int *status, bool *timed_out,
                    char *err, size_t errlen);

/* Appends src[0..k) to out, which holds *n bytes of at most cap - 1: when
 * it overflows the oldest bytes go, so out keeps the tail (where a tool's
 * errors are).  Does not terminate out. */
void kf_harness__tail_append(char *out, size_t cap, size_t *n,
                             const char *src, size_t k);

/* waitpid with a deadline; SIGKILLs pid (and its group when group) when
 * it passes.  Returns the status. */
int kf_harness__reap(pid_t pid, int timeout_ms, bool group);

/* "SIGSEGV" etc.; never NULL. */
const char *kf_harness__signame(int sig);

/* Finds kf-harness-runner beside /proc/self/exe (or returns
 * /proc/self/exe itself, whose "runner" mode is the same code). */
void kf_harness__runner_exe(char *out, size_t outlen);

/* --------------------------------------------------------- compile.c -- */

typedef struct {
  const char *name;  /* [A-Z_][A-Z0-9_]* */
  const char *value; /* [-A-Za-z0-9_.]+ */
} kf_harness_knob;

/* Writes text to path (a new file, no link followed) readable by the
 * compiler's uid; 0 or KF_OUTCOME_INFRA_ERROR with why. */
int kf_harness__write_source(const char *path, const char *text, char *why,
                             size_t whylen);

/* why = prefix + the tail of a tool's output that fits, cut at a line start
 * ("...\n" marks the cut), trailing blanks dropped. */
void kf_harness__tail_reason(const char *out, char *why, size_t whylen,
                             const char *prefix);

/* 0 when name and value are acceptable; else KF_OUTCOME_SPEC_ERROR. */
int kf_harness__check_knob(const char *name, const char *value, char *why,
                           size_t whylen);

/* Writes dir/<base>.c (and dir/kf_candidate.h, embedded at build time),
 * compiles it to dir/<base>.so as uid nobody (when root) in its own
 * process group.  0, COMPILE_ERROR (with the compiler output's tail),
 * COMPILE_TIMEOUT or INFRA_ERROR. */
/* On success `why` says which defenses applied (kf_harness__jail_defenses). */
int kf_harness__compile(const char *dir, const char *base, const char *src,
                        const kf_harness_knob *knobs, int n_knobs,
                        int timeout_ms, char *why, size_t whylen);

extern const char kf_harness__candidate_h[]; /* embedded kf_candidate.h */

/* The compile stage's text check of a source (compile.c's top comment):
 * no #include of an absolute path, of one with "..", or of a macro; no
 * .incbin/.include.  `file` names the source in the reason.  0,
 * COMPILE_ERROR or INFRA_ERROR (out of memory) with why. */
int kf_harness__check_source(const char *src, const char *file, char *why,
                             size_t whylen);

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

/* ----------------------------------------------------------- inputs.c -- */

typedef struct {
  uint64_t s[4];
} kf_harness_rng;

/* xoshiro256** seeded through splitmix64 from (seed, a, b, c): one stream
 * per (seed, case, distribution, tensor). */
void kf_harness__rng_seed(kf_harness_rng *r, uint64_t seed, uint64_t a,
                          uint64_t b, uint64_t c);
uint64_t kf_harness__rng_next(kf_harness_rng *r);

/* Fills n elements of dtype dt from dist; `range` bounds INDEX. */
void kf_harness__fill(void *dst, int dt, int64_t n, int dist, int64_t range,
                      kf_harness_rng *r);
/* Element i as a double (ints exactly up to 2^53). */
double kf_harness__load(const void *buf, int dt, int64_t i);
bool kf_harness__is_float(int dt);

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
  pid_t child;          /* this call's child (FORKED); 0 when none */
  bool armed;           /* the child said READY and has had no command */
  bool replied;         /* the child said DONE; its EXITED is due */
  clockid_t cpuclock;   /* the child's CPU-time clock */
  bool cpuclock_ok;
  uint64_t cpu_at_reply;/* ns; the child's CPU time when it replied */
  bool dead;            /* exited or killed; status below */
  int status;
} kf_harness_runner;

/* Creates the memfd (map_len bytes, sealed against shrinking), spawns the
 * runner in jail_dir loading so_name, waits for READY.  0, or the outcome
 * of a failed start (LINK_REJECTED for a .so that cannot load,
 * SANDBOX_VIOLATION for a constructor that tried, RESOURCE_LIMIT, ...). */
int kf_harness__runner_start(kf_harness_runner *r, const char *who,
                             const char *exe, const char *jail_dir,
                             const char *so_name, size_t map_len,
                             int cpu_s, int timeout_ms, char *why,
                             size_t whylen);

/* One kf_launch.  *ns is the eval process's CLOCK_MONOTONIC time from
 * just before the command is written to just after the reply is read.
 * 0, or CRASH / TIMEOUT / SANDBOX_VIOLATION / RESOURCE_LIMIT /
 * INFRA_ERROR with the reason; once not 0 the runner is dead. */
int kf_harness__runner_call(kf_harness_runner *r, kf_harness_cmd *c,
                            int timeout_ms, uint64_t *ns, char *why,
                            size_t whylen);

/* Has the runner's next child ready (loaded, waiting for a command), so
 * that nothing of this runner competes with a timed call of the other.
 * 0, or the outcome of the last call's child or of the load (then the
 * runner is dead).  Idempotent. */
int kf_harness__runner_arm(kf_harness_runner *r, int timeout_ms, char *why,
                           size_t whylen);

/* Waits for the last call's child to end and checks it did not compute
 * after its reply (work deferred past the end of timing). */
int kf_harness__runner_idle_check(kf_harness_runner *r, char *why,
                                  size_t whylen);

/* Sends EXIT, reaps (kills after a short grace), unmaps.  NULL-safe,
 * idempotent. */
void kf_harness__runner_stop(kf_harness_runner *r);

/* "rlimits netns ... seccomp" */
void kf_harness__defenses_str(uint32_t def, char *out, size_t outlen);

/* "socket", "openat"... or "?" */
const char *kf_harness__sysname(long nr);

/* ----------------------------------------------------- eval_common.c -- */
/* What eval.c (CPU) and eval_cuda.c (CUDA) share.  Reasons go into the
 * caller's why buffer (whylen bytes, KF_HARNESS_WHY in both callers). */

#define KF_HARNESS_MAX_STAGES 8
#define KF_HARNESS_WHY 2048    /* bytes of a reason */
#define KF_HARNESS_TIME_SETS 3 /* input sets (output slots) of the time stage */

/* The StageResults of one evaluation; EvalResult.stages points at ptrs. */
typedef struct {
  Kernelfleet__StageResult stages[KF_HARNESS_MAX_STAGES];
  Kernelfleet__StageResult *ptrs[KF_HARNESS_MAX_STAGES];
  char reasons[KF_HARNESS_MAX_STAGES][KF_HARNESS_WHY];
  char names[KF_HARNESS_MAX_STAGES][16];
  uint64_t t0; /* us; when the current stage began */
} kf_harness_stages;

/* Appends a stage named name to res (aborts past KF_HARNESS_MAX_STAGES:
 * the list of stages is fixed), starts its clock, empties why.  Returns
 * its index. */
int kf_harness__stage_begin(kf_harness_stages *st,
                            Kernelfleet__EvalResult *res, char *why,
                            const char *name);

/* Ends the current stage with outcome (0 = passed; otherwise also res's
 * outcome) and reason (NULL: none), logs it.  Returns outcome. */
int kf_harness__stage_end(kf_harness_stages *st, Kernelfleet__EvalResult *res,
                          int outcome, const char *reason);

/* An evaluation's private directory: work/build (the compiler's, owned by
 * uid nobody as root), work/jail-c and work/jail-r (the runners'). */
typedef struct {
  char work[1024], build[1100], jail_c[1100], jail_r[1100];
  bool have_work; /* work exists and must be removed */
} kf_harness_workdir;

/* Creates it below base (NULL or "": $TMPDIR, else /tmp).  0 or
 * INFRA_ERROR with why. */
int kf_harness__workdir_make(kf_harness_workdir *w, const char *base,
                             char *why, size_t whylen);
/* Removes it and everything in it, when it was made. */
void kf_harness__workdir_remove(kf_harness_workdir *w);

/* Reads build/<base>.so (at most max bytes) into *buf (the caller frees
 * it) and writes it into jail, owned by us and read-only, so the
 * compiling uid cannot change what is loaded.  0, LINK_REJECTED (too
 * large) or INFRA_ERROR with why. */
int kf_harness__take_so(const char *build, const char *base, const char *jail,
                        size_t max, unsigned char **buf, size_t *len,
                        char *why, size_t whylen);

/* Where each tensor of one size lies in a runner's memfd: every buffer
 * between guard bytes of canary, page-aligned. */
typedef struct {
  kf_size size;
  int sets, slots; /* input sets, output slots (<= KF_HARNESS_TIME_SETS) */
  int n_in, n_out;
  int in_dt[KF_HARNESS_MAX_T], out_dt[KF_HARNESS_MAX_T];
  int in_ndim[KF_HARNESS_MAX_T], out_ndim[KF_HARNESS_MAX_T];
  int64_t in_dims[KF_HARNESS_MAX_T][4], out_dims[KF_HARNESS_MAX_T][4];
  int64_t in_n[KF_HARNESS_MAX_T], out_n[KF_HARNESS_MAX_T]; /* elements */
  size_t in_b[KF_HARNESS_MAX_T], out_b[KF_HARNESS_MAX_T];  /* bytes */
  uint64_t in_off[KF_HARNESS_TIME_SETS][KF_HARNESS_MAX_T]; /* bytes */
  uint64_t out_off[KF_HARNESS_TIME_SETS][KF_HARNESS_MAX_T];
  uint64_t ws_off;
  size_t ws_b;
  size_t total; /* bytes of the whole layout */
} kf_harness_layout;

/* The position-dependent canary over map[from, to). */
void kf_harness__canary(unsigned char *map, size_t from, size_t to);
/* First byte in [from, to) that is not canary, or `to`. */
size_t kf_harness__canary_bad(const unsigned char *map, size_t from,
                              size_t to);

/* Lays out s's tensors at size: `sets` input sets, `slots` output slots,
 * then the workspace, each with guard bytes before and after.  0 or
 * SPEC_ERROR with why. */
int kf_harness__make_layout(const kf_spec *s, const kf_size *size, int sets,
                            int slots, size_t guard, kf_harness_layout *L,
                            char *why, size_t whylen);

/* The tensor descriptors of a call on input set `set` and output slot
 * `slot` (L->n_in and L->n_out entries). */
void kf_harness__fill_tdescs(const kf_harness_layout *L, int set, int slot,
                             kf_harness_tdesc *in, kf_harness_tdesc *out);

/* The distribution input t uses in case `dist`. */
int kf_harness__input_dist(const kf_spec_tensor *t, int dist);
/* The bound of distribution d (INDEX: t's range at size; else 0).  0 or
 * SPEC_ERROR with why. */
int kf_harness__input_range(const kf_spec *s, const kf_spec_tensor *t, int d,
                            const kf_size *size, int64_t *range, char *why,
                            size_t whylen);
/* The distribution cases: every distribution some input lists, in order
 * (at least NORMAL).  dists holds KF_DIST_COUNT. */
void kf_harness__collect_dists(const kf_spec *s, int *dists, int *n_dists);

/* The candidate may not change its inputs: set's inputs in cand_map
 * equal ref_map's.  0 or OUT_OF_BOUNDS with why. */
int kf_harness__check_inputs(const kf_spec *s, const kf_harness_layout *L,
                             const unsigned char *cand_map,
                             const unsigned char *ref_map, int set,
                             const char *ctx, char *why, size_t whylen);
/* Output slots 0 and 1 of map, bit for bit.  0 or NONDETERMINISTIC with
 * why. */
int kf_harness__check_same_outputs(const kf_spec *s,
                                   const kf_harness_layout *L,
                                   const unsigned char *map, const char *ctx,
                                   char *why, size_t whylen);

/* Median of v[from, from + n); tmp (n entries) is left sorted. */
double kf_harness__median(const uint64_t *v, int from, int n, uint64_t *tmp);
/* Median and (p90 - p10) / median of v[0, n). */
void kf_harness__stats(const uint64_t *v, int n, uint64_t *tmp, double *med,
                       double *spread);
/* After m timed repetitions in elapsed_ms: true when both medians (tc
 * candidate, tr reference) are within 1% of their second half's and
 * m >= min_reps, or the budget is spent; before min_reps, when 3 calls
 * took 20 budgets. */
bool kf_harness__reps_enough(const uint64_t *tc, const uint64_t *tr, int m,
                             int min_reps, uint64_t elapsed_ms,
                             uint64_t budget_ms, uint64_t *tmp);
/* res's medians, spreads and repetitions from n timings each, and its
 * achieved rates from the spec's bytes and flops at sz (*bytes, *flops;
 * 0 when the spec has none). */
void kf_harness__time_results(const kf_spec *s, const kf_size *sz,
                              const uint64_t *tc, const uint64_t *tr, int n,
                              uint64_t *tmp, Kernelfleet__EvalResult *res,
                              int64_t *bytes, int64_t *flops);

/* Writes r, length-prefixed (4 bytes little-endian), to fd.  0, KF_ENOMEM
 * or KF_EIO (logged). */
int kf_harness__write_result(const Kernelfleet__EvalResult *r, int fd);

/* -------------------------------------------------------- identity.c -- */

/* sha256 (hex, 64 chars) over the harness programs; cached.  0 or -1
 * (errno) when one cannot be read. */
int kf_harness__build_id(char *out, size_t outlen);
/* The compiler's --version line: nvcc's "release" line when cuda, else
 * cc's first line; "" when it does not run. */
void kf_harness__toolchain(bool cuda, char *out, size_t outlen);
/* `kf-harness identity`: argv from "identity". */
int kf_harness__identity_cmd(int argc, char **argv);

/* -------------------------------------------------------- ceilings.c -- */

double kf_harness__measure_copy_gbps(void);
double kf_harness__measure_gflops(void);
/* Largest CPU cache of `cpu` from sysfs, 0 when unknown. */
size_t kf_harness__llc_bytes(int cpu);

/* -------------------------------------------------------- parallel.c -- */

#define KF_HARNESS_PAR_MAX 16 /* parts at most */
/* One part of a data-parallel loop: part in [0, parts). */
typedef void (*kf_harness_part_fn)(void *arg, int part, int parts);
/* How many parts the host work of one evaluation uses: half the cores
 * (compiles of the next candidates get the rest), 1..16. */
int kf_harness__par_parts(void);
/* Runs fn for every part, on threads that are joined before it returns
 * (parts without a thread run on the caller's); the number of threads
 * used, the caller's included. */
int kf_harness__par_run(int parts, kf_harness_part_fn fn, void *arg);
/* [lo, hi) of part out of n elements, boundaries multiples of align. */
void kf_harness__par_range(int64_t n, int part, int parts, int64_t align,
                           int64_t *lo, int64_t *hi);
/* memcpy, split over threads when n is large. */
void kf_harness__par_memcpy(void *dst, const void *src, size_t n);

/* ---------------------------------------------------- compile_jail.c -- */

#define KF_HARNESS_JAIL_MAX_BINDS 4

enum {
  KF_HARNESS_JAIL_UNTRIED = 0, /* not spawned (yet) */
  KF_HARNESS_JAIL_ON,          /* the compiler saw only the jail */
  KF_HARNESS_JAIL_OFF,         /* not root, or no mount namespace: note */
};

/* The compiler's mount jail: the toolchain (read-only), /dev/null, a
 * private /tmp and the build directory (the spawn's cwd), nothing else. */
typedef struct kf_harness_jail {
  char binds[KF_HARNESS_JAIL_MAX_BINDS][1024]; /* toolchain directories
                                                  outside /usr, bound
                                                  read-only at their path */
  int n_binds;
  int state;      /* KF_HARNESS_JAIL_*, set by kf_harness__spawn */
  char note[160]; /* OFF: why ("unshare(CLONE_NEWNS): Operation not
                     permitted") */
  bool no_netns;  /* the spawn's isolate unshare failed */
} kf_harness_jail;

void kf_harness__jail_init(kf_harness_jail *j);

/* Adds what the jail needs to run exe (an absolute path): its install
 * prefix (PREFIX of PREFIX/bin/exe), and that of its real path, unless
 * /usr (always there) holds them.  0 or INFRA_ERROR with why. */
int kf_harness__jail_add_tool(kf_harness_jail *j, const char *exe, char *why,
                              size_t whylen);

/* In the spawned child only (between fork and exec, as root, cwd the
 * build directory): enters the jail.  0 when in it; 1 when it could not
 * begin (not root, no mount namespace: nothing changed, errno and *step
 * say why); -1 when it failed half-built (the child must not exec). */
int kf_harness__jail_enter(const kf_harness_jail *j, int *step);

/* "bind /usr: Permission denied", "not root"... for a step of jail_enter
 * that failed with errno err. */
void kf_harness__jail_why(const kf_harness_jail *j, int step, int err,
                          char *out, size_t outlen);

/* "defenses: mount-jail uid-nobody netns rlimits watchdog", or the same
 * without mount-jail and with "; no mount jail (why)...". */
void kf_harness__jail_defenses(const kf_harness_jail *j, char *out,
                               size_t outlen);

#endif
