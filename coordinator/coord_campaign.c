/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/coord_campaign.c -- the campaign RPCs: CreateCampaign,
 * GetCampaign, ListEvaluations, GetBest, StopCampaign, ProposeCandidate,
 * and the proposers' accounting: ProposerRecordCalls, ProposerUsage.
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
#include "token.h"
#include "util.h"

#define MAX_TOP 1000
#define MAX_TOP_SOURCES 32
#define MAX_LIST 100000
#define MAX_SOURCE (4u << 20) /* bytes of one candidate or template */

typedef enum {
  CAMP_CREATE,
  CAMP_GET,
  CAMP_LIST,
  CAMP_BEST,
  CAMP_STOP,
  CAMP_PROPOSE,
  CAMP_PORT,
  CAMP_PROPOSER_RECORD,
  CAMP_PROPOSER_USAGE,
} camp_rpc;

#define MAX_PROPOSER_CALLS 64  /* per ProposerRecordCalls */
#define MAX_USAGE_LIST 1000

/* What one campaign op carries between the threads. */
typedef struct kf_coord__camp {
  camp_rpc rpc;
  /* inputs, built on the loop thread */
  kf_campaign_new nw;
  char *templates_json; /* CREATE */
  char *knobs_json;     /* PROPOSE */
  char *space_json;     /* PROPOSE with a knob space */
  int64_t cred_id;      /* who calls (0: the bootstrap token) */
  unsigned role;        /* and as what (KF_ROLE_*) */
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
  /* CREATE: the class to run on, by name ("": every class); PORT: the
   * target and (may be "") the source class; BEST: the class ("": all) */
  char class_name[128];
  char from_class[128];
  kf_port_new port;      /* PORT */
  kf_class_list *classes; /* GET: per class, with each one's best row */
  kf_cand_list **class_best;
  kf_port_list *port_rows; /* GET of a port */
  kf_cand_list *sources;     /* GET with_sources: the top's candidates */
  char template_name[64];    /* PROPOSE with a knob space */
  kf_proposer_usage usage;   /* PROPOSER_USAGE */
  uint32_t alive_ms;         /* GET: a worker seen within this is alive */
  kf_campaign_device *devs;  /* GET with_problem */
  size_t n_devs;
} camp_op;

void kf_coord__campaign_free(kf_coord_op *op) {
  camp_op *c = op->camp;
  if (!c) return;
  free(c->templates_json);
  free(c->knobs_json);
  free(c->space_json);
  kf_store_campaign_free(c->camp);
  kf_store_list_free(c->list);
  for (size_t i = 0; c->classes && c->class_best && i < c->classes->n; i++)
    kf_store_list_free(c->class_best[i]);
  free(c->class_best);
  kf_store_class_list_free(c->classes);
  free(c->port_rows);
  kf_store_list_free(c->sources);
  free(c->usage.recent);
  free(c->devs);
  free(c);
  op->camp = NULL;
}

static void push(kf_coord *co, kf_rpc_call *call, const ProtobufCMessage *m,
                 camp_op *c) {
  kf_coord_op *op = kf_coord__op_new(co, KF_OP_CAMPAIGN, call, m);
  if (!op) { /* answered already */
    free(c->templates_json);
    free(c->knobs_json);
    free(c->space_json);
    free(c);
    return;
  }
  op->camp = c;
  kf_coord__push(co, op);
}

static camp_op *camp_new(kf_rpc_call *call, camp_rpc rpc) {
  camp_op *c = calloc(1, sizeof *c);
  if (!c) {
    kf_rpc_call_fail(call, KF_ENOMEM, "coordinator out of memory");
    return NULL;
  }
  c->rpc = rpc;
  c->cred_id = kf_rpc_call_cred_id(call);
  c->role = kf_rpc_call_role(call);
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
  for (int i = 1; i < kf_spec_n_bench(spec); i++) {
    if (kf_spec_runner_bytes(spec, kf_spec_bench(spec, i), 1, 1, guard, &b,
                             err, sizeof err)) {
      snprintf(bad, blen, "spec_json: bench size %d: %s", i, err);
      return KF_ESPEC;
    }
    if (b > worst) {
      worst = b;
      kf_spec_size_format(spec, kf_spec_bench(spec, i), sz, sizeof sz);
      snprintf(text, tlen, "at its bench size %s", sz);
    }
  }
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
           r->target_roofline > KF_TARGET_ROOFLINE_MAX)
    /* over 1: the fraction is of the copy bandwidth, which a problem that
     * mostly reads passes honestly (an H200 reads 9% faster than it
     * copies); 2 is far past any such rate, and a typo is still caught */
    snprintf(bad, blen, "target_roofline must be in (0, %g] (0: 0.95)",
             KF_TARGET_ROOFLINE_MAX);
  else if (r->showdown_top > 64)
    snprintf(bad, blen, "showdown_top must be 0..64 (0: 5)");
  else if (r->device_class && strlen(r->device_class) > 127)
    snprintf(bad, blen, "device_class is longer than 127 bytes");
  else if ((r->port_from_class && *r->port_from_class) || r->port_elites)
    snprintf(bad, blen, "port_from_class and port_elites need"
             " port_from_campaign");
  else if (kf_prof_policy_parse(r->profile, &(int){0}) != 0)
    snprintf(bad, blen, "profile must be \"all\", \"none\" or \"top:K\""
             " with K 1..999 (\"\": \"" KF_PROF_POLICY_DEFAULT "\")");
  else if (spec->bytes[0] &&
           kf_spec_bench_bytes(spec, &out->floor_bytes, err, sizeof err))
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

