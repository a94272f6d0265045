/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proposer/proposer.c -- what every proposer shares (proposer.h): the
 * context built from the coordinator's client RPCs, the choice of
 * evolution operators for a round, and the round itself (ask, propose,
 * account).
 *
 * Everything that came from the coordinator or from a model is untrusted
 * text; it is only ever forwarded (to the model, to ProposeCandidate) or
 * counted, never interpreted here beyond the reply parser.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "outcome.h"
#include "proposer.h"
#include "text.h"

#define RPC(name) "/kernelfleet.Coordinator/" name
#define MAX_TASKS 16

extern const char kf_proposer__abi_h[]; /* harness/core/kf_candidate.h */

typedef struct {
  Kernelfleet__GetCampaignResponse *camp;
  Kernelfleet__ListEvaluationsResponse *fails;
  Kernelfleet__GetStatusResponse *status;
  /* GetBest of each class the top list left out */
  Kernelfleet__GetBestResponse *cls_best[8];
  char *spec;
} priv;

const char *kf_proposer_op_name(kf_proposer_op op) {
  switch (op) {
  case KF_PROPOSE_COMBINE: return "combine";
  case KF_PROPOSE_PRESCRIBE: return "prescribe";
  case KF_PROPOSE_PORT: return "port";
  default: return "improve";
  }
}

void kf_proposer_destroy(kf_proposer *p) {
  if (p) p->ops->destroy(p);
}

/* snprintf for texts that may be cut (facts, profiles): what does not fit
 * is dropped, by design. */
static void cutf(char *out, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cutf(char *out, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, len, fmt, ap);
  va_end(ap);
}

int kf_proposer_ops_parse(const char *list, uint32_t *mask, char *err,
                          size_t errlen) {
  *mask = 0;
  const char *p = list ? list : "";
  while (*p) {
    size_t n = strcspn(p, ",");
    uint32_t bit = 0;
    for (int op = KF_PROPOSE_IMPROVE; op <= KF_PROPOSE_PORT; op++) {
      const char *name = kf_proposer_op_name((kf_proposer_op)op);
      if (n == strlen(name) && strncmp(p, name, n) == 0) bit = 1u << op;
    }
    if (!bit) {
      snprintf(err, errlen, "unknown operator '%.*s' (improve, combine,"
               " prescribe, port)", (int)(n < 40 ? n : 40), p);
      return KF_EINVAL;
    }
    *mask |= bit;
    p += n;
    if (*p == ',') p++;
  }
  if (!*mask) {
    snprintf(err, errlen, "no operator named (improve, combine, prescribe,"
             " port)");
    return KF_EINVAL;
  }
  return 0;
}

/* A profile's numbers in words (kf_proposer_kernel.profile); a number
 * the profiler did not measure (negative) is left out. */
