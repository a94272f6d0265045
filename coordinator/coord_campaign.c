/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/coord_campaign.c -- the campaign RPCs: CreateCampaign,
 * GetCampaign, ListEvaluations, GetBest, StopCampaign, ProposeCandidate.
 *
 * Same shape as coord_rpc.c: a handler (loop thread) validates, naming the
 * field in an INVALID_ARGUMENT, prepares what the store needs (a parsed
 * spec's floor bytes, templates as JSON, canonical flags), and parks a
 * KF_OP_CAMPAIGN op; kf_coord__campaign_work runs it on the batch's work
 * thread; kf_coord__campaign_answer (loop thread) replies.  The search
 * itself (search.c) runs in the batch after these ops, so a campaign
 * created or a candidate proposed in one batch gets its tasks in it.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "coord_check.h"
#include "err.h"
#include "log.h"
#include "outcome.h"
#include "spec.h"
#include "util.h"

#define MAX_TOP 1000
#define MAX_LIST 100000
#define MAX_SOURCE (4u << 20) /* bytes of one candidate or template */

typedef enum {
  CAMP_CREATE,
  CAMP_GET,
  CAMP_LIST,
  CAMP_BEST,
  CAMP_STOP,
  CAMP_PROPOSE,
} camp_rpc;

/* What one campaign op carries between the threads. */
typedef struct kf_coord__camp {
  camp_rpc rpc;
  /* inputs, built on the loop thread */
  kf_campaign_new nw;
  char *templates_json; /* CREATE */
  char *knobs_json;     /* PROPOSE */
  char flags[1024];     /* PROPOSE; CREATE: the problem name */
  char spec_sha[65];    /* CREATE: kf_spec_canonical_hash */
  uint64_t need_bytes;  /* CREATE: memory the harness maps for it */
  char need_text[256];  /* CREATE: how need_bytes was counted */
  /* outputs, written on the work thread */
  int64_t id;
  bool duplicate, changed;
  kf_campaign *camp;
  kf_campaign_counts counts;
  kf_cand_list *list;
} camp_op;

void kf_coord__campaign_free(kf_coord_op *op) {
  camp_op *c = op->camp;
  if (!c) return;
  free(c->templates_json);
  free(c->knobs_json);
  kf_store_campaign_free(c->camp);
  kf_store_list_free(c->list);
  free(c);
  op->camp = NULL;
}

static void push(kf_coord *co, kf_rpc_call *call, const ProtobufCMessage *m,
                 camp_op *c) {
  kf_coord_op *op = kf_coord__op_new(co, KF_OP_CAMPAIGN, call, m);
  if (!op) { /* answered already */
    free(c->templates_json);
    free(c->knobs_json);
    free(c);
    return;
  }
  op->camp = c;
  kf_coord__push(co, op);
}

static camp_op *camp_new(kf_rpc_call *call, camp_rpc rpc) {
  camp_op *c = calloc(1, sizeof *c);
  if (!c) kf_rpc_call_fail(call, KF_ENOMEM, "coordinator out of memory");
  else c->rpc = rpc;
  return c;
}

/* ---------------------------------------------------------- validation -- */

static bool ident_ok(const char *s, size_t max) {
  size_t n = s ? strlen(s) : 0;
  if (n == 0 || n > max || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)s[i]) && s[i] != '_') return false;
  return true;
}

/* Knob values become -DNAME=VALUE on a compiler command line. */
static bool value_ok(const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (n == 0 || n > 23) return false;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)s[i]) && !strchr("_.+-", s[i])) return false;
  return true;
}

static bool name_ok(const char *s, size_t max) {
  size_t n = s ? strlen(s) : 0;
  if (n == 0 || n > max) return false;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i])) return false;
  return true;
}

/* Validates the templates and renders them as the campaigns.templates
 * JSON.  Returns NULL with the reason in bad. */
