/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_internal.h -- what the kf subcommands share with each other and
 * nothing else: option plumbing, the rpc error policy, the local cluster
 * (cli_local.c) and the campaign views (cli_watch.c).
 *
 * Everything here runs on the CLI's one thread; rpc calls are the blocking
 * *_sync kind.  Functions that print say so; functions returning "an exit
 * code" return one of the KF_EXIT_* values of cli.h and have already told
 * the user why on stderr.
 */
#ifndef KF_CLI_INTERNAL_H
#define KF_CLI_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "kernelfleet.pb-c.h"
#include "rpc.h"

struct kf_spec;

/* ------------------------------------------------------------ options -- */

/* argv with a program name in front, for getopt_long (which skips argv[0]).
 * malloc'd; NULL on ENOMEM.  The strings stay argv's. */
char **kf_cli__shift_argv(int argc, char **argv, const char *name);

/* Where a remote command talks to. */
typedef struct {
  const char *target; /* "host:port"; $KF_COORDINATOR, else 127.0.0.1:7070 */
  const char *token;  /* bearer secret; $KF_TOKEN (never from argv) */
  bool json;          /* machine-readable output */
  const char *token_file; /* --token-file; $KF_TOKEN_FILE; wins over token */
  const char *tls_ca;     /* --tls-ca PEM; $KF_TLS_CA; set: TLS */
  const char *tls_cert;   /* client certificate + key; $KF_TLS_CERT/KEY */
  const char *tls_key;
} kf_cli__remote;

/* getopt_long entries for the credential and TLS options of a remote
 * command, values 0x200..0x203, applied with kf_cli__remote_opt. */
#define KF_CLI__REMOTE_OPTIONS                                                \
  {"token-file", required_argument, 0, 0x200},                                \
  {"tls-ca", required_argument, 0, 0x201},                                    \
  {"tls-cert", required_argument, 0, 0x202},                                  \
  {"tls-key", required_argument, 0, 0x203}
#define KF_CLI__REMOTE_HELP                                                   \
  "  --token-file PATH   file holding the credential (mode 600)\n"          \
  "                      [$KF_TOKEN_FILE; or $KF_TOKEN itself]\n"            \
  "  --tls-ca PATH       PEM CA: use TLS, verify the coordinator [$KF_TLS_CA]\n" \
  "  --tls-cert PATH     client certificate and key (PEM) [$KF_TLS_CERT,\n" \
  "  --tls-key PATH      $KF_TLS_KEY]\n"
/* true when c was one of KF_CLI__REMOTE_OPTIONS (and is now applied). */
bool kf_cli__remote_opt(kf_cli__remote *r, int c, const char *arg);

/* Fills r from the environment. */
void kf_cli__remote_init(kf_cli__remote *r);

/* Opens a client to r->target.  Returns 0 or an exit code (no token:
 * usage; cannot open: unavailable).  cmd names the command in messages. */
int kf_cli__open(const kf_cli__remote *r, const char *cmd,
                 kf_rpc_client **cli);

/* s made safe to print on a terminal (kf_text_sanitize: no control
 * characters or terminal escapes, no bidi overrides, invalid UTF-8
 * escaped, newlines and tabs dropped), at most max bytes (0: 1023).
 * Every name and reason that came from the coordinator -- from whoever
 * named a campaign, a worker or wrote a candidate -- goes through it
 * before it is printed.  Returns one of 8 static buffers, reused in turn:
 * valid until 8 more calls.  NULL prints as "". */
const char *kf_cli__clean(const char *s, size_t max);

/* Exit code for a KF_E* code that came back from an rpc. */
int kf_cli__exit_for(int kf_err);

/* Prints why rpc `method` failed with KF_E* rc and server text err (with a
 * hint for unknown methods, unreachable coordinators and bad tokens) and
 * returns the exit code for it. */
int kf_cli__report(const char *cmd, const char *method, int rc,
                   const char *err);

