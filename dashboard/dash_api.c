/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dashboard/dash_api.c -- the JSON endpoints: each GET /api/... is one or
 * two read RPCs to the coordinator, made with the caller's own credential,
 * turned into JSON with cJSON (which escapes every string: names, reasons
 * and sources come from whoever submitted them).
 *
 *   campaigns                  ListCampaigns: progress, per device class
 *   campaigns/ID               GetCampaign: status, best, top 10
 *   campaigns/ID/series        GetCampaignSeries: every evaluation's time,
 *                              speedup, bandwidth and the device's ceiling
 *   campaigns/ID/evaluations   ListEvaluations: the newest 500
 *   campaigns/ID/sources       GetBest's source (null when none yet) and
 *                              GetReference's
 *
 * The calls go through kf_rpc_client_call_raw_sync, whose per-call token
 * lets one channel serve every user with that user's credential.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dash_internal.h"
#include "err.h"
#include "kernelfleet.pb-c.h"
#include "outcome.h"
#include "profile_json.h"
#include "util.h"

#define RPC_TIMEOUT_MS 30000
#define SVC "/kernelfleet.Coordinator/"

/* One read RPC with token.  0 with *resp (kf_rpc_free), or KF_E* with the
 * server's text in err. */
static int call(kf_rpc_client *cli, const char *token, const char *method,
                const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *type,
                ProtobufCMessage **resp, char *err, size_t errlen) {
  *resp = NULL;
  size_t n = protobuf_c_message_get_packed_size(req);
  uint8_t *buf = malloc(n + 1);
  if (!buf) return kf_seterr(KF_ENOMEM, err, errlen, "out of memory");
  protobuf_c_message_pack(req, buf);
  char path[96];
  snprintf(path, sizeof path, SVC "%s", method);
  void *out = NULL;
  size_t outlen = 0;
  int rc = kf_rpc_client_call_raw_sync(cli, path, buf, n, token,
                                       RPC_TIMEOUT_MS, &out, &outlen, err,
                                       errlen);
  free(buf);
  if (rc) return rc;
  *resp = protobuf_c_message_unpack(type, NULL, outlen, out);
  free(out);
  if (!*resp)
    return kf_seterr(KF_EPROTO, err, errlen, "%s: malformed response",
                     method);
  return 0;
}

static int http_status(int rc) {
  switch (rc) {
  case 0: return 200;
  case KF_EAUTH: return 401;
  case KF_EPERM: return 403;
  case KF_ENOTFOUND: return 404;
  case KF_EINVAL: case KF_EPROTO: return 400;
  case KF_EUNAVAIL: case KF_ETIMEDOUT: case KF_EBUSY: return 502;
  default: return 500;
  }
}

static char *error_json(const char *what, const char *why) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "error", what);
  cJSON_AddStringToObject(j, "detail", why ? why : "");
  char *s = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return s;
}

/* -------------------------------------------------------------- views -- */

static void add_class(cJSON *o, const char *key,
                      const Kernelfleet__DeviceClass *dc) {
  if (!dc) {
    cJSON_AddNullToObject(o, key);
    return;
  }
  /* one readable label per class, as the CLI prints it */
  char label[256];
  if (dc->kind == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA)
    snprintf(label, sizeof label, "%s (sm_%u%u)", dc->model ? dc->model : "",
             dc->cc_major, dc->cc_minor);
  else
    snprintf(label, sizeof label, "%s (%s)", dc->model ? dc->model : "",
             dc->isa ? dc->isa : "");
  cJSON_AddStringToObject(o, key, label);
}

static void add_status(cJSON *j, const Kernelfleet__CampaignStatus *st) {
  const Kernelfleet__Campaign *c = st->campaign;
  if (c) {
    cJSON_AddNumberToObject(j, "id", (double)c->campaign_id);
    cJSON_AddStringToObject(j, "name", c->name);
    cJSON_AddStringToObject(j, "problem", c->problem);
    cJSON_AddStringToObject(j, "state", c->state);
    cJSON_AddNumberToObject(j, "budget_evals", c->budget_evals);
    cJSON_AddNumberToObject(j, "budget_seconds", c->budget_seconds);
  }
  cJSON_AddNumberToObject(j, "evals_done", st->evals_done);
  cJSON_AddNumberToObject(j, "evals_ok", st->evals_ok);
  cJSON_AddNumberToObject(j, "evals_running", st->evals_running);
  cJSON_AddNumberToObject(j, "best_speedup", st->best_speedup);
  cJSON_AddNumberToObject(j, "best_time_ns", st->best_time_ns);
  cJSON_AddNumberToObject(j, "ref_time_ns", st->ref_time_ns);
  cJSON_AddNumberToObject(j, "best_candidate_id",
                          (double)st->best_candidate_id);
  cJSON_AddNumberToObject(j, "roofline_fraction", st->roofline_fraction);
  cJSON_AddStringToObject(j, "stop_reason", st->stop_reason);
  cJSON_AddNumberToObject(j, "elapsed_ms", (double)st->elapsed_ms);
  cJSON_AddStringToObject(j, "showdown", st->showdown);
  cJSON_AddBoolToObject(j, "best_from_showdown", st->best_from_showdown);
  cJSON *oc = cJSON_AddObjectToObject(j, "outcomes");
  for (size_t i = 0; oc && i < st->n_outcomes; i++)
    cJSON_AddNumberToObject(oc, kf_outcome_name((int)st->outcomes[i]->outcome),
                            st->outcomes[i]->count);
}