bool kf_coord__check_port(const Kernelfleet__CreateCampaignRequest *r,
                          char *bad, size_t blen) {
  bad[0] = '\0';
  if (r->port_from_campaign <= 0)
    snprintf(bad, blen, "port_from_campaign must be positive");
  else if (r->spec_json.len || (r->reference_source && *r->reference_source)
           || r->n_templates)
    snprintf(bad, blen, "a port copies the problem of campaign %" PRId64
             ": leave spec_json, reference_source and templates empty",
             r->port_from_campaign);
  else if (!r->device_class || !*r->device_class ||
           strlen(r->device_class) > 127)
    snprintf(bad, blen, "a port needs device_class, the target class's"
             " model (1..127 bytes)");
  else if (r->port_from_class && strlen(r->port_from_class) > 127)
    snprintf(bad, blen, "port_from_class is longer than 127 bytes");
  else if (r->name && strlen(r->name) > 127)
    snprintf(bad, blen, "name is longer than 127 bytes (%zu)",
             strlen(r->name));
  else if (r->budget_evals > 100000)
    snprintf(bad, blen, "budget_evals over 100000");
  else if (r->budget_seconds > 7 * 86400)
    snprintf(bad, blen, "budget_seconds over 604800 (a week)");
  else if (r->plateau_evals > 100000)
    snprintf(bad, blen, "plateau_evals over 100000");
  else if (r->port_elites > 64)
    snprintf(bad, blen, "port_elites must be 0..64 (0: the source's"
             " showdown_top)");
  return bad[0] == '\0';
}

