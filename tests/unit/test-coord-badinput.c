/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-coord-badinput.c -- a real kf-coordinator process fed
 * bad input: wrong or missing token, bytes that are not a protobuf, a
 * message over --max-msg-bytes, reports for tasks that do not exist or
 * that another worker holds, and fields out of range.
 *
 * The group setup creates a private database on the "pg" fixture's server
 * (KF_TEST_PG) and spawns $KF_BIN_DIR/kf-coordinator on it with a port
 * file; the tests talk to it through the blocking rpc client.  Each
 * refusal must come back as the documented status, and none may write a
 * result or take the process down: the last test checks that GetStatus
 * still answers, that the results table is empty, and that SIGTERM makes
 * the coordinator exit 0 (under ASan/LSan: no leak either).
 *
 * Note on codes: KF_EINVAL and KF_EPROTO both travel as INVALID_ARGUMENT,
 * and the client maps INVALID_ARGUMENT back to KF_EPROTO (rpc_status.c),
 * so "invalid field" refusals are told from "malformed bytes" by their
 * message, which must name the field.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "rpc.h"
#include "store.h"
#include "store_internal.h"

#define TOKEN "badinput-token"
#define MAX_MSG 4096
#define PATH(m) "/kernelfleet.Coordinator/" m

static struct {
  kf_store *admin; /* server's "postgres" database */
  kf_store *s;     /* the coordinator's database */
  char dbname[64];
  char conninfo[1024];
  char port_file[128];
  char target[64];
  pid_t pid;
  kf_rpc_client *c; /* right token */
} g;

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Reaps the coordinator if it has exited; returns its wait status or -1
 * while it runs. */
static int reap(void) {
  int st;
  pid_t r = waitpid(g.pid, &st, WNOHANG);
  if (r == g.pid) {
    g.pid = 0;
    return st;
  }
  return -1;
}

static int spawn_coordinator(void) {
  const char *bin = getenv("KF_BIN_DIR");
  if (!bin || !*bin) {
    fprintf(stderr, "KF_BIN_DIR is not set\n");
    return -1;
  }
  char exe[1024], maxmsg[16];
  snprintf(exe, sizeof exe, "%s/kf-coordinator", bin);
  snprintf(maxmsg, sizeof maxmsg, "%d", MAX_MSG);
  snprintf(g.port_file, sizeof g.port_file, "/tmp/kf-badinput-%d.port",
           (int)getpid());
  unlink(g.port_file);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    char *argv[] = {exe, "--db", g.conninfo, "--listen", "127.0.0.1:0",
                    "--token", TOKEN, "--port-file", g.port_file,
                    "--max-msg-bytes", maxmsg, "--log-level", "warn", NULL};
    execv(exe, argv);
    fprintf(stderr, "exec %s failed\n", exe);
    _exit(127);
  }
  g.pid = pid;
  for (int i = 0; i < 600; i++) { /* 60 s: ASan start-up is slow */
    FILE *f = fopen(g.port_file, "r");
    int port = 0;
    if (f) {
      if (fscanf(f, "%d", &port) != 1) port = 0;
      fclose(f);
    }
    if (port > 0) {
      snprintf(g.target, sizeof g.target, "127.0.0.1:%d", port);
      return 0;
    }
    int st = reap();
    if (st != -1) {
      fprintf(stderr, "kf-coordinator exited (status 0x%x) before "
              "listening\n", st);
      return -1;
    }
    sleep_ms(100);
  }
  fprintf(stderr, "kf-coordinator wrote no port file in 60 s\n");
  return -1;
}