static char *templates_json(const Kernelfleet__CreateCampaignRequest *r,
                            char *bad, size_t blen) {
  if (r->n_templates == 0 || r->n_templates > KF_SPEC_MAX_TEMPLATES) {
    snprintf(bad, blen, "templates must hold 1..%d entries",
             KF_SPEC_MAX_TEMPLATES);
    return NULL;
  }
  for (size_t i = 0; i < r->n_templates; i++) {
    const Kernelfleet__TemplateSource *t = r->templates[i];
    if (!name_ok(t->name, 63)) {
      snprintf(bad, blen, "templates[%zu].name must be 1..63 characters of"
               " [A-Za-z0-9_.-]", i);
      return NULL;
    }
    for (size_t j = 0; j < i; j++)
      if (strcmp(r->templates[j]->name, t->name) == 0) {
        snprintf(bad, blen, "templates[%zu].name '%s' repeats templates[%zu]",
                 i, t->name, j);
        return NULL;
      }
    size_t sl = t->source ? strlen(t->source) : 0;
    if (sl == 0 || sl > MAX_SOURCE) {
      snprintf(bad, blen, "templates[%zu].source must be 1..%u bytes", i,
               MAX_SOURCE);
      return NULL;
    }
    if (t->n_knobs > KF_SPEC_MAX_KNOBS) {
      snprintf(bad, blen, "templates[%zu].knobs: at most %d knobs", i,
               KF_SPEC_MAX_KNOBS);
      return NULL;
    }
    for (size_t k = 0; k < t->n_knobs; k++) {
      const Kernelfleet__KnobSpace *ks = t->knobs[k];
      if (!ident_ok(ks->name, 31)) {
        snprintf(bad, blen, "templates[%zu].knobs[%zu].name must be a C"
                 " identifier of 1..31 characters", i, k);
        return NULL;
      }
      for (size_t j = 0; j < k; j++)
        if (strcmp(t->knobs[j]->name, ks->name) == 0) {
          snprintf(bad, blen, "templates[%zu].knobs[%zu].name '%s' repeats",
                   i, k, ks->name);
          return NULL;
        }
      if (ks->n_values == 0 || ks->n_values > KF_SPEC_MAX_KNOB_VALUES) {
        snprintf(bad, blen, "templates[%zu].knobs[%zu].values must hold"
                 " 1..%d values", i, k, KF_SPEC_MAX_KNOB_VALUES);
        return NULL;
      }
      for (size_t v = 0; v < ks->n_values; v++) {
        if (!value_ok(ks->values[v])) {
          snprintf(bad, blen, "templates[%zu].knobs[%zu].values[%zu] must be"
                   " 1..23 characters of [A-Za-z0-9_.+-]", i, k, v);
          return NULL;
        }
        for (size_t w = 0; w < v; w++)
          if (strcmp(ks->values[w], ks->values[v]) == 0) {
            snprintf(bad, blen, "templates[%zu].knobs[%zu].values[%zu] '%s'"
                     " repeats", i, k, v, ks->values[v]);
            return NULL;
          }
      }
    }
  }
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < r->n_templates; i++) {
    const Kernelfleet__TemplateSource *t = r->templates[i];
    cJSON *o = cJSON_CreateObject();
    cJSON *knobs = cJSON_CreateArray();
    if (!o || !knobs) {
      cJSON_Delete(o);
      cJSON_Delete(knobs);
      goto oom;
    }
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "name", t->name);
    cJSON_AddStringToObject(o, "file", t->file ? t->file : "");
    cJSON_AddStringToObject(o, "source", t->source);
    cJSON_AddItemToObject(o, "knobs", knobs);
    for (size_t k = 0; k < t->n_knobs; k++) {
      cJSON *kb = cJSON_CreateObject();
      cJSON *vals = cJSON_CreateStringArray(
          (const char *const *)t->knobs[k]->values, (int)t->knobs[k]->n_values);
      if (!kb || !vals) {
        cJSON_Delete(kb);
        cJSON_Delete(vals);
        goto oom;
      }
      cJSON_AddItemToArray(knobs, kb);
      cJSON_AddStringToObject(kb, "name", t->knobs[k]->name);
      cJSON_AddItemToObject(kb, "values", vals);
    }
  }
  char *out = arr ? cJSON_PrintUnformatted(arr) : NULL;
  cJSON_Delete(arr);
  if (!out) snprintf(bad, blen, "coordinator out of memory");
  return out;
oom:
  cJSON_Delete(arr);
  snprintf(bad, blen, "coordinator out of memory");
  return NULL;
}

/* "768.0 GiB" */
static void fmt_bytes(char *buf, size_t len, uint64_t b) {
  static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB",
                                     "PiB", "EiB"};
  double v = (double)b;
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    u++;
  }
  if (u == 0) snprintf(buf, len, "%llu bytes", (unsigned long long)b);
  else snprintf(buf, len, "%.1f %s", v, unit[u]);
}

/* Memory the harness maps to evaluate spec: two sides (reference and
 * candidate), each an image of one input set, one output slot and the
 * workspace (harness/core/layout.c), page-rounded with the backend's
 * guards (kf_spec_runner_bytes), at the largest of the bench and check
 * sizes.  0, or KF_ESPEC. */
