/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/backend.h -- the seam between the evaluation pipeline
 * (core/pipeline.c, written once) and the backends that build and run
 * code (harness/cpu: C on this CPU; harness/cuda: CUDA on a GPU).  The
 * way libuv hides its platforms behind one set of operations, the
 * pipeline knows a backend only by the table below, and a new backend (a
 * PyTorch/Triton runner, say) is one more table, not a copy of the
 * pipeline.
 *
 * What the pipeline owns, for every backend: the stages and their order,
 * the secret seed and every key derived from it, the layout of each
 * call's buffers, which distributions and sizes are checked, the
 * comparison with the reference (on host copies of the outputs, never in
 * a candidate's reach), the determinism check, the timing loop, its
 * statistics and the roofline floor.  What a backend owns: turning a
 * source into something loadable, the runner processes (one per side,
 * each sandboxed), where a side's buffers live (host memory, device
 * memory) and moving them, and how one call is run and what it is
 * charged.
 *
 * A "side" is one runner: the reference, or one candidate (a showdown has
 * several).  Every side has a host image of the current layout (`map`,
 * map_len bytes, a memfd the backend creates at start): a host backend
 * runs the code on it directly; a device backend keeps the real buffers on
 * its device and copies between the image and the device in fetch.
 *
 * Contract of every operation: it returns 0 or a kf_outcome, with the
 * reason in the evaluation's why buffer (kf_ev_why).  An outcome from a
 * side is that side's: the pipeline turns the reference's failures into
 * SPEC_ERROR.  Once an operation on a side failed, that side's runner is
 * dead and later operations on it fail with INFRA_ERROR.  All of it runs
 * on the eval process's one thread.
 */
#ifndef KF_HARNESS_BACKEND_H
#define KF_HARNESS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "internal.h"
#include "profile.h"

typedef struct kf_ev kf_ev;

/* The baselines a backend may time beside a side (kf_side.t_base). */
enum { KF_BASE_COMPILE, KF_BASE_TUNED, KF_BASES };

typedef struct kf_side {
  char who[48];               /* "reference", "candidate", "candidate 12" */
  bool is_ref;
  int64_t candidate_id;
  const char *source;
  kf_harness_knob knobs[KF_HARNESS_MAX_KNOBS];
  int n_knobs;
  char base[24];              /* file name base in the build directory */
  char jail[1200];            /* the runner's chroot (only its object) */
  unsigned char *map;         /* host image, map_len bytes (backend's) */
  size_t map_len;
  /* Where the pipeline reads the side's outputs, at map's offsets: NULL
   * for map itself; a backend whose image the side's process can still
   * write after its call (torch on the GPU: a device-to-host copy it
   * left running) points it at a copy of its own, made when the call's
   * reply fixed them. */
  unsigned char *out_map;
  uint32_t defenses;          /* KF_HARNESS_DEF_* the runner applied */
  int oc;                     /* a candidate's own failure (showdown) */
  char stage[16];             /* where it failed */
  char *why;                  /* its reason (KF_HARNESS_WHY bytes) */
  void *be;                   /* the backend's state of this side */
  /* time stage */
  uint64_t *t;                /* charged ns per repetition */
  int n_t;
  /* The eval's own clock of the side's commands in a timed repetition,
   * from the draw of its inputs to the moment its outputs are fixed (a
   * digest of them in the call's reply, which what is fetched later must
   * match), for backends whose time is a claim of the process that runs
   * the candidate's code: while wall_on, such a backend adds the wall
   * time of each of those commands to wall_ns; the time stage keeps one
   * per repetition in w (parallel to t) and holds t to it
   * (kf_harness__wall_bound).  Others leave it 0. */
  bool wall_on;
  uint64_t wall_ns;
  uint64_t *w;
  /* wall ns of the side's own operations (calls, fetches, probes, arms;
   * a backend that runs sides at once adds its own per-side share):
   * whose calls used the evaluation's time, when its deadline comes */
  uint64_t busy_ns;
  /* baselines the backend timed beside this side's call, on the same
   * inputs by the same timer (torch: torch.compile of the reference's
   * model, KF_BASE_COMPILE in the default mode, KF_BASE_TUNED in
   * max-autotune-no-cudagraphs): the call sets t_base[i] (0: none), the
   * time stage records each per repetition like t */
  uint64_t t_base[KF_BASES];
  uint64_t *tb[KF_BASES];
  int n_tb[KF_BASES];
  char note[512];             /* the backend's remark on how this side's
                                 calls were timed, "" for none (torch: work
                                 on other streams charged); the time
                                 stage's reason carries it */
  uint32_t n_res;             /* compile facts (CUDA: per-kernel resources) */
  Kernelfleet__KernelResources **res;
} kf_side;

