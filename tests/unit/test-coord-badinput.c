/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-coord-badinput.c -- a real kf-coordinator process fed
 * bad input: wrong or missing token, bytes that are not a protobuf, a
 * message over --max-msg-bytes, reports for tasks that do not exist or
 * that another worker holds, fields out of range or too long, ids that
 * name nothing, NaNs, NUL bytes and text that is not UTF-8, a ',' in a
 * kind, a poisoned result among good ones, a spec too big for every
 * worker, and a proposal to a campaign that has ended.
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
#include <math.h>
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
#include "test-coord-fixture.h"

#define TOKEN "badinput-token"
#define MAX_MSG 65536
#define PATH(m) "/kernelfleet.Coordinator/" m

static struct {
  kf_tcoord_group tg; /* the coordinator, and a client with the token */
  int64_t tasks_made, results_made; /* by tests that must write */
} g;

static int group_setup(void **state) {
  (void)state;
  char maxmsg[16];
  snprintf(maxmsg, sizeof maxmsg, "%d", MAX_MSG);
  const char *const extra[] = {"--max-msg-bytes", maxmsg, "--log-level",
                               "warn", NULL};
  /* The fixture migrates the database first: the coordinator's own
   * migration at start must then be a no-op. */
  return tcoord_group_setup(&g.tg, "badinput", TOKEN, extra);
}

static int group_teardown(void **state) {
  (void)state;
  tcoord_group_teardown(&g.tg);
  return 0;
}

static int64_t db_int(const char *sql) {
  char out[64] = "";
  if (kf_store__admin_exec(tdb.s, sql, out, sizeof out))
    fail_msg("%s: %s", sql, kf_store_errmsg(tdb.s));
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
  if (tcoord_reap(&g.tg.co) != -1)
    fail_msg("kf-coordinator died; its log: %s", g.tg.co.log);
}

