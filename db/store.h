/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store.h -- KernelFleet's PostgreSQL store: the source of truth.
 *
 * The only module that includes libpq-fe.h.  Every statement is
 * parameterized.  Every call here BLOCKS on the network: the coordinator
 * runs them on a libuv work thread, one at a time per kf_store (a kf_store
 * is not thread-safe; one connection each).
 *
 * Errors: calls return 0 or a KF_E* code; libpq's text is kept on the
 * store (kf_store_errmsg).  A lost connection returns KF_EUNAVAIL; the next
 * call tries to reconnect once, so a PostgreSQL restart costs the calls
 * made while it was down, nothing more.  Every write is one transaction:
 * a failed call changes nothing.
 *
 * Leasing rules (the invariants the tests check):
 *  - a task is leased to one worker at a time; each lease increments
 *    `attempt`, and a report must name the attempt it ran;
 *  - heartbeats extend every lease the worker holds;
 *  - kf_store_reap requeues expired leases, or fails the task with its last
 *    reason once attempt == max_attempts;
 *  - a report of an attempt that is no longer the live lease is STALE and
 *    stores nothing; a report repeated for an attempt already stored is
 *    DUPLICATE and changes nothing; at most one result per (task, attempt)
 *    and one accepted final result per task.
 */
#ifndef KF_STORE_H
#define KF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diagnose.h"
#include "profile.h"

typedef struct kf_store kf_store;

/* Structured device class (mirrors proto DeviceClass). */
typedef struct {
  int kind;          /* proto DeviceKind: 1 cpu, 2 cuda; 0 = any */
  char model[128];
  uint32_t cc_major; /* 0 for CPUs */
  uint32_t cc_minor;
  char isa[32];
} kf_device_class;

/* Connects to conninfo (libpq keyword/value or URI).  Does not migrate.
 * On failure returns KF_EUNAVAIL with libpq's text in err; *out NULL. */
int kf_store_open(const char *conninfo, kf_store **out, char *err,
                  size_t errlen);
/* NULL-safe. */
void kf_store_close(kf_store *s);

/* Time limits.  Every session a store opens (kf_store_open and each
 * reconnect) runs with statement_timeout and lock_timeout, KF_STORE_*_MS
 * unless set here, so a statement stuck on a lock or a hung plan fails
 * (KF_EDB: the coordinator answers UNAVAILABLE) instead of hanging.  The
 * client side waits at most statement_ms + KF_STORE_WAIT_GRACE_MS for any
 * answer -- the server's timers do not run while it is stopped -- and
 * then drops the connection (KF_EUNAVAIL); connecting waits at most
 * KF_STORE_CONNECT_S seconds unless the conninfo says otherwise.
 * Migrations run without limits.  0 means no limit.  Applies now (0 or
 * KF_EUNAVAIL when the live connection cannot take it) and on every
 * reconnect. */
#define KF_STORE_STATEMENT_MS 10000u
#define KF_STORE_LOCK_MS 5000u
#define KF_STORE_WAIT_GRACE_MS 2000u
#define KF_STORE_CONNECT_S "5"
int kf_store_set_timeouts(kf_store *s, uint32_t statement_ms,
                          uint32_t lock_ms);
/* Last error text on this store; never NULL. */
const char *kf_store_errmsg(const kf_store *s);

/* Applies the embedded migrations (db/migrations/NNNN_*.sql) newer than
 * schema_version, all in one transaction under an advisory lock, so two
 * coordinators starting at once do not race.  Returns 0 or KF_EDB. */
int kf_store_migrate(kf_store *s);
/* Highest applied migration number, or a negative KF_E*. */
int kf_store_schema_version(kf_store *s);

/* ---------------------------------------------------------- workers -- */

typedef struct {
  const char *name;
  const char *hostname;
  kf_device_class dc;
  const char *device_json; /* DeviceInfo as JSON text, stored verbatim */
  const char *const *task_kinds;
  size_t n_task_kinds;
  uint32_t slots;
  /* The environment its measurements are taken under (DeviceInfo), part
   * of every measurement's identity.  harness_build NULL or "": none
   * (what it measures is never reused); the others may be NULL. */
  const char *harness_build; /* `kf-harness identity`, sha256 hex */
  const char *toolchain;     /* compiler version line */
  const char *driver;
  const char *runtime;
  /* The credential it registered with (api_tokens.id; 0: the bootstrap
   * token), the only one that may act for it afterwards. */
  int64_t token_id;
} kf_worker_reg;

/* Inserts the device class if new, the environment (device class,
 * harness build, toolchain, driver, runtime) if new, and a new worker row
 * pointing at both.  *worker_id is the new id, *device_class_id the
 * class's id. */
int kf_store_register_worker(kf_store *s, const kf_worker_reg *reg,
                             int64_t *worker_id, int64_t *device_class_id);

/* Looks a worker up (after a coordinator restart, to refill the loop's
 * registry and check the caller's binding).  Returns KF_ENOTFOUND if
 * absent.  task_kinds are written as one comma-separated string into kinds
 * (truncated to kinds_len); token_id gets the credential it registered
 * with (0: the bootstrap token).  Any output may be NULL. */
int kf_store_get_worker(kf_store *s, int64_t worker_id,
                        int64_t *device_class_id, char *kinds,
                        size_t kinds_len, int64_t *token_id);

/* ------------------------------------------------ credentials (0005) -- */

/* One row of api_tokens. */
typedef struct {
  int64_t id;
  char role[16];       /* "worker", "submitter", "admin" */
  char name[128];
  char hash[65];       /* SHA-256 of the secret, hex */
  char created_at[40]; /* PostgreSQL's text of the timestamp */
  char revoked_at[40]; /* "" while the credential is valid */
} kf_token_row;

/* Stores a credential by the hash of its secret (token.h).  *id is the
 * new row's.  KF_EINVAL for an unknown role or a hash that is not 64 hex
 * digits. */
int kf_store_token_create(kf_store *s, const char *role, const char *name,
                          const char *hash_hex, int64_t *id);
/* Every credential (with_revoked) or only the valid ones, by id.  *rows is
 * malloc'd (free() it; non-NULL on success even when *n is 0). */
