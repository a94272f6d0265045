/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store.c -- the store's connection and everything that is not a task:
 * connect/reconnect, error text, the statement runner, migrations,
 * workers, device classes, heartbeats and counts.  Task leasing and
 * reports live in db/store_tasks.c.
 *
 * Statements are prepared lazily, once per connection: the first use
 * sends PQprepare, later ones only PQexecPrepared.  A reset connection
 * forgets them (kf_store.prepared is cleared) and they are prepared again.
 *
 * Connection loss: a failed statement on a connection whose PQstatus is
 * CONNECTION_BAD is KF_EUNAVAIL; every other failure is KF_EDB.  Each
 * public call starts with kf_store__ready, which first reads whatever the
 * server sent while we were idle (a terminated backend announces itself
 * and closes the socket), then resets a bad connection once.  BEGIN, and
 * the read-only single statements, are retried once over a fresh
 * connection because nothing was done yet; a write is never retried, since
 * it may have committed before the connection died.
 *
 * Time limits (kf_store_set_timeouts): every session gets
 * statement_timeout and lock_timeout, so a statement stuck behind a lock
 * or a slow plan ends in an error instead of holding the coordinator's
 * batch.  The server cannot enforce them when it is itself stopped
 * (SIGSTOP, a frozen host), so the client waits at most wait_ms for any
 * answer too: the connection is nonblocking, we poll its socket, and past
 * the limit we shut the socket down under libpq, which then reports the
 * connection lost (KF_EUNAVAIL, "did not answer within N ms").
 * Connecting is bounded by connect_timeout.
 *
 * Batches travel as text array literals unnested on the server, so a call
 * costs a fixed number of round trips whatever its size.
 *
 * Not thread-safe: one kf_store per thread (store.h).
 */
#include <libpq-fe.h>

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "err.h"
#include "migrations.h"
#include "store_internal.h"

/* Key of the advisory lock that serializes migrations across processes
 * ("kfmi"); any constant works as long as every coordinator uses it. */
#define KF_MIGRATE_LOCK_KEY "1801874793"

/* ------------------------------------------------------ error text -- */

int kf_store__fail(kf_store *s, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
  va_end(ap);
  /* libpq's messages end in a newline; the log line adds its own. */
  size_t n = strlen(s->errmsg);
  while (n > 0 && (s->errmsg[n - 1] == '\n' || s->errmsg[n - 1] == ' '))
    s->errmsg[--n] = '\0';
  return err;
}

const char *kf_store_errmsg(const kf_store *s) {
  return s ? s->errmsg : "no store";
}

/* ---------------------------------------------------- time limits -- */

