/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-coord-auth.c -- roles, credentials, binding and TLS
 * against real kf-coordinator processes on a real PostgreSQL.
 *
 * The group setup creates a private database on the "pg" fixture's server
 * (KF_TEST_PG), migrates it and stores credentials the way `kf token
 * create` does (random secret, SHA-256 in api_tokens), then spawns
 * $KF_BIN_DIR/kf-coordinator with its bootstrap token in the environment
 * (never argv).  The tests:
 *   - argv: the coordinator's /proc/PID/cmdline holds no token, and
 *     `--token` is no longer an option;
 *   - roles: a submitter can neither register nor report (PERMISSION_
 *     DENIED naming the role), a worker cannot submit, an unknown token is
 *     UNAUTHENTICATED, admin credentials may do everything;
 *   - the forgery of issue 10: a script with a submitter token registers
 *     -> refused; with another worker's token it heartbeats, leases and
 *     reports for a worker it is not -> refused; reporting as itself for a
 *     lease it does not hold -> NOT_HOLDER; nothing is stored.  The same
 *     binding holds after a coordinator restart (checked from the store);
 *   - creation takes effect on the running coordinator at once (the
 *     first call with a new token waits for the reload it triggers), and
 *     revocation within about a second;
 *   - an unauthenticated call with a large body is refused
 *     UNAUTHENTICATED (the body is never read): 32 such calls of 16 MiB
 *     at once, twice (1 GiB sent), raise the coordinator's peak RSS by
 *     far less than the 512 MiB a server reading bodies before the check
 *     would hold;
 *   - TLS, with a CA made by openssl here: a call succeeds with the CA,
 *     fails with another CA and in plaintext; with --tls-client-ca a
 *     client without a certificate fails and one with a certificate
 *     signed by that CA succeeds; listening on 0.0.0.0 without TLS logs a
 *     warning, with TLS it does not.
 * Conditions are waited for with generous bounds; nothing asserts speed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "rpc.h"
#include "store.h"
#include "store_internal.h"
#include "util.h"
#include "test-coord-fixture.h"
#include "token.h"

#define BOOT "auth-bootstrap-token"
#define PATH(m) "/kernelfleet.Coordinator/" m

static struct {
  char dir[64];    /* temp dir: logs, port files, PEM files */
  kf_tcoord main;  /* plaintext, loopback */
  kf_tcoord quota; /* test_oversized_memory's; killed at teardown if an
                    * assert left it running */
  char worker_a[80], worker_b[80], submitter[80], admin_tok[80];
  char submitter2[80];
  int64_t worker_a_id, submitter_id;
} g;

/* Stores a fresh credential of role; its secret goes to out. */
static int64_t make_token(const char *role, const char *name, char *out,
                          size_t len) {
  char hash[65];
  int64_t id = 0;
  assert_int_equal(kf_token_generate(out, len), 0);
  assert_int_equal(kf_token_hash_hex(out, strlen(out), hash), 0);
  if (kf_store_token_create(tdb.s, role, name, hash, &id))
    fail_msg("token create: %s", kf_store_errmsg(tdb.s));
  assert_true(id > 0);
  return id;
}

static int group_setup(void **state) {
  (void)state;
  if (tdb_group_setup("auth")) return -1;
  snprintf(g.dir, sizeof g.dir, "/tmp/kf-auth-XXXXXX");
  if (!mkdtemp(g.dir)) return -1;
  /* Stored before the coordinator starts: it must load them at start. */
  make_token("worker", "a", g.worker_a, sizeof g.worker_a);
  make_token("worker", "b", g.worker_b, sizeof g.worker_b);
  g.submitter_id = make_token("submitter", "s", g.submitter,
                              sizeof g.submitter);
  make_token("submitter", "s2", g.submitter2, sizeof g.submitter2);
  make_token("admin", "x", g.admin_tok, sizeof g.admin_tok);
  return tcoord_spawn(&g.main, g.dir, "main", BOOT, "127.0.0.1:0", NULL);
}

static int group_teardown(void **state) {
  tcoord_kill(&g.main);
  tcoord_kill(&g.quota);
  tdb_group_teardown(state);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g.dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g.dir);
  return 0;
}

static int64_t db_int(const char *sql) {
  char out[64] = "";
  if (kf_store__admin_exec(tdb.s, sql, out, sizeof out))
    fail_msg("%s: %s", sql, kf_store_errmsg(tdb.s));
  return strtoll(out, NULL, 10);
}

static kf_rpc_client *client(const char *target, const char *token,
                             const kf_rpc_tls *tls) {
  kf_rpc_client *c = NULL;
  char err[256];
  if (kf_rpc_client_open_tls(NULL, target, token, tls, 32u << 20, &c, err,
                             sizeof err))
    fail_msg("client: %s", err);
  return c;
}

static int call(kf_rpc_client *c, const char *path,
                const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *type,
                ProtobufCMessage **resp, char *err, size_t errlen) {
  ProtobufCMessage *r = NULL;
  err[0] = '\0';
  int rc = kf_rpc_client_call_sync(c, path, req, type, 20000, &r, err,
                                   errlen);
  if (resp) *resp = r;
  else kf_rpc_free(r);
  return rc;
}

static int get_status(kf_rpc_client *c, char *err, size_t errlen) {
  Kernelfleet__GetStatusRequest req = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  return call(c, PATH("GetStatus"), &req.base,
              &kernelfleet__get_status_response__descriptor, NULL, err,
              errlen);
}

/* RegisterWorker for task kind; returns the KF code, *id the new worker
 * on success. */
static int register_kind(kf_rpc_client *c, const char *name, const char *kind,
                         int64_t *id, char *err, size_t errlen) {
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "auth-cpu";
  dc.isa = "x86_64";
  char *kinds[] = {(char *)kind};
  Kernelfleet__RegisterWorkerRequest req =
      KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
  req.name = (char *)name;
  req.hostname = "test";
  req.device_class = &dc;
  req.task_kinds = kinds;
  req.n_task_kinds = 1;
  req.slots = 1;
  ProtobufCMessage *resp = NULL;
  int rc = call(c, PATH("RegisterWorker"), &req.base,
                &kernelfleet__register_worker_response__descriptor, &resp,
                err, errlen);
  if (!rc)
    *id = ((Kernelfleet__RegisterWorkerResponse *)resp)->worker_id;
  kf_rpc_free(resp);
  return rc;
}

