/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_watch.c -- how a campaign looks from the command line: the live
 * progress line, the status block, the closing results table, the best
 * kernel as a standalone source file, and the same facts as JSON.  `kf run`
 * and `kf campaign` both draw through here, so the two never disagree.
 *
 * The best is the same candidate with the same numbers everywhere: the
 * status block, the first row of the table, the summary and the written
 * file all come from the coordinator's one ranking (best first; once the
 * final showdown reported, its numbers, marked as such, with spread and
 * repetitions).
 *
 * Polling, not streaming: the wire contract has unary calls only, so
 * progress is GetCampaign every ~500 ms.  A coordinator that restarts
 * while we watch (the campaign's state lives in PostgreSQL) costs a few
 * "unreachable" polls, not the watch.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_internal.h"
#include "profile_json.h"
#include "err.h"
#include "outcome.h"
#include "text.h"
#include "util.h"

#define POLL_MS 500
#define PLAIN_EVERY_MS 10000  /* progress lines when stderr is no terminal */
#define RETRY_FOR_MS 120000   /* keep polling an unreachable coordinator */

const char *kf_cli__outcome(int outcome) {
  const char *n = kf_outcome_name(outcome);
  return n ? n : "unspecified";
}

/* ---------------------------------------------------------- formatting -- */

static void fmt_ns(char *buf, size_t len, double ns) {
  if (!(ns > 0)) snprintf(buf, len, "-");
  else if (ns < 1e3) snprintf(buf, len, "%.0f ns", ns);
  else if (ns < 1e6) snprintf(buf, len, "%.2f us", ns / 1e3);
  else if (ns < 1e9) snprintf(buf, len, "%.2f ms", ns / 1e6);
  else snprintf(buf, len, "%.2f s", ns / 1e9);
}

static void fmt_secs(char *buf, size_t len, double s) {
  if (s < 0) s = 0;
  unsigned long t = (unsigned long)(s + 0.5);
  if (t >= 3600)
    snprintf(buf, len, "%luh%02lum", t / 3600, t / 60 % 60);
  else if (t >= 60)
    snprintf(buf, len, "%lum%02lus", t / 60, t % 60);
  else
    snprintf(buf, len, "%lus", t);
}

static void fmt_knobs(char *buf, size_t len, Kernelfleet__Knob *const *k,
                      size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && used + 1 < len; i++) {
    int w = snprintf(buf + used, len - used, "%s%s=%s", i ? " " : "",
                     kf_cli__clean(k[i]->name, 64),
                     kf_cli__clean(k[i]->value, 64));
    if (w < 0) break;
    used += (size_t)w;
  }
  if (!n) snprintf(buf, len, "-");
}

static void fmt_device(char *buf, size_t len,
                       const Kernelfleet__DeviceClass *dc) {
  if (!dc || dc->kind == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_UNSPECIFIED) {
    snprintf(buf, len, "-");
  } else if (dc->kind == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA) {
    snprintf(buf, len, "cuda %s (sm_%u%u%s%s)", kf_cli__clean(dc->model, 127),
             dc->cc_major, dc->cc_minor, *dc->isa ? ", " : "",
             kf_cli__clean(dc->isa, 31));
  } else {
    snprintf(buf, len, "cpu %s%s%s%s", kf_cli__clean(dc->model, 127),
             *dc->isa ? " (" : "", kf_cli__clean(dc->isa, 31),
             *dc->isa ? ")" : "");
  }
}

/* One line of at most max bytes, newlines and tabs as spaces, safe to
 * print (kf_text_sanitize: no control characters, escapes or bidi
 * overrides; cut on a character boundary, ending "..." when cut). */
static void one_line(char *buf, size_t len, const char *s, size_t max) {
  if (max + 1 < len) len = max + 1;
  kf_text_sanitize(s, s ? strlen(s) : 0, buf, len, KF_TEXT_MULTILINE);
  for (char *p = buf; *p; p++)
    if (*p == '\n' || *p == '\t') *p = ' ';
}

/* ------------------------------------------------------------- status -- */

int kf_cli__get_campaign(kf_rpc_client *cli, const char *cmd, int64_t id,
                         uint32_t top, Kernelfleet__GetCampaignResponse **out) {
  Kernelfleet__GetCampaignRequest req = KERNELFLEET__GET_CAMPAIGN_REQUEST__INIT;
  req.campaign_id = id;
  req.top = top;
  ProtobufCMessage *resp = NULL;
  int rc = kf_cli__call(cli, cmd, "GetCampaign", &req.base,
                        &kernelfleet__get_campaign_response__descriptor, 10000,
                        &resp);
  if (rc) return rc;
  Kernelfleet__GetCampaignResponse *g = (void *)resp;
  if (!g->status || !g->status->campaign) {
    fprintf(stderr, "%s: GetCampaign: no campaign %lld in the answer\n", cmd,
            (long long)id);
    kf_rpc_free(resp);
    return KF_EXIT_FAIL;
  }
  *out = g;
  return 0;
}

bool kf_cli__campaign_ended(const Kernelfleet__CampaignStatus *st) {
  return st && st->campaign && st->campaign->state &&
         *st->campaign->state && strcmp(st->campaign->state, "running") != 0 &&
         strcmp(st->campaign->state, "showdown") != 0;
}

bool kf_cli__campaign_won(const Kernelfleet__CampaignStatus *st) {
  return st && st->best_candidate_id > 0 && st->best_speedup > 1.0;
}

/* "12/60 evals, 2 running, best 1.84x (12.3 us, 42% roofline), 0m42s, ETA
 * ~2m10s" */