static void profile_text(const Kernelfleet__ProfileReport *p, char *out,
                         size_t len) {
  out[0] = '\0';
  if (!p || !p->status || !*p->status) return;
  /* No profiler on the device (every CPU kernel) or the campaign's policy
   * skipped it: the same words on every kernel, tokens for nothing. */
  if (!strcmp(p->status, "unavailable") || !strcmp(p->status, "skipped"))
    return;
  if (strcmp(p->status, "ok") != 0) {
    cutf(out, len, "no profile (%s%s%.300s)", p->status,
             p->reason && *p->reason ? ": " : "", p->reason ? p->reason : "");
    return;
  }
  size_t o = 0;
#define PUT(...)                                                             \
  do {                                                                       \
    if (o < len) {                                                           \
      int w_ = snprintf(out + o, len - o, __VA_ARGS__);                      \
      if (w_ > 0) o += (size_t)w_;                                           \
    }                                                                        \
  } while (0)
  PUT("profile (%s%s%s):", p->tool && *p->tool ? p->tool : "profiler",
      p->kernel && *p->kernel ? ", kernel " : "", p->kernel ? p->kernel : "");
  if (p->dram_pct >= 0) PUT(" DRAM throughput %.1f%% of peak,", p->dram_pct);
  if (p->sm_pct >= 0) PUT(" SM throughput %.1f%% of peak,", p->sm_pct);
  if (p->occupancy_pct >= 0)
    PUT(" achieved occupancy %.1f%%,", p->occupancy_pct);
  if (p->l1_hit_pct >= 0) PUT(" L1 hit %.1f%%,", p->l1_hit_pct);
  if (p->l2_hit_pct >= 0) PUT(" L2 hit %.1f%%,", p->l2_hit_pct);
  for (size_t i = 0; i < p->n_stalls && i < 3; i++)
    PUT("%s%s %.1f", i ? ", " : " top stalls (warp cycles per issued"
        " instruction): ", p->stalls[i]->reason, p->stalls[i]->cycles);
  if (p->n_stalls) PUT(";");
  PUT(" %u registers per thread, %u B shared memory per block, %u B"
      " spilled", p->registers, p->shared_bytes, p->spill_bytes);
#undef PUT
  if (o >= len && len > 4) memcpy(out + len - 4, "...", 4);
}

static void dc_text(const Kernelfleet__DeviceClass *d, char *out, size_t len) {
  if (!d) {
    snprintf(out, len, "unknown device");
    return;
  }
  if (d->kind == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA)
    snprintf(out, len, "cuda %s (sm_%u%u, %s)", d->model, d->cc_major,
             d->cc_minor, d->isa);
  else
    snprintf(out, len, "cpu %s (%s)", d->model, d->isa);
}

/* One measured kernel of the context from its summary (and source). */
static void kernel_fill(kf_proposer_kernel *b,
                        const Kernelfleet__EvaluationSummary *e,
                        const char *source, const char *device) {
  b->candidate_id = e->candidate_id;
  b->template_name = e->template_name;
  b->source = source;
  b->proposer = e->proposer;
  snprintf(b->device, sizeof b->device, "%s", device);
  size_t o = 0;
  for (size_t q = 0; q < e->n_knobs && o < sizeof b->knobs - 1; q++)
    o += (size_t)snprintf(b->knobs + o, sizeof b->knobs - o, "%s-D%s=%s",
                          q ? " " : "", e->knobs[q]->name,
                          e->knobs[q]->value);
  b->time_ns = e->time_ns_median;
  b->ref_time_ns = e->ref_time_ns_median;
  b->speedup = e->speedup;
  b->roofline_fraction = e->roofline_fraction;
  const Kernelfleet__ProfileDiagnosis *dg = e->diagnosis;
  if (dg && dg->bound && *dg->bound) {
    b->bound = dg->bound;
    b->bw_frac = dg->bandwidth_fraction;
    b->fl_frac = dg->compute_fraction;
    b->diagnosis = dg->detail && *dg->detail ? dg->detail : dg->bound;
  }
  profile_text(e->profile, b->profile, sizeof b->profile);
}

void kf_proposer_context_free(kf_proposer_context *c) {
  if (!c) return;
  priv *p = c->priv_;
  if (p) {
    kf_rpc_free(&p->camp->base);
    if (p->fails) kf_rpc_free(&p->fails->base);
    if (p->status) kf_rpc_free(&p->status->base);
    for (size_t i = 0; i < 8; i++)
      if (p->cls_best[i]) kf_rpc_free(&p->cls_best[i]->base);
    free(p->spec);
    free(p);
  }
  free(c->best);
  free(c->failures);
  free(c);
}

static int call(kf_rpc_client *cli, const char *path,
                const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *d, int tmo,
                ProtobufCMessage **resp, char *err, size_t errlen) {
  char e[512] = "";
  int rc = kf_rpc_client_call_sync(cli, path, req, d, tmo, resp, e, sizeof e);
  if (rc) snprintf(err, errlen, "%s: %s", path + strlen(RPC("")), e);
  return rc;
}

