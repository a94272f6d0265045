/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-store-fixture.h -- a private database for one store test
 * file.  Included by tests/unit/test-store-*.c only (it is a header, so the
 * test glob does not build it on its own).
 *
 * The group setup connects to the server named by KF_TEST_PG, creates
 * kf_test_<tag>_<pid> so files running at once never share rows, migrates
 * it and opens a store on it; the group teardown drops it.  Each test's
 * setup empties the tables, so tests in one file do not see each other.
 * SQL that the store API does not offer (row counts, forcing a lease to
 * expire) goes through kf_store__admin_exec.
 */
#ifndef KF_TEST_STORE_FIXTURE_H
#define KF_TEST_STORE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "err.h"
#include "store.h"
#include "store_internal.h"

/* Helpers are unused in some files; say so once, here. */
#define TDB_FN static __attribute__((unused))

typedef struct {
  kf_store *admin; /* on the server's "postgres" database */
  kf_store *s;     /* on the test database, migrated */
  char dbname[64];
  char conninfo[1024];
} kf_tdb;

static kf_tdb tdb;

TDB_FN const char *tdb_base(void) {
  const char *c = getenv("KF_TEST_PG");
  return c && *c ? c : NULL;
}

/* Opens another store on the test database (for concurrency tests). */
TDB_FN kf_store *tdb_open(void) {
  kf_store *s = NULL;
  char err[512];
  int rc = kf_store_open(tdb.conninfo, &s, err, sizeof err);
  if (rc) fail_msg("kf_store_open: %s", err);
  return s;
}

TDB_FN int tdb_group_setup(const char *tag) {
  const char *base = tdb_base();
  if (!base) {
    fprintf(stderr, "KF_TEST_PG is not set: no PostgreSQL to test on\n");
    return -1;
  }
  char err[512];
  if (kf_store_open(base, &tdb.admin, err, sizeof err)) {
    fprintf(stderr, "connect %s: %s\n", base, err);
    return -1;
  }
  snprintf(tdb.dbname, sizeof tdb.dbname, "kf_test_%s_%d", tag, (int)getpid());
  char sql[256];
  snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", tdb.dbname);
  kf_store__admin_exec(tdb.admin, sql, NULL, 0);
  snprintf(sql, sizeof sql, "CREATE DATABASE %s", tdb.dbname);
  if (kf_store__admin_exec(tdb.admin, sql, NULL, 0)) {
    fprintf(stderr, "%s: %s\n", sql, kf_store_errmsg(tdb.admin));
    return -1;
  }
  /* A later keyword overrides an earlier one in a libpq conninfo. */
  snprintf(tdb.conninfo, sizeof tdb.conninfo, "%s dbname=%s", base,
           tdb.dbname);
  if (kf_store_open(tdb.conninfo, &tdb.s, err, sizeof err)) {
    fprintf(stderr, "connect %s: %s\n", tdb.conninfo, err);
    return -1;
  }
  if (kf_store_migrate(tdb.s)) {
    fprintf(stderr, "migrate: %s\n", kf_store_errmsg(tdb.s));
    return -1;
  }
  return 0;
}

TDB_FN int tdb_group_teardown(void **state) {
  (void)state;
  kf_store_close(tdb.s);
  tdb.s = NULL;
  if (tdb.admin) {
    char sql[256];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)",
             tdb.dbname);
    if (kf_store__admin_exec(tdb.admin, sql, NULL, 0))
      fprintf(stderr, "%s: %s\n", sql, kf_store_errmsg(tdb.admin));
    kf_store_close(tdb.admin);
    tdb.admin = NULL;
  }
  return 0;
}

/* Per test: empty tables, ids from 1 again. */
TDB_FN int tdb_setup(void **state) {
  (void)state;
  return kf_store__admin_exec(
      tdb.s,
      "TRUNCATE results, tasks, workers, campaigns, device_classes"
      " RESTART IDENTITY CASCADE",
      NULL, 0);
}