int kf_store_token_list(kf_store *s, bool with_revoked, kf_token_row **rows,
                        size_t *n);
/* Sets revoked_at.  KF_ENOTFOUND when no such credential; revoking one
 * already revoked keeps its first time and succeeds. */
int kf_store_token_revoke(kf_store *s, int64_t id);

/* A lease as a worker names it. */
typedef struct {
  int64_t worker_id;
  int64_t task_id;
  uint32_t attempt;
} kf_lease_ref;

/* Marks the n workers seen now and extends to now + lease_ttl_ms exactly
 * the listed leases that are still live (state leased, same owner, same
 * attempt); live[i] tells which.  A lease of these workers that they do
 * not list is not extended, and its expiry is pulled in to at most one TTL
 * from now: a grant lost on its way to a worker expires and is requeued.  One
 * statement for the whole batch.  live may be NULL when n_refs is 0. */
int kf_store_heartbeat(kf_store *s, const int64_t *worker_ids, size_t n,
                       const kf_lease_ref *refs, size_t n_refs,
                       int lease_ttl_ms, bool *live);

/* ------------------------------------------------------------ tasks -- */

typedef struct {
  const char *kind;
  const void *payload;
  size_t payload_len;
  int64_t device_class_id; /* 0: any device */
  uint32_t max_attempts;   /* 0: 3 */
  int32_t priority;
  int64_t campaign_id;     /* 0: none */
  uint32_t timeout_ms;     /* 0: 60000 */
} kf_task_spec;

/* Inserts n tasks in one transaction; ids[i] receives each new id.  A
 * campaign_id that names no campaign is KF_ENOTFOUND ("task 3:
 * campaign_id 999999: no such campaign"), a kind that is not UTF-8
 * KF_EINVAL; nothing is written then. */
int kf_store_submit(kf_store *s, const kf_task_spec *specs, size_t n,
                    int64_t *ids);

/* Undoes leases granted to a caller that gave up before it could be told
 * (its call's deadline passed while the lease statement ran): each listed
 * lease still held exactly as granted (state leased, same owner and
 * attempt) goes back to queued with its attempt count as before.  One
 * statement; *undone (may be NULL) counts the leases undone. */
int kf_store_unlease(kf_store *s, const kf_lease_ref *refs, size_t n,
                     int *undone);

/* Looks up (or inserts) a device class and returns its id. */
int kf_store_device_class_id(kf_store *s, const kf_device_class *dc,
                             int64_t *id);

/* One worker's request in a lease batch. */
typedef struct {
  int64_t worker_id;
  int64_t device_class_id;       /* tasks for this class or for any */
  const char *const *task_kinds; /* kinds it can run */
  size_t n_task_kinds;
  uint32_t max_tasks;
} kf_lease_req;

/* A leased task.  Strings and payload point into the grant's own block. */
typedef struct {
  size_t req_index; /* which kf_lease_req it went to */
  int64_t task_id;
  uint32_t attempt;
  const char *kind;
  const void *payload;
  size_t payload_len;
  int64_t campaign_id;
  uint32_t timeout_ms;
} kf_leased_task;

typedef struct {
  kf_leased_task *tasks;
  size_t n;
  /* A task that avoids one of the batch's workers (a showdown: 0006) is
   * placed in another worker's free slot by a second transaction; when
   * that one failed, its tasks stay queued for the next batch and this
   * says why (the grant above is good).  Empty otherwise. */
  char avoided_err[160];
} kf_lease_grant;

/* Leases queued tasks to the n requests in one transaction (SKIP LOCKED,
 * so several coordinators could share a database), highest priority then
 * oldest first, each request getting at most its max_tasks; then, in a
 * second one and only when slots are left, the tasks that avoid one of
 * the requesting workers, each to another worker.  *out is one
 * allocation: free it with kf_store_grant_free.  A grant with n == 0 is
 * not an error. */
int kf_store_lease(kf_store *s, const kf_lease_req *reqs, size_t n,
                   int lease_ttl_ms, kf_lease_grant **out);
void kf_store_grant_free(kf_lease_grant *g);

/* What kf_store_report decided; only ACCEPTED writes anything.  A report
 * repeated later in the same batch sees the earlier one as stored. */
typedef enum {
  /* the live lease: state leased, held by this worker, this attempt */
  KF_VERDICT_ACCEPTED = 1,
  /* a result for (task, attempt) from this worker is already stored */
  KF_VERDICT_DUPLICATE = 2,
  /* an older attempt, or the live one after it was reaped / finished */
  KF_VERDICT_STALE = 3,
  /* no such task */
  KF_VERDICT_UNKNOWN_TASK = 4,
  /* never this worker's: another worker's live lease or stored result,
   * an attempt not started yet, or attempt 0 */
  KF_VERDICT_NOT_HOLDER = 5,
  /* the live lease's report, but it can never be stored (see
   * kf_store_report_ex): the task is failed with the reason instead */
  KF_VERDICT_INVALID = 6,
} kf_verdict; /* values equal proto ReportVerdict */

/* Why a report got KF_VERDICT_INVALID, as a phrase naming the field
 * ("reason is not valid UTF-8 (byte 17)"); "" for other verdicts. */
typedef struct {
  char text[200];
} kf_report_note;

/* What an eval task's report adds to its evaluation row, decoded by the
 * coordinator from the EvalResult in the output.  Times are 0 when
 * unknown (stored as NULL). */
