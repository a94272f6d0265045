/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_internal.h -- what db/store.c and db/store_tasks.c share: the
 * kf_store struct, the statement runner (lazy PQprepare, error mapping,
 * reconnect) and the text-array literal builder that lets one statement
 * carry a whole batch through unnest().
 *
 * Not a public header: only db/ and the store's unit tests include it (the
 * tests use kf_store__admin_* to create databases and count rows without
 * including libpq themselves).
 */
#ifndef KF_STORE_INTERNAL_H
#define KF_STORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* libpq's own tags, declared here rather than by including libpq-fe.h, so
 * the unit tests can include this header without libpq's include path
 * (C11 allows the repeated identical typedef in the .c files). */
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

/* Every prepared statement, one id each: the id indexes kf_store.prepared
 * and names the server-side statement ("kf3"), so a reconnect only has to
 * clear the flags for the statements to be prepared again on first use. */
typedef enum {
  KF_STMT_BEGIN,
  KF_STMT_COMMIT,
  KF_STMT_ROLLBACK,
  KF_STMT_SCHEMA_EXISTS,
  KF_STMT_SCHEMA_MAX,
  KF_STMT_DC_SELECT,
  KF_STMT_DC_UPSERT,
  KF_STMT_WORKER_INSERT,
  KF_STMT_WORKER_GET,
  KF_STMT_HEARTBEAT,
  KF_STMT_COUNTS,
  KF_STMT_SUBMIT,
  KF_STMT_LEASE,
  KF_STMT_LEASE_PROBE, /* 0011 */
  KF_STMT_LEASE_AVOIDED,
  KF_STMT_LEASE_ASSIGN,
  KF_STMT_REPORT_LOCK,
  KF_STMT_REPORT_RESULTS,
  KF_STMT_REPORT_WRITE,
  KF_STMT_REAP,
  KF_STMT_REPORT_EVAL,
  KF_STMT_REPORT_PROFILE, /* 0007 */
  /* db/store_campaign.c */
  KF_STMT_CAMP_CREATE,
  KF_STMT_CAMP_GET,
  KF_STMT_CAMP_RUNNING,
  KF_STMT_CAMP_COUNTS,
  KF_STMT_CAMP_OUTCOMES,
  KF_STMT_CAMP_FINISH,
  KF_STMT_CAMP_CANCEL,
  KF_STMT_CAMP_SET_BEST,
  KF_STMT_CAMP_CLASSES,
  KF_STMT_CAMP_EVALS,
  KF_STMT_CAMP_EVALS_RECENT,
  KF_STMT_CAMP_EVALS_FAILURES,
  KF_STMT_CAMP_EVALS_BEST,
  KF_STMT_CAMP_EVALS_CAND, /* 0007 */
  KF_STMT_CAMP_BEST,
  KF_STMT_CAMP_PENDING,
  KF_STMT_CAMP_KEYS,
  KF_STMT_CAMP_RESERVE,
  KF_STMT_CAMP_SCHEDULE,
  KF_STMT_CAMP_PROPOSE_CHECK,
  KF_STMT_CAMP_PROPOSE,
  /* db/store_campaign.c: measurement identity and the showdown (0004) */
  KF_STMT_CAMP_CANDS,
  KF_STMT_CAMP_CONCLUDE,
  KF_STMT_SD_BEGIN,
  KF_STMT_SD_CREATE,
  KF_STMT_SD_LIST,
  KF_STMT_SD_RECORD,
  KF_STMT_SD_ENTRIES,
  KF_STMT_SD_CANCEL,
  KF_STMT_SD_CONFIRMED,
  /* poison isolation (store_tasks.c) */
  KF_STMT_SAVEPOINT,
  KF_STMT_SAVEPOINT_UNDO,
  KF_STMT_SAVEPOINT_RELEASE,
  KF_STMT_REPORT_REFUSE,
  KF_STMT_SUBMIT_CAMPAIGNS,
  KF_STMT_BACKEND_MEMORY,
  KF_STMT_UNLEASE,
  /* credentials (store_tokens.c, 0005) */
  KF_STMT_TOKEN_CREATE,
  KF_STMT_TOKEN_LIST,
  KF_STMT_TOKEN_REVOKE,
  /* store_fleet.c (0009) */
  KF_STMT_CC_SYNC,
  KF_STMT_CC_LIST,
  KF_STMT_CC_SET_BEST,
  KF_STMT_CC_STOP,
  KF_STMT_CC_CANCEL,
  KF_STMT_CC_CONCLUDE,
  KF_STMT_CC_ENTER_SD,
  KF_STMT_CC_BY_NAME,
  KF_STMT_CC_NAMES,
  KF_STMT_PORT_SOURCE,
  KF_STMT_PORT_CREATE,
  KF_STMT_PORT_ELITES,
  KF_STMT_PORT_REPORT,
  KF_STMT_CAMP_BEST_CLASS,
  KF_STMT_CC_END_ALL,
  KF_STMT_CAMP_PROPOSE_TEMPLATE,
  KF_STMT_PROPOSER_RECORD,
  KF_STMT_PROPOSER_TOTALS,
  KF_STMT_PROPOSER_RECENT,
  KF_STMT_PROPOSER_PROFILING,
  /* dashboard views (store_views.c) */
  KF_STMT_VIEW_CAMPAIGNS,
  KF_STMT_VIEW_CLASSES,
  KF_STMT_VIEW_STARTED,
  KF_STMT_VIEW_SERIES,
  KF_STMT_CAMP_DEVICES,
  KF_STMT_CAMP_SET_OWNER,
  KF_STMT_CAMP_OWNER,
  KF_STMT__COUNT
} kf_store__stmt_id;

