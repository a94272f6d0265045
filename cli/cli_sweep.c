/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_sweep.c -- `kf sweep PROBLEM_DIR...`: the same campaigns on every
 * device class of a sweep, one class per run (docs/sweep.md).
 *
 * A sweep is a named record in PostgreSQL (db/store_sweep.h, migration
 * 0010) holding, per problem and class label, the one campaign that ran
 * that problem on that class -- a campaign restricted to the class (0009),
 * so that one class's stop rules, budget and best are its own and a class
 * that comes later (on another machine) starts a campaign of its own
 * rather than reopening a finished one.  GPU machines are lent one at a
 * time, so a run works on the class of the workers it starts (--class)
 * and leaves the other classes' cells as they are: running the sweep
 * again on the same data directory, with another class's workers, fills
 * that class's cells and never redoes a finished one.  An interrupted
 * campaign of this class is watched again, not created anew.
 *
 * Like `kf run` it starts a private PostgreSQL, a coordinator and workers
 * in --data DIR (cli_local.c) and stops them when done; the campaigns run
 * one problem after the other, each with the whole budget.  Everything the
 * user typed (problem directories, classes, the baselines file) is checked
 * before anything starts.  With --coordinator and --db it runs on a
 * running cluster instead: the campaigns through the coordinator, the
 * sweep's rows straight into the cluster's database (the coordinator has
 * no RPCs for them), the label naming one of its device classes.
 * `kf sweep report` is cli_sweep_report.c.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_internal.h"
#include "cli_sweep.h"
#include "err.h"
#include "spec.h"
#include "store.h"
#include "store_sweep.h"
#include "util.h"

#define CMD "kf sweep"
#define MAX_PROBLEMS 64
#define MAX_CLASSES 32

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { (void)sig; interrupted = 1; }

static void usage(FILE *f) {
  fprintf(f,
"usage: kf sweep PROBLEM_DIR... [--class LABEL] [--classes A,B,...] [options]\n"
"       kf sweep PROBLEM_DIR... --class LABEL --coordinator H:P --db CONNINFO\n"
"                [--model MODEL] [options]      (a running cluster)\n"
"       kf sweep report SWEEP [--data DIR | --db CONNINFO] [--out DIR]\n"
"                       [--json]   (kf sweep report --help)\n"
"\n"
"Runs the same campaigns on every device class of a sweep and reports, per\n"
"problem and class, the %% of roofline, the speedup over the reference and\n"
"over torch eager and torch.compile, and the winning template and knobs.\n"
"\n"
"A sweep is a named record in the data directory's PostgreSQL holding one\n"
"campaign per problem and class, each restricted to its class.  One run\n"
"works on the class of the workers it starts (--class): a private\n"
"PostgreSQL, a coordinator and workers in --data DIR, as `kf run` does,\n"
"then one campaign per problem of the sweep, one after the other.  Run it\n"
"again on the same data directory with another class's workers (another\n"
"machine: carry DIR over) and it fills that class's campaigns; a problem\n"
"and class whose campaign has ended is never run again, an interrupted one\n"
"is watched again.  The sweep's classes are the union of every --classes\n"
"and --class given to it; problems given later are added to it.\n"
"\n"
"Sweep:\n"
"  --name NAME           the sweep to create or continue      [sweep]\n"
"  --classes A,B,...     its device class labels (all the machines')\n"
"  --class LABEL         the class of the workers this run starts [the\n"
"                        one --classes label, when there is one; with\n"
"                        neither, the model the workers register].  CPU\n"
"                        workers register as LABEL (kf-worker\n"
"                        --device-class); GPU workers register their GPU's\n"
"                        model, which LABEL is bound to on its first run\n"
"                        and checked against on later ones\n"
"  --baselines FILE      torch's times measured on this class's device, one\n"
"                        JSON line per problem (scripts/twin-eval writes\n"
"                        them: {\"problem\", \"eager_ms\", \"compile_ms\",\n"
"                        \"max_autotune_ms\", \"kernel_ms\", \"candidate_id\"},\n"
"                        the class's best kernel and torch timed in one\n"
"                        evaluation); stored for LABEL.  The report's\n"
"                        speedups over torch use only a line that timed\n"
"                        the class's best kernel itself (one timer)\n"
"  --bests DIR           write each problem's best kernel on this class\n"
"                        to DIR/PROBLEM.best.{cu,c,py} (as `kf campaign\n"
"                        best --class` writes it) and DIR/PROBLEM.best.json\n"
"                        (its campaign_id, candidate_id, class, model)\n"
"  --ceiling-gbps X      copy bandwidth of LABEL's device, for the %% of\n"
"                        roofline where its workers measured none\n"
"\n"
"Budget of each campaign:\n"
KF_CLI__BUDGET_HELP
"\n"
"Where:\n"
"  --data DIR            state directory [$KF_DATA_DIR, else as kf run]\n"
"  --coordinator H:P     use a running cluster instead (its workers of the\n"
"                        class run the campaigns); needs --db\n"
"  --db CONNINFO         that cluster's PostgreSQL (libpq conninfo), where\n"
"                        the sweep's rows are kept\n"
"  --model MODEL         with --coordinator: the device class model LABEL\n"
"                        stands for [LABEL itself]\n"
"  --token-file PATH     the cluster's credential [$KF_TOKEN_FILE, $KF_TOKEN];\n"
"                        --tls-ca, --tls-cert, --tls-key as kf run\n"
"  --workers N           local workers [one per GPU for CUDA problems,\n"
"                        else 1]\n"
"  --quiet               no progress output\n"
"\n"
"Exit codes: 0 every campaign of this class has ended (see the report for\n"
"what each found), 1 a campaign could not be run, 2 usage or input error\n"
"(nothing is started or stored), 3 coordinator or database unreachable,\n"
"4 interrupted (resume by running the same command again).\n");
}