static int footprint(const kf_spec *spec, bool cuda, uint64_t *need,
                     char *text, size_t tlen, char *bad, size_t blen) {
  uint64_t guard = cuda ? KF_SPEC_GUARD_CUDA : KF_SPEC_GUARD_CPU;
  char err[384], sz[160];
  uint64_t b = 0, worst = 0;
  if (kf_spec_runner_bytes(spec, &spec->bench_size, 1, 1, guard, &worst, err,
                           sizeof err)) {
    snprintf(bad, blen, "spec_json: at the bench size: %s", err);
    return KF_ESPEC;
  }
  kf_spec_size_format(spec, &spec->bench_size, sz, sizeof sz);
  snprintf(text, tlen, "at its bench size %s", sz);
  for (int i = 0; i < spec->n_check_sizes; i++) {
    if (kf_spec_runner_bytes(spec, &spec->check_sizes[i], 1, 1, guard, &b,
                             err, sizeof err)) {
      snprintf(bad, blen, "spec_json: check size %d: %s", i, err);
      return KF_ESPEC;
    }
    if (b > worst) {
      worst = b;
      kf_spec_size_format(spec, &spec->check_sizes[i], sz, sizeof sz);
      snprintf(text, tlen, "at its check size %s", sz);
    }
  }
  if (__builtin_mul_overflow(worst, 2, need)) *need = UINT64_MAX;
  size_t l = strlen(text);
  snprintf(text + l, tlen - l, " (inputs, outputs and workspace, for the"
           " reference and the candidate)");
  return 0;
}

/* ------------------------------------------------------------ handlers -- */

int kf_coord__check_create(const Kernelfleet__CreateCampaignRequest *r,
                           kf_coord__create_checked *out, char *bad,
                           size_t blen) {
  char err[512] = "";
  kf_spec *spec = NULL;
  char *tj = NULL;
  const char *lang = r->language && *r->language ? r->language : NULL;
  bool cpu = r->backend == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  bool cuda = r->backend == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA;
  memset(out, 0, sizeof *out);
  bad[0] = '\0';
  if (!cpu && !cuda)
    snprintf(bad, blen, "backend must be DEVICE_KIND_CPU or"
             " DEVICE_KIND_CUDA");
  else if (r->spec_json.len == 0)
    snprintf(bad, blen, "spec_json is required");
  else if (kf_spec_parse((const char *)r->spec_json.data, r->spec_json.len,
                         NULL, &spec, err, sizeof err) != 0)
    snprintf(bad, blen, "spec_json: %s", err);
  else if (spec->backend[0] && strcmp(spec->backend, "torch") &&
           strcmp(spec->backend, cpu ? "cpu" : "cuda"))
    snprintf(bad, blen, "backend %s does not match spec_json backend"
             " '%s'", cpu ? "CPU" : "CUDA", spec->backend);
  else if (!strcmp(spec->backend, "torch") &&
           strcmp(spec->torch_device, cpu ? "cpu" : "cuda"))
    snprintf(bad, blen, "backend %s does not match spec_json torch.device"
             " '%s'", cpu ? "CPU" : "CUDA", spec->torch_device);
  else if (r->problem && *r->problem && !name_ok(r->problem, 127))
    snprintf(bad, blen, "problem must be 1..127 characters of"
             " [A-Za-z0-9_.-]");
  else if (r->name && strlen(r->name) > 127)
    snprintf(bad, blen, "name is longer than 127 bytes (%zu)",
             strlen(r->name));
  else if (lang && strcmp(lang, "c") && strcmp(lang, "cuda") &&
           strcmp(lang, "python"))
    snprintf(bad, blen, "language must be \"c\", \"cuda\" or \"python\"");
  else if (lang && !strcmp(spec->backend, "torch") != !strcmp(lang, "python"))
    snprintf(bad, blen, "language \"python\" goes with spec backend torch,"
             " and only with it");
  else if (!r->reference_source || !*r->reference_source ||
           strlen(r->reference_source) > MAX_SOURCE)
    snprintf(bad, blen, "reference_source must be 1..%u bytes",
             MAX_SOURCE);
  else if (r->budget_evals > 100000)
    snprintf(bad, blen, "budget_evals over 100000");
  else if (r->budget_seconds > 7 * 86400)
    snprintf(bad, blen, "budget_seconds over 604800 (a week)");
  else if (r->population > 1024)
    snprintf(bad, blen, "population over 1024");
  else if (r->plateau_evals > 100000)
    snprintf(bad, blen, "plateau_evals over 100000");
  else if (!isfinite(r->target_roofline) || r->target_roofline < 0 ||
           r->target_roofline > 1)
    snprintf(bad, blen, "target_roofline must be in (0, 1] (0: 0.95)");
  else if (r->showdown_top > 64)
    snprintf(bad, blen, "showdown_top must be 0..64 (0: 5)");
  else if (spec->bytes[0] &&
           kf_spec_eval(spec, spec->bytes, &spec->bench_size,
                        &out->floor_bytes, err, sizeof err) != 0)
    snprintf(bad, blen, "spec_json: bytes at the bench size: %s", err);
  else if (footprint(spec, cuda, &out->need_bytes, out->need_text,
                     sizeof out->need_text, bad, blen) == 0)
    tj = templates_json(r, bad, blen);
  if (bad[0] || !tj) {
    kf_spec_free(spec);
    free(tj);
    memset(out, 0, sizeof *out);
    return strstr(bad, "out of memory") ? KF_ENOMEM : KF_EINVAL;
  }
  out->spec = spec;
  out->templates_json = tj;
  return 0;
}