typedef struct {
  kf_store__stmt_id id;
  const char *sql;
} kf_store__stmt;

struct kf_store {
  PGconn *conn;
  bool prepared[KF_STMT__COUNT]; /* valid for the current connection */
  char errmsg[1024];
  char sqlstate[6]; /* of the last failed statement; "" when none */
  /* Session limits, set on every connection this store opens
   * (kf_store_set_timeouts); 0: none. */
  uint32_t statement_ms; /* statement_timeout, ms */
  uint32_t lock_ms;      /* lock_timeout, ms */
  /* How long we wait for any answer, ms; 0: forever.  The server's own
   * timeouts cannot fire when the server is stopped (SIGSTOP, a hung
   * host); past this the connection is closed and the call is
   * KF_EUNAVAIL. */
  uint32_t wait_ms;
  bool unbounded;  /* migrations: no statement or client time limit */
  bool timed_out;  /* the last wait ran out (for the error text) */
};

/* Sends sql with n text params (extended protocol, unnamed statement)
 * and waits at most s->wait_ms for its result, like PQexecParams.  NULL
 * only when libpq cannot even queue it (the connection's error text tells
 * why).  Used for the statements that are not prepared. */
PGresult *kf_store__pq_params(kf_store *s, const char *sql, int n,
                              const char *const *params);

