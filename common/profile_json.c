/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/profile_json.c -- JSON views of diagnoses and profiles
 * (profile_json.h).  The texts come from the store, where they were
 * sanitized on the way in; cJSON escapes them for JSON.
 */
#include "profile_json.h"

/* A measured number, or JSON null when it was not measured (negative). */
static void add_measured(cJSON *j, const char *k, double v) {
  if (v >= 0) cJSON_AddNumberToObject(j, k, v);
  else cJSON_AddNullToObject(j, k);
}

cJSON *kf_prof_json_diagnosis(const Kernelfleet__ProfileDiagnosis *d) {
  if (!d || !d->bound || !*d->bound) return cJSON_CreateNull();
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "bound", d->bound);
  cJSON_AddNumberToObject(j, "bandwidth_fraction", d->bandwidth_fraction);
  cJSON_AddNumberToObject(j, "compute_fraction", d->compute_fraction);
  cJSON_AddStringToObject(j, "detail", d->detail ? d->detail : "");
  cJSON_AddBoolToObject(j, "profiled", d->profiled);
  return j;
}

cJSON *kf_prof_json_report(const Kernelfleet__ProfileReport *p) {
  if (!p || !p->status || !*p->status) return cJSON_CreateNull();
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "status", p->status);
  cJSON_AddStringToObject(j, "reason", p->reason ? p->reason : "");
  cJSON_AddStringToObject(j, "tool", p->tool ? p->tool : "");
  cJSON_AddStringToObject(j, "kernel", p->kernel ? p->kernel : "");
  cJSON_AddNumberToObject(j, "kernels", p->kernels);
  add_measured(j, "duration_ns", p->duration_ns);
  add_measured(j, "dram_pct", p->dram_pct);
  add_measured(j, "sm_pct", p->sm_pct);
  add_measured(j, "occupancy_pct", p->occupancy_pct);
  add_measured(j, "l1_hit_pct", p->l1_hit_pct);
  add_measured(j, "l2_hit_pct", p->l2_hit_pct);
  cJSON_AddNumberToObject(j, "registers", p->registers);
  cJSON_AddNumberToObject(j, "shared_bytes", p->shared_bytes);
  cJSON_AddNumberToObject(j, "spill_bytes", p->spill_bytes);
  cJSON *st = cJSON_AddArrayToObject(j, "stalls");
  for (size_t i = 0; i < p->n_stalls; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "reason", p->stalls[i]->reason);
    cJSON_AddNumberToObject(o, "cycles", p->stalls[i]->cycles);
    cJSON_AddItemToArray(st, o);
  }
  cJSON_AddNumberToObject(j, "profile_ms", p->profile_ms);
  return j;
}