typedef struct {
  const char *problem_dirs[MAX_PROBLEMS];
  int n_problems;
  const char *name;
  char *classes_arg;   /* --classes, as typed */
  const char *label;   /* --class */
  const char *baselines;
  const char *bests;   /* --bests DIR */
  double ceiling_gbps;
  const char *data;
  const char *coordinator; /* remote mode: a running cluster ... */
  const char *db;          /* ... and its database, for the sweep's rows */
  const char *model;       /* remote: the device class LABEL stands for */
  kf_cli__remote remote;
  uint64_t workers;
  bool quiet;
  kf_cli__budget budget;
} sweep_opts;

/* true when s is 1..127 printable ASCII characters (what a worker's
 * --device-class takes), no comma (the --classes separator). */
static bool label_ok(const char *s) {
  size_t n = strlen(s);
  if (n < 1 || n > 127) return false;
  for (size_t i = 0; i < n; i++)
    if (!isprint((unsigned char)s[i]) || s[i] == ',') return false;
  return true;
}

/* Splits --classes in place on commas, blanks around each label trimmed.
 * 0 or prints why and returns KF_EXIT_USAGE. */
static int split_classes(char *arg, char **out, int *n) {
  *n = 0;
  char *save = NULL;
  for (char *t = strtok_r(arg, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    while (*t == ' ' || *t == '\t') t++;
    size_t len = strlen(t);
    while (len && (t[len - 1] == ' ' || t[len - 1] == '\t')) t[--len] = '\0';
    if (!len) continue;
    if (!label_ok(t)) {
      fprintf(stderr, CMD ": --classes: '%s': a class label is 1 to 127 "
              "printable ASCII characters\n", kf_cli__clean(t, 200));
      return KF_EXIT_USAGE;
    }
    if (*n == MAX_CLASSES) {
      fprintf(stderr, CMD ": --classes: at most %d classes\n", MAX_CLASSES);
      return KF_EXIT_USAGE;
    }
    bool dup = false;
    for (int i = 0; i < *n; i++) dup = dup || !strcmp(out[i], t);
    if (!dup) out[(*n)++] = t;
  }
  if (!*n) {
    fprintf(stderr, CMD ": --classes names no class: give labels separated"
            " by commas (--classes h100,h200)\n");
    return KF_EXIT_USAGE;
  }
  return 0;
}

static int parse(int argc, char **argv, sweep_opts *o) {
  static const struct option opts[] = {
      KF_CLI__BUDGET_OPTIONS,
      {"classes", required_argument, 0, 'C'},
      {"class", required_argument, 0, 'L'},
      {"baselines", required_argument, 0, 'B'},
      {"bests", required_argument, 0, 'O'},
      {"ceiling-gbps", required_argument, 0, 'G'},
      {"data", required_argument, 0, 'd'},
      {"coordinator", required_argument, 0, 'c'},
      {"db", required_argument, 0, 'D'},
      {"model", required_argument, 0, 'M'},
      KF_CLI__REMOTE_OPTIONS,
      {"workers", required_argument, 0, 'w'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  char **av = kf_cli__shift_argv(argc, argv, CMD);
  if (!av) return KF_EXIT_FAIL;
  optind = 0;
  int c, rc = 0;
  while (!rc && (c = getopt_long(argc + 1, av, "h", opts, NULL)) != -1) {
    switch (c) {
    case 0x106: o->name = optarg; break; /* the sweep's, not a campaign's */
    case 'C': o->classes_arg = optarg; break;
    case 'L': o->label = optarg; break;
    case 'B': o->baselines = optarg; break;
    case 'O': o->bests = optarg; break;
    case 'd': o->data = optarg; break;
    case 'c': o->coordinator = optarg; break;
    case 'D': o->db = optarg; break;
    case 'M': o->model = optarg; break;
    case 'q': o->quiet = true; break;
    case 'G': {
      char *end;
      errno = 0;
      o->ceiling_gbps = strtod(optarg, &end);
      if (errno || end == optarg || *end || !isfinite(o->ceiling_gbps) ||
          o->ceiling_gbps <= 0 || o->ceiling_gbps > 1e6) {
        fprintf(stderr, CMD ": --ceiling-gbps '%s': expected GB/s above 0\n",
                optarg);
        rc = KF_EXIT_USAGE;
      }
      break;
    }
    case 'w':
      if (kf_parse_u64(optarg, &o->workers) || o->workers < 1 ||
          o->workers > KF_CLI__MAX_WORKERS) {
        fprintf(stderr, CMD ": --workers '%s': expected 1..%d\n", optarg,
                KF_CLI__MAX_WORKERS);
        rc = KF_EXIT_USAGE;
      }
      break;
    case 'h': usage(stdout); rc = -1; break;
    default:
      if (c >= 0x100 && c <= 0x1ff && c != 0x106) {
        rc = kf_cli__budget_opt(&o->budget, c, optarg, CMD);
      } else if (kf_cli__remote_opt(&o->remote, c, optarg)) {
      } else {
        fprintf(stderr, "Run `kf sweep --help` for the options.\n");
        rc = KF_EXIT_USAGE;
      }
    }
  }
  for (int i = optind; !rc && i < argc + 1; i++) {
    if (o->n_problems == MAX_PROBLEMS) {
      fprintf(stderr, CMD ": at most %d problems\n", MAX_PROBLEMS);
      rc = KF_EXIT_USAGE;
    } else {
      o->problem_dirs[o->n_problems++] = av[i];
    }
  }
  free(av);
  return rc;
}

/* ------------------------------------------------------- baselines -- */

typedef struct {
  kf_sweep_baseline *v;
  char **lines;
  size_t n;
} baselines;

static void baselines_free(baselines *b) {
  for (size_t i = 0; i < b->n; i++) free(b->lines[i]);
  free(b->lines);
  free(b->v);
  memset(b, 0, sizeof *b);
}

/* A number > 0 (ms), or JSON null / absent (0).  false: anything else. */
static bool ms_field(const cJSON *o, const char *key, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  *out = 0;
  if (!v || cJSON_IsNull(v)) return true;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble <= 0 ||
      v->valuedouble > 1e9)
    return false;
  *out = v->valuedouble;
  return true;
}

/* Reads a baselines file (scripts/twin-eval's lines): one JSON object a
 * line; blank lines and "#" comments skipped.  Lines of problems outside names[0..nn) (the
 * copy measurement, problems of another sweep) are left out, with a note.
 * 0 or prints "FILE:LINE: why" and returns KF_EXIT_USAGE. */
static int read_baselines(const char *path, const char *const *names,
                          int nn, bool quiet, baselines *out) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, CMD ": --baselines %s: %s\n", path, strerror(errno));
    return KF_EXIT_USAGE;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int lineno = 0, rc = 0, skipped = 0;
  while (!rc && (len = getline(&line, &cap, f)) >= 0) {
    lineno++;
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
      line[--len] = '\0';
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (!*p || *p == '#') continue;
    cJSON *j = cJSON_Parse(p);
    const cJSON *pr = j ? cJSON_GetObjectItemCaseSensitive(j, "problem") : NULL;
    double eager = 0, comp = 0, x = 0;
    const cJSON *cand = j ? cJSON_GetObjectItemCaseSensitive(j, "candidate_id")
                          : NULL;
    const char *why = NULL;
    if (!j || !cJSON_IsObject(j)) why = "not a JSON object";
    else if (!cJSON_IsString(pr) || !*pr->valuestring)
      why = "no \"problem\" name";
    else if (!cJSON_GetObjectItemCaseSensitive(j, "eager_ms") &&
             strcmp(pr->valuestring, "copy") != 0)
      why = "no \"eager_ms\"";
    else if (!ms_field(j, "eager_ms", &eager))
      why = "\"eager_ms\" is not a time in ms above 0 (or null)";
    else if (!ms_field(j, "compile_ms", &comp))
      why = "\"compile_ms\" is not a time in ms above 0 (or null)";
    else if (!ms_field(j, "max_autotune_ms", &x))
      why = "\"max_autotune_ms\" is not a time in ms above 0 (or null)";
    else if (!ms_field(j, "kernel_ms", &x))
      why = "\"kernel_ms\" is not a time in ms above 0 (or null)";
    else if (cand && !cJSON_IsNull(cand) &&
             (!cJSON_IsNumber(cand) || cand->valuedouble < 1 ||
              cand->valuedouble > 9e15 ||
              cand->valuedouble != floor(cand->valuedouble)))
      why = "\"candidate_id\" is not a candidate id (an integer above 0)";
    else if (cand && !cJSON_IsNull(cand) && x <= 0)
      why = "\"candidate_id\" names a kernel but \"kernel_ms\" gives no time"
            " for it";
    if (why) {
      fprintf(stderr, CMD ": --baselines %s:%d: %s\n", path, lineno, why);
      rc = KF_EXIT_USAGE;
      cJSON_Delete(j);
      break;
    }
    bool ours = false;
    for (int i = 0; i < nn; i++) ours = ours || !strcmp(names[i], pr->valuestring);
    if (!ours) {
      skipped++;
      if (!quiet)
        fprintf(stderr, CMD ": --baselines %s:%d: '%s' is not a problem of"
                " this run; left out\n", path, lineno,
                kf_cli__clean(pr->valuestring, 64));
      cJSON_Delete(j);
      continue;
    }
    size_t k;
    for (k = 0; k < out->n; k++)
      if (!strcmp(out->v[k].problem, pr->valuestring)) break;
    if (k == out->n) {
      kf_sweep_baseline *nv = realloc(out->v, (k + 1) * sizeof *nv);
      char **nl = nv ? realloc(out->lines, (k + 1) * sizeof *nl) : NULL;
      if (nv) out->v = nv;
      if (nl) out->lines = nl;
      if (!nv || !nl) {
        rc = KF_EXIT_FAIL;
        cJSON_Delete(j);
        break;
      }
      out->n++;
    } else {
      free(out->lines[k]);
    }
    /* The line goes to PostgreSQL as jsonb: re-printed by cJSON, so what
     * is stored is exactly what was parsed. */
    out->lines[k] = cJSON_PrintUnformatted(j);
    out->v[k] = (kf_sweep_baseline){.problem = NULL, .eager_ms = eager,
                                    .compile_ms = comp,
                                    .line = out->lines[k]};
    for (int i = 0; i < nn; i++)
      if (!strcmp(names[i], pr->valuestring)) out->v[k].problem = names[i];
    cJSON_Delete(j);
    if (!out->lines[k]) rc = KF_EXIT_FAIL;
  }
  if (!rc && ferror(f)) {
    fprintf(stderr, CMD ": --baselines %s: read error\n", path);
    rc = KF_EXIT_USAGE;
  }
  free(line);
  fclose(f);
  if (!rc && !out->n) {
    fprintf(stderr, CMD ": --baselines %s: no baseline for any problem of "
            "this run%s\n", path, skipped ? " (every line names another)" : "");
    rc = KF_EXIT_USAGE;
  }
  if (rc) baselines_free(out);
  return rc;
}