static bool kf_store__ok(const PGresult *r) {
  ExecStatusType st = PQresultStatus(r);
  return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

static int kf_store__result_fail(kf_store *s, PGresult *r, const char *what);

static uint64_t kf_store__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits until fd is ready for events or until deadline (monotonic ms; 0:
 * none).  false only when the deadline passed; an error or a hang-up is
 * "ready", for libpq to read and report. */
static bool kf_store__poll(int fd, short events, uint64_t deadline) {
  for (;;) {
    int ms = -1;
    if (deadline) {
      uint64_t now = kf_store__now_ms();
      if (now >= deadline) return false;
      ms = deadline - now > INT_MAX ? INT_MAX : (int)(deadline - now);
    }
    struct pollfd p = {.fd = fd, .events = events};
    int n = poll(&p, 1, ms);
    if (n > 0) return true;
    if (n == 0) continue; /* loops back to the deadline check */
    if (errno != EINTR) return true;
  }
}

/* Collects the answer to the query just sent, like PQexec: the first
 * error result if there was one, else the last result; NULL when libpq
 * had none (the connection's error text says why).  Waits at most
 * s->wait_ms (unless s->unbounded); past that, shuts the socket down so
 * libpq sees the connection as lost and ends the query with an error. */
static PGresult *kf_store__wait(kf_store *s) {
  PGconn *c = s->conn;
  int fd = PQsocket(c);
  uint64_t limit = s->unbounded ? 0 : s->wait_ms;
  uint64_t deadline = limit ? kf_store__now_ms() + limit : 0;
  bool gave_up = false;
  /* Nonblocking: the query may still sit in libpq's buffer. */
  for (;;) {
    int f = PQflush(c);
    if (f <= 0) break; /* sent, or failed (the result will say) */
    if (!kf_store__poll(fd, POLLIN | POLLOUT, deadline)) {
      gave_up = true;
      break;
    }
    if (!PQconsumeInput(c)) break;
  }
  PGresult *keep = NULL;
  for (;;) {
    while (!gave_up && PQisBusy(c)) {
      if (!kf_store__poll(fd, POLLIN, deadline)) {
        gave_up = true;
        break;
      }
      if (!PQconsumeInput(c)) break;
    }
    if (gave_up && !s->timed_out) {
      /* libpq blocks in PQgetResult while busy: after this it reads EOF
       * at once and fails the query. */
      if (fd >= 0) shutdown(fd, SHUT_RDWR);
      s->timed_out = true;
    }
    PGresult *r = PQgetResult(c);
    if (!r) break;
    if (keep && PQresultStatus(keep) == PGRES_FATAL_ERROR) {
      PQclear(r);
      continue;
    }
    PQclear(keep);
    keep = r;
  }
  return keep;
}

PGresult *kf_store__pq_params(kf_store *s, const char *sql, int n,
                              const char *const *params) {
  s->timed_out = false;
  if (!PQsendQueryParams(s->conn, sql, n, NULL, params, NULL, NULL, 0))
    return NULL;
  return kf_store__wait(s);
}

/* Sets up a fresh connection: nonblocking (kf_store__wait drives it) and
 * the session's time limits.  0 or KF_EUNAVAIL with the text in errmsg. */
static int kf_store__session(kf_store *s) {
  if (PQsetnonblocking(s->conn, 1) != 0)
    return kf_store__fail(s, KF_EUNAVAIL, "cannot make the connection "
                          "nonblocking: %s", PQerrorMessage(s->conn));
  char st[16], lk[16];
  snprintf(st, sizeof st, "%u", s->statement_ms);
  snprintf(lk, sizeof lk, "%u", s->lock_ms);
  const char *p[] = {st, lk};
  PGresult *r = kf_store__pq_params(
      s, "SELECT set_config('statement_timeout', $1, false),"
         " set_config('lock_timeout', $2, false)", 2, p);
  if (!r || !kf_store__ok(r)) {
    kf_store__result_fail(s, r, "setting the session's time limits");
    return KF_EUNAVAIL;
  }
  PQclear(r);
  return 0;
}

int kf_store_set_timeouts(kf_store *s, uint32_t statement_ms,
                          uint32_t lock_ms) {
  s->statement_ms = statement_ms;
  s->lock_ms = lock_ms;
  s->wait_ms = statement_ms ? statement_ms + KF_STORE_WAIT_GRACE_MS : 0;
  if (PQstatus(s->conn) != CONNECTION_OK) return 0; /* on reconnect */
  return kf_store__session(s);
}

/* ------------------------------------------------------ connection -- */

/* Our NOTICEs (CREATE TABLE IF NOT EXISTS ... skipping) are expected;
 * libpq's default processor would print them on stderr. */
static void kf_store__quiet(void *arg, const char *msg) {
  (void)arg;
  (void)msg;
}

int kf_store_open(const char *conninfo, kf_store **out, char *err,
                  size_t errlen) {
  *out = NULL;
  kf_store *s = calloc(1, sizeof *s);
  if (!s) return kf_seterr(KF_ENOMEM, err, errlen, "out of memory");
  /* connect_timeout first: the caller's conninfo, expanded after it,
   * may override it. */
  const char *const keys[] = {"connect_timeout", "dbname", NULL};
  const char *const vals[] = {KF_STORE_CONNECT_S, conninfo ? conninfo : "",
                              NULL};
  s->statement_ms = KF_STORE_STATEMENT_MS;
  s->lock_ms = KF_STORE_LOCK_MS;
  s->wait_ms = KF_STORE_STATEMENT_MS + KF_STORE_WAIT_GRACE_MS;
  s->conn = PQconnectdbParams(keys, vals, 1);
  if (!s->conn) {
    free(s);
    return kf_seterr(KF_ENOMEM, err, errlen, "PQconnectdb: out of memory");
  }
  if (PQstatus(s->conn) != CONNECTION_OK) {
    int rc = kf_seterr(KF_EUNAVAIL, err, errlen, "%s",
                       PQerrorMessage(s->conn));
    PQfinish(s->conn);
    free(s);
    return rc;
  }
  PQsetNoticeProcessor(s->conn, kf_store__quiet, NULL);
  if (kf_store__session(s) != 0) {
    int rc = kf_seterr(KF_EUNAVAIL, err, errlen, "%s", s->errmsg);
    PQfinish(s->conn);
    free(s);
    return rc;
  }
  *out = s;
  return 0;
}

void kf_store_close(kf_store *s) {
  if (!s) return;
  PQfinish(s->conn);
  free(s);
}

static int kf_store__reset(kf_store *s) {
  PQreset(s->conn);
  memset(s->prepared, 0, sizeof s->prepared);
  if (PQstatus(s->conn) != CONNECTION_OK)
    return kf_store__fail(s, KF_EUNAVAIL, "reconnect failed: %s",
                          PQerrorMessage(s->conn));
  PQsetNoticeProcessor(s->conn, kf_store__quiet, NULL);
  return kf_store__session(s);
}

int kf_store__ready(kf_store *s) {
  /* A backend that was terminated while we were idle has already sent its
   * FATAL and closed the socket: reading now finds out without sending a
   * statement into the void.  A 0 return means the socket failed. */
  if (PQstatus(s->conn) == CONNECTION_OK) (void)PQconsumeInput(s->conn);
  if (PQstatus(s->conn) != CONNECTION_OK) return kf_store__reset(s);
  if (PQtransactionStatus(s->conn) != PQTRANS_IDLE) {
    /* Only reachable if an earlier call bailed out without rolling back;
     * never run a new call inside someone else's transaction. */
    s->timed_out = false;
    PGresult *r = PQsendQuery(s->conn, "ROLLBACK") ? kf_store__wait(s)
                                                   : NULL;
    PQclear(r);
    s->timed_out = false;
    if (PQstatus(s->conn) != CONNECTION_OK) return kf_store__reset(s);
  }
  return 0;
}

static int kf_store__result_fail(kf_store *s, PGresult *r, const char *what) {
  if (s->timed_out) {
    s->timed_out = false;
    s->sqlstate[0] = '\0';
    PQclear(r);
    return kf_store__fail(s, KF_EUNAVAIL, "%s: PostgreSQL did not answer "
                          "within %u ms; connection dropped", what,
                          s->wait_ms);
  }
  const char *msg = r ? PQresultErrorMessage(r) : "";
  if (!msg || !*msg) msg = PQerrorMessage(s->conn);
  const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
  snprintf(s->sqlstate, sizeof s->sqlstate, "%s", state ? state : "");
  int err = PQstatus(s->conn) == CONNECTION_BAD ? KF_EUNAVAIL : KF_EDB;
  /* A data exception is the input's fault: answering it as an outage
   * (UNAVAILABLE) would make clients send the same bytes forever. */
  if (err == KF_EDB && strncmp(s->sqlstate, "22", 2) == 0) err = KF_EINVAL;
  kf_store__fail(s, err, "%s: %s", what, msg);
  PQclear(r);
  return err;
}

bool kf_store__data_error(const kf_store *s) {
  return strncmp(s->sqlstate, "22", 2) == 0 ||
         strncmp(s->sqlstate, "23", 2) == 0 ||
         strncmp(s->sqlstate, "54", 2) == 0;
}


int kf_store__exec(kf_store *s, const kf_store__stmt *st, int n,
                   const char *const *params, bool binary, PGresult **out) {
  char name[16];
  snprintf(name, sizeof name, "kf%d", (int)st->id);
  if (out) *out = NULL;
  s->sqlstate[0] = '\0';
  s->timed_out = false;
  if (!s->prepared[st->id]) {
    /* Parameter types come from the casts in the SQL ($1::bigint[]). */
    PGresult *r = PQsendPrepare(s->conn, name, st->sql, n, NULL)
                      ? kf_store__wait(s)
                      : NULL;
    if (!r || PQresultStatus(r) != PGRES_COMMAND_OK)
      return kf_store__result_fail(s, r, "prepare");
    PQclear(r);
    s->prepared[st->id] = true;
  }
  PGresult *r = PQsendQueryPrepared(s->conn, name, n, params, NULL, NULL,
                                    binary ? 1 : 0)
                    ? kf_store__wait(s)
                    : NULL;
  if (!r || !kf_store__ok(r)) return kf_store__result_fail(s, r, name);
  if (out)
    *out = r;
  else
    PQclear(r);
  return 0;
}

/* For statements that change nothing (BEGIN, reads): on a connection that
 * died since kf_store__ready looked, reset and run them once more. */
int kf_store__exec_retry(kf_store *s, const kf_store__stmt *st, int n,
                         const char *const *params, bool binary,
                         PGresult **out) {
  int rc = kf_store__exec(s, st, n, params, binary, out);
  if (rc != KF_EUNAVAIL) return rc;
  if (kf_store__reset(s) != 0) return KF_EUNAVAIL;
  return kf_store__exec(s, st, n, params, binary, out);
}

static const kf_store__stmt ST_BEGIN = {KF_STMT_BEGIN, "BEGIN"};
static const kf_store__stmt ST_COMMIT = {KF_STMT_COMMIT, "COMMIT"};
static const kf_store__stmt ST_ROLLBACK = {KF_STMT_ROLLBACK, "ROLLBACK"};

int kf_store__begin(kf_store *s) {
  return kf_store__exec_retry(s, &ST_BEGIN, 0, NULL, false, NULL);
}

int kf_store__commit(kf_store *s) {
  int rc = kf_store__exec(s, &ST_COMMIT, 0, NULL, false, NULL);
  if (rc == 0 && PQtransactionStatus(s->conn) != PQTRANS_IDLE)
    rc = kf_store__fail(s, KF_EDB, "COMMIT left a transaction open");
  return rc;
}

int kf_store__rollback(kf_store *s, int err) {
  if (PQstatus(s->conn) != CONNECTION_OK) return err;
  if (PQtransactionStatus(s->conn) == PQTRANS_IDLE) return err;
  /* Keep the error that made us roll back, not the ROLLBACK's. */
  char saved[sizeof s->errmsg];
  memcpy(saved, s->errmsg, sizeof saved);
  (void)kf_store__exec(s, &ST_ROLLBACK, 0, NULL, false, NULL);
  memcpy(s->errmsg, saved, sizeof saved);
  return err;
}

/* ------------------------------------------- array literal builder -- */

static bool kf_store__buf_grow(kf_store__buf *b, size_t extra) {
  if (b->oom) return false;
  if (b->len + extra + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->p = p;
  b->cap = cap;
  return true;
}

void kf_store__buf_free(kf_store__buf *b) {
  free(b->p);
  *b = (kf_store__buf){0};
}

void kf_store__buf_reset(kf_store__buf *b) {
  b->len = 0;
  if (b->p) b->p[0] = '\0';
}

void kf_store__buf_put(kf_store__buf *b, const char *str, size_t n) {
  if (!kf_store__buf_grow(b, n)) return;
  memcpy(b->p + b->len, str, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void kf_store__buf_printf(kf_store__buf *b, const char *fmt, ...) {
  char tmp[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  /* Only used for numbers; a longer format is a bug here. */
  assert(n >= 0 && (size_t)n < sizeof tmp);
  kf_store__buf_put(b, tmp, (size_t)n);
}

void kf_store__arr_open(kf_store__buf *b) { kf_store__buf_put(b, "{", 1); }

void kf_store__arr_close(kf_store__buf *b) { kf_store__buf_put(b, "}", 1); }

static void kf_store__arr_sep(kf_store__buf *b) {
  if (b->len > 0 && b->p[b->len - 1] != '{') kf_store__buf_put(b, ",", 1);
}

void kf_store__arr_i64(kf_store__buf *b, int64_t v) {
  kf_store__arr_sep(b);
  kf_store__buf_printf(b, "%lld", (long long)v);
}

void kf_store__arr_null(kf_store__buf *b) {
  kf_store__arr_sep(b);
  kf_store__buf_put(b, "NULL", 4);
}

void kf_store__arr_text(kf_store__buf *b, const char *str) {
  if (!str) {
    kf_store__arr_null(b);
    return;
  }
  kf_store__arr_sep(b);
  size_t n = strlen(str);
  /* Worst case every byte is escaped, plus the quotes. */
  if (!kf_store__buf_grow(b, 2 * n + 2)) return;
  char *o = b->p + b->len;
  *o++ = '"';
  for (size_t i = 0; i < n; i++) {
    if (str[i] == '"' || str[i] == '\\') *o++ = '\\';
    *o++ = str[i];
  }
  *o++ = '"';
  b->len = (size_t)(o - b->p);
  b->p[b->len] = '\0';
}

void kf_store__arr_bytea(kf_store__buf *b, const void *p, size_t n) {
  static const char hex[] = "0123456789abcdef";
  kf_store__arr_sep(b);
  /* "\\x" then two digits a byte; the backslash is escaped once for the
   * array literal, leaving bytea's own hex input form \x... */
  if (!kf_store__buf_grow(b, 2 * n + 5)) return;
  char *o = b->p + b->len;
  memcpy(o, "\"\\\\x", 4);
  o += 4;
  const unsigned char *u = p;
  for (size_t i = 0; i < n; i++) {
    *o++ = hex[u[i] >> 4];
    *o++ = hex[u[i] & 15];
  }
  *o++ = '"';
  b->len = (size_t)(o - b->p);
  b->p[b->len] = '\0';
}

/* ------------------------------------------------------ migrations -- */

static const kf_store__stmt ST_SCHEMA_EXISTS = {
    KF_STMT_SCHEMA_EXISTS,
    "SELECT to_regclass('schema_version') IS NOT NULL"};
static const kf_store__stmt ST_SCHEMA_MAX = {
    KF_STMT_SCHEMA_MAX, "SELECT COALESCE(max(version), 0) FROM schema_version"};

/* Migration bookkeeping is not prepared: it runs once per process, and
 * schema_version may not exist when a prepare would need it. */
static int kf_store__params(kf_store *s, const char *sql, int n,
                            const char *const *params, PGresult **out) {
  PGresult *r = kf_store__pq_params(s, sql, n, params);
  if (!r || !kf_store__ok(r)) return kf_store__result_fail(s, r, "migrate");
  if (out)
    *out = r;
  else
    PQclear(r);
  return 0;
}

int kf_store_migrate(kf_store *s) { return kf_store__migrate_to(s, INT_MAX); }

static int kf_store__migrate_locked(kf_store *s, int max_version);

int kf_store__migrate_to(kf_store *s, int max_version) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  /* A migration may rewrite big tables and wait for another coordinator's
   * migration: no time limit on either side, for this transaction only. */
  s->unbounded = true;
  rc = kf_store__migrate_locked(s, max_version);
  s->unbounded = false;
  return rc;
}

static int kf_store__migrate_locked(kf_store *s, int max_version) {
  int rc;
  if ((rc = kf_store__begin(s))) return rc;
  if ((rc = kf_store__params(s, "SET LOCAL statement_timeout = 0", 0, NULL,
                             NULL)) ||
      (rc = kf_store__params(s, "SET LOCAL lock_timeout = 0", 0, NULL,
                             NULL)))
    return kf_store__rollback(s, rc);
  /* The lock comes before CREATE TABLE IF NOT EXISTS: two coordinators
   * creating the table at once would otherwise collide on its type. */
  const char *key[] = {KF_MIGRATE_LOCK_KEY};
  if ((rc = kf_store__params(s, "SELECT pg_advisory_xact_lock($1::bigint)", 1,
                             key, NULL)))
    return kf_store__rollback(s, rc);
  if ((rc = kf_store__params(
           s,
           "CREATE TABLE IF NOT EXISTS schema_version ("
           " version integer PRIMARY KEY, name text NOT NULL,"
           " applied_at timestamptz NOT NULL DEFAULT now())",
           0, NULL, NULL)))
    return kf_store__rollback(s, rc);
  PGresult *r = NULL; /* set when rc is 0; gcc -O3 cannot see that */
  if ((rc = kf_store__params(
           s, "SELECT COALESCE(max(version), 0) FROM schema_version", 0,
           NULL, &r)))
    return kf_store__rollback(s, rc);
  int have = atoi(PQgetvalue(r, 0, 0));
  PQclear(r);
  for (unsigned i = 0; i < kf_migrations_count; i++) {
    const kf_migration *m = &kf_migrations[i];
    if (m->version <= have || m->version > max_version) continue;
    /* Our own embedded, multi-statement text: the one place that needs
     * the simple query protocol.  It runs inside our transaction, so a
     * failing migration takes every earlier one of this call with it. */
    s->timed_out = false;
    r = PQsendQuery(s->conn, m->sql) ? kf_store__wait(s) : NULL;
    if (!r || !kf_store__ok(r)) {
      char what[128];
      snprintf(what, sizeof what, "migration %s", m->name);
      rc = kf_store__result_fail(s, r, what);
      return kf_store__rollback(s, rc);
    }
    PQclear(r);
    char ver[16];
    snprintf(ver, sizeof ver, "%d", m->version);
    const char *p[] = {ver, m->name};
    if ((rc = kf_store__params(
             s, "INSERT INTO schema_version (version, name) VALUES ($1, $2)",
             2, p, NULL)))
      return kf_store__rollback(s, rc);
  }
  /* Statements prepared earlier need nothing: the server replans them
   * when the tables they use change. */
  if ((rc = kf_store__commit(s))) return kf_store__rollback(s, rc);
  return 0;
}

int kf_store_schema_version(kf_store *s) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  PGresult *r;
  if ((rc = kf_store__exec_retry(s, &ST_SCHEMA_EXISTS, 0, NULL, false, &r)))
    return rc;
  bool exists = PQgetvalue(r, 0, 0)[0] == 't';
  PQclear(r);
  if (!exists) return 0;
  if ((rc = kf_store__exec_retry(s, &ST_SCHEMA_MAX, 0, NULL, false, &r)))
    return rc;
  int v = atoi(PQgetvalue(r, 0, 0));
  PQclear(r);
  return v;
}

/* --------------------------------------------------- device classes -- */

static const kf_store__stmt ST_DC_SELECT = {
    KF_STMT_DC_SELECT,
    "SELECT id FROM device_classes WHERE kind = $1::smallint AND model = $2"
    " AND cc_major = $3::int AND cc_minor = $4::int AND isa = $5"};
/* DO UPDATE rather than DO NOTHING so the id comes back even when a
 * concurrent insert won the race (DO NOTHING returns no row then). */
static const kf_store__stmt ST_DC_UPSERT = {
    KF_STMT_DC_UPSERT,
    "INSERT INTO device_classes (kind, model, cc_major, cc_minor, isa)"
    " VALUES ($1::smallint, $2, $3::int, $4::int, $5)"
    " ON CONFLICT (kind, model, cc_major, cc_minor, isa)"
    " DO UPDATE SET kind = EXCLUDED.kind RETURNING id"};

/* Looks up, then inserts: the common case (class known) writes nothing. */
static int kf_store__dc_id(kf_store *s, const kf_device_class *dc,
                           int64_t *id) {
  if (dc->kind != 1 && dc->kind != 2)
    return kf_store__fail(s, KF_EINVAL, "device class kind %d is not 1 or 2",
                          dc->kind);
  char kind[16], maj[16], min[16], model[sizeof dc->model + 1],
      isa[sizeof dc->isa + 1];
  snprintf(kind, sizeof kind, "%d", dc->kind);
  snprintf(maj, sizeof maj, "%u", (unsigned)dc->cc_major);
  snprintf(min, sizeof min, "%u", (unsigned)dc->cc_minor);
  /* The struct's arrays need not be terminated when full. */
  snprintf(model, sizeof model, "%.*s", (int)sizeof dc->model, dc->model);
  snprintf(isa, sizeof isa, "%.*s", (int)sizeof dc->isa, dc->isa);
  const char *p[] = {kind, model, maj, min, isa};
  PGresult *r;
  int rc = kf_store__exec(s, &ST_DC_SELECT, 5, p, false, &r);
  if (rc) return rc;
  if (PQntuples(r) == 0) {
    PQclear(r);
    if ((rc = kf_store__exec(s, &ST_DC_UPSERT, 5, p, false, &r))) return rc;
  }
  if (PQntuples(r) != 1) {
    PQclear(r);
    return kf_store__fail(s, KF_EDB, "device class upsert returned no id");
  }
  *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  return 0;
}

int kf_store_device_class_id(kf_store *s, const kf_device_class *dc,
                             int64_t *id) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if ((rc = kf_store__begin(s))) return rc;
  if ((rc = kf_store__dc_id(s, dc, id))) return kf_store__rollback(s, rc);
  if ((rc = kf_store__commit(s))) return kf_store__rollback(s, rc);
  return 0;
}

/* ---------------------------------------------------------- workers -- */

static const kf_store__stmt ST_WORKER_INSERT = {
    KF_STMT_WORKER_INSERT,
    "WITH env AS (INSERT INTO environments (device_class_id, harness_build,"
    " toolchain, driver, runtime)"
    " SELECT $3::bigint, $7, $8, $9, $10 WHERE $7 <> ''"
    " ON CONFLICT (device_class_id, harness_build, toolchain, driver, runtime)"
    " DO UPDATE SET harness_build = EXCLUDED.harness_build RETURNING id)"
    " INSERT INTO workers (name, hostname, device_class_id, device,"
    " task_kinds, slots, environment_id, token_id)"
    " VALUES ($1, $2, $3::bigint, COALESCE($4::jsonb, '{}'), $5::text[],"
    " $6::int, (SELECT id FROM env), $11::bigint) RETURNING id"};

int kf_store_register_worker(kf_store *s, const kf_worker_reg *reg,
                             int64_t *worker_id, int64_t *device_class_id) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if (!reg->name) return kf_store__fail(s, KF_EINVAL, "worker has no name");
  kf_store__buf kinds = {0};
  kf_store__arr_open(&kinds);
  for (size_t i = 0; i < reg->n_task_kinds; i++)
    kf_store__arr_text(&kinds, reg->task_kinds[i]);
  kf_store__arr_close(&kinds);
  if (kinds.oom) {
    kf_store__buf_free(&kinds);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  int64_t dc_id = 0;
  if ((rc = kf_store__begin(s))) goto out;
  if ((rc = kf_store__dc_id(s, &reg->dc, &dc_id))) goto rollback;
  char dcs[24], slots[16], tok[24];
  snprintf(dcs, sizeof dcs, "%lld", (long long)dc_id);
  snprintf(tok, sizeof tok, "%lld", (long long)reg->token_id);
  snprintf(slots, sizeof slots, "%u", (unsigned)reg->slots);
  /* The environment (0004): what else its measurements depend on. */
  const char *p[] = {reg->name,        reg->hostname ? reg->hostname : "",
                     dcs,              reg->device_json,
                     kinds.p,          slots,
                     reg->harness_build ? reg->harness_build : "",
                     reg->toolchain ? reg->toolchain : "",
                     reg->driver ? reg->driver : "",
                     reg->runtime ? reg->runtime : "",
                     reg->token_id > 0 ? tok : NULL};
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_WORKER_INSERT, 11, p, false, &r)))
    goto rollback;
  int64_t wid = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  if ((rc = kf_store__commit(s))) goto rollback;
  *worker_id = wid;
  *device_class_id = dc_id;
  goto out;