static int group_setup(void **state) {
  (void)state;
  const char *base = getenv("KF_TEST_PG");
  if (!base || !*base) {
    fprintf(stderr, "KF_TEST_PG is not set: no PostgreSQL to test on\n");
    return -1;
  }
  char err[512], sql[256];
  if (kf_store_open(base, &g.admin, err, sizeof err)) {
    fprintf(stderr, "connect %s: %s\n", base, err);
    return -1;
  }
  snprintf(g.dbname, sizeof g.dbname, "kf_test_badinput_%d", (int)getpid());
  snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", g.dbname);
  kf_store__admin_exec(g.admin, sql, NULL, 0);
  snprintf(sql, sizeof sql, "CREATE DATABASE %s", g.dbname);
  if (kf_store__admin_exec(g.admin, sql, NULL, 0)) {
    fprintf(stderr, "%s: %s\n", sql, kf_store_errmsg(g.admin));
    return -1;
  }
  /* A later keyword overrides an earlier one in a libpq conninfo. */
  snprintf(g.conninfo, sizeof g.conninfo, "%s dbname=%s", base, g.dbname);
  if (spawn_coordinator()) return -1;
  /* The coordinator migrated before it listened, so the tables exist. */
  if (kf_store_open(g.conninfo, &g.s, err, sizeof err)) {
    fprintf(stderr, "connect %s: %s\n", g.conninfo, err);
    return -1;
  }
  if (kf_rpc_client_open(NULL, g.target, TOKEN, 1u << 20, &g.c, err,
                         sizeof err)) {
    fprintf(stderr, "rpc client: %s\n", err);
    return -1;
  }
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  kf_rpc_client_close(g.c);
  if (g.pid > 0) { /* a test failed before the clean stop */
    kill(g.pid, SIGKILL);
    waitpid(g.pid, NULL, 0);
  }
  unlink(g.port_file);
  kf_store_close(g.s);
  if (g.admin) {
    char sql[256];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)",
             g.dbname);
    if (kf_store__admin_exec(g.admin, sql, NULL, 0))
      fprintf(stderr, "%s: %s\n", sql, kf_store_errmsg(g.admin));
    kf_store_close(g.admin);
  }
  return 0;
}

static int64_t db_int(const char *sql) {
  char out[64] = "";
  if (kf_store__admin_exec(g.s, sql, out, sizeof out))
    fail_msg("%s: %s", sql, kf_store_errmsg(g.s));
  return strtoll(out, NULL, 10);
}

/* One blocking call on client c; returns its KF code, err holds the
 * server's text. */
static int call(kf_rpc_client *c, const char *path,
                const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *type,
                ProtobufCMessage **resp, char *err, size_t errlen) {
  ProtobufCMessage *r = NULL;
  err[0] = '\0';
  int rc = kf_rpc_client_call_sync(c, path, req, type, 10000, &r, err,
                                   errlen);
  if (resp) *resp = r;
  else kf_rpc_free(r);
  return rc;
}

static void assert_alive(void) {
  if (reap() != -1) fail_msg("kf-coordinator died");
}

static void get_status_ok(void) {
  Kernelfleet__GetStatusRequest req = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  char err[256];
  int rc = call(g.c, PATH("GetStatus"), &req.base,
                &kernelfleet__get_status_response__descriptor, NULL, err,
                sizeof err);
  if (rc) fail_msg("GetStatus: %s: %s", kf_err_name(rc), err);
}

static int64_t register_worker(const char *name) {
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "badinput-cpu";
  dc.isa = "x86_64";
  char *kinds[] = {"checksum"};
  Kernelfleet__RegisterWorkerRequest req =
      KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
  req.name = (char *)name;
  req.hostname = "test";
  req.device_class = &dc;
  req.task_kinds = kinds;
  req.n_task_kinds = 1;
  req.slots = 1;
  ProtobufCMessage *resp = NULL;
  char err[256];
  int rc = call(g.c, PATH("RegisterWorker"), &req.base,
                &kernelfleet__register_worker_response__descriptor, &resp, err,
                sizeof err);
  if (rc) fail_msg("RegisterWorker: %s: %s", kf_err_name(rc), err);
  int64_t id = ((Kernelfleet__RegisterWorkerResponse *)resp)->worker_id;
  kf_rpc_free(resp);
  assert_true(id > 0);
  return id;
}

/* Reports one result and returns its verdict. */
static int report1(int64_t worker_id, int64_t task_id, uint32_t attempt) {
  Kernelfleet__TaskResult t = KERNELFLEET__TASK_RESULT__INIT;
  t.task_id = task_id;
  t.attempt = attempt;
  t.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  t.output.data = (uint8_t *)"{}";
  t.output.len = 2;
  Kernelfleet__TaskResult *tp[] = {&t};
  Kernelfleet__ReportResultRequest req =
      KERNELFLEET__REPORT_RESULT_REQUEST__INIT;
  req.worker_id = worker_id;
  req.results = tp;
  req.n_results = 1;
  ProtobufCMessage *resp = NULL;
  char err[256];
  int rc = call(g.c, PATH("ReportResult"), &req.base,
                &kernelfleet__report_result_response__descriptor, &resp, err,
                sizeof err);
  if (rc) fail_msg("ReportResult: %s: %s", kf_err_name(rc), err);
  const Kernelfleet__ReportResultResponse *r = (const void *)resp;
  assert_int_equal(r->n_verdicts, 1);
  int v = (int)r->verdicts[0];
  kf_rpc_free(resp);
  return v;
}