/* One call of kf_launch on the current layout. */
typedef struct {
  const kf_harness_layout *L;
  const kf_size *size;        /* the params */
  bool timed;                 /* caches flushed first; the time is charged */
  bool cold;                  /* caches flushed first, untimed: the calls
                                 at the bench size that are not timed, so
                                 that what is cached cannot tell a call it
                                 is not timed */
  uint8_t ws_poison;          /* byte the workspace is filled with: drawn
                                 per call from the seed, so it names no
                                 stage or position */
  bool alt_poison;            /* integer outputs poisoned with the other
                                 byte (kf_harness__out_poison): the
                                 reference's self-check, where an element
                                 that follows the poison was never
                                 written and one that keeps its value
                                 was, whatever the value */
  bool fresh;                 /* run in a process of the side that ran no
                                 call before, its inputs and canaries as
                                 the last prepare and gen left them: the
                                 determinism check's second run, which
                                 nothing the first left on the device (a
                                 register, say) may reach.  Backends whose
                                 every call is a fresh process ignore it */
  const char *ctx;            /* "size N=1024, distribution wide" */
} kf_call;

/* The inputs of the current layout, each drawn under its own key. */
typedef struct {
  const kf_harness_layout *L;
  int dist[KF_HARNESS_MAX_T];    /* KF_DIST_* per input */
  int64_t range[KF_HARNESS_MAX_T];/* INDEX bound per input */
  uint64_t key[KF_HARNESS_MAX_T];
} kf_gen;

/* What a side's memory looks like after a call. */
typedef struct {
  uint64_t bad;                        /* first changed canary byte (image
                                          offset), UINT64_MAX: none */
  uint64_t in_digest[KF_HARNESS_MAX_T];/* digest of each input */
} kf_probe;