static int register_as(kf_rpc_client *c, const char *name, int64_t *id,
                       char *err, size_t errlen) {
  return register_kind(c, name, "checksum", id, err, errlen);
}

/* SubmitTasks of n tasks of kind. */
static int submit_kind(kf_rpc_client *c, const char *kind, int n, char *err,
                       size_t errlen) {
  Kernelfleet__TaskSpec spec = KERNELFLEET__TASK_SPEC__INIT;
  spec.kind = (char *)kind;
  spec.payload.data = (uint8_t *)"{\"data\": \"x\"}";
  spec.payload.len = strlen("{\"data\": \"x\"}");
  Kernelfleet__TaskSpec *sp[8];
  for (int i = 0; i < n && i < 8; i++) sp[i] = &spec;
  Kernelfleet__SubmitTasksRequest req = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  req.tasks = sp;
  req.n_tasks = (size_t)n;
  return call(c, PATH("SubmitTasks"), &req.base,
              &kernelfleet__submit_tasks_response__descriptor, NULL, err,
              errlen);
}

static int submit(kf_rpc_client *c, int n, char *err, size_t errlen) {
  return submit_kind(c, "checksum", n, err, errlen);
}

/* LeaseTasks for worker_id, waiting up to wait_ms for a task; *task and
 * *attempt: the first task granted. */
static int lease_wait(kf_rpc_client *c, int64_t worker_id, uint32_t wait_ms,
                      int64_t *task, uint32_t *attempt, char *err,
                      size_t errlen) {
  Kernelfleet__LeaseTasksRequest req = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
  req.worker_id = worker_id;
  req.max_tasks = 1;
  req.wait_ms = wait_ms;
  ProtobufCMessage *resp = NULL;
  int rc = call(c, PATH("LeaseTasks"), &req.base,
                &kernelfleet__lease_tasks_response__descriptor, &resp, err,
                errlen);
  if (!rc) {
    const Kernelfleet__LeaseTasksResponse *r = (const void *)resp;
    *task = r->n_tasks ? r->tasks[0]->task_id : 0;
    *attempt = r->n_tasks ? r->tasks[0]->attempt : 0;
  }
  kf_rpc_free(resp);
  return rc;
}

static int lease(kf_rpc_client *c, int64_t worker_id, int64_t *task,
                 uint32_t *attempt, char *err, size_t errlen) {
  return lease_wait(c, worker_id, 2000, task, attempt, err, errlen);
}

static int heartbeat(kf_rpc_client *c, int64_t worker_id, char *err,
                     size_t errlen) {
  Kernelfleet__HeartbeatRequest req = KERNELFLEET__HEARTBEAT_REQUEST__INIT;
  req.worker_id = worker_id;
  return call(c, PATH("Heartbeat"), &req.base,
              &kernelfleet__heartbeat_response__descriptor, NULL, err, errlen);
}

/* ReportResult of one made-up result; *verdict on success. */
static int report(kf_rpc_client *c, int64_t worker_id, int64_t task,
                  uint32_t attempt, int *verdict, char *err, size_t errlen) {
  Kernelfleet__TaskResult t = KERNELFLEET__TASK_RESULT__INIT;
  t.task_id = task;
  t.attempt = attempt;
  t.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  t.output.data = (uint8_t *)"{\"speedup\": 5000000}";
  t.output.len = strlen("{\"speedup\": 5000000}");
  Kernelfleet__TaskResult *tp[] = {&t};
  Kernelfleet__ReportResultRequest req =
      KERNELFLEET__REPORT_RESULT_REQUEST__INIT;
  req.worker_id = worker_id;
  req.results = tp;
  req.n_results = 1;
  ProtobufCMessage *resp = NULL;
  int rc = call(c, PATH("ReportResult"), &req.base,
                &kernelfleet__report_result_response__descriptor, &resp, err,
                errlen);
  if (!rc) *verdict = (int)((Kernelfleet__ReportResultResponse *)resp)
                          ->verdicts[0];
  kf_rpc_free(resp);
  return rc;
}

/* ------------------------------------------------------------- tests */

static void test_no_token_in_argv(void **state) {
  (void)state;
  char path[64], buf[8192];
  snprintf(path, sizeof path, "/proc/%d/cmdline", (int)g.main.pid);
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  assert_true(n > 0);
  for (ssize_t i = 0; i < n; i++)
    if (!buf[i]) buf[i] = ' ';
  buf[n] = '\0';
  assert_null(strstr(buf, BOOT));
  assert_null(strstr(buf, "token"));
  assert_non_null(strstr(buf, "kf-coordinator"));
  /* --token is gone: the coordinator refuses it as a usage error. */
  const char *bin = getenv("KF_BIN_DIR");
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "'%s/kf-coordinator' --db x --token secret "
           ">/dev/null 2>&1", bin);
  int st = system(cmd);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  snprintf(cmd, sizeof cmd, "'%s/kf-worker' --token secret >/dev/null 2>&1",
           bin);
  st = system(cmd);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 2);
}