typedef struct {
  double time_ns_median;     /* ns */
  double time_ns_spread;     /* (p90 - p10) / median */
  double ref_time_ns_median; /* ns */
  double ref_time_ns_spread;
  double achieved_gbps;      /* GB/s; 0: computed from floor_bytes */
  /* 0012: torch.compile of the reference, timed beside it in the same
   * evaluation (PyTorch problems on a GPU); 0: not timed */
  double compile_time_ns_median;
  /* 0013: the same for torch.compile(mode="max-autotune-no-cudagraphs") */
  double max_autotune_time_ns_median;
  /* the worker's copy ceiling measured again beside this timing
   * (EvalResult.stream_gbps; 0: not measured): the roofline fraction
   * divides by the larger of this and the worker's registered one */
  double stream_gbps;
  uint32_t repetitions;      /* timed repetitions; 0: unknown */
  /* the verdict depended on timing under load: never reused */
  bool timing_dependent;
  /* What the harness says it was (EvalResult); NULL or "": not said.
   * When either differs from the reporting worker's registered
   * environment the evaluation gets no environment (never reused). */
  const char *harness_build;
  const char *toolchain;
  const void *result;        /* packed EvalResult, stored verbatim */
  size_t result_len;
  /* 0007: the coordinator's diagnosis (NULL or bound NONE: none) and the
   * profile the report carried (NULL: none); one eval_profiles row when
   * either is there.  The profile's text and numbers are checked like
   * the rest of the report (INVALID when out of range). */
  const kf_diag *diag;
  const kf_prof *prof;
  /* What the coordinator found wrong in the fields it decoded into diag
   * and prof ("profile.reason is not valid UTF-8 (byte 3)"); NULL or "":
   * nothing.  Set: the report is refused as INVALID with this reason. */
  const char *bad;
} kf_eval_row;

typedef struct {
  int64_t worker_id;
  int64_t task_id;
  uint32_t attempt;
  int outcome;        /* kf_outcome */
  const char *stage;  /* may be NULL */
  const char *reason; /* may be NULL */
  const void *output;
  size_t output_len;
  uint64_t elapsed_us;
  /* May be NULL.  Used only when the task is a campaign's eval task and
   * the report is accepted and final (the task is done; a retryable
   * outcome is not final): then one evaluation row is written in the same
   * transaction (with NULL times when eval is NULL).  Ignored for every
   * other task. */
  const kf_eval_row *eval;
} kf_report;

/* Applies n reports in one transaction.  verdicts[i] tells what happened to
 * reps[i].  An accepted report with a retryable outcome (INFRA_ERROR)
 * requeues the task (or fails it after max_attempts) instead of finishing
 * it; its result row is still stored.  An accepted report that finishes a
 * campaign's eval task also writes its evaluation (see kf_report.eval);
 * evaluations.task_id is unique, so a repeated report never adds one.
 *
 * Poison isolation: one report never fails another's write.  A report of
 * the live lease that cannot be stored -- an unknown outcome, a stage or
 * reason that is not UTF-8 (kf_text_check) or longer than
 * KF_TEXT_NAME_MAX / KF_TEXT_REASON_MAX, elapsed_us or an evaluation's
 * numbers out of range, or rows the database refuses as data (SQLSTATE
 * class 22/23/54, found by writing the batch's rows one by one under
 * savepoints when the batch write is refused) -- gets KF_VERDICT_INVALID:
 * nothing of it is stored and its task is failed, with "result of attempt
 * N refused: <why>" as last_error.  Reports that are not the live lease's
 * get their usual verdict whatever they hold (they write nothing).  A
 * failure that is not the data's (connection, timeout) still fails the
 * whole call, which then changed nothing. */
int kf_store_report(kf_store *s, const kf_report *reps, size_t n,
                    kf_verdict *verdicts);
/* kf_store_report, with notes[i] saying why reps[i] was INVALID (notes may
 * be NULL). */
int kf_store_report_ex(kf_store *s, const kf_report *reps, size_t n,
                       kf_verdict *verdicts, kf_report_note *notes);

/* Requeues leases that expired before now; fails tasks whose attempts are
 * used up.  Counts go to *requeued and *failed (either may be NULL). */
int kf_store_reap(kf_store *s, int *requeued, int *failed);

typedef struct {
  uint64_t queued, leased, done, failed;
} kf_task_counts;

/* Task counts, for one campaign or (campaign_id 0) all tasks. */
int kf_store_counts(kf_store *s, int64_t campaign_id, kf_task_counts *out);


/* -------------------------------------------------------- campaigns -- */
/*
 * Search campaigns (db/store_campaign.c).  A campaign owns candidates
 * (genomes: a template plus knob values, or a proposer's own source) and
 * their evaluations, one per (candidate, device class).  A measurement's
 * identity is (problem_key, sha256(source), flags, environment): the
 * problem key hashes the canonical spec, the reference and the language;
 * the environment is the device class with driver, runtime, toolchain and
 * harness build of the worker that measured it.  eval_keys makes "a key
 * is measured at most once per campaign" a database constraint.  A key
 * another campaign of the same problem measured under the environment the
 * class's workers have now is reused: this campaign gets its own
 * candidate and an evaluation row aggregating the key's measurements
 * (task_id NULL, reused_from = the latest of them), and counts it like one
 * of its own (migrations/0003_eval_reuse.sql, 0004_measurement_identity).
 * When the search stops, a showdown re-times the top candidates of each
 * class, and the campaign's best and its numbers come from it.
 *
 * Rows come back as one allocation (structs first, strings after them):
 * free lists with kf_store_list_free, a campaign with kf_store_campaign_free.
 * Every call BLOCKS; run them where the other store calls run.
 */

/* Campaign states, as stored: "running", "showdown" (the search stopped;
 * the showdown tasks run), "done", "failed", "stopped". */

typedef struct {
  const char *name;
  const char *problem;
  const char *language;         /* "c" or "cuda" */
  int backend;                  /* proto DeviceKind: 1 cpu, 2 cuda */
  const void *spec_json;        /* verbatim */
  size_t spec_json_len;
  const char *reference_source;
  const char *templates_json;   /* see migrations/0002_campaigns.sql */
  uint32_t budget_evals;        /* count, > 0 */
  uint32_t budget_seconds;      /* s, > 0 */
  uint32_t population;          /* count, > 0 */
  uint32_t plateau_evals;       /* count; 0: no plateau stop */
  double target_roofline;       /* fraction of the floor, (0, 2] */
  uint64_t search_seed;
  double floor_bytes;           /* bytes at the benchmark size; 0 unknown */
  /* kf_spec_canonical_hash of the spec, 64 hex; the store hashes the
   * reference itself and derives the campaign's problem_key */
  const char *spec_sha256;
  bool fresh;                   /* reuse no stored measurement */
  uint32_t showdown_top;        /* candidates per class; 0: 5; <= 64 */
  /* 0: every class of the backend; else only this class runs it (0009) */
  int64_t device_class_id;
  /* profiling policy, "all", "none" or "top:K" (K 1..999); NULL or "":
   * "top:5" (0007; the coordinator checks it) */
  const char *profile;
} kf_campaign_new;