int kf_proposer_context_fetch(kf_rpc_client *cli, int64_t id, uint32_t top,
                              uint32_t nfail, int tmo,
                              kf_proposer_context **out, char *err,
                              size_t errlen) {
  *out = NULL;
  kf_proposer_context *c = calloc(1, sizeof *c);
  priv *p = calloc(1, sizeof *p);
  if (!c || !p) {
    free(c);
    free(p);
    snprintf(err, errlen, "out of memory");
    return KF_ENOMEM;
  }
  c->priv_ = p;
  if (tmo <= 0) tmo = 30000;
  Kernelfleet__GetCampaignRequest g = KERNELFLEET__GET_CAMPAIGN_REQUEST__INIT;
  g.campaign_id = id;
  g.top = top ? top : 8;
  g.with_problem = true;
  g.with_sources = true;
  int rc = call(cli, RPC("GetCampaign"), &g.base,
                &kernelfleet__get_campaign_response__descriptor, tmo,
                (ProtobufCMessage **)&p->camp, err, errlen);
  if (rc) {
    free(p);
    free(c);
    return rc;
  }
  Kernelfleet__ListEvaluationsRequest l =
      KERNELFLEET__LIST_EVALUATIONS_REQUEST__INIT;
  l.campaign_id = id;
  l.limit = nfail ? nfail : 6;
  l.failures_only = true;
  Kernelfleet__GetStatusRequest s = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  if ((rc = call(cli, RPC("ListEvaluations"), &l.base,
                 &kernelfleet__list_evaluations_response__descriptor, tmo,
                 (ProtobufCMessage **)&p->fails, err, errlen)) ||
      (rc = call(cli, RPC("GetStatus"), &s.base,
                 &kernelfleet__get_status_response__descriptor, tmo,
                 (ProtobufCMessage **)&p->status, err, errlen))) {
    kf_proposer_context_free(c);
    return rc;
  }
  const Kernelfleet__GetCampaignResponse *r = p->camp;
  if (!r->status || !r->status->campaign || !r->language ||
      !r->reference_source || !r->spec_json.len) {
    kf_proposer_context_free(c);
    snprintf(err, errlen, "GetCampaign: the coordinator sent no problem"
             " (is it older than the proposer RPCs?)");
    return KF_EPROTO;
  }
  p->spec = malloc(r->spec_json.len + 1);
  c->best = calloc(r->n_top + 9, sizeof *c->best); /* + one per class */
  c->failures = calloc(p->fails->n_evaluations + 1, sizeof *c->failures);
  if (!p->spec || !c->best || !c->failures) {
    kf_proposer_context_free(c);
    snprintf(err, errlen, "out of memory");
    return KF_ENOMEM;
  }
  memcpy(p->spec, r->spec_json.data, r->spec_json.len);
  p->spec[r->spec_json.len] = '\0';
  c->campaign_id = id;
  c->problem = r->status->campaign->problem;
  c->state = r->status->campaign->state;
  c->language = r->language;
  c->spec_json = p->spec;
  c->abi = kf_proposer__abi_h;
  c->reference = r->reference_source;
  /* Best per class: the ranking is overall; group it by class, keeping
   * the ranking's order inside each. */
  char seen[16][256];
  size_t nseen = 0;
  for (size_t pass = 0; pass <= 16; pass++) {
    for (size_t i = 0; i < r->n_top; i++) {
      const Kernelfleet__EvaluationSummary *e = r->top[i];
      char d[256];
      dc_text(e->device_class, d, sizeof d);
      size_t k = 0;
      while (k < nseen && strcmp(seen[k], d)) k++;
      if (k == nseen && nseen < 16) snprintf(seen[nseen++], 256, "%s", d);
      if (k != pass || !e->source || !*e->source) continue;
      kernel_fill(&c->best[c->n_best++], e, e->source, d);
    }
    if (pass + 1 >= nseen) break;
  }
  /* The ranking is over every class: a slower class may have no kernel
   * in it.  Each class of the campaign gets its best (GetBest of the
   * class) so that every class has one; a class with no ok evaluation
   * yet answers an error and has none. */
  for (size_t i = 0, nb = 0; i < r->n_devices && nb < 8; i++) {
    const Kernelfleet__DeviceClass *dc = r->devices[i]->device_class;
    char d[256];
    dc_text(dc, d, sizeof d);
    size_t k = 0;
    while (k < nseen && strcmp(seen[k], d)) k++;
    if (k < nseen || !dc || !dc->model || !*dc->model) continue;
    Kernelfleet__GetBestRequest gb = KERNELFLEET__GET_BEST_REQUEST__INIT;
    gb.campaign_id = id;
    gb.device_class = dc->model;
    char e2[256];
    ProtobufCMessage *resp = NULL;
    if (call(cli, RPC("GetBest"), &gb.base,
             &kernelfleet__get_best_response__descriptor, tmo, &resp, e2,
             sizeof e2))
      continue;
    p->cls_best[nb++] = (Kernelfleet__GetBestResponse *)resp;
    const Kernelfleet__GetBestResponse *b = (const void *)resp;
    char bd[256];
    if (!b->best || !b->source || !*b->source) continue;
    dc_text(b->best->device_class, bd, sizeof bd);
    if (strcmp(bd, d)) continue; /* another class of the same model */
    kernel_fill(&c->best[c->n_best++], b->best, b->source, bd);
    if (nseen < 16) snprintf(seen[nseen++], 256, "%s", bd);
  }
  for (size_t i = 0; i < p->fails->n_evaluations; i++) {
    const Kernelfleet__EvaluationSummary *e = p->fails->evaluations[i];
    kf_proposer_failure *f = &c->failures[c->n_failures++];
    f->candidate_id = e->candidate_id;
    f->template_name = e->template_name;
    f->proposer = e->proposer;
    f->outcome = kf_outcome_name(e->outcome);
    f->stage = e->stage;
    f->reason = e->reason;
  }
  /* Device facts: the classes that evaluated the campaign's candidates
   * (GetStatus names workers, not their classes), and how many workers
   * are alive. */
  uint32_t alive = 0;
  for (size_t i = 0; i < p->status->n_workers; i++)
    alive += p->status->workers[i]->alive;
  for (size_t i = 0; i < r->n_devices && c->n_devices < 8; i++) {
    const Kernelfleet__ProposerDevice *d = r->devices[i];
    size_t k = c->n_devices++;
    char cls[256];
    dc_text(d->device_class, cls, sizeof cls);
    memcpy(c->device_class[k], cls, sizeof cls);
    char rw[96] = "", env[300] = "";
    if (d->read_gbps > 0 || d->write_gbps > 0)
      snprintf(rw, sizeof rw, " (read-only %.1f, write-only %.1f)",
               d->read_gbps, d->write_gbps);
    if (d->compiler && *d->compiler)
      cutf(env, sizeof env, "; %.90s%s%.80s%s%.80s", d->compiler,
               d->driver_version && *d->driver_version ? ", driver " : "",
               d->driver_version ? d->driver_version : "",
               d->runtime_version && *d->runtime_version ? ", runtime "
                                                         : "",
               d->runtime_version ? d->runtime_version : "");
    /* a GPU's ceiling is kf-harness cuda-info's bf16 cuBLAS GEMM rate */
    bool gpu = d->device_class && d->device_class->kind ==
                                      KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA;
    cutf(c->devices[k], sizeof c->devices[k],
             "%s: %u %s, L2 %.1f MiB, memory %.1f GiB, measured copy"
             " bandwidth %.1f GB/s%s, compute ceiling %.0f GFLOP/s%s, %u"
             " worker%s alive%s", cls, d->cores, gpu ? "SMs" : "cores",
             (double)d->l2_bytes / (1 << 20),
             (double)d->mem_bytes / (1 << 30), d->copy_gbps, rw,
             d->peak_gflops, gpu ? " (bf16 GEMM through cuBLAS)" : "",
             d->workers_alive, d->workers_alive == 1 ? "" : "s", env);
  }
  for (size_t pass = 0; pass < 2; pass++) {
    size_t n = pass ? p->fails->n_evaluations : r->n_top;
    for (size_t i = 0; i < n; i++) {
      const Kernelfleet__EvaluationSummary *e =
          pass ? p->fails->evaluations[i] : r->top[i];
      char d[256];
      dc_text(e->device_class, d, sizeof d);
      size_t k = 0;
      while (k < c->n_devices && strcmp(c->device_class[k], d)) k++;
      if (k == c->n_devices && k < 8) {
        snprintf(c->device_class[k], sizeof c->device_class[k], "%s", d);
        snprintf(c->devices[k], sizeof c->devices[k], "%s", d);
        c->n_devices++;
      }
    }
  }
  c->workers_alive = alive;
  *out = c;
  return 0;
}

