/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/eval.c -- one evaluation, stage by stage.  Runs in the eval
 * process, which holds the secret seed and the expected outputs and never
 * runs candidate code.
 *
 *   compile      reference and candidate to .so (harness/compile.c)
 *   link         the candidate's imports and load-time code
 *                (harness/elfcheck.c)
 *   load         a runner each for reference and candidate
 *                (harness/runner.c), same code path; the reason lists the
 *                sandbox defenses that applied
 *   verify       every check size, and the bench size, x every
 *                distribution: fresh inputs from
 *                the seed, outputs poisoned, guards checked, compared with
 *                the reference; cases whose expected outputs an all-zeros
 *                kernel would match are not evidence, and a problem with
 *                no evidence at all is a SPEC_ERROR
 *   determinism  (spec.deterministic) two runs, bit for bit
 *   time         the bench size: fresh inputs every repetition rotated
 *                over 3 buffer sets, a cache flush by this process on the
 *                same core before every call, candidate and reference
 *                interleaved, each timed here around command/reply; every
 *                timed output is checked against the reference's output
 *                of the same run; then the roofline floor
 *
 * Memory layout (the same in both runners' memfds): each tensor's data is
 * preceded and followed by GUARD bytes of a position-dependent canary, and
 * everything that is not data is canary.  Output poison: all-ones bytes
 * for floats (a NaN no arithmetic produces), 0xA5 for integers.
 *
 * Failure reporting: a stage that fails fills its StageResult and the
 * EvalResult outcome and nothing later runs.  Machine failures (fork,
 * memfd) are INFRA_ERROR, which the worker retries.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"
#include "err.h"
#include "harness.h"
#include "internal.h"
#include "kernelfleet.pb-c.h"
#include "log.h"
#include "outcome.h"
#include "spec.h"
#include "util.h"

#define GUARD 4096
#define WHY KF_HARNESS_WHY
#define TIME_SETS KF_HARNESS_TIME_SETS
#define MIN_REPS 10
#define MAX_REPS 500
#define MAX_REQUEST (256u << 20)
#define MAX_SO (64u << 20)
/* The link check's yardstick (see do_compile). */
#define BASELINE_SRC                                                          \
  "#include \"kf_candidate.h\"\n"                                            \
  "int kf_launch(const kf_args *a) { return a == 0; }\n"
/* Roofline factors: CPU ceilings measured by `kf-harness ceilings` are
 * rough (one memcpy, one FMA loop), so only clearly impossible times fail. */
#define COPY_FACTOR 1.5
#define FLOPS_FACTOR 2.0

typedef kf_harness_layout layout;

typedef struct {
  const kf_harness_eval_opts *o;
  Kernelfleet__EvalRequest *req;
  kf_spec *spec;
  kf_harness_workdir wd;
  kf_harness_runner cand, ref;
  bool cand_up, ref_up;
  Kernelfleet__EvalResult res;
  kf_harness_stages st;
  char why[WHY];
  double max_abs, max_rel;
  unsigned char *flush;
  size_t flush_len;
  uint64_t flush_sink;
  int cpu;
  int dists[KF_DIST_COUNT]; /* distribution cases */
  int n_dists;
  size_t map_len;
  kf_size last_canary; /* layout currently canaried */
  int last_canary_kind;
} ev;

/* ------------------------------------------------------------ stages */

static int stage_begin(ev *e, const char *name) {
  return kf_harness__stage_begin(&e->st, &e->res, e->why, name);
}

/* Ends the current stage.  Returns outcome (0 = passed). */
static int stage_end(ev *e, int outcome, const char *reason) {
  return kf_harness__stage_end(&e->st, &e->res, outcome, reason);
}

/* ------------------------------------------------------------ layout */

static int make_layout(ev *e, const kf_size *size, int sets, int slots,
                       layout *L) {
  return kf_harness__make_layout(e->spec, size, sets, slots, GUARD, L, e->why,
                                 WHY);
}

static void fill_cmd(const layout *L, int set, int slot, kf_harness_cmd *c) {
  memset(c, 0, sizeof *c);
  c->n_inputs = L->n_in;
  c->n_outputs = L->n_out;
  kf_harness__fill_tdescs(L, set, slot, c->in, c->out);
  c->ws_off = L->ws_off;
  c->ws_bytes = L->ws_b;
}

static void fill_params(const ev *e, const kf_size *size, kf_harness_cmd *c) {
  c->n_params = e->spec->n_params;
  for (int i = 0; i < e->spec->n_params && i < KF_HARNESS_MAX_P; i++)
    c->params[i] = size->v[i];
}

/* Canary over the whole layout in both maps. */
static void prepare_maps(ev *e, const layout *L) {
  kf_harness__canary(e->cand.map, 0, L->total);
  kf_harness__canary(e->ref.map, 0, L->total);
}

static unsigned char poison_byte(int dt) {
  return kf_harness__is_float(dt) ? 0xFF : 0xA5;
}

static void poison_slot(ev *e, const layout *L, int slot) {
  for (int i = 0; i < L->n_out; i++) {
    memset(e->cand.map + L->out_off[slot][i], poison_byte(L->out_dt[i]),
           L->out_b[i]);
    memset(e->ref.map + L->out_off[slot][i], poison_byte(L->out_dt[i]),
           L->out_b[i]);
  }
  if (L->ws_b) {
    memset(e->cand.map + L->ws_off, 0x5A ^ slot, L->ws_b);
    memset(e->ref.map + L->ws_off, 0x5A ^ slot, L->ws_b);
  }
}

static int draw_inputs(ev *e, const layout *L, int set, uint64_t case_id,
                       int dist) {
  for (int i = 0; i < L->n_in; i++) {
    const kf_spec_tensor *t = &e->spec->inputs[i];
    int d = kf_harness__input_dist(t, dist);
    int64_t range;
    int oc = kf_harness__input_range(e->spec, t, d, &L->size, &range, e->why,
                                     WHY);
    if (oc) return oc;
    kf_harness_rng r;
    kf_harness__rng_seed(&r, e->req->seed, case_id, (uint64_t)d, (uint64_t)i);
    unsigned char *dst = e->cand.map + L->in_off[set][i];
    kf_harness__fill(dst, L->in_dt[i], L->in_n[i], d, range, &r);
    memcpy(e->ref.map + L->in_off[set][i], dst, L->in_b[i]);
  }
  return 0;
}

/* Guards around every region the candidate was handed. */
static int check_guards(ev *e, const layout *L, const char *ctx) {
  const unsigned char *m = e->cand.map;
  for (int side = 0; side < 3; side++) {
    int n = side == 0 ? L->n_in * L->sets
          : side == 1 ? L->n_out * L->slots : 1;
    for (int k = 0; k < n; k++) {
      uint64_t off;
      size_t b;
      const char *name, *kind;
      if (side == 0) {
        off = L->in_off[k / L->n_in][k % L->n_in];
        b = L->in_b[k % L->n_in];
        name = e->spec->inputs[k % L->n_in].name;
        kind = "input";
      } else if (side == 1) {
        off = L->out_off[k / L->n_out][k % L->n_out];
        b = L->out_b[k % L->n_out];
        name = e->spec->outputs[k % L->n_out].name;
        kind = "output";
      } else {
        off = L->ws_off;
        b = L->ws_b;
        name = "workspace";
        kind = "buffer";
      }
      size_t bad = kf_harness__canary_bad(m, off - GUARD, off);
      if (bad != off) {
        snprintf(e->why, WHY, "%s: wrote %zu bytes before the start of %s "
                 "'%s' (byte offset -%zu)", ctx, off - bad, kind, name,
                 off - bad);
        return KF_OUTCOME_OUT_OF_BOUNDS;
      }
      size_t end = off + b;
      bad = kf_harness__canary_bad(m, end, end + GUARD);
      if (bad != end + GUARD) {
        snprintf(e->why, WHY, "%s: wrote past the end of %s '%s' (%zu bytes "
                 "long; first bad byte at offset %zu)", ctx, kind, name, b,
                 bad - off);
        return KF_OUTCOME_OUT_OF_BOUNDS;
      }
    }
  }
  return 0;
}

/* Compares candidate outputs in cslot with the reference's in rslot.
 * *evidence: some expected output is far enough from zero that an
 * all-zeros kernel fails. */
static int compare(ev *e, const layout *L, int slot, const char *ctx,
                   bool *evidence) {
  const kf_spec *s = e->spec;
  for (int j = 0; j < L->n_out; j++) {
    int dt = L->out_dt[j];
    size_t es = kf_dtype_size(dt);
    unsigned char pb = poison_byte(dt);
    const unsigned char *pc = e->cand.map + L->out_off[slot][j];
    const unsigned char *pr = e->ref.map + L->out_off[slot][j];
    const char *name = s->outputs[j].name;
    int64_t n = L->out_n[j], unwritten = 0, first_unw = -1;
    for (int64_t i = 0; i < n; i++) {
      const unsigned char *a = pc + (size_t)i * es, *b = pr + (size_t)i * es;
      bool ap = true, bp = true;
      for (size_t k = 0; k < es; k++) {
        ap &= a[k] == pb;
        bp &= b[k] == pb;
      }
      if (bp) {
        snprintf(e->why, WHY, "%s: the reference left %s[%" PRId64 "] "
                 "unwritten", ctx, name, i);
        return KF_OUTCOME_SPEC_ERROR;
      }
      if (ap) {
        if (first_unw < 0) first_unw = i;
        unwritten++;
      }
    }
    if (unwritten) {
      snprintf(e->why, WHY, "%s: output '%s': %" PRId64 " of %" PRId64
               " elements never written (first at index %" PRId64 ")",
               ctx, name, unwritten, n, first_unw);
      return KF_OUTCOME_UNWRITTEN_OUTPUT;
    }
    const kf_tol *tol = &s->tol[dt];
    int64_t bad = 0, first = -1;
    double fg = 0, fw = 0, mabs = 0, mrel = 0;
    for (int64_t i = 0; i < n; i++) {
      double g = kf_harness__load(pc, dt, i), w = kf_harness__load(pr, dt, i);
      bool ok;
      if (!isfinite(w)) {
        if (!s->allow_nan) {
          snprintf(e->why, WHY, "%s: the reference's %s[%" PRId64 "] is %g "
                   "but the spec does not allow NaN/Inf", ctx, name, i, w);
          return KF_OUTCOME_SPEC_ERROR;
        }
        ok = isnan(w) ? isnan(g) : g == w;
      } else if (!isfinite(g)) {
        ok = false;
      } else {
        double d = fabs(g - w);
        ok = d <= tol->atol + tol->rtol * fabs(w);
        if (d > mabs) mabs = d;
        double rel = fabs(w) > 0 ? d / fabs(w) : (d > 0 ? INFINITY : 0);
        if (fabs(w) > tol->atol && rel > mrel) mrel = rel;
        if (!(fabs(w) <= tol->atol + tol->rtol * fabs(w))) *evidence = true;
      }
      if (!ok) {
        if (first < 0) {
          first = i;
          fg = g;
          fw = w;
        }
        bad++;
      }
    }
    if (mabs > e->max_abs) e->max_abs = mabs;
    if (mrel > e->max_rel) e->max_rel = mrel;
    if (bad) {
      snprintf(e->why, WHY,
               "%s: output '%s' index %" PRId64 " (of %" PRId64 "): got %.9g, "
               "expected %.9g (tolerance %g + %g*|expected|); %" PRId64
               " elements differ; max abs err %.3g, max rel err %.3g",
               ctx, name, first, n, fg, fw, tol->atol, tol->rtol, bad, mabs,
               mrel);
      return KF_OUTCOME_WRONG_ANSWER;
    }
  }
  return 0;
}

/* The candidate may not change its inputs. */
static int check_inputs(ev *e, const layout *L, int set, const char *ctx) {
  return kf_harness__check_inputs(e->spec, L, e->cand.map, e->ref.map, set,
                                  ctx, e->why, WHY);
}

static void size_str(const ev *e, const kf_size *sz, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < e->spec->n_params && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%s=%" PRId64, i ? " " : "",
                          e->spec->params[i], sz->v[i]);
}

