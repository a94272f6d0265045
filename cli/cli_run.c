/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_run.c -- `kf run PROBLEM_DIR`: optimize one problem from a single
 * command.
 *
 * Without --coordinator it brings up the embedded default under a data
 * directory of its own (cli_local.c: private PostgreSQL whose rows persist
 * between runs, a kf-coordinator with a fresh token, one kf-worker per
 * local device), creates the campaign, draws progress until the campaign
 * ends, prints the results, writes the best kernel to a file and stops
 * everything it started.  With --coordinator it only creates and watches.
 *
 * What it does not do: keep a cluster running after it returns.  An
 * interrupted campaign stays "running" in PostgreSQL; `kf run --resume ID`
 * with the same --data brings the cluster back and picks it up.
 *
 * Signals: SIGINT/SIGTERM only set a flag; the poll loop notices within
 * ~50 ms and the children are stopped in order by ordinary code.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli.h"
#include "cli_internal.h"
#include "err.h"
#include "proposer.h"
#include "spec.h"
#include "util.h"

static volatile sig_atomic_t interrupted;
/* Set when the watch is over: the llm proposer's thread stops (and
 * abandons a request in flight). */
static volatile sig_atomic_t proposer_stop;
static void on_signal(int sig) { (void)sig; interrupted = 1; }

static void usage(FILE *f) {
  fprintf(f,
"usage: kf run PROBLEM_DIR [options]\n"
"       kf run --resume ID [--data DIR] [options]\n"
"\n"
"Searches for a faster kernel for the problem in PROBLEM_DIR (spec.json,\n"
"reference, templates with knobs; see problems/README.md).  Unless\n"
"--coordinator is given, runs everything locally: a private PostgreSQL in\n"
"the data directory (kept between runs), a kf-coordinator on a loopback\n"
"port and one kf-worker per local device (one for CPU problems, one per\n"
"GPU for CUDA problems).  Shows progress until the campaign ends, prints\n"
"the best candidates and failures, and writes the best kernel, with its\n"
"knobs as #defines, to a source file that builds on its own.\n"
"\n"
"Budget:\n"
KF_CLI__BUDGET_HELP
"\n"
"Where:\n"
"  --data DIR            state directory [$KF_DATA_DIR, else\n"
"                        $XDG_DATA_HOME/kernelfleet or\n"
"                        ~/.local/share/kernelfleet; /var/lib/kernelfleet\n"
"                        as root]\n"
"  --workers N           local workers [one per GPU for a CUDA problem\n"
"                        (those CUDA_VISIBLE_DEVICES leaves, if set),\n"
"                        else 1]; N on a CUDA problem: over the GPUs in\n"
"                        turn\n"
"  --coordinator H:P     use a running coordinator instead [$KF_COORDINATOR\n"
"                        is NOT used here: pass it explicitly]\n"
"  --token-file PATH     its credential, from a file (mode 600)\n"
"                        [$KF_TOKEN_FILE; or $KF_TOKEN itself]\n"
"  --tls-ca PATH         its CA (PEM), for TLS [$KF_TLS_CA]; --tls-cert,\n"
"                        --tls-key: a client certificate\n"
"  --resume ID           watch campaign ID (e.g. after ^C) instead of\n"
"                        creating one; PROBLEM_DIR is then optional (give\n"
"                        it for a CUDA problem: it picks the workers)\n"
"\n"
"LLM proposer (optional; without --llm-url the search runs alone):\n"
KF_CLI__LLM_HELP
"  In kf run the proposer runs beside the search, on the campaign it\n"
"  created, from its start: --rounds defaults to 3 and --llm-interval to\n"
"  10; it stops when the campaign ends (see `kf propose --help`).\n"
"\n"
"Output:\n"
"  --out FILE            best kernel [./<problem>.best.c or .cu]\n"
"  --top N               candidates in the results table [5]\n"
"  --json                print the results as one JSON object (no table;\n"
"                        progress still goes to stderr)\n"
"  --quiet               no progress output\n"
"\n"
"Progress goes to stderr: one live line on a terminal, a plain line every\n"
"10 s otherwise.  Logs of the local processes: DIR/*.log.\n"
"\n"
"^C stops the workers, the coordinator and PostgreSQL cleanly.  The\n"
"campaign and every evaluation so far stay in DIR/pg; resume with\n"
"  kf run --data DIR --resume ID\n"
"or inspect with `kf db start DIR/pg` and psql \"$(kf db url DIR/pg)\"\n"
"(tables campaigns, candidates, evaluations, tasks, results).\n"
"\n"
"Exit codes: 0 a verified kernel faster than the reference was found,\n"
"1 the campaign ended without one, 2 usage or problem-spec error\n"
"(\"file: field: reason\"), 3 coordinator or database unreachable,\n"
"4 interrupted.\n");
}