/* One blocking rpc with the CLI's error policy: on failure prints
 * "CMD: WHAT: reason" (and a hint for unknown methods, unreachable
 * coordinators and bad tokens) and returns an exit code; on success
 * returns 0 with *resp for kf_rpc_free. */
int kf_cli__call(kf_rpc_client *cli, const char *cmd, const char *method,
                 const ProtobufCMessage *req,
                 const ProtobufCMessageDescriptor *resp_type, int timeout_ms,
                 ProtobufCMessage **resp);

/* ------------------------------------------------------ local cluster -- */

#define KF_CLI__MAX_WORKERS 64
/* A CUDA_VISIBLE_DEVICES entry (an index or a GPU/MIG UUID) and its NUL. */
#define KF_CLI__GPU_ID_LEN 96

/* A private PostgreSQL, one kf-coordinator and N kf-workers, all children
 * of this process (kf-coordinator and kf-worker are found next to the kf
 * binary).  Children run in their own process group, so a ^C at the
 * terminal reaches only kf, which then stops them in order (workers,
 * coordinator, PostgreSQL); they also get SIGTERM if kf dies. */
typedef struct {
  char dir[512];         /* state: pg/, *.log, coordinator.port */
  char pgdir[600];       /* dir/pg */
  char conninfo[1024];   /* libpq conninfo of the private server */
  char token[80];        /* fresh per start: the coordinator's bootstrap
                          * (admin) credential, which kf itself uses */
  char worker_token[80]; /* fresh per start: the workers' (role worker) */
  char target[64];       /* "127.0.0.1:PORT" of the coordinator */
  pid_t coord;           /* 0: not running */
  pid_t workers[KF_CLI__MAX_WORKERS];
  int n_workers;
  bool pg_up;
  bool quiet;            /* no "  postgresql  up" lines */
} kf_cli__local;

typedef struct {
  const char *dir;        /* created if missing */
  int workers;            /* 1..KF_CLI__MAX_WORKERS */
  int slots;              /* per worker; 0: the worker's default */
  bool cuda_per_device;   /* worker i sees only GPU i (CUDA_VISIBLE_DEVICES) */
  /* with cuda_per_device: the CUDA_VISIBLE_DEVICES values (gpu_plan);
   * NULL: worker i gets "i" */
  const char (*gpu_ids)[KF_CLI__GPU_ID_LEN];
  int n_gpu_ids;          /* > 0 with gpu_ids: worker i gets i % n */
  const char *cmd;        /* for messages: "kf run", "kf cluster" */
  /* CPU workers: register as this class (kf-worker --device-class);
   * NULL: the CPU's own */
  const char *device_class;
  /* workers are named PREFIX-1, PREFIX-2, ... (and log to DIR/NAME.log);
   * NULL: "worker" */
  const char *worker_prefix;
  bool quiet;
  volatile sig_atomic_t *interrupted; /* checked while waiting; may be NULL */
} kf_cli__local_opts;

/* Starts everything; returns 0 or an exit code (with the reason printed).
 * On failure whatever did start is stopped again. */
int kf_cli__local_start(kf_cli__local *l, const kf_cli__local_opts *o);

/* Stops workers, coordinator and PostgreSQL ("fast"): SIGTERM, SIGKILL
 * after 10 s.  Safe on a partly started or zeroed struct. */
void kf_cli__local_stop(kf_cli__local *l);

/* mkdir -p, mode 0755 (PostgreSQL may run as another user and must be
 * able to enter every level).  0 or -1 with errno. */
int kf_cli__mkdirs(const char *path);

/* cli_run.c.  The data directory of `kf run` and `kf sweep` without
 * --data: $KF_DATA_DIR, else per user, or /var/lib/kernelfleet as root. */
void kf_cli__default_data_dir(char *out, size_t len);

/* One `kf run` or `kf sweep` per data directory (a second would share,
 * then stop, the first one's PostgreSQL): flock on DIR/kf-run.lock.
 * Returns the fd to keep open, or -1 with the reason printed. */
int kf_cli__lock_data_dir(const char *dir, const char *cmd);