/* -------------------------------------------------------------- plan -- */

/* The best kernel of each class: indices into c->best. */
static size_t class_heads(const kf_proposer_context *c, size_t *heads,
                          size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < c->n_best && n < max; i++)
    if (i == 0 || strcmp(c->best[i].device, c->best[i - 1].device))
      heads[n++] = i;
  return n;
}

/* What to change for each bound: the diagnosis names the limiter, so the
 * prescription says which changes can move it and which cannot. */
void kf_proposer_prescription(const kf_proposer_kernel *k, char *out,
                              size_t len) {
  const char *b = k->bound ? k->bound : "";
  const char *prof = k->profile[0] ? k->profile : "no hardware profile";
  if (!strcmp(b, "memory") && k->bw_frac >= 0.97) {
    cutf(out, len, "It is memory-bound at %.1f%% of the measured"
             " bandwidth: the ceiling is reached, so faster instructions"
             " cannot help.  Only moving fewer bytes can: fuse passes so"
             " each input is read once and each output written once, keep"
             " reused data in registers or shared memory, and drop any"
             " redundant or re-read traffic.  (%s; %s)", 100 * k->bw_frac,
             k->diagnosis, prof);
  } else if (!strcmp(b, "memory")) {
    cutf(out, len, "It is memory-bound at %.1f%% of the measured"
             " bandwidth: close the gap to the bandwidth ceiling.  Use wide"
             " (16-byte), aligned, coalesced loads and stores; keep more"
             " independent loads in flight per thread (unroll, several"
             " elements per thread); read every input once; avoid strided"
             " or partial-sector access.  Declare the vector width and"
             " elements per thread as knobs.  (%s; %s)", 100 * k->bw_frac,
             k->diagnosis, prof);
  } else if (!strcmp(b, "compute")) {
    cutf(out, len, "It is compute-bound at %.1f%% of the measured FLOP"
             " rate: do less arithmetic per element.  Hoist loop-invariant"
             " work, use fused multiply-adds, replace divisions and"
             " transcendentals by cheaper forms the tolerance allows,"
             " vectorize the math, and keep enough independent operations"
             " (ILP) per thread.  Declare unrolling as a knob.  (%s; %s)",
             100 * k->fl_frac, k->diagnosis, prof);
  } else if (!strcmp(b, "latency")) {
    cutf(out, len, "It is occupancy/latency-bound (%.1f%% of the"
             " bandwidth, %.1f%% of the FLOP rate): neither ceiling is near,"
             " it waits.  Expose more parallelism: more independent work"
             " per thread (ILP), more threads or blocks in flight, fewer"
             " registers and no spills, shorter dependency chains and"
             " reductions done as trees; remove serialization"
             " (atomics, barriers) on the hot path.  Declare threads per"
             " block and work per thread as knobs.  (%s; %s)",
             100 * k->bw_frac, 100 * k->fl_frac, k->diagnosis, prof);
  } else if (!strcmp(b, "launch")) {
    cutf(out, len, "It is launch-bound: the call is so short that"
             " launch and call overhead dominate (%s).  Do the whole"
             " problem in one launch with no per-call setup, no extra"
             " kernels, allocations or synchronizations, and size the grid"
             " to the device, not to the data.", k->diagnosis);
  } else if (k->roofline_fraction > 0 && k->roofline_fraction < 0.7) {
    cutf(out, len, "It reaches %.0f%% of the roofline floor: it moves"
             " or waits on more than it must.  Make one pass over memory,"
             " with wide contiguous loads and stores, and keep partial"
             " results in registers.", 100 * k->roofline_fraction);
  } else {
    cutf(out, len, "It is near the memory roofline (%.0f%%): cut"
             " instruction overhead (unroll, vectorize, hoist loop-invariant"
             " work) and overlap loads with computation.",
             100 * k->roofline_fraction);
  }
}