static void progress_text(char *buf, size_t len,
                          const Kernelfleet__CampaignStatus *st) {
  const Kernelfleet__Campaign *c = st->campaign;
  double el = (double)st->elapsed_ms / 1000.0;
  char elapsed[32], eta[48] = "", best[96] = "best -";
  fmt_secs(elapsed, sizeof elapsed, el);
  /* ETA: whichever budget runs out first, evaluations at the rate so far
   * or wall-clock seconds. */
  /* Budgets are each class's (0009): the campaign's total is the sum. */
  uint32_t ncls = st->n_classes > 1 ? (uint32_t)st->n_classes : 1;
  uint32_t total = c->budget_evals * ncls;
  double left = -1;
  if (c->budget_seconds) left = (double)c->budget_seconds - el;
  if (total && st->evals_done > 0 && el > 0) {
    double rate = st->evals_done / el;
    double by_evals =
        st->evals_done >= total ? 0
                                : (double)(total - st->evals_done) / rate;
    if (left < 0 || by_evals < left) left = by_evals;
  }
  if (left >= 0 && !kf_cli__campaign_ended(st)) {
    char t[32];
    fmt_secs(t, sizeof t, left);
    snprintf(eta, sizeof eta, ", ETA ~%s", t);
  }
  if (st->best_candidate_id > 0) {
    char t[32];
    fmt_ns(t, sizeof t, st->best_time_ns);
    if (st->roofline_fraction > 0)
      snprintf(best, sizeof best, "best %.2fx (%s, %.0f%% of roofline)",
               st->best_speedup, t, st->roofline_fraction * 100);
    else
      snprintf(best, sizeof best, "best %.2fx (%s)", st->best_speedup, t);
  }
  char budget[24] = "?";
  if (total) snprintf(budget, sizeof budget, "%u", total);
  /* Per class, when there are several: "[A 4/4 done, B 1/4]". */
  char per[160] = "";
  if (st->n_classes > 1) {
    size_t o = 0;
    for (size_t i = 0; i < st->n_classes && o + 1 < sizeof per; i++) {
      const Kernelfleet__CampaignClassStatus *k = st->classes[i];
      char m[40];
      one_line(m, sizeof m, k->device_class ? k->device_class->model : "?",
               24);
      int w = snprintf(per + o, sizeof per - o, "%s%s %u/%u%s%s",
                       i ? ", " : " [", m, k->evals_done, c->budget_evals,
                       strcmp(k->state, "running") ? " " : "",
                       strcmp(k->state, "running") ? k->state : "");
      if (w < 0) break;
      o += (size_t)w;
    }
    if (o + 1 < sizeof per) snprintf(per + o, sizeof per - o, "]");
  }
  if (!strcmp(c->state, "showdown")) {
    /* The search is over; the top candidates are being re-timed. */
    snprintf(buf, len, "%u evals, %u ok; %s; showdown: re-timing the top %u"
             " with the reference, %s", st->evals_done, st->evals_ok,
             st->stop_reason, c->showdown_top ? c->showdown_top : 5, elapsed);
    return;
  }
  snprintf(buf, len, "%u/%s evals, %u ok, %u running, %s, %s%s%s",
           st->evals_done, budget, st->evals_ok, st->evals_running, best,
           elapsed, eta, per);
}

static void sleep_ms_interruptible(int ms, volatile sig_atomic_t *stop) {
  for (int t = 0; t < ms && !(stop && *stop); t += 50) {
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
  }
}

int kf_cli__watch(kf_rpc_client *cli, const char *cmd, int64_t id,
                  bool quiet, volatile sig_atomic_t *interrupted,
                  Kernelfleet__GetCampaignResponse **last) {
  bool tty = !quiet && isatty(2);
  uint64_t last_plain = 0, unreachable_since = 0;
  uint32_t last_done = UINT32_MAX;
  *last = NULL;
  int rc = 0;
  for (;;) {
    if (interrupted && *interrupted) {
      rc = KF_EXIT_INTERRUPT;
      break;
    }
    Kernelfleet__GetCampaignRequest req =
        KERNELFLEET__GET_CAMPAIGN_REQUEST__INIT;
    req.campaign_id = id;
    ProtobufCMessage *resp = NULL;
    char err[1024], path[] = "/kernelfleet.Coordinator/GetCampaign";
    int r = kf_rpc_client_call_sync(
        cli, path, &req.base, &kernelfleet__get_campaign_response__descriptor,
        10000, &resp, err, sizeof err);
    if (r == KF_EUNAVAIL || r == KF_ETIMEDOUT) {
      /* The coordinator may be restarting; the campaign is in the DB. */
      uint64_t now = kf_now_ms();
      if (!unreachable_since) {
        unreachable_since = now;
        if (!quiet)
          fprintf(stderr, "%s%s: coordinator unreachable (%s); retrying\n",
                  tty ? "\r\033[K" : "", cmd, err);
      } else if (now - unreachable_since > RETRY_FOR_MS) {
        fprintf(stderr, "%s: coordinator unreachable for %d s: %s\n", cmd,
                RETRY_FOR_MS / 1000, err);
        rc = KF_EXIT_UNAVAIL;
        break;
      }
      sleep_ms_interruptible(1000, interrupted);
      continue;
    }
    if (r) {
      rc = kf_cli__report(cmd, "GetCampaign", r, err);
      break;
    }
    unreachable_since = 0;
    Kernelfleet__GetCampaignResponse *g = (void *)resp;
    if (!g->status || !g->status->campaign) {
      kf_rpc_free(resp);
      fprintf(stderr, "%s: GetCampaign: no campaign %lld in the answer\n",
              cmd, (long long)id);
      rc = KF_EXIT_FAIL;
      break;
    }
    kf_rpc_free((ProtobufCMessage *)*last);
    *last = g;
    const Kernelfleet__CampaignStatus *st = g->status;
    bool ended = kf_cli__campaign_ended(st);
    char line[320];
    progress_text(line, sizeof line, st);
    if (tty) {
      /* One terminal row, or \r cannot redraw it. */
      struct winsize ws;
      if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10 &&
          strlen(line) + 3 > ws.ws_col)
        line[ws.ws_col - 3] = '\0';
      fprintf(stderr, "\r\033[K  %s", line);
      if (ended) fputc('\n', stderr);
      fflush(stderr);
    } else if (!quiet) {
      uint64_t now = kf_now_ms();
      if (ended || (st->evals_done != last_done &&
                    now - last_plain >= PLAIN_EVERY_MS)) {
        fprintf(stderr, "  %s\n", line);
        last_plain = now;
        last_done = st->evals_done;
      }
    }
    if (ended) break;
    sleep_ms_interruptible(POLL_MS, interrupted);
  }
  if (rc == KF_EXIT_INTERRUPT && tty) fputc('\n', stderr);
  return rc;
}

