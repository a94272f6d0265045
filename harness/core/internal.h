/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/internal.h -- names the harness's files share
 * (kf_harness__*): processes, the compiler's jail, stage bookkeeping,
 * buffer layouts, input draws, comparisons and timing statistics.
 * Nothing here is used outside harness/.  The seam between the pipeline
 * and the backends is core/backend.h.
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
#include "spec.h"

#define KF_HARNESS_MAX_T 8 /* tensors per side (KF_SPEC_MAX_TENSORS) */
#define KF_HARNESS_MAX_P 8 /* size params (KF_SPEC_MAX_PARAMS) */
#define KF_HARNESS_WHY 2048 /* bytes of a reason */
#define KF_HARNESS_MAX_KNOBS 32

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

/* The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z'...); 0 when the
 * process is gone, '?' when /proc could not be read (descriptors). */
char kf_harness__proc_state(pid_t pid);

/* SIGSTOPs pid (its group when group) and waits until /proc says it
 * stopped: 0; -1 when it is gone (or cannot be signalled); 1 when it did
 * not stop within timeout_ms. */
int kf_harness__stop_confirmed(pid_t pid, bool group, int timeout_ms);

/* in as display-safe UTF-8 (common/text.h, newlines kept) into out (cap
 * bytes); out may be in, of at most KF_HARNESS_WHY bytes. */
void kf_harness__clean_why(char *out, const char *in, size_t cap);

/* "SIGSEGV" etc.; never NULL. */
const char *kf_harness__signame(int sig);

/* "socket", "openat"... or "?" */
const char *kf_harness__sysname(long nr);

/* Finds kf-harness-runner beside /proc/self/exe (or returns
 * /proc/self/exe itself, whose "runner" mode is the same code). */
void kf_harness__runner_exe(char *out, size_t outlen);
/* kf-harness-cuda ($KF_HARNESS_CUDA, else beside this program); false when
 * it is not there (a build without CUDA). */
bool kf_harness__cuda_exe(char *out, size_t outlen);

/* The best of copy, read and write GB/s that GPU `device` reaches over
 * `bytes` with the caches as a timed call finds them, measured now by
 * `kf-harness-cuda footprint` (a process that loads no candidate);
 * 0 when it cannot (logged).  gpu_footprint.c. */
double kf_harness__gpu_footprint_gbps(int device, int warm_us, size_t bytes);

/* "rlimits netns ... seccomp" */
void kf_harness__defenses_str(uint32_t def, char *out, size_t outlen);

/* ------------------------------------------------------ compile helpers */

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

/* The compile stage's text check of a source: no #include of an absolute
 * path, of one with "..", or of a macro; no .incbin/.include.  `file`
 * names the source in the reason.  0, COMPILE_ERROR or INFRA_ERROR (out of
 * memory) with why. */
int kf_harness__check_source(const char *src, const char *file, char *why,
                             size_t whylen);

extern const char kf_harness__candidate_h[]; /* embedded kf_candidate.h */

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

/* ---------------------------------------------------------- stages.c -- */

#define KF_HARNESS_MAX_STAGES 8

/* The StageResults of one evaluation; EvalResult.stages points at ptrs. */
typedef struct {
  Kernelfleet__StageResult stages[KF_HARNESS_MAX_STAGES];
  Kernelfleet__StageResult *ptrs[KF_HARNESS_MAX_STAGES];
  char reasons[KF_HARNESS_MAX_STAGES][KF_HARNESS_WHY];
  char names[KF_HARNESS_MAX_STAGES][16];
  size_t n;
  uint64_t t0; /* us; when the current stage began */
} kf_harness_stages;

/* Appends a stage named name (aborts past KF_HARNESS_MAX_STAGES: the list
 * of stages is fixed), starts its clock.  Returns its index. */
int kf_harness__stage_begin(kf_harness_stages *st, const char *name);

/* Ends the current stage with outcome (0 = passed) and reason (NULL:
 * none), logs it.  Returns outcome. */
int kf_harness__stage_end(kf_harness_stages *st, int outcome,
                          const char *reason);

/* An evaluation's private directory: work/build (the compilers', owned by
 * uid nobody as root) and one jail directory per runner, made on demand
 * (kf_harness__workdir_jail). */
typedef struct {
  char work[1024], build[1100];
  bool have_work; /* work exists and must be removed */
} kf_harness_workdir;

/* Creates it below base (NULL or "": $TMPDIR, else /tmp).  0 or
 * INFRA_ERROR with why. */
int kf_harness__workdir_make(kf_harness_workdir *w, const char *base,
                             char *why, size_t whylen);