size_t kf_proposer_plan(const kf_proposer_context *c, uint32_t r,
                        uint32_t mask, kf_proposer_task *tasks, size_t max) {
  size_t n = 0;
  if (max > MAX_TASKS) max = MAX_TASKS;
  if (!mask) mask = 0xfu;
  size_t heads[16];
  size_t nh = class_heads(c, heads, 16);
  /* k bounds the rotation: every fourth operator never skips */
  for (uint32_t k = 0; n < max && k < 4 * MAX_TASKS + 4; k++) {
    kf_proposer_task *t = &tasks[n];
    memset(t, 0, sizeof *t);
    /* nothing measured: improve the reference, whatever the mask (every
     * other operator needs a kernel) */
    if (c->n_best == 0) {
      t->op = KF_PROPOSE_IMPROVE;
      n++;
      continue;
    }
    /* each run of four operators works on one class, the next run on
     * the next: a mask of one operator still visits every class */
    const kf_proposer_kernel *best = &c->best[heads[(r + k / 4) % nh]];
    if (!(mask & (1u << ((r + k) % 4)))) continue;
    switch ((r + k) % 4) {
    case 0:
      t->op = KF_PROPOSE_IMPROVE;
      t->a = best;
      break;
    case 1: {
      /* the class's best and the next kernel of the same class */
      const kf_proposer_kernel *b = best + 1;
      if (b >= c->best + c->n_best || strcmp(b->device, best->device))
        continue;
      t->op = KF_PROPOSE_COMBINE;
      t->a = best;
      t->b = b;
      break;
    }
    case 2:
      t->op = KF_PROPOSE_PRESCRIBE;
      t->a = best;
      kf_proposer_prescription(best, t->prescription,
                               sizeof t->prescription);
      break;
    default: {
      /* a class that evaluated the campaign's candidates but has no ok
       * kernel among the best is the port target; else another class of
       * the best list; with one class there is nothing to port to */
      const char *target = NULL;
      for (size_t d = 0; d < c->n_devices && !target; d++)
        if (strcmp(c->device_class[d], best->device))
          target = c->devices[d];
      for (size_t h = 0; h < nh && !target; h++)
        if (strcmp(c->best[heads[h]].device, best->device))
          target = c->best[heads[h]].device;
      if (!target) continue;
      t->op = KF_PROPOSE_PORT;
      t->a = best;
      cutf(t->device, sizeof t->device, "%s", target);
      break;
    }
    }
    n++;
  }
  return n;
}

