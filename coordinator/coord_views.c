/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/coord_views.c -- the dashboard's read-only RPCs:
 * ListCampaigns, GetCampaignSeries, GetReference (docs/dashboard.md).
 *
 * Same shape as coord_campaign.c: the handler (loop thread) validates,
 * naming the field in an INVALID_ARGUMENT, and parks a KF_OP_VIEW op;
 * kf_coord__view_work runs the store's reads on the batch's work thread;
 * kf_coord__view_answer (loop thread) replies.  Nothing here writes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "coord_check.h"
#include "err.h"

#define LIST_DEFAULT 50
#define LIST_MAX 500
#define SERIES_DEFAULT 5000
#define SERIES_MAX 100000

typedef enum { VIEW_LIST, VIEW_SERIES, VIEW_REFERENCE } view_rpc;

typedef struct kf_coord__view {
  view_rpc rpc;
  kf_campaign_summaries *list; /* LIST */
  kf_eval_series *series;      /* SERIES */
  kf_campaign *camp;           /* REFERENCE */
} view_op;

void kf_coord__view_free(kf_coord_op *op) {
  view_op *v = op->view;
  if (!v) return;
  kf_store_summaries_free(v->list);
  kf_store_series_free(v->series);
  kf_store_campaign_free(v->camp);
  free(v);
  op->view = NULL;
}

static void push(kf_rpc_call *call, const ProtobufCMessage *m, void *data,
                 view_rpc rpc) {
  view_op *v = calloc(1, sizeof *v);
  if (!v) {
    kf_rpc_call_fail(call, KF_ENOMEM, "coordinator out of memory");
    return;
  }
  v->rpc = rpc;
  kf_coord_op *op = kf_coord__op_new(data, KF_OP_VIEW, call, m);
  if (!op) { /* answered already */
    free(v);
    return;
  }
  op->view = v;
  kf_coord__push(data, op);
}

/* ---------------------------------------------------------- validation -- */

bool kf_coord__check_list_campaigns(const Kernelfleet__ListCampaignsRequest *r,
                                    char *bad, size_t blen) {
  if (r->limit > LIST_MAX) {
    snprintf(bad, blen, "limit must be 0..%d", LIST_MAX);
    return false;
  }
  if (r->before_id < 0) {
    snprintf(bad, blen, "before_id must not be negative");
    return false;
  }
  return true;
}

bool kf_coord__check_series(const Kernelfleet__GetCampaignSeriesRequest *r,
                            char *bad, size_t blen) {
  if (!kf_coord__check_campaign_id(r->campaign_id, bad, blen)) return false;
  if (r->limit <= SERIES_MAX) return true;
  snprintf(bad, blen, "limit must be 0..%d", SERIES_MAX);
  return false;
}