/* work/jail-<name>, created 0755: the directory a runner is chrooted to.
 * 0 or INFRA_ERROR with why. */
int kf_harness__workdir_jail(const kf_harness_workdir *w, const char *name,
                             char *out, size_t outlen, char *why,
                             size_t whylen);
/* Removes it and everything in it, when it was made. */
void kf_harness__workdir_remove(kf_harness_workdir *w);

/* Reads build/<base>.so (at most max bytes) into *buf (the caller frees
 * it) and writes it into jail, owned by us and read-only, so the
 * compiling uid cannot change what is loaded.  0, LINK_REJECTED (too
 * large) or INFRA_ERROR with why. */
int kf_harness__take_so(const char *build, const char *base, const char *jail,
                        const char *name, size_t max, unsigned char **buf,
                        size_t *len, char *why, size_t whylen);

/* Writes a protobuf message, length-prefixed (4 bytes little-endian), to
 * fd.  0, KF_ENOMEM or KF_EIO (logged). */
int kf_harness__write_msg(const ProtobufCMessage *m, int fd);
/* Reads one length-prefixed message of at most max bytes: *buf (malloc'd,
 * the caller frees it) and *len.  0 or -1 (EOF, too long, read error). */
int kf_harness__read_msg(int fd, size_t max, unsigned char **buf,
                         size_t *len);

/* Host memory this machine has available now (MemAvailable), bytes; 0
 * when unknown. */
uint64_t kf_harness__mem_available(void);

/* ---------------------------------------------------------- layout.c -- */

/* Where each tensor of one size lies in a side's image: every buffer
 * between guard bytes of canary, page-aligned. */
typedef struct {
  kf_size size;
  int n_in, n_out;
  int in_dt[KF_HARNESS_MAX_T], out_dt[KF_HARNESS_MAX_T];
  int in_ndim[KF_HARNESS_MAX_T], out_ndim[KF_HARNESS_MAX_T];
  int64_t in_dims[KF_HARNESS_MAX_T][4], out_dims[KF_HARNESS_MAX_T][4];
  int64_t in_n[KF_HARNESS_MAX_T], out_n[KF_HARNESS_MAX_T]; /* elements */
  size_t in_b[KF_HARNESS_MAX_T], out_b[KF_HARNESS_MAX_T];  /* bytes */
  uint64_t in_off[KF_HARNESS_MAX_T];  /* bytes */
  uint64_t out_off[KF_HARNESS_MAX_T];
  uint64_t ws_off;
  size_t ws_b;
  size_t guard;  /* canary bytes before and after each buffer */
  size_t total;  /* bytes of the whole layout */
  uint8_t canary_salt; /* xor'ed into every canary byte: 0, or another
                          value for the reference's self-check, so that a
                          call reading past a buffer reads other bytes */
} kf_harness_layout;

/* A byte range of an image. */
typedef struct {
  uint64_t off, len;
} kf_harness_region;

/* The position-dependent canary, xor salt, over map[from, to). */
void kf_harness__canary(unsigned char *map, size_t from, size_t to,
                        uint8_t salt);
/* First byte in [from, to) that is not that canary, or `to`. */
size_t kf_harness__canary_bad(const unsigned char *map, size_t from,
                              size_t to, uint8_t salt);

/* Lays out s's tensors at size, one input set, one output slot and the
 * workspace, each with `guard` bytes of canary before and after (and up to
 * the next page).  Refuses a layout over max_bytes (0: no limit) before
 * anything is mapped.  0 or SPEC_ERROR with why. */
int kf_harness__make_layout(const kf_spec *s, const kf_size *size,
                            size_t guard, size_t max_bytes,
                            kf_harness_layout *L, char *why, size_t whylen);

/* Bytes of all of the layout's buffers (inputs, outputs, workspace):
 * the memory one call can touch, its footprint. */
size_t kf_harness__footprint(const kf_harness_layout *L);
/* Buffer b of the layout in placement order (inputs, outputs, the
 * workspace): its offset and length; false past the end. */
bool kf_harness__buffer_at(const kf_harness_layout *L, int b, uint64_t *off,
                           size_t *len);
/* Everything of the layout that is not a buffer's data, as regions (at
 * most 2 * KF_HARNESS_MAX_T + 2).  Returns how many. */
int kf_harness__gap_regions(const kf_harness_layout *L, kf_harness_region *r);
/* The guard regions that bound each buffer (before, after).  Returns how
 * many (at most 2 * (2 * KF_HARNESS_MAX_T + 1)). */
int kf_harness__guard_regions(const kf_harness_layout *L,
                              kf_harness_region *r);
/* The outputs' regions; returns L->n_out. */
int kf_harness__output_regions(const kf_harness_layout *L,
                               kf_harness_region *r);
