/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/pipeline.c -- one evaluation (`kf-harness eval`) or one
 * showdown (`kf-harness showdown`), stage by stage, the same for every
 * backend.  Runs in the eval process, which holds the secret seed and the
 * expected outputs and never runs candidate code: candidates and the
 * reference run in runners that a backend (core/backend.h) starts.
 *
 *   compile      the reference and every candidate (in parallel, as the
 *                backend can); a candidate's compile error is its result
 *   link         each candidate's object: imports on the backend's
 *                allow-list, no load-time code, no writable static state
 *   load         a runner per side, sandboxed; the reason lists the
 *                defenses that applied.  Refused before anything is mapped
 *                when the buffers would not fit this machine's memory
 *   verify       every check size, and the bench size, x every input
 *                distribution the spec lists: inputs drawn fresh under keys
 *                derived from the secret seed, outputs poisoned, the call,
 *                guards and input digests checked, outputs compared with
 *                the reference's (core/check.c).  Cases whose expected
 *                outputs an all-zeros kernel would match are not evidence;
 *                a problem with no evidence at all is a SPEC_ERROR, and so
 *                is one whose reference writes the same bytes at the bench
 *                size under each of its two or more distributions (its
 *                outputs do not depend on its inputs: a constant would
 *                pass, and be timed).  At each size's first case the
 *                reference runs twice and must agree with itself
 *   determinism  (spec.deterministic) two runs of the candidate on the
 *                same inputs into the same buffers, the first run's
 *                outputs copied out and poisoned over before the second,
 *                so neither can see the other's; bit for bit
 *   time         the bench size.  Every repetition draws fresh inputs
 *                under its own key, cycling through the distributions;
 *                no call of any side sees a repetition's inputs before its
 *                timed call (the layout has one input set, redrawn in place
 *                for each repetition: nothing is drawn ahead).  Each side
 *                runs once per repetition, timed by its backend (caches
 *                flushed first; the time covers all the work its process
 *                did in the call), the order rotating between repetitions;
 *                every timed output is fetched and compared with the
 *                reference's on the same inputs, guards and input digests
 *                checked.  Repetitions go on until every side's median is
 *                stable (and at least the backend's minimum) or the budget
 *                is spent.  Then the roofline floor: a median faster than
 *                roof_factor (<= 1.05) x the best measured ceiling allows
 *                is TOO_FAST -- timed once more before it is believed, and
 *                marked timing-dependent either way
 *
 * A showdown runs the same stages for several candidates at once (the
 * verify stage at the bench size only), and a candidate that fails drops
 * out with its outcome while the others go on.
 *
 * Keys: kf_harness__key(seed, stage tag, case or repetition, tensor and
 * distribution), so every draw is its own.  Failure reporting: a stage
 * that fails fills its StageResult and the result's outcome, and nothing
 * later runs.  Machine failures (fork, memfd) are INFRA_ERROR, which the
 * worker retries; a failure of the reference is SPEC_ERROR.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "err.h"
#include "harness.h"
#include "internal.h"
#include "kernelfleet.pb-c.h"
#include "log.h"
#include "outcome.h"
#include "spec.h"
#include "text.h"
#include "util.h"

#define WHY KF_HARNESS_WHY
#define MAX_REPS 500
#define MAX_SIDES 17 /* the reference and up to 16 showdown entries */
#define MAX_REQUEST (256u << 20)
#define WARM_REPS 2
#define SHOWDOWN_MIN_REPS 30

/* Stage tags of the draw keys. */
enum {
  TAG_VERIFY = 1,
  TAG_DETERMINISM = 2,
  TAG_WARM = 3,
  TAG_TIME = 4,
  TAG_RETIME = 5,
  TAG_PROFILE = 6,
};

typedef struct {
  kf_ev e;                   /* what the backend sees */
  uint64_t seed;
  kf_harness_stages st;
  kf_side *sides[MAX_SIDES]; /* [0] is the reference */
  int n;
  bool showdown;
  int dists[KF_DIST_COUNT], n_dists;
  kf_harness_cmp cmp;        /* verify's errors and evidence */
  char facts[WHY];           /* a stage's success reason */
  /* time stage */
  int reps;
  int timed_dists;
  uint64_t t0_ns;             /* the evaluation's start: its deadline's
                                origin */
  bool deadline_hit;          /* past it: no further call (past_deadline) */
  double ceil_gbps, ceil_gflops;
  double worker_gbps;        /* the best of the worker's bandwidths */
  double fp_gbps;            /* best rate measured at the bench footprint
                                (0: not measured) */
  double stream_gbps;        /* the worker's copy ceiling measured again
                                beside this timing (0: not measured) */
  bool timing_dependent;
  int min_reps;              /* the request's, 0: the options' */
  uint64_t ph_ns[4];         /* time stage, recorded repetitions: draw,
                                calls, fetch (and probe), compare */
  uint64_t budget_ms;        /* the time stage's budget for one timed size */
  double top_gbps;           /* the highest ceiling a timed size used */
  int timed_min, dists_min;  /* the fewest repetitions and distributions
                                of a timed size */
  /* per side (sides[i]), over the timed sizes: what the evaluation
   * reports is the geometric mean of each size's median (GPU MODE's
   * score over its benchmarks), so a kernel fast at one size only is not
   * ranked by that size */
  struct {
    double lt, lb[KF_BASES], lgb, lgf; /* sums of logs */
    int nb[KF_BASES];                 /* sizes timed with each baseline */
    double sp;                        /* the largest spread */
    int reps, n;                      /* the fewest repetitions; sizes */
  } acc[MAX_SIDES];
  uint64_t *tmp;
} pl;

/* A side's rates over the timed sizes (geometric means: bytes over
 * time, where both are means so) and its baselines' times (0: not timed
 * at every size). */
static void side_rates(const pl *p, const kf_side *s, double *gbps,
                       double *gflops, double base[KF_BASES]) {
  int nb = kf_spec_n_bench(p->e.spec);
  *gbps = *gflops = 0;
  for (int b = 0; b < KF_BASES; b++) base[b] = 0;
  for (int i = 0; i < p->n; i++) {
    if (p->sides[i] != s || p->acc[i].n != nb) continue;
    *gbps = exp(p->acc[i].lgb / nb);
    *gflops = exp(p->acc[i].lgf / nb);
    for (int b = 0; b < KF_BASES; b++)
      if (p->acc[i].nb[b] == nb) base[b] = exp(p->acc[i].lb[b] / nb);
  }
}

/* A side's time over every timed size: med the geometric mean of its
 * medians, spread the largest, reps the fewest; false when it was not
 * timed at every one. */
static bool side_time(const pl *p, const kf_side *s, double *med,
                      double *spread, int *reps) {
  int nb = kf_spec_n_bench(p->e.spec);
  for (int i = 0; i < p->n; i++) {
    if (p->sides[i] != s) continue;
    if (p->acc[i].n != nb) return false;
    *med = exp(p->acc[i].lt / nb);
    *spread = p->acc[i].sp;
    *reps = p->acc[i].reps;
    return true;
  }
  return false;
}

/* ------------------------------------------------------------- sides */

static kf_side *side_new(pl *p, const char *who, bool is_ref) {
  kf_side *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->why = calloc(1, WHY);
  s->t = calloc(MAX_REPS, sizeof *s->t);
  s->w = calloc(MAX_REPS, sizeof *s->w);
  bool ok = s->why && s->t && s->w;
  for (int b = 0; b < KF_BASES; b++)
    ok = (s->tb[b] = calloc(MAX_REPS, sizeof *s->tb[b])) && ok;
  if (!ok) {
    free(s->why);
    free(s->t);
    free(s->w);
    for (int b = 0; b < KF_BASES; b++) free(s->tb[b]);
    free(s);
    return NULL;
  }
  kf_strlcpy(s->who, who, sizeof s->who);
  s->is_ref = is_ref;
  if (is_ref) kf_strlcpy(s->base, "reference", sizeof s->base);
  else if (p->showdown) snprintf(s->base, sizeof s->base, "cand%d", p->n);
  else kf_strlcpy(s->base, "candidate", sizeof s->base);
  p->sides[p->n++] = s;
  return s;
}

static void sides_free(pl *p) {
  for (int i = 0; i < p->n; i++) {
    kf_side *s = p->sides[i];
    if (p->e.b) p->e.b->stop(&p->e, s);
    free(s->why);
    free(s->t);
    free(s->w);
    for (int b = 0; b < KF_BASES; b++) free(s->tb[b]);
    free(s);
  }
  p->n = 0;
}

/* The candidates still in the running. */
static int active(pl *p, kf_side **out) {
  int k = 0;
  for (int i = 1; i < p->n; i++)
    if (!p->sides[i]->oc) out[k++] = p->sides[i];
  return k;
}

/* A side failed in `ctx`; the reason is in e.why.  The reference's failure
 * ends everything (SPEC_ERROR, or INFRA_ERROR); a candidate's is its own
 * and the caller goes on with the others.  Returns the reference's
 * outcome, else 0. */
static int failed(pl *p, kf_side *s, int oc, const char *ctx) {
  char tmp[WHY];
  if (s->is_ref) {
    snprintf(tmp, sizeof tmp, "%.300s%sreference failed: %.1700s",
             ctx ? ctx : "", ctx ? ": " : "", p->e.why);
    kf_strlcpy(p->e.why, tmp, WHY);
    return oc == KF_OUTCOME_INFRA_ERROR ? oc : KF_OUTCOME_SPEC_ERROR;
  }
  if (ctx) snprintf(tmp, sizeof tmp, "%.300s: %.1700s", ctx, p->e.why);
  else kf_strlcpy(tmp, p->e.why, sizeof tmp);
  s->oc = oc;
  kf_strlcpy(s->stage, p->st.names[p->st.n - 1], sizeof s->stage);
  kf_strlcpy(s->why, tmp, WHY);
  kf_log(KF_LOG_INFO, "%s: %s in %s: %s", s->who, kf_outcome_name(oc),
         s->stage, tmp);
  return 0;
}

/* Ends a stage: with the first failed candidate's outcome when no
 * candidate is left (an eval has one), else ok with facts. */
static int stage_done(pl *p, int ref_oc) {
  if (ref_oc) return kf_harness__stage_end(&p->st, ref_oc, p->e.why);
  kf_side *act[MAX_SIDES];
  if (active(p, act) == 0) {
    for (int i = 1; i < p->n; i++)
      if (!strcmp(p->sides[i]->stage, p->st.names[p->st.n - 1]))
        return kf_harness__stage_end(&p->st, p->sides[i]->oc,
                                     p->sides[i]->why);
    return kf_harness__stage_end(&p->st, KF_OUTCOME_INFRA_ERROR,
                                 "no candidate left");
  }
  return kf_harness__stage_end(&p->st, 0, p->facts);
}

static void size_str(const pl *p, const kf_size *sz, char *buf, size_t len) {
  kf_spec_size_format(p->e.spec, sz, buf, len);
}

static uint64_t key_of(pl *p, int tag, uint64_t n, int input, int dist) {
  return kf_harness__key(p->seed, (uint64_t)tag, n,
                         (uint64_t)input | (uint64_t)dist << 8);
}

/* The draw of one case: every input under its own key. */
static int make_gen(pl *p, const kf_harness_layout *L, int dist, int tag,
                    uint64_t n, kf_gen *g) {
  memset(g, 0, sizeof *g);
  g->L = L;
  for (int i = 0; i < L->n_in; i++) {
    const kf_spec_tensor *t = &p->e.spec->inputs[i];
    int d = kf_harness__input_dist(t, dist);
    int oc = kf_harness__input_range(p->e.spec, t, d, &L->size, &g->range[i],
                                     p->e.why, WHY);
    if (oc) return oc;
    g->dist[i] = d;
    g->key[i] = key_of(p, tag, n, i, d);
  }
  return 0;
}

/* --------------------------------------------------------- one case */

/* The outputs of side s in its image. */
static void outputs_of(const kf_side *s, const kf_harness_layout *L,
                       const unsigned char **o) {
  const unsigned char *m = s->out_map ? s->out_map : s->map;
  for (int j = 0; j < L->n_out; j++) o[j] = m + L->out_off[j];
}

/* After a candidate's call: its guards and input digests (against the
 * reference's, same draw), then its outputs against the reference's. */
/* The backend's operations on one side, with the wall time they took
 * put to the side's account (busy_ns: past_deadline). */
static int side_call(pl *p, kf_side *s, const kf_call *c, uint64_t *ns) {
  uint64_t t0 = kf_now_ns();
  int oc = p->e.b->call(&p->e, s, c, ns);
  s->busy_ns += kf_now_ns() - t0;
  return oc;
}

static int side_fetch(pl *p, kf_side *s, const kf_harness_region *r, int n) {
  uint64_t t0 = kf_now_ns();
  int oc = p->e.b->fetch(&p->e, s, r, n);
  s->busy_ns += kf_now_ns() - t0;
  return oc;
}

static int side_probe(pl *p, kf_side *s, const kf_harness_layout *L,
                      kf_probe *out) {
  uint64_t t0 = kf_now_ns();
  int oc = p->e.b->probe(&p->e, s, L, out);
  s->busy_ns += kf_now_ns() - t0;
  return oc;
}

static int side_arm(pl *p, kf_side *s, const kf_call *c) {
  uint64_t t0 = kf_now_ns();
  int oc = p->e.b->arm(&p->e, s, c);
  s->busy_ns += kf_now_ns() - t0;
  return oc;
}

/* The evaluation's deadline (--deadline-ms, the worker's task time less
 * a margin), checked before each case and each repetition: past it no
 * further call is made.  Whose fault: the side whose own operations took
 * more of the time.  A reference slower than every candidate means the
 * problem cannot be evaluated in this time (SPEC_ERROR, naming the
 * reference's share), where before the worker killed the whole harness
 * and the candidate got TIMEOUT for it; otherwise each candidate still
 * running ends TIMEOUT.  0, or the reference's outcome. */
static int past_deadline(pl *p, const char *ctx) {
  const kf_harness_eval_opts *o = p->e.o;
  uint64_t el = kf_now_ns() - p->t0_ns;
  if (!o->deadline_ms || el < (uint64_t)o->deadline_ms * 1000000u) return 0;
  /* a faster machine would have finished: never a permanent verdict */
  p->timing_dependent = p->deadline_hit = true;
  kf_side *r = p->sides[0];
  uint64_t cand = 0, draw = p->e.draw_ns;
  for (int i = 1; i < p->n; i++)
    if (p->sides[i]->busy_ns > cand) cand = p->sides[i]->busy_ns;
  /* the problem's share: its reference's calls and its own input draws */
  if (r->busy_ns + draw > cand) {
    if (draw > r->busy_ns)
      snprintf(p->e.why, WHY, "the evaluation reached its deadline of %.1f "
               "s with the problem's get_inputs() drawing inputs for %.1f s "
               "and the reference's own calls at %.1f s of the %.1f s spent "
               "(the candidate's %.1f s): the problem's input draws are too "
               "slow for this time (a faster get_inputs(), fewer check "
               "sizes, or a longer task time)", o->deadline_ms / 1e3,
               draw / 1e9, r->busy_ns / 1e9, el / 1e9, cand / 1e9);
    else
      snprintf(p->e.why, WHY, "the evaluation reached its deadline of %.1f "
               "s with the reference's own calls at %.1f s of the %.1f s "
               "spent (the candidate's %.1f s, get_inputs()'s %.1f s): the "
               "reference is too slow for this time (fewer or smaller check "
               "sizes, a smaller bench size, or a longer task time)",
               o->deadline_ms / 1e3, r->busy_ns / 1e9, el / 1e9, cand / 1e9,
               draw / 1e9);
    return failed(p, r, KF_OUTCOME_TIMEOUT, ctx);
  }
  for (int i = 1; i < p->n; i++) {
    kf_side *s = p->sides[i];
    if (s->oc) continue;
    snprintf(p->e.why, WHY, "the evaluation reached its deadline of %.1f s "
             "with %s's own calls at %.1f s of the %.1f s spent (the "
             "reference's %.1f s)", o->deadline_ms / 1e3, s->who,
             s->busy_ns / 1e9, el / 1e9, r->busy_ns / 1e9);
    failed(p, s, KF_OUTCOME_TIMEOUT, ctx);
  }
  return 0;
}

/* Fetches the outputs of and probes sides[0..n) (at once where the
 * backend can).  A side that fails is marked (its reason in its why);
 * the reference's failure is returned. */
static int collect(pl *p, kf_side **sides, int n, const kf_harness_layout *L,
                   kf_probe *pr, const char *ctx) {
  const kf_backend *b = p->e.b;
  int oc[MAX_SIDES] = {0};
  uint64_t t0 = kf_now_ns();
  if (b->collect) {
    b->collect(&p->e, sides, n, L, pr, oc);
  } else {
    kf_harness_region r[KF_HARNESS_MAX_T];
    int nr = kf_harness__output_regions(L, r);
    for (int i = 0; i < n; i++) {
      if (sides[i]->oc) continue;
      oc[i] = side_fetch(p, sides[i], r, nr);
      if (!oc[i]) oc[i] = side_probe(p, sides[i], L, &pr[i]);
      if (oc[i]) kf_strlcpy(sides[i]->why, p->e.why, WHY);
    }
  }
  p->ph_ns[2] += kf_now_ns() - t0;
  for (int i = 0; i < n; i++) {
    if (!oc[i]) continue;
    kf_strlcpy(p->e.why, sides[i]->why, WHY);
    int r = failed(p, sides[i], oc[i], ctx);
    if (r) return r;
  }
  if (sides[0]->is_ref && !sides[0]->oc && pr[0].bad != UINT64_MAX) {
    kf_harness__guard_reason(p->e.spec, L, pr[0].bad, ctx, p->e.why, WHY);
    return failed(p, sides[0], KF_OUTCOME_OUT_OF_BOUNDS, NULL);
  }
  return 0;
}

/* After a candidate's call and collect: its guards and input digests
 * (against the reference's, same draw), then its outputs against the
 * reference's. */
static int judge(pl *p, kf_side *s, const kf_harness_layout *L,
                 const kf_probe *ref_probe, const kf_probe *pr,
                 const char *ctx, kf_harness_cmp *acc) {
  int oc;
  if (pr->bad != UINT64_MAX) {
    oc = kf_harness__guard_reason(p->e.spec, L, pr->bad, ctx, p->e.why, WHY);
    return failed(p, s, oc, NULL);
  }
  for (int i = 0; i < L->n_in; i++)
    if (pr->in_digest[i] != ref_probe->in_digest[i]) {
      snprintf(p->e.why, WHY, "%s: wrote into input '%s'", ctx,
               p->e.spec->inputs[i].name);
      return failed(p, s, KF_OUTCOME_OUT_OF_BOUNDS, NULL);
    }
  uint64_t t1 = kf_now_ns();
  const unsigned char *got[KF_HARNESS_MAX_T], *want[KF_HARNESS_MAX_T];
  outputs_of(s, L, got);
  outputs_of(p->sides[0], L, want);
  oc = kf_harness__compare(p->e.spec, L, got, want, ctx, acc, p->e.why, WHY);
  p->ph_ns[3] += kf_now_ns() - t1;
  if (oc == KF_OUTCOME_SPEC_ERROR) return oc; /* the reference's fault */
  if (oc) return failed(p, s, oc, NULL);
  return 0;
}

/* Every side ready for call c (backends with an arm step), so that no
 * side's set-up competes with another's timed call.  Returns the
 * reference's failure, else 0. */
static int arm_all(pl *p, kf_side **all, int n, const kf_call *c) {
  if (!p->e.b->arm) return 0;
  for (int k = 0; k < n; k++) {
    if (all[k]->oc) continue;
    int oc = side_arm(p, all[k], c);
    if (oc && (oc = failed(p, all[k], oc, c->ctx))) return oc;
  }
  return 0;
}

/* The workspace fill of one call, drawn from the seed: a fixed or counted
 * byte would tell a call its stage or its place in the sequence (the
 * candidate reads its workspace before it writes it). */
static uint8_t ws_fill(const pl *p, int tag, uint64_t n) {
  return (uint8_t)(kf_harness__key(p->seed, (uint64_t)tag, n, 0x5753F111u) >>
                   56);
}

static bool same_size(const pl *p, const kf_size *a, const kf_size *b) {
  for (int i = 0; i < p->e.spec->n_params; i++)
    if (a->v[i] != b->v[i]) return false;
  return true;
}

/* True when z is a bench size: calls there must look alike, timed or
 * not. */
static bool is_bench(const pl *p, const kf_size *z) {
  for (int i = 0; i < kf_spec_n_bench(p->e.spec); i++)
    if (same_size(p, z, kf_spec_bench(p->e.spec, i))) return true;
  return false;
}

/* One untimed case on every active candidate: draw, reference, each
 * candidate, judged.  Returns the reference's failure, else 0. */
static int run_case(pl *p, const kf_harness_layout *L, int dist, int tag,
                    uint64_t n, const char *ctx, kf_harness_cmp *acc) {
  const kf_backend *b = p->e.b;
  kf_side *act[MAX_SIDES];
  int oc = past_deadline(p, ctx);
  if (oc || p->deadline_hit) return oc;
  int na = active(p, act);
  kf_side *all[MAX_SIDES];
  all[0] = p->sides[0];
  memcpy(all + 1, act, (size_t)na * sizeof *act);
  kf_call c = {.L = L, .size = &L->size, .cold = is_bench(p, &L->size),
               .ws_poison = ws_fill(p, tag, n), .ctx = ctx};
  oc = arm_all(p, all, na + 1, &c);
  if (oc) return oc;
  /* drawn after every side is armed: no process that exists before the
   * draw sees it except in its call */
  kf_gen g;
  if ((oc = make_gen(p, L, dist, tag, n, &g))) return oc;
  int ocs[MAX_SIDES] = {0};
  kf_probe pr[MAX_SIDES];
  if (b->case_all) { /* draw, calls, fetch and probe in one step */
    uint64_t t0 = kf_now_ns();
    b->case_all(&p->e, all, na + 1, &g, &c, pr, ocs);
    p->ph_ns[2] += kf_now_ns() - t0;
    for (int i = 0; i <= na; i++) {
      if (!ocs[i]) continue;
      kf_strlcpy(p->e.why, all[i]->why, WHY);
      if ((oc = failed(p, all[i], ocs[i], ctx))) return oc;
    }
    if (pr[0].bad != UINT64_MAX) {
      kf_harness__guard_reason(p->e.spec, L, pr[0].bad, ctx, p->e.why, WHY);
      return failed(p, all[0], KF_OUTCOME_OUT_OF_BOUNDS, NULL);
    }
    for (int i = 1; i <= na; i++) {
      if (all[i]->oc) continue;
      if ((oc = judge(p, all[i], L, &pr[0], &pr[i], ctx, acc))) return oc;
    }
    return 0;
  }
  if ((oc = b->gen(&p->e, all, na + 1, &g))) return failed(p, all[0], oc, ctx);
  /* the calls: at once where the backend can (nothing here is timed) */
  if (b->calls) {
    b->calls(&p->e, all, na + 1, &c, ocs);
  } else {
    for (int i = 0; i <= na; i++) {
      uint64_t t;
      ocs[i] = side_call(p, all[i], &c, &t);
      if (ocs[i]) kf_strlcpy(all[i]->why, p->e.why, WHY);
    }
  }
  for (int i = 0; i <= na; i++) {
    if (!ocs[i]) continue;
    kf_strlcpy(p->e.why, all[i]->why, WHY);
    if ((oc = failed(p, all[i], ocs[i], ctx))) return oc;
  }
  if ((oc = collect(p, all, na + 1, L, pr, ctx))) return oc;
  for (int i = 1; i <= na; i++) {
    if (all[i]->oc) continue;
    if ((oc = judge(p, all[i], L, &pr[0], &pr[i], ctx, acc))) return oc;
  }
  return 0;
}

/* Canary in every side for layout L. */
static int prepare_all(pl *p, const kf_harness_layout *L, const char *ctx) {
  for (int i = 0; i < p->n; i++) {
    kf_side *s = p->sides[i];
    if (s->oc) continue;
    int oc = p->e.b->prepare(&p->e, s, L);
    if (oc && (oc = failed(p, s, oc, ctx))) return oc;
  }
  return 0;
}

static int make_layout(pl *p, const kf_size *sz, kf_harness_layout *L) {
  uint64_t avail = kf_harness__mem_available();
  /* every side holds an image, and the eval process reads them all; drawn
   * per side, the eval process may also keep the draw and each side's
   * outputs as fixed at its DONE (torch: its stage and kf_side.out_map):
   * at most an image more per side and one for the draw, counted for
   * every such backend */
  uint64_t shares = (uint64_t)p->n + (p->e.draw_per_side ? p->n + 1u : 0u);
  size_t max = avail ? (size_t)(avail * 7 / 10 / shares) : 0;
  return kf_harness__make_layout(p->e.spec, sz, p->e.b->guard, max, L,
                                 p->e.why, WHY);
}

/* ------------------------------------------------------------ stages */

static int do_compile(pl *p) {
  kf_harness__stage_begin(&p->st, "compile");
  const kf_backend *b = p->e.b;
  int oc = kf_harness__workdir_make(&p->e.wd, p->e.o->workdir, p->e.why, WHY);
  if (!oc) oc = b->open(&p->e);
  if (oc) return kf_harness__stage_end(&p->st, oc, p->e.why);
  p->facts[0] = '\0';
  oc = b->compile(&p->e, p->sides, p->n, p->facts, sizeof p->facts);
  if (oc) {
    char tmp[WHY];
    snprintf(tmp, sizeof tmp, "reference: %.2000s", p->e.why);
    kf_strlcpy(p->e.why, tmp, WHY);
    return kf_harness__stage_end(
        &p->st, oc == KF_OUTCOME_INFRA_ERROR ? oc : KF_OUTCOME_SPEC_ERROR,
        p->e.why);
  }
  for (int i = 1; i < p->n; i++)
    if (p->sides[i]->oc) kf_strlcpy(p->sides[i]->stage, "compile", 16);
  return stage_done(p, 0);
}

static int do_link(pl *p) {
  kf_harness__stage_begin(&p->st, "link");
  const kf_backend *b = p->e.b;
  p->facts[0] = '\0';
  for (int i = 0; i < p->n; i++) {
    kf_side *s = p->sides[i];
    if (s->oc) continue;
    char facts[WHY] = "";
    int oc = b->link(&p->e, s, facts, sizeof facts);
    if (oc) {
      if ((oc = failed(p, s, oc, NULL))) return stage_done(p, oc);
      continue;
    }
    if (!s->is_ref && !p->facts[0]) kf_strlcpy(p->facts, facts, WHY);
  }
  return stage_done(p, 0);
}

static int do_load(pl *p) {
  kf_harness__stage_begin(&p->st, "load");
  const kf_spec *sp = p->e.spec;
  kf_harness_layout L;
  size_t need = p->e.b->guard;
  for (int i = 0; i < sp->n_check_sizes + kf_spec_n_bench(sp); i++) {
    const kf_size *sz = i < sp->n_check_sizes
                            ? &sp->check_sizes[i]
                            : kf_spec_bench(sp, i - sp->n_check_sizes);
    int oc = make_layout(p, sz, &L);
    if (oc) return kf_harness__stage_end(&p->st, oc, p->e.why);
    if (L.total > need) need = L.total;
  }
  kf_side *all[MAX_SIDES];
  int n = 0;
  for (int i = 0; i < p->n; i++)
    if (!p->sides[i]->oc) all[n++] = p->sides[i];
  p->facts[0] = '\0';
  int oc = p->e.b->start(&p->e, all, n, need, p->facts, sizeof p->facts);
  if (oc) return stage_done(p, failed(p, p->sides[0], oc, NULL));
  for (int i = 1; i < p->n; i++)
    if (p->sides[i]->oc && !p->sides[i]->stage[0])
      kf_strlcpy(p->sides[i]->stage, "load", 16);
  return stage_done(p, 0);
}

/* The reference once more on the inputs of the case just run (tag, n),
 * its workspace filled with other bytes, its integer outputs poisoned
 * with the other byte and the canary around its buffers salted: it must
 * agree with its first run within the tolerance it judges candidates by.
 * A reference reading past an input (a spec's index range one too large)
 * read canary bytes, the same in every call, and a careful candidate was
 * judged wrong against them (red team, 2026-11-30): now those bytes
 * differ between its two runs.  An integer element it never wrote
 * follows the poison and is named unwritten here; one whose answer is the
 * poison pattern keeps it and is an answer.  A reference that
 * reads its workspace before writing it, or a clock, made every honest
 * candidate wrong_answer, the problem never named (red team of problems
 * from outside, 2026-11-30).  Returns SPEC_ERROR with why, the
 * reference's failure, or 0. */
static int ref_self_check(pl *p, const kf_harness_layout *L, int tag,
                          uint64_t n, const char *ctx) {
  const kf_backend *b = p->e.b;
  kf_side *r = p->sides[0];
  size_t out_bytes = 0;
  for (int j = 0; j < L->n_out; j++) out_bytes += L->out_b[j];
  unsigned char *first = malloc(out_bytes ? out_bytes : 1);
  if (!first) {
    snprintf(p->e.why, WHY, "%s: out of memory for the reference's "
             "outputs (%zu bytes)", ctx, out_bytes);
    return failed(p, r, KF_OUTCOME_INFRA_ERROR, NULL);
  }
  const unsigned char *a[KF_HARNESS_MAX_T], *again[KF_HARNESS_MAX_T];
  outputs_of(r, L, again);
  size_t o = 0;
  for (int j = 0; j < L->n_out; j++) {
    memcpy(first + o, again[j], L->out_b[j]);
    a[j] = first + o;
    o += L->out_b[j];
  }
  kf_harness_region rg[KF_HARNESS_MAX_T];
  int nr = kf_harness__output_regions(L, rg);
  /* 0xFF: every bit of every canary byte flipped (the second run's
   * canary is checked for writes as the first's is, then put back) */
  kf_harness_layout salted = *L;
  salted.canary_salt = 0xFF;
  /* the fill's 0x40 flipped: the top exponent bit of every float lane,
   * so of the two runs' fills one reads as |x| >= 2 (or NaN) and the other
   * as |x| < 2, most often orders of magnitude apart */
  kf_call c = {.L = &salted, .size = &L->size,
               .cold = is_bench(p, &L->size),
               .ws_poison = (uint8_t)(ws_fill(p, tag, n) ^ 0x40),
               .alt_poison = true, .ctx = ctx};
  uint64_t t;
  kf_probe pr;
  int oc = b->prepare(&p->e, r, &salted);
  if (!oc) oc = side_call(p, r, &c, &t);
  if (!oc) oc = side_fetch(p, r, rg, nr);
  if (!oc) oc = side_probe(p, r, &salted, &pr);
  /* the canary as every other call of this layout expects it (the side
   * keeps a pointer to the layout it was prepared with: L's, not this
   * frame's) */
  int back = b->prepare(&p->e, r, L);
  if (oc || back) {
    free(first);
    return failed(p, r, oc ? oc : back, ctx);
  }
  if (pr.bad != UINT64_MAX) {
    free(first);
    kf_harness__guard_reason(p->e.spec, L, pr.bad, ctx, p->e.why, WHY);
    return failed(p, r, KF_OUTCOME_OUT_OF_BOUNDS, NULL);
  }
  outputs_of(r, L, again);
  for (int j = 0; j < L->n_out; j++) {
    int64_t u = kf_harness__unwritten_int(L, j, a[j], again[j]);
    if (u >= 0) {
      free(first);
      snprintf(p->e.why, WHY, "%s: the reference left %s[%" PRId64 "] "
               "unwritten (it followed the output's poison from one run to "
               "the next)", ctx, p->e.spec->outputs[j].name, u);
      return KF_OUTCOME_SPEC_ERROR;
    }
  }
  kf_harness_cmp acc = {0};
  char why[WHY];
  oc = kf_harness__compare(p->e.spec, L, again, a, ctx, &acc, why, WHY);
  free(first);
  if (!oc) return 0;
  if (oc == KF_OUTCOME_SPEC_ERROR) {
    /* its first run's outputs were wrong in themselves (a NaN the spec
     * does not allow, an element left unwritten): no candidate's judge
     * had seen them yet when every candidate of this case failed first */
    kf_strlcpy(p->e.why, why, WHY);
    return oc;
  }
  snprintf(p->e.why, WHY, "the reference disagrees with itself: run twice "
           "on the same inputs (its workspace filled with other bytes), "
           "its second run is not within the spec's tolerance of its "
           "first (%.1500s) -- it reads memory it did not write, or a "
           "clock; no candidate can be judged against it", why);
  return KF_OUTCOME_SPEC_ERROR;
}

/* The reference's outputs of the case just run, as one digest. */
static uint64_t ref_digest(const pl *p, const kf_harness_layout *L) {
  const unsigned char *want[KF_HARNESS_MAX_T];
  outputs_of(p->sides[0], L, want);
  uint64_t d = 0;
  for (int j = 0; j < L->n_out; j++)
    d = d * 0x9E3779B97F4A7C15ull + kf_harness__digest(want[j], L->out_b[j]);
  return d;
}

static int do_verify(pl *p) {
  kf_harness__stage_begin(&p->st, "verify");
  const kf_spec *sp = p->e.spec;
  kf_harness__collect_dists(sp, p->dists, &p->n_dists);
  memset(&p->cmp, 0, sizeof p->cmp);
  int cases = 0, evidence = 0;
  unsigned evidence_outs = 0;
  /* check sizes, then each bench size that is not one of them; a
   * showdown re-verifies at the bench sizes only (its entries passed the
   * rest) */
  const kf_size *vs[KF_SPEC_MAX_SIZES + KF_SPEC_MAX_BENCH];
  int n_sizes = 0;
  for (int si = 0; si < sp->n_check_sizes; si++)
    vs[n_sizes++] = &sp->check_sizes[si];
  for (int bi = 0; bi < kf_spec_n_bench(sp); bi++) {
    const kf_size *bz = kf_spec_bench(sp, bi);
    bool checked = false;
    for (int si = 0; si < sp->n_check_sizes && !checked; si++)
      checked = same_size(p, &sp->check_sizes[si], bz);
    if (p->showdown || !checked) vs[n_sizes++] = bz;
  }
  int first = p->showdown ? sp->n_check_sizes : 0;
  /* at the bench size: the first distribution's reference outputs, and
   * whether another's differed (a problem whose timed computation
   * ignores its inputs is no problem: a constant kernel passes it) */
  uint64_t bench_d = 0;
  bool bench_varies = false;
  for (int si = first; si < n_sizes; si++) {
    const kf_size *sz = vs[si];
    /* the first bench size: the one whose outputs must vary */
    bool at_bench = same_size(p, sz, &sp->bench_size);
    kf_harness_layout L;
    char szs[256];
    size_str(p, sz, szs, sizeof szs);
    int oc = make_layout(p, sz, &L);
    if (oc) return kf_harness__stage_end(&p->st, oc, p->e.why);
    if ((oc = prepare_all(p, &L, szs))) return stage_done(p, oc);
    for (int di = 0; di < p->n_dists; di++) {
      kf_side *act[MAX_SIDES];
      if (!active(p, act)) return stage_done(p, 0);
      char ctx[400];
      snprintf(ctx, sizeof ctx, "size %s, distribution %s", szs,
               kf_dist_name((kf_dist)p->dists[di]));
      kf_harness_cmp acc = {0};
      oc = run_case(p, &L, p->dists[di], TAG_VERIFY,
                    (uint64_t)si << 8 | (uint64_t)di, ctx, &acc);
      if (oc) return stage_done(p, oc);
      /* past the deadline the case was not run: nothing of it to look at
       * (the self-check below would run the reference on inputs never
       * drawn) */
      if (p->deadline_hit) return stage_done(p, 0);
      /* digested before the self-check below runs it again */
      if (at_bench && !bench_varies && p->n_dists > 1) {
        uint64_t d = ref_digest(p, &L);
        if (di == 0) bench_d = d;
        else bench_varies = d != bench_d;
      }
      /* the reference judged against itself, at each size's first case */
      if (di == 0 &&
          (oc = ref_self_check(p, &L, TAG_VERIFY,
                               (uint64_t)si << 8 | (uint64_t)di, ctx)))
        return kf_harness__stage_end(&p->st, oc, p->e.why);
      if (acc.max_abs > p->cmp.max_abs) p->cmp.max_abs = acc.max_abs;
      if (acc.max_rel > p->cmp.max_rel) p->cmp.max_rel = acc.max_rel;
      cases++;
      evidence += acc.evidence;
      evidence_outs |= acc.evidence_outs;
    }
  }
  kf_side *act[MAX_SIDES];
  if (active(p, act) && !evidence) {
    snprintf(p->e.why, WHY, "none of the %d correctness cases has a "
             "finite expected output outside the tolerance around zero "
             "(every one within it, or NaN or infinite): an all-zeros "
             "kernel would pass, or nothing can be compared; the spec "
             "needs sizes or distributions with larger, finite outputs",
             cases);
    return kf_harness__stage_end(&p->st, KF_OUTCOME_SPEC_ERROR, p->e.why);
  }
  /* per output too: a second output always within the tolerance of zero
   * (a mean of normal draws beside the tensor it summarises) let a kernel
   * writing zeros there pass (red team, 2026-11-30) */
  for (int j = 0; active(p, act) && j < sp->n_outputs; j++) {
    if (evidence_outs >> j & 1) continue;
    snprintf(p->e.why, WHY, "output '%s' is within the tolerance around "
             "zero (or NaN or infinite) in every one of the %d correctness "
             "cases: a kernel writing zeros there would pass, so it is never "
             "checked; the spec needs sizes or distributions where it is "
             "larger, or a tighter atol for it", sp->outputs[j].name, cases);
    return kf_harness__stage_end(&p->st, KF_OUTCOME_SPEC_ERROR, p->e.why);
  }
  if (active(p, act) && p->n_dists > 1 && !bench_varies) {
    char szs[256];
    size_str(p, &sp->bench_size, szs, sizeof szs);
    snprintf(p->e.why, WHY, "the reference wrote the same outputs, byte for "
             "byte, for all %d input distributions at the bench size %s: "
             "they do not depend on the inputs, so a kernel that writes "
             "them without reading anything would pass and be timed; the "
             "spec needs a bench size whose outputs depend on the inputs",
             p->n_dists, szs);
    return kf_harness__stage_end(&p->st, KF_OUTCOME_SPEC_ERROR, p->e.why);
  }
  snprintf(p->facts, sizeof p->facts, "%d cases (%d sizes x %d "
           "distributions, the bench size%s included), %d far from zero; "
           "max abs err %.3g, max rel err %.3g", cases, n_sizes - first,
           p->n_dists, kf_spec_n_bench(sp) > 1 ? "s" : "", evidence,
           p->cmp.max_abs, p->cmp.max_rel);
  return stage_done(p, 0);
}

static int do_determinism(pl *p) {
  kf_harness__stage_begin(&p->st, "determinism");
  const kf_spec *sp = p->e.spec;
  const kf_backend *b = p->e.b;
  int best = 0;
  size_t best_total = 0;
  kf_harness_layout L;
  for (int si = 0; si < sp->n_check_sizes; si++) {
    if (make_layout(p, &sp->check_sizes[si], &L)) continue;
    size_t elems = 0;
    for (int j = 0; j < L.n_out; j++) elems += (size_t)L.out_n[j];
    for (int j = 0; j < L.n_in; j++) elems += (size_t)L.in_n[j];
    if (elems > best_total) {
      best_total = elems;
      best = si;
    }
  }
  const kf_size *sz = &sp->check_sizes[best];
  char szs[256], ctx[300];
  size_str(p, sz, szs, sizeof szs);
  snprintf(ctx, sizeof ctx, "size %s", szs);
  int oc = make_layout(p, sz, &L);
  if (oc) return kf_harness__stage_end(&p->st, oc, p->e.why);
  if ((oc = prepare_all(p, &L, ctx))) return stage_done(p, oc);
  kf_side *act[MAX_SIDES];
  int na = active(p, act);
  kf_call c0 = {.L = &L, .size = sz, .cold = is_bench(p, sz),
                .ws_poison = ws_fill(p, TAG_DETERMINISM, 0), .ctx = ctx};
  if ((oc = arm_all(p, act, na, &c0))) return stage_done(p, oc);
  kf_gen g;
  if ((oc = make_gen(p, &L, p->dists[0], TAG_DETERMINISM, 0, &g)))
    return kf_harness__stage_end(&p->st, oc, p->e.why);
  if ((oc = b->gen(&p->e, act, na, &g))) {
    for (int i = 0; i < na; i++) failed(p, act[i], oc, ctx);
    return stage_done(p, 0);
  }
  kf_harness_region rg[KF_HARNESS_MAX_T];
  int nr = kf_harness__output_regions(&L, rg);
  size_t out_bytes = 0;
  for (int j = 0; j < L.n_out; j++) out_bytes += L.out_b[j];
  unsigned char *first = malloc(out_bytes ? out_bytes : 1);
  if (!first)
    return kf_harness__stage_end(&p->st, KF_OUTCOME_INFRA_ERROR,
                                 "out of memory");
  for (int i = 0; i < na; i++) {
    kf_side *s = act[i];
    kf_call c = c0;
    uint64_t t;
    /* run 1, its outputs copied out; run 2 gets the buffers poisoned
     * again by the call, so it cannot read run 1's results */
    if ((oc = side_call(p, s, &c, &t)) || (oc = side_fetch(p, s, rg, nr))) {
      failed(p, s, oc, ctx);
      continue;
    }
    const unsigned char *a[KF_HARNESS_MAX_T], *bb[KF_HARNESS_MAX_T];
    outputs_of(s, &L, bb);
    size_t o = 0;
    /* ...and run 1's results leave every image the runner can see: on
     * CUDA the host image the outputs were downloaded into is mapped in
     * the runner's process, where run 2's host code could copy them back
     * (e). */
    for (int j = 0; j < L.n_out; j++) {
      memcpy(first + o, bb[j], L.out_b[j]);
      memset(s->map + L.out_off[j],
             kf_harness__poison_byte(sp->outputs[j].dtype), L.out_b[j]);
      a[j] = first + o;
      o += L.out_b[j];
    }
    c.ws_poison ^= 0xFF; /* a kernel that reads its workspace unwritten
                            differs between the runs */
    c.fresh = true;      /* and one that reads what run 1 left on the
                            device (registers the scrub misses) finds
                            nothing: another process */
    kf_probe pr;
    if ((oc = side_call(p, s, &c, &t)) || (oc = side_fetch(p, s, rg, nr)) ||
        (oc = side_probe(p, s, &L, &pr))) {
      failed(p, s, oc, ctx);
      continue;
    }
    if (pr.bad != UINT64_MAX) {
      oc = kf_harness__guard_reason(sp, &L, pr.bad, ctx, p->e.why, WHY);
      failed(p, s, oc, NULL);
      continue;
    }
    outputs_of(s, &L, bb);
    if ((oc = kf_harness__compare_bits(sp, &L, a, bb, ctx, p->e.why, WHY)))
      failed(p, s, oc, NULL);
  }
  free(first);
  snprintf(p->facts, sizeof p->facts, "%s, two runs bit for bit", ctx);
  return stage_done(p, 0);
}

/* One repetition of the time stage: fresh inputs (tag, n), every side
 * armed, then timed in turn (order rotated by n), then judged.  ts[k] gets
 * side k's time.  Returns the reference's failure, else 0. */
static int one_rep(pl *p, const kf_harness_layout *L, int tag, int n,
                   int dist, bool record) {
  const kf_backend *b = p->e.b;
  kf_side *act[MAX_SIDES];
  int na = active(p, act);
  kf_side *all[MAX_SIDES];
  all[0] = p->sides[0];
  memcpy(all + 1, act, (size_t)na * sizeof *act);
  int ns = na + 1;
  char szs[256], ctx[400];
  size_str(p, &L->size, szs, sizeof szs);
  snprintf(ctx, sizeof ctx, "%s %d at size %s, distribution %s",
           record ? "timed run" : "warm-up", n, szs,
           kf_dist_name((kf_dist)dist));
  int doc = past_deadline(p, ctx);
  if (doc || p->deadline_hit) return doc;
  kf_call c = {.L = L, .size = &L->size, .timed = true,
               .ws_poison = ws_fill(p, tag, (uint64_t)n), .ctx = ctx};
  bool each = p->e.draw_per_side;
  int oc = each ? 0 : arm_all(p, all, ns, &c);
  if (oc) return oc;
  uint64_t ph0 = kf_now_ns();
  kf_gen g;
  if ((oc = make_gen(p, L, dist, tag, (uint64_t)n, &g))) return oc;
  for (int k = 0; k < ns; k++) {
    all[k]->wall_ns = 0;
    all[k]->wall_on = !each;
  }
  if (!each && (oc = b->gen(&p->e, all, ns, &g)))
    return failed(p, all[0], oc, ctx);
  uint64_t ph1 = kf_now_ns();
  uint64_t t[MAX_SIDES] = {0};
  kf_probe pr[MAX_SIDES];
  for (int k = 0; k < ns; k++) {
    int idx = (k + n) % ns;
    kf_side *s = all[idx];
    if (s->oc) continue;
    memset(s->t_base, 0, sizeof s->t_base);
    oc = each && b->arm ? side_arm(p, s, &c) : 0;
    s->wall_on = true;
    if (each && !oc) oc = b->gen(&p->e, &s, 1, &g);
    if (oc || (oc = side_call(p, s, &c, &t[idx]))) {
      if ((oc = failed(p, s, oc, ctx))) return oc;
      continue;
    }
    /* drawn per side: its outputs fetched right after its call, before
     * the next side's commands */
    if (each && record && (oc = collect(p, &s, 1, L, &pr[idx], ctx)))
      return oc;
  }
  for (int k = 0; k < ns; k++) all[k]->wall_on = false;
  /* a warm-up's outputs are not judged: nothing of it is timed, and its
   * inputs are never drawn again */
  if (!record) return 0;
  p->ph_ns[0] += ph1 - ph0;
  p->ph_ns[1] += kf_now_ns() - ph1;
  if (!each && (oc = collect(p, all, ns, L, pr, ctx))) return oc;
  for (int k = 1; k < ns; k++) {
    kf_side *s = all[k];
    if (s->oc) continue;
    kf_harness_cmp acc = {0};
    if ((oc = judge(p, s, L, &pr[0], &pr[k], ctx, &acc))) return oc;
  }
  for (int k = 0; k < ns; k++) {
    if (!all[k]->oc && all[k]->n_t < MAX_REPS) {
      all[k]->w[all[k]->n_t] = all[k]->wall_ns;
      all[k]->t[all[k]->n_t++] = t[k];
    }
    for (int b = 0; b < KF_BASES; b++)
      if (!all[k]->oc && all[k]->t_base[b] && all[k]->n_tb[b] < MAX_REPS)
        all[k]->tb[b][all[k]->n_tb[b]++] = all[k]->t_base[b];
  }
  return 0;
}

/* Every candidate's claimed times held to the eval's own clock of its
 * commands, where the backend keeps one: a runner taken over by its
 * candidate can claim any time (tests/exploits/cuda/forge_reply.cu
 * halved its own), but it cannot slow the eval's clock, and the
 * harness's part of those commands is measured on the reference. */
static void hold_to_wall(pl *p) {
  kf_side *r = p->sides[0];
  for (int i = 1; i < p->n; i++) {
    kf_side *s = p->sides[i];
    if (s->oc || s->n_t != r->n_t) continue;
    double claim = kf_harness__median(s->t, 0, s->n_t, p->tmp);
    kf_harness_wall wb;
    double ex = kf_harness__wall_bound(r->t, r->w, r->n_t, s->t, s->w,
                                       s->n_t, p->tmp, &wb);
    if (wb.slack > 0)
      kf_log(KF_LOG_INFO, "%s: the eval's clock of its commands less its "
             "claim is %.1f us a repetition, the reference's %.1f us (the "
             "repetitions' differences deviate by %.1f us); allowed %.1f "
             "us more", s->who, wb.part / 1e3, wb.ref_part / 1e3,
             wb.mad / 1e3, wb.slack / 1e3);
    if (ex <= 0) continue;
    double now = kf_harness__median(s->t, 0, s->n_t, p->tmp);
    size_t l = strlen(s->note);
    snprintf(s->note + l, sizeof s->note - l, "%sits runner's claimed times "
             "(median %.0f ns) fell %.0f ns a call short of the eval's own "
             "clock of its commands, beyond the harness's part measured on "
             "the reference: charged by that clock (median %.0f ns)",
             l ? "; " : "", claim, ex, now);
    kf_log(KF_LOG_WARN, "%s: %s", s->who, s->note + l + (l ? 2 : 0));
  }
}

/* Repetitions until every side is stable (or the budget is spent); base
 * sets the timed size's keys apart from another's. */
static int time_loop(pl *p, const kf_harness_layout *L, int tag, int base,
                     int min_reps) {
  for (int i = 0; i < p->n; i++) {
    p->sides[i]->n_t = 0;
    memset(p->sides[i]->n_tb, 0, sizeof p->sides[i]->n_tb);
  }
  memset(p->ph_ns, 0, sizeof p->ph_ns);
  uint64_t budget = p->budget_ms;
  uint64_t t0 = kf_now_ms();
  int n = 0;
  for (; n < MAX_REPS; n++) {
    int dist = p->dists[n % p->n_dists];
    int oc = one_rep(p, L, tag, base + n, dist, true);
    if (oc) return oc;
    kf_side *act[MAX_SIDES];
    if (!active(p, act)) return 0;
    int m = n + 1;
    uint64_t el = kf_now_ms() - t0;
    bool stable = m >= min_reps;
    for (int i = 0; i < p->n && stable; i++) {
      kf_side *s = p->sides[i];
      if (!s->oc) stable = kf_harness__stable(s->t, s->n_t, p->tmp);
    }
    if (stable || (m >= min_reps && el > budget) ||
        (m >= 3 && el > 20 * budget)) /* very slow calls */
      break;
  }
  hold_to_wall(p);
  p->reps = n + 1 > MAX_REPS ? MAX_REPS : n + 1;
  p->timed_dists = p->reps < p->n_dists ? p->reps : p->n_dists;
  return 0;
}

/* Roofline of every active candidate; TOO_FAST ones fail (final) or are
 * marked oc -1 for another look.  Returns how many were too fast. */
static int roofline(pl *p, const kf_harness_layout *L, bool final) {
  int n_fast = 0;
  for (int i = 1; i < p->n; i++) {
    kf_side *s = p->sides[i];
    if (s->oc || !s->n_t) continue;
    double med = kf_harness__median(s->t, 0, s->n_t, p->tmp);
    kf_harness_roof r;
    kf_harness__roofline(p->e.spec, &L->size, med, p->ceil_gbps,
                         p->ceil_gflops, p->e.b->roof_factor, &r);
    if (!r.too_fast) continue;
    char szs[256];
    size_str(p, &L->size, szs, sizeof szs);
    if (r.ceil_gbps > 0 && r.gbps > p->e.b->roof_factor * r.ceil_gbps)
      snprintf(p->e.why, WHY, "size %s: moving at least %" PRId64 " bytes in "
               "%.0f ns is %.4g GB/s, above %.2f x the best measured "
               "bandwidth of %.4g GB/s%s; either the candidate skips work "
               "or the spec's bytes expression claims more than a kernel "
               "must move (the reference, slower, stayed under)", szs,
               r.bytes, med, r.gbps, p->e.b->roof_factor, r.ceil_gbps,
               p->fp_gbps > 0 ? " (the worker's ceilings or the rate at "
                                "this footprint, whichever is higher)"
                              : "");
    else
      snprintf(p->e.why, WHY, "size %s: %" PRId64 " FLOPs in %.0f ns is "
               "%.4g GFLOP/s, above %.2f x the measured peak of %.4g "
               "GFLOP/s; either the candidate skips work or the spec's "
               "flops expression claims more than a kernel must do", szs,
               r.flops, med, r.gflops, p->e.b->roof_factor, p->ceil_gflops);
    if (final) failed(p, s, KF_OUTCOME_TOO_FAST, NULL);
    else s->oc = -1; /* retimed below */
    n_fast++;
  }
  return n_fast;
}

/* The reference against the same floor, before any candidate is failed
 * by it: when the reference too is faster than the ceilings allow, the
 * spec's bytes or flops claim more than any kernel does (a problem
 * written outside the repository multiplied bytes by 1e6 and every
 * honest candidate was too_fast: red team, 2026-11-30) -- or the
 * ceilings are wrong; neither is the candidate's doing.  True with why. */
static bool ref_beats_floor(pl *p, const kf_harness_layout *L) {
  kf_side *r = p->sides[0];
  if (!r->n_t) return false;
  double med = kf_harness__median(r->t, 0, r->n_t, p->tmp);
  kf_harness_roof rf;
  kf_harness__roofline(p->e.spec, &L->size, med, p->ceil_gbps,
                       p->ceil_gflops, p->e.b->roof_factor, &rf);
  if (!rf.too_fast) return false;
  char szs[256];
  size_str(p, &L->size, szs, sizeof szs);
  snprintf(p->e.why, WHY, "size %s: the reference itself, at %.0f ns, is "
           "%.4g GB/s and %.4g GFLOP/s by the spec's bytes (%" PRId64 ") and "
           "flops (%" PRId64 "), above %.2f x the measured ceilings (%.4g "
           "GB/s, %.4g GFLOP/s): the spec claims more work than is done, or "
           "the ceilings are wrong", szs, med, rf.gbps, rf.gflops, rf.bytes,
           rf.flops, p->e.b->roof_factor, p->ceil_gbps, p->ceil_gflops);
  return true;
}

/* Candidates marked by roofline(p, L, false) back to active. */
static void unmark(pl *p) {
  for (int i = 1; i < p->n; i++)
    if (p->sides[i]->oc == -1) p->sides[i]->oc = 0;
}

/* The worker's ceilings were measured far beyond every cache; a layout
 * that fits in one may honestly beat them.  The backend measures the rate
 * at this layout's footprint, caches as a timed call finds them, now (no
 * runner is working), and the floor takes the larger.  Measured only when
 * a time beat the worker's ceilings: it costs a few cache flushes. */
static void footprint_ceiling(pl *p, const kf_harness_layout *L) {
  if (!p->e.b->footprint_gbps || p->worker_gbps <= 0) return;
  double g = p->e.b->footprint_gbps(&p->e, kf_harness__footprint(L));
  if (g > p->fp_gbps) p->fp_gbps = g;
  p->ceil_gbps = kf_harness__ceiling_for(p->worker_gbps, p->fp_gbps);
  kf_log(KF_LOG_INFO, "bandwidth at the %zu-byte footprint: %.2f GB/s "
         "(worker's ceiling %.2f GB/s)", kf_harness__footprint(L), g,
         p->worker_gbps);
}

/* A side timed at this share of the worker's copy ceiling or more gets
 * that ceiling measured again (recheck_stream).  Below it nothing is
 * measured: a ceiling measured at half its worth then leaves the
 * fraction under 1 -- and under the default target of 0.95 -- but a
 * campaign whose target is below this share is not protected (the
 * harness does not know the campaign's target). */
#define RECHECK_SHARE 0.5

/* The worker measured its ceilings once, at its start, perhaps while the
 * machine was busy.  Load only slows a measurement, so a ceiling is right
 * or too low, never too high, and a low one makes every roofline fraction
 * the store derives from it (floor bytes / copy ceiling / time) too high:
 * high enough to end a campaign on "target roofline reached" after one
 * slow kernel.  So when a side claims RECHECK_SHARE of the worker's copy
 * ceiling or more, the ceiling is measured again now, by the worker's own
 * code with no runner working, and the result carries it (stream_gbps):
 * the store divides by the larger of the two.  Only ever lowers a
 * fraction; costs a few hundred ms of streaming when it runs. */
static void recheck_stream(pl *p, const kf_harness_layout *L,
                           kf_side **act, int n) {
  const kf_harness_eval_opts *o = p->e.o;
  if (!p->e.b->stream_gbps || o->copy_gbps <= 0) return;
  double claim = 0;
  for (int i = 0; i < n; i++) {
    double m, sp;
    kf_harness__stats(act[i]->t, act[i]->n_t, p->tmp, &m, &sp);
    kf_harness_roof rf;
    kf_harness__roofline(p->e.spec, &L->size, m, p->ceil_gbps,
                         p->ceil_gflops, p->e.b->roof_factor, &rf);
    if (rf.gbps > claim) claim = rf.gbps;
  }
  if (claim < RECHECK_SHARE * o->copy_gbps) return;
  p->stream_gbps = p->e.b->stream_gbps(&p->e);
  kf_log(KF_LOG_INFO, "%.3g GB/s is %.0f%% of the worker's copy ceiling "
         "(%.3g GB/s): measured again now, %.3g GB/s", claim,
         100 * claim / o->copy_gbps, o->copy_gbps, p->stream_gbps);
}

/* The time stage at bench size bi: warm-ups, repetitions until stable,
 * the roofline's floor; each active side's median there added to p->acc,
 * and what was seen to facts.  0, or the stage's outcome. */
static int time_at(pl *p, int bi, char *facts, size_t flen) {
  const kf_spec *sp = p->e.spec;
  const kf_harness_eval_opts *o = p->e.o;
  const kf_size *bz = kf_spec_bench(sp, bi);
  /* the keys of size bi's draws: those of a single bench size for the
   * first, apart from every other's for the rest */
  int base = bi << 16;
  kf_harness_layout L;
  char szs[256];
  size_str(p, bz, szs, sizeof szs);
  int oc = make_layout(p, bz, &L);
  if (oc) return kf_harness__stage_end(&p->st, oc, p->e.why);
  if ((oc = prepare_all(p, &L, szs))) return stage_done(p, oc);
  /* the ceilings of this size: a cache-resident one may raise them for
   * itself, never for another */
  p->ceil_gbps = p->worker_gbps;
  p->fp_gbps = 0;
  /* warm-up: module loads, first launches, page-in; checked, not timed */
  for (int w = 0; w < WARM_REPS; w++)
    if ((oc = one_rep(p, &L, TAG_WARM, base + w, p->dists[w % p->n_dists],
                      false)))
      return stage_done(p, oc);
  int min_reps = p->min_reps > 0 ? p->min_reps
                 : o->min_reps > 0 ? o->min_reps
                 : p->showdown ? SHOWDOWN_MIN_REPS : p->e.b->min_reps;
  if ((oc = time_loop(p, &L, TAG_TIME, base, min_reps)))
    return stage_done(p, oc);
  /* a time faster than the ceilings allow may be load on the machine
   * that slowed the ceilings' measurement or this one: timed again on
   * fresh inputs before it is believed, and never a permanent verdict */
  if (roofline(p, &L, false)) {
    /* beating the worker's ceilings: first the ceiling this footprint
     * allows (a cache-resident problem), then, for what is still too
     * fast, fresh times and the footprint measured once more */
    p->timing_dependent = true;
    unmark(p);
    footprint_ceiling(p, &L);
    if (roofline(p, &L, false)) {
      unmark(p);
      kf_log(KF_LOG_INFO, "faster than the roofline allows: timing again");
      if ((oc = time_loop(p, &L, TAG_RETIME, base, min_reps)))
        return stage_done(p, oc);
      footprint_ceiling(p, &L);
      if (ref_beats_floor(p, &L))
        return stage_done(p, failed(p, p->sides[0], KF_OUTCOME_TOO_FAST,
                                    NULL));
      roofline(p, &L, true);
    }
  }
  kf_side *act[MAX_SIDES];
  int n_act = active(p, act);
  if (!n_act) return 0;
  recheck_stream(p, &L, act, n_act);
  if (p->ceil_gbps > p->top_gbps) p->top_gbps = p->ceil_gbps;
  for (int i = 0; i < p->n; i++) {
    kf_side *s = p->sides[i];
    if (s->oc || !s->n_t) continue;
    double m, spr;
    kf_harness__stats(s->t, s->n_t, p->tmp, &m, &spr);
    kf_harness_roof rf;
    kf_harness__roofline(sp, &L.size, m, p->ceil_gbps, p->ceil_gflops,
                         p->e.b->roof_factor, &rf);
    if (m <= 0) continue; /* no time: never a mean over the sizes */
    p->acc[i].lt += log(m);
    p->acc[i].lgb += rf.gbps > 0 ? log(rf.gbps) : -INFINITY;
    p->acc[i].lgf += rf.gflops > 0 ? log(rf.gflops) : -INFINITY;
    if (spr > p->acc[i].sp) p->acc[i].sp = spr;
    if (!p->acc[i].n || s->n_t < p->acc[i].reps) p->acc[i].reps = s->n_t;
    p->acc[i].n++;
    /* torch.compile of the reference in each mode, timed beside it on
     * the same inputs (only where every recorded repetition has it) */
    for (int b = 0; b < KF_BASES; b++)
      if (s->n_tb[b] && s->n_tb[b] == s->n_t) {
        double bm, bs;
        kf_harness__stats(s->tb[b], s->n_tb[b], p->tmp, &bm, &bs);
        if (bm > 0) {
          p->acc[i].lb[b] += log(bm);
          p->acc[i].nb[b]++;
        }
      }
  }
  if (!p->timed_min || p->reps < p->timed_min) p->timed_min = p->reps;
  if (!p->dists_min || p->timed_dists < p->dists_min)
    p->dists_min = p->timed_dists;
  kf_side *r = p->sides[0], *c = act[0];
  double cm, cs, rm, rs;
  kf_harness__stats(c->t, c->n_t, p->tmp, &cm, &cs);
  kf_harness__stats(r->t, r->n_t, p->tmp, &rm, &rs);
  kf_harness_roof rf;
  kf_harness__roofline(sp, &L.size, cm, p->ceil_gbps, p->ceil_gflops,
                       p->e.b->roof_factor, &rf);
  int l = snprintf(facts, flen, "size %s: %s %.0f ns (spread "
                   "%.1f%%), reference %.0f ns (spread %.1f%%), %d "
                   "repetitions over %d distributions, fresh inputs each; "
                   "%.2f GB/s, %.2f GFLOP/s", szs, c->who, cm, cs * 100, rm,
                   rs * 100, p->reps, p->timed_dists, rf.gbps, rf.gflops);
  if (p->ceil_gbps > 0 && l > 0 && (size_t)l < flen)
    l += snprintf(facts + l, flen - (size_t)l, " (%.1f%% of "
                  "the best measured bandwidth %.0f GB/s)",
                  100 * rf.gbps / p->ceil_gbps, p->ceil_gbps);
  if (p->fp_gbps > 0 && l > 0 && (size_t)l < flen)
    l += snprintf(facts + l, flen - (size_t)l, "; faster than "
                  "the worker's %.3g GB/s, so the ceiling was measured at "
                  "this footprint (%zu bytes, caches as a timed call finds "
                  "them): %.3g GB/s", p->worker_gbps,
                  kf_harness__footprint(&L), p->fp_gbps);
  if (p->stream_gbps > 0 && l > 0 && (size_t)l < flen)
    l += snprintf(facts + l, flen - (size_t)l, "; the "
                  "worker's copy ceiling (%.3g GB/s) measured again beside "
                  "this timing: %.3g GB/s", p->e.o->copy_gbps,
                  p->stream_gbps);
  if (p->ceil_gbps <= 0 && p->ceil_gflops <= 0 && l > 0 && (size_t)l < flen)
    l += snprintf(facts + l, flen - (size_t)l, "; no ceilings "
                  "given: roofline not checked");
  for (int i = 0; i < 2; i++) {
    kf_side *s = i ? c : r;
    if (s->note[0] && l > 0 && (size_t)l < flen)
      l += snprintf(facts + l, flen - (size_t)l, "; %s: %s", s->who,
                    s->note);
  }
  if (l > 0 && (size_t)l < flen && p->reps > 0)
    snprintf(facts + l, flen - (size_t)l, "; per repetition: "
             "refresh %.1f ms, calls %.1f ms, fetch %.1f ms, compare %.1f ms",
             p->ph_ns[0] / 1e6 / p->reps, p->ph_ns[1] / 1e6 / p->reps,
             p->ph_ns[2] / 1e6 / p->reps, p->ph_ns[3] / 1e6 / p->reps);
  return 0;
}

/* Every bench size timed in turn, the budget shared; a side's time is
 * the geometric mean of its medians (side_time). */
static int do_time(pl *p) {
  kf_harness__stage_begin(&p->st, "time");
  const kf_spec *sp = p->e.spec;
  const kf_harness_eval_opts *o = p->e.o;
  int nb = kf_spec_n_bench(sp);
  p->worker_gbps = o->copy_gbps;
  if (o->read_gbps > p->worker_gbps) p->worker_gbps = o->read_gbps;
  if (o->write_gbps > p->worker_gbps) p->worker_gbps = o->write_gbps;
  p->ceil_gflops = o->gflops;
  p->stream_gbps = 0;
  p->top_gbps = 0;
  p->timed_min = p->dists_min = 0;
  memset(p->acc, 0, sizeof p->acc);
  p->budget_ms = (uint64_t)o->time_budget_ms / (uint64_t)nb;
  if (!p->budget_ms) p->budget_ms = 1;
  char *one = malloc(WHY);
  if (!one)
    return kf_harness__stage_end(&p->st, KF_OUTCOME_INFRA_ERROR,
                                 "out of memory");
  p->facts[0] = '\0';
  size_t l = 0;
  for (int bi = 0; bi < nb; bi++) {
    one[0] = '\0';
    int oc = time_at(p, bi, one, WHY);
    if (oc) {
      free(one);
      return oc;
    }
    kf_side *act[MAX_SIDES];
    if (!active(p, act)) break;
    if (l < sizeof p->facts)
      l += (size_t)snprintf(p->facts + l, sizeof p->facts - l, "%s%s",
                            bi ? "; " : "", one);
  }
  free(one);
  /* the reported ceiling: the highest any timed size used */
  if (p->top_gbps > 0) p->ceil_gbps = p->top_gbps;
  p->reps = p->timed_min;
  p->timed_dists = p->dists_min;
  kf_side *act[MAX_SIDES];
  if (nb > 1 && active(p, act) && l < sizeof p->facts) {
    double cm, cs, rm, rs;
    int cr, rr;
    if (side_time(p, act[0], &cm, &cs, &cr) &&
        side_time(p, p->sides[0], &rm, &rs, &rr))
      snprintf(p->facts + l, sizeof p->facts - l, "; over the %d bench "
               "sizes, their medians' geometric mean: %s %.0f ns, reference "
               "%.0f ns (%.3fx)", nb, act[0]->who, cm, rm, rm / cm);
  }
  return stage_done(p, 0);
}

static bool stop_here(const pl *p) {
  const char *sa = p->e.o->stop_after;
  return sa && p->st.n && !strcmp(sa, p->st.names[p->st.n - 1]);
}

/* The stages in order; the first that fails ends it. */
static int run_stages(pl *p) {
  int (*const stages[])(pl *) = {do_compile, do_link, do_load, do_verify,
                                 do_determinism, do_time};
  p->t0_ns = kf_now_ns();
  for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
    if (stages[i] == do_determinism && !p->e.spec->deterministic) continue;
    int oc = stages[i](p);
    if (oc) return oc;
    if (stop_here(p)) {
      kf_log(KF_LOG_INFO, "stopped after %s (--stop-after)",
             p->st.names[p->st.n - 1]);
      return -1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------ request */

/* Picks the backend for (language, spec); NULL with why. */
static const kf_backend *pick_backend(pl *p, const char *language) {
  const char *be = p->e.spec->backend;
  if (!language || !*language)
    language = !strcmp(be, "cuda")    ? "cuda"
               : !strcmp(be, "torch") ? "python"
                                      : "c";
  const kf_backend *all[] = {&kf_harness_cpu_backend,
                             &kf_harness_cuda_backend,
                             &kf_harness_torch_backend};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (strcmp(all[i]->language, language)) continue;
    if (strcmp(all[i]->name, be)) {
      snprintf(p->e.why, WHY, "language '%.32s' for a '%s' problem",
               language, be);
      return NULL;
    }
    return all[i];
  }
  snprintf(p->e.why, WHY, "language '%.32s': this harness runs c, cuda and "
           "python candidates", language);
  return NULL;
}

/* Shared request checks: the spec parses and has what a run needs.  0 or
 * SPEC_ERROR with why. */
static int open_request(pl *p, const ProtobufCBinaryData *spec_json,
                        const char *ref_src, const char *language) {
  char err[512];
  if (!ref_src || !*ref_src) {
    kf_strlcpy(p->e.why, "the request has no reference source", WHY);
    return KF_OUTCOME_SPEC_ERROR;
  }
  if (kf_spec_parse((const char *)spec_json->data, spec_json->len, NULL,
                    &p->e.spec, err, sizeof err)) {
    snprintf(p->e.why, WHY, "problem spec: %s", err);
    return KF_OUTCOME_SPEC_ERROR;
  }
  if (p->e.spec->n_check_sizes < 1 || p->e.spec->n_outputs < 1) {
    kf_strlcpy(p->e.why, "the spec has no check sizes or no outputs", WHY);
    return KF_OUTCOME_SPEC_ERROR;
  }
  if (!(p->e.b = pick_backend(p, language))) return KF_OUTCOME_SPEC_ERROR;
  p->e.cuda = !strcmp(p->e.b->name, "cuda");
  p->e.reference_source = ref_src;
  return 0;
}

static int add_knobs(pl *p, kf_side *s, Kernelfleet__Knob **k, size_t n) {
  if (n > KF_HARNESS_MAX_KNOBS) {
    snprintf(p->e.why, WHY, "more than %d knobs", KF_HARNESS_MAX_KNOBS);
    return KF_OUTCOME_SPEC_ERROR;
  }
  for (size_t i = 0; i < n; i++) {
    s->knobs[i].name = k[i]->name;
    s->knobs[i].value = k[i]->value;
  }
  s->n_knobs = (int)n;
  return 0;
}

static pl *pl_new(const kf_harness_eval_opts *o, const char *mode) {
  pl *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->tmp = calloc(2 * MAX_REPS, sizeof *p->tmp);
  if (!p->tmp) {
    free(p);
    return NULL;
  }
  p->e.o = o;
  p->e.mode = mode;
  return p;
}

static void pl_free(pl *p) {
  sides_free(p);
  if (p->e.b && p->e.bes) p->e.b->close(&p->e);
  kf_harness__workdir_remove(&p->e.wd);
  kf_spec_free(p->e.spec);
  free(p->tmp);
  free(p);
}

static void identity(pl *p, char *build, size_t bl, char *tc, size_t tl) {
  if (kf_harness__build_id(build, bl) != 0) build[0] = '\0';
  if (p->e.toolchain[0]) kf_strlcpy(tc, p->e.toolchain, tl);
  else kf_harness__toolchain(p->e.cuda, tc, tl);
}

/* ------------------------------------------------------------ profile */

/* The profiling pass (docs/profiling.md): after every stage passed, on
 * its own, never an outcome.  The request says whether ("on") and below
 * which median (the campaign's top K; 0: any). */
static void do_profile(pl *p, kf_side *c, const Kernelfleet__EvalRequest *req,
                       double median, kf_prof *out) {
  uint64_t t0 = kf_now_ms();
  kf_prof_init(out, KF_PROF_SKIPPED);
  if (req->profile_below_ns > 0 && !(median < req->profile_below_ns)) {
    snprintf(out->reason, sizeof out->reason, "not among the class's best "
             "(median %.0f ns, the campaign profiles those below %.0f ns)",
             median, req->profile_below_ns);
    return;
  }
  if (!p->e.b->profile) {
    out->status = KF_PROF_UNAVAILABLE;
    snprintf(out->reason, sizeof out->reason, "the %s backend has no "
             "hardware profiler", p->e.b->name);
    return;
  }
  const kf_spec *sp = p->e.spec;
  kf_harness_layout L;
  kf_gen g;
  char szs[256], ctx[320];
  size_str(p, &sp->bench_size, szs, sizeof szs);
  snprintf(ctx, sizeof ctx, "profiled run at size %s", szs);
  if (make_layout(p, &sp->bench_size, &L) ||
      make_gen(p, &L, p->dists[0], TAG_PROFILE, 0, &g)) {
    out->status = KF_PROF_FAILED;
    snprintf(out->reason, sizeof out->reason, "no layout for the profiled "
             "run: %.200s", p->e.why);
    return;
  }
  kf_call call = {.L = &L, .size = &L.size, .timed = false,
                  .ws_poison = ws_fill(p, TAG_PROFILE, 0), .ctx = ctx};
  p->e.b->profile(&p->e, c, &g, &call, out);
  /* what the profiler said may be anything: display-safe, and fitting
   * the fields the coordinator accepts (profile.h) */
  char tmp[sizeof out->reason];
  kf_text_sanitize(out->reason, strnlen(out->reason, sizeof out->reason),
                   tmp, sizeof out->reason, 0);
  memcpy(out->reason, tmp, sizeof out->reason);
  kf_text_sanitize(out->kernel, strnlen(out->kernel, sizeof out->kernel),
                   tmp, sizeof out->kernel, 0);
  memcpy(out->kernel, tmp, sizeof out->kernel);
  uint64_t ms = kf_now_ms() - t0;
  out->profile_ms = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
  kf_log(KF_LOG_INFO, "profile: %s in %" PRIu64 " ms%s%s",
         kf_prof_status_name(out->status), ms, out->reason[0] ? ": " : "",
         out->reason);
}

/* --------------------------------------------------------------- eval */

int kf_harness_eval(const kf_harness_eval_opts *o, int in_fd, int out_fd) {
  pl *p = pl_new(o, "eval");
  if (!p) return KF_ENOMEM;
  uint64_t t0 = kf_now_ms();
  Kernelfleet__EvalResult res;
  kernelfleet__eval_result__init(&res);
  kf_prof prof;
  Kernelfleet__ProfileReport profpb;
  Kernelfleet__ProfileStall pstalls[KF_PROF_MAX_STALLS];
  Kernelfleet__ProfileStall *pstallp[KF_PROF_MAX_STALLS];
  unsigned char *buf = NULL;
  size_t len = 0;
  Kernelfleet__EvalRequest *req = NULL;
  if (kf_harness__read_msg(in_fd, MAX_REQUEST, &buf, &len) == 0)
    req = kernelfleet__eval_request__unpack(NULL, len, buf);
  free(buf);
  int oc = 0;
  if (!req) {
    kf_strlcpy(p->e.why, "malformed EvalRequest on stdin", WHY);
    oc = KF_OUTCOME_SPEC_ERROR;
  } else if (!req->source || !*req->source) {
    kf_strlcpy(p->e.why, "the request has no candidate source", WHY);
    oc = KF_OUTCOME_SPEC_ERROR;
  } else {
    oc = open_request(p, &req->problem_spec, req->reference_source,
                      req->language);
  }
  kf_side *c = NULL;
  if (!oc) {
    p->seed = req->seed;
    if (!side_new(p, "reference", true) || !(c = side_new(p, "candidate", false)))
      oc = KF_OUTCOME_INFRA_ERROR;
  }
  if (!oc) {
    p->sides[0]->source = req->reference_source;
    c->source = req->source;
    c->candidate_id = req->candidate_id;
    oc = add_knobs(p, c, req->knobs, req->n_knobs);
  }
  if (oc) {
    kf_harness__stage_begin(&p->st, "request");
    kf_harness__stage_end(&p->st, oc, p->e.why);
  } else {
    kf_log(KF_LOG_INFO, "eval (%s): problem %s, candidate %" PRId64
           ", %zu knobs", p->e.b->name, p->e.spec->name, req->candidate_id,
           req->n_knobs);
    oc = run_stages(p);
    double pm, ps;
    int pr;
    if (!oc && c && req->profile && !strcmp(req->profile, "on") &&
        side_time(p, c, &pm, &ps, &pr)) {
      do_profile(p, c, req, pm, &prof);
      kf_prof_to_pb(&prof, &profpb, pstalls, pstallp);
      res.profile = &profpb;
    }
    if (p->e.b->idle && p->e.bes) p->e.b->idle(&p->e);
  }
  res.outcome = (Kernelfleet__Outcome)(oc > 0 ? oc : KF_OUTCOME_OK);
  res.stages = p->st.ptrs;
  res.n_stages = p->st.n;
  res.max_abs_err = p->cmp.max_abs;
  res.max_rel_err = p->cmp.max_rel;
  res.timing_dependent = p->timing_dependent &&
                         (oc == KF_OUTCOME_TOO_FAST || oc == 0);
  if (oc == KF_OUTCOME_TIMEOUT || p->deadline_hit)
    res.timing_dependent = true;
  if (c && c->n_res) {
    res.resources = c->res;
    res.n_resources = c->n_res;
  }
  double cm, cs, rm, rs;
  int cr, rr;
  if (!oc && c && side_time(p, c, &cm, &cs, &cr) &&
      side_time(p, p->sides[0], &rm, &rs, &rr)) {
    kf_side *r = p->sides[0];
    res.time_ns_median = cm;
    res.time_ns_spread = cs;
    res.ref_time_ns_median = rm;
    res.ref_time_ns_spread = rs;
    res.repetitions = (uint32_t)cr;
    res.timed_distributions = (uint32_t)p->timed_dists;
    double gbps, gflops, bm[KF_BASES];
    side_rates(p, c, &gbps, &gflops, bm);
    res.achieved_gbps = gbps;
    res.achieved_gflops = gflops;
    res.ceiling_gbps = p->ceil_gbps;
    res.stream_gbps = p->stream_gbps;
    /* the torch backend's reference is PyTorch eager, on this timer */
    if (!strcmp(p->e.b->name, "torch") && cm > 0) res.speedup_eager = rm / cm;
    /* torch.compile of the reference in each mode, timed beside it on
     * the same inputs (only where every recorded repetition has it, at
     * every timed size) */
    side_rates(p, r, &gbps, &gflops, bm);
    if (bm[KF_BASE_COMPILE] > 0) {
      res.compile_time_ns_median = bm[KF_BASE_COMPILE];
      res.speedup_compile = bm[KF_BASE_COMPILE] / cm;
    }
    if (bm[KF_BASE_TUNED] > 0) {
      res.max_autotune_time_ns_median = bm[KF_BASE_TUNED];
      res.speedup_max_autotune = bm[KF_BASE_TUNED] / cm;
    }
  }
  if (p->e.baselines[0]) res.baselines = p->e.baselines;
  char build[80] = "", tc[256] = "";
  if (p->e.b) {
    identity(p, build, sizeof build, tc, sizeof tc);
    res.harness_build = build;
    res.toolchain = tc;
  }
  kf_log(KF_LOG_INFO, "eval done: %s in %" PRIu64 " ms",
         kf_outcome_name(res.outcome), kf_now_ms() - t0);
  int rc = kf_harness__write_msg(&res.base, out_fd);
  pl_free(p);
  if (req) kernelfleet__eval_request__free_unpacked(req, NULL);
  return rc;
}

/* ----------------------------------------------------------- showdown */

int kf_harness_showdown(const kf_harness_eval_opts *o, int in_fd,
                        int out_fd) {
  pl *p = pl_new(o, "showdown");
  if (!p) return KF_ENOMEM;
  p->showdown = true;
  uint64_t t0 = kf_now_ms();
  Kernelfleet__ShowdownResult res;
  kernelfleet__showdown_result__init(&res);
  unsigned char *buf = NULL;
  size_t len = 0;
  Kernelfleet__ShowdownRequest *req = NULL;
  if (kf_harness__read_msg(in_fd, MAX_REQUEST, &buf, &len) == 0)
    req = kernelfleet__showdown_request__unpack(NULL, len, buf);
  free(buf);
  int oc = 0;
  if (!req) {
    kf_strlcpy(p->e.why, "malformed ShowdownRequest on stdin", WHY);
    oc = KF_OUTCOME_SPEC_ERROR;
  } else if (req->n_entries < 1 || req->n_entries > MAX_SIDES - 1) {
    snprintf(p->e.why, WHY, "a showdown takes 1 to %d entries, not %zu",
             MAX_SIDES - 1, req->n_entries);
    oc = KF_OUTCOME_SPEC_ERROR;
  } else {
    oc = open_request(p, &req->problem_spec, req->reference_source,
                      req->language);
  }
  if (!oc) {
    p->seed = req->seed;
    if (!side_new(p, "reference", true)) oc = KF_OUTCOME_INFRA_ERROR;
    else p->sides[0]->source = req->reference_source;
    for (size_t i = 0; !oc && i < req->n_entries; i++) {
      Kernelfleet__ShowdownEntry *en = req->entries[i];
      char who[48];
      snprintf(who, sizeof who, "candidate %" PRId64, en->candidate_id);
      kf_side *s = side_new(p, who, false);
      if (!s) {
        oc = KF_OUTCOME_INFRA_ERROR;
        break;
      }
      s->candidate_id = en->candidate_id;
      s->source = en->source;
      if (!en->source || !*en->source) {
        s->oc = KF_OUTCOME_SPEC_ERROR;
        kf_strlcpy(s->stage, "request", sizeof s->stage);
        kf_strlcpy(s->why, "entry without source", WHY);
      } else if (add_knobs(p, s, en->knobs, en->n_knobs)) {
        s->oc = KF_OUTCOME_SPEC_ERROR;
        kf_strlcpy(s->stage, "request", sizeof s->stage);
        kf_strlcpy(s->why, p->e.why, WHY);
      }
    }
    if (!oc && req->min_repetitions)
      p->min_reps = req->min_repetitions > MAX_REPS ? MAX_REPS
                                                    : (int)req->min_repetitions;
  }
  if (!oc) {
    kf_log(KF_LOG_INFO, "showdown (%s): problem %s, %zu entries",
           p->e.b->name, p->e.spec->name, req->n_entries);
    oc = run_stages(p);
    if (oc < 0) oc = 0;
    if (p->e.b->idle && p->e.bes) p->e.b->idle(&p->e);
  }
  res.outcome = (Kernelfleet__Outcome)(oc ? oc : KF_OUTCOME_OK);
  kf_harness__clean_why(p->e.why, p->e.why, sizeof p->e.why);
  for (int i = 1; i < p->n; i++)
    if (p->sides[i]->why)
      kf_harness__clean_why(p->sides[i]->why, p->sides[i]->why,
                            KF_HARNESS_WHY);
  res.reason = oc ? p->e.why : (char *)"";
  Kernelfleet__ShowdownTiming *tim = NULL, **tptr = NULL;
  int ne = p->n > 1 ? p->n - 1 : 0;
  if (ne) {
    tim = calloc((size_t)ne, sizeof *tim);
    tptr = calloc((size_t)ne, sizeof *tptr);
  }
  if (ne && (!tim || !tptr)) ne = 0;
  double rm = 0, rs = 0;
  int rr = 0;
  if (!oc && p->n && side_time(p, p->sides[0], &rm, &rs, &rr)) {
    res.ref_time_ns_median = rm;
    res.ref_time_ns_spread = rs;
    res.ref_repetitions = (uint32_t)rr;
  }
  for (int i = 0; i < ne; i++) {
    kf_side *s = p->sides[i + 1];
    Kernelfleet__ShowdownTiming *t = &tim[i];
    kernelfleet__showdown_timing__init(t);
    t->candidate_id = s->candidate_id;
    int soc = s->oc > 0 ? s->oc : oc;
    t->outcome = (Kernelfleet__Outcome)(soc ? soc : KF_OUTCOME_OK);
    t->stage = s->oc ? s->stage : (char *)"";
    t->reason = s->oc ? s->why : oc ? p->e.why : (char *)"";
    double cm, cs;
    int cr;
    if (!soc && side_time(p, s, &cm, &cs, &cr)) {
      t->time_ns_median = cm;
      t->time_ns_spread = cs;
      t->repetitions = (uint32_t)cr;
      double gbps, gflops, bm[KF_BASES];
      side_rates(p, s, &gbps, &gflops, bm);
      t->achieved_gbps = gbps;
      t->achieved_gflops = gflops;
      t->speedup = cm > 0 ? rm / cm : 0;
    }
    tptr[i] = t;
  }
  res.entries = tptr;
  res.n_entries = (size_t)ne;
  if (!oc) res.stream_gbps = p->stream_gbps;
  char build[80] = "", tc[256] = "";
  if (p->e.b) {
    identity(p, build, sizeof build, tc, sizeof tc);
    res.harness_build = build;
    res.toolchain = tc;
  }
  kf_log(KF_LOG_INFO, "showdown done: %s in %" PRIu64 " ms",
         kf_outcome_name(res.outcome), kf_now_ms() - t0);
  int rc = kf_harness__write_msg(&res.base, out_fd);
  free(tim);
  free(tptr);
  pl_free(p);
  if (req) kernelfleet__showdown_request__free_unpacked(req, NULL);
  return rc;
}