/* ------------------------------------------------------------- round -- */

typedef struct {
  kf_proposer *p;
  const kf_proposer_context *ctx;
  const kf_proposer_task *tasks;
  kf_proposal *props;
  kf_proposer_acct *acct;
  int *rc;
  size_t n, next;
  pthread_mutex_t mu;
} work;

static void *worker(void *arg) {
  work *w = arg;
  for (;;) {
    pthread_mutex_lock(&w->mu);
    size_t i = w->next < w->n ? w->next++ : w->n;
    pthread_mutex_unlock(&w->mu);
    if (i == w->n) return NULL;
    w->rc[i] = w->p->ops->propose(w->p, w->ctx, &w->tasks[i], &w->props[i],
                                  &w->acct[i]);
    if (w->rc[i] && !w->acct[i].outcome[0])
      snprintf(w->acct[i].outcome, sizeof w->acct[i].outcome, "failed");
  }
}

/* Sends one proposal; fills the accounting's outcome, reason and the
 * candidate.  KF_ESTATE: the campaign takes no more. */
static int submit(kf_rpc_client *cli, const kf_proposer *p, int64_t id,
                  const kf_proposal *pr, int tmo, kf_proposer_acct *a,
                  int64_t *cand, bool *dup) {
  Kernelfleet__ProposeCandidateRequest q =
      KERNELFLEET__PROPOSE_CANDIDATE_REQUEST__INIT;
  Kernelfleet__KnobSpace ks[KF_SPEC_MAX_KNOBS], *ksp[KF_SPEC_MAX_KNOBS];
  char *vals[KF_SPEC_MAX_KNOBS][KF_SPEC_MAX_KNOB_VALUES];
  q.campaign_id = id;
  q.source = pr->source;
  q.proposer = (char *)p->label;
  q.template_name = (char *)pr->name;
  for (int k = 0; k < pr->n_knobs; k++) {
    kernelfleet__knob_space__init(&ks[k]);
    ks[k].name = (char *)pr->knobs[k].name;
    for (int v = 0; v < pr->knobs[k].n_values; v++)
      vals[k][v] = (char *)pr->knobs[k].values[v];
    ks[k].values = vals[k];
    ks[k].n_values = (size_t)pr->knobs[k].n_values;
    ksp[k] = &ks[k];
  }
  q.n_knob_space = (size_t)pr->n_knobs;
  q.knob_space = ksp;
  ProtobufCMessage *resp = NULL;
  char e[512] = "";
  int rc = kf_rpc_client_call_sync(
      cli, RPC("ProposeCandidate"), &q.base,
      &kernelfleet__propose_candidate_response__descriptor, tmo, &resp, e,
      sizeof e);
  if (rc && q.template_name[0] && strstr(e, "names another template")) {
    /* Models reuse names: the structure is new, so it gets the name of
     * its source's hash instead. */
    q.template_name = "";
    rc = kf_rpc_client_call_sync(
        cli, RPC("ProposeCandidate"), &q.base,
        &kernelfleet__propose_candidate_response__descriptor, tmo, &resp, e,
        sizeof e);
  }
  if (rc) {
    snprintf(a->outcome, sizeof a->outcome, "refused");
    snprintf(a->reason, sizeof a->reason, "ProposeCandidate: %s", e);
    return rc;
  }
  const Kernelfleet__ProposeCandidateResponse *r = (const void *)resp;
  *cand = r->candidate_id;
  *dup = r->duplicate;
  if (r->duplicate) {
    snprintf(a->outcome, sizeof a->outcome, "duplicate");
    snprintf(a->reason, sizeof a->reason, "the campaign holds this kernel"
             " already (candidate %" PRId64 ")", r->candidate_id);
  }
  kf_rpc_free(resp);
  return 0;
}