static cJSON *eval_json(const Kernelfleet__EvaluationSummary *e) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "candidate_id", (double)e->candidate_id);
  cJSON_AddNumberToObject(o, "task_id", (double)e->task_id);
  cJSON_AddStringToObject(o, "template", e->template_name);
  cJSON *k = cJSON_AddObjectToObject(o, "knobs");
  for (size_t i = 0; k && i < e->n_knobs; i++)
    cJSON_AddStringToObject(k, e->knobs[i]->name, e->knobs[i]->value);
  cJSON_AddStringToObject(o, "outcome", kf_outcome_name((int)e->outcome));
  cJSON_AddStringToObject(o, "stage", e->stage);
  cJSON_AddStringToObject(o, "reason", e->reason);
  cJSON_AddNumberToObject(o, "time_ns_median", e->time_ns_median);
  cJSON_AddNumberToObject(o, "time_ns_spread", e->time_ns_spread);
  cJSON_AddNumberToObject(o, "ref_time_ns_median", e->ref_time_ns_median);
  cJSON_AddNumberToObject(o, "speedup", e->speedup);
  /* PyTorch problems: the compile baselines timed in the same evaluation
   * (null where not timed) */
  if (e->speedup_compile > 0)
    cJSON_AddNumberToObject(o, "speedup_compile", e->speedup_compile);
  else
    cJSON_AddNullToObject(o, "speedup_compile");
  if (e->speedup_max_autotune > 0)
    cJSON_AddNumberToObject(o, "speedup_max_autotune",
                            e->speedup_max_autotune);
  else
    cJSON_AddNullToObject(o, "speedup_max_autotune");
  cJSON_AddNumberToObject(o, "roofline_fraction", e->roofline_fraction);
  cJSON_AddStringToObject(o, "proposer", e->proposer);
  add_class(o, "device_class", e->device_class);
  cJSON_AddNumberToObject(o, "reused_from", (double)e->reused_from);
  cJSON_AddBoolToObject(o, "showdown", e->showdown);
  cJSON_AddNumberToObject(o, "measurements", e->measurements);
  /* The diagnosis as its sentence ("memory-bound at 93% of ..."), the
   * profile as its JSON view (status, counters, stalls). */
  if (e->diagnosis && e->diagnosis->detail && *e->diagnosis->detail)
    cJSON_AddStringToObject(o, "diagnosis", e->diagnosis->detail);
  else
    cJSON_AddNullToObject(o, "diagnosis");
  cJSON_AddItemToObject(o, "profile", kf_prof_json_report(e->profile));
  return o;
}

static cJSON *view_list(const Kernelfleet__ListCampaignsResponse *r) {
  cJSON *j = cJSON_CreateObject();
  cJSON *arr = j ? cJSON_AddArrayToObject(j, "campaigns") : NULL;
  for (size_t i = 0; arr && i < r->n_campaigns; i++) {
    const Kernelfleet__CampaignSummary *s = r->campaigns[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) break;
    cJSON_AddItemToArray(arr, o);
    const Kernelfleet__Campaign *c = s->campaign;
    if (c) {
      cJSON_AddNumberToObject(o, "id", (double)c->campaign_id);
      cJSON_AddStringToObject(o, "name", c->name);
      cJSON_AddStringToObject(o, "problem", c->problem);
      cJSON_AddStringToObject(o, "state", c->state);
      cJSON_AddNumberToObject(o, "budget_evals", c->budget_evals);
      cJSON_AddNumberToObject(o, "budget_seconds", c->budget_seconds);
    }
    cJSON_AddStringToObject(o, "language", s->language);
    cJSON_AddNumberToObject(o, "evals_done", s->evals_done);
    cJSON_AddNumberToObject(o, "evals_ok", s->evals_ok);
    cJSON_AddNumberToObject(o, "evals_running", s->evals_running);
    cJSON_AddNumberToObject(o, "best_speedup", s->best_speedup);
    cJSON_AddNumberToObject(o, "best_roofline_fraction",
                            s->best_roofline_fraction);
    cJSON_AddStringToObject(o, "stop_reason", s->stop_reason);
    cJSON_AddNumberToObject(o, "elapsed_ms", (double)s->elapsed_ms);
    cJSON_AddStringToObject(o, "showdown", s->showdown);
    cJSON *cl = cJSON_AddArrayToObject(o, "classes");
    for (size_t k = 0; cl && k < s->n_classes; k++) {
      const Kernelfleet__ClassProgress *p = s->classes[k];
      cJSON *x = cJSON_CreateObject();
      if (!x) break;
      cJSON_AddItemToArray(cl, x);
      add_class(x, "device_class", p->device_class);
      cJSON_AddNumberToObject(x, "evals_done", p->evals_done);
      cJSON_AddNumberToObject(x, "evals_ok", p->evals_ok);
      cJSON_AddNumberToObject(x, "best_speedup", p->best_speedup);
      cJSON_AddNumberToObject(x, "best_roofline_fraction",
                              p->best_roofline_fraction);
      cJSON_AddNumberToObject(x, "best_time_ns", p->best_time_ns);
    }
  }
  return j;
}