typedef struct kf_backend {
  const char *name;     /* the spec's backend: "cpu", "cuda" */
  const char *language; /* the request's language: "c", "cuda" */
  size_t guard;         /* canary bytes on each side of each buffer */
  double roof_factor;   /* a time may beat the measured ceilings by this
                           factor, no more (<= 1.05) */
  int min_reps;         /* timed repetitions at least */
  /* Creates the backend's eval-wide state (e->bes).  0 or an outcome. */
  int (*open)(kf_ev *e);
  /* Compiles every side (sides[0] is the reference) into the build
   * directory; a candidate's own failure goes into its oc/why/stage and
   * is not an error of the call.  *facts: what the compile learned, for
   * the stage reason.  Returns INFRA_ERROR or the reference's outcome. */
  int (*compile)(kf_ev *e, kf_side **sides, int n, char *facts,
                 size_t factslen);
  /* The link check of one candidate side (the reference is trusted:
   * only moved into its jail).  0, LINK_REJECTED or INFRA_ERROR. */
  int (*link)(kf_ev *e, kf_side *s, char *facts, size_t factslen);
  /* Starts a runner per side with an image of map_len bytes (the largest
   * layout).  Sides that fail get their own oc; returns INFRA_ERROR or the
   * reference's failure.  *facts: the defenses and resources. */
  int (*start)(kf_ev *e, kf_side **sides, int n, size_t map_len,
               char *facts, size_t factslen);
  /* Canary over everything of L that is not a buffer, in the side's
   * memory. */
  int (*prepare)(kf_ev *e, kf_side *s, const kf_harness_layout *L);
  /* Draws g's inputs into every side's memory (the same bits in each). */
  int (*gen)(kf_ev *e, kf_side **sides, int n, const kf_gen *g);
  /* Optional: gets everything of the next call that is not the call
   * itself done now (a fresh process loaded), so that nothing of this side
   * competes with another side's timed call. */
  int (*arm)(kf_ev *e, kf_side *s, const kf_call *c);
  /* Poisons the outputs and fills the workspace, then runs kf_launch
   * once; *ns: the time charged (timed calls), which covers all work the
   * side's process did during the call. */
  int (*call)(kf_ev *e, kf_side *s, const kf_call *c, uint64_t *ns);
  /* Brings regions of the side's memory into its image. */
  int (*fetch)(kf_ev *e, kf_side *s, const kf_harness_region *r, int n);
  /* Guards and input digests of the side's memory. */
  int (*probe)(kf_ev *e, kf_side *s, const kf_harness_layout *L,
               kf_probe *out);
  /* Optional, for backends whose runners work in parallel: untimed calls
   * of n sides at once (calls[i] -> oc[i]), and fetching the outputs and
   * probing n sides at once (oc[i], probes[i]).  A side's failure reason
   * goes into its why buffer.  Returns 0 (each side's outcome in oc). */
  int (*calls)(kf_ev *e, kf_side **sides, int n, const kf_call *c, int *oc);
  int (*collect)(kf_ev *e, kf_side **sides, int n, const kf_harness_layout *L,
                 kf_probe *probes, int *oc);
  /* Optional: a whole untimed case for n sides at once -- draw g, call c,
   * fetch the outputs, probe -- as gen + calls + collect would, for
   * backends that do it in fewer steps.  oc[i] and the side's why get
   * each side's outcome; g's draw failing is every side's. */
  int (*case_all)(kf_ev *e, kf_side **sides, int n, const kf_gen *g,
                  const kf_call *c, kf_probe *probes, int *oc);
  /* Optional: the best streaming rate (GB/s) this backend's hardware
   * reaches over `bytes` of memory with the caches as a timed call finds
   * them (after the same flush), measured now by trusted code with no
   * runner working; 0: unknown.  The too-fast floor of a layout uses the
   * larger of this and the worker's ceilings (kf_harness__ceiling_for),
   * so a cache-resident problem is judged against what its footprint
   * allows.  NULL: the worker's ceilings hold at every footprint. */
  double (*footprint_gbps)(kf_ev *e, size_t bytes);
  /* Optional: the worker's streaming copy ceiling measured again, now,
   * the way the worker measured it at its start (same code), by trusted
   * code with no runner working; 0: not measured.  A ceiling taken while
   * the machine was busy is too low, and every roofline fraction divided
   * by it too high: an evaluation that claims a large share of the
   * worker's ceiling reports this sample beside it (pipeline.c
   * recheck_stream), and the store divides by the larger of the two.
   * NULL: the worker's ceiling is not subject to other load (a GPU the
   * worker has to itself). */
  double (*stream_gbps)(kf_ev *e);
  /* Optional: a hardware profile of the candidate side s after the time
   * stage, in a runner of its own started for it (the timed runners are
   * left alone): g's inputs drawn, c run once, untimed, under the
   * profiler.  Never an outcome: out's status says why there is no
   * profile (common/profile.h).  NULL: the backend has no profiler. */
  void (*profile)(kf_ev *e, kf_side *s, const kf_gen *g, const kf_call *c,
                  kf_prof *out);
  /* Optional: the evaluation needs the device no more (its last stage
   * ended): what others wait for can be released before the runners
   * stop. */
  void (*idle)(kf_ev *e);
  /* Ends the side's runner; NULL-safe, idempotent. */
  void (*stop)(kf_ev *e, kf_side *s);
  /* Releases the eval-wide state. */
  void (*close)(kf_ev *e);
} kf_backend;

/* The pipeline's state of one evaluation, as backends see it. */
struct kf_ev {
  const kf_harness_eval_opts *o;
  const kf_backend *b;
  void *bes;                  /* the backend's eval-wide state */
  kf_spec *spec;
  const char *reference_source;
  kf_harness_workdir wd;
  char why[KF_HARNESS_WHY];   /* the reason of the last failure */
  const char *mode;           /* "eval", "showdown" */
  bool cuda;                  /* language cuda */
  char toolchain[128];        /* a backend without a compiler names what
                                 runs the code ("torch 1.13.0a0"); "": the
                                 compiler's version (kf_harness__toolchain) */
  char baselines[384];        /* a backend whose reference is a baseline
                                 (torch: eager) says which and what was not
                                 timed; "" for none */
  /* Set by the backend's open: a timed repetition arms, draws and calls
   * each side in turn, instead of arming and drawing for every side
   * before the first call.  For backends whose runner may be the
   * candidate's (its code can take over the process), so that no side
   * holds its inputs while another side is timed, and the side's clock
   * (kf_side.wall_ns) starts at its own draw. */
  bool draw_per_side;
  /* Time the problem's own code spent drawing inputs (the torch
   * backend's sampler: get_inputs()).  The problem's cost: at the
   * deadline it counts on the reference's side (pipeline.c
   * past_deadline), where a slow get_inputs() put the timeout on an
   * honest candidate (red team 2026-12-01-s3c, H7). */
  uint64_t draw_ns;
};

extern const kf_backend kf_harness_cpu_backend;
extern const kf_backend kf_harness_cuda_backend;
extern const kf_backend kf_harness_torch_backend; /* harness/torch */

#endif