/* Inserts a running campaign; *id is its id. */
int kf_store_campaign_create(kf_store *s, const kf_campaign_new *c,
                             int64_t *id);

typedef struct {
  int64_t id;
  const char *name, *problem, *language, *state;
  const char *stop_reason;      /* "" while running */
  int backend;
  const char *spec_json;        /* NUL-terminated copy */
  size_t spec_json_len;
  const char *reference_source;
  const char *templates_json;
  /* hex sha256 of each template's source, comma-separated, in order */
  const char *template_shas;
  uint32_t budget_evals, budget_seconds, population, plateau_evals;
  double target_roofline;
  uint64_t search_seed;
  double floor_bytes;
  int64_t best_candidate_id;    /* 0: none yet */
  uint64_t elapsed_ms;          /* since started_at (until finished_at) */
  const char *problem_key;      /* see the section comment */
  bool fresh;
  uint32_t showdown_top;
  const char *showdown;         /* "", "running", "done", "failed: ..." */
  bool best_from_showdown;
  int64_t device_class_id;      /* 0: every class; else only this one */
  kf_device_class dc;           /* that class (kind 0 when none) */
  int64_t port_from_campaign;   /* 0: not a port (store_fleet.c) */
  int64_t port_from_class;
  kf_device_class port_dc;      /* port_from_class (kind 0 when none) */
  const char *profile;          /* "all", "none", "top:K" (0007) */
} kf_campaign;

/* KF_ENOTFOUND when there is no such campaign. */
int kf_store_campaign_get(kf_store *s, int64_t id, kf_campaign **out);
/* NULL-safe. */
void kf_store_campaign_free(kf_campaign *c);

/* Ids of the campaigns the search steps (running, or in their showdown),
 * ascending, into a malloc'd array (free it with free(); NULL when n is
 * 0). */
int kf_store_campaigns_running(kf_store *s, int64_t **ids, size_t *n);

typedef struct {
  uint32_t issued;        /* evaluations asked for: eval tasks created
                           * (eval_keys with a task) + evals_reused */
  uint32_t outstanding;   /* eval tasks queued or leased */
  uint32_t evals;         /* evaluations recorded, reused ones included */
  uint32_t evals_reused;  /* of those, copied from another campaign's */
  uint32_t evals_ok;
  /* proposals (proposer not "evolution") not evaluated yet: never
   * planned on any class, or their task queued or leased */
  uint32_t proposals_waiting;
  uint32_t by_outcome[16];  /* indexed by kf_outcome */
  /* The first row of the ranking (kf_store_evaluations KF_EVALS_BEST):
   * best_candidate_id's, with its showdown's numbers once it had one */
  double best_speedup;      /* 0 none */
  double best_time_ns;
  double ref_time_ns;
  double roofline_fraction;
  double best_spread;
  uint32_t best_repetitions;
  uint32_t best_measurements;
  bool best_showdown;       /* the numbers are the showdown's */
} kf_campaign_counts;

int kf_store_campaign_counts(kf_store *s, int64_t id, kf_campaign_counts *out);

/* Moves a running campaign (or one in its showdown) to state ("done",
 * "failed" or "stopped") with a reason, and fails its queued tasks with
 * last_error = reason (leased ones finish and are recorded).  A showdown
 * still running is marked failed with the reason.  *changed is false when
 * it was neither (nothing is written).  cancelled may be NULL. */
int kf_store_campaign_finish(kf_store *s, int64_t id, const char *state,
                             const char *reason, bool *changed,
                             int *cancelled);

/* The credential that created campaign id (0015): set once, right after
 * it is created (a credential id > 0; 0 sets nothing); read back as
 * *owner (0: the bootstrap token, an admin, or before 0015), *found false
 * when there is no such campaign. */
int kf_store_campaign_set_owner(kf_store *s, int64_t id, int64_t cred_id);
int kf_store_campaign_owner(kf_store *s, int64_t id, int64_t *owner,
                            bool *found);

/* Records the campaign's best candidate (0 clears it). */
int kf_store_campaign_set_best(kf_store *s, int64_t id, int64_t candidate_id);

/* The largest memory (DeviceInfo.mem_bytes, bytes) any worker of backend
 * (proto DeviceKind) registered with, and how many workers of it are
 * registered (alive or not).  *max_mem is 0 when none said. */
int kf_store_backend_memory(kf_store *s, int backend, uint64_t *max_mem,
                            uint32_t *workers);

/* A device class that can evaluate a campaign's candidates now. */
typedef struct {
  int64_t device_class_id;
  uint32_t workers;       /* alive workers of the class running "eval" */
  uint32_t slots;         /* their slots, summed */
  uint32_t outstanding;   /* the campaign's queued/leased tasks for it */
  uint32_t issued;        /* the campaign's eval tasks for it, ever, plus
                           * its evaluations reused there */
  double copy_gbps;       /* best measured copy bandwidth, GB/s; 0 unknown */
  /* the environment every alive eval worker of the class registered; 0
   * when they differ or one has none: then nothing is reused there */
  int64_t environment_id;
  uint32_t showdown_workers; /* alive ones that also run "showdown" */
} kf_eval_class;

/* Classes of the campaign's backend with at least one worker that runs
 * "eval" and was seen within alive_ms.  *out is one allocation, free()
 * it; NULL when *n is 0. */
int kf_store_eval_classes(kf_store *s, int64_t campaign_id, uint32_t alive_ms,
                          kf_eval_class **out, size_t *n);