/* Both runners armed: a fresh child loaded and waiting in each, so no
 * fork or load of one competes with a timed call of the other. */
static int quiet(ev *e, const char *ctx) {
  char why[WHY];
  int oc = kf_harness__runner_arm(&e->cand, e->o->call_timeout_ms, why,
                                  sizeof why);
  if (oc) {
    snprintf(e->why, WHY, "%.300s: %.1700s", ctx, why);
    return oc;
  }
  oc = kf_harness__runner_arm(&e->ref, e->o->call_timeout_ms * 3, why,
                              sizeof why);
  if (oc) {
    snprintf(e->why, WHY, "%.300s: reference failed: %.1700s", ctx, why);
    return oc == KF_OUTCOME_INFRA_ERROR ? oc : KF_OUTCOME_SPEC_ERROR;
  }
  return 0;
}

/* A reference failure is the problem's, not the candidate's. */
static int ref_call(ev *e, kf_harness_cmd *c, uint64_t *ns, const char *ctx) {
  char why[WHY];
  int oc = quiet(e, ctx);
  if (oc) return oc;
  oc = kf_harness__runner_call(&e->ref, c, e->o->call_timeout_ms * 3, ns,
                               why, sizeof why);
  if (!oc) return 0;
  snprintf(e->why, WHY, "%.300s: reference failed: %.1700s", ctx, why);
  return oc == KF_OUTCOME_INFRA_ERROR ? oc : KF_OUTCOME_SPEC_ERROR;
}