/* "wrote 12 bytes before the start of input 'x'": the reason for a
 * changed canary byte at image offset bad.  Returns OUT_OF_BOUNDS. */
int kf_harness__guard_reason(const kf_spec *s, const kf_harness_layout *L,
                             uint64_t bad, const char *ctx, char *why,
                             size_t whylen);

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

/* ---------------------------------------------------------- inputs.c -- */

/* A draw key from the secret seed: SipHash-2-4 keyed by the seed over
 * (a, b, c).  Keys are handed to runners; one key reveals neither the
 * seed nor any other key. */
uint64_t kf_harness__key(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);

/* Fills n elements of dtype dt with distribution dist under key
 * (core/gen.h), split over threads when n is large. */
void kf_harness__fill(void *dst, int dt, int64_t n, int dist, int64_t range,
                      uint64_t key);
/* Element i as a double (ints exactly up to 2^53). */
double kf_harness__load(const void *buf, int dt, int64_t i);
bool kf_harness__is_float(int dt);
/* The byte outputs of dtype dt are poisoned with: all-ones for floats (a
 * NaN no arithmetic produces), 0xA5 for integers. */
unsigned char kf_harness__poison_byte(int dt);
/* The poison of a call: kf_harness__poison_byte, or for integers 0x5A
 * when alt.  An integer answer can be the poison pattern itself (x ^
 * 0xA5A5A5A5 at x = 0); a float's poison no arithmetic produces, so
 * floats keep theirs. */
unsigned char kf_harness__out_poison(int dt, bool alt);
/* Digest of len bytes (core/gen.h's terms), split over threads when large.
 * Equal bytes give equal digests on every backend. */
uint64_t kf_harness__digest(const unsigned char *p, size_t len);

typedef struct {
  uint64_t s[4];
} kf_harness_rng;

/* xoshiro256** seeded through splitmix64 from (seed, a, b, c): for the
 * harness's own choices (orders, offsets), not for inputs. */
void kf_harness__rng_seed(kf_harness_rng *r, uint64_t seed, uint64_t a,
                          uint64_t b, uint64_t c);
uint64_t kf_harness__rng_next(kf_harness_rng *r);

/* ----------------------------------------------------------- check.c -- */

/* What a comparison saw, accumulated over the cases of a stage. */
typedef struct {
  double max_abs, max_rel; /* largest errors within tolerance */
  unsigned evidence_outs;  /* bit j: output j was evidence somewhere */
  bool evidence;           /* some expected output is outside the
                              tolerance around zero */
} kf_harness_cmp;

/* Compares n_out outputs: got[j] (a candidate's) with want[j] (the
 * reference's), elements of L's output j, under the spec's tolerance
 * (kf_spec_within_tol, the one definition; a bf16 fast path).  Poisoned
 * elements are unwritten.  0, UNWRITTEN_OUTPUT, WRONG_ANSWER, or
 * SPEC_ERROR (the reference left one unwritten, or produced NaN/Inf the
 * spec does not allow) with why. */
int kf_harness__compare(const kf_spec *s, const kf_harness_layout *L,
                        const unsigned char *const *got,
                        const unsigned char *const *want, const char *ctx,
                        kf_harness_cmp *acc, char *why, size_t whylen);

/* The first element of integer output j that holds the plain poison in
 * run a and the other one (kf_harness__out_poison's alt) in run b: one
 * the side never wrote.  -1 when none, or when output j is a float. */
int64_t kf_harness__unwritten_int(const kf_harness_layout *L, int j,
                                  const unsigned char *a,
                                  const unsigned char *b);

/* check_fast.c: one block of n bf16 / f32 elements (got x, want y) in
 * float, vectorized: the largest absolute and relative error, whether any
 * element is not clearly within |x - y| <= 0.999 (at + rt |y|) (*bad: also
 * for any NaN or Inf, found from the bits), and whether some |y| exceeds
 * the tolerance around zero (*evd).  Callers walk a bad block again with
 * the exact rule. */
void kf_harness__fast_bf16(const uint16_t *x, const uint16_t *y, int64_t n,
                           float at, float rt, float *mabs, float *mrel,
                           int *bad, int *evd);
void kf_harness__fast_f32(const uint32_t *x, const uint32_t *y, int64_t n,
                          float at, float rt, float *mabs, float *mrel,
                          int *bad, int *evd);

/* Two runs' outputs, bit for bit.  0 or NONDETERMINISTIC with why. */
int kf_harness__compare_bits(const kf_spec *s, const kf_harness_layout *L,
                             const unsigned char *const *a,
                             const unsigned char *const *b, const char *ctx,
                             char *why, size_t whylen);