int kf_proposer_round(kf_rpc_client *cli, kf_proposer *p, int64_t id,
                      uint32_t round, const kf_proposer_round_opts *o,
                      kf_proposer_round_stats *st, char *err, size_t errlen) {
  memset(st, 0, sizeof *st);
  int tmo = o->timeout_ms > 0 ? o->timeout_ms : 30000;
  kf_proposer_context *ctx = NULL;
  int rc = kf_proposer_context_fetch(cli, id, 0, 0, tmo, &ctx, err, errlen);
  if (rc) return rc;
  if (strcmp(ctx->state, "running") != 0) {
    st->ended = true;
    kf_proposer_context_free(ctx);
    return 0;
  }
  kf_proposer_task tasks[MAX_TASKS];
  size_t n = kf_proposer_plan(ctx, round, o->ops, tasks,
                              o->requests ? o->requests : 2);
  kf_proposal props[MAX_TASKS];
  kf_proposer_acct acct[MAX_TASKS];
  int rcs[MAX_TASKS];
  memset(props, 0, sizeof props);
  memset(acct, 0, sizeof acct);
  work w = {.p = p, .ctx = ctx, .tasks = tasks, .props = props,
            .acct = acct, .rc = rcs, .n = n};
  pthread_mutex_init(&w.mu, NULL);
  uint32_t par = o->parallel ? o->parallel : 2;
  if (par > n) par = (uint32_t)n;
  pthread_t th[MAX_TASKS];
  uint32_t started = 0;
  for (; started < par; started++)
    if (pthread_create(&th[started], NULL, worker, &w)) break;
  if (started == 0) worker(&w); /* no thread: ask one by one here */
  for (uint32_t i = 0; i < started; i++) pthread_join(th[i], NULL);
  pthread_mutex_destroy(&w.mu);

  Kernelfleet__ProposerCall calls[MAX_TASKS], *cp[MAX_TASKS];
  for (size_t i = 0; i < n; i++) {
    int64_t cand = 0;
    bool dup = false;
    st->calls++;
    if (rcs[i] == 0) {
      int s = submit(cli, p, id, &props[i], tmo, &acct[i], &cand, &dup);
      if (s == KF_ESTATE) st->ended = true;
      if (s) st->failed++;
      else if (dup) st->duplicates++;
      else st->proposed++;
    } else {
      st->failed++;
    }
    if (!o->quiet)
      fprintf(stderr, "  proposer %s: %s -> %s%s%s\n", p->label,
              kf_proposer_op_name(tasks[i].op), acct[i].outcome,
              acct[i].reason[0] ? ": " : "", acct[i].reason);
    /* Reasons quote the model and the endpoint: made valid, printable
     * UTF-8 before they travel (the coordinator refuses anything else). */
    char clean[sizeof acct[i].reason];
    kf_text_sanitize(acct[i].reason, strlen(acct[i].reason), clean,
                     sizeof clean, 0);
    memcpy(acct[i].reason, clean, sizeof clean);
    kernelfleet__proposer_call__init(&calls[i]);
    calls[i].proposer = p->label;
    calls[i].model = acct[i].model;
    calls[i].prompt_version = acct[i].prompt_version;
    calls[i].operation = (char *)kf_proposer_op_name(tasks[i].op);
    calls[i].outcome = acct[i].outcome;
    calls[i].reason = acct[i].reason;
    calls[i].http_status = acct[i].http_status;
    calls[i].attempts = acct[i].attempts;
    calls[i].prompt_tokens = acct[i].prompt_tokens;
    calls[i].completion_tokens = acct[i].completion_tokens;
    calls[i].cost = acct[i].cost;
    calls[i].latency_ms = acct[i].latency_ms;
    calls[i].candidate_id = dup ? 0 : cand;
    cp[i] = &calls[i];
    kf_proposal_clear(&props[i]);
  }
  rc = 0;
  if (n) {
    Kernelfleet__ProposerRecordCallsRequest rq =
        KERNELFLEET__PROPOSER_RECORD_CALLS_REQUEST__INIT;
    rq.campaign_id = id;
    rq.n_calls = n;
    rq.calls = cp;
    ProtobufCMessage *resp = NULL;
    rc = call(cli, RPC("ProposerRecordCalls"), &rq.base,
              &kernelfleet__proposer_record_calls_response__descriptor, tmo,
              &resp, err, errlen);
    kf_rpc_free(resp);
  }
  kf_proposer_context_free(ctx);
  return rc;
}