void kf_cli__print_status(FILE *f, const Kernelfleet__CampaignStatus *st) {
  const Kernelfleet__Campaign *c = st->campaign;
  char dev[200], t[32], ref[32], el[32];
  fmt_device(dev, sizeof dev, c->device_class);
  fmt_secs(el, sizeof el, (double)st->elapsed_ms / 1000.0);
  fprintf(f, "campaign %lld  %s  (problem %s)\n", (long long)c->campaign_id,
          kf_cli__clean(c->name, 0), kf_cli__clean(c->problem, 0));
  fprintf(f, "  state        %s%s%s\n", kf_cli__clean(c->state, 0),
          *st->stop_reason ? ": " : "", kf_cli__clean(st->stop_reason, 0));
  if (strcmp(dev, "-")) fprintf(f, "  device       %s\n", dev);
  fprintf(f, "  evaluations  %u done", st->evals_done);
  /* Budgets are each class's own (0009). */
  const char *each = st->n_classes > 1 ? " per class" : "";
  if (c->budget_evals) fprintf(f, " of %u%s", c->budget_evals, each);
  fprintf(f, ", %u ok, %u running; %s elapsed", st->evals_ok,
          st->evals_running, el);
  if (c->budget_seconds) {
    fmt_secs(t, sizeof t, c->budget_seconds);
    fprintf(f, " of %s%s", t, each);
  }
  fputc('\n', f);
  if (c->fresh) fprintf(f, "  fresh        stored measurements not reused\n");
  fmt_ns(ref, sizeof ref, st->ref_time_ns);
  if (st->ref_time_ns > 0) fprintf(f, "  reference    %s\n", ref);
  if (st->best_candidate_id > 0) {
    fmt_ns(t, sizeof t, st->best_time_ns);
    fprintf(f, "  best         %s, %.2fx over the reference", t,
            st->best_speedup);
    if (st->roofline_fraction > 0)
      fprintf(f, ", %.1f%% of roofline", st->roofline_fraction * 100);
    fprintf(f, " (candidate %lld)\n", (long long)st->best_candidate_id);
    fprintf(f, "               spread %.1f%%", st->best_time_ns_spread * 100);
    if (st->best_repetitions)
      fprintf(f, ", %u repetitions", st->best_repetitions);
    if (st->best_from_showdown)
      fprintf(f, ", from the final showdown\n");
    else if (st->best_measurements > 1)
      fprintf(f, ", median of %u measurements\n", st->best_measurements);
    else
      fprintf(f, ", from the search's evaluation\n");
  } else {
    fprintf(f, "  best         none yet\n");
  }
  if (st->showdown && *st->showdown)
    fprintf(f, "  showdown     %s\n", st->showdown);
  if (c->port_from_campaign) {
    char from[200];
    fmt_device(from, sizeof from, c->port_from_class);
    fprintf(f, "  port         from campaign %lld, %s\n",
            (long long)c->port_from_campaign, from);
  }
  if (st->n_classes) {
    fprintf(f, "\n  %-34s %-9s %11s %8s %8s %9s  %s\n", "device class",
            "state", "evaluations", "elapsed", "speedup", "roofline",
            "stop reason / showdown");
    for (size_t i = 0; i < st->n_classes; i++) {
      const Kernelfleet__CampaignClassStatus *k = st->classes[i];
      char d0[200], d[64], ev[32], sp[16] = "-", rf[16] = "-", why[200];
      fmt_device(d0, sizeof d0, k->device_class);
      one_line(d, sizeof d, d0, 34);
      snprintf(ev, sizeof ev, "%u/%u", k->evals_done,
               c->budget_evals ? c->budget_evals : k->evals_done);
      fmt_secs(el, sizeof el, (double)k->elapsed_ms / 1000.0);
      if (k->best_candidate_id) snprintf(sp, sizeof sp, "%.2fx",
                                         k->best_speedup);
      if (k->roofline_fraction > 0)
        snprintf(rf, sizeof rf, "%.1f%%", k->roofline_fraction * 100);
      snprintf(why, sizeof why, "%s%s%s", kf_cli__clean(k->stop_reason, 80),
               *k->showdown ? "; showdown " : "",
               kf_cli__clean(k->showdown, 90));
      fprintf(f, "  %-34s %-9s %11s %8s %8s %9s  %s\n", d,
              kf_cli__clean(k->state, 9), ev, el, sp, rf, why);
    }
  }
  if (st->n_port) {
    fprintf(f, "\n  ported elites: before (source class) -> after (this"
            " class)\n");
    fprintf(f, "  %-10s %-30s %10s %8s %9s   %10s %8s %9s\n", "candidate",
            "knobs", "before", "speedup", "roofline", "after", "speedup",
            "roofline");
    for (size_t i = 0; i < st->n_port; i++) {
      const Kernelfleet__PortEntry *e = st->port[i];
      char knobs[256], bt[32], at[32], br[16] = "-", ar[16] = "-", as[16];
      fmt_knobs(knobs, sizeof knobs, e->knobs, e->n_knobs);
      fmt_ns(bt, sizeof bt, e->before_time_ns);
      fmt_ns(at, sizeof at, e->after_time_ns);
      if (e->before_roofline_fraction > 0)
        snprintf(br, sizeof br, "%.1f%%", e->before_roofline_fraction * 100);
      if (e->after_roofline_fraction > 0)
        snprintf(ar, sizeof ar, "%.1f%%", e->after_roofline_fraction * 100);
      if (e->after_outcome == KERNELFLEET__OUTCOME__OUTCOME_OK)
        snprintf(as, sizeof as, "%.2fx", e->after_speedup);
      else
        snprintf(as, sizeof as, "%s", e->after_outcome
                 ? kf_cli__outcome(e->after_outcome) : "pending");
      fprintf(f, "  %-10lld %-30s %10s %7.2fx %9s   %10s %8s %9s\n",
              (long long)e->candidate_id, knobs, bt, e->before_speedup, br,
              e->after_outcome == KERNELFLEET__OUTCOME__OUTCOME_OK ? at : "-",
              as, ar);
    }
  }
  if (st->n_outcomes) {
    fprintf(f, "  outcomes    ");
    for (size_t i = 0; i < st->n_outcomes; i++)
      fprintf(f, " %s %u", kf_cli__outcome(st->outcomes[i]->outcome),
              st->outcomes[i]->count);
    fputc('\n', f);
  }
}