static void test_roles(void **state) {
  (void)state;
  char err[256];
  int64_t id;
  kf_rpc_client *sub = client(g.main.target, g.submitter, NULL);
  kf_rpc_client *wrk = client(g.main.target, g.worker_a, NULL);
  kf_rpc_client *adm = client(g.main.target, g.admin_tok, NULL);
  kf_rpc_client *boot = client(g.main.target, BOOT, NULL);
  kf_rpc_client *nobody = client(g.main.target, "kft_not-a-real-token", NULL);

  /* A submitter reads and submits, but is no worker. */
  assert_int_equal(get_status(sub, err, sizeof err), 0);
  assert_int_equal(submit(sub, 1, err, sizeof err), 0);
  assert_int_equal(register_as(sub, "forger", &id, err, sizeof err), KF_EPERM);
  assert_non_null(strstr(err, "submitter"));
  assert_non_null(strstr(err, "RegisterWorker"));
  int v;
  assert_int_equal(report(sub, 1, 1, 1, &v, err, sizeof err), KF_EPERM);
  assert_non_null(strstr(err, "submitter"));
  assert_int_equal(heartbeat(sub, 1, err, sizeof err), KF_EPERM);
  /* A worker works, but cannot submit or read campaigns. */
  assert_int_equal(submit(wrk, 1, err, sizeof err), KF_EPERM);
  assert_non_null(strstr(err, "worker"));
  assert_int_equal(get_status(wrk, err, sizeof err), KF_EPERM);
  /* Admins (stored or the bootstrap token) may do everything. */
  assert_int_equal(get_status(adm, err, sizeof err), 0);
  assert_int_equal(get_status(boot, err, sizeof err), 0);
  assert_int_equal(submit(adm, 1, err, sizeof err), 0);
  /* Unknown: UNAUTHENTICATED. */
  assert_int_equal(get_status(nobody, err, sizeof err), KF_EAUTH);
  assert_int_equal(register_as(nobody, "x", &id, err, sizeof err), KF_EAUTH);
  /* Nothing a refused call carried reached the database. */
  assert_int_equal(db_int("SELECT count(*) FROM workers"), 0);
  assert_int_equal(db_int("SELECT count(*) FROM tasks"), 2);
  kf_rpc_client_close(sub);
  kf_rpc_client_close(wrk);
  kf_rpc_client_close(adm);
  kf_rpc_client_close(boot);
  kf_rpc_client_close(nobody);
}

/* A campaign is its creator's (0015): another submitter can neither stop
 * it nor propose into it (PERMISSION_DENIED, naming why); its creator and
 * an admin can.  One an admin created is an admin's.  Red team
 * 2026-12-01-s3b: any submitter stopped any campaign, and added a
 * proposal labelled "llm:gpt-5 (official)" to another's. */
static const char OWN_SPEC[] =
    "{\"name\": \"own\", \"backend\": \"cpu\", \"params\": [\"N\"],"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"],"
    " \"dists\": [\"normal\"]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"]}],"
    " \"sizes\": {\"check\": [{\"N\": 4}], \"bench\": {\"N\": 64}},"
    " \"tolerance\": {\"f32\": {\"rtol\": 1e-4, \"atol\": 1e-6}},"
    " \"flops\": \"N\", \"bytes\": \"8*N\", \"reference\": \"reference.c\","
    " \"templates\": [{\"name\": \"t\", \"file\": \"t.c\"}]}";

static int rpc(kf_rpc_client *c, const char *path, const ProtobufCMessage *q,
               const ProtobufCMessageDescriptor *type, ProtobufCMessage **resp,
               char *err, size_t errlen) {
  ProtobufCMessage *r = NULL;
  err[0] = '\0';
  int rc = kf_rpc_client_call_sync(c, path, q, type, 10000, &r, err, errlen);
  if (resp) *resp = r;
  else kf_rpc_free(r);
  return rc;
}

static int64_t own_campaign(kf_rpc_client *c) {
  Kernelfleet__TemplateSource ts = KERNELFLEET__TEMPLATE_SOURCE__INIT;
  ts.name = "t";
  ts.file = "t.c";
  ts.source = "int kf_launch(void) { return 0; }";
  Kernelfleet__TemplateSource *tp[] = {&ts};
  Kernelfleet__CreateCampaignRequest q =
      KERNELFLEET__CREATE_CAMPAIGN_REQUEST__INIT;
  q.name = "own";
  q.spec_json.data = (uint8_t *)OWN_SPEC;
  q.spec_json.len = strlen(OWN_SPEC);
  q.reference_source = "int kf_launch(void) { return 0; }";
  q.templates = tp;
  q.n_templates = 1;
  q.backend = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  q.budget_evals = 1;
  ProtobufCMessage *resp = NULL;
  char err[256];
  if (rpc(c, PATH("CreateCampaign"), &q.base,
          &kernelfleet__create_campaign_response__descriptor, &resp, err,
          sizeof err))
    fail_msg("CreateCampaign: %s", err);
  int64_t id = ((Kernelfleet__CreateCampaignResponse *)resp)->campaign_id;
  kf_rpc_free(resp);
  assert_true(id > 0);
  return id;
}

static int stop_campaign(kf_rpc_client *c, int64_t id, char *err,
                         size_t errlen) {
  Kernelfleet__StopCampaignRequest q = KERNELFLEET__STOP_CAMPAIGN_REQUEST__INIT;
  q.campaign_id = id;
  return rpc(c, PATH("StopCampaign"), &q.base,
             &kernelfleet__stop_campaign_response__descriptor, NULL, err,
             errlen);
}

static int propose(kf_rpc_client *c, int64_t id, char *err, size_t errlen) {
  Kernelfleet__ProposeCandidateRequest q =
      KERNELFLEET__PROPOSE_CANDIDATE_REQUEST__INIT;
  q.campaign_id = id;
  q.source = "int kf_launch(void) { return 1; }";
  q.proposer = "llm:gpt-5 (official)";
  return rpc(c, PATH("ProposeCandidate"), &q.base,
             &kernelfleet__propose_candidate_response__descriptor, NULL, err,
             errlen);
}