static void get_status_ok(void) {
  Kernelfleet__GetStatusRequest req = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  char err[256];
  int rc = call(g.tg.c, PATH("GetStatus"), &req.base,
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
  int rc = call(g.tg.c, PATH("RegisterWorker"), &req.base,
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
  int rc = call(g.tg.c, PATH("ReportResult"), &req.base,
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
  assert_int_equal(kf_rpc_client_open(NULL, g.tg.co.target, "not-the-token",
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
  assert_int_equal(kf_rpc_client_call_raw_sync(g.tg.c, PATH("GetStatus"), "", 0,
                                               "", 10000, &out, &outlen, err,
                                               sizeof err),
                   KF_EAUTH);
  assert_null(out);
  /* The same bytes with the right token pass: the token was the reason. */
  assert_int_equal(kf_rpc_client_call_raw_sync(g.tg.c, PATH("GetStatus"), "", 0,
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
    int rc = kf_rpc_client_call_raw_sync(g.tg.c, cases[i].path, cases[i].bytes,
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
  int rc = call(g.tg.c, PATH("SubmitTasks"), &sub.base,
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
  int rc = call(g.tg.c, PATH("SubmitTasks"), &sub.base,
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
  rc = call(g.tg.c, PATH("LeaseTasks"), &lr.base,
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

  /* Only what makes a whole report meaningless is refused as a call; a
   * bad result is judged alone (test_report_poison). */
  Kernelfleet__TaskResult t = KERNELFLEET__TASK_RESULT__INIT;
  t.task_id = 1;
  t.attempt = 1;
  t.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  Kernelfleet__TaskResult *tp[] = {&t};
  Kernelfleet__ReportResultRequest rr = KERNELFLEET__REPORT_RESULT_REQUEST__INIT;
  rr.results = tp;
  rr.n_results = 1;
  rr.worker_id = 0;
  int rc = call(g.tg.c, PATH("ReportResult"), &rr.base,
            &kernelfleet__report_result_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "report worker_id 0", "worker_id");

  rr.worker_id = w;
  rr.n_results = 0;
  rc = call(g.tg.c, PATH("ReportResult"), &rr.base,
            &kernelfleet__report_result_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "report of no results", "results");

  Kernelfleet__LeaseTasksRequest lr = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
  lr.worker_id = w;
  lr.max_tasks = 0;
  rc = call(g.tg.c, PATH("LeaseTasks"), &lr.base,
            &kernelfleet__lease_tasks_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "max_tasks 0", "max_tasks");

  lr.max_tasks = 100000;
  rc = call(g.tg.c, PATH("LeaseTasks"), &lr.base,
            &kernelfleet__lease_tasks_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "max_tasks 100000", "max_tasks");

  lr.max_tasks = 1;
  lr.worker_id = 0;
  rc = call(g.tg.c, PATH("LeaseTasks"), &lr.base,
            &kernelfleet__lease_tasks_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "lease worker_id 0", "worker_id");

  Kernelfleet__HeartbeatRequest hb = KERNELFLEET__HEARTBEAT_REQUEST__INIT;
  hb.worker_id = 0;
  rc = call(g.tg.c, PATH("Heartbeat"), &hb.base,
            &kernelfleet__heartbeat_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "heartbeat worker_id 0", "worker_id");

  hb.worker_id = -5;
  rc = call(g.tg.c, PATH("Heartbeat"), &hb.base,
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
  rc = call(g.tg.c, PATH("RegisterWorker"), &reg.base,
            &kernelfleet__register_worker_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "register without a name", "name");
  reg.name = "bi-nokinds";
  reg.n_task_kinds = 0;
  rc = call(g.tg.c, PATH("RegisterWorker"), &reg.base,
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
  rc = call(g.tg.c, PATH("SubmitTasks"), &sub.base,
            &kernelfleet__submit_tasks_response__descriptor, NULL, err,
            sizeof err);
  expect_invalid(rc, err, "submit with an empty kind", "kind");

  assert_int_equal(db_int("SELECT count(*) FROM workers WHERE name = "
                          "'bi-nokinds'"),
                   0);
  assert_alive();
}

/* ------------------------------------------- values the database refused
 *
 * Each of these once reached PostgreSQL and came back UNAVAILABLE with
 * its error text (integer out of range, foreign key, invalid JSON, invalid
 * byte sequence), so clients retried them forever -- or was silently
 * changed (a NUL cut a kind short; a ',' split one after a restart).  Now
 * each is refused before any SQL with a status a client does not retry,
 * naming the field, and writes nothing. */

/* rc must be want (KF_EPROTO: INVALID_ARGUMENT) and the text name field. */
static void expect(int rc, const char *err, int want, const char *what,
                   const char *field) {
  if (rc != want)
    fail_msg("%s: got %s (%s), want %s", what, kf_err_name(rc), err,
             kf_err_name(want));
  if (!strstr(err, field))
    fail_msg("%s: message '%s' does not name '%s'", what, err, field);
}

static int64_t rows(const char *table) {
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
  return db_int(sql);
}

typedef struct {
  int64_t tasks, workers, campaigns, candidates, results, classes;
} snap;

static snap snapshot(void) {
  return (snap){rows("tasks"), rows("workers"), rows("campaigns"),
                rows("candidates"), rows("results"), rows("device_classes")};
}

static void assert_unchanged(const snap *a, const char *what) {
  snap b = snapshot();
  if (memcmp(a, &b, sizeof b))
    fail_msg("%s wrote something: tasks %lld->%lld workers %lld->%lld"
             " campaigns %lld->%lld candidates %lld->%lld results"
             " %lld->%lld classes %lld->%lld", what, (long long)a->tasks,
             (long long)b.tasks, (long long)a->workers, (long long)b.workers,
             (long long)a->campaigns, (long long)b.campaigns,
             (long long)a->candidates, (long long)b.candidates,
             (long long)a->results, (long long)b.results,
             (long long)a->classes, (long long)b.classes);
}

static int submit_one(const Kernelfleet__TaskSpec *spec, char *err,
                      size_t errlen) {
  Kernelfleet__TaskSpec *sp[] = {(Kernelfleet__TaskSpec *)spec};
  Kernelfleet__SubmitTasksRequest sub = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  sub.tasks = sp;
  sub.n_tasks = 1;
  return call(g.tg.c, PATH("SubmitTasks"), &sub.base,
              &kernelfleet__submit_tasks_response__descriptor, NULL, err,
              errlen);
}

static Kernelfleet__TaskSpec checksum_spec(void) {
  Kernelfleet__TaskSpec t = KERNELFLEET__TASK_SPEC__INIT;
  t.kind = "checksum";
  t.payload.data = (uint8_t *)"{\"data\": \"x\"}";
  t.payload.len = strlen("{\"data\": \"x\"}");
  return t;
}

static int register_with(Kernelfleet__RegisterWorkerRequest *req, char *err,
                         size_t errlen) {
  return call(g.tg.c, PATH("RegisterWorker"), &req->base,
              &kernelfleet__register_worker_response__descriptor, NULL, err,
              errlen);
}

/* A 10 KB string of 'm'. */
static char *ten_kb(void) {
  static char s[10241];
  memset(s, 'm', 10240);
  s[10240] = '\0';
  return s;
}

static void test_ranges_and_lengths(void **state) {
  (void)state;
  char err[512];
  snap before = snapshot();
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "badinput-cpu";
  dc.isa = "x86_64";
  Kernelfleet__DeviceInfo info = KERNELFLEET__DEVICE_INFO__INIT;
  char *kinds[] = {"checksum"};
  Kernelfleet__RegisterWorkerRequest reg =
      KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
  reg.name = "bi-ranges";
  reg.device_class = &dc;
  reg.device = &info;
  reg.task_kinds = kinds;
  reg.n_task_kinds = 1;

  reg.slots = UINT32_MAX;
  expect(register_with(&reg, err, sizeof err), err, KF_EPROTO, "slots 2^32-1",
         "slots");
  reg.slots = 1;
  info.copy_gbps = NAN;
  expect(register_with(&reg, err, sizeof err), err, KF_EPROTO,
         "copy_gbps NaN", "device.copy_gbps");
  info.copy_gbps = INFINITY;
  expect(register_with(&reg, err, sizeof err), err, KF_EPROTO,
         "copy_gbps Inf", "device.copy_gbps");
  info.copy_gbps = 10;
  info.peak_gflops = -1;
  expect(register_with(&reg, err, sizeof err), err, KF_EPROTO,
         "peak_gflops -1", "device.peak_gflops");
  info.peak_gflops = 0;
  /* A 10 KB model is too long, not "empty". */
  dc.model = ten_kb();
  expect(register_with(&reg, err, sizeof err), err, KF_EPROTO, "10 KB model",
         "device_class.model is longer than 127 bytes (10240)");
  dc.model = "badinput-cpu";
  dc.isa = ten_kb();
  expect(register_with(&reg, err, sizeof err), err, KF_EPROTO, "10 KB isa",
         "device_class.isa is longer than 31 bytes");
  dc.isa = "x86_64";
  reg.name = ten_kb();
  expect(register_with(&reg, err, sizeof err), err, KF_EPROTO, "10 KB name",
         "name is longer than 63 bytes");
  reg.name = "bi-ranges";
  /* A ',' in a kind was split into two kinds after a restart. */
  char *comma[] = {"check,sum"};
  reg.task_kinds = comma;
  expect(register_with(&reg, err, sizeof err), err, KF_EPROTO, "kind a,b",
         "task_kinds[0] may only hold letters, digits and _.:-");
  reg.task_kinds = kinds;

  Kernelfleet__TaskSpec t = checksum_spec();
  t.timeout_ms = UINT32_MAX;
  expect(submit_one(&t, err, sizeof err), err, KF_EPROTO,
         "timeout_ms 2^32-1", "tasks[0].timeout_ms");
  t.timeout_ms = 0;
  t.campaign_id = -1;
  expect(submit_one(&t, err, sizeof err), err, KF_EPROTO, "campaign_id -1",
         "tasks[0].campaign_id");
  t.campaign_id = 999999;
  expect(submit_one(&t, err, sizeof err), err, KF_ENOTFOUND,
         "campaign_id 999999", "campaign_id 999999: no such campaign");
  t.campaign_id = 0;
  t.kind = "check,sum";
  expect(submit_one(&t, err, sizeof err), err, KF_EPROTO, "kind a,b",
         "tasks[0].kind may only hold");
  t.kind = ten_kb();
  expect(submit_one(&t, err, sizeof err), err, KF_EPROTO, "10 KB kind",
         "tasks[0].kind is longer than 31 bytes");
  t.kind = "checksum";
  t.device_class = &dc;
  dc.model = ten_kb();
  expect(submit_one(&t, err, sizeof err), err, KF_EPROTO, "task 10 KB model",
         "tasks[0].device_class.model is longer than 127 bytes");
  dc.model = "";
  expect(submit_one(&t, err, sizeof err), err, KF_EPROTO, "task empty model",
         "tasks[0].device_class.model is empty");
  dc.model = "badinput-cpu";
  dc.isa = ten_kb();
  expect(submit_one(&t, err, sizeof err), err, KF_EPROTO, "task 10 KB isa",
         "tasks[0].device_class.isa");
  dc.isa = "x86_64";

  Kernelfleet__LeaseTasksRequest lr = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
  lr.worker_id = 1;
  lr.max_tasks = 1;
  lr.wait_ms = UINT32_MAX;
  expect(call(g.tg.c, PATH("LeaseTasks"), &lr.base,
              &kernelfleet__lease_tasks_response__descriptor, NULL, err,
              sizeof err),
         err, KF_EPROTO, "wait_ms 2^32-1", "wait_ms");
  assert_unchanged(&before, "refused ranges");
  assert_alive();
}

/* Ids that name nothing: NOT_FOUND; ids that cannot name anything:
 * INVALID_ARGUMENT.  Never UNAVAILABLE. */
static void test_ids_that_do_not_exist(void **state) {
  (void)state;
  char err[512];
  snap before = snapshot();
  Kernelfleet__GetStatusRequest st = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  st.campaign_id = 999999;
  expect(call(g.tg.c, PATH("GetStatus"), &st.base,
              &kernelfleet__get_status_response__descriptor, NULL, err,
              sizeof err),
         err, KF_ENOTFOUND, "status of campaign 999999", "999999");
  st.campaign_id = -1;
  expect(call(g.tg.c, PATH("GetStatus"), &st.base,
              &kernelfleet__get_status_response__descriptor, NULL, err,
              sizeof err),
         err, KF_EPROTO, "status of campaign -1", "campaign_id");
  Kernelfleet__GetCampaignRequest gc = KERNELFLEET__GET_CAMPAIGN_REQUEST__INIT;
  gc.campaign_id = 999999;
  expect(call(g.tg.c, PATH("GetCampaign"), &gc.base,
              &kernelfleet__get_campaign_response__descriptor, NULL, err,
              sizeof err),
         err, KF_ENOTFOUND, "campaign 999999", "999999");
  gc.campaign_id = -1;
  expect(call(g.tg.c, PATH("GetCampaign"), &gc.base,
              &kernelfleet__get_campaign_response__descriptor, NULL, err,
              sizeof err),
         err, KF_EPROTO, "campaign -1", "campaign_id");
  Kernelfleet__ProposeCandidateRequest pc =
      KERNELFLEET__PROPOSE_CANDIDATE_REQUEST__INIT;
  pc.campaign_id = 999999;
  pc.source = "int kf_launch(void) { return 0; }";
  expect(call(g.tg.c, PATH("ProposeCandidate"), &pc.base,
              &kernelfleet__propose_candidate_response__descriptor, NULL, err,
              sizeof err),
         err, KF_ENOTFOUND, "propose to campaign 999999", "999999");
  Kernelfleet__StopCampaignRequest sc = KERNELFLEET__STOP_CAMPAIGN_REQUEST__INIT;
  sc.campaign_id = 999999;
  expect(call(g.tg.c, PATH("StopCampaign"), &sc.base,
              &kernelfleet__stop_campaign_response__descriptor, NULL, err,
              sizeof err),
         err, KF_ENOTFOUND, "stop campaign 999999", "999999");
  assert_unchanged(&before, "unknown ids");
  assert_alive();
}

/* Packs a SubmitTasks of one task whose kind is `kind` with the byte at
 * `at` replaced by `b`, and sends it raw. */
static int submit_patched_kind(const char *kind, size_t at, uint8_t b,
                               char *err, size_t errlen) {
  Kernelfleet__TaskSpec t = checksum_spec();
  t.kind = (char *)kind;
  Kernelfleet__TaskSpec *sp[] = {&t};
  Kernelfleet__SubmitTasksRequest sub = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  sub.tasks = sp;
  sub.n_tasks = 1;
  uint8_t buf[256];
  size_t n = kernelfleet__submit_tasks_request__pack(&sub, buf);
  uint8_t *k = memmem(buf, n, kind, strlen(kind));
  assert_non_null(k);
  k[at] = b;
  void *out = NULL;
  size_t outlen = 0;
  int rc = kf_rpc_client_call_raw_sync(g.tg.c, PATH("SubmitTasks"), buf, n, NULL,
                                       10000, &out, &outlen, err, errlen);
  free(out);
  return rc;
}

/* A NUL inside a string field is refused, never cut; so is text that is
 * not UTF-8, in any string of any request but ReportResult's results. */
static void test_nul_and_utf8(void **state) {
  (void)state;
  char err[512];
  snap before = snapshot();
  expect(submit_patched_kind("checksum", 5, 0, err, sizeof err), err,
         KF_EPROTO, "NUL in kind", "tasks[0].kind contains a NUL byte (byte 5)");
  expect(submit_patched_kind("checksum", 2, 0xFF, err, sizeof err), err,
         KF_EPROTO, "0xFF in kind", "tasks[0].kind is not valid UTF-8");
  Kernelfleet__ProposeCandidateRequest pc =
      KERNELFLEET__PROPOSE_CANDIDATE_REQUEST__INIT;
  pc.campaign_id = 1;
  pc.source = "int x = 1; /* caf\xe9 in Latin-1 */";
  expect(call(g.tg.c, PATH("ProposeCandidate"), &pc.base,
              &kernelfleet__propose_candidate_response__descriptor, NULL, err,
              sizeof err),
         err, KF_EPROTO, "Latin-1 source", "source is not valid UTF-8");
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "cpu \xc3";
  char *kinds[] = {"checksum"};
  Kernelfleet__RegisterWorkerRequest reg =
      KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
  reg.name = "bi-utf8";
  reg.device_class = &dc;
  reg.task_kinds = kinds;
  reg.n_task_kinds = 1;
  expect(register_with(&reg, err, sizeof err), err, KF_EPROTO,
         "model cut mid-character", "device_class.model is not valid UTF-8");
  assert_unchanged(&before, "NUL and UTF-8");
  assert_alive();
}

/* One poisoned result in a report is refused alone: INVALID with the
 * reason, its task failed; the other result of the same call is stored. */
static void test_report_poison(void **state) {
  (void)state;
  char err[512];
  int64_t w = register_worker("bi-poison");
  Kernelfleet__TaskSpec t = checksum_spec();
  Kernelfleet__TaskSpec *sp[] = {&t, &t, &t};
  Kernelfleet__SubmitTasksRequest sub = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  sub.tasks = sp;
  sub.n_tasks = 3;
  ProtobufCMessage *resp = NULL;
  int rc = call(g.tg.c, PATH("SubmitTasks"), &sub.base,
                &kernelfleet__submit_tasks_response__descriptor, &resp, err,
                sizeof err);
  if (rc) fail_msg("SubmitTasks: %s: %s", kf_err_name(rc), err);
  kf_rpc_free(resp);
  Kernelfleet__LeaseTasksRequest lr = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
  lr.worker_id = w;
  lr.max_tasks = 3;
  lr.wait_ms = 3000;
  int64_t id[3];
  uint32_t att[3];
  size_t got = 0;
  for (int tries = 0; got < 3 && tries < 20; tries++) {
    rc = call(g.tg.c, PATH("LeaseTasks"), &lr.base,
              &kernelfleet__lease_tasks_response__descriptor, &resp, err,
              sizeof err);
    if (rc) fail_msg("LeaseTasks: %s: %s", kf_err_name(rc), err);
    const Kernelfleet__LeaseTasksResponse *l = (const void *)resp;
    for (size_t i = 0; i < l->n_tasks && got < 3; i++) {
      id[got] = l->tasks[i]->task_id;
      att[got++] = l->tasks[i]->attempt;
    }
    kf_rpc_free(resp);
    lr.max_tasks = (uint32_t)(3 - got);
  }
  assert_int_equal(got, 3);

  Kernelfleet__TaskResult r[3];
  Kernelfleet__TaskResult *rp[3];
  for (int i = 0; i < 3; i++) {
    kernelfleet__task_result__init(&r[i]);
    r[i].task_id = id[i];
    r[i].attempt = att[i];
    r[i].outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
    r[i].stage = "done";
    r[i].output.data = (uint8_t *)"{}";
    r[i].output.len = 2;
    rp[i] = &r[i];
  }
  r[0].reason = "calls '\xfe\xfe', which candidates may not use";
  r[1].reason = "fine";
  r[2].outcome = (Kernelfleet__Outcome)99;
  Kernelfleet__ReportResultRequest rr = KERNELFLEET__REPORT_RESULT_REQUEST__INIT;
  rr.worker_id = w;
  rr.results = rp;
  rr.n_results = 3;
  rc = call(g.tg.c, PATH("ReportResult"), &rr.base,
            &kernelfleet__report_result_response__descriptor, &resp, err,
            sizeof err);
  if (rc) fail_msg("ReportResult: %s: %s", kf_err_name(rc), err);
  const Kernelfleet__ReportResultResponse *v = (const void *)resp;
  assert_int_equal(v->n_verdicts, 3);
  assert_int_equal(v->verdicts[0], KERNELFLEET__REPORT_VERDICT__REPORT_INVALID);
  assert_int_equal(v->verdicts[1], KERNELFLEET__REPORT_VERDICT__REPORT_ACCEPTED);
  assert_int_equal(v->verdicts[2], KERNELFLEET__REPORT_VERDICT__REPORT_INVALID);
  assert_int_equal(v->n_details, 3);
  assert_string_equal(v->details[0], "reason is not valid UTF-8 (byte 7)");
  assert_string_equal(v->details[1], "");
  assert_string_equal(v->details[2], "outcome 99 is not an outcome");
  kf_rpc_free(resp);
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM results WHERE task_id ="
           " %lld AND outcome = 'ok'", (long long)id[1]);
  assert_int_equal(db_int(sql), 1);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM tasks WHERE id IN (%lld,"
           " %lld) AND state = 'failed' AND last_error LIKE 'result of"
           " attempt 1 refused: %%'", (long long)id[0], (long long)id[2]);
  assert_int_equal(db_int(sql), 2);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM results WHERE task_id IN"
           " (%lld, %lld)", (long long)id[0], (long long)id[2]);
  assert_int_equal(db_int(sql), 0);
  g.tasks_made += 3;
  g.results_made += 1;
  assert_alive();
}

/* A spec whose tensors alone exceed every worker's memory is refused at
 * submit, naming the sizes; a proposal to a campaign that has ended is
 * refused naming why it ended. */
static const char *BIG_SPEC =
    "{\"name\": \"big\", \"backend\": \"cpu\", \"params\": [\"N\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"],"
    " \"dists\": [\"normal\"]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
    " \"sizes\": {\"check\": [{\"N\": 4}], \"bench\": {\"N\": %s}},"
    " \"tolerance\": {\"f32\": {\"rtol\": 1e-4, \"atol\": 1e-6}},"
    " \"flops\": \"N\", \"bytes\": \"8*N\", \"reference\": \"reference.c\","
    " \"templates\": [{\"name\": \"t\", \"file\": \"t.c\"}]}";

static int create_campaign(const char *bench_n, double target, int64_t *id,
                           char *err, size_t errlen) {
  char spec[2048];
  snprintf(spec, sizeof spec, BIG_SPEC, bench_n);
  Kernelfleet__TemplateSource ts = KERNELFLEET__TEMPLATE_SOURCE__INIT;
  ts.name = "t";
  ts.file = "t.c";
  ts.source = "int kf_launch(void) { return 0; }";
  Kernelfleet__TemplateSource *tp[] = {&ts};
  Kernelfleet__CreateCampaignRequest q =
      KERNELFLEET__CREATE_CAMPAIGN_REQUEST__INIT;
  q.name = "bi-big";
  q.target_roofline = target;
  q.spec_json.data = (uint8_t *)spec;
  q.spec_json.len = strlen(spec);
  q.reference_source = "int kf_launch(void) { return 0; }";
  q.templates = tp;
  q.n_templates = 1;
  q.backend = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  q.budget_evals = 1;
  ProtobufCMessage *resp = NULL;
  int rc = call(g.tg.c, PATH("CreateCampaign"), &q.base,
                &kernelfleet__create_campaign_response__descriptor, &resp, err,
                errlen);
  if (!rc) *id = ((Kernelfleet__CreateCampaignResponse *)resp)->campaign_id;
  kf_rpc_free(resp);
  return rc;
}

/* Torch campaigns (harness/torch): the language and the device kind must
 * agree with the spec's backend and torch.device; each mismatch is
 * refused naming it, and nothing is stored.  A matching one is created. */
static const char *TORCH_SPEC =
    "{\"name\": \"tt\", \"backend\": \"%s\", \"params\": [\"N\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"],"
    " \"dists\": [\"normal\"]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
    " \"sizes\": {\"check\": [{\"N\": 4}], \"bench\": {\"N\": 64}},"
    " \"tolerance\": {\"f32\": {\"rtol\": 1e-4, \"atol\": 1e-6}},"
    " \"flops\": \"N\", \"bytes\": \"8*N\", \"reference\": \"%s\","
    " \"templates\": []%s}";

static int create_torch(const char *backend, const char *lang,
                        Kernelfleet__DeviceKind kind, int64_t *id, char *err,
                        size_t errlen) {
  char spec[2048];
  bool torch = !strcmp(backend, "torch");
  snprintf(spec, sizeof spec, TORCH_SPEC, backend,
           torch ? "reference.py" : "reference.c",
           torch ? ", \"torch\": {\"kind\": \"gpumode\"}" : "");
  Kernelfleet__TemplateSource ts = KERNELFLEET__TEMPLATE_SOURCE__INIT;
  ts.name = "t";
  ts.file = torch ? "t.py" : "t.c";
  ts.source = "def custom_kernel(data):\n    return data\n";
  Kernelfleet__TemplateSource *tp[] = {&ts};
  Kernelfleet__CreateCampaignRequest q =
      KERNELFLEET__CREATE_CAMPAIGN_REQUEST__INIT;
  q.name = "bi-torch";
  q.spec_json.data = (uint8_t *)spec;
  q.spec_json.len = strlen(spec);
  q.reference_source = "def ref_kernel(data):\n    return data\n";
  q.templates = tp;
  q.n_templates = 1;
  q.backend = kind;
  q.language = (char *)lang;
  q.budget_evals = 1;
  ProtobufCMessage *resp = NULL;
  int rc = call(g.tg.c, PATH("CreateCampaign"), &q.base,
                &kernelfleet__create_campaign_response__descriptor, &resp, err,
                errlen);
  if (!rc) *id = ((Kernelfleet__CreateCampaignResponse *)resp)->campaign_id;
  kf_rpc_free(resp);
  return rc;
}

static void test_torch_campaigns(void **state) {
  (void)state;
  char err[512];
  int64_t id = 0;
  snap before = snapshot();
  int rc = create_torch("cpu", "python", KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU,
                        &id, err, sizeof err);
  expect_invalid(rc, err, "python for a cpu spec", "\"python\" goes with");
  rc = create_torch("torch", "c", KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU,
                    &id, err, sizeof err);
  expect_invalid(rc, err, "c for a torch spec", "\"python\" goes with");
  rc = create_torch("torch", "python",
                    KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA, &id, err,
                    sizeof err);
  expect_invalid(rc, err, "CUDA kind, torch.device cpu", "torch.device 'cpu'");
  rc = create_torch("torch", "rust", KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU,
                    &id, err, sizeof err);
  expect_invalid(rc, err, "language rust", "\"c\", \"cuda\" or \"python\"");
  assert_unchanged(&before, "refused torch campaigns");
  /* no language given: python, from the spec */
  rc = create_torch("torch", NULL, KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU,
                    &id, err, sizeof err);
  if (rc) fail_msg("a torch campaign: %s: %s", kf_err_name(rc), err);
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM campaigns WHERE id = %lld"
           " AND language = 'python'", (long long)id);
  assert_int_equal(db_int(sql), 1);
  assert_alive();
}

static void test_spec_limits_and_ended_campaign(void **state) {
  (void)state;
  char err[512];
  /* A CPU worker with 16 GiB registered (it runs no eval: the campaign
   * made below gets no tasks). */
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "badinput-cpu";
  Kernelfleet__DeviceInfo info = KERNELFLEET__DEVICE_INFO__INIT;
  info.mem_bytes = 16ull << 30;
  char *kinds[] = {"checksum"};
  Kernelfleet__RegisterWorkerRequest reg =
      KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
  reg.name = "bi-16g";
  reg.device_class = &dc;
  reg.device = &info;
  reg.task_kinds = kinds;
  reg.n_task_kinds = 1;
  int rc = register_with(&reg, err, sizeof err);
  if (rc) fail_msg("RegisterWorker: %s: %s", kf_err_name(rc), err);

  snap before = snapshot();
  int64_t id = 0;
  /* 2^34 floats per tensor: 64 GiB each, an input and an output on each
   * of two sides: 256 GiB. */
  rc = create_campaign("17179869184", 0, &id, err, sizeof err);
  expect(rc, err, KF_ESTATE, "2^34 floats per tensor",
         "the harness needs 256.0 GiB");
  expect(rc, err, KF_ESTATE, "2^34 floats per tensor",
         "has 16.0 GiB (mem_bytes 17179869184)");
  expect(rc, err, KF_ESTATE, "2^34 floats per tensor", "bench size N=");
  assert_unchanged(&before, "a spec too big");

  /* A small one is created; stopped, it takes no proposal. */
  rc = create_campaign("1024", 0, &id, err, sizeof err);
  if (rc) fail_msg("CreateCampaign: %s: %s", kf_err_name(rc), err);
  Kernelfleet__StopCampaignRequest sc = KERNELFLEET__STOP_CAMPAIGN_REQUEST__INIT;
  sc.campaign_id = id;
  rc = call(g.tg.c, PATH("StopCampaign"), &sc.base,
            &kernelfleet__stop_campaign_response__descriptor, NULL, err,
            sizeof err);
  if (rc) fail_msg("StopCampaign: %s: %s", kf_err_name(rc), err);
  before = snapshot();
  Kernelfleet__ProposeCandidateRequest pc =
      KERNELFLEET__PROPOSE_CANDIDATE_REQUEST__INIT;
  pc.campaign_id = id;
  pc.source = "int kf_launch(void) { return 1; }";
  char want[96];
  snprintf(want, sizeof want, "campaign %lld has ended (campaign stopped)",
           (long long)id);
  expect(call(g.tg.c, PATH("ProposeCandidate"), &pc.base,
              &kernelfleet__propose_candidate_response__descriptor, NULL, err,
              sizeof err),
         err, KF_ESTATE, "propose after the end", want);
  assert_unchanged(&before, "a late proposal");
  assert_alive();
}

/* The roofline target is a fraction of the copy bandwidth, which a
 * problem that mostly reads passes honestly: 1.5 is kept as given; past
 * KF_TARGET_ROOFLINE_MAX (2) is refused naming the field, nothing stored.
 * Runs after test_spec_limits_and_ended_campaign (its CPU worker). */
static void test_roofline_target(void **state) {
  (void)state;
  char err[512];
  int64_t id = 0;
  snap before = snapshot();
  int rc = create_campaign("1024", 2.5, &id, err, sizeof err);
  expect_invalid(rc, err, "target_roofline 2.5", "target_roofline must be in (0, 2]");
  assert_unchanged(&before, "a target of 2.5");
  rc = create_campaign("1024", 1.5, &id, err, sizeof err);
  if (rc) fail_msg("CreateCampaign at target 1.5: %s: %s", kf_err_name(rc), err);
  char q[128];
  snprintf(q, sizeof q,
           "SELECT (target_roofline * 100)::int FROM campaigns WHERE id = %lld",
           (long long)id);
  assert_int_equal(db_int(q), 150);
  Kernelfleet__StopCampaignRequest sc = KERNELFLEET__STOP_CAMPAIGN_REQUEST__INIT;
  sc.campaign_id = id;
  rc = call(g.tg.c, PATH("StopCampaign"), &sc.base,
            &kernelfleet__stop_campaign_response__descriptor, NULL, err,
            sizeof err);
  if (rc) fail_msg("StopCampaign: %s: %s", kf_err_name(rc), err);
  assert_alive();
}

/* Runs last: the process survived all of the above and stops cleanly. */
static void test_still_alive_then_clean_exit(void **state) {
  (void)state;
  assert_alive();
  get_status_ok();
  /* Only what test_not_holder and test_report_poison made exists. */
  assert_int_equal(db_int("SELECT count(*) FROM results"), g.results_made);
  assert_int_equal(db_int("SELECT count(*) FROM tasks"), 1 + g.tasks_made);

  tcoord_stop(&g.tg.co);
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
      cmocka_unit_test(test_ranges_and_lengths),
      cmocka_unit_test(test_ids_that_do_not_exist),
      cmocka_unit_test(test_nul_and_utf8),
      cmocka_unit_test(test_report_poison),
      cmocka_unit_test(test_spec_limits_and_ended_campaign),
      cmocka_unit_test(test_roofline_target),
      cmocka_unit_test(test_torch_campaigns),
      cmocka_unit_test(test_still_alive_then_clean_exit),
  };
  return cmocka_run_group_tests_name("coord-badinput", tests, group_setup,
                                     group_teardown);
}