static void on_port(kf_coord *co, kf_rpc_call *call,
                    const Kernelfleet__CreateCampaignRequest *r) {
  char bad[512];
  if (!kf_coord__check_port(r, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  camp_op *c = camp_new(call, CAMP_PORT);
  if (!c) return;
  kf_strlcpy(c->class_name, r->device_class, sizeof c->class_name);
  kf_strlcpy(c->from_class, r->port_from_class ? r->port_from_class : "",
             sizeof c->from_class);
  c->port = (kf_port_new){
      .from_campaign = r->port_from_campaign,
      .elites = r->port_elites,
      .name = r->name,
      .budget_evals = r->budget_evals,
      .budget_seconds = r->budget_seconds,
      .plateau_evals = r->plateau_evals,
      .search_seed = r->search_seed,
      .fresh = r->fresh,
  };
  push(co, call, &r->base, c);
}

void kf_coord__on_create_campaign(kf_rpc_call *call, const ProtobufCMessage *m,
                      void *data) {
  kf_coord *co = data;
  const Kernelfleet__CreateCampaignRequest *r = (const void *)m;
  if (r->port_from_campaign) {
    on_port(co, call, r);
    return;
  }
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
      .profile = r->profile,
  };
  kf_strlcpy(c->class_name, r->device_class ? r->device_class : "",
             sizeof c->class_name);
  push(co, call, m, c);
}

bool kf_coord__check_campaign_id(int64_t id, char *bad, size_t blen) {
  if (id > 0) return true;
  snprintf(bad, blen, "campaign_id must be positive");
  return false;
}

bool kf_coord__check_list(const Kernelfleet__ListEvaluationsRequest *r,
                          char *bad, size_t blen) {
  if (!kf_coord__check_campaign_id(r->campaign_id, bad, blen)) return false;
  if (r->candidate_id >= 0) return true;
  snprintf(bad, blen, "candidate_id must be 0 (all) or a candidate's id");
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
  if (r->top > MAX_TOP) {
    snprintf(bad, blen, "top must be 0..%d", MAX_TOP);
    return false;
  }
  /* Sources are up to MAX_SOURCE each: a bounded number per answer. */
  if (r->with_sources && r->top > MAX_TOP_SOURCES) {
    snprintf(bad, blen, "with_sources allows top 0..%d", MAX_TOP_SOURCES);
    return false;
  }
  return true;
}

void kf_coord__on_get_campaign(kf_rpc_call *call, const ProtobufCMessage *m, void *data) {
  char bad[64] = "";
  if (!kf_coord__check_get_campaign((const void *)m, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  camp_op *c = camp_new(call, CAMP_GET);
  if (!c) return;
  const kf_coord *co = data;
  c->alive_ms = 3 * co->cfg.heartbeat_ms + 1000; /* as the search counts */
  push(data, call, m, c);
}

void kf_coord__on_list_evaluations(kf_rpc_call *call, const ProtobufCMessage *m,
                    void *data) {
  char bad[96] = "";
  if (!kf_coord__check_list((const void *)m, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  camp_op *c = camp_new(call, CAMP_LIST);
  if (c) push(data, call, m, c);
}

void kf_coord__on_get_best(kf_rpc_call *call, const ProtobufCMessage *m,
                    void *data) {
  const Kernelfleet__GetBestRequest *r = (const void *)m;
  if (!id_ok(call, r->campaign_id)) return;
  if (r->device_class && strlen(r->device_class) > 127) {
    kf_rpc_call_fail(call, KF_EINVAL, "device_class is longer than 127"
                     " bytes");
    return;
  }
  camp_op *c = camp_new(call, CAMP_BEST);
  if (!c) return;
  kf_strlcpy(c->class_name, r->device_class ? r->device_class : "",
             sizeof c->class_name);
  push(data, call, m, c);
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

/* A proposal's declared knob space: the rules of a template's knobs in
 * spec.json (common/spec.c), each name used in the source (a knob the
 * source never reads would only multiply identical kernels), and the
 * proposal's own knobs one point of the space. */
static void check_knob_space(const Kernelfleet__ProposeCandidateRequest *r,
                             char *bad, size_t blen) {
  if (r->n_knob_space > KF_SPEC_MAX_KNOBS) {
    snprintf(bad, blen, "knob_space: at most %d knobs (got %zu)",
             KF_SPEC_MAX_KNOBS, r->n_knob_space);
    return;
  }
  for (size_t k = 0; k < r->n_knob_space; k++) {
    const Kernelfleet__KnobSpace *ks = r->knob_space[k];
    if (!kf_spec_knob_name_ok(ks->name)) {
      snprintf(bad, blen, "knob_space[%zu].name must be a C identifier of"
               " 1..31 characters not starting with KF_", k);
      return;
    }
    for (size_t j = 0; j < k; j++)
      if (strcmp(r->knob_space[j]->name, ks->name) == 0) {
        snprintf(bad, blen, "knob_space[%zu].name '%s' repeats", k, ks->name);
        return;
      }
    if (!strstr(r->source, ks->name)) {
      snprintf(bad, blen, "knob_space[%zu].name '%s' does not appear in the"
               " source", k, ks->name);
      return;
    }
    if (ks->n_values == 0 || ks->n_values > KF_SPEC_MAX_KNOB_VALUES) {
      snprintf(bad, blen, "knob_space[%zu].values must hold 1..%d values"
               " (got %zu)", k, KF_SPEC_MAX_KNOB_VALUES, ks->n_values);
      return;
    }
    for (size_t v = 0; v < ks->n_values; v++) {
      if (!kf_spec_knob_value_ok(ks->values[v])) {
        snprintf(bad, blen, "knob_space[%zu].values[%zu] must be 1..23"
                 " characters of [A-Za-z0-9_.+-]", k, v);
        return;
      }
      for (size_t w = 0; w < v; w++)
        if (strcmp(ks->values[w], ks->values[v]) == 0) {
          snprintf(bad, blen, "knob_space[%zu].values[%zu] '%s' repeats", k,
                   v, ks->values[v]);
          return;
        }
    }
  }
  if (r->n_knobs == 0) return; /* each knob's first value */
  if (r->n_knobs != r->n_knob_space) {
    snprintf(bad, blen, "knobs must set every knob of knob_space (%zu),"
             " or none (%zu set)", r->n_knob_space, r->n_knobs);
    return;
  }
  for (size_t i = 0; i < r->n_knobs; i++) {
    const Kernelfleet__KnobSpace *ks = NULL;
    for (size_t k = 0; k < r->n_knob_space && !ks; k++)
      if (strcmp(r->knob_space[k]->name, r->knobs[i]->name) == 0)
        ks = r->knob_space[k];
    if (!ks) {
      snprintf(bad, blen, "knobs[%zu].name '%s' is not in knob_space", i,
               r->knobs[i]->name);
      return;
    }
    bool in = false;
    for (size_t v = 0; v < ks->n_values && !in; v++)
      in = strcmp(ks->values[v], r->knobs[i]->value) == 0;
    if (!in) {
      snprintf(bad, blen, "knobs[%zu].value '%s' is not one of knob_space"
               " '%s' values", i, r->knobs[i]->value, ks->name);
      return;
    }
  }
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
  if (!bad[0] && r->n_knob_space) check_knob_space(r, bad, blen);
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
  /* A knob space without knobs: the proposal is its first point. */
  Kernelfleet__Knob defaults[KF_SPEC_MAX_KNOBS];
  Kernelfleet__Knob *own[KF_SPEC_MAX_KNOBS];
  Kernelfleet__Knob **knobs = r->knobs;
  size_t nk = r->n_knobs;
  if (nk == 0 && r->n_knob_space) {
    for (size_t i = 0; i < r->n_knob_space; i++) {
      kernelfleet__knob__init(&defaults[i]);
      defaults[i].name = r->knob_space[i]->name;
      defaults[i].value = r->knob_space[i]->values[0];
      own[i] = &defaults[i];
    }
    knobs = own;
    nk = r->n_knob_space;
  }
  /* Canonical flags: knobs by name. */
  Kernelfleet__Knob *sorted[KF_SPEC_MAX_KNOBS];
  if (nk) /* protobuf-c leaves knobs NULL when there are none */
    memcpy(sorted, knobs, nk * sizeof *sorted);
  qsort(sorted, nk, sizeof *sorted, cmp_knob);
  size_t o = 0;
  for (size_t i = 0; i < nk; i++)
    o += (size_t)snprintf(c->flags + o, sizeof c->flags - o, "%s-D%s=%s",
                          i ? " " : "", sorted[i]->name, sorted[i]->value);
  cJSON *kj = cJSON_CreateObject();
  for (size_t i = 0; kj && i < nk; i++)
    cJSON_AddStringToObject(kj, knobs[i]->name, knobs[i]->value);
  c->knobs_json = kj ? cJSON_PrintUnformatted(kj) : NULL;
  cJSON_Delete(kj);
  bool oom = !c->knobs_json;
  if (!oom && r->n_knob_space) {
    /* The same shape as a template's knobs in campaigns.templates. */
    cJSON *sp = cJSON_CreateArray();
    for (size_t k = 0; sp && k < r->n_knob_space; k++) {
      const Kernelfleet__KnobSpace *ks = r->knob_space[k];
      cJSON *o1 = cJSON_CreateObject();
      cJSON *vals = cJSON_CreateStringArray((const char *const *)ks->values,
                                            (int)ks->n_values);
      if (!o1 || !vals || !cJSON_AddStringToObject(o1, "name", ks->name)) {
        cJSON_Delete(o1);
        cJSON_Delete(vals);
        cJSON_Delete(sp);
        sp = NULL;
        break;
      }
      cJSON_AddItemToObject(o1, "values", vals);
      cJSON_AddItemToArray(sp, o1);
    }
    c->space_json = sp ? cJSON_PrintUnformatted(sp) : NULL;
    cJSON_Delete(sp);
    oom = !c->space_json;
  }
  if (oom) {
    free(c->knobs_json);
    free(c);
    kf_rpc_call_fail(call, KF_ENOMEM, "coordinator out of memory");
    return;
  }
  push(data, call, m, c);
}

/* Proposer names as ProposeCandidate takes them. */
static bool proposer_ok(const char *p) {
  size_t n = p ? strlen(p) : 0;
  if (n == 0 || n > 63) return false;
  return name_ok(p, 63) || strncmp(p, "llm:", 4) == 0;
}

static bool short_text(const char *s, size_t max) {
  return !s || strlen(s) <= max;
}

bool kf_coord__check_proposer_record(
    const Kernelfleet__ProposerRecordCallsRequest *r, char *bad,
    size_t blen) {
  if (!kf_coord__check_campaign_id(r->campaign_id, bad, blen)) return false;
  bad[0] = '\0';
  if (r->n_calls == 0 || r->n_calls > MAX_PROPOSER_CALLS)
    snprintf(bad, blen, "calls must hold 1..%d entries (got %zu)",
             MAX_PROPOSER_CALLS, r->n_calls);
  for (size_t i = 0; !bad[0] && i < r->n_calls; i++) {
    const Kernelfleet__ProposerCall *k = r->calls[i];
    if (!proposer_ok(k->proposer))
      snprintf(bad, blen, "calls[%zu].proposer must be 1..63 characters of"
               " [A-Za-z0-9_.-] (or llm:...)", i);
    else if (!short_text(k->model, 127))
      snprintf(bad, blen, "calls[%zu].model is longer than 127 bytes", i);
    else if (!short_text(k->prompt_version, 127))
      snprintf(bad, blen, "calls[%zu].prompt_version is longer than 127"
               " bytes", i);
    else if (!short_text(k->operation, 31))
      snprintf(bad, blen, "calls[%zu].operation is longer than 31 bytes", i);
    else if (!k->outcome || !*k->outcome || strlen(k->outcome) > 31)
      snprintf(bad, blen, "calls[%zu].outcome must be 1..31 bytes", i);
    else if (!short_text(k->reason, 2000))
      snprintf(bad, blen, "calls[%zu].reason is longer than 2000 bytes", i);
    else if (!isfinite(k->cost) || k->cost < 0 || k->cost > 1e9)
      snprintf(bad, blen, "calls[%zu].cost must be a finite number in"
               " [0, 1e9]", i);
    else if (k->prompt_tokens > (uint64_t)INT64_MAX ||
             k->completion_tokens > (uint64_t)INT64_MAX ||
             k->latency_ms > (uint64_t)INT64_MAX)
      snprintf(bad, blen, "calls[%zu]: a count over 2^63", i);
    else if (k->candidate_id < 0)
      snprintf(bad, blen, "calls[%zu].candidate_id must be >= 0", i);
    else if (k->http_status > 999 || k->attempts > 1000)
      snprintf(bad, blen, "calls[%zu]: http_status over 999 or attempts over"
               " 1000", i);
  }
  return !bad[0];
}

void kf_coord__on_proposer_record(kf_rpc_call *call, const ProtobufCMessage *m,
                                  void *data) {
  char bad[256] = "";
  if (!kf_coord__check_proposer_record((const void *)m, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  camp_op *c = camp_new(call, CAMP_PROPOSER_RECORD);
  if (!c) return;
  c->cred_id = kf_rpc_call_cred_id(call);
  push(data, call, m, c);
}

void kf_coord__on_proposer_usage(kf_rpc_call *call, const ProtobufCMessage *m,
                                 void *data) {
  const Kernelfleet__ProposerUsageRequest *r = (const void *)m;
  if (!id_ok(call, r->campaign_id)) return;
  camp_op *c = camp_new(call, CAMP_PROPOSER_USAGE);
  if (c) push(data, call, m, c);
}

/* ------------------------------------------------------- work thread -- */

static void set_err(kf_coord_op *op, int rc, kf_store *s) {
  op->rc = rc;
  kf_strlcpy(op->err, kf_store_errmsg(s), sizeof op->err);
}

/* Whether the caller may change campaign id (stop it, propose into it,
 * record its proposer's calls): an admin or the bootstrap token always;
 * a submitter only when its credential created the campaign (0015).  A
 * campaign with no owner (created by an admin, or before 0015) is an
 * admin's.  Else op gets PERMISSION_DENIED and false. */
static bool may_change(kf_store *s, kf_coord_op *op, const camp_op *c,
                       int64_t id) {
  if (c->role == KF_ROLE_ADMIN || c->cred_id == 0) return true;
  int64_t owner = 0;
  bool found = false;
  int rc = kf_store_campaign_owner(s, id, &owner, &found);
  if (rc) {
    set_err(op, rc, s);
    return false;
  }
  if (!found || owner == c->cred_id) return true; /* not found: said later */
  op->rc = KF_EPERM;
  snprintf(op->err, sizeof op->err, "campaign %" PRId64 " was created by"
           " another credential: only it or an admin may change it", id);
  return false;
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
    if (!rc && c->class_name[0])
      rc = kf_store_class_by_name(s, c->nw.backend, c->class_name,
                                  &c->nw.device_class_id);
    if (!rc) rc = kf_store_campaign_create(s, &c->nw, &c->id);
    if (!rc) rc = kf_store_campaign_set_owner(s, c->id, c->cred_id);
    break;
  }
  case CAMP_PORT: {
    rc = kf_store_class_by_name(s, 0, c->class_name, &c->port.to_class);
    if (!rc && c->from_class[0])
      rc = kf_store_class_by_name(s, 0, c->from_class, &c->port.from_class);
    if (!rc) rc = kf_store_campaign_port(s, &c->port, &c->id);
    if (!rc) rc = kf_store_campaign_set_owner(s, c->id, c->cred_id);
    break;
  }
  case CAMP_GET: {
    const Kernelfleet__GetCampaignRequest *r = (const void *)op->req;
    rc = kf_store_campaign_get(s, r->campaign_id, &c->camp);
    if (!rc) rc = kf_store_campaign_counts(s, r->campaign_id, &c->counts);
    if (!rc && r->top)
      rc = kf_store_evaluations(s, r->campaign_id, KF_EVALS_BEST, r->top,
                                &c->list);
    if (!rc)
      rc = kf_store_campaign_classes(s, r->campaign_id, NULL, 0, &c->classes);
    if (!rc && c->classes->n) {
      c->class_best = calloc(c->classes->n, sizeof *c->class_best);
      if (!c->class_best) {
        op->rc = KF_ENOMEM;
        snprintf(op->err, sizeof op->err, "coordinator out of memory");
        return;
      }
    }
    for (size_t i = 0; !rc && c->classes && i < c->classes->n; i++) {
      rc = kf_store_best_class(s, r->campaign_id,
                               c->classes->v[i].device_class_id,
                               &c->class_best[i]);
      if (rc == KF_ENOTFOUND) rc = 0; /* no best on that class yet */
    }
    if (!rc && c->camp->port_from_campaign)
      rc = kf_store_port_report(s, r->campaign_id, &c->port_rows);
    if (!rc && r->with_problem)
      rc = kf_store_campaign_devices(s, r->campaign_id, c->alive_ms,
                                     &c->devs, &c->n_devs);
    if (!rc && r->with_sources && c->list && c->list->n) {
      int64_t *ids = calloc(c->list->n, sizeof *ids);
      if (!ids) {
        op->rc = KF_ENOMEM;
        snprintf(op->err, sizeof op->err, "coordinator out of memory");
        return;
      }
      for (size_t i = 0; i < c->list->n; i++)
        ids[i] = c->list->v[i].candidate_id;
      rc = kf_store_candidates(s, r->campaign_id, ids, c->list->n,
                               &c->sources);
      free(ids);
    }
    break;
  }
  case CAMP_LIST: {
    const Kernelfleet__ListEvaluationsRequest *r = (const void *)op->req;
    rc = kf_store_campaign_get(s, r->campaign_id, &c->camp);
    uint32_t lim = r->limit ? r->limit : 100;
    if (lim > MAX_LIST) lim = MAX_LIST;
    if (!rc && r->candidate_id > 0)
      rc = kf_store_candidate_evaluations(s, r->campaign_id, r->candidate_id,
                                          &c->list);
    else if (!rc)
      rc = kf_store_evaluations(s, r->campaign_id,
                                r->failures_only ? KF_EVALS_FAILURES
                                                 : KF_EVALS_RECENT,
                                lim, &c->list);
    break;
  }
  case CAMP_BEST: {
    const Kernelfleet__GetBestRequest *r = (const void *)op->req;
    rc = kf_store_campaign_get(s, r->campaign_id, &c->camp);
    int64_t dc = 0;
    if (!rc && c->class_name[0])
      rc = kf_store_class_by_name(s, c->camp->backend, c->class_name, &dc);
    if (!rc && dc) rc = kf_store_best_class(s, r->campaign_id, dc, &c->list);
    else if (!rc) rc = kf_store_best(s, r->campaign_id, &c->list);
    break;
  }
  case CAMP_STOP: {
    const Kernelfleet__StopCampaignRequest *r = (const void *)op->req;
    if (!may_change(s, op, c, r->campaign_id)) return;
    rc = kf_store_campaign_get(s, r->campaign_id, &c->camp);
    if (!rc)
      rc = kf_store_campaign_finish(s, r->campaign_id, "stopped",
                                    "campaign stopped", &c->changed, NULL);
    break;
  }
  case CAMP_PROPOSE: {
    const Kernelfleet__ProposeCandidateRequest *r = (const void *)op->req;
    if (!may_change(s, op, c, r->campaign_id)) return;
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
    const char *who = r->proposer && *r->proposer ? r->proposer : "user";
    if (!rc && c->space_json)
      rc = kf_store_propose_template(s, r->campaign_id, r->template_name,
                                     c->space_json, c->knobs_json, c->flags,
                                     r->source, who, &c->id, &c->duplicate,
                                     c->template_name);
    else if (!rc)
      rc = kf_store_propose(s, r->campaign_id, r->template_name, c->knobs_json,
                            c->flags, r->source, who, &c->id, &c->duplicate);
    break;
  }
  case CAMP_PROPOSER_RECORD: {
    const Kernelfleet__ProposerRecordCallsRequest *r = (const void *)op->req;
    if (!may_change(s, op, c, r->campaign_id)) return;
    kf_proposer_call v[MAX_PROPOSER_CALLS];
    for (size_t i = 0; i < r->n_calls; i++) {
      const Kernelfleet__ProposerCall *k = r->calls[i];
      v[i] = (kf_proposer_call){
          .proposer = k->proposer, .model = k->model,
          .prompt_version = k->prompt_version, .operation = k->operation,
          .outcome = k->outcome, .reason = k->reason,
          .http_status = k->http_status, .attempts = k->attempts,
          .prompt_tokens = k->prompt_tokens,
          .completion_tokens = k->completion_tokens, .cost = k->cost,
          .latency_ms = k->latency_ms, .candidate_id = k->candidate_id};
    }
    rc = kf_store_proposer_record(s, r->campaign_id, c->cred_id, v,
                                  r->n_calls);
    break;
  }
  case CAMP_PROPOSER_USAGE: {
    const Kernelfleet__ProposerUsageRequest *r = (const void *)op->req;
    uint32_t lim = r->limit ? r->limit : 20;
    if (lim > MAX_USAGE_LIST) lim = MAX_USAGE_LIST;
    rc = kf_store_proposer_usage(s, r->campaign_id, lim, &c->usage);
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
  cJSON *pj;                      /* the row's eval_profiles JSON */
  Kernelfleet__ProfileDiagnosis diag;
  Kernelfleet__ProfileReport prof;
  kf_prof pf;
  Kernelfleet__ProfileStall stalls[KF_PROF_MAX_STALLS];
  Kernelfleet__ProfileStall *sp[KF_PROF_MAX_STALLS];
} summary;

static double jnum(const cJSON *o, const char *k, double dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static const char *jstr(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* The diagnosis and profile of a row (its eval_profiles row as JSON, the
 * store's columns: migrations/0007_profiles.sql). */
static void summary_profile(summary *v, const kf_cand_row *r) {
  if (!r->profile_json || !r->profile_json[0]) return;
  v->pj = cJSON_Parse(r->profile_json);
  if (!v->pj) return;
  const cJSON *o = v->pj;
  if (jstr(o, "bound")[0]) {
    kernelfleet__profile_diagnosis__init(&v->diag);
    v->diag.bound = (char *)jstr(o, "bound");
    v->diag.bandwidth_fraction = jnum(o, "bandwidth_fraction", 0);
    v->diag.compute_fraction = jnum(o, "compute_fraction", 0);
    v->diag.detail = (char *)jstr(o, "detail");
    v->diag.profiled = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o,
                                                                   "profiled"));
    v->e.diagnosis = &v->diag;
  }
  int st = kf_prof_status_parse(jstr(o, "status"));
  if (st <= KF_PROF_NONE) return;
  kf_prof *p = &v->pf;
  kf_prof_init(p, (kf_prof_status)st);
  snprintf(p->reason, sizeof p->reason, "%s", jstr(o, "reason"));
  snprintf(p->tool, sizeof p->tool, "%s", jstr(o, "tool"));
  snprintf(p->kernel, sizeof p->kernel, "%s", jstr(o, "kernel"));
  p->kernels = (uint32_t)jnum(o, "kernels", 0);
  p->duration_ns = jnum(o, "duration_ns", -1);
  p->dram_pct = jnum(o, "dram_pct", -1);
  p->sm_pct = jnum(o, "sm_pct", -1);
  p->occupancy_pct = jnum(o, "occupancy_pct", -1);
  p->l1_hit_pct = jnum(o, "l1_hit_pct", -1);
  p->l2_hit_pct = jnum(o, "l2_hit_pct", -1);
  p->registers = (uint32_t)jnum(o, "registers", 0);
  p->shared_bytes = (uint32_t)jnum(o, "shared_bytes", 0);
  p->spill_bytes = (uint32_t)jnum(o, "spill_bytes", 0);
  p->profile_ms = (uint32_t)jnum(o, "profile_ms", 0);
  const cJSON *sa = cJSON_GetObjectItemCaseSensitive(o, "stalls");
  const cJSON *it;
  cJSON_ArrayForEach(it, sa) {
    if (p->n_stalls >= KF_PROF_MAX_STALLS) break;
    kf_prof_stall *s = &p->stalls[p->n_stalls++];
    snprintf(s->name, sizeof s->name, "%s", jstr(it, "reason"));
    s->cycles = jnum(it, "cycles", 0);
  }
  kf_prof_to_pb(p, &v->prof, v->stalls, v->sp);
  v->e.profile = &v->prof;
}

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
  v->e.compile_time_ns_median = r->compile_time_ns_median;
  v->e.speedup_compile = r->speedup_compile;
  v->e.max_autotune_time_ns_median = r->max_autotune_time_ns_median;
  v->e.speedup_max_autotune = r->speedup_max_autotune;
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
  summary_profile(v, r);
}

static void summary_clear(summary *v) {
  free(v->knobs);
  free(v->kp);
  cJSON_Delete(v->kj);
  cJSON_Delete(v->pj);
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

static void dc_view(Kernelfleet__DeviceClass *v, const kf_device_class *d) {
  kernelfleet__device_class__init(v);
  v->kind = (Kernelfleet__DeviceKind)d->kind;
  v->model = (char *)d->model;
  v->cc_major = d->cc_major;
  v->cc_minor = d->cc_minor;
  v->isa = (char *)d->isa;
}

/* Per-class status and port entries of a GetCampaign answer; the views
 * point into c's rows and into the arrays here (freed by the caller). */
typedef struct {
  Kernelfleet__CampaignClassStatus *cls, **clsp;
  Kernelfleet__DeviceClass *dcs;
  Kernelfleet__PortEntry *pe, **pep;
  summary *ps; /* the port rows' knobs, by way of summary_fill */
  kf_cand_row *prow;
  size_t ncls, npe;
} get_views;

static int views_fill(get_views *v, const camp_op *c) {
  memset(v, 0, sizeof *v);
  size_t n = c->classes ? c->classes->n : 0;
  size_t m = c->port_rows ? c->port_rows->n : 0;
  v->cls = calloc(n + 1, sizeof *v->cls);
  v->clsp = calloc(n + 1, sizeof *v->clsp);
  v->dcs = calloc(n + 1, sizeof *v->dcs);
  v->pe = calloc(m + 1, sizeof *v->pe);
  v->pep = calloc(m + 1, sizeof *v->pep);
  v->ps = calloc(m + 1, sizeof *v->ps);
  v->prow = calloc(m + 1, sizeof *v->prow);
  if (!v->cls || !v->clsp || !v->dcs || !v->pe || !v->pep || !v->ps ||
      !v->prow)
    return KF_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    const kf_class_row *k = &c->classes->v[i];
    Kernelfleet__CampaignClassStatus *x = &v->cls[i];
    kernelfleet__campaign_class_status__init(x);
    dc_view(&v->dcs[i], &k->dc);
    x->device_class = &v->dcs[i];
    x->state = (char *)k->state;
    x->stop_reason = (char *)k->stop_reason;
    x->showdown = (char *)k->showdown;
    x->evals_done = k->evals;
    x->evals_ok = k->evals_ok;
    x->evals_running = k->outstanding;
    x->elapsed_ms = k->elapsed_ms;
    const kf_cand_list *b = c->class_best ? c->class_best[i] : NULL;
    if (b && b->n) {
      x->best_candidate_id = b->v[0].candidate_id;
      x->best_speedup = b->v[0].speedup;
      x->best_time_ns = b->v[0].time_ns_median;
      x->roofline_fraction = b->v[0].roofline_fraction;
      x->best_from_showdown = b->v[0].showdown;
    }
    v->clsp[i] = x;
  }
  v->ncls = n;
  for (size_t i = 0; i < m; i++) {
    const kf_port_row *r = &c->port_rows->v[i];
    Kernelfleet__PortEntry *x = &v->pe[i];
    kernelfleet__port_entry__init(x);
    x->candidate_id = r->candidate_id;
    x->from_candidate_id = r->from_candidate;
    x->template_name = (char *)r->template_name;
    v->prow[i].knobs_json = r->knobs_json;
    summary_fill(&v->ps[i], &v->prow[i]);
    x->n_knobs = v->ps[i].e.n_knobs;
    x->knobs = v->ps[i].e.knobs;
    x->before_speedup = r->before_speedup;
    x->before_time_ns = r->before_time_ns;
    x->before_roofline_fraction = r->before_roofline;
    x->before_showdown = r->before_showdown;
    x->after_outcome = (Kernelfleet__Outcome)r->after_outcome;
    x->after_reason = (char *)r->after_reason;
    x->after_speedup = r->after_speedup;
    x->after_time_ns = r->after_time_ns;
    x->after_roofline_fraction = r->after_roofline;
    v->pep[i] = x;
  }
  v->npe = m;
  return 0;
}

static void views_free(get_views *v) {
  for (size_t i = 0; v->ps && i < v->npe; i++) summary_clear(&v->ps[i]);
  free(v->cls);
  free(v->clsp);
  free(v->dcs);
  free(v->pe);
  free(v->pep);
  free(v->ps);
  free(v->prow);
}

/* Protobuf views of the campaign's templates (campaigns.templates JSON);
 * point into the parsed tree. */
typedef struct {
  cJSON *tree;
  Kernelfleet__TemplateSource *t, **tp;
  Kernelfleet__KnobSpace *ks, **ksp;
  char **vals;
  size_t n;
} problem_view;

static void problem_clear(problem_view *pv) {
  cJSON_Delete(pv->tree);
  free(pv->t);
  free(pv->tp);
  free(pv->ks);
  free(pv->ksp);
  free(pv->vals);
  memset(pv, 0, sizeof *pv);
}

static char *json_text(const cJSON *o, const char *key) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(x) ? x->valuestring : "";
}

/* KF_ENOMEM or 0; entries that are not objects are skipped. */
static int problem_fill(problem_view *pv, const kf_campaign *k) {
  pv->tree = cJSON_Parse(k->templates_json);
  int nt = cJSON_IsArray(pv->tree) ? cJSON_GetArraySize(pv->tree) : 0;
  size_t nks = 0, nv = 0;
  for (int i = 0; i < nt; i++) {
    const cJSON *kn = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(pv->tree, i), "knobs");
    for (const cJSON *q = cJSON_IsArray(kn) ? kn->child : NULL; q;
         q = q->next) {
      nks++;
      const cJSON *vs = cJSON_GetObjectItemCaseSensitive(q, "values");
      nv += cJSON_IsArray(vs) ? (size_t)cJSON_GetArraySize(vs) : 0;
    }
  }
  pv->t = calloc((size_t)nt + 1, sizeof *pv->t);
  pv->tp = calloc((size_t)nt + 1, sizeof *pv->tp);
  pv->ks = calloc(nks + 1, sizeof *pv->ks);
  pv->ksp = calloc(nks + 1, sizeof *pv->ksp);
  pv->vals = calloc(nv + 1, sizeof *pv->vals);
  if (!pv->t || !pv->tp || !pv->ks || !pv->ksp || !pv->vals) return KF_ENOMEM;
  size_t q = 0, w = 0;
  for (int i = 0; i < nt; i++) {
    const cJSON *o = cJSON_GetArrayItem(pv->tree, i);
    if (!cJSON_IsObject(o)) continue;
    Kernelfleet__TemplateSource *t = &pv->t[pv->n];
    kernelfleet__template_source__init(t);
    t->name = json_text(o, "name");
    t->file = json_text(o, "file");
    t->source = json_text(o, "source");
    t->origin = json_text(o, "origin");
    t->proposer = json_text(o, "proposer");
    const cJSON *kn = cJSON_GetObjectItemCaseSensitive(o, "knobs");
    t->knobs = &pv->ksp[q];
    for (const cJSON *x = cJSON_IsArray(kn) ? kn->child : NULL; x;
         x = x->next) {
      Kernelfleet__KnobSpace *ks = &pv->ks[q];
      kernelfleet__knob_space__init(ks);
      ks->name = json_text(x, "name");
      ks->values = &pv->vals[w];
      const cJSON *vs = cJSON_GetObjectItemCaseSensitive(x, "values");
      for (const cJSON *y = cJSON_IsArray(vs) ? vs->child : NULL; y;
           y = y->next)
        if (cJSON_IsString(y)) {
          pv->vals[w++] = y->valuestring;
          ks->n_values++;
        }
      pv->ksp[q++] = ks;
      t->n_knobs++;
    }
    pv->tp[pv->n++] = t;
  }
  return 0;
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
  Kernelfleet__DeviceClass cdc, pdc;
  if (k->device_class_id) {
    dc_view(&cdc, &k->dc);
    cp.device_class = &cdc;
  }
  if (k->port_from_campaign) {
    cp.port_from_campaign = k->port_from_campaign;
    dc_view(&pdc, &k->port_dc);
    cp.port_from_class = &pdc;
  }
  cp.profile = (char *)k->profile;
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
  get_views gv;
  if (views_fill(&gv, c)) {
    views_free(&gv);
    kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
    return;
  }
  st.n_classes = gv.ncls;
  st.classes = gv.clsp;
  st.n_port = gv.npe;
  st.port = gv.pep;
  resp.status = &st;
  summary *v = NULL;
  Kernelfleet__EvaluationSummary **p = NULL;
  size_t nl = c->list ? c->list->n : 0;
  if (summaries(c->list, &v, &p)) {
    summaries_free(v, p, 0);
    views_free(&gv);
    kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
    return;
  }
  resp.n_top = nl;
  resp.top = p;
  /* with_sources: each row's candidate source (the store's list is in no
   * particular order). */
  for (size_t i = 0; c->sources && i < nl; i++)
    for (size_t j = 0; j < c->sources->n; j++)
      if (c->sources->v[j].candidate_id == c->list->v[i].candidate_id) {
        v[i].e.source = (char *)c->sources->v[j].source;
        break;
      }
  const Kernelfleet__GetCampaignRequest *rq = (const void *)op->req;
  Kernelfleet__ProposerDevice devs[16], *devp[16];
  Kernelfleet__DeviceClass dcs[16];
  problem_view pv;
  memset(&pv, 0, sizeof pv);
  if (rq->with_problem) {
    if (problem_fill(&pv, k)) {
      problem_clear(&pv);
      summaries_free(v, p, nl);
      kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
      return;
    }
    resp.spec_json.data = (uint8_t *)k->spec_json;
    resp.spec_json.len = k->spec_json_len;
    resp.reference_source = (char *)k->reference_source;
    resp.language = (char *)k->language;
    resp.n_templates = pv.n;
    resp.templates = pv.tp;
    for (size_t i = 0; i < c->n_devs && i < 16; i++) {
      const kf_campaign_device *d = &c->devs[i];
      kernelfleet__proposer_device__init(&devs[i]);
      kernelfleet__device_class__init(&dcs[i]);
      dcs[i].kind = (Kernelfleet__DeviceKind)d->dc.kind;
      dcs[i].model = (char *)d->dc.model;
      dcs[i].cc_major = d->dc.cc_major;
      dcs[i].cc_minor = d->dc.cc_minor;
      dcs[i].isa = (char *)d->dc.isa;
      devs[i].device_class = &dcs[i];
      devs[i].workers_alive = d->workers_alive;
      devs[i].cores = d->cores;
      devs[i].l2_bytes = d->l2_bytes;
      devs[i].mem_bytes = d->mem_bytes;
      devs[i].copy_gbps = d->copy_gbps;
      devs[i].peak_gflops = d->peak_gflops;
      devs[i].read_gbps = d->read_gbps;
      devs[i].write_gbps = d->write_gbps;
      devs[i].compiler = (char *)d->compiler;
      devs[i].driver_version = (char *)d->driver;
      devs[i].runtime_version = (char *)d->runtime;
      devp[i] = &devs[i];
      resp.n_devices = i + 1;
    }
    resp.devices = devp;
  }
  kf_rpc_call_reply(op->call, &resp.base);
  problem_clear(&pv);
  summaries_free(v, p, nl);
  views_free(&gv);
}

static void answer_usage(kf_coord_op *op, camp_op *c) {
  const kf_proposer_usage *u = &c->usage;
  Kernelfleet__ProposerUsageResponse resp =
      KERNELFLEET__PROPOSER_USAGE_RESPONSE__INIT;
  Kernelfleet__ProposerCall *v = calloc(u->n_recent + 1, sizeof *v);
  Kernelfleet__ProposerCall **vp = calloc(u->n_recent + 1, sizeof *vp);
  if (!v || !vp) {
    free(v);
    free(vp);
    kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
    return;
  }
  resp.calls = u->calls;
  resp.failures = u->failures;
  resp.prompt_tokens = u->prompt_tokens;
  resp.completion_tokens = u->completion_tokens;
  resp.cost = u->cost;
  resp.latency_ms_median = u->latency_ms_median;
  resp.latency_ms_p90 = u->latency_ms_p90;
  resp.latency_ms_max = u->latency_ms_max;
  resp.proposed = u->proposed;
  resp.evaluations = u->evaluations;
  resp.profiled = u->profiled;
  resp.profile_ms_median = u->profile_ms_median;
  resp.profile_ms_p90 = u->profile_ms_p90;
  resp.profile_ms_total = u->profile_ms_total;
  for (size_t i = 0; i < u->n_recent; i++) {
    const kf_proposer_call *k = &u->recent[i];
    kernelfleet__proposer_call__init(&v[i]);
    v[i].proposer = (char *)k->proposer;
    v[i].model = (char *)k->model;
    v[i].prompt_version = (char *)k->prompt_version;
    v[i].operation = (char *)k->operation;
    v[i].outcome = (char *)k->outcome;
    v[i].reason = (char *)k->reason;
    v[i].http_status = k->http_status;
    v[i].attempts = k->attempts;
    v[i].prompt_tokens = k->prompt_tokens;
    v[i].completion_tokens = k->completion_tokens;
    v[i].cost = k->cost;
    v[i].latency_ms = k->latency_ms;
    v[i].candidate_id = k->candidate_id;
    v[i].created_at = (char *)k->created_at;
    vp[i] = &v[i];
  }
  resp.n_recent = u->n_recent;
  resp.recent = vp;
  kf_rpc_call_reply(op->call, &resp.base);
  free(v);
  free(vp);
}

void kf_coord__campaign_answer(kf_coord *co, kf_coord_op *op) {
  camp_op *c = op->camp;
  switch (c->rpc) {
  case CAMP_PORT:
  case CAMP_CREATE: {
    if (c->rpc == CAMP_PORT)
      kf_log(KF_LOG_INFO, "campaign %" PRId64 " created: a port of campaign"
             " %" PRId64 " to %s", c->id, c->port.from_campaign,
             c->class_name);
    else
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
    resp.template_name = c->template_name;
    kf_rpc_call_reply(op->call, &resp.base);
    break;
  }
  case CAMP_PROPOSER_RECORD: {
    Kernelfleet__ProposerRecordCallsResponse resp =
        KERNELFLEET__PROPOSER_RECORD_CALLS_RESPONSE__INIT;
    kf_rpc_call_reply(op->call, &resp.base);
    break;
  }
  case CAMP_PROPOSER_USAGE:
    answer_usage(op, c);
    break;
  }
}