/* ------------------------------------------------------------ run -- */

/* Waits until the local worker `name` registered and returns its class.
 * The name is this run's own: a data directory carried from another
 * machine holds that machine's workers, and its clock may be ahead of
 * ours.  0, KF_EXIT_INTERRUPT, or prints why and returns an exit code. */
static int wait_worker_class(kf_store *s, const kf_cli__local *l,
                             const char *name, int64_t *dc_id,
                             kf_device_class *dc) {
  for (int i = 0; i < 3000; i++) { /* 300 s: a GPU worker measures first */
    if (interrupted) return KF_EXIT_INTERRUPT;
    int rc = kf_store_sweep_worker_class(s, name, 0, dc_id, dc);
    if (rc) {
      fprintf(stderr, CMD ": %s\n", kf_store_errmsg(s));
      return KF_EXIT_UNAVAIL;
    }
    if (*dc_id) return 0;
    usleep(100000);
  }
  fprintf(stderr, CMD ": the local worker did not register in 300 s; see"
          " %s/%s.log\n", l->dir, name);
  return KF_EXIT_UNAVAIL;
}

/* Runs (or watches, or skips) the campaign of problem on the bound class.
 * 0 when it has ended; an exit code otherwise. */
static int run_problem(kf_store *s, kf_rpc_client *cli, int64_t sweep,
                       const kf_spec *spec, const char *label,
                       const char *model, const sweep_opts *o,
                       const char *sweep_name) {
  int64_t cid = 0;
  if (kf_store_sweep_campaign(s, sweep, spec->name, label, &cid)) {
    fprintf(stderr, CMD ": %s\n", kf_store_errmsg(s));
    return KF_EXIT_UNAVAIL;
  }
  if (cid) {
    kf_campaign *c = NULL;
    if (kf_store_campaign_get(s, cid, &c)) {
      fprintf(stderr, CMD ": campaign %lld: %s\n", (long long)cid,
              kf_store_errmsg(s));
      return KF_EXIT_UNAVAIL;
    }
    bool ended = strcmp(c->state, "running") != 0 &&
                 strcmp(c->state, "showdown") != 0;
    if (ended && !o->quiet)
      fprintf(stderr, CMD ": %s on %s: campaign %lld has ended (%s%s%s);"
              " not run again\n", spec->name, label, (long long)cid, c->state,
              c->stop_reason[0] ? ": " : "",
              kf_cli__clean(c->stop_reason, 200));
    kf_store_campaign_free(c);
    if (ended) return 0;
    if (!o->quiet)
      fprintf(stderr, CMD ": %s on %s: resuming campaign %lld\n", spec->name,
              label, (long long)cid);
  } else {
    kf_cli__budget b = o->budget;
    char name[256];
    snprintf(name, sizeof name, "sweep %s: %s on %s", sweep_name, spec->name,
             label);
    b.name = name;
    b.device_class = model;
    int rc = kf_cli__create_campaign(cli, CMD, spec, &b, &cid);
    if (rc) return rc;
    if (kf_store_sweep_add_campaign(s, sweep, spec->name, label, cid)) {
      fprintf(stderr, CMD ": recording campaign %lld: %s\n", (long long)cid,
              kf_store_errmsg(s));
      return KF_EXIT_UNAVAIL;
    }
    if (!o->quiet)
      fprintf(stderr, CMD ": %s on %s: campaign %lld, %u evaluations or %u"
              " min\n", spec->name, label, (long long)cid, b.evals,
              b.seconds / 60);
  }
  Kernelfleet__GetCampaignResponse *last = NULL;
  int rc = kf_cli__watch(cli, CMD, cid, o->quiet, &interrupted, &last);
  if (!rc && last && last->status && !o->quiet) {
    const Kernelfleet__CampaignStatus *st = last->status;
    fprintf(stderr, CMD ": %s on %s: campaign %lld %s", spec->name, label,
            (long long)cid, kf_cli__clean(st->stop_reason, 200));
    if (st->best_speedup > 0)
      fprintf(stderr, "; best %.2fx over the reference, %.1f%% of roofline",
              st->best_speedup, st->roofline_fraction * 100);
    fprintf(stderr, "\n");
  }
  kf_rpc_free((ProtobufCMessage *)last);
  return rc;
}