/* Directory holding this executable. */
void kf_cli__bin_dir(char *out, size_t len);

/* Number of NVIDIA GPUs this machine shows (/dev/nvidiaN); 0 if none. */
int kf_cli__count_gpus(void);

/* cli/cli_gpus.c.  The GPUs `kf run` starts one worker each for: with
 * visible NULL (CUDA_VISIBLE_DEVICES unset) "0".."ndev-1"; else the
 * entries of visible as the CUDA runtime reads them -- comma-separated
 * indices (below ndev when ndev > 0) or GPU-/MIG- UUIDs, blanks trimmed,
 * up to the first entry that is none of these ("", "-1", "none": no GPU),
 * duplicates once.  Fills ids[0..max) with the CUDA_VISIBLE_DEVICES value
 * of each worker; returns how many. */
int kf_cli__gpu_plan(const char *visible, int ndev,
                     char ids[][KF_CLI__GPU_ID_LEN], int max);

/* -------------------------------------------------- campaign requests -- */

/* Search budget and knobs of a new campaign; zero fields take the
 * coordinator's defaults. */
typedef struct {
  const char *name;       /* NULL: "<problem>" */
  uint32_t evals;
  uint32_t seconds;
  uint32_t population;
  uint32_t plateau;
  double target_roofline;
  uint64_t seed;
  bool fresh;             /* reuse no stored measurement */
  uint32_t showdown;      /* candidates per class re-timed at the end */
  const char *device_class; /* NULL: every class; else only this model */
  const char *profile;    /* profiling policy; NULL: the coordinator's */
} kf_cli__budget;

/* getopt_long entries for the budget options, values 0x100..0x1ff. */
#define KF_CLI__BUDGET_OPTIONS                                                \
  {"evals", required_argument, 0, 0x100},                                     \
  {"minutes", required_argument, 0, 0x101},                                   \
  {"population", required_argument, 0, 0x102},                                \
  {"seed", required_argument, 0, 0x103},                                      \
  {"plateau", required_argument, 0, 0x104},                                   \
  {"target-roofline", required_argument, 0, 0x105},                           \
  {"name", required_argument, 0, 0x106},                                      \
  {"fresh", no_argument, 0, 0x107},                                           \
  {"showdown", required_argument, 0, 0x108},                                  \
  {"profile", required_argument, 0, 0x109}

/* Help text for those options. */
#define KF_CLI__BUDGET_HELP                                                   \
  "  --evals N             evaluations to run                  [60]\n"       \
  "  --minutes M           wall-clock budget                   [10]\n"       \
  "  --population N        candidates per generation           [16]\n"       \
  "  --seed N              search seed (harness seeds stay secret)\n"        \
  "  --plateau N           stop after N evaluations without gain [60]\n"     \
  "  --target-roofline F   stop at this fraction of the floor  [0.95]\n"     \
  "                        (the copy bandwidth's; up to 2: a problem that\n"  \
  "                        mostly reads can pass 1)\n"                        \
  "  --name TEXT           campaign name                       [problem]\n"    \
  "  --fresh               measure every candidate anew: reuse no stored\n"    \
  "                        measurement (what it measures is stored, and\n"    \
  "                        later campaigns aggregate it with the rest)\n"     \
  "  --showdown K          candidates per device class re-timed with the\n"   \
  "                        reference when the search stops          [5]\n"   \
  "  --profile POLICY      which verified candidates GPU workers profile\n"  \
  "                        with Nsight Compute after timing: all, none,\n"    \
  "                        top:K (those entering the K best)    [top:5]\n"

/* Applies option c (0x100..0x1ff) to b.  Returns 0, or prints why optarg
 * is bad and returns KF_EXIT_USAGE. */
int kf_cli__budget_opt(kf_cli__budget *b, int c, const char *arg,
                       const char *cmd);

/* A growing text buffer; allocation failure is sticky (oom) and checked
 * once at the end.  Free p. */
typedef struct {
  char *p;
  size_t len, cap;
  bool oom;
} kf_cli__sbuf;