void kf_coord__on_create_campaign(kf_rpc_call *call, const ProtobufCMessage *m,
                      void *data) {
  kf_coord *co = data;
  const Kernelfleet__CreateCampaignRequest *r = (const void *)m;
  char bad[768] = "";
  kf_coord__create_checked ck;
  int vrc = kf_coord__check_create(r, &ck, bad, sizeof bad);
  if (vrc) {
    kf_rpc_call_fail(call, vrc, bad);
    return;
  }
  kf_spec *spec = ck.spec;
  char *tj = ck.templates_json;
  const char *lang = r->language && *r->language ? r->language : NULL;
  bool cpu = r->backend == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  if (!lang && !strcmp(spec->backend, "torch")) lang = "python";
  camp_op *c = camp_new(call, CAMP_CREATE);
  if (!c) {
    kf_spec_free(spec);
    free(tj);
    return;
  }
  c->templates_json = tj;
  c->need_bytes = ck.need_bytes;
  kf_strlcpy(c->need_text, ck.need_text, sizeof c->need_text);
  /* The strings below live in the request, which outlives the op; the
   * problem name falls back to the spec's, kept in the op's flags buffer. */
  kf_strlcpy(c->flags, r->problem && *r->problem ? r->problem : spec->name,
             sizeof c->flags);
  /* The spec's part of every measurement's identity. */
  int hrc = kf_spec_canonical_hash(spec, c->spec_sha);
  kf_spec_free(spec);
  if (hrc) {
    free(tj);
    free(c);
    kf_rpc_call_fail(call, hrc, "hashing spec_json failed");
    return;
  }
  c->nw = (kf_campaign_new){
      .name = r->name && *r->name ? r->name : c->flags,
      .problem = c->flags,
      .language = lang ? lang : (cpu ? "c" : "cuda"),
      .backend = (int)r->backend,
      .spec_json = r->spec_json.data,
      .spec_json_len = r->spec_json.len,
      .reference_source = r->reference_source,
      .templates_json = tj,
      .budget_evals = r->budget_evals ? r->budget_evals : 200,
      .budget_seconds = r->budget_seconds ? r->budget_seconds : 600,
      .population = r->population ? r->population : 16,
      .plateau_evals = r->plateau_evals ? r->plateau_evals : 60,
      .target_roofline = r->target_roofline > 0 ? r->target_roofline : 0.95,
      .search_seed = r->search_seed,
      .floor_bytes = ck.floor_bytes > 0 ? (double)ck.floor_bytes : 0,
      .spec_sha256 = c->spec_sha,
      .fresh = r->fresh,
      .showdown_top = r->showdown_top ? r->showdown_top : 5,
  };
  push(co, call, m, c);
}

bool kf_coord__check_campaign_id(int64_t id, char *bad, size_t blen) {
  if (id > 0) return true;
  snprintf(bad, blen, "campaign_id must be positive");
  return false;
}

static bool id_ok(kf_rpc_call *call, int64_t id) {
  char bad[64] = "";
  if (kf_coord__check_campaign_id(id, bad, sizeof bad)) return true;
  kf_rpc_call_fail(call, KF_EINVAL, bad);
  return false;
}

bool kf_coord__check_get_campaign(const Kernelfleet__GetCampaignRequest *r,
                                  char *bad, size_t blen) {
  if (!kf_coord__check_campaign_id(r->campaign_id, bad, blen)) return false;
  if (r->top <= MAX_TOP) return true;
  snprintf(bad, blen, "top must be 0..%d", MAX_TOP);
  return false;
}