/* ----------------------------------------------------------- stats.c -- */

/* Median of v[from, from + n); tmp (n entries) is left sorted. */
double kf_harness__median(const uint64_t *v, int from, int n, uint64_t *tmp);
/* Median and (p90 - p10) / median of v[0, n). */
void kf_harness__stats(const uint64_t *v, int n, uint64_t *tmp, double *med,
                       double *spread);
/* True when the median of v[0, m) is within 1% of its second half's. */
bool kf_harness__stable(const uint64_t *v, int m, uint64_t *tmp);

/* A side's claimed times held to the eval's own clock.  t[i]: the time
 * its runner claimed for repetition i; w[i]: the eval's wall time of the
 * side's commands in that repetition, from the draw of its inputs to the
 * reply that fixed its outputs; rt/rw the same of the reference in the
 * same repetitions (same draw), whose claims are trusted, so that rw - rt
 * is the harness's own part of those commands.  When the side's part
 * exceeds the reference's, repetition by repetition, by more than the
 * noise allows (median of the differences against the slack), its claims
 * fell short of its work: every t[i] is raised to at least w[i] less the
 * reference's part in that repetition.  Returns the excess (median ns a
 * repetition), 0 when the claims stand; tmp holds 2n entries; *out (may
 * be NULL) the figures it went by (mad: the differences' median
 * deviation). */
typedef struct {
  double ref_part, mad;     /* the reference's part; the deviation of the
                               repetitions' differences */
  double part, slack;       /* the side's part; the excess allowed */
} kf_harness_wall;
double kf_harness__wall_bound(const uint64_t *rt, const uint64_t *rw, int rn,
                              uint64_t *t, const uint64_t *w, int n,
                              uint64_t *tmp, kf_harness_wall *out);

/* The roofline floor of one timed median: bytes and flops the spec's
 * formulas give at size (0 when it has none), the rates they imply, and
 * whether that is faster than the ceilings allow (factor x the largest
 * measured bandwidth, factor x the measured compute rate). */
typedef struct {
  int64_t bytes, flops;
  double gbps, gflops;   /* achieved */
  double ceil_gbps;      /* the bandwidth the floor used (0: none) */
  bool too_fast;
} kf_harness_roof;
/* The factor over the best measured ceiling (copy, read or write
 * bandwidth; compute) that every backend's too-fast floor uses: measured
 * ceilings are a few percent below what a kernel can reach, not more. */
#define KF_HARNESS_ROOF_FACTOR 1.05
void kf_harness__roofline(const kf_spec *s, const kf_size *sz, double ns,
                          double ceil_gbps, double ceil_gflops, double factor,
                          kf_harness_roof *out);
/* The bandwidth ceiling a layout's floor uses: the worker's (streaming,
 * measured far beyond every cache) raised to the rate measured at the
 * layout's footprint with a timed call's cache state, never lowered by it
 * (footprint_gbps 0: not measured).  A problem that fits in a cache is
 * then not refused for beating DRAM, and a time no hardware state allows
 * is still below the floor. */
double kf_harness__ceiling_for(double worker_gbps, double footprint_gbps);

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

/* -------------------------------------------------------- identity.c -- */

/* sha256 (hex, 64 chars) over the harness programs; cached.  0 or -1
 * (errno) when one cannot be read. */
int kf_harness__build_id(char *out, size_t outlen);
/* The compiler's --version line: nvcc's "release" line when cuda, else
 * cc's first line; "" when it does not run. */
void kf_harness__toolchain(bool cuda, char *out, size_t outlen);
/* `kf-harness identity`: argv from "identity". */
int kf_harness__identity_cmd(int argc, char **argv);
/* ----------------------------------------------------------- cache.c -- */

/* The cache key of a trusted object: sha256 (hex) over the harness build
 * and the parts (compiler version, target, source...).  0 or -1. */
int kf_harness__cache_key(const char *const *parts, int n, char *out,
                          size_t outlen);
/* The cache's directory ($KF_HARNESS_CACHE, else $TMPDIR/kf-harness-
 * cache-UID), created 0700; -1 when it is not this uid's alone. */
int kf_harness__cache_dir(char *out, size_t outlen);
/* Copies the cached object of key to dst (a new file); false on a miss. */
bool kf_harness__cache_get(const char *key, const char *dst);
/* Stores src under key (best effort). */
void kf_harness__cache_put(const char *key, const char *src);

/* `kf-harness cuda-info` (cuda/info_cmd.c): argv from "cuda-info". */
int kf_harness__cuda_info_cmd(int argc, char **argv);

#endif