/* --bests: the class's best kernel of campaign cid as `kf campaign best
 * --class` writes it, beside a JSON file naming it, so the twin evaluation
 * (scripts/twin-eval) can time that very candidate and say which it was.
 * A campaign without a verified kernel on the class writes nothing.  0 or
 * an exit code. */
static int write_best(kf_store *s, kf_rpc_client *cli, int64_t sweep,
                      const char *problem, const char *label,
                      const char *model, int64_t dc_id, const char *dir,
                      bool quiet) {
  int64_t cid = 0;
  if (kf_store_sweep_campaign(s, sweep, problem, label, &cid)) {
    fprintf(stderr, CMD ": %s\n", kf_store_errmsg(s));
    return KF_EXIT_UNAVAIL;
  }
  kf_cand_list *bl = NULL;
  int src = cid ? kf_store_best_class(s, cid, dc_id, &bl) : KF_ENOTFOUND;
  kf_store_list_free(bl);
  if (src == KF_ENOTFOUND) {
    if (!quiet)
      fprintf(stderr, CMD ": %s on %s: no verified kernel; no best file\n",
              problem, label);
    return 0;
  }
  if (src) {
    fprintf(stderr, CMD ": %s\n", kf_store_errmsg(s));
    return KF_EXIT_UNAVAIL;
  }
  Kernelfleet__GetCampaignResponse *g = NULL;
  Kernelfleet__GetBestResponse *b = NULL;
  char *text = NULL, *js = NULL;
  int rc = kf_cli__get_campaign(cli, CMD, cid, 0, &g);
  if (!rc) rc = kf_cli__get_best(cli, CMD, cid, model, false, &b);
  if (!rc && !(text = kf_cli__best_file_text(b, g->status->campaign)))
    rc = KF_EXIT_FAIL;
  char path[1024], name[600], jpath[1100];
  if (!rc) {
    kf_cli__best_default_path(name, sizeof name, problem, b->language);
    /* "./P.best.cu" -> "DIR/P.best.cu" */
    snprintf(path, sizeof path, "%s/%s", dir, name + 2);
    snprintf(jpath, sizeof jpath, "%.*s.json",
             (int)(strrchr(path, '.') - path), path);
    rc = kf_cli__write_file(path, text, CMD);
  }
  if (!rc) {
    cJSON *j = cJSON_CreateObject();
    if (!j ||
        !cJSON_AddStringToObject(j, "problem", problem) ||
        !cJSON_AddNumberToObject(j, "campaign_id", (double)cid) ||
        !cJSON_AddStringToObject(j, "class", label) ||
        !cJSON_AddStringToObject(j, "model", model) ||
        !cJSON_AddNumberToObject(j, "candidate_id",
                                 (double)b->best->candidate_id) ||
        !cJSON_AddStringToObject(j, "best_file", path) ||
        !cJSON_AddItemToObject(j, "best", kf_cli__json_best(b)) ||
        !(js = cJSON_Print(j)))
      rc = KF_EXIT_FAIL;
    cJSON_Delete(j);
  }
  if (!rc) rc = kf_cli__write_file(jpath, js, CMD);
  if (!rc && !quiet)
    fprintf(stderr, CMD ": %s on %s: best, candidate %lld -> %s\n", problem,
            label, (long long)b->best->candidate_id, path);
  free(js);
  free(text);
  kf_rpc_free((ProtobufCMessage *)b);
  kf_rpc_free((ProtobufCMessage *)g);
  return rc;
}