static cJSON *view_campaign(const Kernelfleet__GetCampaignResponse *g) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  if (g->status) add_status(j, g->status);
  cJSON *top = cJSON_AddArrayToObject(j, "top");
  for (size_t i = 0; top && i < g->n_top; i++) {
    cJSON *e = eval_json(g->top[i]);
    if (e) cJSON_AddItemToArray(top, e);
  }
  return j;
}

static cJSON *view_series(const Kernelfleet__GetCampaignSeriesResponse *r) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddNumberToObject(j, "started_at_ms", (double)r->started_at_ms);
  cJSON *arr = cJSON_AddArrayToObject(j, "points");
  for (size_t i = 0; arr && i < r->n_points; i++) {
    const Kernelfleet__EvalPoint *p = r->points[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) break;
    cJSON_AddItemToArray(arr, o);
    cJSON_AddNumberToObject(o, "candidate_id", (double)p->candidate_id);
    cJSON_AddStringToObject(o, "outcome", kf_outcome_name((int)p->outcome));
    cJSON_AddStringToObject(o, "stage", p->stage);
    add_class(o, "device_class", p->device_class);
    cJSON_AddNumberToObject(o, "t_ms", (double)p->finished_at_ms);
    cJSON_AddNumberToObject(o, "time_ns_median", p->time_ns_median);
    cJSON_AddNumberToObject(o, "speedup", p->speedup);
    cJSON_AddNumberToObject(o, "roofline_fraction", p->roofline_fraction);
    cJSON_AddNumberToObject(o, "achieved_gbps", p->achieved_gbps);
    cJSON_AddNumberToObject(o, "ceiling_gbps", p->ceiling_gbps);
    cJSON_AddNumberToObject(o, "peak_gflops", p->peak_gflops);
    cJSON_AddBoolToObject(o, "reused", p->task_id == 0);
  }
  return j;
}

static cJSON *view_evals(const Kernelfleet__ListEvaluationsResponse *r) {
  cJSON *j = cJSON_CreateObject();
  cJSON *arr = j ? cJSON_AddArrayToObject(j, "evaluations") : NULL;
  for (size_t i = 0; arr && i < r->n_evaluations; i++) {
    cJSON *e = eval_json(r->evaluations[i]);
    if (e) cJSON_AddItemToArray(arr, e);
  }
  return j;
}

/* ------------------------------------------------------------ routing -- */

/* "campaigns/ID[/what]" -> id and what ("" for none); false when the path
 * is not of that shape. */
static bool parse_campaign_path(const char *path, int64_t *id,
                                const char **what) {
  const char *p = path + strlen("campaigns/");
  uint64_t v = 0;
  size_t n = 0;
  while (p[n] >= '0' && p[n] <= '9' && n < 19) v = v * 10 + (uint64_t)(p[n++] - '0');
  if (n == 0 || v == 0 || v > INT64_MAX || (p[n] && p[n] != '/')) return false;
  *id = (int64_t)v;
  *what = p[n] ? p + n + 1 : "";
  return true;
}

