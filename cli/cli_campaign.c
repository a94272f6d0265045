/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_campaign.c -- `kf campaign ACTION`: campaigns on a running
 * coordinator (--coordinator/--token-file, or $KF_COORDINATOR/$KF_TOKEN).
 *
 *   submit PROBLEM_DIR [budget]   create one; prints its id
 *   status ID                     state, best so far, top candidates
 *   watch ID                      progress until it ends, then the results
 *   best ID [--out FILE]          the best kernel as a standalone source
 *   export ID [--out FILE]        every evaluation, one JSON object a line
 *   stop ID                       end it now (finished results are kept)
 *   port ID --to CLASS            a new campaign: ID's elites verified and
 *                                 timed on CLASS first, then the search
 *   profile ID CANDIDATE          a candidate's diagnosis and profile
 *
 * Drawing and polling live in cli_watch.c, shared with `kf run`; this file
 * is option parsing and the choice of what to print.
 */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_internal.h"
#include "err.h"
#include "spec.h"
#include "text.h"
#include "util.h"

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { (void)sig; interrupted = 1; }

static void usage(FILE *f) {
  fprintf(f,
"usage: kf campaign ACTION [ARGS] [--coordinator HOST:PORT]\n"
"                   [--token-file PATH] [--tls-ca PATH]\n"
"\n"
"Actions:\n"
"  submit PROBLEM_DIR [budget]  create a campaign; prints its id.  It runs\n"
"                               on every device class of its backend with a\n"
"                               worker, each class with its own budget, stop\n"
"                               rules, best and showdown; --class NAME: on\n"
"                               that class only\n"
"  status ID [--top N]          state, budget, best so far, top candidates,\n"
"                               failures by outcome\n"
"  watch ID                     live progress until the campaign ends, then\n"
"                               the results (as status)\n"
"  best ID [--out FILE]         the best verified kernel as a source file\n"
"       [--class NAME]          that builds on its own (knobs as #defines);\n"
"                               to stdout unless --out; --class: the best on\n"
"                               that device class (its model, as `status`\n"
"                               lists it), else the best over all classes\n"
"  export ID [--out FILE]       every evaluation as JSON lines: one object\n"
"                               per line with candidate_id, task_id,\n"
"                               template, knobs, outcome, stage, reason,\n"
"                               time_ns_median, time_ns_spread,\n"
"                               ref_time_ns_median, speedup,\n"
"                               roofline_fraction, proposer, device_class,\n"
"                               reused (true: the measurements of another\n"
"                               campaign's evaluation of the same source,\n"
"                               knobs and device class, id in reused_from;\n"
"                               task_id is then 0), diagnosis and profile\n"
"                               (null when none)\n"
"  export ID --format kernelbench|gpumode [--problem DIR] [--out FILE]\n"
"                               a campaign's best kernel as a ready\n"
"                               submission: a KernelBench ModelNew, or a GPU\n"
"                               MODE submission.py (custom_kernel).  PyTorch\n"
"                               campaigns: --problem for the model's init\n"
"                               arguments.  CUDA and C campaigns (--problem\n"
"                               required: the shapes): one file that builds\n"
"                               the kernel and a binding with load_inline\n"
"                               at import, both entry points in it\n"
"  export ID --format torch-ext --problem DIR --out DIR [--class NAME]\n"
"                               a CUDA (or C) campaign's best kernel as a\n"
"                               PyTorch extension package (setup.py, the\n"
"                               kernel, a binding that checks the inputs\n"
"                               against the spec; `pip install DIR`, then\n"
"                               PKG.forward(inputs...)); OUT must not exist\n"
"  stop ID                      stop it now; finished evaluations are kept\n"
"  profile ID CANDIDATE         the candidate's evaluations with their\n"
"                               diagnosis (memory-, compute-, latency- or\n"
"                               launch-bound, with its fraction of the\n"
"                               measured ceilings) and hardware profile\n"
"                               (GPU workers: Nsight Compute counters, or\n"
"                               why there are none); docs/profiling.md\n"
"  propose ID SOURCE_FILE       add a candidate of your own (a person, an\n"
"                               LLM, another program): it is verified and\n"
"                               timed like any other and joins the search;\n"
"                               [--knob NAME=VALUE]... [--template NAME]\n"
"                               [--proposer NAME]; prints the candidate id\n"
"                               [--knob-space NAME=V1,V2,...]...: the\n"
"                               source declares these knobs: it becomes a\n"
"                               template of the campaign whose knobs the\n"
"                               search tunes (docs/proposers.md)\n"
"  port ID --to CLASS           port campaign ID to device class CLASS: a\n"
"       [--from CLASS]          new campaign of the same problem on CLASS\n"
"       [--elites N] [budget]   only, whose first candidates are ID's best N\n"
"                               (default: its showdown size) on --from (by\n"
"                               default its class with the best speedup);\n"
"                               they are verified and timed on CLASS before\n"
"                               the search goes on there.  Budget options\n"
"                               left out are ID's.  Prints the new id;\n"
"                               `status` shows each elite before and after\n"
"\n"
"Budget (submit, port):\n"
KF_CLI__BUDGET_HELP
"\n"
"Common:\n"
"  --coordinator H:P   coordinator [$KF_COORDINATOR, else 127.0.0.1:7070]\n"
KF_CLI__REMOTE_HELP
"  --json              machine-readable output: one JSON object (status,\n"
"                      watch's final state, best with its source, submit,\n"
"                      stop, profile)\n"
"\n"
"Exit codes: 0 ok (watch: a verified kernel faster than the reference was\n"
"found; best: there is one), 1 no such kernel / the action failed, 2 usage\n"
"or problem-spec error or unknown campaign, 3 coordinator unreachable (or\n"
"too old to serve campaigns), 4 interrupted (watch: the campaign goes on).\n");
}