int kf_cli_sweep(int argc, char **argv) {
  if (argc >= 1 && !strcmp(argv[0], "report"))
    return kf_cli__sweep_report(argc - 1, argv + 1);
  sweep_opts o = {.name = "sweep", .budget = {.evals = 60, .seconds = 600}};
  kf_cli__remote_init(&o.remote);
  int rc = parse(argc, argv, &o);
  if (rc) return rc < 0 ? KF_EXIT_OK : rc;
  if (!o.n_problems) {
    fprintf(stderr, CMD ": give at least one PROBLEM_DIR\n"
            "Run `kf sweep --help` for the options.\n");
    return KF_EXIT_USAGE;
  }
  if (o.coordinator && !o.db) {
    fprintf(stderr, CMD ": --coordinator needs --db CONNINFO too: the sweep's"
            " rows live in the cluster's database\n");
    return KF_EXIT_USAGE;
  }
  if (!o.coordinator && (o.db || o.model)) {
    fprintf(stderr, CMD ": --%s is for a running cluster: give "
            "--coordinator H:P too\n", o.db ? "db" : "model");
    return KF_EXIT_USAGE;
  }
  if (o.coordinator && o.data) {
    fprintf(stderr, CMD ": --data and --coordinator exclude each other\n");
    return KF_EXIT_USAGE;
  }
  if (o.coordinator && (!o.remote.token || !*o.remote.token) &&
      (!o.remote.token_file || !*o.remote.token_file)) {
    fprintf(stderr, CMD ": --coordinator needs --token-file or $KF_TOKEN\n");
    return KF_EXIT_USAGE;
  }
  if (!label_ok(o.name)) {
    fprintf(stderr, CMD ": --name: 1 to 127 printable ASCII characters\n");
    return KF_EXIT_USAGE;
  }
  char *labels[MAX_CLASSES + 1];
  int nl = 0;
  char *classes_copy = NULL;
  if (o.classes_arg) {
    classes_copy = strdup(o.classes_arg);
    if (!classes_copy) return KF_EXIT_FAIL;
    rc = split_classes(classes_copy, labels, &nl);
    if (rc) {
      free(classes_copy);
      return rc;
    }
  }
  if (o.label && !label_ok(o.label)) {
    fprintf(stderr, CMD ": --class '%s': a class label is 1 to 127 printable"
            " ASCII characters, no comma\n", kf_cli__clean(o.label, 200));
    free(classes_copy);
    return KF_EXIT_USAGE;
  }
  if (!o.label && nl == 1) o.label = labels[0];
  if (!o.label && (nl || o.coordinator)) {
    fprintf(stderr, CMD ": %s: name the class of %s with --class LABEL\n",
            nl ? "--classes lists several classes" : "no class given",
            o.coordinator ? "the cluster's workers to run on"
                          : "this machine's workers");
    free(classes_copy);
    return KF_EXIT_USAGE;
  }
  /* No class at all: the label is the model the local workers register
   * (the GPU's name, the CPU's model name), known once they did. */
  bool detect = !o.label;
  bool listed = false;
  for (int i = 0; !detect && i < nl; i++)
    listed = listed || !strcmp(labels[i], o.label);
  if (!detect && !listed) labels[nl++] = (char *)o.label;

  /* Every problem loads, one backend, distinct names: before anything
   * starts. */
  kf_spec *specs[MAX_PROBLEMS] = {0};
  const char *names[MAX_PROBLEMS];
  int backend = 0;
  baselines bl = {0};
  for (int i = 0; !rc && i < o.n_problems; i++) {
    rc = kf_cli__load_problem(o.problem_dirs[i], CMD, &specs[i]);
    if (rc) break;
    const kf_spec *sp = specs[i];
    int k = !strcmp(sp->backend, "cuda") ||
            (!strcmp(sp->backend, "torch") &&
             !strcmp(sp->torch_device, "cuda")) ? 2 : 1;
    names[i] = sp->name;
    if (backend && k != backend) {
      fprintf(stderr, CMD ": %s is a %s problem and %s a %s one: a sweep runs"
              " problems of one kind of device\n", o.problem_dirs[i],
              k == 2 ? "GPU" : "CPU", o.problem_dirs[0],
              backend == 2 ? "GPU" : "CPU");
      rc = KF_EXIT_USAGE;
    }
    backend = k;
    for (int j = 0; !rc && j < i; j++)
      if (!strcmp(names[j], sp->name)) {
        fprintf(stderr, CMD ": %s and %s are both problem '%s'\n",
                o.problem_dirs[j], o.problem_dirs[i], sp->name);
        rc = KF_EXIT_USAGE;
      }
  }
  if (!rc && o.baselines)
    rc = read_baselines(o.baselines, names, o.n_problems, o.quiet, &bl);
  if (!rc && o.bests && kf_cli__mkdirs(o.bests)) {
    fprintf(stderr, CMD ": --bests %s: %s\n", o.bests, strerror(errno));
    rc = KF_EXIT_USAGE;
  }

  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  kf_cli__local local;
  memset(&local, 0, sizeof local);
  kf_store *s = NULL;
  kf_rpc_client *cli = NULL;
  int lockfd = -1;
  char dir[512] = "";
  static char gpu_ids[KF_CLI__MAX_WORKERS][KF_CLI__GPU_ID_LEN];
  if (rc) goto out;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  char err[512];
  int64_t dc_id = 0;
  kf_device_class dc;
  memset(&dc, 0, sizeof dc);
  kf_cli__remote remote = o.remote;
  if (o.coordinator) {
    /* A running cluster: its workers of the class are there already (or
     * come later); the label names their device class. */
    if (kf_store_open(o.db, &s, err, sizeof err)) {
      fprintf(stderr, CMD ": --db: %s\n", err);
      rc = KF_EXIT_UNAVAIL;
      goto out;
    }
    const char *m = o.model ? o.model : o.label;
    int crc = kf_store_class_by_name(s, backend, m, &dc_id);
    if (crc) {
      fprintf(stderr, CMD ": %s%s\n", kf_store_errmsg(s),
              crc == KF_ENOTFOUND && !o.model
                  ? "; name the class LABEL stands for with --model" : "");
      rc = crc == KF_ENOTFOUND || crc == KF_EINVAL ? KF_EXIT_USAGE
                                                   : KF_EXIT_UNAVAIL;
      goto out;
    }
    kf_strlcpy(dc.model, m, sizeof dc.model);
    remote.target = o.coordinator;
    goto have_class;
  }
  if (o.data) kf_strlcpy(dir, o.data, sizeof dir);
  else kf_cli__default_data_dir(dir, sizeof dir);
  if (kf_cli__mkdirs(dir)) {
    fprintf(stderr, CMD ": cannot create %s: %s\n", dir, strerror(errno));
    rc = KF_EXIT_USAGE;
    goto out;
  }
  lockfd = kf_cli__lock_data_dir(dir, CMD);
  if (lockfd < 0) {
    rc = KF_EXIT_USAGE;
    goto out;
  }
  int nw = (int)o.workers, ngpu = 0;
  if (backend == 2) {
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    ngpu = kf_cli__gpu_plan(vis, kf_cli__count_gpus(), gpu_ids,
                            KF_CLI__MAX_WORKERS);
    if (!ngpu) {
      fprintf(stderr, CMD ": these are GPU problems but this machine shows "
              "no GPU (/dev/nvidia0)\n");
      rc = KF_EXIT_UNAVAIL;
      goto out;
    }
    if (!nw) nw = ngpu;
  }
  if (!o.quiet)
    fprintf(stderr, CMD ": sweep '%s', class %s, state in %s\n",
            kf_cli__clean(o.name, 128),
            detect ? "(the workers' own)" : kf_cli__clean(o.label, 128), dir);
  char prefix[64], first[80];
  snprintf(prefix, sizeof prefix, "sweep-%lld-%d", (long long)time(NULL),
           (int)getpid());
  snprintf(first, sizeof first, "%s-1", prefix);
  kf_cli__local_opts lo = {
      .worker_prefix = prefix,
      .dir = dir, .workers = nw ? nw : 1, .cuda_per_device = backend == 2,
      .gpu_ids = (const char(*)[KF_CLI__GPU_ID_LEN])gpu_ids,
      .n_gpu_ids = ngpu, .cmd = CMD, .quiet = o.quiet,
      .device_class = backend == 2 ? NULL : o.label,
      .interrupted = &interrupted};
  rc = kf_cli__local_start(&local, &lo);
  if (rc) goto out;

  if (kf_store_open(local.conninfo, &s, err, sizeof err)) {
    fprintf(stderr, CMD ": %s\n", err);
    rc = KF_EXIT_UNAVAIL;
    goto out;
  }
  /* The workers' class first: the sweep's rows, its new problems and
   * labels and the label's binding are then written in one transaction,
   * or not at all. */
  rc = wait_worker_class(s, &local, first, &dc_id, &dc);
  if (rc) goto out;
  if (detect) {
    if (!label_ok(dc.model)) {
      fprintf(stderr, CMD ": the workers' class '%s' cannot be a label (1 to"
              " 127 printable ASCII characters, no comma); give --class\n",
              kf_cli__clean(dc.model, 200));
      rc = KF_EXIT_USAGE;
      goto out;
    }
    o.label = dc.model;
    labels[nl++] = dc.model;
  }
  /* Our own cluster: its fresh bootstrap credential, plaintext on
   * loopback, whatever the environment says about other clusters. */
  kf_cli__remote_init(&remote);
  remote.target = local.target;
  remote.token = local.token;
  remote.token_file = NULL;
  remote.tls_ca = remote.tls_cert = remote.tls_key = NULL;

have_class:;
  int64_t sweep = 0;
  bool created = false;
  kf_sweep_bind bind = {.label = o.label, .model = dc.model,
                        .device_class_id = dc_id,
                        .ceiling_gbps = o.ceiling_gbps};
  int src = kf_store_sweep_open(s, o.name, backend, names,
                                (size_t)o.n_problems,
                                (const char *const *)labels, (size_t)nl,
                                true, &bind, &sweep, &created);
  if (src) {
    fprintf(stderr, CMD ": %s\n", kf_store_errmsg(s));
    rc = src == KF_EINVAL ? KF_EXIT_USAGE : KF_EXIT_UNAVAIL;
    goto out;
  }
  if (!o.quiet)
    fprintf(stderr, CMD ": %s sweep %lld '%s'; class %s is %s\n",
            created ? "created" : "continuing", (long long)sweep,
            kf_cli__clean(o.name, 128), kf_cli__clean(o.label, 128),
            kf_cli__clean(dc.model, 128));
  if (bl.n) {
    src = kf_store_sweep_baselines_put(s, sweep, o.label, bl.v, bl.n,
                                       o.baselines);
    if (src) {
      fprintf(stderr, CMD ": --baselines: %s\n", kf_store_errmsg(s));
      rc = src == KF_EINVAL ? KF_EXIT_USAGE : KF_EXIT_UNAVAIL;
      goto out;
    }
  }

  rc = kf_cli__open(&remote, CMD, &cli);
  if (rc) goto out;
  for (int i = 0; !rc && i < o.n_problems; i++) {
    rc = run_problem(s, cli, sweep, specs[i], o.label, dc.model, &o, o.name);
    if (!rc && o.bests)
      rc = write_best(s, cli, sweep, specs[i]->name, o.label, dc.model, dc_id,
                      o.bests, o.quiet);
  }
  if (rc == KF_EXIT_INTERRUPT && o.coordinator)
    fprintf(stderr, CMD ": interrupted; the campaign under way keeps running"
            " on %s.\n  continue: run the same command again\n",
            o.coordinator);
  else if (rc == KF_EXIT_INTERRUPT)
    fprintf(stderr, CMD ": interrupted; the sweep and its campaigns are saved"
            " in %s/pg.\n  continue: run the same command again\n", dir);
  else if (!rc && !o.quiet)
    fprintf(stderr, CMD ": class %s done; report: kf sweep report %lld "
            "%s%s --out DIR\n", kf_cli__clean(o.label, 128),
            (long long)sweep, o.coordinator ? "--db CONNINFO" : "--data ",
            o.coordinator ? "" : dir);
  if (!rc) printf("%lld\n", (long long)sweep);

out:
  kf_rpc_client_close(cli);
  kf_store_close(s);
  kf_cli__local_stop(&local);
  if (lockfd >= 0) close(lockfd);
  for (int i = 0; i < o.n_problems; i++) kf_spec_free(specs[i]);
  baselines_free(&bl);
  free(classes_copy);
  fflush(stdout);
  return rc;
}