void kf_cli__print_results(FILE *f, kf_rpc_client *cli,
                           const Kernelfleet__GetCampaignResponse *g) {
  const Kernelfleet__CampaignStatus *st = g->status;
  kf_cli__print_status(f, st);
  /* PyTorch problems on a GPU: torch.compile timed in the evaluations,
   * default mode and max-autotune-no-cudagraphs */
  bool compiled = false, tuned = false;
  for (size_t i = 0; i < g->n_top; i++) {
    if (g->top[i]->speedup_compile > 0) compiled = true;
    if (g->top[i]->speedup_max_autotune > 0) tuned = true;
  }
  if (g->n_top) {
    fprintf(f, "\n  %2s  %-18s %-30s %10s %7s %6s %8s %8s%s%s  %s\n", "#",
            "template", "knobs", "median", "spread", "reps", "speedup",
            "roofline", compiled ? " vs compile" : "",
            tuned ? "  vs max-at" : "", "timed in");
    for (size_t i = 0; i < g->n_top; i++) {
      const Kernelfleet__EvaluationSummary *e = g->top[i];
      char knobs[256], t[32], roof[16] = "-", tmpl[64], reps[16] = "-",
           from[48];
      fmt_knobs(knobs, sizeof knobs, e->knobs, e->n_knobs);
      fmt_ns(t, sizeof t, e->time_ns_median);
      one_line(tmpl, sizeof tmpl, *e->template_name ? e->template_name
                                  : e->proposer, 18);
      if (e->roofline_fraction > 0)
        snprintf(roof, sizeof roof, "%.1f%%", e->roofline_fraction * 100);
      if (e->repetitions) snprintf(reps, sizeof reps, "%u", e->repetitions);
      if (e->showdown)
        snprintf(from, sizeof from, "showdown");
      else if (e->measurements > 1)
        snprintf(from, sizeof from, "%u runs%s", e->measurements,
                 e->reused_from ? ", reused" : "");
      else
        snprintf(from, sizeof from, "%s", e->reused_from ? "search, reused"
                                                         : "search");
      char vc[24] = "", vt[24] = "";
      if (compiled) {
        if (e->speedup_compile > 0)
          snprintf(vc, sizeof vc, " %9.2fx", e->speedup_compile);
        else
          snprintf(vc, sizeof vc, " %10s", "-");
      }
      if (tuned) {
        if (e->speedup_max_autotune > 0)
          snprintf(vt, sizeof vt, " %9.2fx", e->speedup_max_autotune);
        else
          snprintf(vt, sizeof vt, " %10s", "-");
      }
      /* '*': the campaign's best (GetBest): always the first row. */
      fprintf(f, "  %2zu%c %-18s %-30s %10s %6.1f%% %6s %7.2fx %8s%s%s  %s\n",
              i + 1, e->candidate_id == st->best_candidate_id ? '*' : ' ',
              tmpl, knobs, t, e->time_ns_spread * 100, reps, e->speedup,
              roof, vc, vt, from);
    }
    if (compiled)
      fprintf(f, "  vs compile: over torch.compile of the reference, timed "
                 "beside it in the\n  candidate's search evaluation (speedup "
                 "is over the reference, torch eager)\n");
    if (tuned)
      fprintf(f, "  vs max-at: the same for torch.compile(mode="
                 "\"max-autotune-no-cudagraphs\")\n");
  }
  for (size_t i = 0; i < g->n_top; i++)
    if (g->top[i]->candidate_id == st->best_candidate_id) {
      fprintf(f, "  * the campaign's best, the kernel `best` returns%s\n",
              st->best_from_showdown ? " (numbers from the final showdown)"
                                     : "");
      break;
    }
  kf_cli__print_diagnoses(f, g->top, g->n_top);
  /* Failures: counts from the status, one example reason per outcome. */
  uint32_t nfail = 0;
  for (size_t i = 0; i < st->n_outcomes; i++)
    if (st->outcomes[i]->outcome != KERNELFLEET__OUTCOME__OUTCOME_OK)
      nfail += st->outcomes[i]->count;
  if (!nfail) return;
  Kernelfleet__ListEvaluationsRequest req =
      KERNELFLEET__LIST_EVALUATIONS_REQUEST__INIT;
  req.campaign_id = st->campaign->campaign_id;
  req.limit = 500;
  req.failures_only = true;
  ProtobufCMessage *resp = NULL;
  char err[512];
  if (kf_rpc_client_call_sync(cli, "/kernelfleet.Coordinator/ListEvaluations",
                              &req.base,
                              &kernelfleet__list_evaluations_response__descriptor,
                              10000, &resp, err, sizeof err))
    resp = NULL; /* the counts alone still help */
  const Kernelfleet__ListEvaluationsResponse *l = (const void *)resp;
  fprintf(f, "\n  failures (%u)\n", nfail);
  for (size_t i = 0; i < st->n_outcomes; i++) {
    const Kernelfleet__OutcomeCount *oc = st->outcomes[i];
    if (oc->outcome == KERNELFLEET__OUTCOME__OUTCOME_OK) continue;
    const char *example = NULL, *stage = NULL;
    for (size_t j = 0; l && j < l->n_evaluations && !example; j++)
      if (l->evaluations[j]->outcome == oc->outcome &&
          *l->evaluations[j]->reason) {
        example = l->evaluations[j]->reason;
        stage = l->evaluations[j]->stage;
      }
    char ex[96] = "";
    if (example) one_line(ex, sizeof ex, example, 80);
    fprintf(f, "    %-18s %5u", kf_cli__outcome(oc->outcome), oc->count);
    if (example)
      fprintf(f, "   e.g. %s%s\"%s\"",
              stage && *stage ? kf_cli__clean(stage, 64) : "",
              stage && *stage ? ": " : "", ex);
    fputc('\n', f);
  }
  kf_rpc_free(resp);
}