/* One candidate, with its evaluation when the query joins one. */
typedef struct {
  int64_t candidate_id;
  const char *template_name;    /* "" for free-form sources */
  const char *knobs_json;       /* {"NAME": "value"} */
  const char *flags;            /* "-DA=1 -DB=2" */
  const char *source_sha256;
  const char *proposer;
  const char *source;           /* NULL unless the call says it fills it */
  int32_t generation;
  /* evaluation; id 0 when none */
  int64_t eval_id;
  int64_t task_id;
  int64_t device_class_id;
  kf_device_class dc;
  int outcome;                  /* kf_outcome */
  const char *stage, *reason;   /* "" when none */
  double time_ns_median, time_ns_spread;         /* 0: unknown */
  double ref_time_ns_median, ref_time_ns_spread;
  double speedup, achieved_gbps, roofline_fraction;
  /* 0012: torch.compile's time in the same evaluation and the speedup
   * over it (the search evaluation's, also on a showdown row); 0: not
   * timed */
  double compile_time_ns_median, speedup_compile;
  /* 0013: the same for max-autotune-no-cudagraphs */
  double max_autotune_time_ns_median, speedup_max_autotune;
  /* the evaluation this one copies (another campaign's); 0: measured for
   * this campaign by task_id */
  int64_t reused_from;
  int64_t campaign_id;          /* the candidate's (or key's) campaign */
  uint32_t repetitions;         /* 0: unknown */
  uint32_t measurements;        /* aggregated; 1 for one measurement */
  bool timing_dependent;
  /* KF_EVALS_BEST and kf_store_best: the times, spread, repetitions,
   * speedup and roofline are the showdown's */
  bool showdown;
  int64_t environment_id;       /* measured under; 0: unknown */
  /* 0007: the diagnosis of the evaluation (of the one it reuses):
   * bound "" when none; and the whole eval_profiles row as a JSON object
   * ("" when none; see migrations/0007_profiles.sql for its keys) */
  const char *bound;
  double bw_frac;
  const char *profile_json;
} kf_cand_row;

typedef struct {
  kf_cand_row *v;
  size_t n;
} kf_cand_list;

/* NULL-safe. */
void kf_store_list_free(kf_cand_list *l);

typedef enum {
  KF_EVALS_BY_ID,       /* every evaluation, oldest first (the search) */
  KF_EVALS_RECENT,      /* newest first */
  KF_EVALS_FAILURES,    /* outcome not ok, newest first */
  /* The ranking: ok only; best_candidate_id first, then candidates whose
   * showdown re-timed them ok (by the showdown's speedup), then the rest
   * by speedup; a candidate that failed its showdown (any outcome but ok
   * and infra_error) is left out.  Rows with a showdown carry its numbers
   * (showdown true). */
  KF_EVALS_BEST,
} kf_evals_order;

/* Evaluations of a campaign with their candidates; limit 0: all. */
int kf_store_evaluations(kf_store *s, int64_t campaign_id,
                         kf_evals_order order, uint32_t limit,
                         kf_cand_list **out);

/* The evaluations of one candidate of the campaign (one per device
 * class), oldest first, with their diagnoses and profiles; an empty list
 * when it has none. */
int kf_store_candidate_evaluations(kf_store *s, int64_t campaign_id,
                                   int64_t candidate_id, kf_cand_list **out);

/* The campaign's best evaluation with the candidate's source: the first
 * row of the KF_EVALS_BEST ranking.  KF_ENOTFOUND when no candidate has
 * evaluated ok yet. */
int kf_store_best(kf_store *s, int64_t campaign_id, kf_cand_list **out);

/* kf_store_best for one device class: the class's ranking (the
 * KF_EVALS_BEST order, restricted to dc, with the class's own best --
 * campaign_classes.best_candidate_id -- first).  KF_ENOTFOUND when no
 * candidate has evaluated ok on dc yet. */
int kf_store_best_class(kf_store *s, int64_t campaign_id, int64_t dc,
                        kf_cand_list **out);

/* Proposals (candidates not bred by the search, proposer <> 'evolution')
 * for all classes or for dc, with no eval_keys row for dc yet, oldest
 * first, sources filled. */
int kf_store_pending_candidates(kf_store *s, int64_t campaign_id, int64_t dc,
                                kf_cand_list **out);

/* The keys on dc the search must know about: every eval_keys row of the
 * campaign on dc (with a task or not), and -- unless the campaign is
 * fresh -- every row with a task of another campaign of the same
 * problem_key whose source is one of the campaign's candidates' or one of
 * shas (comma-separated hex, may be "").  Filled: candidate_id,
 * source_sha256, flags, campaign_id, task_id (0: none), stage (the task's
 * state: "queued", "leased", "done", "failed"; "" without a task) and
 * eval_id: the campaign's own rows, the evaluation of the task (0: none
 * yet); another campaign's, the evaluation only when it may be reused on
 * this class now -- measured under env (the class's one environment; 0:
 * none, so never) and not timing-dependent -- else 0. */
int kf_store_eval_keys(kf_store *s, int64_t campaign_id, int64_t dc,
                       int64_t env, const char *shas, kf_cand_list **out);

/* Reserves n candidate ids and n task ids (nextval), for payloads that
 * must name them before the rows exist. */
int kf_store_reserve_ids(kf_store *s, size_t n, int64_t *candidate_ids,
                         int64_t *task_ids);

/* One decision of the search for one device class. */
typedef struct {
  bool new_candidate;           /* insert the candidate row first */
  int64_t candidate_id;         /* reserved or existing */
  int64_t device_class_id;
  /* new candidates only */
  const char *template_name;
  const char *knobs_json;
  const char *source;
  const char *proposer;
  const int64_t *parents;
  size_t n_parents;
  int32_t generation;
  const char *flags;            /* canonical; also for existing ones */
  const char *source_sha256;    /* hex; NULL: computed from source */
  /* 0: a duplicate of duplicate_of, recorded without a task */
  int64_t task_id;              /* reserved */
  int64_t duplicate_of;
  /* with duplicate_of (another campaign's candidate): that candidate's
   * measured evaluation on this class; this campaign gets a reused
   * evaluation aggregating every reusable measurement of its key (same
   * problem_key, source, flags, environment); 0: a plain duplicate, no
   * evaluation */
  int64_t reuse_eval;
  int64_t environment_id;       /* reuse_eval must have been measured under
                                 * this environment */
  const void *payload;          /* packed EvalRequest */
  size_t payload_len;
  uint32_t max_attempts;         /* 0: 2 */
  uint32_t timeout_ms;           /* ms; 0: 120000 */
  int32_t priority;              /* task priority; proposals go first */
} kf_eval_plan;