static int cand_call(ev *e, kf_harness_cmd *c, uint64_t *ns, const char *ctx) {
  char why[WHY];
  int oc = quiet(e, ctx);
  if (oc) return oc;
  oc = kf_harness__runner_call(&e->cand, c, e->o->call_timeout_ms, ns, why,
                               sizeof why);
  if (oc) snprintf(e->why, WHY, "%.300s: %.1700s", ctx, why);
  return oc;
}

/* ------------------------------------------------------------ stages */

static int do_compile(ev *e, kf_harness_elf_info *ref_info,
                      unsigned char **cand_so, size_t *cand_len) {
  stage_begin(e, "compile");
  int oc = kf_harness__workdir_make(&e->wd, e->o->workdir, e->why, WHY);
  if (oc) return stage_end(e, oc, e->why);
  kf_harness_knob knobs[32];
  if (e->req->n_knobs > 32)
    return stage_end(e, KF_OUTCOME_SPEC_ERROR, "more than 32 knobs");
  for (size_t i = 0; i < e->req->n_knobs; i++) {
    knobs[i].name = e->req->knobs[i]->name;
    knobs[i].value = e->req->knobs[i]->value;
  }
  char why[WHY];
  oc = kf_harness__compile(e->wd.build, "reference", e->req->reference_source,
                           NULL, 0, e->o->compile_timeout_ms, why, sizeof why);
  if (oc) {
    char w2[WHY];
    snprintf(w2, sizeof w2, "reference: %.2000s", why);
    return stage_end(e, oc == KF_OUTCOME_INFRA_ERROR ? oc
                                                     : KF_OUTCOME_SPEC_ERROR,
                     w2);
  }
  oc = kf_harness__compile(e->wd.build, "candidate", e->req->source, knobs,
                           (int)e->req->n_knobs, e->o->compile_timeout_ms,
                           why, sizeof why);
  if (oc) return stage_end(e, oc, why);
  char defs[WHY]; /* which compile defenses applied (the jail or not) */
  kf_strlcpy(defs, why, sizeof defs);
  /* The baseline for the link check: an empty kernel from the same
   * compiler shows what the toolchain itself puts in .init/.fini and
   * .data/.bss of every shared object. */
  oc = kf_harness__compile(e->wd.build, "baseline", BASELINE_SRC, NULL, 0,
                           e->o->compile_timeout_ms, why, sizeof why);
  if (oc) {
    char w2[WHY];
    snprintf(w2, sizeof w2, "empty baseline kernel: %.2000s", why);
    return stage_end(e, KF_OUTCOME_INFRA_ERROR, w2);
  }
  unsigned char *rbuf;
  size_t rlen;
  oc = kf_harness__take_so(e->wd.build, "reference", e->wd.jail_r, MAX_SO,
                           &rbuf, &rlen, e->why, WHY);
  if (oc) return stage_end(e, oc, e->why);
  free(rbuf); /* the reference may import and keep what it likes */
  char bpath[1200], err[256];
  snprintf(bpath, sizeof bpath, "%s/baseline.so", e->wd.build);
  char *bbuf;
  size_t blen;
  if (kf_read_file(bpath, MAX_SO, &bbuf, &blen, err, sizeof err)) {
    snprintf(e->why, WHY, "baseline.so: %s", err);
    return stage_end(e, KF_OUTCOME_INFRA_ERROR, e->why);
  }
  char w3[WHY];
  kf_harness__elf_check((unsigned char *)bbuf, blen, NULL, ref_info, w3,
                        sizeof w3);
  free(bbuf);
  oc = kf_harness__take_so(e->wd.build, "candidate", e->wd.jail_c, MAX_SO,
                           cand_so, cand_len, e->why, WHY);
  if (oc) return stage_end(e, oc, e->why);
  return stage_end(e, 0, defs);
}