/* --------------------------------------------------------------- best -- */

int kf_cli__get_best(kf_rpc_client *cli, const char *cmd, int64_t id,
                     const char *device_class, bool quiet,
                     Kernelfleet__GetBestResponse **out) {
  Kernelfleet__GetBestRequest req = KERNELFLEET__GET_BEST_REQUEST__INIT;
  req.campaign_id = id;
  req.device_class = (char *)(device_class ? device_class : "");
  ProtobufCMessage *resp = NULL;
  char path[] = "/kernelfleet.Coordinator/GetBest", err[1024];
  int r = kf_rpc_client_call_sync(cli, path, &req.base,
                                  &kernelfleet__get_best_response__descriptor,
                                  30000, &resp, err, sizeof err);
  Kernelfleet__GetBestResponse *b = (void *)resp;
  if (r == KF_ENOTFOUND || (r == 0 && (!b->best || !b->best->candidate_id))) {
    /* A known campaign without a verified kernel; an unknown campaign
     * says so in the text. */
    if (!quiet)
      fprintf(stderr, "%s: campaign %lld has no verified kernel%s%s%s%s\n",
              cmd, (long long)id, device_class && *device_class ? " on "
              : "", device_class ? device_class : "", r ? ": " : "",
              r ? err : "");
    kf_rpc_free(resp);
    return KF_EXIT_FAIL;
  }
  if (r) return kf_cli__report(cmd, "GetBest", r, err);
  *out = b;
  return 0;
}

void kf_cli__best_default_path(char *out, size_t len, const char *problem,
                               const char *language) {
  char name[128];
  size_t i = 0;
  for (; problem && problem[i] && i + 1 < sizeof name; i++) {
    char ch = problem[i];
    name[i] = (ch == '/' || ch == ' ') ? '_' : ch;
  }
  name[i] = '\0';
  snprintf(out, len, "./%s.best.%s", i ? name : "kernel",
           language && !strcmp(language, "cuda")     ? "cu"
           : language && !strcmp(language, "python") ? "py"
                                                     : "c");
}

/* Comment text must not close the comment early, nor carry control
 * characters into the file. */
static void sb_comment_text(kf_cli__sbuf *b, const char *raw) {
  const char *s = kf_cli__clean(raw, 0);
  for (; s && *s; s++) {
    if (s[0] == '*' && s[1] == '/') {
      kf_cli__sb_printf(b, "* /");
      s++;
    } else if (*s == '\n') {
      kf_cli__sb_printf(b, " ");
    } else {
      kf_cli__sb_printf(b, "%c", *s);
    }
  }
}