/* Inserts the plans' candidates, eval_keys rows, eval tasks and reused
 * evaluations in one transaction.  A plan whose key this campaign took
 * meanwhile (another coordinator) gets no task: scheduled[i] says which
 * got their task, or for a reuse plan their evaluation (may be NULL).  A
 * reuse is refused (scheduled false) when reuse_eval is not a measured,
 * not timing-dependent evaluation of another campaign of the same
 * problem_key on the plan's class under environment_id, when this
 * campaign is fresh, or when it reused it already. */
int kf_store_schedule(kf_store *s, int64_t campaign_id,
                      const kf_eval_plan *plans, size_t n, bool *scheduled);

/* ProposeCandidate: inserts a proposer's candidate.  When this campaign
 * already holds its key (evaluated, queued or reused) on every class of
 * the campaign's backend that has an eval worker (and there is at least
 * one), nothing is inserted, *duplicate is true and *candidate_id names
 * the campaign's candidate on the first such class.  A key only another
 * campaign evaluated is inserted: the search reuses that evaluation. */
int kf_store_propose(kf_store *s, int64_t campaign_id,
                     const char *template_name, const char *knobs_json,
                     const char *flags, const char *source,
                     const char *proposer, int64_t *candidate_id,
                     bool *duplicate);

/* kf_store_propose for a proposal that declares a knob space
 * (knob_space_json: [{"name", "values": [...]}], validated by the
 * caller): in the same transaction the source becomes an entry of the
 * campaign's templates -- {"name", "file": "", "source", "knobs",
 * "origin": "proposer", "proposer"} -- named template_name, or
 * "proposal-" and the first 12 hex digits of sha256(source) when that is
 * "" -- unless one with the same source is there already (then the
 * candidate names that one).  The name actually used is copied to
 * name_out (64 bytes).  KF_EEXIST when template_name names a template
 * with another source; KF_ESTATE when the campaign holds 64 templates
 * already (the search reads no more). */
int kf_store_propose_template(kf_store *s, int64_t campaign_id,
                              const char *template_name,
                              const char *knob_space_json,
                              const char *knobs_json, const char *flags,
                              const char *source, const char *proposer,
                              int64_t *candidate_id, bool *duplicate,
                              char name_out[64]);

/* -------------------------------------------------------- proposers -- */
/*
 * What proposers spent and got per campaign (proposer_calls, 0008;
 * db/store_proposer.c): one row per request to a model.
 */

typedef struct {
  const char *proposer, *model, *prompt_version, *operation;
  const char *outcome;          /* "ok", "duplicate", "malformed", ... */
  const char *reason;
  uint32_t http_status, attempts;
  uint64_t prompt_tokens, completion_tokens;
  double cost;                  /* >= 0, finite */
  uint64_t latency_ms;
  int64_t candidate_id;         /* 0: none; one not of the campaign: none */
  const char *created_at;       /* rows read back only */
} kf_proposer_call;

/* Inserts n calls of a campaign in one statement, recorded by credential
 * cred_id.  KF_ENOTFOUND when there is no such campaign. */
int kf_store_proposer_record(kf_store *s, int64_t campaign_id,
                             int64_t cred_id, const kf_proposer_call *calls,
                             size_t n);

typedef struct {
  uint32_t calls, failures;     /* failures: outcome not ok/duplicate */
  uint64_t prompt_tokens, completion_tokens;
  double cost;
  /* round trip of a call (first request to last reply), over the calls */
  double latency_ms_median, latency_ms_p90;
  uint64_t latency_ms_max;
  uint32_t proposed;            /* calls that became a candidate */
  /* the profiling pass: evaluations run for the campaign (not reused),
   * those with a pass time (eval_profiles.profile_ms), its median, p90
   * and sum */
  uint32_t evaluations, profiled;
  double profile_ms_median, profile_ms_p90;
  uint64_t profile_ms_total;
  kf_proposer_call *recent;     /* newest first; one allocation with the
                                 * strings: free(recent) */
  size_t n_recent;
} kf_proposer_usage;

/* A device class of a campaign's backend with eval workers, and the facts
 * (workers.device) of its worker seen last. */
typedef struct {
  kf_device_class dc;
  uint32_t workers_alive;       /* seen within alive_ms */
  uint32_t cores;
  uint64_t l2_bytes, mem_bytes;
  double copy_gbps, peak_gflops;
  double read_gbps, write_gbps; /* 0: not registered */
  /* the environment of that worker (0004); "" unknown */
  char compiler[128], driver[128], runtime[128];
} kf_campaign_device;

/* The device classes campaign_id can run on (its backend, workers that run
 * "eval"), those with alive workers first; at most 16.  *out: free() it;
 * NULL when *n is 0. */
int kf_store_campaign_devices(kf_store *s, int64_t campaign_id,
                              uint32_t alive_ms, kf_campaign_device **out,
                              size_t *n);

/* Totals of the campaign's calls and the newest `limit` of them.
 * KF_ENOTFOUND when there is no such campaign. */
int kf_store_proposer_usage(kf_store *s, int64_t campaign_id, uint32_t limit,
                            kf_proposer_usage *out);

/* --------------------------------------------------------- showdown -- */
/*
 * When a campaign's search stops, its top candidates of each device class
 * are re-timed together with the reference in one "showdown" task per
 * class (payload a ShowdownRequest, result a ShowdownResult).  The search
 * (coordinator/showdown.c) drives it through these calls; the campaign's
 * best and its numbers then come from the showdown.
 */

/* Candidates of a campaign by id, sources filled, in no particular order;
 * ids that are not the campaign's are left out. */
int kf_store_candidates(kf_store *s, int64_t campaign_id, const int64_t *ids,
                        size_t n, kf_cand_list **out);

typedef struct {
  int64_t device_class_id;
  int64_t task_id;              /* reserved (kf_store_reserve_ids) */
  const void *payload;          /* packed ShowdownRequest */
  size_t payload_len;
  uint32_t timeout_ms;          /* ms, > 0 */
  uint32_t max_attempts;        /* 0: 2 */
  const int64_t *candidates;    /* the entries, in request order */
  size_t n_candidates;          /* 1..64 */
  /* > 0: for this long the task is not leased to the worker that
   * measured candidates[0] in the search, so that a second worker of
   * the class confirms the best; 0: any worker at once */
  uint32_t avoid_ms;
} kf_showdown_plan;