rollback:
  kf_store__rollback(s, rc);
out:
  kf_store__buf_free(&kinds);
  return rc;
}

static const kf_store__stmt ST_WORKER_GET = {
    KF_STMT_WORKER_GET,
    "SELECT device_class_id, array_to_string(task_kinds, ','),"
    " COALESCE(token_id, 0) FROM workers WHERE id = $1::bigint"};

int kf_store_get_worker(kf_store *s, int64_t worker_id,
                        int64_t *device_class_id, char *kinds,
                        size_t kinds_len, int64_t *token_id) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char id[24];
  snprintf(id, sizeof id, "%lld", (long long)worker_id);
  const char *p[] = {id};
  PGresult *r;
  if ((rc = kf_store__exec_retry(s, &ST_WORKER_GET, 1, p, false, &r)))
    return rc;
  if (PQntuples(r) == 0) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOTFOUND, "worker %lld not found",
                          (long long)worker_id);
  }
  if (device_class_id)
    *device_class_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  if (kinds && kinds_len)
    snprintf(kinds, kinds_len, "%s", PQgetvalue(r, 0, 1));
  if (token_id) *token_id = strtoll(PQgetvalue(r, 0, 2), NULL, 10);
  PQclear(r);
  return 0;
}

/* One statement, so one transaction without BEGIN/COMMIT round trips: the
 * CTE marks the workers seen; the UPDATE sets every lease the beating
 * workers own in the database.  Listed leases are extended.  Unlisted ones
 * are a grant that never reached the worker (a reply lost with a crashed
 * coordinator, a commit PostgreSQL never confirmed): they are not extended,
 * and an expiry further out than one TTL is pulled in, so the reaper
 * requeues them within a TTL.  A grant still on its way to the worker
 * already expires within a TTL, so LEAST leaves it alone. */