static int do_link(ev *e, const kf_harness_elf_info *ref_info,
                   const unsigned char *so, size_t len) {
  stage_begin(e, "link");
  kf_harness_elf_info info;
  char why[WHY];
  int oc = kf_harness__elf_check(so, len, ref_info, &info, why, sizeof why);
  return stage_end(e, oc, oc ? why : NULL);
}

static int do_load(ev *e) {
  stage_begin(e, "load");
  /* the largest layout any stage uses */
  layout L;
  size_t need = GUARD;
  for (int i = 0; i < e->spec->n_check_sizes; i++) {
    int oc = make_layout(e, &e->spec->check_sizes[i], 1, 2, &L);
    if (oc) return stage_end(e, oc, e->why);
    if (L.total > need) need = L.total;
  }
  int oc = make_layout(e, &e->spec->bench_size, TIME_SETS, TIME_SETS, &L);
  if (oc) return stage_end(e, oc, e->why);
  if (L.total > need) need = L.total;
  e->map_len = need;

  cpu_set_t set;
  CPU_ZERO(&set);
  e->cpu = e->o->cpu >= 0 ? e->o->cpu : sched_getcpu();
  if (e->cpu >= 0) {
    CPU_SET(e->cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
      kf_log(KF_LOG_WARN, "cannot pin to cpu %d: %s; timing unpinned",
             e->cpu, strerror(errno));
    }
  }
  char exe[1024], why[WHY];
  kf_harness__runner_exe(exe, sizeof exe);
  int cpu_s = e->o->call_timeout_ms / 1000 * 4 + 30;
  oc = kf_harness__runner_start(&e->ref, "reference", exe, e->wd.jail_r,
                                "reference.so", need, cpu_s,
                                e->o->call_timeout_ms, why, sizeof why);
  e->ref_up = true;
  if (oc) /* the runner's reasons name "reference" already */
    return stage_end(e, oc == KF_OUTCOME_INFRA_ERROR ? oc
                                                     : KF_OUTCOME_SPEC_ERROR,
                     why);
  oc = kf_harness__runner_start(&e->cand, "candidate", exe, e->wd.jail_c,
                                "candidate.so", need, cpu_s,
                                e->o->call_timeout_ms, why, sizeof why);
  e->cand_up = true;
  if (oc) return stage_end(e, oc, why);
  char defs[256];
  kf_harness__defenses_str(e->cand.defenses, defs, sizeof defs);
  char msg[512];
  snprintf(msg, sizeof msg, "defenses: %s; pinned to cpu %d", defs, e->cpu);
  if (!(e->cand.defenses & KF_HARNESS_DEF_SECCOMP) ||
      !(e->cand.defenses & KF_HARNESS_DEF_CHROOT))
    kf_log(KF_LOG_WARN, "sandbox incomplete: %s", defs);
  return stage_end(e, 0, msg);
}

