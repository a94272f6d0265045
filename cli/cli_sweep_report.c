/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_sweep_report.c -- `kf sweep report SWEEP`: the sweep's results
 * per problem and device class, as Markdown with SVG bar charts and as
 * JSON (docs/sweep.md).
 *
 * Every number comes from the database, read the way the coordinator
 * answers `kf campaign best ID --class` (kf_store_best_class: the class's
 * own best first, its showdown's numbers when it had one) and `kf campaign
 * status` (the class rows).  Nothing is estimated: a cell without a number
 * prints "-" and the report says why (no campaign yet, no verified
 * kernel, no baseline for the class, no measured bandwidth).  The one
 * derived figure is the speedup over torch (eager, torch.compile,
 * max-autotune): torch's time over the kernel's, both taken by one
 * evaluation of the class's best on the problem's torch twin -- never a
 * ratio of two timers.
 *
 * The charts are hand-written SVG (a few rects and texts each): one bar
 * per (problem, class), classes side by side within a problem.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_internal.h"
#include "cli_sweep.h"
#include "err.h"
#include "pglocal.h"
#include "store.h"
#include "store_sweep.h"
#include "util.h"

#define CMD "kf sweep report"

static void usage(FILE *f) {
  fprintf(f,
"usage: kf sweep report SWEEP [--data DIR | --db CONNINFO] [--out DIR]\n"
"                       [--json]\n"
"\n"
"Writes the report of sweep SWEEP (its id or name): per problem and device\n"
"class the campaign, its evaluations, the best kernel's time, its speedup\n"
"over the reference, its %% of roofline (the spec's bytes at the best time\n"
"over the copy bandwidth the class's workers measured, or --ceiling-gbps\n"
"given to kf sweep), its speedup over torch eager, torch.compile and\n"
"max-autotune, and the winning template and knobs.  Numbers are read from\n"
"the database as `kf campaign best --class` reads them; a missing one\n"
"prints '-' and the report says why.  A speedup over torch comes only from\n"
"a baseline (kf sweep --baselines) that timed the class's best kernel and\n"
"torch in one evaluation (scripts/twin-eval: one timer).\n"
"\n"
"  --data DIR      the data directory of kf sweep [$KF_DATA_DIR, else as\n"
"                  kf run]: its PostgreSQL is started for the report and\n"
"                  stopped after\n"
"  --db CONNINFO   read a running PostgreSQL instead (libpq conninfo)\n"
"  --out DIR       write DIR/report.md, DIR/report.json and the plots\n"
"                  DIR/roofline.svg, DIR/speedup_compile.svg,\n"
"                  DIR/speedup_eager.svg, DIR/speedup_reference.svg\n"
"  --json          print the report as one JSON object on stdout\n"
"\n"
"Exit codes: 0 written, 2 usage error or no such sweep, 3 database\n"
"unreachable, 1 the files could not be written.\n");
}

/* One (problem, class) cell with what the database says about it. */
typedef struct {
  const kf_sweep_cell *c;
  char state[32];
  char stop_reason[512];
  uint32_t evals, evals_ok;
  uint64_t elapsed_ms;
  bool best;
  int64_t candidate_id;
  double time_ns, ref_ns, speedup, roof, achieved_gbps;
  bool showdown;
  double copy_gbps;            /* the best's worker measured; 0 unknown */
  const char *roof_from;       /* "workers" or "--ceiling-gbps" */
  char tmpl[128];
  char knobs[512];
  double vs_eager, vs_compile, vs_autotune; /* 0: none */
  bool torch;                  /* a PyTorch problem (spec backend torch) */
  /* the best's evaluation's own speedups over torch.compile (both modes,
   * same timer); 0: not timed */
  double eval_compile_x, eval_autotune_x;
  /* torch's times shown (ms; 0: none): a twin's line, or for a PyTorch
   * problem the best's evaluation's; torch_from says which ("" none) */
  double eager_ms, compile_ms, autotune_ms;
  const char *torch_from;
  /* why a figure is missing ("" when it is there) */
  char why_best[900], why_roof[200], why_eager[300], why_compile[300],
      why_autotune[300];
} view;

/* "A=1 B=2" from {"A": "1", "B": "2"}. */
static void knobs_text(const char *json, char *out, size_t len) {
  out[0] = '\0';
  cJSON *j = cJSON_Parse(json ? json : "");
  const cJSON *k;
  size_t o = 0;
  cJSON_ArrayForEach(k, j) {
    char v[64];
    if (cJSON_IsString(k)) snprintf(v, sizeof v, "%s", k->valuestring);
    else if (cJSON_IsNumber(k)) snprintf(v, sizeof v, "%g", k->valuedouble);
    else snprintf(v, sizeof v, "?");
    int w = snprintf(out + o, len - o, "%s%s=%s", o ? " " : "", k->string, v);
    if (w < 0 || (size_t)w >= len - o) break;
    o += (size_t)w;
  }
  cJSON_Delete(j);
}

/* Fills v from the database.  0 or a KF_E* code (the store's message). */
static int gather(kf_store *s, const kf_sweep_cell *c, view *v) {
  memset(v, 0, sizeof *v);
  v->c = c;
  if (!c->campaign_id) {
    snprintf(v->state, sizeof v->state, "-");
    snprintf(v->why_best, sizeof v->why_best, "no campaign yet: class %s %s",
             c->label, c->model[0] ? "has not run this problem"
                                   : "has not run (kf sweep --class it)");
    snprintf(v->why_roof, sizeof v->why_roof, "no campaign yet");
  } else {
    kf_campaign *cp = NULL;
    int rc = kf_store_campaign_get(s, c->campaign_id, &cp);
    if (rc) return rc;
    snprintf(v->state, sizeof v->state, "%s", cp->state);
    snprintf(v->stop_reason, sizeof v->stop_reason, "%s", cp->stop_reason);
    double floor_bytes = cp->floor_bytes;
    cJSON *sj = cJSON_Parse(cp->spec_json ? cp->spec_json : "");
    const cJSON *be = cJSON_GetObjectItemCaseSensitive(sj, "backend");
    v->torch = cJSON_IsString(be) && !strcmp(be->valuestring, "torch");
    cJSON_Delete(sj);
    kf_store_campaign_free(cp);
    kf_class_list *cl = NULL;
    if ((rc = kf_store_campaign_classes(s, c->campaign_id, NULL, 0, &cl)))
      return rc;
    for (size_t i = 0; i < cl->n; i++) {
      if (cl->v[i].device_class_id != c->device_class_id) continue;
      snprintf(v->state, sizeof v->state, "%s", cl->v[i].state);
      snprintf(v->stop_reason, sizeof v->stop_reason, "%s",
               cl->v[i].stop_reason);
      v->evals = cl->v[i].evals;
      v->evals_ok = cl->v[i].evals_ok;
      v->elapsed_ms = cl->v[i].elapsed_ms;
    }
    kf_store_class_list_free(cl);
    kf_cand_list *b = NULL;
    rc = kf_store_best_class(s, c->campaign_id, c->device_class_id, &b);
    if (rc == KF_ENOTFOUND) {
      snprintf(v->why_best, sizeof v->why_best, "no verified kernel on %s "
               "(campaign %lld %s%s%s)", c->label, (long long)c->campaign_id,
               v->state, v->stop_reason[0] ? ": " : "", v->stop_reason);
      snprintf(v->why_roof, sizeof v->why_roof, "no verified kernel");
    } else if (rc) {
      return rc;
    } else {
      const kf_cand_row *r = &b->v[0];
      v->best = true;
      v->candidate_id = r->candidate_id;
      v->time_ns = r->time_ns_median;
      v->ref_ns = r->ref_time_ns_median;
      v->speedup = r->speedup;
      v->roof = r->roofline_fraction;
      v->achieved_gbps = r->achieved_gbps;
      v->showdown = r->showdown;
      v->eval_compile_x = r->speedup_compile;
      v->eval_autotune_x = r->speedup_max_autotune;
      if (v->torch) {
        v->eager_ms = r->ref_time_ns_median / 1e6;
        v->compile_ms = r->compile_time_ns_median / 1e6;
        v->autotune_ms = r->max_autotune_time_ns_median / 1e6;
      }
      snprintf(v->tmpl, sizeof v->tmpl, "%s",
               r->template_name[0] ? r->template_name : "(free-form source)");
      knobs_text(r->knobs_json, v->knobs, sizeof v->knobs);
      double peak = 0;
      rc = kf_store_sweep_eval_ceiling(s, r->eval_id, &v->copy_gbps, &peak);
      kf_store_list_free(b);
      if (rc) return rc;
      if (v->roof > 0) {
        v->roof_from = "workers";
      } else if (c->ceiling_gbps_given > 0 && floor_bytes > 0 &&
                 v->time_ns > 0) {
        /* bytes / (GB/s) is ns */
        v->roof = floor_bytes / c->ceiling_gbps_given / v->time_ns;
        v->roof_from = "--ceiling-gbps";
      } else {
        snprintf(v->why_roof, sizeof v->why_roof, "%s",
                 floor_bytes <= 0 ? "the spec gives no bytes"
                 : "the workers measured no copy bandwidth and no "
                   "--ceiling-gbps was given for the class");
      }
    }
  }
  /* A PyTorch problem's reference is torch eager, timed with the
   * candidate in every evaluation, and on a GPU the evaluation times
   * torch.compile of it too (both modes): the best's own evaluation is
   * one timer for all of them, and no twin is needed. */
  v->torch_from = "";
  if (v->torch && v->best) {
    v->torch_from = "evaluation";
    v->vs_eager = v->speedup;
    if (v->eval_compile_x > 0) v->vs_compile = v->eval_compile_x;
    else snprintf(v->why_compile, sizeof v->why_compile, "torch.compile "
                  "was not timed in the best's evaluation (the torch "
                  "backend times it on a GPU, spec device cuda, where it "
                  "compiles)");
    if (v->eval_autotune_x > 0) v->vs_autotune = v->eval_autotune_x;
    else snprintf(v->why_autotune, sizeof v->why_autotune, "max-autotune "
                  "was not timed in the best's evaluation (GPU only, or "
                  "it failed there)");
    return 0;
  }
  /* A speedup over torch is torch's time over the kernel's time as ONE
   * evaluation took both (the kernel wrapped and run on the problem's
   * torch twin: scripts/twin-eval), and only for the kernel that is the
   * class's best now.  The campaign's own time of the best came from
   * another timer (the CUDA harness): a ratio across the two is not
   * made. */
  char why[300] = "";
  if (!v->best)
    snprintf(why, sizeof why, "no kernel to compare");
  else if (!c->has_baseline)
    snprintf(why, sizeof why, "no baseline for this class (kf sweep "
             "--baselines on its machine)");
  else if (c->kernel_ms <= 0 && c->twin_outcome[0] &&
           strcmp(c->twin_outcome, "ok") != 0)
    snprintf(why, sizeof why, "the twin evaluation of the best ended %s "
             "(its line in the baselines file has the reason)",
             kf_cli__clean(c->twin_outcome, 63));
  else if (c->kernel_ms <= 0 || !c->kernel_candidate_id)
    snprintf(why, sizeof why, "the baseline did not time this kernel "
             "(no kernel_ms and candidate_id): torch's time and the "
             "campaign's are two timers' (scripts/twin-eval times both in "
             "one evaluation)");
  else if (c->kernel_candidate_id != v->candidate_id)
    snprintf(why, sizeof why, "the baseline timed candidate %lld; the "
             "class's best is candidate %lld (scripts/twin-eval it again)",
             (long long)c->kernel_candidate_id, (long long)v->candidate_id);
  v->eager_ms = c->eager_ms;
  v->compile_ms = c->compile_ms;
  v->autotune_ms = c->max_autotune_ms;
  if (why[0]) {
    snprintf(v->why_eager, sizeof v->why_eager, "%s", why);
    snprintf(v->why_compile, sizeof v->why_compile, "%s", why);
    snprintf(v->why_autotune, sizeof v->why_autotune, "%s", why);
    return 0;
  }
  v->torch_from = "twin";
  if (c->eager_ms > 0) v->vs_eager = c->eager_ms / c->kernel_ms;
  else snprintf(v->why_eager, sizeof v->why_eager, "the baseline has no "
                "eager time");
  if (c->compile_ms > 0) v->vs_compile = c->compile_ms / c->kernel_ms;
  else snprintf(v->why_compile, sizeof v->why_compile, "torch.compile gave "
                "no time (it failed when measured)");
  if (c->max_autotune_ms > 0)
    v->vs_autotune = c->max_autotune_ms / c->kernel_ms;
  else snprintf(v->why_autotune, sizeof v->why_autotune, "max-autotune "
                "gave no time (not measured, or it failed)");
  return 0;
}

/* ----------------------------------------------------------- text -- */

static void fmt_time(char *out, size_t len, double ns) {
  if (ns <= 0) snprintf(out, len, "-");
  else if (ns < 1e3) snprintf(out, len, "%.0f ns", ns);
  else if (ns < 1e6) snprintf(out, len, "%.2f us", ns / 1e3);
  else if (ns < 1e9) snprintf(out, len, "%.3f ms", ns / 1e6);
  else snprintf(out, len, "%.3f s", ns / 1e9);
}

static void fmt_x(char *out, size_t len, double x) {
  if (x > 0) snprintf(out, len, "%.2fx", x);
  else snprintf(out, len, "-");
}

/* s with the characters that break a Markdown table cell replaced. */
static const char *md(const char *s) {
  static char buf[4][1200];
  static int k;
  char *o = buf[k++ & 3];
  size_t j = 0;
  /* a class label or a worker's device model is anyone's text: raw HTML
   * or a link in it ("<img src=x onerror=...>", "[x](javascript:...)")
   * reached the report as markup (red team 2026-12-02); backslash-escaped
   * it is the text itself */
  for (const char *p = kf_cli__clean(s, 560); *p && j + 3 < sizeof buf[0];
       p++) {
    if (*p == '|') {
      o[j++] = '/';
      continue;
    }
    if (strchr("\\<>[]&", *p)) o[j++] = '\\';
    o[j++] = *p;
  }
  o[j] = '\0';
  return o;
}

static void write_md(FILE *f, const kf_sweep *w, const view *v) {
  fprintf(f, "# Sweep %s (id %lld)\n\n", md(w->name), (long long)w->id);
  fprintf(f, "%s problems, created %s; %zu problem%s x %zu class%s.  "
          "Every number is read from the database (the campaigns named "
          "below; `kf campaign best ID --class MODEL` gives the same); "
          "`-` marks a number that does not exist, and the notes say "
          "why.\n\n", w->backend == 2 ? "GPU" : "CPU", w->created_at,
          w->n_problems, w->n_problems == 1 ? "" : "s", w->n_labels,
          w->n_labels == 1 ? "" : "es");
  fprintf(f, "## Classes\n\n| class | device | copy bandwidth measured by"
          " its workers | --ceiling-gbps | torch baselines |\n"
          "|---|---|---|---|---|\n");
  for (size_t l = 0; l < w->n_labels; l++) {
    double gbps = 0, given = 0;
    bool base = false;
    const char *src = "";
    for (size_t p = 0; p < w->n_problems; p++) {
      const view *x = &v[p * w->n_labels + l];
      if (x->copy_gbps > 0 && gbps <= 0) gbps = x->copy_gbps;
      given = x->c->ceiling_gbps_given;
      if (x->c->has_baseline) {
        base = true;
        src = x->c->baseline_source;
      }
    }
    const kf_sweep_cell *c = &w->v[l];
    char g[32] = "-", gv[32] = "-";
    if (gbps > 0) snprintf(g, sizeof g, "%.1f GB/s", gbps);
    if (given > 0) snprintf(gv, sizeof gv, "%.1f GB/s", given);
    fprintf(f, "| %s | %s | %s | %s | %s |\n", md(c->label),
            c->model[0] ? md(c->model) : "- (not run yet)", g, gv,
            base ? md(src[0] ? src : "yes") : "-");
  }
  fprintf(f, "\n## Results\n\n| problem | class | campaign | state | "
          "evaluations (ok) | best time | reference | speedup vs reference |"
          " %% of roofline | kernel, twin | torch eager | vs eager | "
          "torch.compile | vs torch.compile | max-autotune | "
          "vs max-autotune | winner: template, knobs |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
          "---|\n");
  for (size_t i = 0; i < w->n; i++) {
    const view *x = &v[i];
    char cid[24] = "-", ev[40] = "-", bt[32], rt[32], sp[32], rf[32] = "-";
    char em[32] = "-", cm[32] = "-", ve[32], vc[32], win[700] = "-";
    char km[32] = "-", am[32] = "-", va[32];
    if (x->c->campaign_id) {
      snprintf(cid, sizeof cid, "%lld", (long long)x->c->campaign_id);
      snprintf(ev, sizeof ev, "%u (%u)", x->evals, x->evals_ok);
    }
    fmt_time(bt, sizeof bt, x->best ? x->time_ns : 0);
    fmt_time(rt, sizeof rt, x->best ? x->ref_ns : 0);
    fmt_x(sp, sizeof sp, x->best ? x->speedup : 0);
    if (x->roof > 0)
      snprintf(rf, sizeof rf, "%.1f%%%s", x->roof * 100,
               !strcmp(x->roof_from, "workers") ? "" : " (given bw)");
    if (x->eager_ms > 0) snprintf(em, sizeof em, "%.4g ms", x->eager_ms);
    if (x->compile_ms > 0) snprintf(cm, sizeof cm, "%.4g ms", x->compile_ms);
    if (!strcmp(x->torch_from, "evaluation"))
      snprintf(km, sizeof km, "its evaluation");
    else if (x->c->kernel_ms > 0)
      snprintf(km, sizeof km, "%.4g ms (cand. %lld)", x->c->kernel_ms,
               (long long)x->c->kernel_candidate_id);
    if (x->autotune_ms > 0) snprintf(am, sizeof am, "%.4g ms", x->autotune_ms);
    fmt_x(ve, sizeof ve, x->vs_eager);
    fmt_x(vc, sizeof vc, x->vs_compile);
    fmt_x(va, sizeof va, x->vs_autotune);
    if (x->best)
      snprintf(win, sizeof win, "%s%s%s (candidate %lld%s)", x->tmpl,
               x->knobs[0] ? ": " : "", x->knobs, (long long)x->candidate_id,
               x->showdown ? ", showdown" : "");
    fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
            "| %s | %s | %s | %s | %s |\n", md(x->c->problem),
            md(x->c->label), cid, x->state, ev, bt, rt, sp, rf, km, em, ve, cm,
            vc, am, va, md(win));
  }
  fprintf(f, "\n## Plots\n\n"
          "![%% of roofline per problem and class](roofline.svg)\n\n"
          "![speedup over torch.compile](speedup_compile.svg)\n\n"
          "![speedup over torch eager](speedup_eager.svg)\n\n"
          "![speedup over the reference](speedup_reference.svg)\n\n");
  fprintf(f, "## Notes\n\n");
  bool any = false;
  /* A class without any baseline: one note, not one per problem. */
  for (size_t l = 0; l < w->n_labels; l++) {
    bool base = false, ran = false;
    for (size_t p = 0; p < w->n_problems; p++) {
      base = base || w->v[p * w->n_labels + l].has_baseline;
      /* a PyTorch problem's evaluations time torch themselves */
      ran = ran || (v[p * w->n_labels + l].best &&
                    !v[p * w->n_labels + l].torch);
    }
    if (!base && ran) {
      fprintf(f, "- %s, vs torch (eager, torch.compile, max-autotune): - "
              "because no torch baselines were given for this class (kf "
              "sweep --baselines on its machine)\n", md(w->v[l].label));
      any = true;
    }
  }
  for (size_t i = 0; i < w->n; i++) {
    const view *x = &v[i];
    bool class_base = false;
    for (size_t p = 0; p < w->n_problems; p++)
      class_base = class_base ||
                   w->v[p * w->n_labels + (i % w->n_labels)].has_baseline;
    const char *whys[][2] = {{"best kernel", x->why_best},
                             {"% of roofline", x->why_roof},
                             {"vs torch eager", x->why_eager},
                             {"vs torch.compile", x->why_compile},
                             {"vs max-autotune", x->why_autotune}};
    /* one reason for all three torch columns: one note */
    bool same = !strcmp(x->why_eager, x->why_compile) &&
                !strcmp(x->why_eager, x->why_autotune);
    if (same) whys[2][0] = "vs torch (eager, torch.compile, max-autotune)";
    for (size_t k = 0; k < 5; k++) {
      if (!whys[k][1][0] || (same && k > 2)) continue;
      /* Without a best kernel the other figures are missing for that
       * reason alone; a class without baselines has its one note. */
      if (k && x->why_best[0]) continue;
      if (k >= 2 && !class_base && !x->torch) continue;
      fprintf(f, "- %s on %s, %s: - because %s\n", md(x->c->problem),
              md(x->c->label), whys[k][0], md(whys[k][1]));
      any = true;
    }
    if (x->best && x->stop_reason[0])
      fprintf(f, "- %s on %s: stopped on %s\n", md(x->c->problem),
              md(x->c->label), md(x->stop_reason));
  }
  if (!any) fprintf(f, "- every number is there\n");
  fprintf(f, "\n%% of roofline: the spec's bytes at the benchmark size moved "
          "in the best time, over the copy bandwidth the class's workers "
          "measured (kf-harness), as the campaign recorded it.  Speedups "
          "over torch: torch's time over the kernel's, both from one "
          "evaluation of the best kernel on the problem's torch twin "
          "(\"kernel, twin\": kf-harness's torch backend, one timer; "
          "scripts/twin-eval on that class's device), never the campaign's "
          "time against torch's.  A PyTorch problem (spec backend torch) "
          "needs no twin: its reference is torch eager, timed with every "
          "candidate, and on a GPU each evaluation times torch.compile of "
          "it too (\"kernel, twin\": its evaluation); its speedups are "
          "the best's evaluation's.\n");
}

/* ------------------------------------------------------------ SVG -- */

static void xml(FILE *f, const char *s) {
  for (const char *p = kf_cli__clean(s, 300); *p; p++) {
    switch (*p) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default: fputc(*p, f);
    }
  }
}

enum { PLOT_ROOF, PLOT_COMPILE, PLOT_EAGER, PLOT_REF };

/* The plotted value of x (0: none) and why not. */
static double plot_value(const view *x, int which, const char **why) {
  switch (which) {
  case PLOT_ROOF:
    *why = x->why_best[0] ? x->why_best : x->why_roof;
    return x->roof * 100;
  case PLOT_COMPILE:
    *why = x->why_best[0] ? x->why_best : x->why_compile;
    return x->vs_compile;
  case PLOT_EAGER:
    *why = x->why_best[0] ? x->why_best : x->why_eager;
    return x->vs_eager;
  default:
    *why = x->why_best;
    return x->best ? x->speedup : 0;
  }
}

static const char *const COLORS[] = {"#4477aa", "#ee6677", "#228833",
                                     "#ccbb44", "#66ccee", "#aa3377",
                                     "#bbbbbb", "#000000"};

/* A grouped bar chart: one group per problem, one bar per class.  0 or
 * prints why and returns KF_EXIT_FAIL. */
static int write_svg(const char *path, const char *title, const char *unit,
                     int which, const kf_sweep *w, const view *v) {
  const double bar = 22, gap = 28, left = 70, top = 50, ph = 260;
  double gw = bar * (double)w->n_labels + gap;
  double pw = gw * (double)w->n_problems + gap;
  if (pw < 360) pw = 360; /* room for the title */
  double width = left + pw + 190, height = top + ph + 90;
  double vmax = which == PLOT_ROOF ? 100 : 1;
  for (size_t i = 0; i < w->n; i++) {
    const char *why;
    double y = plot_value(&v[i], which, &why);
    if (y > vmax) vmax = y;
  }
  /* Up to five ticks of a round step (1, 2, 2.5 or 5 times a power of
   * ten) above the highest bar. */
  double raw = vmax * 1.02 / 5, mag = pow(10, floor(log10(raw))), step;
  step = raw <= mag ? mag : raw <= 2 * mag ? 2 * mag
       : raw <= 2.5 * mag ? 2.5 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag;
  int ticks = (int)ceil(vmax * 1.02 / step);
  if (ticks < 1) ticks = 1;
  vmax = step * ticks;
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, CMD ": %s: %s\n", tmp, strerror(errno));
    return KF_EXIT_FAIL;
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
          "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\""
          " font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
          "fill=\"white\"/>\n<text x=\"%.0f\" y=\"24\" font-size=\"16\">",
          width, height, width, height, left);
  xml(f, title);
  fprintf(f, " (sweep ");
  xml(f, w->name);
  fprintf(f, ")</text>\n");
  /* axis, grid, ticks */
  for (int t = 0; t <= ticks; t++) {
    double val = step * t, y = top + ph - ph * t / ticks;
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
            "stroke=\"#dddddd\"/>\n<text x=\"%.0f\" y=\"%.1f\" "
            "text-anchor=\"end\">%.3g%s</text>\n", left, y, left + pw, y,
            left - 6, y + 4, val, unit);
  }
  fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
          "stroke=\"black\"/>\n", left, top, left, top + ph);
  fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
          "stroke=\"black\"/>\n", left, top + ph, left + pw, top + ph);
  { /* parity: 1x, or the roofline itself */
    double y = top + ph - ph * (which == PLOT_ROOF ? 100 : 1.0) / vmax;
    fprintf(f, "<line class=\"parity\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" "
            "y2=\"%.1f\" stroke=\"#888888\" stroke-dasharray=\"4 3\"/>\n",
            left, y, left + pw, y);
  }
  for (size_t p = 0; p < w->n_problems; p++) {
    double gx = left + gap + gw * (double)p;
    for (size_t l = 0; l < w->n_labels; l++) {
      const view *x = &v[p * w->n_labels + l];
      const char *why = "";
      double val = plot_value(x, which, &why);
      double bx = gx + bar * (double)l;
      if (val > 0) {
        double h = ph * val / vmax;
        fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.0f\""
                " height=\"%.1f\" fill=\"%s\" data-problem=\"", bx,
                top + ph - h, bar - 2, h, COLORS[l % 8]);
        xml(f, x->c->problem);
        fprintf(f, "\" data-class=\"");
        xml(f, x->c->label);
        fprintf(f, "\" data-value=\"%.6g\"><title>", val);
        xml(f, x->c->problem);
        fprintf(f, " on ");
        xml(f, x->c->label);
        fprintf(f, ": %.3g%s</title></rect>\n", val, unit);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" "
                "text-anchor=\"middle\">%.3g</text>\n", bx + bar / 2 - 1,
                top + ph - h - 3, val);
      } else {
        fprintf(f, "<text class=\"missing\" x=\"%.1f\" y=\"%.1f\" "
                "text-anchor=\"middle\" data-problem=\"", bx + bar / 2 - 1,
                top + ph - 4);
        xml(f, x->c->problem);
        fprintf(f, "\" data-class=\"");
        xml(f, x->c->label);
        fprintf(f, "\">-<title>");
        xml(f, why);
        fprintf(f, "</title></text>\n");
      }
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">",
            gx + bar * (double)w->n_labels / 2, top + ph + 18);
    xml(f, w->v[p * w->n_labels].problem);
    fprintf(f, "</text>\n");
  }
  for (size_t l = 0; l < w->n_labels; l++) {
    double ly = top + 10 + 20 * (double)l;
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" "
            "fill=\"%s\"/>\n<text x=\"%.0f\" y=\"%.0f\">", left + pw + 16,
            ly, COLORS[l % 8], left + pw + 34, ly + 10);
    xml(f, w->v[l].label);
    fprintf(f, "</text>\n");
  }
  fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" fill=\"#555555\">bars: one per "
          "(problem, class); '-': no number (hover for why)</text>\n</svg>\n",
          left, top + ph + 50);
  int bad = ferror(f);
  if (fclose(f) || bad || rename(tmp, path)) {
    fprintf(stderr, CMD ": writing %s: %s\n", path, strerror(errno));
    unlink(tmp);
    return KF_EXIT_FAIL;
  }
  return 0;
}

/* ----------------------------------------------------------- JSON -- */

static void num_or_null(cJSON *o, const char *k, double v) {
  if (v > 0) cJSON_AddNumberToObject(o, k, v);
  else cJSON_AddNullToObject(o, k);
}

static cJSON *json_report(const kf_sweep *w, const view *v) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "sweep_id", (double)w->id);
  cJSON_AddStringToObject(j, "name", w->name);
  cJSON_AddStringToObject(j, "backend", w->backend == 2 ? "cuda" : "cpu");
  cJSON_AddStringToObject(j, "created_at", w->created_at);
  cJSON *cl = cJSON_AddArrayToObject(j, "classes");
  for (size_t l = 0; l < w->n_labels; l++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "label", w->v[l].label);
    if (w->v[l].model[0]) cJSON_AddStringToObject(o, "model", w->v[l].model);
    else cJSON_AddNullToObject(o, "model");
    num_or_null(o, "ceiling_gbps_given", w->v[l].ceiling_gbps_given);
    cJSON_AddItemToArray(cl, o);
  }
  cJSON *pr = cJSON_AddArrayToObject(j, "problems");
  for (size_t p = 0; p < w->n_problems; p++)
    cJSON_AddItemToArray(pr,
                         cJSON_CreateString(w->v[p * w->n_labels].problem));
  cJSON *cells = cJSON_AddArrayToObject(j, "cells");
  for (size_t i = 0; i < w->n; i++) {
    const view *x = &v[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "problem", x->c->problem);
    cJSON_AddStringToObject(o, "class", x->c->label);
    if (x->c->model[0]) cJSON_AddStringToObject(o, "model", x->c->model);
    else cJSON_AddNullToObject(o, "model");
    if (x->c->campaign_id)
      cJSON_AddNumberToObject(o, "campaign_id", (double)x->c->campaign_id);
    else cJSON_AddNullToObject(o, "campaign_id");
    cJSON_AddStringToObject(o, "state", x->state);
    cJSON_AddStringToObject(o, "stop_reason", x->stop_reason);
    cJSON_AddNumberToObject(o, "evals", x->evals);
    cJSON_AddNumberToObject(o, "evals_ok", x->evals_ok);
    if (x->best)
      cJSON_AddNumberToObject(o, "best_candidate_id", (double)x->candidate_id);
    else cJSON_AddNullToObject(o, "best_candidate_id");
    num_or_null(o, "best_time_ns", x->best ? x->time_ns : 0);
    num_or_null(o, "ref_time_ns", x->best ? x->ref_ns : 0);
    num_or_null(o, "speedup", x->best ? x->speedup : 0);
    num_or_null(o, "roofline_fraction", x->roof);
    if (x->roof > 0) cJSON_AddStringToObject(o, "roofline_from", x->roof_from);
    else cJSON_AddNullToObject(o, "roofline_from");
    num_or_null(o, "achieved_gbps", x->achieved_gbps);
    num_or_null(o, "copy_gbps", x->copy_gbps);
    num_or_null(o, "eager_ms", x->eager_ms);
    num_or_null(o, "compile_ms", x->compile_ms);
    num_or_null(o, "speedup_vs_eager", x->vs_eager);
    num_or_null(o, "speedup_vs_compile", x->vs_compile);
    num_or_null(o, "max_autotune_ms", x->autotune_ms);
    if (x->torch_from[0])
      cJSON_AddStringToObject(o, "torch_from", x->torch_from);
    else cJSON_AddNullToObject(o, "torch_from");
    num_or_null(o, "speedup_vs_max_autotune", x->vs_autotune);
    num_or_null(o, "twin_kernel_ms", x->c->kernel_ms);
    if (x->c->kernel_candidate_id)
      cJSON_AddNumberToObject(o, "twin_candidate_id",
                              (double)x->c->kernel_candidate_id);
    else cJSON_AddNullToObject(o, "twin_candidate_id");
    if (x->best) {
      cJSON_AddStringToObject(o, "template", x->tmpl);
      cJSON_AddStringToObject(o, "knobs", x->knobs);
    } else {
      cJSON_AddNullToObject(o, "template");
      cJSON_AddNullToObject(o, "knobs");
    }
    cJSON_AddBoolToObject(o, "showdown", x->showdown);
    cJSON *m = cJSON_AddObjectToObject(o, "missing");
    if (x->why_best[0]) cJSON_AddStringToObject(m, "best", x->why_best);
    if (x->why_roof[0]) cJSON_AddStringToObject(m, "roofline", x->why_roof);
    if (x->why_eager[0]) cJSON_AddStringToObject(m, "eager", x->why_eager);
    if (x->why_compile[0])
      cJSON_AddStringToObject(m, "compile", x->why_compile);
    if (x->why_autotune[0])
      cJSON_AddStringToObject(m, "max_autotune", x->why_autotune);
    cJSON_AddItemToArray(cells, o);
  }
  return j;
}

/* ------------------------------------------------------------ main -- */

int kf_cli__sweep_report(int argc, char **argv) {
  static const struct option opts[] = {
      {"data", required_argument, 0, 'd'},
      {"db", required_argument, 0, 'D'},
      {"out", required_argument, 0, 'o'},
      {"json", no_argument, 0, 'j'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  const char *data = NULL, *db = NULL, *out = NULL, *key = NULL;
  bool json = false;
  char **av = kf_cli__shift_argv(argc, argv, CMD);
  if (!av) return KF_EXIT_FAIL;
  optind = 0;
  int c, rc = 0;
  while (!rc && (c = getopt_long(argc + 1, av, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'd': data = optarg; break;
    case 'D': db = optarg; break;
    case 'o': out = optarg; break;
    case 'j': json = true; break;
    case 'h': usage(stdout); rc = -1; break;
    default:
      fprintf(stderr, "Run `kf sweep report --help` for the options.\n");
      rc = KF_EXIT_USAGE;
    }
  }
  if (!rc && optind < argc + 1) key = av[optind];
  if (!rc && optind + 1 < argc + 1) {
    fprintf(stderr, CMD ": unexpected argument '%s'\n", av[optind + 1]);
    rc = KF_EXIT_USAGE;
  }
  free(av);
  if (rc) return rc < 0 ? KF_EXIT_OK : rc;
  if (!key || !*key) {
    fprintf(stderr, CMD ": which sweep? give its id or name\n");
    return KF_EXIT_USAGE;
  }
  if (data && db) {
    fprintf(stderr, CMD ": --data and --db exclude each other\n");
    return KF_EXIT_USAGE;
  }
  if (!out && !json) {
    fprintf(stderr, CMD ": give --out DIR (report.md and plots) or --json\n");
    return KF_EXIT_USAGE;
  }

  char dir[512] = "", pgdir[600] = "", conninfo[1024], err[2048];
  int lockfd = -1;
  bool pg_up = false;
  kf_store *s = NULL;
  kf_sweep *w = NULL;
  view *v = NULL;
  if (!db) {
    if (data) kf_strlcpy(dir, data, sizeof dir);
    else kf_cli__default_data_dir(dir, sizeof dir);
    snprintf(pgdir, sizeof pgdir, "%s/pg", dir);
    char probe[700];
    snprintf(probe, sizeof probe, "%s/data/PG_VERSION", pgdir);
    if (access(probe, F_OK)) {
      fprintf(stderr, CMD ": %s holds no database (no %s); give the --data "
              "DIR of kf sweep\n", dir, probe);
      return KF_EXIT_USAGE;
    }
    lockfd = kf_cli__lock_data_dir(dir, CMD);
    if (lockfd < 0) return KF_EXIT_USAGE;
    if (kf_pglocal_start(pgdir, conninfo, sizeof conninfo, err, sizeof err)) {
      fprintf(stderr, CMD ": PostgreSQL in %s: %s\n", pgdir, err);
      rc = KF_EXIT_UNAVAIL;
      goto done;
    }
    pg_up = true;
    db = conninfo;
  }
  if (kf_store_open(db, &s, err, sizeof err)) {
    fprintf(stderr, CMD ": %s\n", err);
    rc = KF_EXIT_UNAVAIL;
    goto done;
  }
  /* A data directory kf left before migration 0010 has no sweeps table
   * yet; the coordinator would migrate it at its next start anyway. */
  if (pg_up && kf_store_migrate(s)) {
    fprintf(stderr, CMD ": migrating %s: %s\n", pgdir, kf_store_errmsg(s));
    rc = KF_EXIT_UNAVAIL;
    goto done;
  }
  int64_t id = 0;
  int src = kf_store_sweep_find(s, key, &id);
  if (src) {
    fprintf(stderr, CMD ": %s\n", kf_store_errmsg(s));
    rc = src == KF_ENOTFOUND || src == KF_EDB ? KF_EXIT_USAGE
                                              : KF_EXIT_UNAVAIL;
    goto done;
  }
  if ((src = kf_store_sweep_get(s, id, &w))) {
    fprintf(stderr, CMD ": %s\n", kf_store_errmsg(s));
    rc = KF_EXIT_UNAVAIL;
    goto done;
  }
  v = calloc(w->n ? w->n : 1, sizeof *v);
  if (!v) {
    rc = KF_EXIT_FAIL;
    goto done;
  }
  for (size_t i = 0; i < w->n; i++) {
    if ((src = gather(s, &w->v[i], &v[i]))) {
      fprintf(stderr, CMD ": %s on %s: %s\n", w->v[i].problem,
              w->v[i].label, kf_store_errmsg(s));
      rc = src == KF_EUNAVAIL ? KF_EXIT_UNAVAIL : KF_EXIT_FAIL;
      goto done;
    }
  }
  cJSON *j = json_report(w, v);
  if (!j) {
    rc = KF_EXIT_FAIL;
    goto done;
  }
  if (out) {
    if (kf_cli__mkdirs(out)) {
      fprintf(stderr, CMD ": cannot create %s: %s\n", out, strerror(errno));
      cJSON_Delete(j);
      rc = KF_EXIT_FAIL;
      goto done;
    }
    char path[1024];
    char *text = cJSON_Print(j);
    snprintf(path, sizeof path, "%s/report.json", out);
    rc = text ? kf_cli__write_file(path, text, CMD) : KF_EXIT_FAIL;
    free(text);
    char *mdtext = NULL;
    size_t mdlen = 0;
    FILE *mf = rc ? NULL : open_memstream(&mdtext, &mdlen);
    if (mf) {
      write_md(mf, w, v);
      if (fclose(mf)) rc = KF_EXIT_FAIL;
      snprintf(path, sizeof path, "%s/report.md", out);
      if (!rc) rc = kf_cli__write_file(path, mdtext, CMD);
    } else if (!rc) {
      rc = KF_EXIT_FAIL;
    }
    free(mdtext);
    static const struct {
      const char *file, *title, *unit;
      int which;
    } plots[] = {
        {"roofline.svg", "% of roofline, per problem and class", "%",
         PLOT_ROOF},
        {"speedup_compile.svg", "speedup over torch.compile", "x",
         PLOT_COMPILE},
        {"speedup_eager.svg", "speedup over torch eager", "x", PLOT_EAGER},
        {"speedup_reference.svg", "speedup over the reference", "x",
         PLOT_REF},
    };
    for (size_t k = 0; !rc && k < sizeof plots / sizeof plots[0]; k++) {
      snprintf(path, sizeof path, "%s/%s", out, plots[k].file);
      rc = write_svg(path, plots[k].title, plots[k].unit, plots[k].which, w,
                     v);
    }
    if (!rc)
      fprintf(stderr, CMD ": wrote %s/report.md, report.json and 4 plots\n",
              out);
  }
  if (json && !rc) kf_cli__json_print(stdout, j);
  else cJSON_Delete(j);

done:
  free(v);
  free(w);
  kf_store_close(s);
  if (pg_up && kf_pglocal_stop(pgdir, "fast", err, sizeof err))
    fprintf(stderr, CMD ": stopping PostgreSQL: %s\n", err);
  if (lockfd >= 0) close(lockfd);
  fflush(stdout);
  return rc;
}