static void test_campaign_owner(void **state) {
  (void)state;
  char err[256];
  kf_rpc_client *sub = client(g.main.target, g.submitter, NULL);
  kf_rpc_client *sub2 = client(g.main.target, g.submitter2, NULL);
  kf_rpc_client *adm = client(g.main.target, g.admin_tok, NULL);
  int64_t mine = own_campaign(sub);
  char sql[160];
  snprintf(sql, sizeof sql, "SELECT owner_cred FROM campaigns WHERE id ="
           " %lld", (long long)mine);
  assert_int_equal(db_int(sql), g.submitter_id);
  /* another submitter: refused, and nothing changed */
  assert_int_equal(propose(sub2, mine, err, sizeof err), KF_EPERM);
  assert_non_null(strstr(err, "another credential"));
  assert_int_equal(stop_campaign(sub2, mine, err, sizeof err), KF_EPERM);
  assert_non_null(strstr(err, "another credential"));
  snprintf(sql, sizeof sql, "SELECT count(*) FROM campaigns WHERE id = %lld"
           " AND state = 'running'", (long long)mine);
  assert_int_equal(db_int(sql), 1);
  assert_int_equal(db_int("SELECT count(*) FROM candidates WHERE proposer"
                          " LIKE 'llm:%'"), 0);
  /* its creator may */
  assert_int_equal(propose(sub, mine, err, sizeof err), 0);
  assert_int_equal(stop_campaign(sub, mine, err, sizeof err), 0);
  assert_int_equal(db_int(sql), 0);
  /* an admin's campaign: a submitter may not stop it, an admin may */
  int64_t theirs = own_campaign(adm);
  assert_int_equal(stop_campaign(sub, theirs, err, sizeof err), KF_EPERM);
  assert_int_equal(stop_campaign(adm, theirs, err, sizeof err), 0);
  kf_rpc_client_close(sub);
  kf_rpc_client_close(sub2);
  kf_rpc_client_close(adm);
}

/* Issue 10's forgery: "a script registered as a worker, leased two eval
 * tasks and reported a made-up result". */
static void test_forgery(void **state) {
  (void)state;
  char err[256];
  kf_rpc_client *a = client(g.main.target, g.worker_a, NULL);
  kf_rpc_client *b = client(g.main.target, g.worker_b, NULL);
  kf_rpc_client *sub = client(g.main.target, g.submitter, NULL);
  int64_t wa = 0, wb = 0, forged = 0;
  assert_int_equal(register_as(a, "auth-a", &wa, err, sizeof err), 0);
  assert_int_equal(register_as(b, "auth-b", &wb, err, sizeof err), 0);
  g.worker_a_id = wa;
  /* The binding is stored: the worker row names its credential. */
  char sql[160];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM workers w JOIN api_tokens t"
           " ON t.id = w.token_id WHERE w.id = %lld AND t.name = 'a'",
           (long long)wa);
  assert_int_equal(db_int(sql), 1);
  /* With a submitter token the script cannot even become a worker. */
  assert_int_equal(register_as(sub, "forger", &forged, err, sizeof err),
                   KF_EPERM);
  /* A leases a task. */
  int64_t task = 0;
  uint32_t att = 0;
  for (int i = 0; i < 20 && !task; i++)
    assert_int_equal(lease(a, wa, &task, &att, err, sizeof err), 0);
  assert_true(task > 0);
  int64_t before = db_int("SELECT count(*) FROM results");
  /* B, a real worker with its own token, acts as A: refused, all three. */
  int v = -1;
  assert_int_equal(report(b, wa, task, att, &v, err, sizeof err), KF_EPERM);
  assert_non_null(strstr(err, "another credential"));
  assert_int_equal(heartbeat(b, wa, err, sizeof err), KF_EPERM);
  int64_t t2;
  uint32_t a2;
  assert_int_equal(lease(b, wa, &t2, &a2, err, sizeof err), KF_EPERM);
  /* B as itself, for the lease A holds: not the holder, not stored. */
  assert_int_equal(report(b, wb, task, att, &v, err, sizeof err), 0);
  assert_int_equal(v, KERNELFLEET__REPORT_VERDICT__REPORT_NOT_HOLDER);
  assert_int_equal(db_int("SELECT count(*) FROM results"), before);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM tasks WHERE id = %lld"
           " AND state = 'leased' AND lease_owner = %lld", (long long)task,
           (long long)wa);
  assert_int_equal(db_int(sql), 1);

  /* After a restart the loop knows no worker: the binding comes from the
   * store, and holds the same. */
  tcoord_stop(&g.main);
  assert_int_equal(
      tcoord_spawn(&g.main, g.dir, "main2", BOOT, "127.0.0.1:0", NULL), 0);
  kf_rpc_client_close(a);
  kf_rpc_client_close(b);
  a = client(g.main.target, g.worker_a, NULL);
  b = client(g.main.target, g.worker_b, NULL);
  assert_int_equal(heartbeat(b, wa, err, sizeof err), KF_EPERM);
  assert_int_equal(report(b, wa, task, att, &v, err, sizeof err), KF_EPERM);
  assert_int_equal(lease(b, wa, &t2, &a2, err, sizeof err), KF_EPERM);
  assert_int_equal(db_int("SELECT count(*) FROM results"), before);
  /* A itself still may. */
  assert_int_equal(heartbeat(a, wa, err, sizeof err), 0);
  assert_int_equal(report(a, wa, task, att, &v, err, sizeof err), 0);
  assert_int_equal(v, KERNELFLEET__REPORT_VERDICT__REPORT_ACCEPTED);
  assert_int_equal(db_int("SELECT count(*) FROM results"), before + 1);
  kf_rpc_client_close(a);
  kf_rpc_client_close(b);
  kf_rpc_client_close(sub);
}

/* A revoked credential is refused by the running coordinator; a new one
 * is accepted -- no restart. */
static void test_revoke_and_create(void **state) {
  (void)state;
  char err[256], tok[80];
  int64_t id = make_token("submitter", "late", tok, sizeof tok);
  kf_rpc_client *c = client(g.main.target, tok, NULL);
  /* Its very first call works: an unknown token waits for the reload it
   * triggers instead of being refused at once. */
  int rc = get_status(c, err, sizeof err);
  assert_int_equal(rc, 0);
  assert_int_equal(kf_store_token_revoke(tdb.s, id), 0);
  for (int i = 0; i < 300 && rc != KF_EAUTH; i++) {
    rc = get_status(c, err, sizeof err);
    if (rc != KF_EAUTH) tcoord_sleep_ms(100);
  }
  assert_int_equal(rc, KF_EAUTH);
  /* Revoking twice is fine; an unknown id is NOT_FOUND. */
  assert_int_equal(kf_store_token_revoke(tdb.s, id), 0);
  assert_int_equal(kf_store_token_revoke(tdb.s, 999999), KF_ENOTFOUND);
  kf_rpc_client_close(c);
}