/* ------------------------------------------------------------- tests */

static void test_wrong_token(void **state) {
  (void)state;
  kf_rpc_client *bad = NULL;
  char err[256];
  assert_int_equal(kf_rpc_client_open(NULL, g.target, "not-the-token",
                                      1u << 20, &bad, err, sizeof err),
                   0);
  Kernelfleet__GetStatusRequest req = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  assert_int_equal(call(bad, PATH("GetStatus"), &req.base,
                        &kernelfleet__get_status_response__descriptor, NULL,
                        err, sizeof err),
                   KF_EAUTH);
  /* A write is refused the same way, before any handler sees it. */
  Kernelfleet__TaskSpec spec = KERNELFLEET__TASK_SPEC__INIT;
  spec.kind = "checksum";
  Kernelfleet__TaskSpec *sp[] = {&spec};
  Kernelfleet__SubmitTasksRequest sub = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  sub.tasks = sp;
  sub.n_tasks = 1;
  assert_int_equal(call(bad, PATH("SubmitTasks"), &sub.base,
                        &kernelfleet__submit_tasks_response__descriptor, NULL,
                        err, sizeof err),
                   KF_EAUTH);
  kf_rpc_client_close(bad);
  assert_int_equal(db_int("SELECT count(*) FROM tasks"), 0);
  assert_alive();
}

static void test_missing_token(void **state) {
  (void)state;
  void *out = NULL;
  size_t outlen = 0;
  char err[256];
  /* GetStatus with an empty (valid) body: only the token is wrong. */
  assert_int_equal(kf_rpc_client_call_raw_sync(g.c, PATH("GetStatus"), "", 0,
                                               "", 10000, &out, &outlen, err,
                                               sizeof err),
                   KF_EAUTH);
  assert_null(out);
  /* The same bytes with the right token pass: the token was the reason. */
  assert_int_equal(kf_rpc_client_call_raw_sync(g.c, PATH("GetStatus"), "", 0,
                                               NULL, 10000, &out, &outlen,
                                               err, sizeof err),
                   0);
  free(out);
  assert_alive();
}