void kf_coord__on_get_campaign(kf_rpc_call *call, const ProtobufCMessage *m, void *data) {
  char bad[64] = "";
  if (!kf_coord__check_get_campaign((const void *)m, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  camp_op *c = camp_new(call, CAMP_GET);
  if (c) push(data, call, m, c);
}

void kf_coord__on_list_evaluations(kf_rpc_call *call, const ProtobufCMessage *m,
                    void *data) {
  const Kernelfleet__ListEvaluationsRequest *r = (const void *)m;
  if (!id_ok(call, r->campaign_id)) return;
  camp_op *c = camp_new(call, CAMP_LIST);
  if (c) push(data, call, m, c);
}

void kf_coord__on_get_best(kf_rpc_call *call, const ProtobufCMessage *m,
                    void *data) {
  const Kernelfleet__GetBestRequest *r = (const void *)m;
  if (!id_ok(call, r->campaign_id)) return;
  camp_op *c = camp_new(call, CAMP_BEST);
  if (c) push(data, call, m, c);
}

void kf_coord__on_stop_campaign(kf_rpc_call *call, const ProtobufCMessage *m,
                    void *data) {
  const Kernelfleet__StopCampaignRequest *r = (const void *)m;
  if (!id_ok(call, r->campaign_id)) return;
  camp_op *c = camp_new(call, CAMP_STOP);
  if (c) push(data, call, m, c);
}

static int cmp_knob(const void *a, const void *b) {
  const Kernelfleet__Knob *x = *(Kernelfleet__Knob *const *)a;
  const Kernelfleet__Knob *y = *(Kernelfleet__Knob *const *)b;
  return strcmp(x->name, y->name);
}

bool kf_coord__check_propose(const Kernelfleet__ProposeCandidateRequest *r,
                             char *bad, size_t blen) {
  if (!kf_coord__check_campaign_id(r->campaign_id, bad, blen)) return false;
  bad[0] = '\0';
  size_t sl = r->source ? strlen(r->source) : 0;
  if (sl == 0 || sl > MAX_SOURCE)
    snprintf(bad, blen, "source must be 1..%u bytes", MAX_SOURCE);
  else if (r->proposer && *r->proposer &&
           (!name_ok(r->proposer, 63) && strncmp(r->proposer, "llm:", 4)))
    snprintf(bad, blen, "proposer must be 1..63 characters of"
             " [A-Za-z0-9_.-] (or llm:...)");
  else if (r->proposer && strcmp(r->proposer, "evolution") == 0)
    snprintf(bad, blen, "proposer \"evolution\" is reserved for the"
             " search");
  else if (r->proposer && strlen(r->proposer) > 63)
    snprintf(bad, blen, "proposer longer than 63 characters");
  else if (r->template_name && *r->template_name &&
           !name_ok(r->template_name, 63))
    snprintf(bad, blen, "template_name must be 1..63 characters of"
             " [A-Za-z0-9_.-]");
  else if (r->n_knobs > KF_SPEC_MAX_KNOBS)
    snprintf(bad, blen, "knobs: at most %d", KF_SPEC_MAX_KNOBS);
  for (size_t i = 0; !bad[0] && i < r->n_knobs; i++) {
    if (!ident_ok(r->knobs[i]->name, 31))
      snprintf(bad, blen, "knobs[%zu].name must be a C identifier of"
               " 1..31 characters", i);
    else if (!value_ok(r->knobs[i]->value))
      snprintf(bad, blen, "knobs[%zu].value must be 1..23 characters"
               " of [A-Za-z0-9_.+-]", i);
    for (size_t j = 0; !bad[0] && j < i; j++)
      if (strcmp(r->knobs[j]->name, r->knobs[i]->name) == 0)
        snprintf(bad, blen, "knobs[%zu].name '%s' repeats", i,
                 r->knobs[i]->name);
  }
  return !bad[0];
}

void kf_coord__on_propose_candidate(kf_rpc_call *call, const ProtobufCMessage *m,
                       void *data) {
  const Kernelfleet__ProposeCandidateRequest *r = (const void *)m;
  char bad[256] = "";
  if (!kf_coord__check_propose(r, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  camp_op *c = camp_new(call, CAMP_PROPOSE);
  if (!c) return;
  /* Canonical flags: knobs by name. */
  Kernelfleet__Knob *sorted[KF_SPEC_MAX_KNOBS];
  if (r->n_knobs) /* protobuf-c leaves knobs NULL when there are none */
    memcpy(sorted, r->knobs, r->n_knobs * sizeof *sorted);
  qsort(sorted, r->n_knobs, sizeof *sorted, cmp_knob);
  size_t o = 0;
  for (size_t i = 0; i < r->n_knobs; i++)
    o += (size_t)snprintf(c->flags + o, sizeof c->flags - o, "%s-D%s=%s",
                          i ? " " : "", sorted[i]->name, sorted[i]->value);
  cJSON *kj = cJSON_CreateObject();
  for (size_t i = 0; kj && i < r->n_knobs; i++)
    cJSON_AddStringToObject(kj, r->knobs[i]->name, r->knobs[i]->value);
  c->knobs_json = kj ? cJSON_PrintUnformatted(kj) : NULL;
  cJSON_Delete(kj);
  if (!c->knobs_json) {
    free(c);
    kf_rpc_call_fail(call, KF_ENOMEM, "coordinator out of memory");
    return;
  }
  push(data, call, m, c);
}

/* ------------------------------------------------------- work thread -- */

static void set_err(kf_coord_op *op, int rc, kf_store *s) {
  op->rc = rc;
  kf_strlcpy(op->err, kf_store_errmsg(s), sizeof op->err);
}

void kf_coord__campaign_work(kf_store *s, kf_coord_op *op) {
  camp_op *c = op->camp;
  int rc = 0;
  switch (c->rpc) {
  case CAMP_CREATE: {
    /* A problem no worker of its backend can hold is refused now, with
     * the sizes, rather than accepted and failed (or worse, mapped) by
     * every harness it reaches.  With no worker registered yet there is
     * nothing to compare with: the harness refuses it then. */
    uint64_t mem = 0;
    uint32_t nworkers = 0;
    rc = kf_store_backend_memory(s, c->nw.backend, &mem, &nworkers);
    if (!rc && nworkers > 0 && mem > 0 && c->need_bytes > mem) {
      char need[32], have[32];
      fmt_bytes(need, sizeof need, c->need_bytes);
      fmt_bytes(have, sizeof have, mem);
      op->rc = KF_ESTATE;
      snprintf(op->err, sizeof op->err,
               "spec_json: the harness needs %s (%llu bytes) %s; the"
               " largest %s worker registered has %s (mem_bytes %llu)", need,
               (unsigned long long)c->need_bytes, c->need_text,
               c->nw.backend == 2 ? "cuda" : "cpu", have,
               (unsigned long long)mem);
      return;
    }
    if (!rc) rc = kf_store_campaign_create(s, &c->nw, &c->id);
    break;
  }
  case CAMP_GET: {
    const Kernelfleet__GetCampaignRequest *r = (const void *)op->req;
    rc = kf_store_campaign_get(s, r->campaign_id, &c->camp);
    if (!rc) rc = kf_store_campaign_counts(s, r->campaign_id, &c->counts);
    if (!rc && r->top)
      rc = kf_store_evaluations(s, r->campaign_id, KF_EVALS_BEST, r->top,
                                &c->list);
    break;
  }
  case CAMP_LIST: {
    const Kernelfleet__ListEvaluationsRequest *r = (const void *)op->req;
    rc = kf_store_campaign_get(s, r->campaign_id, &c->camp);
    uint32_t lim = r->limit ? r->limit : 100;
    if (lim > MAX_LIST) lim = MAX_LIST;
    if (!rc)
      rc = kf_store_evaluations(s, r->campaign_id,
                                r->failures_only ? KF_EVALS_FAILURES
                                                 : KF_EVALS_RECENT,
                                lim, &c->list);
    break;
  }
  case CAMP_BEST: {
    const Kernelfleet__GetBestRequest *r = (const void *)op->req;
    rc = kf_store_campaign_get(s, r->campaign_id, &c->camp);
    if (!rc) rc = kf_store_best(s, r->campaign_id, &c->list);
    break;
  }
  case CAMP_STOP: {
    const Kernelfleet__StopCampaignRequest *r = (const void *)op->req;
    rc = kf_store_campaign_get(s, r->campaign_id, &c->camp);
    if (!rc)
      rc = kf_store_campaign_finish(s, r->campaign_id, "stopped",
                                    "campaign stopped", &c->changed, NULL);
    break;
  }
  case CAMP_PROPOSE: {
    const Kernelfleet__ProposeCandidateRequest *r = (const void *)op->req;
    rc = kf_store_campaign_get(s, r->campaign_id, &c->camp);
    if (!rc && strcmp(c->camp->state, "running") != 0) {
      /* Not the caller's input but the campaign's state: FAILED_PRECONDITION,
       * so a proposer knows that resending cannot help. */
      op->rc = KF_ESTATE;
      snprintf(op->err, sizeof op->err, "campaign %" PRId64 " has ended (%s):"
               " it takes no more proposals", r->campaign_id,
               c->camp->stop_reason[0] ? c->camp->stop_reason
                                       : c->camp->state);
      return;
    }
    if (!rc)
      rc = kf_store_propose(s, r->campaign_id, r->template_name, c->knobs_json,
                            c->flags, r->source,
                            r->proposer && *r->proposer ? r->proposer : "user",
                            &c->id, &c->duplicate);
    break;
  }
  }
  if (rc) set_err(op, rc, s);
}

/* ---------------------------------------------------------- answers -- */

/* Protobuf views of one candidate row; point into the row and into k. */
typedef struct {
  Kernelfleet__EvaluationSummary e;
  Kernelfleet__DeviceClass dc;
  Kernelfleet__Knob *knobs;
  Kernelfleet__Knob **kp;
  cJSON *kj;
} summary;

static void summary_fill(summary *v, const kf_cand_row *r) {
  kernelfleet__evaluation_summary__init(&v->e);
  kernelfleet__device_class__init(&v->dc);
  v->e.candidate_id = r->candidate_id;
  v->e.template_name = (char *)r->template_name;
  v->e.outcome = (Kernelfleet__Outcome)r->outcome;
  v->e.stage = (char *)r->stage;
  v->e.reason = (char *)r->reason;
  v->e.time_ns_median = r->time_ns_median;
  v->e.time_ns_spread = r->time_ns_spread;
  v->e.ref_time_ns_median = r->ref_time_ns_median;
  v->e.speedup = r->speedup;
  v->e.task_id = r->task_id;
  v->e.proposer = (char *)r->proposer;
  v->e.roofline_fraction = r->roofline_fraction;
  v->e.reused_from = r->reused_from;
  v->e.showdown = r->showdown;
  v->e.repetitions = r->repetitions;
  v->e.measurements = r->measurements;
  v->e.timing_dependent = r->timing_dependent;
  v->e.ref_time_ns_spread = r->ref_time_ns_spread;
  v->dc.kind = (Kernelfleet__DeviceKind)r->dc.kind;
  v->dc.model = (char *)r->dc.model;
  v->dc.cc_major = r->dc.cc_major;
  v->dc.cc_minor = r->dc.cc_minor;
  v->dc.isa = (char *)r->dc.isa;
  v->e.device_class = &v->dc;
  v->kj = cJSON_Parse(r->knobs_json);
  int n = v->kj ? cJSON_GetArraySize(v->kj) : 0;
  v->knobs = calloc((size_t)n + 1, sizeof *v->knobs);
  v->kp = calloc((size_t)n + 1, sizeof *v->kp);
  size_t k = 0;
  for (const cJSON *it = v->kj ? v->kj->child : NULL;
       it && v->knobs && v->kp; it = it->next) {
    if (!cJSON_IsString(it)) continue;
    kernelfleet__knob__init(&v->knobs[k]);
    v->knobs[k].name = it->string;
    v->knobs[k].value = it->valuestring;
    v->kp[k] = &v->knobs[k];
    k++;
  }
  v->e.n_knobs = k;
  v->e.knobs = v->kp;
}

static void summary_clear(summary *v) {
  free(v->knobs);
  free(v->kp);
  cJSON_Delete(v->kj);
}

/* Summaries for a list; *out and *ptrs freed by summaries_free. */
static int summaries(const kf_cand_list *l, summary **out,
                     Kernelfleet__EvaluationSummary ***ptrs) {
  size_t n = l ? l->n : 0;
  *out = calloc(n + 1, sizeof **out);
  *ptrs = calloc(n + 1, sizeof **ptrs);
  if (!*out || !*ptrs) return KF_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    summary_fill(&(*out)[i], &l->v[i]);
    (*ptrs)[i] = &(*out)[i].e;
  }
  return 0;
}

static void summaries_free(summary *v, Kernelfleet__EvaluationSummary **p,
                           size_t n) {
  for (size_t i = 0; v && i < n; i++) summary_clear(&v[i]);
  free(v);
  free(p);
}

static void answer_get(kf_coord_op *op, camp_op *c) {
  const kf_campaign *k = c->camp;
  const kf_campaign_counts *n = &c->counts;
  Kernelfleet__GetCampaignResponse resp =
      KERNELFLEET__GET_CAMPAIGN_RESPONSE__INIT;
  Kernelfleet__CampaignStatus st = KERNELFLEET__CAMPAIGN_STATUS__INIT;
  Kernelfleet__Campaign cp = KERNELFLEET__CAMPAIGN__INIT;
  Kernelfleet__OutcomeCount oc[16], *ocp[16];
  size_t noc = 0;
  cp.campaign_id = k->id;
  cp.name = (char *)k->name;
  cp.problem = (char *)k->problem;
  cp.state = (char *)k->state;
  cp.budget_evals = k->budget_evals;
  cp.budget_seconds = k->budget_seconds;
  cp.fresh = k->fresh;
  cp.showdown_top = k->showdown_top;
  st.campaign = &cp;
  st.evals_done = n->evals;
  st.evals_ok = n->evals_ok;
  st.evals_running = n->outstanding;
  st.best_speedup = n->best_speedup;
  st.best_time_ns = n->best_time_ns;
  st.ref_time_ns = n->ref_time_ns;
  st.best_candidate_id = k->best_candidate_id;
  st.stop_reason = (char *)k->stop_reason;
  st.elapsed_ms = k->elapsed_ms;
  st.roofline_fraction = n->roofline_fraction;
  st.showdown = (char *)k->showdown;
  st.best_from_showdown = n->best_showdown;
  st.best_time_ns_spread = n->best_spread;
  st.best_repetitions = n->best_repetitions;
  st.best_measurements = n->best_measurements;
  for (int o = 1; o < 16; o++) {
    if (!n->by_outcome[o]) continue;
    kernelfleet__outcome_count__init(&oc[noc]);
    oc[noc].outcome = (Kernelfleet__Outcome)o;
    oc[noc].count = n->by_outcome[o];
    ocp[noc] = &oc[noc];
    noc++;
  }
  st.n_outcomes = noc;
  st.outcomes = ocp;
  resp.status = &st;
  summary *v = NULL;
  Kernelfleet__EvaluationSummary **p = NULL;
  size_t nl = c->list ? c->list->n : 0;
  if (summaries(c->list, &v, &p)) {
    summaries_free(v, p, 0);
    kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
    return;
  }
  resp.n_top = nl;
  resp.top = p;
  kf_rpc_call_reply(op->call, &resp.base);
  summaries_free(v, p, nl);
}

void kf_coord__campaign_answer(kf_coord *co, kf_coord_op *op) {
  camp_op *c = op->camp;
  switch (c->rpc) {
  case CAMP_CREATE: {
    kf_log(KF_LOG_INFO, "campaign %" PRId64 " created: %s (%s, %u evals)",
           c->id, c->nw.name, c->nw.problem, (unsigned)c->nw.budget_evals);
    co->campaigns_active = true;
    co->want_search = true;
    kf_coord__kick(co);
    Kernelfleet__CreateCampaignResponse resp =
        KERNELFLEET__CREATE_CAMPAIGN_RESPONSE__INIT;
    resp.campaign_id = c->id;
    kf_rpc_call_reply(op->call, &resp.base);
    break;
  }
  case CAMP_GET:
    answer_get(op, c);
    break;
  case CAMP_LIST: {
    Kernelfleet__ListEvaluationsResponse resp =
        KERNELFLEET__LIST_EVALUATIONS_RESPONSE__INIT;
    summary *v = NULL;
    Kernelfleet__EvaluationSummary **p = NULL;
    size_t nl = c->list ? c->list->n : 0;
    if (summaries(c->list, &v, &p)) {
      summaries_free(v, p, 0);
      kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
      return;
    }
    resp.n_evaluations = nl;
    resp.evaluations = p;
    kf_rpc_call_reply(op->call, &resp.base);
    summaries_free(v, p, nl);
    break;
  }
  case CAMP_BEST: {
    Kernelfleet__GetBestResponse resp = KERNELFLEET__GET_BEST_RESPONSE__INIT;
    summary v;
    summary_fill(&v, &c->list->v[0]);
    resp.best = &v.e;
    resp.source = (char *)c->list->v[0].source;
    resp.language = (char *)c->camp->language;
    kf_rpc_call_reply(op->call, &resp.base);
    summary_clear(&v);
    break;
  }
  case CAMP_STOP: {
    if (c->changed)
      kf_log(KF_LOG_INFO, "campaign %" PRId64 " stopped by request",
             c->camp->id);
    Kernelfleet__StopCampaignResponse resp =
        KERNELFLEET__STOP_CAMPAIGN_RESPONSE__INIT;
    kf_rpc_call_reply(op->call, &resp.base);
    break;
  }
  case CAMP_PROPOSE: {
    if (!c->duplicate) {
      co->want_search = true;
      kf_coord__kick(co);
    }
    Kernelfleet__ProposeCandidateResponse resp =
        KERNELFLEET__PROPOSE_CANDIDATE_RESPONSE__INIT;
    resp.candidate_id = c->id;
    resp.duplicate = c->duplicate;
    kf_rpc_call_reply(op->call, &resp.base);
    break;
  }
  }
}