typedef struct {
  kf_cli__remote remote;
  kf_cli__budget budget;
  bool budget_given;
  const char *out;
  uint64_t top;
  int nargs;
  char *args[2];
  const char *proposer;          /* propose */
  const char *template_name;     /* propose */
  char *knobs[KF_SPEC_MAX_KNOBS]; /* propose: NAME=VALUE */
  int n_knobs;
  const char *device_class;      /* submit, best: --class */
  const char *to, *from;         /* port */
  uint64_t elites;               /* port; 0: the source's showdown size */
  char *spaces[KF_SPEC_MAX_KNOBS]; /* propose: NAME=V1,V2,... */
  int n_spaces;
  const char *format;            /* export: kernelbench, gpumode */
  const char *problem;           /* export --format: the problem dir */
} camp_opts;

/* Parses options and up to two positional arguments.  Returns 0, -1 after
 * --help, or an exit code. */
static int parse(int argc, char **argv, const char *name, camp_opts *o) {
  static const struct option opts[] = {
      KF_CLI__BUDGET_OPTIONS,
      {"coordinator", required_argument, 0, 'c'},
      KF_CLI__REMOTE_OPTIONS,
      {"out", required_argument, 0, 'o'},
      {"top", required_argument, 0, 'n'},
      {"json", no_argument, 0, 'j'},
      {"knob", required_argument, 0, 'k'},
      {"knob-space", required_argument, 0, 'S'},
      {"proposer", required_argument, 0, 'P'},
      {"template", required_argument, 0, 'T'},
      {"class", required_argument, 0, 'C'},
      {"to", required_argument, 0, 't'},
      {"from", required_argument, 0, 'f'},
      {"elites", required_argument, 0, 'e'},
      {"format", required_argument, 0, 1001},
      {"problem", required_argument, 0, 1002},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  char **av = kf_cli__shift_argv(argc, argv, name);
  if (!av) return KF_EXIT_FAIL;
  optind = 0;
  int c, rc = 0;
  while (!rc && (c = getopt_long(argc + 1, av, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'c': o->remote.target = optarg; break;
    case 'o': o->out = optarg; break;
    case 'j': o->remote.json = true; break;
    case 'P': o->proposer = optarg; break;
    case 'T': o->template_name = optarg; break;
    case 'C': o->device_class = optarg; break;
    case 't': o->to = optarg; break;
    case 'f': o->from = optarg; break;
    case 'e':
      if (kf_parse_u64(optarg, &o->elites) || o->elites < 1 ||
          o->elites > 64) {
        fprintf(stderr, "%s: --elites '%s': expected 1..64\n", name, optarg);
        rc = KF_EXIT_USAGE;
      }
      break;
    case 1001: o->format = optarg; break;
    case 1002: o->problem = optarg; break;
    case 'k': {
      char *eq = strchr(optarg, '=');
      if (!eq || o->n_knobs == KF_SPEC_MAX_KNOBS) {
        fprintf(stderr, "%s: --knob '%s': expected NAME=VALUE (at most %d)\n",
                name, optarg, KF_SPEC_MAX_KNOBS);
        rc = KF_EXIT_USAGE;
        break;
      }
      o->knobs[o->n_knobs++] = optarg;
      break;
    }
    case 'S':
      if (!strchr(optarg, '=') || o->n_spaces == KF_SPEC_MAX_KNOBS) {
        fprintf(stderr, "%s: --knob-space '%s': expected NAME=V1,V2,... (at"
                " most %d)\n", name, optarg, KF_SPEC_MAX_KNOBS);
        rc = KF_EXIT_USAGE;
        break;
      }
      o->spaces[o->n_spaces++] = optarg;
      break;
    case 'n':
      if (kf_parse_u64(optarg, &o->top) || o->top > 1000) {
        fprintf(stderr, "%s: --top '%s': expected 0..1000\n", name, optarg);
        rc = KF_EXIT_USAGE;
      }
      break;
    case 'h': usage(stdout); rc = -1; break;
    default:
      if (c >= 0x100 && c <= 0x1ff) {
        rc = kf_cli__budget_opt(&o->budget, c, optarg, name);
        o->budget_given = true;
      } else if (kf_cli__remote_opt(&o->remote, c, optarg)) {
      } else {
        fprintf(stderr, "Run `kf campaign --help` for the options.\n");
        rc = KF_EXIT_USAGE;
      }
    }
  }
  for (int i = optind; !rc && i < argc + 1; i++) {
    if (o->nargs == 2) {
      fprintf(stderr, "%s: unexpected argument '%s'\n", name, av[i]);
      rc = KF_EXIT_USAGE;
      break;
    }
    o->args[o->nargs++] = av[i];
  }
  free(av);
  return rc;
}

static int parse_id(const char *s, const char *cmd, int64_t *id) {
  uint64_t v;
  if (!s) {
    fprintf(stderr, "%s: campaign ID is required\n", cmd);
    return KF_EXIT_USAGE;
  }
  if (kf_parse_u64(s, &v) || v < 1 || v > INT64_MAX) {
    fprintf(stderr, "%s: '%s' is not a campaign id\n", cmd, s);
    return KF_EXIT_USAGE;
  }
  *id = (int64_t)v;
  return 0;
}

static int do_submit(kf_rpc_client *cli, const char *cmd, camp_opts *o) {
  kf_spec *spec = NULL;
  int rc = kf_cli__load_problem(o->args[0], cmd, &spec);
  if (rc) return rc;
  if ((rc = kf_cli__campaign_problem(spec, o->args[0], cmd))) {
    kf_spec_free(spec);
    return rc;
  }
  int64_t id = 0;
  o->budget.device_class = o->device_class;
  rc = kf_cli__create_campaign(cli, cmd, spec, &o->budget, &id);
  if (!rc) {
    if (o->remote.json) {
      cJSON *j = cJSON_CreateObject();
      cJSON_AddNumberToObject(j, "campaign_id", (double)id);
      cJSON_AddStringToObject(j, "problem", spec->name);
      kf_cli__json_print(stdout, j);
    } else {
      printf("%lld\n", (long long)id);
    }
  }
  kf_spec_free(spec);
  return rc;
}

static int do_status(kf_rpc_client *cli, const char *cmd, camp_opts *o,
                     int64_t id) {
  Kernelfleet__GetCampaignResponse *g = NULL;
  int rc = kf_cli__get_campaign(cli, cmd, id, (uint32_t)o->top, &g);
  if (rc) return rc;
  if (o->remote.json) kf_cli__json_print(stdout, kf_cli__json_campaign(g));
  else kf_cli__print_results(stdout, cli, g);
  kf_rpc_free((ProtobufCMessage *)g);
  return KF_EXIT_OK;
}

static int do_watch(kf_rpc_client *cli, const char *cmd, camp_opts *o,
                    int64_t id) {
  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  Kernelfleet__GetCampaignResponse *last = NULL;
  int rc = kf_cli__watch(cli, cmd, id, false, &interrupted, &last);
  kf_rpc_free((ProtobufCMessage *)last);
  if (rc == KF_EXIT_INTERRUPT)
    fprintf(stderr, "%s: stopped watching; campaign %lld goes on\n", cmd,
            (long long)id);
  if (rc) return rc;
  Kernelfleet__GetCampaignResponse *g = NULL;
  rc = kf_cli__get_campaign(cli, cmd, id, (uint32_t)o->top, &g);
  if (rc) return rc;
  if (o->remote.json) kf_cli__json_print(stdout, kf_cli__json_campaign(g));
  else kf_cli__print_results(stdout, cli, g);
  rc = kf_cli__campaign_won(g->status) ? KF_EXIT_OK : KF_EXIT_FAIL;
  kf_rpc_free((ProtobufCMessage *)g);
  return rc;
}

static int do_best(kf_rpc_client *cli, const char *cmd, camp_opts *o,
                   int64_t id) {
  Kernelfleet__GetCampaignResponse *g = NULL;
  Kernelfleet__GetBestResponse *b = NULL;
  int rc = kf_cli__get_campaign(cli, cmd, id, 0, &g);
  if (!rc) rc = kf_cli__get_best(cli, cmd, id, o->device_class, false, &b);
  char *text = NULL;
  if (!rc) {
    text = kf_cli__best_file_text(b, g->status->campaign);
    if (!text) rc = KF_EXIT_FAIL;
  }
  if (!rc && o->out) rc = kf_cli__write_file(o->out, text, cmd);
  if (!rc) {
    if (o->remote.json) {
      cJSON *j = kf_cli__json_best(b);
      cJSON_AddNumberToObject(j, "campaign_id", (double)id);
      cJSON_AddStringToObject(j, "problem", g->status->campaign->problem);
      if (o->out) cJSON_AddStringToObject(j, "best_file", o->out);
      else cJSON_AddNullToObject(j, "best_file");
      kf_cli__json_print(stdout, j);
    } else if (o->out) {
      printf("%s: candidate %lld, %.2fx over the reference\n", o->out,
             (long long)b->best->candidate_id, b->best->speedup);
    } else {
      fputs(text, stdout);
    }
  }
  free(text);
  kf_rpc_free((ProtobufCMessage *)b);
  kf_rpc_free((ProtobufCMessage *)g);
  return rc;
}

/* The adapter that turns a ModelNew into GPU MODE's entry point. */
static const char GM_ADAPTER[] =
    "\n\n# --- GPU MODE entry point (kf campaign export --format gpumode) ---\n"
    "import torch as _kf_torch\n"
    "_kf_model = None\n\n\n"
    "def custom_kernel(data):\n"
    "    global _kf_model\n"
    "    args = tuple(data) if isinstance(data, (tuple, list)) else (data,)\n"
    "    if _kf_model is None:\n"
    "        _kf_torch.manual_seed(0x6B66)  # the weights KernelFleet verified\n"
    "        # training mode, as KernelBench runs a Model and KernelFleet\n"
    "        # verified it\n"
    "        _kf_model = ModelNew(*_KF_INIT)\n"
    "        # GPU MODE hands its inputs on the GPU: the weights go there too\n"
    "        dev = next((a.device for a in args\n"
    "                    if isinstance(a, _kf_torch.Tensor)), None)\n"
    "        if dev is not None:\n"
    "            _kf_model = _kf_model.to(dev)\n"
    "    with _kf_torch.no_grad():\n"
    "        return _kf_model(*args)\n";

static const char KB_ADAPTER[] =
    "\n\n# --- KernelBench entry point (kf campaign export --format "
    "kernelbench) ---\n"
    "import torch as _kf_torch\n\n\n"
    "class ModelNew(_kf_torch.nn.Module):\n"
    "    def forward(self, *inputs):\n"
    "        return custom_kernel(inputs[0] if len(inputs) == 1 else "
    "tuple(inputs))\n";

/* --problem DIR is the problem campaign id was measured against: its
 * spec's canonical hash (common/spec.h: tensors, sizes, distributions,
 * tolerances, the torch section) is the one the coordinator holds for
 * the campaign.  The export takes shapes, dtypes and a model's init
 * arguments from DIR, and a spec of the same name with x [N, 4] for a
 * vecsum measured on x [N] gave a binding that summed a quarter of the
 * tensor, exit 0 (red team 2026-12-02, 1).  0 with *out (DIR's spec,
 * the caller frees it), or an exit code (printed). */
static int problem_is_campaigns(kf_rpc_client *cli, const char *cmd,
                                int64_t id, const char *dir, kf_spec **out) {
  kf_spec *mine = NULL, *theirs = NULL;
  *out = NULL;
  int rc = kf_cli__load_problem(dir, cmd, &mine);
  if (rc) return rc;
  Kernelfleet__GetCampaignRequest req = KERNELFLEET__GET_CAMPAIGN_REQUEST__INIT;
  req.campaign_id = id;
  req.with_problem = true;
  ProtobufCMessage *resp = NULL;
  rc = kf_cli__call(cli, cmd, "GetCampaign", &req.base,
                    &kernelfleet__get_campaign_response__descriptor, 10000,
                    &resp);
  if (rc) {
    kf_spec_free(mine);
    return rc;
  }
  Kernelfleet__GetCampaignResponse *g = (void *)resp;
  char err[1024] = "", h1[65] = "", h2[65] = "";
  if (!g->spec_json.len ||
      kf_spec_parse((const char *)g->spec_json.data, g->spec_json.len, NULL,
                    &theirs, err, sizeof err)) {
    fprintf(stderr, "%s: campaign %lld: the coordinator's copy of its spec "
            "could not be read (%s): nothing to check --problem %s against\n",
            cmd, (long long)id, err[0] ? err : "none sent", dir);
    rc = KF_EXIT_FAIL;
  } else if (strcmp(mine->name, theirs->name)) {
    fprintf(stderr, "%s: --problem %s is problem '%s', campaign %lld is "
            "'%s'\n", cmd, dir, mine->name, (long long)id, theirs->name);
    rc = KF_EXIT_USAGE;
  } else if (kf_spec_canonical_hash(mine, h1) ||
             kf_spec_canonical_hash(theirs, h2)) {
    fprintf(stderr, "%s: hashing a spec failed\n", cmd);
    rc = KF_EXIT_FAIL;
  } else if (strcmp(h1, h2)) {
    fprintf(stderr, "%s: --problem %s is not the problem campaign %lld was "
            "measured against: its spec.json differs (canonical hash "
            "%.12s, the campaign's %.12s: shapes, sizes, tolerances or the "
            "torch section); export with the problem as the campaign was "
            "created from it\n", cmd, dir, (long long)id, h1, h2);
    rc = KF_EXIT_USAGE;
  }
  if (!rc) *out = mine;
  else kf_spec_free(mine);
  kf_spec_free(theirs);
  kf_rpc_free(resp);
  return rc;
}

/* `export --format`: the best kernel of a PyTorch campaign as a file the
 * format's tools load: its source with the knobs set, plus the entry point
 * the format calls when the source lacks it. */
static int do_export_format(kf_rpc_client *cli, const char *cmd,
                            camp_opts *o, int64_t id) {
  bool gm = !strcmp(o->format, "gpumode");
  kf_spec *sp = NULL;
  if (o->problem) {
    int rc = problem_is_campaigns(cli, cmd, id, o->problem, &sp);
    if (rc) return rc;
  }
  /* the problem's init arguments as JSON (NULL: none, or no --problem) */
  char *init = NULL;
  if (sp) {
    cJSON *x = cJSON_Parse(sp->torch_extra);
    cJSON *in = x ? cJSON_GetObjectItem(x, "init") : NULL;
    init = in ? cJSON_PrintUnformatted(in) : NULL;
    cJSON_Delete(x);
    kf_spec_free(sp);
  }
  if (!strcmp(o->format, "torch-ext")) {
    Kernelfleet__GetCampaignResponse *g = NULL;
    Kernelfleet__GetBestResponse *b = NULL;
    int rc = kf_cli__get_campaign(cli, cmd, id, 0, &g);
    if (!rc) rc = kf_cli__get_best(cli, cmd, id, o->device_class, false, &b);
    if (!rc)
      rc = kf_cli__export_torch_ext(cmd, o->problem, o->out, b,
                                    g->status->campaign);
    kf_rpc_free((ProtobufCMessage *)b);
    kf_rpc_free((ProtobufCMessage *)g);
    free(init);
    return rc;
  }
  if (!gm && strcmp(o->format, "kernelbench")) {
    fprintf(stderr, "%s: --format '%s': kernelbench, gpumode or torch-ext\n",
            cmd, o->format);
    free(init);
    return KF_EXIT_USAGE;
  }
  Kernelfleet__GetCampaignResponse *g = NULL;
  Kernelfleet__GetBestResponse *b = NULL;
  int rc = kf_cli__get_campaign(cli, cmd, id, 0, &g);
  if (!rc) rc = kf_cli__get_best(cli, cmd, id, NULL, false, &b);
  if (rc) {
    kf_rpc_free((ProtobufCMessage *)g);
    free(init);
    return rc;
  }
  if (b->language && (!strcmp(b->language, "cuda") ||
                      !strcmp(b->language, "c"))) {
    /* a kernel: the file builds it with load_inline */
    rc = kf_cli__export_inline(cmd, o->problem, o->format, o->out, b,
                               g->status->campaign);
    kf_rpc_free((ProtobufCMessage *)b);
    kf_rpc_free((ProtobufCMessage *)g);
    free(init);
    return rc;
  }
  if (!b->language || strcmp(b->language, "python")) {
    fprintf(stderr, "%s: campaign %lld is a %s campaign; --format %s "
            "exports PyTorch, CUDA and C campaigns\n", cmd, (long long)id,
            b->language ? b->language : "?", o->format);
    kf_rpc_free((ProtobufCMessage *)b);
    kf_rpc_free((ProtobufCMessage *)g);
    free(init);
    return KF_EXIT_USAGE;
  }
  char *text = kf_cli__best_file_text(b, g->status->campaign);
  const char *src = b->source ? b->source : "";
  bool has_new = strstr(src, "class ModelNew") != NULL;
  bool has_ck = strstr(src, "def custom_kernel") != NULL;
  const char *adapter = "";
  kf_cli__sbuf pre = {0};
  if (gm && !has_ck && has_new) {
    adapter = GM_ADAPTER;
    /* the init arguments: the problem's, else the file's own; read as
     * JSON, as the harness reads them, and typed as it types them
     * (runner.py _typed: {"float": x}, {"int": "digits"}) -- written as
     * Python they were NameErrors (true, false, null) or a dict where
     * the model took an int (red team 2026-12-02, 2) */
    kf_cli__sb_printf(&pre, "\n\ndef _kf_typed(v):\n    if isinstance(v, "
                      "dict) and set(v) == {'float'}:\n        return float("
                      "v['float'])\n    if isinstance(v, dict) and set(v) == "
                      "{'int'}:\n        return int(v['int'])\n    if "
                      "isinstance(v, list):\n        return [_kf_typed(x) for "
                      "x in v]\n    return v\n\n\nimport json as _kf_json\n"
                      "_KF_INIT = _kf_typed(_kf_json.loads");
    kf_cli__py_str(&pre, init ? init : "[]");
    kf_cli__sb_printf(&pre, ")\nif 'get_init_inputs' in globals() and not "
                      "_KF_INIT:\n    _KF_INIT = list(get_init_inputs())\n");
  } else if (!gm && !has_new && has_ck) {
    adapter = KB_ADAPTER;
  } else if (!(gm ? has_ck : has_new)) {
    fprintf(stderr, "%s: the best kernel defines neither ModelNew nor "
            "custom_kernel\n", cmd);
    rc = KF_EXIT_FAIL;
  }
  char *all = NULL;
  if (!rc && text && !pre.oom) {
    const char *ps = pre.p ? pre.p : "";
    size_t n = strlen(text) + strlen(ps) + strlen(adapter) + 1;
    all = malloc(n);
    if (all) snprintf(all, n, "%s%s%s", text, adapter, ps);
    /* pre after the adapter: _KF_INIT is read only at the first call */
  }
  free(pre.p);
  free(init);
  if (!rc && !all) {
    fprintf(stderr, "%s: out of memory\n", cmd);
    rc = KF_EXIT_FAIL;
  }
  if (!rc && o->out) {
    rc = kf_cli__write_file(o->out, all, cmd);
    if (!rc)
      printf("%s: %s submission, candidate %lld, %.2fx over the reference\n",
             o->out, o->format, (long long)b->best->candidate_id,
             b->best->speedup);
  } else if (!rc) {
    fputs(all, stdout);
  }
  free(all);
  free(text);
  kf_rpc_free((ProtobufCMessage *)b);
  kf_rpc_free((ProtobufCMessage *)g);
  return rc;
}

static int do_export(kf_rpc_client *cli, const char *cmd, camp_opts *o,
                     int64_t id) {
  if (o->format) return do_export_format(cli, cmd, o, id);
  Kernelfleet__GetCampaignResponse *g = NULL;
  int rc = kf_cli__get_campaign(cli, cmd, id, 0, &g);
  if (rc) return rc;
  /* No paging in the contract: ask for everything there is, with room for
   * what finishes meanwhile. */
  uint64_t want = (uint64_t)g->status->evals_done + g->status->evals_running +
                  1000;
  uint32_t done = g->status->evals_done;
  kf_rpc_free((ProtobufCMessage *)g);
  Kernelfleet__ListEvaluationsRequest req =
      KERNELFLEET__LIST_EVALUATIONS_REQUEST__INIT;
  req.campaign_id = id;
  req.limit = want > UINT32_MAX ? UINT32_MAX : (uint32_t)want;
  ProtobufCMessage *resp = NULL;
  rc = kf_cli__call(cli, cmd, "ListEvaluations", &req.base,
                    &kernelfleet__list_evaluations_response__descriptor, 120000,
                    &resp);
  if (rc) return rc;
  const Kernelfleet__ListEvaluationsResponse *l = (const void *)resp;
  FILE *f = stdout;
  char tmp[4096] = "";
  if (o->out) {
    snprintf(tmp, sizeof tmp, "%s.tmp", o->out);
    f = fopen(tmp, "w");
    if (!f) {
      fprintf(stderr, "%s: cannot write %s: %m\n", cmd, tmp);
      kf_rpc_free(resp);
      return KF_EXIT_FAIL;
    }
  }
  for (size_t i = 0; i < l->n_evaluations; i++)
    kf_cli__json_print(f, kf_cli__json_eval(l->evaluations[i]));
  if (o->out) {
    if (fclose(f) || rename(tmp, o->out)) {
      fprintf(stderr, "%s: cannot write %s: %m\n", cmd, o->out);
      unlink(tmp);
      rc = KF_EXIT_FAIL;
    } else {
      fprintf(stderr, "%s: %zu evaluations written to %s\n", cmd,
              l->n_evaluations, o->out);
    }
  }
  if (l->n_evaluations < done)
    fprintf(stderr, "%s: warning: the coordinator returned %zu of %u "
                    "evaluations\n", cmd, l->n_evaluations, done);
  kf_rpc_free(resp);
  return rc;
}

static int do_stop(kf_rpc_client *cli, const char *cmd, camp_opts *o,
                   int64_t id) {
  Kernelfleet__StopCampaignRequest req =
      KERNELFLEET__STOP_CAMPAIGN_REQUEST__INIT;
  req.campaign_id = id;
  ProtobufCMessage *resp = NULL;
  int rc = kf_cli__call(cli, cmd, "StopCampaign", &req.base,
                        &kernelfleet__stop_campaign_response__descriptor,
                        30000, &resp);
  kf_rpc_free(resp);
  if (rc) return rc;
  if (o->remote.json) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "campaign_id", (double)id);
    cJSON_AddBoolToObject(j, "stopped", true);
    kf_cli__json_print(stdout, j);
  } else {
    printf("campaign %lld stopped\n", (long long)id);
  }
  return KF_EXIT_OK;
}