static int do_verify(ev *e) {
  stage_begin(e, "verify");
  kf_harness__collect_dists(e->spec, e->dists, &e->n_dists);
  int cases = 0, evidence_cases = 0;
  /* The check sizes, then the bench size under every distribution too:
   * the timing loop draws only the first distribution, and a kernel that
   * branches on the bench size must still be right on all of them. */
  bool bench_checked = false;
  for (int si = 0; si < e->spec->n_check_sizes; si++)
    bench_checked |= !memcmp(&e->spec->check_sizes[si], &e->spec->bench_size,
                             sizeof(kf_size));
  int n_sizes = e->spec->n_check_sizes + !bench_checked;
  for (int si = 0; si < n_sizes; si++) {
    const kf_size *sz = si < e->spec->n_check_sizes ? &e->spec->check_sizes[si]
                                                     : &e->spec->bench_size;
    layout L;
    int oc = make_layout(e, sz, 1, 2, &L);
    if (oc) return stage_end(e, oc, e->why);
    prepare_maps(e, &L);
    char szs[256];
    size_str(e, sz, szs, sizeof szs);
    for (int di = 0; di < e->n_dists; di++) {
      char ctx[400];
      snprintf(ctx, sizeof ctx, "size %s, distribution %s", szs,
               kf_dist_name((kf_dist)e->dists[di]));
      oc = draw_inputs(e, &L, 0, (uint64_t)si << 8 | (uint64_t)di,
                       e->dists[di]);
      if (oc) return stage_end(e, oc, e->why);
      poison_slot(e, &L, 0);
      kf_harness_cmd c;
      fill_cmd(&L, 0, 0, &c);
      fill_params(e, sz, &c);
      uint64_t ns;
      if ((oc = ref_call(e, &c, &ns, ctx))) return stage_end(e, oc, e->why);
      fill_cmd(&L, 0, 0, &c);
      fill_params(e, sz, &c);
      if ((oc = cand_call(e, &c, &ns, ctx))) return stage_end(e, oc, e->why);
      if ((oc = check_guards(e, &L, ctx))) return stage_end(e, oc, e->why);
      if ((oc = check_inputs(e, &L, 0, ctx))) return stage_end(e, oc, e->why);
      bool ev_case = false;
      if ((oc = compare(e, &L, 0, ctx, &ev_case)))
        return stage_end(e, oc, e->why);
      cases++;
      evidence_cases += ev_case;
    }
  }
  if (!evidence_cases) {
    snprintf(e->why, WHY, "none of the %d correctness cases has an expected "
             "output outside the tolerance around zero: an all-zeros kernel "
             "would pass; the spec needs sizes or distributions with larger "
             "outputs", cases);
    return stage_end(e, KF_OUTCOME_SPEC_ERROR, e->why);
  }
  char msg[256];
  snprintf(msg, sizeof msg, "%d cases (%d sizes x %d distributions, the "
           "bench size included), %d far from zero; max abs err %.3g, max rel "
           "err %.3g", cases, n_sizes, e->n_dists, evidence_cases, e->max_abs,
           e->max_rel);
  return stage_end(e, 0, msg);
}