char *kf_cli__best_file_text(const Kernelfleet__GetBestResponse *r,
                             const Kernelfleet__Campaign *c) {
  const Kernelfleet__EvaluationSummary *e = r->best;
  kf_cli__sbuf b = {0};
  char dev[200], t[32], ref[32], stamp[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%SZ", &tm);
  fmt_device(dev, sizeof dev, e->device_class);
  fmt_ns(t, sizeof t, e->time_ns_median);
  fmt_ns(ref, sizeof ref, e->ref_time_ns_median);
  bool cuda = r->language && !strcmp(r->language, "cuda");
  bool py = r->language && !strcmp(r->language, "python");
  kf_cli__sb_printf(&b, "/*\n * Best kernel found by KernelFleet");
  if (c) {
    kf_cli__sb_printf(&b, " for problem \"");
    sb_comment_text(&b, c->problem);
    kf_cli__sb_printf(&b, "\"");
  }
  kf_cli__sb_printf(&b, ".\n *\n");
  kf_cli__sb_printf(&b, " *   campaign    %lld", (long long)(c ? c->campaign_id : 0));
  if (c && *c->name) {
    kf_cli__sb_printf(&b, " (");
    sb_comment_text(&b, c->name);
    kf_cli__sb_printf(&b, ")");
  }
  kf_cli__sb_printf(&b, "\n *   candidate   %lld, template \"", (long long)e->candidate_id);
  sb_comment_text(&b, e->template_name);
  kf_cli__sb_printf(&b, "\", proposer ");
  sb_comment_text(&b, *e->proposer ? e->proposer : "-");
  kf_cli__sb_printf(&b, "\n *   device      ");
  sb_comment_text(&b, dev);
  kf_cli__sb_printf(&b, "\n *   time        %s median (spread %.1f%%", t,
            e->time_ns_spread * 100);
  if (e->repetitions) kf_cli__sb_printf(&b, ", %u repetitions", e->repetitions);
  kf_cli__sb_printf(&b, "), reference %s\n", ref);
  kf_cli__sb_printf(&b, " *   timed in    %s\n",
            e->showdown ? "the final showdown (re-verified and re-timed"
                          " together with the reference)"
            : e->measurements > 1 ? "the search (median of several"
                                    " measurements)"
                                  : "the search");
  kf_cli__sb_printf(&b, " *   speedup     %.3fx over the reference", e->speedup);
  if (e->roofline_fraction > 0)
    kf_cli__sb_printf(&b, ", %.1f%% of roofline", e->roofline_fraction * 100);
  if (e->reused_from)
    kf_cli__sb_printf(&b, "\n *   verified    outcome %s, evaluation %lld of an"
                  " earlier campaign (reused)\n",
              kf_cli__outcome(e->outcome), (long long)e->reused_from);
  else
    kf_cli__sb_printf(&b, "\n *   verified    outcome %s, task %lld\n",
              kf_cli__outcome(e->outcome), (long long)e->task_id);
  kf_cli__sb_printf(&b, " *   written     %s\n", stamp);
  if (py) {
    kf_cli__sb_printf(&b, " *\n * The knobs it was measured with are set below, so the"
                  " file runs on its own\n * beside the problem's reference.py"
                  " (a KernelBench ModelNew or a GPU MODE\n * custom_kernel).\n"
                  " */\n");
    /* the header as a Python comment: the same lines, "# " for " * " */
    kf_cli__sbuf h = {0};
    for (const char *p = b.p; p && *p;) {
      const char *nl = strchr(p, '\n');
      size_t n = nl ? (size_t)(nl - p) : strlen(p);
      if (n >= 3 && !strncmp(p, " * ", 3)) kf_cli__sb_printf(&h, "# %.*s\n", (int)n - 3, p + 3);
      else if (n >= 2 && !strncmp(p, " *", 2)) kf_cli__sb_printf(&h, "#\n");
      else if (!strncmp(p, "/*", 2)) kf_cli__sb_printf(&h, "#%.*s\n", (int)n - 2, p + 2);
      p = nl ? nl + 1 : p + n;
    }
    free(b.p);
    b = h;
    /* The knobs as the harness typed them (runner.py _knob_value: int(),
     * else float(), else the text), by the same rule in the file: a value
     * written as a literal was another value or a SyntaxError -- 010,
     * 1_6, inf, 0x10 (red team 2026-12-02, 3-4).  Values are
     * [A-Za-z0-9_.+-]: the quotes need no escaping. */
    kf_cli__sbuf kn = {0};
    if (e->n_knobs)
      kf_cli__sb_printf(&kn, "\n\ndef _kf_knob(v):\n    for t in (int, "
                        "float):\n        try:\n            return t(v)\n"
                        "        except ValueError:\n            pass\n"
                        "    return v\n\n\n");
    for (size_t i = 0; i < e->n_knobs; i++)
      kf_cli__sb_printf(&kn, "%s = _kf_knob(\"%s\")\n", e->knobs[i]->name,
                        e->knobs[i]->value);
    if (e->n_knobs) kf_cli__sb_printf(&kn, "\n\n");
    /* The harness sets them before the source runs, but a `from
     * __future__` import must stay the file's first statement: after
     * them, and after the BOM the harness drops (red team 2026-12-02,
     * 5). */
    const char *src = r->source ? r->source : "";
    if (!strncmp(src, "\xef\xbb\xbf", 3)) src += 3;
    size_t at = kf_cli__py_future_end(src);
    kf_cli__sb_printf(&b, "\n%.*s%s%s", (int)at, src, kn.p ? kn.p : "",
                      src + at);
    if (b.len && b.p[b.len - 1] != '\n') kf_cli__sb_printf(&b, "\n");
    bool oom = kn.oom;
    free(kn.p);
    if (b.oom || oom) {
      free(b.p);
      return NULL;
    }
    return b.p;
  } else {
  kf_cli__sb_printf(&b, " *\n * The knobs it was measured with are defined below, so the"
                " file builds\n * on its own (kf_candidate.h is in KernelFleet's"
                " harness/ directory):\n *   %s\n",
            cuda ? "nvcc -O3 -shared -Xcompiler -fPIC -I<kernelfleet>/harness "
                   "FILE.cu"
                 : "cc -O3 -shared -fPIC -I<kernelfleet>/harness FILE.c");
  kf_cli__sb_printf(&b, " */\n");
  for (size_t i = 0; i < e->n_knobs; i++)
    kf_cli__sb_printf(&b, "#ifndef %s\n#define %s %s\n#endif\n", e->knobs[i]->name,
              e->knobs[i]->name, e->knobs[i]->value);
  }
  kf_cli__sb_printf(&b, "\n%s", r->source ? r->source : "");
  if (b.len && b.p[b.len - 1] != '\n') kf_cli__sb_printf(&b, "\n");
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

int kf_cli__write_file(const char *path, const char *text, const char *cmd) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "%s: cannot write %s: %s\n", cmd, path, strerror(errno));
    return KF_EXIT_FAIL;
  }
  size_t n = strlen(text);
  bool ok = fwrite(text, 1, n, f) == n;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path)) {
    fprintf(stderr, "%s: cannot write %s: %s\n", cmd, path, strerror(errno));
    unlink(tmp);
    return KF_EXIT_FAIL;
  }
  return 0;
}