/* First value of a query, as an integer. */
TDB_FN int64_t tdb_int(const char *fmt, ...) {
  char sql[1024], out[64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sql, sizeof sql, fmt, ap);
  va_end(ap);
  int rc = kf_store__admin_exec(tdb.s, sql, out, sizeof out);
  if (rc) fail_msg("%s: %s", sql, kf_store_errmsg(tdb.s));
  return strtoll(out, NULL, 10);
}

/* First value of a query, as text (static buffer). */
TDB_FN const char *tdb_text(const char *fmt, ...) {
  static char out[1024];
  char sql[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sql, sizeof sql, fmt, ap);
  va_end(ap);
  int rc = kf_store__admin_exec(tdb.s, sql, out, sizeof out);
  if (rc) fail_msg("%s: %s", sql, kf_store_errmsg(tdb.s));
  return out;
}

TDB_FN void tdb_sql(const char *sql) {
  if (kf_store__admin_exec(tdb.s, sql, NULL, 0))
    fail_msg("%s: %s", sql, kf_store_errmsg(tdb.s));
}

TDB_FN const kf_device_class tdb_cpu = {.kind = 1, .model = "test-cpu",
                                        .isa = "x86_64"};
TDB_FN const kf_device_class tdb_gpu = {
    .kind = 2, .model = "H100", .cc_major = 9, .cc_minor = 0};

/* Registers a worker on dc running `kinds` (NULL-terminated). */
TDB_FN int64_t tdb_worker(const char *name, const kf_device_class *dc,
                          int64_t *dc_id, const char *const *kinds) {
  size_t nk = 0;
  while (kinds && kinds[nk]) nk++;
  kf_worker_reg reg = {.name = name, .hostname = "host", .dc = *dc,
                       .device_json = "{\"test\": true}", .task_kinds = kinds,
                       .n_task_kinds = nk, .slots = 4};
  int64_t wid = 0, dcid = 0;
  int rc = kf_store_register_worker(tdb.s, &reg, &wid, &dcid);
  if (rc) fail_msg("register_worker: %s", kf_store_errmsg(tdb.s));
  if (dc_id) *dc_id = dcid;
  return wid;
}

/* Submits n tasks of one kind; ids into ids (may be NULL when n <= 64). */
TDB_FN void tdb_submit(const char *kind, size_t n, int64_t dc_id,
                       int32_t priority, uint32_t max_attempts, int64_t *ids) {
  kf_task_spec *sp = calloc(n, sizeof *sp);
  int64_t *own = ids ? NULL : calloc(n, sizeof *own);
  assert_non_null(sp);
  for (size_t i = 0; i < n; i++)
    sp[i] = (kf_task_spec){.kind = kind, .payload = "p", .payload_len = 1,
                           .device_class_id = dc_id,
                           .max_attempts = max_attempts,
                           .priority = priority};
  int rc = kf_store_submit(tdb.s, sp, n, ids ? ids : own);
  free(sp);
  free(own);
  if (rc) fail_msg("submit: %s", kf_store_errmsg(tdb.s));
}

/* Leases up to max tasks of `kinds` for one worker; returns the grant. */
TDB_FN kf_lease_grant *tdb_lease1(kf_store *s, int64_t wid, int64_t dc_id,
                                  const char *const *kinds, uint32_t max) {
  size_t nk = 0;
  while (kinds[nk]) nk++;
  kf_lease_req rq = {.worker_id = wid, .device_class_id = dc_id,
                     .task_kinds = kinds, .n_task_kinds = nk,
                     .max_tasks = max};
  kf_lease_grant *g = NULL;
  int rc = kf_store_lease(s, &rq, 1, 30000, &g);
  if (rc) fail_msg("lease: %s", kf_store_errmsg(s));
  assert_non_null(g);
  return g;
}

/* Forces every live lease to have expired already. */
TDB_FN void tdb_expire_leases(void) {
  tdb_sql("UPDATE tasks SET lease_expires = now() - interval '1 second'"
          " WHERE state = 'leased'");
}

#endif