static int do_determinism(ev *e) {
  stage_begin(e, "determinism");
  /* the largest check size */
  int best = 0;
  size_t best_total = 0;
  layout L;
  for (int si = 0; si < e->spec->n_check_sizes; si++) {
    if (make_layout(e, &e->spec->check_sizes[si], 1, 2, &L)) continue;
    size_t elems = 0;
    for (int j = 0; j < L.n_out; j++) elems += (size_t)L.out_n[j];
    for (int j = 0; j < L.n_in; j++) elems += (size_t)L.in_n[j];
    if (elems > best_total) {
      best_total = elems;
      best = si;
    }
  }
  const kf_size *sz = &e->spec->check_sizes[best];
  int oc = make_layout(e, sz, 1, 2, &L);
  if (oc) return stage_end(e, oc, e->why);
  prepare_maps(e, &L);
  char szs[256], ctx[300];
  size_str(e, sz, szs, sizeof szs);
  snprintf(ctx, sizeof ctx, "size %s", szs);
  oc = draw_inputs(e, &L, 0, 0xde7e000ull, e->dists[0]);
  if (oc) return stage_end(e, oc, e->why);
  poison_slot(e, &L, 0);
  poison_slot(e, &L, 1);
  for (int slot = 0; slot < 2; slot++) {
    kf_harness_cmd c;
    fill_cmd(&L, 0, slot, &c);
    fill_params(e, sz, &c);
    uint64_t ns;
    if ((oc = cand_call(e, &c, &ns, ctx))) return stage_end(e, oc, e->why);
  }
  if ((oc = check_guards(e, &L, ctx))) return stage_end(e, oc, e->why);
  if ((oc = kf_harness__check_same_outputs(e->spec, &L, e->cand.map, ctx,
                                           e->why, WHY)))
    return stage_end(e, oc, e->why);
  return stage_end(e, 0, ctx);
}

/* Not instrumented: under ASan the read loop would dominate the test
 * suite's time, and it touches only our own buffer. */
__attribute__((no_sanitize("address", "undefined")))
static void flush_caches(ev *e) {
  if (!e->flush) return;
  memset(e->flush, (int)(e->flush_sink & 0xff), e->flush_len);
  uint64_t s = 0;
  for (size_t i = 0; i < e->flush_len; i += 64) s += e->flush[i];
  e->flush_sink += s + 1;
}