/* --------------------------------------------------------------- JSON -- */

static cJSON *json_device(const Kernelfleet__DeviceClass *dc) {
  if (!dc) return cJSON_CreateNull();
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(
      j, "kind",
      dc->kind == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA ? "cuda"
      : dc->kind == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU ? "cpu"
                                                              : "unspecified");
  cJSON_AddStringToObject(j, "model", dc->model);
  cJSON_AddNumberToObject(j, "cc_major", dc->cc_major);
  cJSON_AddNumberToObject(j, "cc_minor", dc->cc_minor);
  cJSON_AddStringToObject(j, "isa", dc->isa);
  return j;
}

/* NaN and infinities are not JSON: they become null. */
static void add_num(cJSON *j, const char *k, double v) {
  if (isfinite(v)) cJSON_AddNumberToObject(j, k, v);
  else cJSON_AddNullToObject(j, k);
}

cJSON *kf_cli__json_status(const Kernelfleet__CampaignStatus *st) {
  const Kernelfleet__Campaign *c = st->campaign;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "campaign_id", (double)c->campaign_id);
  cJSON_AddStringToObject(j, "name", c->name);
  cJSON_AddStringToObject(j, "problem", c->problem);
  cJSON_AddStringToObject(j, "state", c->state);
  cJSON_AddStringToObject(j, "stop_reason", st->stop_reason);
  cJSON_AddItemToObject(j, "device_class", json_device(c->device_class));
  cJSON_AddNumberToObject(j, "budget_evals", c->budget_evals);
  cJSON_AddNumberToObject(j, "budget_seconds", c->budget_seconds);
  cJSON_AddNumberToObject(j, "evals_done", st->evals_done);
  cJSON_AddNumberToObject(j, "evals_ok", st->evals_ok);
  cJSON_AddNumberToObject(j, "evals_running", st->evals_running);
  cJSON_AddNumberToObject(j, "elapsed_ms", (double)st->elapsed_ms);
  cJSON_AddNumberToObject(j, "best_candidate_id",
                          (double)st->best_candidate_id);
  add_num(j, "best_speedup", st->best_speedup);
  add_num(j, "best_time_ns", st->best_time_ns);
  add_num(j, "ref_time_ns", st->ref_time_ns);
  add_num(j, "roofline_fraction", st->roofline_fraction);
  cJSON_AddBoolToObject(j, "found_faster", kf_cli__campaign_won(st));
  cJSON_AddBoolToObject(j, "fresh", c->fresh);
  cJSON_AddStringToObject(j, "showdown", st->showdown ? st->showdown : "");
  cJSON_AddBoolToObject(j, "best_from_showdown", st->best_from_showdown);
  add_num(j, "best_time_ns_spread", st->best_time_ns_spread);
  cJSON_AddNumberToObject(j, "best_repetitions", st->best_repetitions);
  cJSON_AddNumberToObject(j, "best_measurements", st->best_measurements);
  cJSON *oc = cJSON_AddObjectToObject(j, "outcomes");
  for (size_t i = 0; i < st->n_outcomes; i++)
    cJSON_AddNumberToObject(oc, kf_cli__outcome(st->outcomes[i]->outcome),
                            st->outcomes[i]->count);
  cJSON *cls = cJSON_AddArrayToObject(j, "classes");
  for (size_t i = 0; i < st->n_classes; i++) {
    const Kernelfleet__CampaignClassStatus *k = st->classes[i];
    cJSON *x = cJSON_CreateObject();
    cJSON_AddItemToObject(x, "device_class", json_device(k->device_class));
    cJSON_AddStringToObject(x, "state", k->state);
    cJSON_AddStringToObject(x, "stop_reason", k->stop_reason);
    cJSON_AddStringToObject(x, "showdown", k->showdown);
    cJSON_AddNumberToObject(x, "evals_done", k->evals_done);
    cJSON_AddNumberToObject(x, "evals_ok", k->evals_ok);
    cJSON_AddNumberToObject(x, "evals_running", k->evals_running);
    cJSON_AddNumberToObject(x, "elapsed_ms", (double)k->elapsed_ms);
    cJSON_AddNumberToObject(x, "best_candidate_id",
                            (double)k->best_candidate_id);
    add_num(x, "best_speedup", k->best_speedup);
    add_num(x, "best_time_ns", k->best_time_ns);
    add_num(x, "roofline_fraction", k->roofline_fraction);
    cJSON_AddBoolToObject(x, "best_from_showdown", k->best_from_showdown);
    cJSON_AddItemToArray(cls, x);
  }
  if (c->port_from_campaign) {
    cJSON *p = cJSON_AddObjectToObject(j, "port");
    cJSON_AddNumberToObject(p, "from_campaign",
                            (double)c->port_from_campaign);
    cJSON_AddItemToObject(p, "from_class", json_device(c->port_from_class));
    cJSON *el = cJSON_AddArrayToObject(p, "elites");
    for (size_t i = 0; i < st->n_port; i++) {
      const Kernelfleet__PortEntry *e = st->port[i];
      cJSON *x = cJSON_CreateObject();
      cJSON_AddNumberToObject(x, "candidate_id", (double)e->candidate_id);
      cJSON_AddNumberToObject(x, "from_candidate_id",
                              (double)e->from_candidate_id);
      cJSON_AddStringToObject(x, "template", e->template_name);
      cJSON *k = cJSON_AddObjectToObject(x, "knobs");
      for (size_t q = 0; q < e->n_knobs; q++)
        cJSON_AddStringToObject(k, e->knobs[q]->name, e->knobs[q]->value);
      cJSON *b = cJSON_AddObjectToObject(x, "before");
      add_num(b, "speedup", e->before_speedup);
      add_num(b, "time_ns", e->before_time_ns);
      add_num(b, "roofline_fraction", e->before_roofline_fraction);
      cJSON_AddBoolToObject(b, "showdown", e->before_showdown);
      cJSON *a = cJSON_AddObjectToObject(x, "after");
      if (e->after_outcome) {
        cJSON_AddStringToObject(a, "outcome",
                                kf_cli__outcome(e->after_outcome));
        cJSON_AddStringToObject(a, "reason", e->after_reason);
        add_num(a, "speedup", e->after_speedup);
        add_num(a, "time_ns", e->after_time_ns);
        add_num(a, "roofline_fraction", e->after_roofline_fraction);
      } else {
        cJSON_AddStringToObject(a, "outcome", "pending");
      }
      cJSON_AddItemToArray(el, x);
    }
  }
  return j;
}