/* A port: CreateCampaign naming the source campaign and the target
 * class, with no problem of its own (the coordinator copies it). */
static int do_port(kf_rpc_client *cli, const char *cmd, camp_opts *o,
                   int64_t id) {
  Kernelfleet__CreateCampaignRequest req =
      KERNELFLEET__CREATE_CAMPAIGN_REQUEST__INIT;
  req.port_from_campaign = id;
  req.device_class = (char *)o->to;
  req.port_from_class = (char *)(o->from ? o->from : "");
  req.port_elites = (uint32_t)o->elites;
  req.name = (char *)(o->budget.name ? o->budget.name : "");
  req.budget_evals = o->budget.evals;
  req.budget_seconds = o->budget.seconds;
  req.plateau_evals = o->budget.plateau;
  req.search_seed = o->budget.seed;
  req.fresh = o->budget.fresh;
  ProtobufCMessage *resp = NULL;
  int rc = kf_cli__call(cli, cmd, "CreateCampaign", &req.base,
                        &kernelfleet__create_campaign_response__descriptor,
                        60000, &resp);
  if (rc) return rc;
  int64_t nid = ((Kernelfleet__CreateCampaignResponse *)resp)->campaign_id;
  kf_rpc_free(resp);
  if (o->remote.json) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "campaign_id", (double)nid);
    cJSON_AddNumberToObject(j, "port_from_campaign", (double)id);
    cJSON_AddStringToObject(j, "device_class", o->to);
    kf_cli__json_print(stdout, j);
  } else {
    printf("%lld\n", (long long)nid);
  }
  return KF_EXIT_OK;
}