static const kf_store__stmt ST_HEARTBEAT = {
    KF_STMT_HEARTBEAT,
    "WITH seen AS (UPDATE workers SET last_seen = now()"
    " WHERE id = ANY($1::bigint[]) RETURNING id),"
    " r AS (SELECT * FROM unnest($2::bigint[], $3::bigint[], $4::bigint[])"
    " AS r(w, tid, att))"
    " UPDATE tasks t SET lease_expires = CASE WHEN l.listed"
    " THEN now() + $5::bigint * interval '1 ms'"
    " ELSE LEAST(t.lease_expires, now() + $5::bigint * interval '1 ms') END"
    " FROM (SELECT t2.id, EXISTS (SELECT 1 FROM r WHERE r.tid = t2.id"
    " AND r.w = t2.lease_owner AND r.att = t2.attempt) AS listed"
    " FROM tasks t2 WHERE t2.state = 'leased'"
    " AND t2.lease_owner = ANY($1::bigint[])) l"
    " WHERE t.id = l.id RETURNING t.id, t.attempt, l.listed"};

int kf_store_heartbeat(kf_store *s, const int64_t *worker_ids, size_t n,
                       const kf_lease_ref *refs, size_t n_refs,
                       int lease_ttl_ms, bool *live) {
  int rc = kf_store__ready(s);
  if (rc || n == 0) return rc;
  for (size_t i = 0; i < n_refs; i++) live[i] = false;
  kf_store__buf ids = {0}, rw = {0}, rt = {0}, ra = {0};
  kf_store__arr_open(&ids);
  for (size_t i = 0; i < n; i++) kf_store__arr_i64(&ids, worker_ids[i]);
  kf_store__arr_close(&ids);
  kf_store__arr_open(&rw);
  kf_store__arr_open(&rt);
  kf_store__arr_open(&ra);
  for (size_t i = 0; i < n_refs; i++) {
    kf_store__arr_i64(&rw, refs[i].worker_id);
    kf_store__arr_i64(&rt, refs[i].task_id);
    kf_store__arr_i64(&ra, refs[i].attempt);
  }
  kf_store__arr_close(&rw);
  kf_store__arr_close(&rt);
  kf_store__arr_close(&ra);
  if (ids.oom || rw.oom || rt.oom || ra.oom) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  char ttl[16];
  snprintf(ttl, sizeof ttl, "%d", lease_ttl_ms);
  const char *p[] = {ids.p, rw.p, rt.p, ra.p, ttl};
  PGresult *r = NULL;
  rc = kf_store__exec(s, &ST_HEARTBEAT, 5, p, false, &r);
  if (rc) goto out;
  /* Few rows per worker: a scan per returned row is cheaper than a map. */
  for (int row = 0; row < PQntuples(r); row++) {
    if (PQgetvalue(r, row, 2)[0] != 't') continue;
    int64_t tid = strtoll(PQgetvalue(r, row, 0), NULL, 10);
    uint32_t att = (uint32_t)strtoul(PQgetvalue(r, row, 1), NULL, 10);
    for (size_t i = 0; i < n_refs; i++)
      if (refs[i].task_id == tid && refs[i].attempt == att) live[i] = true;
  }
  PQclear(r);
out:
  kf_store__buf_free(&ids);
  kf_store__buf_free(&rw);
  kf_store__buf_free(&rt);
  kf_store__buf_free(&ra);
  return rc;
}