typedef struct {
  kf_rpc_client *c;
  int64_t worker;
  int rc;
  int64_t task;
  char err[256];
} poll_arg;

static void *poll_thread(void *p) {
  poll_arg *a = p;
  uint32_t attempt = 0;
  a->rc = lease_wait(a->c, a->worker, 25000, &a->task, &attempt, a->err,
                     sizeof a->err);
  return NULL;
}

/* Property: no task is granted under a credential after the coordinator
 * has seen it revoked -- including to a long poll admitted before the
 * revocation, which passed the arrival check and then waits for tasks. */
static void test_revoke_long_poll(void **state) {
  (void)state;
  char err[256], tok[80];
  int64_t wid = 0;
  int64_t tid = make_token("worker", "poller", tok, sizeof tok);
  kf_rpc_client *c = client(g.main.target, tok, NULL);
  kf_rpc_client *hb = client(g.main.target, tok, NULL);
  kf_rpc_client *sub = client(g.main.target, g.submitter, NULL);
  /* A kind of its own: no other test's queued task answers the poll. */
  int rc = register_kind(c, "poller", "revoke-probe", &wid, err, sizeof err);
  assert_int_equal(rc, 0);
  poll_arg a = {.c = c, .worker = wid};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, poll_thread, &a), 0);
  tcoord_sleep_ms(500); /* parked by now on any machine that is not
                         * stalled; if not, it is refused on arrival,
                         * which the property allows too */
  assert_int_equal(kf_store_token_revoke(tdb.s, tid), 0);
  /* Wait until the coordinator has seen the revocation. */
  rc = 0;
  for (int i = 0; i < 600 && rc != KF_EAUTH; i++) {
    rc = heartbeat(hb, wid, err, sizeof err);
    if (rc != KF_EAUTH) tcoord_sleep_ms(50);
  }
  assert_int_equal(rc, KF_EAUTH);
  rc = submit_kind(sub, "revoke-probe", 1, err, sizeof err);
  assert_int_equal(rc, 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  if (a.rc == 0)
    fail_msg("a poll of a revoked credential got %s",
             a.task ? "a task" : "an empty answer, not UNAUTHENTICATED");
  assert_int_equal(a.rc, KF_EAUTH);
  assert_int_equal(db_int("SELECT count(*) FROM tasks WHERE kind = "
                          "'revoke-probe' AND state <> 'queued'"), 0);
  kf_rpc_client_close(c);
  kf_rpc_client_close(hb);
  kf_rpc_client_close(sub);
}

/* The credential is judged from the metadata: a large body behind a wrong
 * token is answered UNAUTHENTICATED; behind a right one it is read (and
 * here refused as malformed, which shows it was). */
static void test_unauthenticated_body(void **state) {
  (void)state;
  char err[256];
  size_t len = 8u << 20;
  char *body = malloc(len);
  assert_non_null(body);
  memset(body, 0xff, len);
  kf_rpc_client *c = client(g.main.target, BOOT, NULL);
  void *out = NULL;
  size_t outlen = 0;
  assert_int_equal(kf_rpc_client_call_raw_sync(c, PATH("SubmitTasks"), body,
                                               len, "wrong", 30000, &out,
                                               &outlen, err, sizeof err),
                   KF_EAUTH);
  assert_int_equal(kf_rpc_client_call_raw_sync(c, PATH("SubmitTasks"), body,
                                               len, "", 30000, &out, &outlen,
                                               err, sizeof err),
                   KF_EAUTH);
  assert_int_equal(kf_rpc_client_call_raw_sync(c, PATH("SubmitTasks"), body,
                                               len, NULL, 30000, &out,
                                               &outlen, err, sizeof err),
                   KF_EPROTO);
  free(out);
  free(body);
  kf_rpc_client_close(c);
}

/* One field of /proc/PID/status in kB (VmRSS, VmHWM); -1 if unreadable. */
static long proc_kb(pid_t pid, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  long v = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, field, n) && line[n] == ':') {
      v = strtol(line + n + 1, NULL, 10);
      break;
    }
  fclose(f);
  return v;
}

#define FLOOD_CALLS 32          /* at once, each on its own connection */
#define FLOOD_ROUNDS 2
#define FLOOD_BYTES ((16u << 20) - 1024) /* SubmitTasks' limit: 16 MiB */

/* Issue 10's unauthenticated-memory flood, measured from the outside:
 * FLOOD_CALLS calls at once, FLOOD_ROUNDS times, each a FLOOD_BYTES body
 * behind a well-formed token the coordinator does not know, straight
 * through gRPC core so the client holds one copy of the body (a static
 * slice) however many calls send it.  A server that reads a body before
 * judging its credential holds every body in flight: FLOOD_CALLS x 16 MiB
 * = 512 MiB at once (1 GiB sent in all).  One that judges the metadata
 * first and never asks for a refused body holds a 64 KiB stream window
 * per call.  The assert is the peak growth of the coordinator's RSS
 * (VmHWM, reset through clear_refs where the kernel allows, and sampled
 * VmRSS) below a quarter of the bytes in flight: memory, not speed, so a
 * loaded machine changes nothing but how long it takes. */