/* The search stopped: a running campaign moves to "showdown" with
 * stop_reason = reason and showdown "running", its queued eval tasks are
 * failed with the reason, and each plan becomes a "showdown" task with
 * its showdowns row and entries -- one transaction.  *changed is false
 * when the campaign was not running (nothing is written).  n > 0: a
 * campaign with nothing to re-time is concluded directly. */
int kf_store_showdown_begin(kf_store *s, int64_t campaign_id,
                            const char *reason, const kf_showdown_plan *plans,
                            size_t n, bool *changed);

/* One showdown of a campaign, as the search reads it. */
typedef struct {
  int64_t id;
  int64_t device_class_id;
  int64_t task_id;
  const char *state;            /* "running", "done", "failed" */
  const char *reason;           /* why it failed; "" */
  const char *task_state;       /* "queued", "leased", "done", "failed" */
  const char *last_error;       /* the task's; "" none */
  const void *output;           /* the task's final result output (a
                                 * ShowdownResult) once it is done; NULL */
  size_t output_len;
  int64_t worker_id;            /* who reported it; 0 */
  int result_outcome;           /* kf_outcome of that report; 0 */
  const char *result_reason;    /* "" */
  uint64_t age_ms;              /* since it was created */
  uint32_t timeout_ms;          /* the task's */
  uint32_t max_attempts;
  uint32_t showdown_workers;    /* alive workers of its class that run
                                 * "showdown" */
} kf_showdown_row;

typedef struct {
  kf_showdown_row *v;
  size_t n;
} kf_showdown_list;

/* *confirmed: candidate_id's entry in the campaign's showdown on class dc
 * re-timed it ok on a worker of another credential (0014
 * kf_same_principal) than the one whose search evaluation measured it
 * (the evaluation it reuses, for a reused one).  False when the showdown
 * is not done, the entry not ok, or either worker unknown.  A worker
 * names its own device class, so a class only one party serves is that
 * party's word alone (docs/security.md, "a class of its own"). */
int kf_store_showdown_confirmed(kf_store *s, int64_t campaign_id, int64_t dc,
                                int64_t candidate_id, bool *confirmed);

/* The campaign's showdowns, by class id.  One allocation; free it with
 * kf_store_showdown_list_free (NULL-safe). */
int kf_store_showdowns(kf_store *s, int64_t campaign_id, uint32_t alive_ms,
                       kf_showdown_list **out);
void kf_store_showdown_list_free(kf_showdown_list *l);

/* One candidate's showdown timing (proto ShowdownTiming). */
typedef struct {
  int64_t candidate_id;
  int outcome;                  /* kf_outcome; not ok: it loses its place,
                                 * but for infra_error (not judged) */
  const char *stage, *reason;   /* may be NULL */
  double time_ns_median;        /* ns; 0 unknown */
  double time_ns_spread;
  uint32_t repetitions;
  double speedup;               /* 0: computed as ref / time */
  double achieved_gbps;         /* 0: computed from floor_bytes */
} kf_showdown_timing;

typedef struct {
  int64_t showdown_id;
  bool ok;                      /* false: the showdown failed (reason) */
  const char *reason;
  bool cancel_task;             /* also fail its queued or leased task */
  int64_t worker_id;            /* the reporting worker; 0 unknown */
  double ref_time_ns_median;
  double ref_time_ns_spread;
  uint32_t ref_repetitions;
  double stream_gbps;           /* as kf_eval_row's; 0: not measured */
  const void *result;           /* packed ShowdownResult; may be NULL */
  size_t result_len;
  const kf_showdown_timing *entries; /* for the showdown's candidates;
                                      * others are ignored */
  size_t n_entries;
} kf_showdown_outcome;

/* Records the end of a running showdown in one transaction: its state,
 * reference times and result, each entry's timing (roofline fraction
 * from the campaign's floor_bytes and the larger of the worker's copy_gbps
 * and stream_gbps), the
 * environment of the reporting worker.  A showdown no longer running is
 * left alone (*changed false). */
int kf_store_showdown_record(kf_store *s, const kf_showdown_outcome *o,
                             bool *changed);

/* Ends a campaign's search and showdown: state "done" from "running" or
 * "showdown", best_candidate_id (0: none), best_from_showdown and the
 * showdown text; stop_reason = reason unless it has one already.  Queued
 * tasks are failed as by kf_store_campaign_finish.  *changed is false
 * when it was neither running nor in its showdown. */
int kf_store_campaign_conclude(kf_store *s, int64_t id, const char *reason,
                               int64_t best_candidate_id,
                               bool best_from_showdown, const char *showdown,
                               bool *changed);

/* -------------------------------------------------------- per class -- */
/*
 * Per-class campaigns and porting (db/store_fleet.c, migration 0009).
 * Each device class a campaign runs on has its own row: its state
 * ("running", "showdown", "done"), stop reason, best, showdown text and
 * clock.  The search (coordinator/search.c) applies the stop rules per
 * class; the campaign is done when every class is.
 */

typedef struct {
  int64_t device_class_id;
  kf_device_class dc;
  const char *state;            /* "running", "showdown", "done" */
  const char *stop_reason;      /* "" while running */
  const char *showdown;         /* as kf_campaign.showdown, for the class */
  int64_t best_candidate_id;    /* 0: none yet */
  bool best_from_showdown;
  uint64_t elapsed_ms;          /* since the class started (until done) */
  uint32_t issued;              /* eval tasks created + reused, on it */
  uint32_t outstanding;         /* its eval tasks queued or leased */
  uint32_t evals;               /* evaluations recorded on it */
  uint32_t evals_ok;
} kf_class_row;

typedef struct {
  kf_class_row *v;
  size_t n;
} kf_class_list;

/* NULL-safe. */
void kf_store_class_list_free(kf_class_list *l);

/* While the campaign is running, adds a "running" row (clock starting
 * now) for each class in dcs[0..n) it has none for; then returns every
 * class row of the campaign by class id (one allocation). */
int kf_store_campaign_classes(kf_store *s, int64_t campaign_id,
                              const int64_t *dcs, size_t n,
                              kf_class_list **out);