/* The data directory: --data, $KF_DATA_DIR, else per user, or
 * /var/lib/kernelfleet as root (PostgreSQL then runs as user postgres,
 * which cannot enter /root). */
void kf_cli__default_data_dir(char *out, size_t len) {
  const char *env = kf_getenv_or("KF_DATA_DIR", NULL);
  if (env) {
    kf_strlcpy(out, env, len);
  } else if (geteuid() == 0) {
    kf_strlcpy(out, "/var/lib/kernelfleet", len);
  } else if (kf_getenv_or("XDG_DATA_HOME", NULL)) {
    snprintf(out, len, "%s/kernelfleet", getenv("XDG_DATA_HOME"));
  } else {
    snprintf(out, len, "%s/.local/share/kernelfleet",
             kf_getenv_or("HOME", "."));
  }
}

/* One `kf run` per data directory: a second would share (and then stop)
 * the first one's PostgreSQL.  Returns the lock fd or -1 (printed). */
int kf_cli__lock_data_dir(const char *dir, const char *cmd) {
  char path[600];
  snprintf(path, sizeof path, "%s/kf-run.lock", dir);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "%s: %s: %s\n", cmd, path, strerror(errno));
    return -1;
  }
  if (flock(fd, LOCK_EX | LOCK_NB)) {
    fprintf(stderr,
            "%s: another kf run or kf sweep is using %s; wait for it,\n"
            "  or pass --data DIR for a separate state directory\n", cmd, dir);
    close(fd);
    return -1;
  }
  return fd;
}

typedef struct {
  const char *problem_dir;
  const char *data;
  const char *coordinator;
  kf_cli__remote remote; /* credential and TLS of --coordinator */
  const char *out;
  int64_t resume;
  uint64_t workers;
  uint64_t top;
  bool json;
  bool quiet;
  kf_cli__budget budget;
  kf_cli__llm llm;
  bool llm_interval_set;
} run_opts;