static void test_unauthenticated_memory(void **state) {
  (void)state;
  pid_t pid = g.main.pid;
  assert_true(pid > 0);
  char *body = malloc(FLOOD_BYTES);
  assert_non_null(body);
  memset(body, 'x', FLOOD_BYTES);
  grpc_init();
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
  grpc_channel *ch[FLOOD_CALLS];
  for (int i = 0; i < FLOOD_CALLS; i++) {
    /* a distinct argument per channel: its own subchannel, so its own TCP
     * connection, as FLOOD_CALLS separate clients would have */
    grpc_arg a = {.type = GRPC_ARG_INTEGER, .key = (char *)"kf.test.flood",
                  .value.integer = i};
    grpc_channel_args args = {.num_args = 1, .args = &a};
    ch[i] = grpc_channel_create(g.main.target, creds, &args);
    assert_non_null(ch[i]);
  }
  /* The HWM from here on (the kernel resets it to the current RSS); if
   * it cannot, the sampled RSS still catches a peak. */
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/clear_refs", (long)pid);
  FILE *cr = fopen(path, "w");
  bool reset = cr && fputs("5", cr) >= 0;
  if (cr && fclose(cr) != 0) reset = false;
  long rss0 = proc_kb(pid, "VmRSS"), hwm0 = proc_kb(pid, "VmHWM");
  assert_true(rss0 > 0 && hwm0 > 0);
  long peak = rss0;
  grpc_slice secret = grpc_slice_from_static_string(
      "Bearer kft_no-such-credential-0123456789abcdef");
  int unauth = 0, other = 0;
  for (int round = 0; round < FLOOD_ROUNDS; round++) {
    struct {
      grpc_call *call;
      grpc_byte_buffer *bb;
      grpc_metadata_array im, tm;
      grpc_status_code status;
      grpc_slice details;
    } c[FLOOD_CALLS];
    for (int i = 0; i < FLOOD_CALLS; i++) {
      grpc_slice s = grpc_slice_from_static_buffer(body, FLOOD_BYTES);
      c[i].bb = grpc_raw_byte_buffer_create(&s, 1);
      grpc_metadata_array_init(&c[i].im);
      grpc_metadata_array_init(&c[i].tm);
      c[i].details = grpc_empty_slice();
      c[i].call = grpc_channel_create_call(
          ch[i], NULL, GRPC_PROPAGATE_DEFAULTS, cq,
          grpc_slice_from_static_string(PATH("SubmitTasks")), NULL,
          gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                       gpr_time_from_seconds(300, GPR_TIMESPAN)),
          NULL);
      assert_non_null(c[i].call);
      grpc_metadata md = {.key = grpc_slice_from_static_string("authorization"),
                          .value = secret};
      grpc_op ops[5];
      memset(ops, 0, sizeof ops);
      ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
      ops[0].data.send_initial_metadata.count = 1;
      ops[0].data.send_initial_metadata.metadata = &md;
      ops[1].op = GRPC_OP_SEND_MESSAGE;
      ops[1].data.send_message.send_message = c[i].bb;
      ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
      ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
      ops[3].data.recv_initial_metadata.recv_initial_metadata = &c[i].im;
      ops[4].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
      ops[4].data.recv_status_on_client.trailing_metadata = &c[i].tm;
      ops[4].data.recv_status_on_client.status = &c[i].status;
      ops[4].data.recv_status_on_client.status_details = &c[i].details;
      assert_int_equal(grpc_call_start_batch(c[i].call, ops, 5,
                                             (void *)(intptr_t)(i + 1), NULL),
                       GRPC_CALL_OK);
    }
    for (int done = 0; done < FLOOD_CALLS;) {
      grpc_event ev = grpc_completion_queue_next(
          cq, gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                           gpr_time_from_millis(20, GPR_TIMESPAN)),
          NULL);
      long r = proc_kb(pid, "VmRSS");
      if (r > peak) peak = r;
      if (ev.type == GRPC_QUEUE_TIMEOUT) continue;
      assert_int_equal(ev.type, GRPC_OP_COMPLETE);
      done++;
    }
    for (int i = 0; i < FLOOD_CALLS; i++) {
      if (c[i].status == GRPC_STATUS_UNAUTHENTICATED) unauth++;
      else {
        char *d = grpc_slice_to_c_string(c[i].details);
        fprintf(stderr, "flood call %d: status %d (%s)\n", i, c[i].status,
                d ? d : "?");
        gpr_free(d);
        other++;
      }
      grpc_slice_unref(c[i].details);
      grpc_metadata_array_destroy(&c[i].im);
      grpc_metadata_array_destroy(&c[i].tm);
      grpc_byte_buffer_destroy(c[i].bb);
      grpc_call_unref(c[i].call);
    }
  }
  long hwm1 = proc_kb(pid, "VmHWM"), rss1 = proc_kb(pid, "VmRSS");
  for (int i = 0; i < FLOOD_CALLS; i++) grpc_channel_destroy(ch[i]);
  grpc_completion_queue_shutdown(cq);
  while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME),
                                    NULL)
             .type != GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(cq);
  grpc_channel_credentials_release(creds);
  grpc_shutdown();
  free(body);
  long grew = peak - rss0;
  if (reset && hwm1 - hwm0 > grew) grew = hwm1 - hwm0;
  long in_flight_kb = (long)((uint64_t)FLOOD_CALLS * FLOOD_BYTES / 1024);
  fprintf(stderr,
          "unauthenticated flood: %d x %d calls of %u bytes (%ld MiB sent), "
          "%d UNAUTHENTICATED; coordinator RSS %ld kB before, peak %ld kB "
          "sampled, VmHWM %ld -> %ld kB (reset: %s), %ld kB after: grew "
          "%ld kB, limit %ld kB\n",
          FLOOD_ROUNDS, FLOOD_CALLS, FLOOD_BYTES,
          (long)((uint64_t)FLOOD_ROUNDS * FLOOD_CALLS * FLOOD_BYTES >> 20),
          unauth, rss0, peak, hwm0, hwm1, reset ? "yes" : "no", rss1, grew,
          in_flight_kb / 4);
  assert_int_equal(other, 0);
  assert_int_equal(unauth, FLOOD_ROUNDS * FLOOD_CALLS);
  assert_true(grew < in_flight_kb / 4);
  /* and the coordinator still serves a credential it knows */
  char err[256];
  kf_rpc_client *ok = client(g.main.target, g.admin_tok, NULL);
  assert_int_equal(get_status(ok, err, sizeof err), 0);
  kf_rpc_client_close(ok);
}

