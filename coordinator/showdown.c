/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/showdown.c -- the final showdown of a campaign (search
 * step's second half; search_internal.h).
 *
 * Why: the search ranks candidates by single, noisy evaluations, taken at
 * different times under different load; the number a campaign reports
 * must not be the luckiest of them.  When the search stops, the top
 * candidates of each device class are re-timed together with the
 * reference, interleaved in one evaluation process on one worker -- not
 * the one that measured the best, when the class has another alive
 * (`kf-harness showdown`, a "showdown" task whose payload is a
 * ShowdownRequest), after each passed verification again.  The
 * campaign's best and its speedup are the showdown's; a candidate that
 * fails it loses its place.
 *
 * Lifecycle, all in the store, so a coordinator restart resumes it:
 *   running --(stop rule)--> showdown --(every showdown task ended)--> done
 * A showdown that cannot run (no alive worker of the class offers the
 * "showdown" kind), fails (its task failed, the harness said so, the
 * result does not decode) or does not end in time is recorded as failed
 * with the reason; the campaign then takes its best from the aggregated
 * ranking of the search's evaluations and says so in its showdown text.
 *
 * Work thread, store only, like search.c; the ShowdownResult bytes are
 * read back from the task's stored result and decoded here.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "outcome.h"
#include "search_internal.h"
#include "util.h"

#define SHOWDOWN_DEFAULT_TOP 5
#define SHOWDOWN_MAX_TOP 64
#define SHOWDOWN_MAX_TIMEOUT_MS (60u * 60u * 1000u)
#define SHOWDOWN_SLACK_MS (60u * 1000u)
/* With a second alive worker in the class, the showdown task is kept from
 * the worker that measured the best, so that the number the campaign
 * reports is confirmed on other hardware: for as long as such a worker is
 * seen (the lease statement checks at every lease; one that is gone stops
 * the avoidance within a lease's length), up to one attempt's deadline --
 * so a second worker busy with long tasks is waited for, and one that is
 * alive but never takes it costs one attempt's time, after which the
 * finder may confirm its own best.  When both poll in one lease batch the
 * task goes to the second one's slot (db/store_tasks.c ST_LEASE and
 * kf_store__lease_avoided), so polling together does not starve it.  With
 * a single attempt allowed, at most this: */
#define SHOWDOWN_AVOID_MS (60u * 1000u)

static uint32_t avoid_ms(bool second, uint64_t tmo, uint32_t attempts) {
  if (!second) return 0;
  if (attempts < 2) return SHOWDOWN_AVOID_MS;
  return tmo > UINT32_MAX ? UINT32_MAX : (uint32_t)tmo;
}

/* ------------------------------------------------------------ begin -- */

/* One class's choice: the rows of its candidates, best first. */
typedef struct {
  int64_t dc;
  const kf_cand_row *rows[SHOWDOWN_MAX_TOP];
  size_t n;
  bool second; /* another alive worker of the class runs showdowns */
} pick_t;

static int cmp_fastest(const void *a, const void *b) {
  const kf_cand_row *x = *(const kf_cand_row *const *)a;
  const kf_cand_row *y = *(const kf_cand_row *const *)b;
  if (x->speedup != y->speedup) return x->speedup > y->speedup ? -1 : 1;
  if (x->time_ns_median != y->time_ns_median)
    return x->time_ns_median < y->time_ns_median ? -1 : 1;
  return (x->eval_id > y->eval_id) - (x->eval_id < y->eval_id);
}

/* The class's noise-aware best first, then its ok rows by speedup, up to
 * top candidates. */
static void pick_class(const kf_cand_list *evals, const kf_cand_row *best,
                       int64_t dc, uint32_t top, pick_t *p) {
  const kf_cand_row **all = calloc(evals->n + 1, sizeof *all);
  size_t n = 0;
  p->dc = dc;
  p->n = 0;
  if (!all) return;
  for (size_t i = 0; i < evals->n; i++) {
    const kf_cand_row *r = &evals->v[i];
    if (r->device_class_id == dc && r->outcome == KF_OUTCOME_OK &&
        r->time_ns_median > 0 && r != best)
      all[n++] = r;
  }
  qsort(all, n, sizeof *all, cmp_fastest);
  if (best) p->rows[p->n++] = best;
  for (size_t i = 0; i < n && p->n < top; i++) {
    bool dup = false;
    for (size_t j = 0; j < p->n && !dup; j++)
      dup = p->rows[j]->candidate_id == all[i]->candidate_id;
    if (!dup) p->rows[p->n++] = all[i];
  }
  free(all);
}

static int fill_seed(uint64_t *seed) {
  ssize_t got;
  do {
    got = getrandom(seed, sizeof *seed, 0);
  } while (got < 0 && errno == EINTR);
  return got == (ssize_t)sizeof *seed ? 0 : KF_EIO;
}

/* The ShowdownRequest of one class: the entries' sources and knobs from
 * srcs (rows by candidate id), in the pick's order.  *out malloc'd. */
static int pack_request(const kf_campaign *c, const pick_t *p,
                        const kf_cand_list *srcs, uint8_t **out,
                        size_t *len) {
  Kernelfleet__ShowdownEntry ent[SHOWDOWN_MAX_TOP];
  Kernelfleet__ShowdownEntry *entp[SHOWDOWN_MAX_TOP];
  cJSON *kj[SHOWDOWN_MAX_TOP] = {0};
  Kernelfleet__Knob *knobs[SHOWDOWN_MAX_TOP] = {0};
  Kernelfleet__Knob **knobp[SHOWDOWN_MAX_TOP] = {0};
  int rc = 0;
  size_t ne = 0;
  for (size_t i = 0; i < p->n && !rc; i++) {
    const kf_cand_row *src = NULL;
    for (size_t j = 0; j < srcs->n && !src; j++)
      if (srcs->v[j].candidate_id == p->rows[i]->candidate_id)
        src = &srcs->v[j];
    if (!src || !src->source) continue; /* not the campaign's: skip */
    kernelfleet__showdown_entry__init(&ent[ne]);
    ent[ne].candidate_id = src->candidate_id;
    ent[ne].source = (char *)src->source;
    kj[ne] = cJSON_Parse(src->knobs_json);
    int nk = kj[ne] ? cJSON_GetArraySize(kj[ne]) : 0;
    knobs[ne] = calloc((size_t)nk + 1, sizeof **knobs);
    knobp[ne] = calloc((size_t)nk + 1, sizeof **knobp);
    if (!knobs[ne] || !knobp[ne]) {
      rc = KF_ENOMEM;
      ne++;
      break;
    }
    size_t k = 0;
    for (const cJSON *it = kj[ne] ? kj[ne]->child : NULL; it; it = it->next) {
      if (!cJSON_IsString(it) || !it->string) continue;
      kernelfleet__knob__init(&knobs[ne][k]);
      knobs[ne][k].name = it->string;
      knobs[ne][k].value = it->valuestring;
      knobp[ne][k] = &knobs[ne][k];
      k++;
    }
    ent[ne].n_knobs = k;
    ent[ne].knobs = knobp[ne];
    entp[ne] = &ent[ne];
    ne++;
  }
  Kernelfleet__ShowdownRequest rq = KERNELFLEET__SHOWDOWN_REQUEST__INIT;
  if (!rc && ne == 0) rc = KF_ENOTFOUND;
  if (!rc) rc = fill_seed(&rq.seed);
  if (!rc) {
    rq.problem = (char *)c->problem;
    rq.problem_spec.data = (uint8_t *)c->spec_json;
    rq.problem_spec.len = c->spec_json_len;
    rq.reference_source = (char *)c->reference_source;
    rq.language = (char *)c->language;
    rq.n_entries = ne;
    rq.entries = entp;
    *len = kernelfleet__showdown_request__get_packed_size(&rq);
    *out = malloc(*len ? *len : 1);
    if (!*out) rc = KF_ENOMEM;
    else kernelfleet__showdown_request__pack(&rq, *out);
  }
  for (size_t i = 0; i < ne; i++) {
    cJSON_Delete(kj[i]);
    free(knobs[i]);
    free(knobp[i]);
  }
  return rc;
}

static int conclude(kf_store *s, const kf_campaign *c, const char *reason,
                    int64_t best, bool from_showdown, const char *text,
                    kf_search_stats *st) {
  bool changed = false;
  int rc = kf_store_campaign_conclude(s, c->id, reason, best, from_showdown,
                                      text, &changed);
  if (!rc && changed) st->finished++;
  return rc;
}

int kf_search__showdown_begin(kf_store *s, const kf_search_opts *o,
                              const kf_campaign *c, const char *reason,
                              const kf_cand_list *evals, kf_search_stats *st) {
  uint32_t top = c->showdown_top ? c->showdown_top : SHOWDOWN_DEFAULT_TOP;
  if (top > SHOWDOWN_MAX_TOP) top = SHOWDOWN_MAX_TOP;
  kf_search__best *bests = calloc(evals->n + 1, sizeof *bests);
  pick_t *picks = calloc(evals->n + 1, sizeof *picks);
  kf_eval_class *cls = NULL;
  size_t ncls = 0, np = 0, nplans = 0;
  kf_showdown_plan *plans = NULL;
  int64_t *cands = NULL, *tids = NULL;
  uint8_t **payloads = NULL;
  kf_cand_list *srcs = NULL;
  char skipped[512] = "";
  int rc = 0;
  if (!bests || !picks) {
    rc = KF_ENOMEM;
    goto out;
  }
  size_t nb = kf_search__class_bests(evals, bests, evals->n + 1, NULL);
  if ((rc = kf_store_eval_classes(s, c->id, o->alive_ms, &cls, &ncls)))
    goto out;
  /* Which classes can hold one now: an alive worker offers the kind. */
  size_t total = 0;
  for (size_t b = 0; b < nb; b++) {
    const kf_eval_class *k = NULL;
    for (size_t i = 0; i < ncls && !k; i++)
      if (cls[i].device_class_id == bests[b].dc) k = &cls[i];
    if (!k || k->showdown_workers == 0) {
      if (!skipped[0])
        snprintf(skipped, sizeof skipped, "no alive worker of device class"
                 " %lld runs showdown tasks", (long long)bests[b].dc);
      continue;
    }
    pick_class(evals, bests[b].best, bests[b].dc, top, &picks[np]);
    picks[np].second = k->showdown_workers >= 2;
    if (picks[np].n) total += picks[np++].n;
  }
  if (np == 0) {
    /* Nothing to re-time: the aggregated ranking's best stands. */
    char text[600];
    snprintf(text, sizeof text, "skipped: %s", nb ? skipped
             : "no verified candidate");
    int64_t best = 0;
    double sp = 0;
    for (size_t b = 0; b < nb; b++)
      if (!best || bests[b].best->speedup > sp) {
        best = bests[b].best->candidate_id;
        sp = bests[b].best->speedup;
      }
    rc = conclude(s, c, reason, best, false, text, st);
    goto out;
  }
  /* Sources for the payloads; ids first, since a payload names nothing
   * the store must know yet but the candidates. */
  cands = calloc(total + 1, sizeof *cands);
  tids = calloc(np, sizeof *tids);
  plans = calloc(np, sizeof *plans);
  payloads = calloc(np, sizeof *payloads);
  if (!cands || !tids || !plans || !payloads) {
    rc = KF_ENOMEM;
    goto out;
  }
  size_t k = 0;
  for (size_t i = 0; i < np; i++)
    for (size_t j = 0; j < picks[i].n; j++)
      cands[k++] = picks[i].rows[j]->candidate_id;
  if ((rc = kf_store_candidates(s, c->id, cands, k, &srcs))) goto out;
  if ((rc = kf_store_reserve_ids(s, np, NULL, tids))) goto out;
  uint32_t eval_ms = o->timeout_ms ? o->timeout_ms : 120000;
  k = 0;
  for (size_t i = 0; i < np; i++) {
    size_t len = 0;
    rc = pack_request(c, &picks[i], srcs, &payloads[i], &len);
    if (rc == KF_ENOTFOUND) { /* no source left: nothing to show there */
      rc = 0;
      k += picks[i].n;
      continue;
    }
    if (rc) goto out;
    /* Each entry is verified and timed again, with the reference timed
     * beside them: a deadline of one evaluation per entry and one more. */
    uint64_t tmo = (uint64_t)eval_ms * (picks[i].n + 1);
    if (tmo > SHOWDOWN_MAX_TIMEOUT_MS) tmo = SHOWDOWN_MAX_TIMEOUT_MS;
    plans[nplans++] = (kf_showdown_plan){
        .device_class_id = picks[i].dc,
        .task_id = tids[i],
        .payload = payloads[i],
        .payload_len = len,
        .timeout_ms = (uint32_t)tmo,
        .max_attempts = o->max_attempts ? o->max_attempts : 2,
        .candidates = &cands[k],
        .n_candidates = picks[i].n,
        .avoid_ms = avoid_ms(picks[i].second, tmo,
                             o->max_attempts ? o->max_attempts : 2),
    };
    k += picks[i].n;
  }
  if (nplans == 0) {
    rc = conclude(s, c, reason, bests[0].best->candidate_id, false,
                  "skipped: the candidates' sources are gone", st);
    goto out;
  }
  bool changed = false;
  if ((rc = kf_store_showdown_begin(s, c->id, reason, plans, nplans,
                                    &changed)))
    goto out;
  if (changed) {
    st->running++;
    st->scheduled += (uint32_t)nplans;
  }
out:
  for (size_t i = 0; payloads && i < np; i++) free(payloads[i]);
  free(payloads);
  free(plans);
  free(cands);
  free(tids);
  free(cls);
  free(bests);
  free(picks);
  kf_store_list_free(srcs);
  return rc;
}

/* ------------------------------------------------------------- step -- */

/* Records one ended showdown from its task's result. */
static int record_done(kf_store *s, const kf_showdown_row *w) {
  kf_showdown_outcome oc = {.showdown_id = w->id, .worker_id = w->worker_id};
  char why[1024];
  Kernelfleet__ShowdownResult *r =
      w->output && w->output_len
          ? kernelfleet__showdown_result__unpack(NULL, w->output_len,
                                                 w->output)
          : NULL;
  kf_showdown_timing *ts = NULL;
  if (!r) {
    /* A worker-side failure reported without a ShowdownResult (the
     * task's deadline, a harness that died): the report says why. */
    const char *on = kf_outcome_name(w->result_outcome);
    snprintf(why, sizeof why, "%s%s%s", w->output_len
             ? "malformed ShowdownResult" : on ? on : "no result",
             *w->result_reason ? ": " : "", w->result_reason);
    oc.reason = why;
  } else if (r->outcome != KERNELFLEET__OUTCOME__OUTCOME_OK) {
    const char *on = kf_outcome_name((int)r->outcome);
    snprintf(why, sizeof why, "%s: %s", on ? on : "unknown outcome",
             r->reason && *r->reason ? r->reason : "(no reason)");
    oc.reason = why;
  } else {
    ts = calloc(r->n_entries + 1, sizeof *ts);
    if (!ts) {
      kernelfleet__showdown_result__free_unpacked(r, NULL);
      return KF_ENOMEM;
    }
    for (size_t i = 0; i < r->n_entries; i++) {
      const Kernelfleet__ShowdownTiming *t = r->entries[i];
      /* An outcome we do not know, or ok without a time, is no judgement
       * of the candidate: infra_error, which keeps its place. */
      int outc = kf_outcome_name((int)t->outcome) ? (int)t->outcome
                                                  : KF_OUTCOME_INFRA_ERROR;
      if (outc == KF_OUTCOME_OK && !(t->time_ns_median > 0))
        outc = KF_OUTCOME_INFRA_ERROR; /* ok without a time is no timing */
      ts[i] = (kf_showdown_timing){
          .candidate_id = t->candidate_id,
          .outcome = outc,
          .stage = t->stage,
          .reason = t->reason,
          .time_ns_median = t->time_ns_median,
          .time_ns_spread = t->time_ns_spread,
          .repetitions = t->repetitions,
          .speedup = t->speedup,
          .achieved_gbps = t->achieved_gbps,
      };
    }
    oc.ok = true;
    oc.ref_time_ns_median = r->ref_time_ns_median;
    oc.ref_time_ns_spread = r->ref_time_ns_spread;
    oc.ref_repetitions = r->ref_repetitions;
    oc.stream_gbps = r->stream_gbps;
    oc.entries = ts;
    oc.n_entries = r->n_entries;
    oc.result = w->output;
    oc.result_len = w->output_len;
  }
  bool changed;
  int rc = kf_store_showdown_record(s, &oc, &changed);
  free(ts);
  if (r) kernelfleet__showdown_result__free_unpacked(r, NULL);
  return rc;
}

static int record_failed(kf_store *s, const kf_showdown_row *w,
                         const char *reason, bool cancel) {
  kf_showdown_outcome oc = {.showdown_id = w->id, .reason = reason,
                            .cancel_task = cancel};
  bool changed;
  return kf_store_showdown_record(s, &oc, &changed);
}

static int cmp_eval_id(const void *a, const void *b) {
  const kf_cand_row *x = a, *y = b;
  return (x->eval_id > y->eval_id) - (x->eval_id < y->eval_id);
}

/* The final best of each class: the showdown's fastest ok entry, else
 * the noise-aware pick among the ranking's rows that did not fail a
 * showdown.  *bests ends with an entry whose best is NULL; *nsd (may be
 * NULL): how many of them come from a showdown (those first).  The rows
 * point into *rank. */
static int final_bests(kf_store *s, const kf_campaign *c, kf_cand_list **rank,
                       kf_search__best **out, size_t *nsd_out) {
  kf_search__best *bests = NULL;
  *out = NULL;
  int rc = kf_store_evaluations(s, c->id, KF_EVALS_BEST, 0, rank);
  if (rc) return rc;
  kf_cand_list *rk = *rank;
  /* The ranking without the ones that failed their showdown; in id order
   * for the noise-aware fallback, which must not see the showdown's
   * numbers as if they were evaluations: those rows decide on their own. */
  qsort(rk->v, rk->n, sizeof *rk->v, cmp_eval_id);
  bests = calloc(2 * rk->n + 2, sizeof *bests);
  if (!bests) return KF_ENOMEM;
  size_t nb = 0;
  for (size_t i = 0; i < rk->n; i++) {
    const kf_cand_row *r = &rk->v[i];
    if (!r->showdown) continue;
    size_t b = 0;
    while (b < nb && bests[b].dc != r->device_class_id) b++;
    if (b == nb) bests[nb++] = (kf_search__best){r->device_class_id, NULL};
    const kf_cand_row *cur = bests[b].best;
    if (!cur || r->speedup > cur->speedup ||
        (r->speedup == cur->speedup && r->time_ns_median < cur->time_ns_median))
      bests[b].best = r;
  }
  size_t nsd = nb;
  kf_search__best *fall = bests + rk->n + 1;
  size_t nf = kf_search__class_bests(rk, fall, rk->n + 1, NULL);
  for (size_t f = 0; f < nf; f++) {
    bool has = false;
    for (size_t b = 0; b < nsd && !has; b++) has = bests[b].dc == fall[f].dc;
    if (!has) bests[nb++] = fall[f];
  }
  bests[nb] = (kf_search__best){0, NULL};
  if (nsd_out) *nsd_out = nsd;
  *out = bests;
  return 0;
}

/* Every showdown ended: the best per class (final_bests); overall the
 * highest speedup among the class bests that a worker of a second
 * credential re-timed (kf_store_showdown_confirmed), else the highest.
 * A worker names its own device class, so one alone in a class it made
 * up re-times its own best: its forged 4.48x was the headline over
 * honest classes at 1.37-1.49x (red team 2026-12-01-s3b, H2).  The text
 * says when the headline is one party's word, or passed a faster one
 * over. */
static int finish_campaign(kf_store *s, const kf_campaign *c,
                           const char *reason, const char *none_text,
                           const kf_showdown_list *sd, kf_search_stats *st) {
  kf_cand_list *rank = NULL;
  kf_search__best *bests = NULL;
  size_t nsd = 0;
  int rc = final_bests(s, c, &rank, &bests, &nsd);
  if (rc) {
    free(bests);
    kf_store_list_free(rank);
    return rc;
  }
  const kf_cand_row *best = NULL, *fastest = NULL;
  int64_t best_dc = 0, fastest_dc = 0;
  bool from_sd = false, best_conf = false;
  size_t nclasses = 0;
  for (size_t b = 0; bests[b].best && !rc; b++, nclasses++) {
    const kf_cand_row *r = bests[b].best;
    bool conf = false;
    if (b < nsd)
      rc = kf_store_showdown_confirmed(s, c->id, bests[b].dc, r->candidate_id,
                                       &conf);
    if (!fastest || r->speedup > fastest->speedup) {
      fastest = r;
      fastest_dc = bests[b].dc;
    }
    if (!best || (conf && !best_conf) ||
        (conf == best_conf && r->speedup > best->speedup)) {
      best = r;
      best_dc = bests[b].dc;
      from_sd = b < nsd;
      best_conf = conf;
    }
  }
  if (rc) {
    free(bests);
    kf_store_list_free(rank);
    return rc;
  }
  /* Whose word the headline is, when more than one class competed. */
  char who[320] = "";
  if (best && fastest != best)
    snprintf(who, sizeof who, "; device class %lld's best (%.2fx) was"
             " not re-timed by a second worker credential: the headline is"
             " device class %lld's (%.2fx), which was", (long long)fastest_dc, fastest->speedup,
             (long long)best_dc, best->speedup);
  else if (best && !best_conf && nclasses > 1)
    snprintf(who, sizeof who, "; no class's best was re-timed by a second"
             " worker credential: the headline (device class %lld) is its"
             " workers' word, see the per-class bests", (long long)best_dc);
  /* The text: "done", or the first failure and where the best came from. */
  char text[1024] = "done";
  const char *tail = from_sd ? ""
                     : best  ? "; the best comes from the aggregated ranking"
                             : "";
  for (size_t i = 0; i < sd->n; i++)
    if (strcmp(sd->v[i].state, "done") != 0) {
      snprintf(text, sizeof text, "failed: device class %lld: %.500s%s",
               (long long)sd->v[i].device_class_id,
               *sd->v[i].reason ? sd->v[i].reason : "no reason", tail);
      break;
    }
  if (!from_sd && !strcmp(text, "done"))
    snprintf(text, sizeof text, "%.600s%s", sd->n ? "done: no candidate"
             " re-timed ok" : none_text ? none_text : "skipped: no showdown"
             " ran", sd->n || !none_text ? tail : "");
  size_t tl = strlen(text);
  snprintf(text + tl, sizeof text - tl, "%s", who);
  rc = conclude(s, c, reason, best ? best->candidate_id : 0, from_sd, text,
                st);
  free(bests);
  kf_store_list_free(rank);
  return rc;
}

/* Records every running showdown of c that ended (or can no longer end)
 * and reads the list back; *pending: one still runs. */
static int check_showdowns(kf_store *s, const kf_search_opts *o,
                           const kf_campaign *c, kf_showdown_list **out,
                           bool *pending) {
  kf_showdown_list *sd = NULL;
  *out = NULL;
  *pending = false;
  int rc = kf_store_showdowns(s, c->id, o->alive_ms, &sd);
  if (rc) return rc;
  bool changed = false;
  for (size_t i = 0; i < sd->n && !rc; i++) {
    const kf_showdown_row *w = &sd->v[i];
    if (strcmp(w->state, "running") != 0) continue;
    if (!strcmp(w->task_state, "done")) {
      rc = record_done(s, w);
      changed = true;
    } else if (!strcmp(w->task_state, "failed")) {
      rc = record_failed(s, w, *w->last_error ? w->last_error
                                              : "the showdown task failed",
                         false);
      changed = true;
    } else if (!strcmp(w->task_state, "queued") && w->showdown_workers == 0 &&
               w->age_ms > 4ull * o->alive_ms + SHOWDOWN_SLACK_MS) {
      /* Not at once: a worker that restarts is missing for a while. */
      rc = record_failed(s, w, "no alive worker of the class runs showdown"
                         " tasks", true);
      changed = true;
    } else {
      /* Every attempt's deadline, and the time for a lost lease to be
       * noticed; past that it is not going to end. */
      uint64_t limit = (uint64_t)w->timeout_ms *
                           (w->max_attempts ? w->max_attempts : 1) +
                       4ull * o->alive_ms + SHOWDOWN_SLACK_MS;
      if (w->age_ms > limit) {
        char why[128];
        snprintf(why, sizeof why, "the showdown did not end within %llu s",
                 (unsigned long long)(limit / 1000));
        rc = record_failed(s, w, why, true);
        changed = true;
      } else {
        *pending = true;
      }
    }
  }
  if (!rc && changed) {
    /* Read back what was recorded: the reasons of failed ones. */
    kf_store_showdown_list_free(sd);
    sd = NULL;
    rc = kf_store_showdowns(s, c->id, o->alive_ms, &sd);
  }
  if (rc) {
    kf_store_showdown_list_free(sd);
    return rc;
  }
  *out = sd;
  return 0;
}

int kf_search__showdown_step(kf_store *s, const kf_search_opts *o,
                             const kf_campaign *c, kf_search_stats *st) {
  kf_showdown_list *sd = NULL;
  bool pending = false;
  int rc = check_showdowns(s, o, c, &sd, &pending);
  if (!rc && !pending) rc = finish_campaign(s, c, NULL, NULL, sd, st);
  else if (!rc) st->running++;
  kf_store_showdown_list_free(sd);
  return rc;
}

/* -------------------------------------------------------- per class -- */

int kf_search__class_stop(kf_store *s, const kf_search_opts *o,
                          const kf_campaign *c, int64_t dc,
                          const char *reason, const kf_cand_list *evals,
                          const kf_eval_class *cls, bool *changed) {
  uint32_t top = c->showdown_top ? c->showdown_top : SHOWDOWN_DEFAULT_TOP;
  if (top > SHOWDOWN_MAX_TOP) top = SHOWDOWN_MAX_TOP;
  *changed = false;
  kf_search__best *bests = calloc(evals->n + 1, sizeof *bests);
  pick_t *pick = calloc(1, sizeof *pick);
  kf_cand_list *srcs = NULL;
  uint8_t *payload = NULL;
  int rc = 0;
  if (!bests || !pick) {
    rc = KF_ENOMEM;
    goto out;
  }
  size_t nb = kf_search__class_bests(evals, bests, evals->n + 1, NULL);
  const kf_cand_row *best = NULL;
  for (size_t b = 0; b < nb; b++)
    if (bests[b].dc == dc) best = bests[b].best;
  char noworker[128];
  snprintf(noworker, sizeof noworker, "skipped: no alive worker of device"
           " class %lld runs showdown tasks", (long long)dc);
  const char *skip = !best ? "skipped: no verified candidate"
                     : !cls || cls->showdown_workers == 0 ? noworker
                                                          : NULL;
  if (!skip) {
    pick_class(evals, best, dc, top, pick);
    pick->second = cls->showdown_workers >= 2;
    int64_t cands[SHOWDOWN_MAX_TOP];
    for (size_t j = 0; j < pick->n; j++)
      cands[j] = pick->rows[j]->candidate_id;
    int64_t tid = 0;
    size_t len = 0;
    if ((rc = kf_store_candidates(s, c->id, cands, pick->n, &srcs))) goto out;
    rc = pack_request(c, pick, srcs, &payload, &len);
    if (rc == KF_ENOTFOUND) {
      rc = 0;
      skip = "skipped: the candidates' sources are gone";
    } else if (rc) {
      goto out;
    } else {
      if ((rc = kf_store_reserve_ids(s, 1, NULL, &tid))) goto out;
      uint32_t eval_ms = o->timeout_ms ? o->timeout_ms : 120000;
      uint64_t tmo = (uint64_t)eval_ms * (pick->n + 1);
      if (tmo > SHOWDOWN_MAX_TIMEOUT_MS) tmo = SHOWDOWN_MAX_TIMEOUT_MS;
      kf_showdown_plan plan = {
          .device_class_id = dc,
          .task_id = tid,
          .payload = payload,
          .payload_len = len,
          .timeout_ms = (uint32_t)tmo,
          .max_attempts = o->max_attempts ? o->max_attempts : 2,
          .candidates = cands,
          .n_candidates = pick->n,
          .avoid_ms = avoid_ms(pick->second, tmo,
                               o->max_attempts ? o->max_attempts : 2),
      };
      rc = kf_store_class_stop(s, c->id, dc, reason, &plan, 0, NULL, changed);
      goto out;
    }
  }
  rc = kf_store_class_stop(s, c->id, dc, reason, NULL,
                           best ? best->candidate_id : 0, skip, changed);
out:
  free(payload);
  free(bests);
  free(pick);
  kf_store_list_free(srcs);
  return rc;
}

int kf_search__class_showdowns(kf_store *s, const kf_search_opts *o,
                               const kf_campaign *c,
                               const kf_class_list *classes) {
  bool any = false;
  for (size_t i = 0; i < classes->n && !any; i++)
    any = !strcmp(classes->v[i].state, "showdown");
  if (!any) return 0;
  kf_showdown_list *sd = NULL;
  kf_cand_list *rank = NULL;
  kf_search__best *bests = NULL;
  bool pending = false;
  int rc = check_showdowns(s, o, c, &sd, &pending);
  if (rc) return rc;
  for (size_t i = 0; i < classes->n && !rc; i++) {
    const kf_class_row *k = &classes->v[i];
    if (strcmp(k->state, "showdown") != 0) continue;
    const kf_showdown_row *w = NULL;
    for (size_t j = 0; j < sd->n && !w; j++)
      if (sd->v[j].device_class_id == k->device_class_id) w = &sd->v[j];
    if (w && !strcmp(w->state, "running")) continue;
    if (!rank) {
      if ((rc = final_bests(s, c, &rank, &bests, NULL))) break;
    }
    const kf_cand_row *b = NULL;
    bool from_sd = false;
    for (size_t j = 0; bests[j].best; j++)
      if (bests[j].dc == k->device_class_id) {
        b = bests[j].best;
        from_sd = b->showdown;
        break;
      }
    char text[768] = "done";
    if (w && strcmp(w->state, "done") != 0)
      snprintf(text, sizeof text, "failed: %.500s%s",
               *w->reason ? w->reason : "no reason",
               b ? "; the best comes from the aggregated ranking" : "");
    else if (!w)
      snprintf(text, sizeof text, "failed: the showdown is missing");
    else if (!from_sd)
      snprintf(text, sizeof text, "done: no candidate re-timed ok%s",
               b ? "; the best comes from the aggregated ranking" : "");
    bool changed = false;
    rc = kf_store_class_conclude(s, c->id, k->device_class_id,
                                 b ? b->candidate_id : 0, from_sd, text,
                                 &changed);
  }
  free(bests);
  kf_store_list_free(rank);
  kf_store_showdown_list_free(sd);
  return rc;
}

int kf_search__finish(kf_store *s, const kf_search_opts *o,
                      const kf_campaign *c, const char *reason,
                      const char *none_text, kf_search_stats *st) {
  kf_showdown_list *sd = NULL;
  int rc = kf_store_showdowns(s, c->id, o->alive_ms, &sd);
  if (!rc) rc = finish_campaign(s, c, reason, none_text, sd, st);
  kf_store_showdown_list_free(sd);
  return rc;
}
