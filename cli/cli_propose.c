/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_propose.c -- `kf propose llm|usage`: the built-in llm proposer
 * against a campaign on a coordinator, and what proposers spent; plus the
 * llm options and the round loop that `kf run` shares.
 *
 * The API key is read from a file (--llm-key-file, mode 600) or the
 * environment (KF_LLM_KEY, OPENAI_API_KEY), never from argv, which every
 * user of the machine can read in ps.  Without --llm-url nothing here
 * runs, and `kf run` works as it always did.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_internal.h"
#include "err.h"
#include "llm.h"
#include "proposer.h"
#include "token.h"
#include "util.h"

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { (void)sig; interrupted = 1; }

static void usage(FILE *f) {
  fprintf(f,
"usage: kf propose llm --campaign ID --llm-url URL --llm-model NAME [options]\n"
"       kf propose usage --campaign ID [--limit N] [--json]\n"
"\n"
"llm: asks an OpenAI-compatible chat-completions endpoint for new kernels\n"
"for a running campaign and proposes them (ProposeCandidate): each is\n"
"compiled, verified and timed like any other candidate.  A round fetches\n"
"the campaign's context (problem, ABI, reference, best kernels per device\n"
"class, recent failures, devices) and sends one request per evolution\n"
"operator -- improve a kernel, combine two, apply a prescription, port one\n"
"to another device class.  A kernel that declares knobs (a ```json block)\n"
"becomes a template of the campaign whose knobs the search tunes.  Every\n"
"request is accounted in the campaign: tokens, cost, outcome and reason.\n"
"\n"
"usage: tokens, cost and outcomes of the campaign's proposer requests,\n"
"their round-trip latency (median, p90, max: first request to last reply,\n"
"retries included), and the profiling pass's cost per profiled evaluation\n"
"(its wall time, kept apart from the evaluations).\n"
"\n"
"Options:\n"
"  --campaign ID         the campaign\n"
KF_CLI__LLM_HELP
"  --coordinator H:P     [$KF_COORDINATOR, else 127.0.0.1:7070]\n"
KF_CLI__REMOTE_HELP
"  --limit N             usage: recent requests listed          [20]\n"
"  --json                usage: one JSON object\n"
"  --quiet               llm: no progress lines\n"
"\n"
"Exit codes: 0 ok, 1 no proposal was accepted, 2 usage error,\n"
"            3 coordinator unreachable, 4 interrupted.\n");
}

static int parse_range(const char *arg, uint32_t lo, uint32_t hi,
                       const char *opt, const char *cmd, uint32_t *out) {
  uint64_t v;
  if (kf_parse_u64(arg, &v) || v < lo || v > hi) {
    fprintf(stderr, "%s: %s '%s': expected %u..%u\n", cmd, opt, arg, lo, hi);
    return KF_EXIT_USAGE;
  }
  *out = (uint32_t)v;
  return 0;
}

static int parse_u32(const char *arg, uint32_t max, const char *opt,
                     const char *cmd, uint32_t *out) {
  return parse_range(arg, 0, max, opt, cmd, out);
}

static int parse_dbl(const char *arg, double lo, double hi, const char *opt,
                     const char *cmd, double *out) {
  char *end;
  errno = 0;
  double v = strtod(arg, &end);
  if (errno || end == arg || *end || !isfinite(v) || v < lo || v > hi) {
    fprintf(stderr, "%s: %s '%s': expected a number in [%g, %g]\n", cmd, opt,
            arg, lo, hi);
    return KF_EXIT_USAGE;
  }
  *out = v;
  return 0;
}

int kf_cli__llm_opt(kf_cli__llm *l, int c, const char *arg, const char *cmd) {
  uint32_t u = 0;
  int rc = 0;
  switch (c) {
  case 0x300: l->url = arg; break;
  case 0x301: l->model = arg; break;
  case 0x302: l->key_file = arg; break;
  case 0x303:
    rc = parse_range(arg, 1, 16, "--llm-requests", cmd, &l->requests);
    break;
  case 0x304:
    rc = parse_range(arg, 1, 16, "--llm-parallel", cmd, &l->parallel);
    break;
  case 0x305: rc = parse_u32(arg, 86400, "--llm-interval", cmd, &l->interval_s); break;
  case 0x306:
    rc = parse_range(arg, 1, 3600, "--llm-timeout", cmd, &l->timeout_s);
    break;
  case 0x307:
    rc = parse_u32(arg, 20, "--llm-retries", cmd, &u);
    l->retries = (int)u;
    break;
  case 0x308: rc = parse_u32(arg, 1000000, "--llm-max-tokens", cmd, &l->max_tokens); break;
  case 0x309: rc = parse_dbl(arg, 0, 2, "--llm-temperature", cmd, &l->temperature); break;
  case 0x30a: rc = parse_dbl(arg, 0, 1e6, "--llm-price-in", cmd, &l->price_in); break;
  case 0x30b: rc = parse_dbl(arg, 0, 1e6, "--llm-price-out", cmd, &l->price_out); break;
  case 0x30c: rc = parse_u32(arg, 100000, "--rounds", cmd, &l->rounds); break;
  case 0x30d: {
    char err[160];
    if (kf_proposer_ops_parse(arg, &l->ops, err, sizeof err)) {
      fprintf(stderr, "%s: --llm-ops '%s': %s\n", cmd, arg, err);
      rc = KF_EXIT_USAGE;
    }
    break;
  }
  default: rc = KF_EXIT_USAGE;
  }
  return rc;
}