/* Records the class's current best (0 clears it). */
int kf_store_class_set_best(kf_store *s, int64_t campaign_id, int64_t dc,
                            int64_t candidate_id);

/* The search of class dc stopped (reason).  With plan (its showdown task,
 * created as by kf_store_showdown_begin) the class moves from "running"
 * to "showdown" with showdown "running"; without one it is "done" at once
 * with best (0: none) and the showdown text.  The campaign's queued eval
 * tasks on dc are failed with the reason.  One transaction; *changed is
 * false when the class was not running (nothing written). */
int kf_store_class_stop(kf_store *s, int64_t campaign_id, int64_t dc,
                        const char *reason, const kf_showdown_plan *plan,
                        int64_t best, const char *showdown, bool *changed);

/* The class's showdown ended: "showdown" -> "done" with its best, where
 * the numbers came from and the showdown text. */
int kf_store_class_conclude(kf_store *s, int64_t campaign_id, int64_t dc,
                            int64_t best, bool best_from_showdown,
                            const char *showdown, bool *changed);

/* No class of the campaign searches any more and a showdown still runs:
 * "running" -> "showdown", stop_reason = reason, showdown "running". */
int kf_store_campaign_enter_showdown(kf_store *s, int64_t campaign_id,
                                     const char *reason, bool *changed);

/* The device class whose model is name (of kind, or any kind when 0).
 * KF_ENOTFOUND (the message lists the known names) or KF_EINVAL when
 * several classes share the name (the message says how they differ). */
int kf_store_class_by_name(kf_store *s, int kind, const char *name,
                           int64_t *id);

typedef struct {
  int64_t from_campaign;
  int64_t from_class;       /* 0: the source's class with the best speedup
                             * other than to_class */
  int64_t to_class;         /* the new campaign runs only here */
  uint32_t elites;          /* 0: the source's showdown_top */
  const char *name;         /* NULL/"": "<source name> -> <model>" */
  /* 0: the source campaign's */
  uint32_t budget_evals, budget_seconds, plateau_evals;
  uint64_t search_seed;
  bool fresh;
} kf_port_new;

/* Creates a campaign that ports another one's elites to a class: the
 * problem (spec, reference, templates, language, backend, problem key)
 * and settings are copied from from_campaign; it runs only on to_class;
 * the best `elites` candidates of from_campaign on from_class (its
 * ranking: showdown numbers first, failures of the showdown left out)
 * become its first candidates (proposer "port:<id>", ported_from), so
 * they are verified and timed on to_class before anything is bred there.
 * One transaction.  KF_ENOTFOUND: no such campaign; KF_ESTATE: it has no
 * verified candidate on from_class (or on any class but to_class). */
int kf_store_campaign_port(kf_store *s, const kf_port_new *p, int64_t *id);

/* One ported elite, before (the source campaign, its class) and after
 * (this campaign, its class). */
typedef struct {
  int64_t candidate_id;        /* in the port campaign */
  int64_t from_candidate;      /* in the source campaign */
  const char *template_name, *knobs_json;
  double before_speedup, before_time_ns, before_roofline;
  bool before_showdown;        /* before numbers from its showdown */
  int after_outcome;           /* kf_outcome; 0: not evaluated yet */
  const char *after_reason;    /* "" */
  double after_speedup, after_time_ns, after_roofline;
} kf_port_row;

typedef struct {
  kf_port_row *v;
  size_t n;
} kf_port_list;

/* The ported elites of a port campaign, in the source's ranking order
 * (empty for a campaign that is not a port).  free() the list. */
int kf_store_port_report(kf_store *s, int64_t campaign_id,
                         kf_port_list **out);

/* ---------------------------------------------------------------------
 * Dashboard views (db/store_views.c): read-only, one allocation each.
 */

/* One campaign's progress, for ListCampaigns. */
typedef struct {
  int64_t id;
  const char *name, *problem, *language, *state, *stop_reason, *showdown;
  int backend;
  uint32_t budget_evals, budget_seconds, showdown_top;
  bool fresh;
  uint64_t elapsed_ms;
  uint32_t evals, evals_ok;
  uint32_t outstanding;     /* eval tasks queued or leased */
  double best_speedup;      /* highest of any ok evaluation; 0 none */
  double best_roofline;
} kf_campaign_summary;

/* One device class's share of a listed campaign's evaluations. */
typedef struct {
  int64_t campaign_id;
  kf_device_class dc;
  uint32_t evals, evals_ok;
  double best_speedup, best_roofline, best_time_ns; /* 0: none */
} kf_class_progress;

typedef struct {
  kf_campaign_summary *v;   /* newest first */
  size_t n;
  kf_class_progress *classes; /* grouped by campaign, same order */
  size_t n_classes;
} kf_campaign_summaries;

/* At most limit campaigns (> 0) with ids below before_id (0: any), newest
 * first, with their classes.  Free with kf_store_summaries_free. */
int kf_store_campaign_summaries(kf_store *s, uint32_t limit,
                                int64_t before_id,
                                kf_campaign_summaries **out);
void kf_store_summaries_free(kf_campaign_summaries *l);

/* One evaluation as a point of the campaign's time series. */
typedef struct {
  int64_t candidate_id, task_id; /* task 0: reused */
  int outcome;                   /* kf_outcome */
  const char *stage;
  kf_device_class dc;
  int64_t at_ms;                 /* recorded, Unix ms */
  double time_ns_median, speedup, roofline_fraction, achieved_gbps;
  /* the measuring worker's DeviceInfo copy_gbps / peak_gflops; 0 unknown */
  double ceiling_gbps, peak_gflops;
} kf_eval_point;

typedef struct {
  kf_eval_point *v;              /* oldest first */
  size_t n;
  int64_t started_at_ms;         /* the campaign's start */
} kf_eval_series;

/* The first limit (> 0) evaluations of a campaign.  KF_ENOTFOUND when there
 * is no such campaign.  Free with kf_store_series_free. */
int kf_store_eval_series(kf_store *s, int64_t campaign_id, uint32_t limit,
                         kf_eval_series **out);
void kf_store_series_free(kf_eval_series *l);

#endif