int kf_dash__api(kf_rpc_client *cli, const char *token, const char *path,
                 char **body, bool *auth_refused) {
  *body = NULL;
  *auth_refused = false;
  char err[512] = "";
  int rc = 0;
  cJSON *j = NULL;
  ProtobufCMessage *resp = NULL, *resp2 = NULL;
  int64_t id = 0;
  const char *what = "";
  if (!strcmp(path, "campaigns")) {
    Kernelfleet__ListCampaignsRequest q = KERNELFLEET__LIST_CAMPAIGNS_REQUEST__INIT;
    q.limit = 100;
    rc = call(cli, token, "ListCampaigns", &q.base,
              &kernelfleet__list_campaigns_response__descriptor, &resp, err,
              sizeof err);
    if (!rc) j = view_list((const void *)resp);
  } else if (!strncmp(path, "campaigns/", 10) &&
             parse_campaign_path(path, &id, &what)) {
    if (!*what) {
      Kernelfleet__GetCampaignRequest q = KERNELFLEET__GET_CAMPAIGN_REQUEST__INIT;
      q.campaign_id = id;
      q.top = 10;
      rc = call(cli, token, "GetCampaign", &q.base,
                &kernelfleet__get_campaign_response__descriptor, &resp, err,
                sizeof err);
      if (!rc) j = view_campaign((const void *)resp);
    } else if (!strcmp(what, "series")) {
      Kernelfleet__GetCampaignSeriesRequest q =
          KERNELFLEET__GET_CAMPAIGN_SERIES_REQUEST__INIT;
      q.campaign_id = id;
      rc = call(cli, token, "GetCampaignSeries", &q.base,
                &kernelfleet__get_campaign_series_response__descriptor, &resp,
                err, sizeof err);
      if (!rc) j = view_series((const void *)resp);
    } else if (!strcmp(what, "evaluations")) {
      Kernelfleet__ListEvaluationsRequest q =
          KERNELFLEET__LIST_EVALUATIONS_REQUEST__INIT;
      q.campaign_id = id;
      q.limit = 500;
      rc = call(cli, token, "ListEvaluations", &q.base,
                &kernelfleet__list_evaluations_response__descriptor, &resp,
                err, sizeof err);
      if (!rc) j = view_evals((const void *)resp);
    } else if (!strcmp(what, "sources")) {
      Kernelfleet__GetReferenceRequest q = KERNELFLEET__GET_REFERENCE_REQUEST__INIT;
      q.campaign_id = id;
      rc = call(cli, token, "GetReference", &q.base,
                &kernelfleet__get_reference_response__descriptor, &resp, err,
                sizeof err);
      if (!rc) {
        Kernelfleet__GetBestRequest b = KERNELFLEET__GET_BEST_REQUEST__INIT;
        b.campaign_id = id;
        char err2[512] = "";
        int rb = call(cli, token, "GetBest", &b.base,
                      &kernelfleet__get_best_response__descriptor, &resp2,
                      err2, sizeof err2);
        /* No ok evaluation yet is not an error of this page. */
        if (rb && rb != KF_ENOTFOUND) {
          rc = rb;
          snprintf(err, sizeof err, "%s", err2);
        }
      }
      if (!rc) {
        const Kernelfleet__GetReferenceResponse *ref = (const void *)resp;
        j = cJSON_CreateObject();
        if (j) {
          cJSON_AddStringToObject(j, "problem", ref->problem);
          cJSON_AddStringToObject(j, "language", ref->language);
          cJSON_AddStringToObject(j, "reference", ref->reference_source);
          if (resp2) {
            const Kernelfleet__GetBestResponse *b = (const void *)resp2;
            cJSON *best = b->best ? eval_json(b->best) : cJSON_CreateObject();
            if (best) {
              cJSON_AddStringToObject(best, "source", b->source);
              cJSON_AddItemToObject(j, "best", best);
            }
          } else {
            cJSON_AddNullToObject(j, "best");
          }
        }
      }
    } else {
      rc = KF_ENOTFOUND;
      snprintf(err, sizeof err, "no such view: %s", what);
    }
  } else {
    rc = KF_ENOTFOUND;
    snprintf(err, sizeof err, "no such endpoint");
  }
  kf_rpc_free(resp);
  kf_rpc_free(resp2);
  if (!rc && !j) {
    rc = KF_ENOMEM;
    snprintf(err, sizeof err, "out of memory");
  }
  if (rc) {
    cJSON_Delete(j);
    *auth_refused = rc == KF_EAUTH;
    *body = error_json(rc == KF_EAUTH   ? "the coordinator refused this credential"
                       : rc == KF_EPERM ? "this credential's role may not read it"
                                        : kf_strerror(rc),
                       err);
    return http_status(rc);
  }
  *body = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return *body ? 200 : 500;
}

int kf_dash__check_token(kf_rpc_client *cli, const char *token, char *err,
                         size_t errlen) {
  Kernelfleet__ListCampaignsRequest q = KERNELFLEET__LIST_CAMPAIGNS_REQUEST__INIT;
  q.limit = 1;
  ProtobufCMessage *resp = NULL;
  int rc = call(cli, token, "ListCampaigns", &q.base,
                &kernelfleet__list_campaigns_response__descriptor, &resp, err,
                errlen);
  kf_rpc_free(resp);
  return rc;
}