int kf_cli__llm_proposer(const kf_cli__llm *l, const char *cmd,
                         volatile sig_atomic_t *cancel, kf_proposer **out) {
  char err[512];
  char *key = NULL;
  if (!l->url || !l->model) {
    fprintf(stderr, "%s: --llm-url and --llm-model go together\n", cmd);
    return KF_EXIT_USAGE;
  }
  if (l->key_file) {
    if (kf_token_read_file_alloc(l->key_file, &key, err, sizeof err)) {
      fprintf(stderr, "%s: --llm-key-file: %s\n", cmd, err);
      return KF_EXIT_USAGE;
    }
  } else {
    const char *env = kf_getenv_or("KF_LLM_KEY", NULL);
    if (!env) env = kf_getenv_or("OPENAI_API_KEY", NULL);
    if (env && !(key = strdup(env))) {
      fprintf(stderr, "%s: out of memory\n", cmd);
      return KF_EXIT_FAIL;
    }
  }
  kf_llm_opts o = {
      .url = l->url, .model = l->model, .key = key,
      .timeout_ms = (int)(l->timeout_s ? l->timeout_s : 120) * 1000,
      .retries = l->retries < 0 ? 3 : l->retries,
      .price_in_1k = l->price_in, .price_out_1k = l->price_out,
      .max_tokens = (int)l->max_tokens, .temperature = l->temperature,
      .cancel = cancel};
  int rc = kf_llm_new(&o, out, err, sizeof err);
  if (key) {
    explicit_bzero(key, strlen(key));
    free(key);
  }
  if (rc) {
    fprintf(stderr, "%s: %s\n", cmd, err);
    return rc == KF_EINVAL ? KF_EXIT_USAGE : KF_EXIT_FAIL;
  }
  return 0;
}

/* Sleeps s seconds, waking early when *stop is set. */
static void nap(uint32_t s, volatile sig_atomic_t *stop) {
  for (uint32_t i = 0; i < s * 10 && !(stop && *stop); i++) {
    struct timespec ts = {0, 100000000L};
    nanosleep(&ts, NULL);
  }
}

int kf_cli__llm_rounds(kf_rpc_client *cli, kf_proposer *p, int64_t id,
                       const kf_cli__llm *l, const char *cmd, bool quiet,
                       volatile sig_atomic_t *stop) {
  kf_proposer_round_opts ro = {.requests = l->requests,
                               .parallel = l->parallel, .ops = l->ops,
                               .quiet = quiet};
  uint32_t proposed = 0;
  for (uint32_t r = 0; !l->rounds || r < l->rounds; r++) {
    if (stop && *stop) return KF_EXIT_INTERRUPT;
    kf_proposer_round_stats st;
    char err[512] = "";
    int rc = kf_proposer_round(cli, p, id, r, &ro, &st, err, sizeof err);
    if (rc) {
      fprintf(stderr, "%s: round %u: %s\n", cmd, r + 1, err);
      return kf_cli__exit_for(rc);
    }
    proposed += st.proposed;
    if (!quiet)
      fprintf(stderr, "%s: round %u: %u requests, %u proposed, %u"
              " duplicates, %u failed\n", cmd, r + 1, st.calls, st.proposed,
              st.duplicates, st.failed);
    if (st.ended) {
      if (!quiet)
        fprintf(stderr, "%s: campaign %" PRId64 " takes no more proposals\n",
                cmd, id);
      break;
    }
    if (l->interval_s && (!l->rounds || r + 1 < l->rounds))
      nap(l->interval_s, stop);
  }
  return proposed ? KF_EXIT_OK : KF_EXIT_FAIL;
}

typedef struct {
  kf_cli__remote remote;
  kf_cli__llm llm;
  int64_t campaign;
  uint32_t limit;
  bool quiet;
} prop_opts;