/* An authenticated flood of oversized messages, from kf-bench-flood (64
 * client threads, a channel each): 128 Heartbeats of 1.5M entries, 12 MB
 * each, 64 at once, with a good credential.  Heartbeat takes 80 KB, the
 * server 16 MiB, and gRPC receives a message whole before the method's
 * limit can refuse it: without a memory quota on the transport the
 * coordinator holds every body in flight (767 MB; 684 MB peak in a
 * release build, scripts/bench-limits).  Its own coordinator: the
 * smallest quota 16 MiB messages allow (--rpc-memory-mb 32), and ASan's
 * quarantine off, which would keep every freed message resident (256 MB)
 * whatever the transport does.  Every call must be refused (RESOURCE_
 * EXHAUSTED by the limit or the quota's stream reset, or UNAVAILABLE when
 * the quota closed an idle connection), the peak growth of the RSS stay
 * under a quarter of the bytes in flight, and an honest 15 MiB message
 * still arrive whole afterwards. */
static void test_oversized_memory(void **state) {
  (void)state;
  const char *prev = getenv("ASAN_OPTIONS");
  char *saved = prev ? strdup(prev) : NULL;
  char asan[512];
  snprintf(asan, sizeof asan, "%s%squarantine_size_mb=0", prev ? prev : "",
           prev && *prev ? ":" : "");
  setenv("ASAN_OPTIONS", asan, 1);
  kf_tcoord *q = &g.quota;
  const char *args[] = {"--rpc-memory-mb", "32", NULL};
  int rc = tcoord_spawn(q, g.dir, "quota", BOOT, "127.0.0.1:0", args);
  if (saved) setenv("ASAN_OPTIONS", saved, 1);
  else unsetenv("ASAN_OPTIONS");
  free(saved);
  assert_int_equal(rc, 0);

  char cpath[64];
  snprintf(cpath, sizeof cpath, "/proc/%ld/clear_refs", (long)q->pid);
  FILE *cr = fopen(cpath, "w");
  bool reset = cr && fputs("5", cr) >= 0;
  if (cr && fclose(cr) != 0) reset = false;
  long rss0 = proc_kb(q->pid, "VmRSS"), hwm0 = proc_kb(q->pid, "VmHWM");
  assert_true(rss0 > 0 && hwm0 > 0);

  char exe[1024], out[1100];
  snprintf(exe, sizeof exe, "%s/kf-bench-flood", getenv("KF_BIN_DIR"));
  snprintf(out, sizeof out, "%s/oversized.json", g.dir);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, 1);
    setenv("KF_TOKEN", BOOT, 1);
    execl(exe, exe, "heartbeat", "--target", q->target, "--worker", "1",
          "--entries", "1500000", "--count", "128", "--conc", "64",
          "--deadline-ms", "600000", (char *)NULL);
    _exit(127);
  }
  long peak = rss0;
  int st;
  for (;;) {
    long r = proc_kb(q->pid, "VmRSS");
    if (r > peak) peak = r;
    pid_t w = waitpid(pid, &st, WNOHANG);
    assert_true(w >= 0);
    if (w == pid) break;
    usleep(20000);
  }
  long hwm1 = proc_kb(q->pid, "VmHWM");
  long grew = peak - rss0;
  if (reset && hwm1 - hwm0 > grew) grew = hwm1 - hwm0;
  char *json = NULL;
  size_t jlen = 0;
  char err[256];
  assert_int_equal(kf_read_file(out, 1 << 20, &json, &jlen, err, sizeof err),
                   0);
  long in_flight_kb = 64L * 11983492 / 1024;
  fprintf(stderr, "oversized flood: %s; coordinator RSS %ld kB before, "
          "peak %ld kB sampled, VmHWM %ld -> %ld kB (reset: %s): grew %ld "
          "kB, limit %ld kB\n", json, rss0, peak, hwm0, hwm1,
          reset ? "yes" : "no", grew, in_flight_kb / 4);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    fail_msg("kf-bench-flood %s %d (killed for memory? see the kernel log)",
             WIFEXITED(st) ? "exited" : "was killed by signal",
             WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
  assert_non_null(strstr(json, "\"sent\": 128, \"ok\": 0,"));
  /* every code counted is one of the two refusals */
  const char *codes = strstr(json, "\"codes\": {");
  assert_non_null(codes);
  codes += strlen("\"codes\": {");
  const char *end = strchr(codes, '}');
  assert_non_null(end);
  for (const char *k = strchr(codes, '"'); k && k < end;
       k = strchr(strchr(k + 1, '"') + 1, '"')) {
    /* "RESOURCE_EXHAUSTED(busy)": what kf_rpc_client reads as KF_EBUSY
     * (the quota's reset), plain: too large (the method's limit) */
    bool known = !strncmp(k, "\"RESOURCE_EXHAUSTED\"", 20) ||
                 !strncmp(k, "\"RESOURCE_EXHAUSTED(busy)\"", 26) ||
                 !strncmp(k, "\"UNAVAILABLE\"", 13);
    if (!known) fprintf(stderr, "unexpected status %.40s\n", k);
    assert_true(known);
  }
  free(json);
#if defined(__SANITIZE_THREAD__)
  /* ThreadSanitizer shadows every byte the coordinator touches several
   * times over (252 MB grown under the 32 MiB quota in CI's TSan stage):
   * its RSS is no measure of what the transport holds.  The flood still
   * runs here for its races; the bound is asserted in the other builds. */
  fprintf(stderr, "oversized flood: memory bound not asserted under TSan\n");
#else
  assert_true(grew < in_flight_kb / 4);
#endif

  /* 15 MiB of bytes that are no protobuf, with a good token: received
   * whole and refused by the decoder (KF_EPROTO), not reset for memory. */
  size_t len = 15u << 20;
  char *body = malloc(len);
  assert_non_null(body);
  memset(body, 0xff, len);
  kf_rpc_client *ok = client(q->target, g.admin_tok, NULL);
  void *resp = NULL;
  size_t resplen = 0;
  assert_int_equal(kf_rpc_client_call_raw_sync(ok, PATH("SubmitTasks"), body,
                                               len, NULL, 120000, &resp,
                                               &resplen, err, sizeof err),
                   KF_EPROTO);
  free(resp);
  free(body);
  assert_int_equal(get_status(ok, err, sizeof err), 0);
  kf_rpc_client_close(ok);
  tcoord_stop(q);
}

/* ------------------------------------------------------------- TLS */