static void test_malformed_bytes(void **state) {
  (void)state;
  static const struct {
    const char *path;
    const char *bytes;
    size_t len;
  } cases[] = {
      /* field 1 as a varint that never ends */
      {PATH("RegisterWorker"), "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
       11},
      /* field 2 (repeated TaskResult) claims 100 bytes, has 2 */
      {PATH("ReportResult"), "\x12\x64\x08\x01", 4},
      /* wire type 7 does not exist */
      {PATH("LeaseTasks"), "\x0f\x01", 2},
      /* garbage */
      {PATH("SubmitTasks"), "\xff\xff\xff\xff", 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    void *out = NULL;
    size_t outlen = 0;
    char err[256] = "";
    int rc = kf_rpc_client_call_raw_sync(g.c, cases[i].path, cases[i].bytes,
                                         cases[i].len, NULL, 10000, &out,
                                         &outlen, err, sizeof err);
    if (rc != KF_EPROTO)
      fail_msg("case %zu (%s): got %s (%s), want EPROTO", i, cases[i].path,
               kf_err_name(rc), err);
    free(out);
  }
  assert_alive();
  assert_int_equal(db_int("SELECT count(*) FROM workers"), 0);
}

static void test_too_big(void **state) {
  (void)state;
  size_t n = 2 * MAX_MSG;
  char *payload = malloc(n);
  assert_non_null(payload);
  memset(payload, 'x', n);
  Kernelfleet__TaskSpec spec = KERNELFLEET__TASK_SPEC__INIT;
  spec.kind = "checksum";
  spec.payload.data = (uint8_t *)payload;
  spec.payload.len = n;
  Kernelfleet__TaskSpec *sp[] = {&spec};
  Kernelfleet__SubmitTasksRequest sub = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  sub.tasks = sp;
  sub.n_tasks = 1;
  char err[256];
  int rc = call(g.c, PATH("SubmitTasks"), &sub.base,
                &kernelfleet__submit_tasks_response__descriptor, NULL, err,
                sizeof err);
  free(payload);
  if (rc != KF_ETOOBIG)
    fail_msg("SubmitTasks of %zu bytes: got %s (%s), want ETOOBIG", n,
             kf_err_name(rc), err);
  assert_int_equal(db_int("SELECT count(*) FROM tasks"), 0);
  assert_alive();
  get_status_ok();
}

static void test_unknown_task(void **state) {
  (void)state;
  int64_t w = register_worker("bi-unknown");
  assert_int_equal(report1(w, 987654321, 1),
                   KERNELFLEET__REPORT_VERDICT__REPORT_UNKNOWN_TASK);
  assert_int_equal(report1(w, 1, 1),
                   KERNELFLEET__REPORT_VERDICT__REPORT_UNKNOWN_TASK);
  assert_int_equal(db_int("SELECT count(*) FROM results"), 0);
  assert_alive();
}

static void test_not_holder(void **state) {
  (void)state;
  int64_t a = register_worker("bi-holder");
  int64_t b = register_worker("bi-other");
  char err[256];
  Kernelfleet__TaskSpec spec = KERNELFLEET__TASK_SPEC__INIT;
  spec.kind = "checksum";
  spec.payload.data = (uint8_t *)"{\"data\": \"x\"}";
  spec.payload.len = strlen("{\"data\": \"x\"}");
  Kernelfleet__TaskSpec *sp[] = {&spec};
  Kernelfleet__SubmitTasksRequest sub = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  sub.tasks = sp;
  sub.n_tasks = 1;
  ProtobufCMessage *resp = NULL;
  int rc = call(g.c, PATH("SubmitTasks"), &sub.base,
                &kernelfleet__submit_tasks_response__descriptor, &resp, err,
                sizeof err);
  if (rc) fail_msg("SubmitTasks: %s: %s", kf_err_name(rc), err);
  assert_int_equal(((Kernelfleet__SubmitTasksResponse *)resp)->n_task_ids, 1);
  int64_t tid = ((Kernelfleet__SubmitTasksResponse *)resp)->task_ids[0];
  kf_rpc_free(resp);

  Kernelfleet__LeaseTasksRequest lr = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
  lr.worker_id = a;
  lr.max_tasks = 1;
  lr.wait_ms = 3000;
  rc = call(g.c, PATH("LeaseTasks"), &lr.base,
            &kernelfleet__lease_tasks_response__descriptor, &resp, err,
            sizeof err);
  if (rc) fail_msg("LeaseTasks: %s: %s", kf_err_name(rc), err);
  const Kernelfleet__LeaseTasksResponse *l = (const void *)resp;
  assert_int_equal(l->n_tasks, 1);
  assert_int_equal(l->tasks[0]->task_id, tid);
  uint32_t attempt = l->tasks[0]->attempt;
  kf_rpc_free(resp);

  assert_int_equal(report1(b, tid, attempt),
                   KERNELFLEET__REPORT_VERDICT__REPORT_NOT_HOLDER);
  assert_int_equal(db_int("SELECT count(*) FROM results"), 0);
  char sql[160];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM tasks WHERE id = %lld AND state = 'leased' "
           "AND lease_owner = %lld", (long long)tid, (long long)a);
  assert_int_equal(db_int(sql), 1); /* still a's, untouched */
  assert_alive();
}

/* Expects INVALID_ARGUMENT whose text names `field`. */
static void expect_invalid(int rc, const char *err, const char *what,
                           const char *field) {
  if (rc != KF_EPROTO)
    fail_msg("%s: got %s (%s), want INVALID_ARGUMENT", what, kf_err_name(rc),
             err);
  if (!strstr(err, field))
    fail_msg("%s: message '%s' does not name '%s'", what, err, field);
}