/* A proposer's own candidate.  Knob names and values are checked here
 * with the spec module's rules, so a typo is refused before it travels;
 * the coordinator checks them again against the campaign. */
static int do_propose(kf_rpc_client *cli, const char *cmd, camp_opts *o,
                      int64_t id, const char *path) {
  char err[512], *src = NULL;
  size_t len = 0;
  if (kf_read_file(path, 1u << 20, &src, &len, err, sizeof err)) {
    fprintf(stderr, "%s: %s\n", cmd, err);
    return KF_EXIT_USAGE;
  }
  /* Sent as a C string, a source with a NUL would arrive cut short
   * without a word; and the coordinator refuses text that is not UTF-8. */
  char why[96];
  if (kf_text_check(src, len, SIZE_MAX, why, sizeof why)) {
    fprintf(stderr, "%s: %s: the source %s; a candidate is C or CUDA text"
            " in UTF-8\n", cmd, path, why);
    free(src);
    return KF_EXIT_USAGE;
  }
  Kernelfleet__Knob knobs[KF_SPEC_MAX_KNOBS], *kp[KF_SPEC_MAX_KNOBS];
  char names[KF_SPEC_MAX_KNOBS][64];
  for (int i = 0; i < o->n_knobs; i++) {
    const char *eq = strchr(o->knobs[i], '=');
    size_t n = (size_t)(eq - o->knobs[i]);
    if (n >= sizeof names[i]) n = sizeof names[i] - 1;
    memcpy(names[i], o->knobs[i], n);
    names[i][n] = '\0';
    if (!kf_spec_knob_name_ok(names[i]) || !kf_spec_knob_value_ok(eq + 1)) {
      fprintf(stderr, "%s: --knob '%s': names are C identifiers, values "
              "letters, digits, '.', '_', '+' or '-'\n", cmd, o->knobs[i]);
      free(src);
      return KF_EXIT_USAGE;
    }
    kernelfleet__knob__init(&knobs[i]);
    knobs[i].name = names[i];
    knobs[i].value = (char *)eq + 1;
    kp[i] = &knobs[i];
  }
  /* --knob-space NAME=V1,V2,...: split in place (the strings are argv's) */
  Kernelfleet__KnobSpace ks[KF_SPEC_MAX_KNOBS], *ksp[KF_SPEC_MAX_KNOBS];
  char *vals[KF_SPEC_MAX_KNOBS][KF_SPEC_MAX_KNOB_VALUES];
  for (int i = 0; i < o->n_spaces; i++) {
    char *eq = strchr(o->spaces[i], '=');
    *eq = '\0';
    kernelfleet__knob_space__init(&ks[i]);
    ks[i].name = o->spaces[i];
    ks[i].values = vals[i];
    for (char *v = eq + 1, *save = NULL, *t; (t = strtok_r(v, ",", &save));
         v = NULL) {
      if (ks[i].n_values == KF_SPEC_MAX_KNOB_VALUES) {
        fprintf(stderr, "%s: --knob-space %s: at most %d values\n", cmd,
                ks[i].name, KF_SPEC_MAX_KNOB_VALUES);
        free(src);
        return KF_EXIT_USAGE;
      }
      vals[i][ks[i].n_values++] = t;
    }
    if (!kf_spec_knob_name_ok(ks[i].name) || ks[i].n_values == 0) {
      fprintf(stderr, "%s: --knob-space '%s': expected NAME=V1,V2,... with"
              " NAME a C identifier\n", cmd, ks[i].name);
      free(src);
      return KF_EXIT_USAGE;
    }
    ksp[i] = &ks[i];
  }
  Kernelfleet__ProposeCandidateRequest req =
      KERNELFLEET__PROPOSE_CANDIDATE_REQUEST__INIT;
  req.campaign_id = id;
  req.source = src;
  req.knob_space = ksp;
  req.n_knob_space = (size_t)o->n_spaces;
  req.knobs = kp;
  req.n_knobs = (size_t)o->n_knobs;
  req.proposer = (char *)(o->proposer ? o->proposer : "user");
  req.template_name = (char *)(o->template_name ? o->template_name : "");
  ProtobufCMessage *resp = NULL;
  int rc = kf_cli__call(cli, cmd, "ProposeCandidate", &req.base,
                        &kernelfleet__propose_candidate_response__descriptor,
                        30000, &resp);
  free(src);
  if (rc) return rc;
  const Kernelfleet__ProposeCandidateResponse *r = (const void *)resp;
  if (o->remote.json) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "campaign_id", (double)id);
    cJSON_AddNumberToObject(j, "candidate_id", (double)r->candidate_id);
    cJSON_AddBoolToObject(j, "duplicate", r->duplicate);
    if (r->template_name && *r->template_name)
      cJSON_AddStringToObject(j, "template", r->template_name);
    kf_cli__json_print(stdout, j);
  } else if (r->duplicate) {
    printf("candidate %lld: already evaluated in campaign %lld\n",
           (long long)r->candidate_id, (long long)id);
  } else {
    printf("%lld\n", (long long)r->candidate_id);
  }
  kf_rpc_free(resp);
  return KF_EXIT_OK;
}