static void sh(const char *fmt, ...) {
  char cmd[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int st = system(cmd);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) fail_msg("failed: %s", cmd);
}

/* A CA (NAME-ca.pem/-ca.key) in g.dir and a certificate it signs
 * (NAME-LEAF.pem/.key) for 127.0.0.1 and localhost. */
static void make_ca(const char *name) {
  sh("cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -days 2 "
     "-subj '/CN=%s test CA' -keyout %s-ca.key -out %s-ca.pem "
     ">/dev/null 2>&1", g.dir, name, name, name);
}

static void make_leaf(const char *ca, const char *leaf) {
  sh("cd '%s' && openssl req -newkey rsa:2048 -nodes -subj '/CN=%s' "
     "-keyout %s-%s.key -out %s-%s.csr >/dev/null 2>&1 && "
     "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > %s.ext && "
     "openssl x509 -req -in %s-%s.csr -CA %s-ca.pem -CAkey %s-ca.key "
     "-CAcreateserial -days 2 -extfile %s.ext -out %s-%s.pem "
     ">/dev/null 2>&1",
     g.dir, leaf, ca, leaf, ca, leaf, leaf, ca, leaf, ca, ca, leaf, ca, leaf);
}

static bool log_has(const kf_tcoord *c, const char *needle) {
  char *text = NULL;
  FILE *f = fopen(c->log, "r");
  if (!f) return false;
  size_t cap = 1 << 20;
  text = calloc(1, cap);
  size_t n = text ? fread(text, 1, cap - 1, f) : 0;
  fclose(f);
  bool hit = text && n && strstr(text, needle);
  free(text);
  return hit;
}

static void test_tls(void **state) {
  (void)state;
  make_ca("good");
  make_ca("evil");
  make_leaf("good", "server");
  make_leaf("good", "client");
  make_leaf("evil", "client");
  char f[6][200];
  snprintf(f[0], sizeof f[0], "%s/good-ca.pem", g.dir);
  snprintf(f[1], sizeof f[1], "%s/good-server.pem", g.dir);
  snprintf(f[2], sizeof f[2], "%s/good-server.key", g.dir);
  snprintf(f[3], sizeof f[3], "%s/evil-ca.pem", g.dir);
  snprintf(f[4], sizeof f[4], "%s/good-client.pem", g.dir);
  snprintf(f[5], sizeof f[5], "%s/good-client.key", g.dir);
  char evil_cert[200], evil_key[200];
  snprintf(evil_cert, sizeof evil_cert, "%s/evil-client.pem", g.dir);
  snprintf(evil_key, sizeof evil_key, "%s/evil-client.key", g.dir);

  /* TLS on a public address: no warning. */
  kf_tcoord t = {0};
  const char *tls_args[] = {"--tls-cert", f[1], "--tls-key", f[2], NULL};
  assert_int_equal(
      tcoord_spawn(&t, g.dir, "tls", BOOT, "0.0.0.0:0", tls_args), 0);
  char err[256];
  kf_rpc_tls good = {.ca_file = f[0]};
  kf_rpc_tls evil = {.ca_file = f[3]};
  kf_rpc_client *c = client(t.target, BOOT, &good);
  assert_int_equal(get_status(c, err, sizeof err), 0);
  kf_rpc_client_close(c);
  c = client(t.target, BOOT, &evil);
  int rc = get_status(c, err, sizeof err);
  assert_int_not_equal(rc, 0);
  kf_rpc_client_close(c);
  c = client(t.target, BOOT, NULL); /* plaintext to the TLS port */
  assert_int_not_equal(get_status(c, err, sizeof err), 0);
  kf_rpc_client_close(c);
  tcoord_stop(&t);
  assert_false(log_has(&t, "without TLS"));

  /* Client certificates required. */
  kf_tcoord m = {0};
  const char *mtls_args[] = {"--tls-cert", f[1], "--tls-key", f[2],
                             "--tls-client-ca", f[0], NULL};
  assert_int_equal(
      tcoord_spawn(&m, g.dir, "mtls", BOOT, "127.0.0.1:0", mtls_args), 0);
  c = client(m.target, BOOT, &good); /* no client certificate */
  assert_int_not_equal(get_status(c, err, sizeof err), 0);
  kf_rpc_client_close(c);
  kf_rpc_tls wrong_cert = {.ca_file = f[0], .cert_file = evil_cert,
                           .key_file = evil_key};
  c = client(m.target, BOOT, &wrong_cert); /* signed by another CA */
  assert_int_not_equal(get_status(c, err, sizeof err), 0);
  kf_rpc_client_close(c);
  kf_rpc_tls with_cert = {.ca_file = f[0], .cert_file = f[4],
                          .key_file = f[5]};
  c = client(m.target, BOOT, &with_cert);
  assert_int_equal(get_status(c, err, sizeof err), 0);
  kf_rpc_client_close(c);
  tcoord_stop(&m);

  /* Plaintext on a public address: a warning; on loopback: none. */
  kf_tcoord p = {0};
  assert_int_equal(
      tcoord_spawn(&p, g.dir, "plain", BOOT, "0.0.0.0:0", NULL), 0);
  tcoord_stop(&p);
  assert_true(log_has(&p, "without TLS"));
  assert_false(log_has(&g.main, "without TLS"));
}

static void test_clean_exit(void **state) {
  (void)state;
  char err[256];
  kf_rpc_client *c = client(g.main.target, BOOT, NULL);
  assert_int_equal(get_status(c, err, sizeof err), 0);
  kf_rpc_client_close(c);
  tcoord_stop(&g.main);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_token_in_argv),
      cmocka_unit_test(test_roles),
      cmocka_unit_test(test_campaign_owner),
      cmocka_unit_test(test_forgery),
      cmocka_unit_test(test_revoke_and_create),
      cmocka_unit_test(test_revoke_long_poll),
      cmocka_unit_test(test_unauthenticated_body),
      cmocka_unit_test(test_unauthenticated_memory),
      cmocka_unit_test(test_oversized_memory),
      cmocka_unit_test(test_tls),
      cmocka_unit_test(test_clean_exit),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