/* Sets s->errmsg (printf) and returns err. */
int kf_store__fail(kf_store *s, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Called at the start of every public call: notices a connection the
 * server closed while we were idle, resets a bad one once (clearing the
 * prepared flags) and rolls back a transaction left open.  0 or
 * KF_EUNAVAIL. */
int kf_store__ready(kf_store *s);

/* Runs a prepared statement (preparing it first on this connection).
 * params: n text values (NULL = SQL NULL).  binary: ask for binary
 * results.  On success *out (when out is not NULL) owns the result, else
 * it is cleared.  Returns 0, KF_EUNAVAIL (connection lost), KF_EINVAL (the
 * server refused the data: SQLSTATE class 22, "data exception", e.g. text
 * that is not UTF-8 or a number out of range -- input no retry can fix) or
 * KF_EDB, with libpq's text in s->errmsg and the SQLSTATE in s->sqlstate. */
int kf_store__exec(kf_store *s, const kf_store__stmt *st, int n,
                   const char *const *params, bool binary, PGresult **out);

/* true when the last failure was the data's fault, not the database's:
 * SQLSTATE class 22 (data exception), 23 (integrity constraint) or 54
 * (program limit, e.g. a value too large).  Such a statement fails again
 * with the same rows; without them it would not. */
bool kf_store__data_error(const kf_store *s);

/* kf_store__exec, run once more over a fresh connection when the old one
 * turned out dead: for statements that change nothing or are sent alone
 * (outside a transaction) and may safely be repeated. */
int kf_store__exec_retry(kf_store *s, const kf_store__stmt *st, int n,
                         const char *const *params, bool binary,
                         PGresult **out);

/* BEGIN, retried once over a fresh connection when the old one turns out
 * dead: nothing has been sent yet, so the retry is safe. */
int kf_store__begin(kf_store *s);
/* COMMIT; on failure the transaction is gone (rolled back by the server). */
int kf_store__commit(kf_store *s);
/* ROLLBACK when a transaction is open and the connection alive; keeps the
 * earlier error text.  Returns err so callers can `return
 * kf_store__rollback(s, rc)`. */
int kf_store__rollback(kf_store *s, int err);

/* ------------------------------------------- array literal builder -- */

/* A growing string for '{...}' array literals and decimal parameters.
 * Allocation failure is sticky (oom) and checked once at the end. */
typedef struct {
  char *p;
  size_t len, cap;
  bool oom;
} kf_store__buf;

void kf_store__buf_free(kf_store__buf *b);
void kf_store__buf_reset(kf_store__buf *b);
void kf_store__buf_put(kf_store__buf *b, const char *str, size_t n);
void kf_store__buf_printf(kf_store__buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* '{' */
void kf_store__arr_open(kf_store__buf *b);
/* '}' and NUL-terminates */
void kf_store__arr_close(kf_store__buf *b);
void kf_store__arr_i64(kf_store__buf *b, int64_t v);
void kf_store__arr_null(kf_store__buf *b);
/* A quoted element; NULL str -> NULL. */
void kf_store__arr_text(kf_store__buf *b, const char *str);
/* A bytea element in hex form ("\\x0a1b"). */
void kf_store__arr_bytea(kf_store__buf *b, const void *p, size_t n);
/* A float8 element ("%.17g"); 0 and non-finite values -> NULL when
 * zero_null, else non-finite -> NULL (store_campaign.c). */
void kf_store__arr_f64(kf_store__buf *b, double v, bool zero_null);

/* Inserts showdown tasks, their showdowns rows and entries for plans
 * (inside the caller's transaction; store_campaign.c). */
int kf_store__showdown_insert(kf_store *s, const char *campaign_id,
                              const kf_showdown_plan *plans, size_t n);

/* Ends every class of a campaign that has not ended (the campaign was
 * stopped or failed): state "done", the reason as stop reason unless it
 * has one, a running showdown "failed: reason" (inside the caller's
 * transaction; store_fleet.c). */
int kf_store__classes_end(kf_store *s, const char *campaign_id,
                          const char *reason);

/* ------------------------------------------ tests and admin only -- */

/* Runs one fixed statement (no parameters; e.g. CREATE DATABASE) and
 * copies the first value of the first row, if any, into out.  For tests
 * and tooling, never for data paths.  Unlike the API calls it neither
 * reconnects nor rolls back, so a transaction may span several calls.
 * 0 or KF_EUNAVAIL / KF_EDB. */
int kf_store__admin_exec(kf_store *s, const char *sql, char *out,
                         size_t outlen);
/* kf_store_migrate, but only the migrations numbered up to max_version:
 * tests build a database as an older release left it. */
int kf_store__migrate_to(kf_store *s, int max_version);
/* The server process id of the store's connection (0 when none). */
int kf_store__backend_pid(const kf_store *s);

#endif