static int parse(int argc, char **argv, const char *name, prop_opts *o) {
  static const struct option opts[] = {
      KF_CLI__LLM_OPTIONS,
      {"campaign", required_argument, 0, 'C'},
      {"coordinator", required_argument, 0, 'c'},
      KF_CLI__REMOTE_OPTIONS,
      {"limit", required_argument, 0, 'n'},
      {"json", no_argument, 0, 'j'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  char **av = kf_cli__shift_argv(argc, argv, name);
  if (!av) return KF_EXIT_FAIL;
  optind = 0;
  int c, rc = 0;
  uint64_t v;
  while (!rc && (c = getopt_long(argc + 1, av, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'c': o->remote.target = optarg; break;
    case 'j': o->remote.json = true; break;
    case 'q': o->quiet = true; break;
    case 'C':
      if (kf_parse_u64(optarg, &v) || v < 1 || v > INT64_MAX) {
        fprintf(stderr, "%s: --campaign '%s': expected a campaign id\n",
                name, optarg);
        rc = KF_EXIT_USAGE;
      }
      o->campaign = (int64_t)v;
      break;
    case 'n': rc = parse_u32(optarg, 1000, "--limit", name, &o->limit); break;
    case 'h': usage(stdout); rc = -1; break;
    default:
      if (c >= 0x300 && c <= 0x3ff) {
        rc = kf_cli__llm_opt(&o->llm, c, optarg, name);
      } else if (kf_cli__remote_opt(&o->remote, c, optarg)) {
      } else {
        fprintf(stderr, "Run `kf propose --help` for the options.\n");
        rc = KF_EXIT_USAGE;
      }
    }
  }
  if (!rc && optind < argc + 1) {
    fprintf(stderr, "%s: unexpected argument '%s'\n", name, av[optind]);
    rc = KF_EXIT_USAGE;
  }
  free(av);
  if (!rc && !o->campaign) {
    fprintf(stderr, "%s: --campaign ID is required\n", name);
    rc = KF_EXIT_USAGE;
  }
  return rc;
}

/* The totals of a usage, shared with `kf run` (cli_internal.h). */
void kf_cli__usage_json(cJSON *j,
                        const Kernelfleet__ProposerUsageResponse *u) {
  cJSON_AddNumberToObject(j, "calls", u->calls);
  cJSON_AddNumberToObject(j, "failures", u->failures);
  cJSON_AddNumberToObject(j, "prompt_tokens", (double)u->prompt_tokens);
  cJSON_AddNumberToObject(j, "completion_tokens",
                          (double)u->completion_tokens);
  cJSON_AddNumberToObject(j, "cost", u->cost);
  cJSON_AddNumberToObject(j, "proposed", u->proposed);
  cJSON_AddNumberToObject(j, "latency_ms_median", u->latency_ms_median);
  cJSON_AddNumberToObject(j, "latency_ms_p90", u->latency_ms_p90);
  cJSON_AddNumberToObject(j, "latency_ms_max", (double)u->latency_ms_max);
  cJSON_AddNumberToObject(j, "tokens_per_call",
                          u->calls ? (double)(u->prompt_tokens +
                                             u->completion_tokens) /
                                         u->calls
                                   : 0);
  cJSON_AddNumberToObject(j, "evaluations", u->evaluations);
  cJSON_AddNumberToObject(j, "profiled", u->profiled);
  cJSON_AddNumberToObject(j, "profile_ms_median", u->profile_ms_median);
  cJSON_AddNumberToObject(j, "profile_ms_p90", u->profile_ms_p90);
  cJSON_AddNumberToObject(j, "profile_ms_total",
                          (double)u->profile_ms_total);
}

void kf_cli__usage_print(FILE *f, int64_t id,
                       const Kernelfleet__ProposerUsageResponse *u) {
  fprintf(f, "campaign %" PRId64 ": %u proposer requests, %u failed;"
         " %" PRIu64 " prompt + %" PRIu64 " completion tokens; cost %.4f\n",
         id, u->calls, u->failures, u->prompt_tokens,
         u->completion_tokens, u->cost);
  if (u->calls)
    fprintf(f, "  round trip per request: median %.0f ms, p90 %.0f ms, max %"
           PRIu64 " ms; %u became candidates; %.0f tokens per request\n",
           u->latency_ms_median, u->latency_ms_p90, u->latency_ms_max,
           u->proposed,
           (double)(u->prompt_tokens + u->completion_tokens) / u->calls);
  if (u->profiled)
    fprintf(f, "  profiling pass: %u of %u evaluations profiled; median %.0f"
           " ms, p90 %.0f ms per profiled evaluation, %" PRIu64 " ms in"
           " all\n", u->profiled, u->evaluations, u->profile_ms_median,
           u->profile_ms_p90, u->profile_ms_total);
  else
    fprintf(f, "  profiling pass: none of %u evaluations profiled\n",
           u->evaluations);
}

static int do_usage(kf_rpc_client *cli, const prop_opts *o) {
  Kernelfleet__ProposerUsageRequest rq = KERNELFLEET__PROPOSER_USAGE_REQUEST__INIT;
  rq.campaign_id = o->campaign;
  rq.limit = o->limit ? o->limit : 20;
  ProtobufCMessage *resp = NULL;
  int rc = kf_cli__call(cli, "kf propose usage",
                        "ProposerUsage", &rq.base,
                        &kernelfleet__proposer_usage_response__descriptor,
                        30000, &resp);
  if (rc) return rc;
  const Kernelfleet__ProposerUsageResponse *u = (const void *)resp;
  if (o->remote.json) {
    cJSON *j = cJSON_CreateObject();
    cJSON *arr = cJSON_CreateArray();
    if (!j || !arr) {
      cJSON_Delete(j);
      cJSON_Delete(arr);
      kf_rpc_free(resp);
      return KF_EXIT_FAIL;
    }
    cJSON_AddNumberToObject(j, "campaign_id", (double)o->campaign);
    kf_cli__usage_json(j, u);
    for (size_t i = 0; i < u->n_recent; i++) {
      const Kernelfleet__ProposerCall *k = u->recent[i];
      cJSON *e = cJSON_CreateObject();
      if (!e) continue;
      cJSON_AddStringToObject(e, "proposer", k->proposer);
      cJSON_AddStringToObject(e, "model", k->model);
      cJSON_AddStringToObject(e, "prompt_version", k->prompt_version);
      cJSON_AddStringToObject(e, "operation", k->operation);
      cJSON_AddStringToObject(e, "outcome", k->outcome);
      cJSON_AddStringToObject(e, "reason", k->reason);
      cJSON_AddNumberToObject(e, "http_status", k->http_status);
      cJSON_AddNumberToObject(e, "attempts", k->attempts);
      cJSON_AddNumberToObject(e, "prompt_tokens", (double)k->prompt_tokens);
      cJSON_AddNumberToObject(e, "completion_tokens",
                              (double)k->completion_tokens);
      cJSON_AddNumberToObject(e, "cost", k->cost);
      cJSON_AddNumberToObject(e, "latency_ms", (double)k->latency_ms);
      cJSON_AddNumberToObject(e, "candidate_id", (double)k->candidate_id);
      cJSON_AddStringToObject(e, "created_at", k->created_at);
      cJSON_AddItemToArray(arr, e);
    }
    cJSON_AddItemToObject(j, "recent", arr);
    kf_cli__json_print(stdout, j);
  } else {
    kf_cli__usage_print(stdout, o->campaign, u);
    for (size_t i = 0; i < u->n_recent; i++) {
      const Kernelfleet__ProposerCall *k = u->recent[i];
      printf("  %s  %-10s %-10s %-22s cand %-6" PRId64 " %6" PRIu64 "+%-6"
             PRIu64 " tok %5" PRIu64 " ms  %s\n",
             kf_cli__clean(k->created_at, 40), kf_cli__clean(k->operation, 12),
             kf_cli__clean(k->outcome, 12), kf_cli__clean(k->proposer, 22),
             k->candidate_id, k->prompt_tokens, k->completion_tokens,
             k->latency_ms, kf_cli__clean(k->reason, 200));
    }
  }
  kf_rpc_free(resp);
  return 0;
}

int kf_cli_propose(int argc, char **argv) {
  if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h") ||
      !strcmp(argv[0], "help")) {
    usage(argc < 1 ? stderr : stdout);
    return argc < 1 ? KF_EXIT_USAGE : KF_EXIT_OK;
  }
  bool llm = !strcmp(argv[0], "llm"), use = !strcmp(argv[0], "usage");
  if (!llm && !use) {
    fprintf(stderr, "kf propose: unknown action '%s' (llm, usage)\n",
            argv[0]);
    return KF_EXIT_USAGE;
  }
  const char *cmd = llm ? "kf propose llm" : "kf propose usage";
  prop_opts o = {.llm = KF_CLI__LLM_INIT};
  kf_cli__remote_init(&o.remote);
  int rc = parse(argc - 1, argv + 1, cmd, &o);
  if (rc) return rc < 0 ? KF_EXIT_OK : rc;
  kf_proposer *p = NULL;
  if (llm) {
    if (!o.llm.rounds) o.llm.rounds = 1;
    if ((rc = kf_cli__llm_proposer(&o.llm, cmd, &interrupted, &p)))
      return rc;
  }
  kf_rpc_client *cli = NULL;
  if ((rc = kf_cli__open(&o.remote, cmd, &cli))) {
    kf_proposer_destroy(p);
    return rc;
  }
  if (use) {
    rc = do_usage(cli, &o);
  } else {
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    rc = kf_cli__llm_rounds(cli, p, o.campaign, &o.llm, cmd, o.quiet,
                            &interrupted);
  }
  kf_rpc_client_close(cli);
  kf_proposer_destroy(p);
  return rc;
}