void kf_coord__on_list_campaigns(kf_rpc_call *call, const ProtobufCMessage *m,
                                 void *data) {
  char bad[96] = "";
  if (!kf_coord__check_list_campaigns((const void *)m, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  push(call, m, data, VIEW_LIST);
}

void kf_coord__on_get_series(kf_rpc_call *call, const ProtobufCMessage *m,
                             void *data) {
  char bad[96] = "";
  if (!kf_coord__check_series((const void *)m, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  push(call, m, data, VIEW_SERIES);
}

void kf_coord__on_get_reference(kf_rpc_call *call, const ProtobufCMessage *m,
                                void *data) {
  const Kernelfleet__GetReferenceRequest *r = (const void *)m;
  char bad[96] = "";
  if (!kf_coord__check_campaign_id(r->campaign_id, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  push(call, m, data, VIEW_REFERENCE);
}

/* ------------------------------------------------------- work thread -- */

void kf_coord__view_work(kf_store *s, kf_coord_op *op) {
  view_op *v = op->view;
  int rc = 0;
  switch (v->rpc) {
  case VIEW_LIST: {
    const Kernelfleet__ListCampaignsRequest *r = (const void *)op->req;
    rc = kf_store_campaign_summaries(s, r->limit ? r->limit : LIST_DEFAULT,
                                     r->before_id, &v->list);
    break;
  }
  case VIEW_SERIES: {
    const Kernelfleet__GetCampaignSeriesRequest *r = (const void *)op->req;
    rc = kf_store_eval_series(s, r->campaign_id,
                              r->limit ? r->limit : SERIES_DEFAULT,
                              &v->series);
    break;
  }
  case VIEW_REFERENCE: {
    const Kernelfleet__GetReferenceRequest *r = (const void *)op->req;
    rc = kf_store_campaign_get(s, r->campaign_id, &v->camp);
    break;
  }
  }
  if (rc) {
    op->rc = rc;
    snprintf(op->err, sizeof op->err, "%s", kf_store_errmsg(s));
  }
}

/* ---------------------------------------------------------- answers -- */

static void dc_view(Kernelfleet__DeviceClass *p, const kf_device_class *dc) {
  kernelfleet__device_class__init(p);
  p->kind = (Kernelfleet__DeviceKind)dc->kind;
  p->model = (char *)dc->model;
  p->cc_major = dc->cc_major;
  p->cc_minor = dc->cc_minor;
  p->isa = (char *)dc->isa;
}

static void answer_list(kf_coord_op *op, const kf_campaign_summaries *l) {
  size_t n = l->n, nc = l->n_classes;
  Kernelfleet__CampaignSummary *cs = calloc(n + 1, sizeof *cs);
  Kernelfleet__CampaignSummary **csp = calloc(n + 1, sizeof *csp);
  Kernelfleet__Campaign *cp = calloc(n + 1, sizeof *cp);
  Kernelfleet__ClassProgress *kp = calloc(nc + 1, sizeof *kp);
  Kernelfleet__ClassProgress **kpp = calloc(nc + 1, sizeof *kpp);
  Kernelfleet__DeviceClass *dcs = calloc(nc + 1, sizeof *dcs);
  if (!cs || !csp || !cp || !kp || !kpp || !dcs) {
    kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
    goto out;
  }
  for (size_t j = 0; j < nc; j++) {
    const kf_class_progress *k = &l->classes[j];
    kernelfleet__class_progress__init(&kp[j]);
    dc_view(&dcs[j], &k->dc);
    kp[j].device_class = &dcs[j];
    kp[j].evals_done = k->evals;
    kp[j].evals_ok = k->evals_ok;
    kp[j].best_speedup = k->best_speedup;
    kp[j].best_roofline_fraction = k->best_roofline;
    kp[j].best_time_ns = k->best_time_ns;
    kpp[j] = &kp[j];
  }
  /* Both lists are by campaign id, descending: walk them together. */
  size_t j = 0;
  for (size_t i = 0; i < n; i++) {
    const kf_campaign_summary *c = &l->v[i];
    kernelfleet__campaign_summary__init(&cs[i]);
    kernelfleet__campaign__init(&cp[i]);
    cp[i].campaign_id = c->id;
    cp[i].name = (char *)c->name;
    cp[i].problem = (char *)c->problem;
    cp[i].state = (char *)c->state;
    cp[i].budget_evals = c->budget_evals;
    cp[i].budget_seconds = c->budget_seconds;
    cp[i].fresh = c->fresh;
    cp[i].showdown_top = c->showdown_top;
    cs[i].campaign = &cp[i];
    cs[i].evals_done = c->evals;
    cs[i].evals_ok = c->evals_ok;
    cs[i].evals_running = c->outstanding;
    cs[i].best_speedup = c->best_speedup;
    cs[i].best_roofline_fraction = c->best_roofline;
    cs[i].stop_reason = (char *)c->stop_reason;
    cs[i].elapsed_ms = c->elapsed_ms;
    cs[i].showdown = (char *)c->showdown;
    cs[i].language = (char *)c->language;
    while (j < nc && l->classes[j].campaign_id > c->id) j++;
    size_t first = j;
    while (j < nc && l->classes[j].campaign_id == c->id) j++;
    cs[i].n_classes = j - first;
    cs[i].classes = j > first ? &kpp[first] : NULL;
    csp[i] = &cs[i];
  }
  Kernelfleet__ListCampaignsResponse resp =
      KERNELFLEET__LIST_CAMPAIGNS_RESPONSE__INIT;
  resp.n_campaigns = n;
  resp.campaigns = csp;
  kf_rpc_call_reply(op->call, &resp.base);
out:
  free(cs);
  free(csp);
  free(cp);
  free(kp);
  free(kpp);
  free(dcs);
}

static void answer_series(kf_coord_op *op, const kf_eval_series *l) {
  size_t n = l->n;
  Kernelfleet__EvalPoint *pt = calloc(n + 1, sizeof *pt);
  Kernelfleet__EvalPoint **ptp = calloc(n + 1, sizeof *ptp);
  Kernelfleet__DeviceClass *dcs = calloc(n + 1, sizeof *dcs);
  if (!pt || !ptp || !dcs) {
    kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    const kf_eval_point *e = &l->v[i];
    kernelfleet__eval_point__init(&pt[i]);
    dc_view(&dcs[i], &e->dc);
    pt[i].candidate_id = e->candidate_id;
    pt[i].task_id = e->task_id;
    pt[i].outcome = (Kernelfleet__Outcome)e->outcome;
    pt[i].stage = (char *)e->stage;
    pt[i].device_class = &dcs[i];
    pt[i].finished_at_ms = e->at_ms;
    pt[i].time_ns_median = e->time_ns_median;
    pt[i].speedup = e->speedup;
    pt[i].roofline_fraction = e->roofline_fraction;
    pt[i].achieved_gbps = e->achieved_gbps;
    pt[i].ceiling_gbps = e->ceiling_gbps;
    pt[i].peak_gflops = e->peak_gflops;
    ptp[i] = &pt[i];
  }
  Kernelfleet__GetCampaignSeriesResponse resp =
      KERNELFLEET__GET_CAMPAIGN_SERIES_RESPONSE__INIT;
  resp.started_at_ms = l->started_at_ms;
  resp.n_points = n;
  resp.points = ptp;
  kf_rpc_call_reply(op->call, &resp.base);
out:
  free(pt);
  free(ptp);
  free(dcs);
}

void kf_coord__view_answer(kf_coord *co, kf_coord_op *op) {
  (void)co;
  view_op *v = op->view;
  switch (v->rpc) {
  case VIEW_LIST:
    answer_list(op, v->list);
    break;
  case VIEW_SERIES:
    answer_series(op, v->series);
    break;
  case VIEW_REFERENCE: {
    Kernelfleet__GetReferenceResponse resp =
        KERNELFLEET__GET_REFERENCE_RESPONSE__INIT;
    resp.problem = (char *)v->camp->problem;
    resp.language = (char *)v->camp->language;
    resp.reference_source = (char *)v->camp->reference_source;
    kf_rpc_call_reply(op->call, &resp.base);
    break;
  }
  }
}