/* Appends printf output to b. */
void kf_cli__sb_printf(kf_cli__sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* text as a Python string literal (parenthesized, one piece a line;
 * backslash, quote and control bytes escaped) appended to b. */
void kf_cli__py_str(kf_cli__sbuf *b, const char *text);

/* The offset in a Python source just past its docstring and `from
 * __future__` imports, where lines of ours may go (0 when it has no
 * future import: the top). */
size_t kf_cli__py_future_end(const char *src);

/* Loads PROBLEM_DIR with kf_spec_load_dir.  On a bad spec prints
 * "CMD: file: field: reason" and returns KF_EXIT_USAGE. */
int kf_cli__load_problem(const char *dir, const char *cmd,
                         struct kf_spec **out);

/* 0 when a campaign can search spec (it has templates), else prints why
 * and returns KF_EXIT_USAGE: before anything is started. */
int kf_cli__campaign_problem(const struct kf_spec *spec, const char *dir,
                             const char *cmd);

/* Sends CreateCampaign for spec with budget b; *id is the new campaign.
 * Returns 0 or an exit code. */
int kf_cli__create_campaign(kf_rpc_client *cli, const char *cmd,
                            const struct kf_spec *spec,
                            const kf_cli__budget *b, int64_t *id);

/* kf_cli__create_campaign without the printing: returns 0 or the KF_E*
 * code with the coordinator's reason in err (`kf mcp` hands it to the
 * agent). */
int kf_cli__create_campaign_rpc(kf_rpc_client *cli, const struct kf_spec *spec,
                                const kf_cli__budget *b, int64_t *id,
                                char *err, size_t errlen);
/* ------------------------------------------- profiles (cli_profile.c) -- */

/* "  diagnosis (CLASS): DETAIL" for the best evaluation of each device
 * class in top (ranked, best first); nothing when none has one. */
void kf_cli__print_diagnoses(FILE *f,
                             Kernelfleet__EvaluationSummary *const *top,
                             size_t n);

/* `kf campaign profile ID CANDIDATE [--json]`: the candidate's
 * evaluations (one per device class), each with its diagnosis and
 * profile.  Returns an exit code. */
int kf_cli__campaign_profile(kf_rpc_client *cli, const char *cmd, int64_t id,
                             const char *candidate, bool json);

/* ------------------------------------------------------ campaign views -- */

/* GetCampaign with the top `top` evaluations.  Returns 0 or an exit code;
 * a campaign the coordinator does not know is KF_EXIT_USAGE. */
int kf_cli__get_campaign(kf_rpc_client *cli, const char *cmd, int64_t id,
                         uint32_t top, Kernelfleet__GetCampaignResponse **out);

/* true once the campaign has ended (state not "running"). */
bool kf_cli__campaign_ended(const Kernelfleet__CampaignStatus *st);

/* true when the campaign found a verified kernel faster than the
 * reference. */
bool kf_cli__campaign_won(const Kernelfleet__CampaignStatus *st);

/* Polls GetCampaign every ~500 ms until the campaign ends or *interrupted
 * is set, drawing a live progress line on stderr when it is a terminal
 * (plain lines every 10 s otherwise; nothing when quiet).  Transient rpc
 * failures are retried for up to two minutes.  On return 0 *last holds the
 * last status (ask again for the top list); KF_EXIT_INTERRUPT when
 * interrupted (*last may still be set); another exit code on failure. */
int kf_cli__watch(kf_rpc_client *cli, const char *cmd, int64_t id,
                  bool quiet, volatile sig_atomic_t *interrupted,
                  Kernelfleet__GetCampaignResponse **last);

/* Prints the status block (state, evaluations, best, outcomes) to f. */
void kf_cli__print_status(FILE *f, const Kernelfleet__CampaignStatus *st);

/* Prints the closing results table: top evaluations and failures by
 * outcome with example reasons (from ListEvaluations failures_only). */
void kf_cli__print_results(FILE *f, kf_rpc_client *cli,
                           const Kernelfleet__GetCampaignResponse *g);

/* Fetches the best kernel (GetBest).  Returns 0, KF_EXIT_FAIL when the
 * campaign has none yet (with a message unless quiet), or an exit code. */
int kf_cli__get_best(kf_rpc_client *cli, const char *cmd, int64_t id,
                     const char *device_class,
                     bool quiet, Kernelfleet__GetBestResponse **out);

/* The best kernel as a standalone source file: a header comment recording
 * campaign, candidate, device class, times and speedup, the knobs as
 * #defines, then the source.  malloc'd; NULL on ENOMEM. */
char *kf_cli__best_file_text(const Kernelfleet__GetBestResponse *b,
                             const Kernelfleet__Campaign *c);

/* Default output path: "./<problem>.best.c" or ".cu". */
void kf_cli__best_default_path(char *out, size_t len, const char *problem,
                               const char *language);

/* Writes text to path (atomically: temp file + rename).  Returns 0 or
 * prints why and returns KF_EXIT_FAIL. */
int kf_cli__write_file(const char *path, const char *text, const char *cmd);

/* `kf campaign export ID --format torch-ext` (cli_export_ext.c): the best
 * kernel b of campaign c, a CUDA or C one, as a PyTorch extension package
 * in the new directory out_dir, its shapes from problem_dir's spec.
 * Returns an exit code; prints why on failure, nothing written then. */
int kf_cli__export_torch_ext(const char *cmd, const char *problem_dir,
                             const char *out_dir,
                             const Kernelfleet__GetBestResponse *b,
                             const Kernelfleet__Campaign *c);

/* `kf campaign export ID --format gpumode|kernelbench` of a CUDA or C
 * campaign (cli_export_ext.c): one Python file, written to out_file (or
 * stdout when NULL), that builds the best kernel b with the torch-ext
 * binding through load_inline at import and offers both entry points.
 * Returns an exit code; prints why on failure. */
int kf_cli__export_inline(const char *cmd, const char *problem_dir,
                          const char *format, const char *out_file,
                          const Kernelfleet__GetBestResponse *b,
                          const Kernelfleet__Campaign *c);

/* JSON views (cJSON trees; caller frees with cJSON_Delete). */
struct cJSON *kf_cli__json_status(const Kernelfleet__CampaignStatus *st);
struct cJSON *kf_cli__json_eval(const Kernelfleet__EvaluationSummary *e);
struct cJSON *kf_cli__json_campaign(const Kernelfleet__GetCampaignResponse *g);
struct cJSON *kf_cli__json_best(const Kernelfleet__GetBestResponse *b);

/* Adds "best" (kf_cli__json_best, or null) and "best_file" (path, or null
 * when empty) to j. */
void kf_cli__json_add_best(struct cJSON *j,
                           const Kernelfleet__GetBestResponse *b,
                           const char *path);

/* Prints j on one line to f and frees it. */
void kf_cli__json_print(FILE *f, struct cJSON *j);

/* Outcome's short name ("ok", "wrong_answer"); "unspecified" for 0. */
const char *kf_cli__outcome(int outcome);

/* ---------------------------------------------------------- proposers -- */

struct kf_proposer;

/* The llm proposer's options, shared by `kf propose llm` and `kf run`. */
typedef struct {
  const char *url, *model, *key_file;
  uint32_t rounds;          /* 0: 1 (propose llm); kf run: until it ends */
  uint32_t requests;        /* per round; 0: 2 */
  uint32_t parallel;        /* requests at once; 0: 2 */
  uint32_t interval_s;      /* between rounds; 0: 0 */
  uint32_t timeout_s;       /* per HTTP request; 0: 120 */
  int retries;              /* -1: 3 */
  uint32_t max_tokens;      /* 0: 4096 */
  double temperature;       /* < 0: the endpoint's default */
  double price_in, price_out; /* per 1000 tokens */
  uint32_t ops;             /* operators planned (kf_proposer_plan); 0 all */
} kf_cli__llm;

#define KF_CLI__LLM_INIT {.retries = -1, .temperature = -1}

/* getopt_long entries for the llm options, values 0x300..0x3ff. */
#define KF_CLI__LLM_OPTIONS                                                   \
  {"llm-url", required_argument, 0, 0x300},                                   \
  {"llm-model", required_argument, 0, 0x301},                                 \
  {"llm-key-file", required_argument, 0, 0x302},                              \
  {"llm-requests", required_argument, 0, 0x303},                              \
  {"llm-parallel", required_argument, 0, 0x304},                              \
  {"llm-interval", required_argument, 0, 0x305},                              \
  {"llm-timeout", required_argument, 0, 0x306},                               \
  {"llm-retries", required_argument, 0, 0x307},                               \
  {"llm-max-tokens", required_argument, 0, 0x308},                            \
  {"llm-temperature", required_argument, 0, 0x309},                           \
  {"llm-price-in", required_argument, 0, 0x30a},                              \
  {"llm-price-out", required_argument, 0, 0x30b},                             \
  {"rounds", required_argument, 0, 0x30c},                                    \
  {"llm-ops", required_argument, 0, 0x30d}
#define KF_CLI__LLM_HELP                                                      \
  "  --llm-url URL         OpenAI-compatible endpoint (.../v1)\n"            \
  "  --llm-model NAME      model name sent with each request\n"              \
  "  --llm-key-file PATH   API key file (mode 600) [$KF_LLM_KEY, else\n"     \
  "                        $OPENAI_API_KEY; never on the command line]\n"    \
  "  --rounds N            proposal rounds                       [1]\n"      \
  "  --llm-requests N      requests per round (operators rotate)  [2]\n"     \
  "  --llm-parallel N      requests in flight at once, at most    [2]\n"     \
  "  --llm-interval S      seconds between rounds                 [0]\n"     \
  "  --llm-timeout S       per HTTP request                      [120]\n"    \
  "  --llm-retries N       retries on 429, 5xx, timeouts          [3]\n"     \
  "  --llm-max-tokens N    max_tokens of each request          [4096]\n"     \
  "  --llm-temperature F   sampling temperature       [endpoint's]\n"        \
  "  --llm-price-in X      cost per 1000 prompt tokens            [0]\n"     \
  "  --llm-price-out X     cost per 1000 completion tokens        [0]\n"     \
  "  --llm-ops LIST        operators to plan, of improve,combine,\n"          \
  "                        prescribe,port (rotating)            [all]\n"

/* Applies option c (0x300..0x3ff).  0, or prints why and returns
 * KF_EXIT_USAGE. */
int kf_cli__llm_opt(kf_cli__llm *l, int c, const char *arg, const char *cmd);

/* The llm proposer for l (key from --llm-key-file, $KF_LLM_KEY or
 * $OPENAI_API_KEY); its requests are abandoned once *cancel is set (may
 * be NULL).  0 or prints why and returns an exit code. */
int kf_cli__llm_proposer(const kf_cli__llm *l, const char *cmd,
                         volatile sig_atomic_t *cancel,
                         struct kf_proposer **out);

/* Runs rounds of p against campaign id until l->rounds are done (0: until
 * the campaign ends), the campaign takes no more proposals or *stop is
 * set.  0 or an exit code (printed). */
int kf_cli__llm_rounds(kf_rpc_client *cli, struct kf_proposer *p, int64_t id,
                       const kf_cli__llm *l, const char *cmd, bool quiet,
                       volatile sig_atomic_t *stop);

/* The totals of a ProposerUsageResponse (tokens, cost, round-trip latency,
 * the profiling pass's cost) for campaign id: as lines of text on f, or
 * as members of JSON object j. */
void kf_cli__usage_print(FILE *f, int64_t id,
                         const Kernelfleet__ProposerUsageResponse *u);
void kf_cli__usage_json(struct cJSON *j,
                        const Kernelfleet__ProposerUsageResponse *u);

#endif
