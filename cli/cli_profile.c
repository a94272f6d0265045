/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_profile.c -- what `kf` shows of diagnoses and profiles
 * (docs/profiling.md): `kf campaign profile ID CANDIDATE`, the diagnosis
 * lines of `kf campaign status`, and the "diagnosis"/"profile" objects of
 * every JSON evaluation (status --json, export).  Every text that came
 * from a worker is sanitized before it reaches the terminal.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_internal.h"
#include "profile_json.h"
#include "text.h"
#include "util.h"

/* Display-safe copy of s (one line, at most max bytes). */
static const char *safe(char *buf, size_t len, const char *s) {
  kf_text_sanitize(s, s ? strlen(s) : 0, buf, len, 0);
  return buf;
}

static const char *class_name(const Kernelfleet__DeviceClass *dc, char *buf,
                              size_t len) {
  if (!dc) return "?";
  return safe(buf, len, dc->model && *dc->model ? dc->model : "?");
}

void kf_cli__print_diagnoses(FILE *f,
                             Kernelfleet__EvaluationSummary *const *top,
                             size_t n) {
  bool any = false;
  for (size_t i = 0; i < n; i++) {
    const Kernelfleet__EvaluationSummary *e = top[i];
    if (!e->diagnosis || !e->diagnosis->bound || !*e->diagnosis->bound)
      continue;
    /* the first (best) row of its class only */
    bool seen = false;
    for (size_t k = 0; k < i && !seen; k++)
      seen = top[k]->device_class && e->device_class &&
             top[k]->device_class->kind == e->device_class->kind &&
             !strcmp(top[k]->device_class->model, e->device_class->model) &&
             !strcmp(top[k]->device_class->isa, e->device_class->isa);
    if (seen) continue;
    if (!any) fprintf(f, "\n");
    any = true;
    char cls[96], det[400];
    fprintf(f, "  diagnosis of the best on %s (candidate %" PRId64 "): %s\n",
            class_name(e->device_class, cls, sizeof cls), e->candidate_id,
            safe(det, sizeof det, e->diagnosis->detail));
  }
}

static void print_pct(FILE *f, const char *what, double v) {
  if (v >= 0) fprintf(f, "    %-22s %.1f%%\n", what, v);
  else fprintf(f, "    %-22s -\n", what);
}

static void print_one(FILE *f, const Kernelfleet__EvaluationSummary *e) {
  char b[400], cls[96];
  fprintf(f, "candidate %" PRId64 " on %s: %s", e->candidate_id,
          class_name(e->device_class, cls, sizeof cls),
          kf_cli__outcome(e->outcome));
  if (e->time_ns_median > 0)
    fprintf(f, ", %.0f ns (%.2fx the reference)", e->time_ns_median,
            e->speedup);
  fprintf(f, "\n");
  const Kernelfleet__ProfileDiagnosis *d = e->diagnosis;
  if (d && d->bound && *d->bound) {
    fprintf(f, "  diagnosis: %s-bound\n", safe(b, sizeof b, d->bound));
    fprintf(f, "    %s\n", safe(b, sizeof b, d->detail));
    fprintf(f, "    bandwidth %.1f%% of the measured ceiling, FLOP rate "
            "%.1f%%%s\n", 100 * d->bandwidth_fraction,
            100 * d->compute_fraction, d->profiled ? "; counters used" : "");
  } else {
    fprintf(f, "  diagnosis: none (%s)\n",
            e->outcome == KERNELFLEET__OUTCOME__OUTCOME_OK
                ? "measured before profiles were stored"
                : "not a verified, timed evaluation");
  }
  const Kernelfleet__ProfileReport *p = e->profile;
  if (!p || !p->status || !*p->status) {
    fprintf(f, "  profile: none\n");
    return;
  }
  fprintf(f, "  profile: %s", safe(b, sizeof b, p->status));
  if (p->reason && *p->reason) fprintf(f, " (%s)", safe(b, sizeof b, p->reason));
  if (p->profile_ms) fprintf(f, ", pass took %u ms", p->profile_ms);
  fprintf(f, "\n");
  if (strcmp(p->status, "ok")) return;
  fprintf(f, "    %-22s %s (%u launches)\n", "kernel",
          safe(b, sizeof b, p->kernel), p->kernels);
  if (p->duration_ns >= 0)
    fprintf(f, "    %-22s %.0f ns\n", "duration (profiled)", p->duration_ns);
  print_pct(f, "DRAM throughput", p->dram_pct);
  print_pct(f, "SM throughput", p->sm_pct);
  print_pct(f, "achieved occupancy", p->occupancy_pct);
  print_pct(f, "L1 hit rate", p->l1_hit_pct);
  print_pct(f, "L2 hit rate", p->l2_hit_pct);
  fprintf(f, "    %-22s %u per thread\n", "registers", p->registers);
  fprintf(f, "    %-22s %u bytes per block\n", "shared memory",
          p->shared_bytes);
  fprintf(f, "    %-22s %u bytes\n", "spills", p->spill_bytes);
  for (size_t i = 0; i < p->n_stalls; i++)
    fprintf(f, "    stall %-16s %.2f cycles per instruction\n",
            safe(b, 48, p->stalls[i]->reason), p->stalls[i]->cycles);
}

int kf_cli__campaign_profile(kf_rpc_client *cli, const char *cmd, int64_t id,
                             const char *candidate, bool json) {
  uint64_t cand;
  if (!candidate || kf_parse_u64(candidate, &cand) || cand < 1 ||
      cand > INT64_MAX) {
    fprintf(stderr, "%s: '%s' is not a candidate id\n", cmd,
            candidate ? candidate : "");
    return KF_EXIT_USAGE;
  }
  Kernelfleet__ListEvaluationsRequest req =
      KERNELFLEET__LIST_EVALUATIONS_REQUEST__INIT;
  req.campaign_id = id;
  req.candidate_id = (int64_t)cand;
  ProtobufCMessage *resp = NULL;
  int rc = kf_cli__call(cli, cmd, "ListEvaluations", &req.base,
                        &kernelfleet__list_evaluations_response__descriptor,
                        30000, &resp);
  if (rc) return rc;
  const Kernelfleet__ListEvaluationsResponse *l = (const void *)resp;
  if (l->n_evaluations == 0) {
    fprintf(stderr, "%s: campaign %" PRId64 " has no evaluation of "
            "candidate %" PRIu64 "\n", cmd, id, cand);
    kf_rpc_free(resp);
    return KF_EXIT_FAIL;
  }
  if (json) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "campaign_id", (double)id);
    cJSON_AddNumberToObject(j, "candidate_id", (double)cand);
    cJSON *a = cJSON_AddArrayToObject(j, "evaluations");
    for (size_t i = 0; i < l->n_evaluations; i++)
      cJSON_AddItemToArray(a, kf_cli__json_eval(l->evaluations[i]));
    kf_cli__json_print(stdout, j);
  } else {
    for (size_t i = 0; i < l->n_evaluations; i++)
      print_one(stdout, l->evaluations[i]);
  }
  kf_rpc_free(resp);
  return KF_EXIT_OK;
}
