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
} kf_worker_reg;

/* Inserts the device class if new and a new worker row.  *worker_id is
 * the new id, *device_class_id the class's id. */
int kf_store_register_worker(kf_store *s, const kf_worker_reg *reg,
                             int64_t *worker_id, int64_t *device_class_id);

/* Looks a worker up (after a coordinator restart, to refill the loop's
 * registry).  Returns KF_ENOTFOUND if absent.  task_kinds are written as
 * one comma-separated string into kinds (truncated to kinds_len). */
int kf_store_get_worker(kf_store *s, int64_t worker_id,
                        int64_t *device_class_id, char *kinds,
                        size_t kinds_len);

/* Marks the workers seen now and extends every lease they hold to
 * now + lease_ttl_ms.  One statement for the whole batch. */
int kf_store_heartbeat(kf_store *s, const int64_t *worker_ids, size_t n,
                       int lease_ttl_ms);

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

/* Inserts n tasks in one transaction; ids[i] receives each new id. */
int kf_store_submit(kf_store *s, const kf_task_spec *specs, size_t n,
                    int64_t *ids);

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
} kf_lease_grant;

/* Leases queued tasks to the n requests in one transaction (SKIP LOCKED,
 * so several coordinators could share a database), highest priority then
 * oldest first, each request getting at most its max_tasks.  *out is one
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
} kf_verdict; /* values equal proto ReportVerdict */

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
} kf_report;

/* Applies n reports in one transaction.  verdicts[i] tells what happened to
 * reps[i].  An accepted report with a retryable outcome (INFRA_ERROR)
 * requeues the task (or fails it after max_attempts) instead of finishing
 * it; its result row is still stored. */
int kf_store_report(kf_store *s, const kf_report *reps, size_t n,
                    kf_verdict *verdicts);

/* Requeues leases that expired before now; fails tasks whose attempts are
 * used up.  Counts go to *requeued and *failed (either may be NULL). */
int kf_store_reap(kf_store *s, int *requeued, int *failed);

typedef struct {
  uint64_t queued, leased, done, failed;
} kf_task_counts;

/* Task counts, for one campaign or (campaign_id 0) all tasks. */
int kf_store_counts(kf_store *s, int64_t campaign_id, kf_task_counts *out);

#endif