static int do_time(ev *e) {
  stage_begin(e, "time");
  layout L;
  const kf_size *sz = &e->spec->bench_size;
  int oc = make_layout(e, sz, TIME_SETS, TIME_SETS, &L);
  if (oc) return stage_end(e, oc, e->why);
  prepare_maps(e, &L);
  size_t llc = kf_harness__llc_bytes(e->cpu);
  e->flush_len = llc ? 2 * llc : 64u << 20;
  e->flush = malloc(e->flush_len);
  if (!e->flush) {
    return stage_end(e, KF_OUTCOME_INFRA_ERROR, "no memory for the cache "
                     "flush buffer");
  }
  char szs[256];
  size_str(e, sz, szs, sizeof szs);
  int dist = e->dists[0];
  kf_harness_cmd c;
  uint64_t ns;
  char ctx[400];
  /* warm-up: page in code and buffers; not timed */
  for (int k = 0; k < TIME_SETS; k++) {
    snprintf(ctx, sizeof ctx, "warm-up at size %s", szs);
    if ((oc = draw_inputs(e, &L, k, 0x7a770000ull + (uint64_t)k, dist)))
      return stage_end(e, oc, e->why);
    poison_slot(e, &L, k);
    fill_cmd(&L, k, k, &c);
    fill_params(e, sz, &c);
    if ((oc = ref_call(e, &c, &ns, ctx))) return stage_end(e, oc, e->why);
    fill_cmd(&L, k, k, &c);
    fill_params(e, sz, &c);
    if ((oc = cand_call(e, &c, &ns, ctx))) return stage_end(e, oc, e->why);
  }
  uint64_t *tc = calloc(MAX_REPS, sizeof *tc), *tr = calloc(MAX_REPS, sizeof *tr);
  uint64_t *tmp = calloc(MAX_REPS, sizeof *tmp);
  if (!tc || !tr || !tmp) {
    free(tc);
    free(tr);
    free(tmp);
    return stage_end(e, KF_OUTCOME_INFRA_ERROR, "out of memory");
  }
  uint64_t t_start = kf_now_ms();
  uint64_t budget = (uint64_t)e->o->time_budget_ms;
  int n = 0;
  for (; n < MAX_REPS; n++) {
    int k = n % TIME_SETS;
    snprintf(ctx, sizeof ctx, "timed run %d at size %s", n, szs);
    if ((oc = draw_inputs(e, &L, k, 0x71e00000ull + (uint64_t)n, dist)))
      goto out;
    poison_slot(e, &L, k);
    for (int turn = 0; turn < 2; turn++) {
      bool cand_turn = (turn == 0) == (n % 2 == 0);
      fill_cmd(&L, k, k, &c);
      fill_params(e, sz, &c);
      if ((oc = quiet(e, ctx))) goto out;
      flush_caches(e);
      oc = cand_turn ? cand_call(e, &c, &tc[n], ctx)
                     : ref_call(e, &c, &tr[n], ctx);
      if (oc) goto out;
    }
    bool unused = false;
    if ((oc = check_guards(e, &L, ctx)) || (oc = check_inputs(e, &L, k, ctx)) ||
        (oc = compare(e, &L, k, ctx, &unused)))
      goto out;
    int m = n + 1;
    if (kf_harness__reps_enough(tc, tr, m, MIN_REPS, kf_now_ms() - t_start,
                                budget, tmp)) {
      n = m;
      break;
    }
  }
  if (n > MAX_REPS) n = MAX_REPS;
  /* the last reply: nothing may run after it either */
  if ((oc = kf_harness__runner_idle_check(&e->cand, e->why, WHY))) goto out;
  int64_t bytes, flops;
  kf_harness__time_results(e->spec, sz, tc, tr, n, tmp, &e->res, &bytes,
                           &flops);
  double cm = e->res.time_ns_median, cs = e->res.time_ns_spread;
  double rm = e->res.ref_time_ns_median, rs = e->res.ref_time_ns_spread;
  char msg[WHY];
  snprintf(msg, sizeof msg, "size %s: candidate %.0f ns (spread %.1f%%), "
           "reference %.0f ns (spread %.1f%%), %d repetitions; %.2f GB/s, "
           "%.2f GFLOP/s; flush %zu MiB", szs, cm, cs * 100, rm, rs * 100, n,
           e->res.achieved_gbps, e->res.achieved_gflops, e->flush_len >> 20);
  if (e->o->copy_gbps > 0 &&
      e->res.achieved_gbps > COPY_FACTOR * e->o->copy_gbps) {
    snprintf(e->why, WHY, "size %s: moving at least %" PRId64 " bytes in "
             "%.0f ns is %.3g GB/s, above %.1f x the measured copy bandwidth "
             "of %.3g GB/s (CPU ceilings are rough, hence the factor)", szs,
             bytes, cm, e->res.achieved_gbps, COPY_FACTOR, e->o->copy_gbps);
    oc = KF_OUTCOME_TOO_FAST;
    goto out;
  }
  if (e->o->gflops > 0 &&
      e->res.achieved_gflops > FLOPS_FACTOR * e->o->gflops) {
    snprintf(e->why, WHY, "size %s: %" PRId64 " FLOPs in %.0f ns is %.2f "
             "GFLOP/s, above %.1f x the measured FMA rate of %.3g GFLOP/s "
             "(CPU ceilings are rough, hence the factor)", szs, flops, cm,
             e->res.achieved_gflops, FLOPS_FACTOR, e->o->gflops);
    oc = KF_OUTCOME_TOO_FAST;
    goto out;
  }
  if (e->o->copy_gbps <= 0 && e->o->gflops <= 0) {
    size_t l = strlen(msg);
    snprintf(msg + l, sizeof msg - l, "; no ceilings given: roofline not "
             "checked");
  }
  kf_strlcpy(e->why, msg, WHY);
out:
  free(tc);
  free(tr);
  free(tmp);
  return stage_end(e, oc, e->why);
}