static void test_invalid_fields(void **state) {
  (void)state;
  char err[256];
  int64_t w = register_worker("bi-fields");

  Kernelfleet__TaskResult t = KERNELFLEET__TASK_RESULT__INIT;
  t.task_id = 1;
  t.attempt = 1;
  t.outcome = (Kernelfleet__Outcome)99;
  Kernelfleet__TaskResult *tp[] = {&t};
  Kernelfleet__ReportResultRequest rr = KERNELFLEET__REPORT_RESULT_REQUEST__INIT;
  rr.worker_id = w;
  rr.results = tp;
  rr.n_results = 1;
  int rc = call(g.c, PATH("ReportResult"), &rr.base,
                &kernelfleet__report_result_response__descriptor, NULL, err,
                sizeof err);
  expect_invalid(rc, err, "outcome 99", "outcome");

  t.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  t.attempt = 0;
  rc = call(g.c, PATH("ReportResult"), &rr.base,
            &kernelfleet__report_result_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "attempt 0", "attempt");

  t.attempt = 1;
  rr.worker_id = 0;
  rc = call(g.c, PATH("ReportResult"), &rr.base,
            &kernelfleet__report_result_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "report worker_id 0", "worker_id");

  rr.worker_id = w;
  rr.n_results = 0;
  rc = call(g.c, PATH("ReportResult"), &rr.base,
            &kernelfleet__report_result_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "report of no results", "results");

  Kernelfleet__LeaseTasksRequest lr = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
  lr.worker_id = w;
  lr.max_tasks = 0;
  rc = call(g.c, PATH("LeaseTasks"), &lr.base,
            &kernelfleet__lease_tasks_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "max_tasks 0", "max_tasks");

  lr.max_tasks = 100000;
  rc = call(g.c, PATH("LeaseTasks"), &lr.base,
            &kernelfleet__lease_tasks_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "max_tasks 100000", "max_tasks");

  lr.max_tasks = 1;
  lr.worker_id = 0;
  rc = call(g.c, PATH("LeaseTasks"), &lr.base,
            &kernelfleet__lease_tasks_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "lease worker_id 0", "worker_id");

  Kernelfleet__HeartbeatRequest hb = KERNELFLEET__HEARTBEAT_REQUEST__INIT;
  hb.worker_id = 0;
  rc = call(g.c, PATH("Heartbeat"), &hb.base,
            &kernelfleet__heartbeat_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "heartbeat worker_id 0", "worker_id");

  hb.worker_id = -5;
  rc = call(g.c, PATH("Heartbeat"), &hb.base,
            &kernelfleet__heartbeat_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "heartbeat worker_id -5", "worker_id");

  /* Register without a name, and with no task kinds. */
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "badinput-cpu";
  Kernelfleet__RegisterWorkerRequest reg =
      KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
  reg.device_class = &dc;
  char *kinds[] = {"checksum"};
  reg.task_kinds = kinds;
  reg.n_task_kinds = 1;
  rc = call(g.c, PATH("RegisterWorker"), &reg.base,
            &kernelfleet__register_worker_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "register without a name", "name");
  reg.name = "bi-nokinds";
  reg.n_task_kinds = 0;
  rc = call(g.c, PATH("RegisterWorker"), &reg.base,
            &kernelfleet__register_worker_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "register without kinds", "task_kinds");

  /* Submit with an empty kind. */
  Kernelfleet__TaskSpec spec = KERNELFLEET__TASK_SPEC__INIT;
  spec.kind = "";
  Kernelfleet__TaskSpec *sp[] = {&spec};
  Kernelfleet__SubmitTasksRequest sub = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  sub.tasks = sp;
  sub.n_tasks = 1;
  rc = call(g.c, PATH("SubmitTasks"), &sub.base,
            &kernelfleet__submit_tasks_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "submit with an empty kind", "kind");

  assert_int_equal(db_int("SELECT count(*) FROM workers WHERE name = "
                          "'bi-nokinds'"),
                   0);
  assert_alive();
}

/* Runs last: the process survived all of the above and stops cleanly. */
static void test_still_alive_then_clean_exit(void **state) {
  (void)state;
  assert_alive();
  get_status_ok();
  assert_int_equal(db_int("SELECT count(*) FROM results"), 0);
  /* Only the one task test_not_holder submitted exists. */
  assert_int_equal(db_int("SELECT count(*) FROM tasks"), 1);

  assert_int_equal(kill(g.pid, SIGTERM), 0);
  int st = -1;
  for (int i = 0; i < 300 && (st = reap()) == -1; i++) sleep_ms(100);
  if (st == -1) fail_msg("kf-coordinator still running 30 s after SIGTERM");
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    fail_msg("kf-coordinator did not exit 0 on SIGTERM (status 0x%x)", st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wrong_token),
      cmocka_unit_test(test_missing_token),
      cmocka_unit_test(test_malformed_bytes),
      cmocka_unit_test(test_too_big),
      cmocka_unit_test(test_unknown_task),
      cmocka_unit_test(test_not_holder),
      cmocka_unit_test(test_invalid_fields),
      cmocka_unit_test(test_still_alive_then_clean_exit),
  };
  return cmocka_run_group_tests_name("coord-badinput", tests, group_setup,
                                     group_teardown);
}