/* ----------------------------------------------------------- counts -- */

static const kf_store__stmt ST_COUNTS = {
    KF_STMT_COUNTS,
    "SELECT count(*) FILTER (WHERE state = 'queued'),"
    " count(*) FILTER (WHERE state = 'leased'),"
    " count(*) FILTER (WHERE state = 'done'),"
    " count(*) FILTER (WHERE state = 'failed')"
    " FROM tasks WHERE $1::bigint = 0 OR campaign_id = $1::bigint"};

int kf_store_counts(kf_store *s, int64_t campaign_id, kf_task_counts *out) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char id[24];
  snprintf(id, sizeof id, "%lld", (long long)campaign_id);
  const char *p[] = {id};
  PGresult *r;
  if ((rc = kf_store__exec_retry(s, &ST_COUNTS, 1, p, false, &r))) return rc;
  out->queued = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
  out->leased = strtoull(PQgetvalue(r, 0, 1), NULL, 10);
  out->done = strtoull(PQgetvalue(r, 0, 2), NULL, 10);
  out->failed = strtoull(PQgetvalue(r, 0, 3), NULL, 10);
  PQclear(r);
  return 0;
}

/* ------------------------------------------------ tests and admin -- */

int kf_store__admin_exec(kf_store *s, const char *sql, char *out,
                         size_t outlen) {
  /* No kf_store__ready: a test may hold a transaction open across calls
   * (BEGIN, then SELECT ... FOR UPDATE) to make another store wait. */
  if (out && outlen) out[0] = '\0';
  PGresult *r = kf_store__pq_params(s, sql, 0, NULL);
  if (!r || !kf_store__ok(r)) return kf_store__result_fail(s, r, "admin");
  if (out && outlen && PQntuples(r) > 0 && PQnfields(r) > 0)
    snprintf(out, outlen, "%s", PQgetvalue(r, 0, 0));
  PQclear(r);
  return 0;
}

int kf_store__backend_pid(const kf_store *s) {
  return s && s->conn ? PQbackendPID(s->conn) : 0;
}