/* --------------------------------------------------------------- I/O */

static int read_full(int fd, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

static int run_stages(ev *e) {
  kf_harness_elf_info ref_info;
  unsigned char *so = NULL;
  size_t so_len = 0;
  int oc = do_compile(e, &ref_info, &so, &so_len);
  if (!oc) oc = do_link(e, &ref_info, so, so_len);
  free(so);
  if (!oc) oc = do_load(e);
  if (!oc) oc = do_verify(e);
  if (!oc && e->spec->deterministic) oc = do_determinism(e);
  if (!oc) oc = do_time(e);
  if (!oc) e->res.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  return oc;
}

int kf_harness_eval(const kf_harness_eval_opts *o, int in_fd, int out_fd) {
  ev *e = calloc(1, sizeof *e);
  if (!e) return KF_ENOMEM;
  e->o = o;
  e->cand.memfd = e->ref.memfd = -1;
  kernelfleet__eval_result__init(&e->res);
  e->res.stages = e->st.ptrs;
  uint64_t t0 = kf_now_ms();

  unsigned char hdr[4];
  unsigned char *buf = NULL;
  uint32_t len = 0;
  if (read_full(in_fd, hdr, 4) == 0) {
    len = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
          (uint32_t)hdr[3] << 24;
    if (len <= MAX_REQUEST && (buf = malloc(len ? len : 1)) &&
        read_full(in_fd, buf, len) == 0)
      e->req = kernelfleet__eval_request__unpack(NULL, len, buf);
  }
  free(buf);
  if (e->req && kf_harness__is_cuda_request(e->req)) { /* eval_cuda.c */
    int rc = kf_harness__eval_cuda(o, e->req, out_fd);
    kernelfleet__eval_request__free_unpacked(e->req, NULL);
    free(e);
    return rc;
  }
  stage_begin(e, "request");
  char err[512];
  if (!e->req) {
    stage_end(e, KF_OUTCOME_SPEC_ERROR, "malformed EvalRequest on stdin");
  } else if (e->req->language && *e->req->language &&
             strcmp(e->req->language, "c") != 0) {
    snprintf(e->why, WHY, "language '%.32s': this harness runs C candidates "
             "only", e->req->language);
    stage_end(e, KF_OUTCOME_SPEC_ERROR, e->why);
  } else if (!e->req->source || !*e->req->source ||
             !e->req->reference_source || !*e->req->reference_source) {
    stage_end(e, KF_OUTCOME_SPEC_ERROR, "the request has no candidate or no "
              "reference source");
  } else if (kf_spec_parse((const char *)e->req->problem_spec.data,
                           e->req->problem_spec.len, NULL, &e->spec, err,
                           sizeof err)) {
    snprintf(e->why, WHY, "problem spec: %s", err);
    stage_end(e, KF_OUTCOME_SPEC_ERROR, e->why);
  } else if (strcmp(e->spec->backend, "cpu") != 0) {
    snprintf(e->why, WHY, "backend '%s': this harness runs cpu problems",
             e->spec->backend);
    stage_end(e, KF_OUTCOME_SPEC_ERROR, e->why);
  } else if (e->spec->n_check_sizes < 1 || e->spec->n_outputs < 1) {
    stage_end(e, KF_OUTCOME_SPEC_ERROR, "the spec has no check sizes or no "
              "outputs");
  } else {
    stage_end(e, 0, NULL);
    /* the request stage is bookkeeping; keep only the real ones */
    e->res.n_stages = 0;
    kf_log(KF_LOG_INFO, "eval: problem %s, candidate %" PRId64 ", %zu knobs",
           e->spec->name, e->req->candidate_id, e->req->n_knobs);
    run_stages(e);
  }
  kf_harness__runner_stop(&e->cand);
  kf_harness__runner_stop(&e->ref);
  kf_harness__workdir_remove(&e->wd);
  e->res.max_abs_err = e->max_abs;
  e->res.max_rel_err = e->max_rel;
  kf_log(KF_LOG_INFO, "eval done: %s in %" PRIu64 " ms",
         kf_outcome_name(e->res.outcome), kf_now_ms() - t0);
  int rc = kf_harness__write_result(&e->res, out_fd);
  free(e->flush);
  kf_spec_free(e->spec);
  if (e->req) kernelfleet__eval_request__free_unpacked(e->req, NULL);
  free(e);
  return rc;
}