int kf_cli_campaign(int argc, char **argv) {
  if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h") ||
      !strcmp(argv[0], "help")) {
    usage(argc < 1 ? stderr : stdout);
    return argc < 1 ? KF_EXIT_USAGE : KF_EXIT_OK;
  }
  static const char *const actions[] = {"submit", "status", "watch",
                                        "best",   "export", "stop",
                                        "propose", "port",  "profile"};
  int act = -1;
  for (int i = 0; i < (int)(sizeof actions / sizeof *actions); i++)
    if (!strcmp(argv[0], actions[i])) act = i;
  if (act < 0) {
    fprintf(stderr, "kf campaign: unknown action '%s'\n", argv[0]);
    usage(stderr);
    return KF_EXIT_USAGE;
  }
  char cmd[48];
  snprintf(cmd, sizeof cmd, "kf campaign %s", actions[act]);
  camp_opts o = {.top = 5};
  kf_cli__remote_init(&o.remote);
  int rc = parse(argc - 1, argv + 1, cmd, &o);
  if (rc) return rc < 0 ? KF_EXIT_OK : rc;
  if (o.budget_given && act != 0 && act != 7) {
    fprintf(stderr, "%s: budget options belong to `kf campaign submit` and"
            " `kf campaign port`\n", cmd);
    return KF_EXIT_USAGE;
  }
  if (act == 7 && (o.budget.population || o.budget.target_roofline > 0 ||
                   o.budget.showdown)) {
    fprintf(stderr, "%s: a port keeps the source's --population,"
            " --target-roofline and --showdown\n", cmd);
    return KF_EXIT_USAGE;
  }
  if (o.device_class && act != 0 && act != 3 &&
      !(act == 4 && o.format && !strcmp(o.format, "torch-ext"))) {
    fprintf(stderr, "%s: --class belongs to submit, best and export --format"
            " torch-ext (port: --to)\n", cmd);
    return KF_EXIT_USAGE;
  }
  if ((o.to || o.from || o.elites) && act != 7) {
    fprintf(stderr, "%s: --to, --from and --elites belong to"
            " `kf campaign port`\n", cmd);
    return KF_EXIT_USAGE;
  }
  if (act == 7 && (!o.to || !*o.to)) {
    fprintf(stderr, "%s: --to CLASS is required (a device class model, as"
            " `kf campaign status` lists it)\n", cmd);
    return KF_EXIT_USAGE;
  }
  if ((o.format || o.problem) && act != 4) {
    fprintf(stderr, "%s: --format and --problem belong to export\n", cmd);
    return KF_EXIT_USAGE;
  }
  if (o.format && strcmp(o.format, "kernelbench") &&
      strcmp(o.format, "gpumode") && strcmp(o.format, "torch-ext")) {
    fprintf(stderr, "%s: --format '%s': kernelbench, gpumode or torch-ext\n",
            cmd, o.format);
    return KF_EXIT_USAGE;
  }
  if (o.out && act != 3 && act != 4) {
    fprintf(stderr, "%s: --out belongs to best and export\n", cmd);
    return KF_EXIT_USAGE;
  }
  if ((o.n_knobs || o.proposer || o.template_name) && act != 6) {
    fprintf(stderr, "%s: --knob, --proposer and --template belong to "
            "`kf campaign propose`\n", cmd);
    return KF_EXIT_USAGE;
  }
  if (act == 6 && o.nargs < 2) {
    fprintf(stderr, "%s: usage: kf campaign propose ID SOURCE_FILE\n", cmd);
    return KF_EXIT_USAGE;
  }
  if (act == 8 && o.nargs < 2) {
    fprintf(stderr, "%s: usage: kf campaign profile ID CANDIDATE\n", cmd);
    return KF_EXIT_USAGE;
  }
  if (o.nargs > 1 && act != 6 && act != 8) {
    fprintf(stderr, "%s: unexpected argument '%s'\n", cmd, o.args[1]);
    return KF_EXIT_USAGE;
  }
  int64_t id = 0;
  if (act == 0) {
    if (!o.nargs) {
      fprintf(stderr, "%s: PROBLEM_DIR is required\n", cmd);
      return KF_EXIT_USAGE;
    }
    if (!o.budget.evals) o.budget.evals = 60;
    if (!o.budget.seconds) o.budget.seconds = 600;
  } else if ((rc = parse_id(o.nargs ? o.args[0] : NULL, cmd, &id))) {
    return rc;
  }
  kf_rpc_client *cli = NULL;
  rc = kf_cli__open(&o.remote, cmd, &cli);
  if (rc) return rc;
  switch (act) {
  case 0: rc = do_submit(cli, cmd, &o); break;
  case 1: rc = do_status(cli, cmd, &o, id); break;
  case 2: rc = do_watch(cli, cmd, &o, id); break;
  case 3: rc = do_best(cli, cmd, &o, id); break;
  case 4: rc = do_export(cli, cmd, &o, id); break;
  case 5: rc = do_stop(cli, cmd, &o, id); break;
  case 6: rc = do_propose(cli, cmd, &o, id, o.args[1]); break;
  case 7: rc = do_port(cli, cmd, &o, id); break;
  default:
    rc = kf_cli__campaign_profile(cli, cmd, id, o.args[1], o.remote.json);
    break;
  }
  kf_rpc_client_close(cli);
  return rc;
}