cJSON *kf_cli__json_eval(const Kernelfleet__EvaluationSummary *e) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "candidate_id", (double)e->candidate_id);
  cJSON_AddNumberToObject(j, "task_id", (double)e->task_id);
  cJSON_AddStringToObject(j, "template", e->template_name);
  cJSON_AddStringToObject(j, "proposer", e->proposer);
  cJSON *k = cJSON_AddObjectToObject(j, "knobs");
  for (size_t i = 0; i < e->n_knobs; i++)
    cJSON_AddStringToObject(k, e->knobs[i]->name, e->knobs[i]->value);
  cJSON_AddStringToObject(j, "outcome", kf_cli__outcome(e->outcome));
  cJSON_AddStringToObject(j, "stage", e->stage);
  cJSON_AddStringToObject(j, "reason", e->reason);
  add_num(j, "time_ns_median", e->time_ns_median);
  add_num(j, "time_ns_spread", e->time_ns_spread);
  add_num(j, "ref_time_ns_median", e->ref_time_ns_median);
  add_num(j, "speedup", e->speedup);
  add_num(j, "roofline_fraction", e->roofline_fraction);
  /* PyTorch problems: torch.compile timed in the same evaluation */
  if (e->speedup_compile > 0) {
    add_num(j, "compile_time_ns_median", e->compile_time_ns_median);
    add_num(j, "speedup_compile", e->speedup_compile);
  } else { /* not timed: null, not a zero speedup */
    cJSON_AddNullToObject(j, "compile_time_ns_median");
    cJSON_AddNullToObject(j, "speedup_compile");
  }
  if (e->speedup_max_autotune > 0) {
    add_num(j, "max_autotune_time_ns_median", e->max_autotune_time_ns_median);
    add_num(j, "speedup_max_autotune", e->speedup_max_autotune);
  } else {
    cJSON_AddNullToObject(j, "max_autotune_time_ns_median");
    cJSON_AddNullToObject(j, "speedup_max_autotune");
  }
  cJSON_AddNumberToObject(j, "repetitions", e->repetitions);
  cJSON_AddNumberToObject(j, "measurements", e->measurements);
  cJSON_AddBoolToObject(j, "showdown", e->showdown);
  cJSON_AddBoolToObject(j, "timing_dependent", e->timing_dependent);
  cJSON_AddBoolToObject(j, "reused", e->reused_from != 0);
  if (e->reused_from)
    cJSON_AddNumberToObject(j, "reused_from", (double)e->reused_from);
  cJSON_AddItemToObject(j, "device_class", json_device(e->device_class));
  cJSON_AddItemToObject(j, "diagnosis", kf_prof_json_diagnosis(e->diagnosis));
  cJSON_AddItemToObject(j, "profile", kf_prof_json_report(e->profile));
  return j;
}

cJSON *kf_cli__json_campaign(const Kernelfleet__GetCampaignResponse *g) {
  cJSON *j = kf_cli__json_status(g->status);
  cJSON *top = cJSON_AddArrayToObject(j, "top");
  for (size_t i = 0; i < g->n_top; i++)
    cJSON_AddItemToArray(top, kf_cli__json_eval(g->top[i]));
  return j;
}

cJSON *kf_cli__json_best(const Kernelfleet__GetBestResponse *b) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddItemToObject(j, "best", kf_cli__json_eval(b->best));
  cJSON_AddStringToObject(j, "language", b->language);
  cJSON_AddStringToObject(j, "source", b->source);
  return j;
}

void kf_cli__json_add_best(cJSON *j, const Kernelfleet__GetBestResponse *b,
                           const char *path) {
  if (b && b->best) cJSON_AddItemToObject(j, "best", kf_cli__json_best(b));
  else cJSON_AddNullToObject(j, "best");
  if (path && *path) cJSON_AddStringToObject(j, "best_file", path);
  else cJSON_AddNullToObject(j, "best_file");
}

void kf_cli__json_print(FILE *f, cJSON *j) {
  char *s = j ? cJSON_PrintUnformatted(j) : NULL;
  if (s) {
    fprintf(f, "%s\n", s);
    cJSON_free(s);
  } else {
    fprintf(stderr, "kf: out of memory building JSON\n");
  }
  cJSON_Delete(j);
}