/* Parses argv; returns 0, -1 after --help, or an exit code. */
static int parse(int argc, char **argv, run_opts *o) {
  static const struct option opts[] = {
      KF_CLI__BUDGET_OPTIONS,
      KF_CLI__LLM_OPTIONS,
      {"data", required_argument, 0, 'd'},
      {"coordinator", required_argument, 0, 'c'},
      KF_CLI__REMOTE_OPTIONS,
      {"workers", required_argument, 0, 'w'},
      {"out", required_argument, 0, 'o'},
      {"resume", required_argument, 0, 'r'},
      {"top", required_argument, 0, 'n'},
      {"json", no_argument, 0, 'j'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  char **av = kf_cli__shift_argv(argc, argv, "kf run");
  if (!av) return KF_EXIT_FAIL;
  optind = 0;
  int c, rc = 0;
  uint64_t v;
  /* getopt_long permutes: options may follow PROBLEM_DIR. */
  while (!rc && (c = getopt_long(argc + 1, av, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'd': o->data = optarg; break;
    case 'c': o->coordinator = optarg; break;
    case 'o': o->out = optarg; break;
    case 'j': o->json = true; break;
    case 'q': o->quiet = true; break;
    case 'w':
      if (kf_parse_u64(optarg, &o->workers) || o->workers < 1 ||
          o->workers > KF_CLI__MAX_WORKERS) {
        fprintf(stderr, "kf run: --workers '%s': expected 1..%d\n", optarg,
                KF_CLI__MAX_WORKERS);
        rc = KF_EXIT_USAGE;
      }
      break;
    case 'n':
      if (kf_parse_u64(optarg, &o->top) || o->top > 100) {
        fprintf(stderr, "kf run: --top '%s': expected 0..100\n", optarg);
        rc = KF_EXIT_USAGE;
      }
      break;
    case 'r':
      if (kf_parse_u64(optarg, &v) || v < 1 || v > INT64_MAX) {
        fprintf(stderr, "kf run: --resume '%s': expected a campaign id\n",
                optarg);
        rc = KF_EXIT_USAGE;
      }
      o->resume = (int64_t)v;
      break;
    case 'h': usage(stdout); rc = -1; break;
    default:
      if (c >= 0x100 && c <= 0x1ff) {
        rc = kf_cli__budget_opt(&o->budget, c, optarg, "kf run");
      } else if (c >= 0x300 && c <= 0x3ff) {
        rc = kf_cli__llm_opt(&o->llm, c, optarg, "kf run");
        if (c == 0x305) o->llm_interval_set = true;
      } else if (kf_cli__remote_opt(&o->remote, c, optarg)) {
      } else {
        fprintf(stderr, "Run `kf run --help` for the options.\n");
        rc = KF_EXIT_USAGE;
      }
    }
  }
  if (!rc && optind < argc + 1) o->problem_dir = av[optind];
  if (!rc && optind + 1 < argc + 1) {
    fprintf(stderr, "kf run: unexpected argument '%s'\n", av[optind + 1]);
    rc = KF_EXIT_USAGE;
  }
  free(av);
  return rc;
}

/* The llm proposer beside the search: its own client (the sync calls of
 * the main thread's client are not shared), rounds until they are done,
 * the campaign ends or proposer_stop. */
typedef struct {
  kf_cli__remote remote;
  kf_proposer *p;
  int64_t id;
  const kf_cli__llm *llm;
  bool quiet;
} llm_thread;

static void *llm_main(void *arg) {
  llm_thread *t = arg;
  kf_rpc_client *cli = NULL;
  if (kf_cli__open(&t->remote, "kf run: llm proposer", &cli) == 0)
    (void)kf_cli__llm_rounds(cli, t->p, t->id, t->llm, "kf run: llm",
                             t->quiet, &proposer_stop);
  kf_rpc_client_close(cli);
  return NULL;
}

int kf_cli_run(int argc, char **argv) {
  run_opts o = {.top = 5, .budget = {.evals = 60, .seconds = 600},
                .llm = KF_CLI__LLM_INIT};
  kf_cli__remote_init(&o.remote);
  int rc = parse(argc, argv, &o);
  if (rc) return rc < 0 ? KF_EXIT_OK : rc;
  if (!o.problem_dir && !o.resume) {
    fprintf(stderr, "kf run: PROBLEM_DIR is required (or --resume ID)\n"
                    "Run `kf run --help` for the options.\n");
    return KF_EXIT_USAGE;
  }
  if (o.coordinator && (!o.remote.token || !*o.remote.token) &&
      (!o.remote.token_file || !*o.remote.token_file)) {
    fprintf(stderr, "kf run: --coordinator needs --token-file or "
            "$KF_TOKEN\n");
    return KF_EXIT_USAGE;
  }

  /* The problem and the proposer first: bad input must not start
   * anything. */
  kf_proposer *prop = NULL;
  pthread_t llm_th;
  bool llm_running = false;
  llm_thread lt;
  if (o.llm.url || o.llm.model) {
    if (!o.llm.rounds) o.llm.rounds = 3;
    if (!o.llm_interval_set) o.llm.interval_s = 10;
    rc = kf_cli__llm_proposer(&o.llm, "kf run", &proposer_stop, &prop);
    if (rc) return rc;
  }
  kf_spec *spec = NULL;
  if (o.problem_dir) {
    rc = kf_cli__load_problem(o.problem_dir, "kf run", &spec);
    if (!rc && (rc = kf_cli__campaign_problem(spec, o.problem_dir, "kf run")))
      kf_spec_free(spec);
    if (rc) {
      kf_proposer_destroy(prop);
      return rc;
    }
  }

  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  kf_cli__local local;
  memset(&local, 0, sizeof local);
  int lockfd = -1;
  kf_rpc_client *cli = NULL;
  Kernelfleet__GetCampaignResponse *last = NULL, *final = NULL;
  Kernelfleet__GetBestResponse *best = NULL;
  char dir[512] = "";
  static char gpu_ids[KF_CLI__MAX_WORKERS][KF_CLI__GPU_ID_LEN];
  int64_t id = o.resume;
  kf_cli__remote remote = o.remote;
  remote.target = o.coordinator;
  remote.json = o.json;

  if (!o.coordinator) {
    if (o.data) kf_strlcpy(dir, o.data, sizeof dir);
    else kf_cli__default_data_dir(dir, sizeof dir);
    if (kf_cli__mkdirs(dir)) {
      fprintf(stderr, "kf run: cannot create %s: %s\n", dir, strerror(errno));
      rc = KF_EXIT_USAGE;
      goto out;
    }
    lockfd = kf_cli__lock_data_dir(dir, "kf run");
    if (lockfd < 0) {
      rc = KF_EXIT_USAGE;
      goto out;
    }
    bool cuda = spec && (!strcmp(spec->backend, "cuda") ||
                         (!strcmp(spec->backend, "torch") &&
                          !strcmp(spec->torch_device, "cuda")));
    int nw = (int)o.workers, ngpu = 0;
    if (cuda) {
      /* One worker per GPU this job may use: every /dev/nvidiaN, or what
       * CUDA_VISIBLE_DEVICES (a scheduler's, a person's) leaves it. */
      const char *vis = getenv("CUDA_VISIBLE_DEVICES");
      ngpu = kf_cli__gpu_plan(vis, kf_cli__count_gpus(), gpu_ids,
                              KF_CLI__MAX_WORKERS);
      if (!ngpu) {
        fprintf(stderr, "kf run: %s is a CUDA problem but this machine shows "
                        "no GPU (/dev/nvidia0%s%s%s);\n  pass --coordinator"
                        " to use a cluster that has one\n", o.problem_dir,
                vis ? ", CUDA_VISIBLE_DEVICES='" : "", vis ? vis : "",
                vis ? "'" : "");
        rc = KF_EXIT_UNAVAIL;
        goto out;
      }
      /* --workers N on a CUDA problem: N workers over these GPUs, in
       * turn (the harness's GPU lock serializes the GPU stages of
       * workers that share one). */
      if (!nw) nw = ngpu;
      if (!o.quiet)
        fprintf(stderr, "kf run: %d GPU%s, %d worker%s\n", ngpu,
                ngpu == 1 ? "" : "s", nw, nw == 1 ? "" : "s");
    }
    if (!o.quiet) fprintf(stderr, "kf run: state in %s\n", dir);
    kf_cli__local_opts lo = {.dir = dir, .workers = nw ? nw : 1,
                             .cuda_per_device = cuda,
                             .gpu_ids = (const char(*)[KF_CLI__GPU_ID_LEN])gpu_ids,
                             .n_gpu_ids = ngpu,
                             .cmd = "kf run", .quiet = o.quiet,
                             .interrupted = &interrupted};
    rc = kf_cli__local_start(&local, &lo);
    if (rc) goto out;
    /* Our own cluster: its fresh bootstrap credential, plaintext on
     * loopback, whatever the environment says about other clusters. */
    kf_cli__remote_init(&remote);
    remote.target = local.target;
    remote.token = local.token;
    remote.token_file = NULL;
    remote.tls_ca = remote.tls_cert = remote.tls_key = NULL;
    remote.json = o.json;
  }
  rc = kf_cli__open(&remote, "kf run", &cli);
  if (rc) goto out;

  if (!id) {
    rc = kf_cli__create_campaign(cli, "kf run", spec, &o.budget, &id);
    if (rc) goto out;
    if (!o.quiet)
      fprintf(stderr, "kf run: campaign %lld: %s, %u evaluations or %u min\n",
              (long long)id, spec->name, o.budget.evals,
              o.budget.seconds / 60);
  } else if (!o.quiet) {
    fprintf(stderr, "kf run: resuming campaign %lld\n", (long long)id);
  }

  if (prop) {
    lt = (llm_thread){.remote = remote, .p = prop, .id = id,
                      .llm = &o.llm, .quiet = o.quiet};
    llm_running = pthread_create(&llm_th, NULL, llm_main, &lt) == 0;
    if (!llm_running)
      fprintf(stderr, "kf run: cannot start the llm proposer's thread;"
              " the search runs alone\n");
  }
  rc = kf_cli__watch(cli, "kf run", id, o.quiet, &interrupted, &last);
  if (llm_running) {
    proposer_stop = 1;
    pthread_join(llm_th, NULL);
    llm_running = false;
  }
  if (rc == KF_EXIT_INTERRUPT) {
    if (o.coordinator)
      fprintf(stderr,
              "kf run: interrupted; campaign %lld keeps running on %s.\n"
              "  watch it: kf campaign watch %lld --coordinator %s\n"
              "  stop it:  kf campaign stop %lld --coordinator %s\n",
              (long long)id, o.coordinator, (long long)id, o.coordinator,
              (long long)id, o.coordinator);
    else
      fprintf(stderr,
              "kf run: interrupted; stopping the local cluster.  Campaign "
              "%lld and its\n  evaluations are saved in %s/pg.\n"
              "  resume:  kf run --data %s --resume %lld\n"
              "  inspect: kf db start %s/pg && psql \"$(kf db url %s/pg)\"\n",
              (long long)id, dir, dir, (long long)id, dir, dir);
    goto out;
  }
  if (rc) goto out;

  rc = kf_cli__get_campaign(cli, "kf run", id, (uint32_t)o.top, &final);
  if (rc) goto out;
  const Kernelfleet__CampaignStatus *st = final->status;
  char path[1024] = "";
  if (st->best_candidate_id > 0 &&
      kf_cli__get_best(cli, "kf run", id, NULL, false, &best) == 0) {
    if (o.out) kf_strlcpy(path, o.out, sizeof path);
    else kf_cli__best_default_path(path, sizeof path, st->campaign->problem,
                                   best->language);
    char *text = kf_cli__best_file_text(best, st->campaign);
    if (!text || kf_cli__write_file(path, text, "kf run")) path[0] = '\0';
    free(text);
  }
  bool won = kf_cli__campaign_won(st) && best && best->best &&
             best->best->outcome == KERNELFLEET__OUTCOME__OUTCOME_OK &&
             best->best->speedup > 1.0 && path[0];
  /* With a proposer: what it cost and how long its requests took, and
   * the profiling pass's cost, kept apart from the evaluations. */
  Kernelfleet__ProposerUsageResponse *usage = NULL;
  if (prop) {
    Kernelfleet__ProposerUsageRequest uq =
        KERNELFLEET__PROPOSER_USAGE_REQUEST__INIT;
    uq.campaign_id = id;
    uq.limit = 0;
    ProtobufCMessage *ur = NULL;
    if (kf_cli__call(cli, "kf run", "ProposerUsage", &uq.base,
                     &kernelfleet__proposer_usage_response__descriptor, 30000,
                     &ur) == 0)
      usage = (Kernelfleet__ProposerUsageResponse *)ur;
  }
  if (o.json) {
    struct cJSON *j = kf_cli__json_campaign(final);
    kf_cli__json_add_best(j, best, path);
    struct cJSON *pu = usage ? cJSON_CreateObject() : NULL;
    if (pu) {
      kf_cli__usage_json(pu, usage);
      cJSON_AddItemToObject(j, "proposer_usage", pu);
    }
    kf_cli__json_print(stdout, j);
  } else {
    printf("\n");
    kf_cli__print_results(stdout, cli, final);
    if (path[0]) {
      /* The table's first row, with the same numbers. */
      const Kernelfleet__EvaluationSummary *e = best->best;
      bool eager = spec && !strcmp(spec->backend, "torch");
      printf("\nbest kernel: %s (%.2fx over %s, spread %.1f%%",
             path, e->speedup, eager ? "torch eager (the reference, timed "
             "by the harness in the same evaluations)" : "the reference",
             e->time_ns_spread * 100);
      if (e->repetitions) printf(", %u repetitions", e->repetitions);
      printf(", %s)\n", e->showdown ? "final showdown"
                         : e->measurements > 1 ? "median of the search's"
                                                 " measurements"
                                               : "search evaluation");
    }
    if (!won)
      printf("\nno verified kernel faster than the reference was found\n");
    if (usage) {
      printf("\n");
      kf_cli__usage_print(stdout, id, usage);
    }
  }
  kf_rpc_free((ProtobufCMessage *)usage);
  rc = won ? KF_EXIT_OK : KF_EXIT_FAIL;

out:
  if (llm_running) {
    proposer_stop = 1;
    pthread_join(llm_th, NULL);
  }
  kf_proposer_destroy(prop);
  kf_rpc_free((ProtobufCMessage *)best);
  kf_rpc_free((ProtobufCMessage *)final);
  kf_rpc_free((ProtobufCMessage *)last);
  kf_rpc_client_close(cli);
  kf_cli__local_stop(&local);
  if (lockfd >= 0) close(lockfd);
  kf_spec_free(spec);
  fflush(stdout);
  return rc;
}
