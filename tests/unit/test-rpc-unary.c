/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-rpc-unary.c -- one call at a time through a real server
 * on loopback: round trips, long polls, refusals (token, malformed bytes,
 * size), deadlines, a dead server, and the status table.
 *
 * The server's loop runs on its own thread (fixture "threaded" shape) so
 * the main thread can use the blocking client.  Each test starts and stops
 * its own server and ends with an empty loop.
 */
#include "test-rpc-fixture.h"
#include "rpc_internal.h"
#include "util.h"

static const char *find(const char *hay, const char *needle) {
  return strstr(hay, needle);
}

static void test_round_trip(void **state) {
  fx f;
  fx_start(&f, true, 0);
  kf_rpc_client *c = fx_client(&f, NULL, FX_TOKEN, 0);
  char err[256];

  /* Heartbeat: repeated sub-messages go out and come back intact. */
  Kernelfleet__TaskRef r1 = KERNELFLEET__TASK_REF__INIT, r2 = r1;
  r1.task_id = 7;
  r1.attempt = 1;
  r2.task_id = 9000000000LL;
  r2.attempt = 3;
  Kernelfleet__TaskRef *refs[] = {&r1, &r2};
  Kernelfleet__HeartbeatRequest hb = KERNELFLEET__HEARTBEAT_REQUEST__INIT;
  hb.worker_id = 42;
  hb.n_running = 2;
  hb.running = refs;
  ProtobufCMessage *resp = NULL;
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("Heartbeat"), &hb.base,
                       &kernelfleet__heartbeat_response__descriptor, 5000,
                       &resp, err, sizeof err),
                   0);
  Kernelfleet__HeartbeatResponse *hr = (void *)resp;
  assert_true(hr->reregister);
  assert_int_equal(hr->n_revoked, 2);
  assert_int_equal(hr->revoked[1]->task_id, 9000000000LL);
  assert_int_equal(hr->revoked[1]->attempt, 3);
  kf_rpc_free(resp);

  /* GetStatus: a plain answer, then a handler failure with its text. */
  Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  gs.campaign_id = 21;
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 5000,
                       &resp, err, sizeof err),
                   0);
  assert_int_equal(((Kernelfleet__GetStatusResponse *)resp)->queued, 42);
  kf_rpc_free(resp);
  gs.campaign_id = -1;
  resp = (void *)1;
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 5000,
                       &resp, err, sizeof err),
                   KF_ENOTFOUND);
  assert_null(resp);
  assert_string_equal(err, "no such campaign");

  /* An all-default request packs to zero bytes: still a valid call. */
  Kernelfleet__SubmitTasksRequest st = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("SubmitTasks"), &st.base,
                       &kernelfleet__submit_tasks_response__descriptor, 5000,
                       &resp, err, sizeof err),
                   0);
  assert_int_equal(((Kernelfleet__SubmitTasksResponse *)resp)->n_task_ids, 0);
  kf_rpc_free(resp);

  /* Deadline and peer as the handler sees them. */
  Kernelfleet__LeaseTasksRequest lt = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("LeaseTasks"), &lt.base,
                       &kernelfleet__lease_tasks_response__descriptor, 5000,
                       &resp, err, sizeof err),
                   0);
  uint32_t ttl = ((Kernelfleet__LeaseTasksResponse *)resp)->lease_ttl_ms;
  /* the wire format rounds the timeout up a little */
  if (!(ttl > 3000 && ttl <= 5100))
    fail_msg("ttl %u", ttl);
  assert_true(atomic_load(&f.calls) > 0); /* orders the read of f.peer */
  assert_non_null(find(f.peer, "127.0.0.1:"));
  kf_rpc_free(resp);
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("LeaseTasks"), &lt.base,
                       &kernelfleet__lease_tasks_response__descriptor, 0,
                       &resp, err, sizeof err),
                   0);
  assert_int_equal(((Kernelfleet__LeaseTasksResponse *)resp)->lease_ttl_ms,
                   UINT32_MAX);
  kf_rpc_free(resp);

  /* Raw bytes with the client's token: the echo comes back as bytes. */
  uint8_t buf[64];
  size_t n = kernelfleet__heartbeat_request__pack(&hb, buf);
  void *out = NULL;
  size_t outlen = 0;
  assert_int_equal(kf_rpc_client_call_raw_sync(c, FX_PATH("Heartbeat"), buf,
                                               n, NULL, 5000, &out, &outlen,
                                               err, sizeof err),
                   0);
  hr = kernelfleet__heartbeat_response__unpack(NULL, outlen, out);
  assert_non_null(hr);
  assert_int_equal(hr->n_revoked, 2);
  kernelfleet__heartbeat_response__free_unpacked(hr, NULL);
  free(out);

  /* A method the server does not have. */
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("NoSuchMethod"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 5000,
                       &resp, err, sizeof err),
                   KF_EINTERNAL);

  assert_int_equal(atomic_load(&f.calls), 7);
  kf_rpc_client_close(c);
  fx_stop(&f);
}

static void test_long_poll(void **state) {
  fx f;
  fx_start(&f, true, 0);
  kf_rpc_client *c = fx_client(&f, NULL, FX_TOKEN, 0);
  char err[256];
  Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  gs.campaign_id = 1000 + 200; /* answered from a timer 200 ms later */
  ProtobufCMessage *resp = NULL;
  uint64_t t0 = kf_now_ms();
  /* a deadline no loaded machine reaches: the answer must wait, not race */
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 60000,
                       &resp, err, sizeof err),
                   0);
  uint64_t dt = kf_now_ms() - t0;
  assert_true(dt >= 190);
  assert_int_equal(((Kernelfleet__GetStatusResponse *)resp)->queued, 1200);
  kf_rpc_free(resp);
  kf_rpc_client_close(c);
  fx_stop(&f);
}

/* Roles and the credential table: each method's roles are enforced from
 * the metadata (the handler never runs for a refused call), the table can
 * be replaced while serving (revocation), and a token of the table is
 * accepted only while it is there. */
static int raw(kf_rpc_client *c, const char *path, const char *token,
               char *err, size_t errlen) {
  void *out = NULL;
  size_t outlen = 0;
  int rc = kf_rpc_client_call_raw_sync(c, path, "", 0, token, 5000, &out,
                                       &outlen, err, errlen);
  free(out);
  return rc;
}

static void test_roles(void **state) {
  (void)state;
  fx f;
  fx_start(&f, true, 0);
  kf_rpc_cred creds[2] = {{.role = KF_ROLE_WORKER, .id = 7},
                          {.role = KF_ROLE_SUBMITTER, .id = 8}};
  assert_int_equal(kf_token_hash("w-secret", 8, creds[0].hash), 0);
  assert_int_equal(kf_token_hash("s-secret", 8, creds[1].hash), 0);
  assert_int_equal(kf_rpc_server_set_creds(f.srv, creds, 2), 0);
  kf_rpc_client *c = fx_client(&f, NULL, FX_TOKEN, 0);
  char err[256];
  /* LeaseTasks and Heartbeat: worker; SubmitTasks, GetStatus: submitter. */
  assert_int_equal(raw(c, FX_PATH("LeaseTasks"), "w-secret", err, sizeof err),
                   0);
  assert_int_equal(atomic_load(&f.calls), 1);
  assert_int_equal(raw(c, FX_PATH("SubmitTasks"), "w-secret", err,
                       sizeof err),
                   KF_EPERM);
  assert_non_null(strstr(err, "a worker credential may not call SubmitTasks"));
  assert_int_equal(raw(c, FX_PATH("SubmitTasks"), "s-secret", err,
                       sizeof err),
                   0);
  assert_int_equal(raw(c, FX_PATH("LeaseTasks"), "s-secret", err, sizeof err),
                   KF_EPERM);
  assert_non_null(strstr(err, "submitter"));
  /* The bootstrap token is admin: everything. */
  assert_int_equal(raw(c, FX_PATH("LeaseTasks"), FX_TOKEN, err, sizeof err),
                   0);
  assert_int_equal(raw(c, FX_PATH("SubmitTasks"), FX_TOKEN, err, sizeof err),
                   0);
  assert_int_equal(raw(c, FX_PATH("SubmitTasks"), "x-secret", err,
                       sizeof err),
                   KF_EAUTH);
  assert_int_equal(atomic_load(&f.calls), 4);
  /* Revocation: a new table without the worker credential. */
  assert_int_equal(kf_rpc_server_set_creds(f.srv, creds + 1, 1), 0);
  assert_int_equal(raw(c, FX_PATH("LeaseTasks"), "w-secret", err, sizeof err),
                   KF_EAUTH);
  assert_int_equal(raw(c, FX_PATH("SubmitTasks"), "s-secret", err,
                       sizeof err),
                   0);
  assert_int_equal(atomic_load(&f.calls), 5);
  assert_true(kf_rpc_server_take_miss(f.srv));
  assert_false(kf_rpc_server_take_miss(f.srv));
  kf_rpc_client_close(c);
  fx_stop(&f);
}

static void test_auth(void **state) {
  fx f;
  fx_start(&f, true, 0);
  char err[256];
  ProtobufCMessage *resp = NULL;
  Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;

  kf_rpc_client *bad = fx_client(&f, NULL, "not-the-token", 0);
  assert_int_equal(kf_rpc_client_call_sync(
                       bad, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 5000,
                       &resp, err, sizeof err),
                   KF_EAUTH);
  assert_null(resp);
  kf_rpc_client_close(bad);

  /* A token that is a prefix of the real one, and no token at all. */
  kf_rpc_client *c = fx_client(&f, NULL, FX_TOKEN, 0);
  void *out = NULL;
  size_t outlen = 0;
  assert_int_equal(kf_rpc_client_call_raw_sync(c, FX_PATH("GetStatus"), "", 0,
                                               "s3cret", 5000, &out, &outlen,
                                               err, sizeof err),
                   KF_EAUTH);
  assert_int_equal(kf_rpc_client_call_raw_sync(c, FX_PATH("GetStatus"), "", 0,
                                               "", 5000, &out, &outlen, err,
                                               sizeof err),
                   KF_EAUTH);
  assert_null(out);
  assert_int_equal(atomic_load(&f.calls), 0);

  /* The right token through the same raw path does reach the handler. */
  assert_int_equal(kf_rpc_client_call_raw_sync(c, FX_PATH("GetStatus"), "", 0,
                                               FX_TOKEN, 5000, &out, &outlen,
                                               err, sizeof err),
                   0);
  assert_non_null(out);
  assert_int_equal(outlen, 0); /* queued = 0: an empty message */
  free(out);
  assert_int_equal(atomic_load(&f.calls), 1);
  kf_rpc_client_close(c);
  fx_stop(&f);
}

static void test_malformed(void **state) {
  fx f;
  fx_start(&f, true, 0);
  kf_rpc_client *c = fx_client(&f, NULL, FX_TOKEN, 0);
  char err[256];
  void *out = NULL;
  size_t outlen = 0;
  /* Field 1 as a length-delimited field running past the end. */
  static const uint8_t junk[] = {0x0a, 0x7f, 0x01, 0x02};
  assert_int_equal(kf_rpc_client_call_raw_sync(c, FX_PATH("Heartbeat"), junk,
                                               sizeof junk, NULL, 5000, &out,
                                               &outlen, err, sizeof err),
                   KF_EPROTO);
  assert_non_null(find(err, "malformed"));
  assert_non_null(find(err, "HeartbeatRequest"));
  /* A varint that never ends. */
  static const uint8_t junk2[] = {0x08, 0xff, 0xff, 0xff};
  assert_int_equal(kf_rpc_client_call_raw_sync(c, FX_PATH("GetStatus"), junk2,
                                               sizeof junk2, NULL, 5000, &out,
                                               &outlen, err, sizeof err),
                   KF_EPROTO);
  assert_null(out);
  assert_int_equal(atomic_load(&f.calls), 0);

  /* A response that is not the type the caller expects. */
  Kernelfleet__HeartbeatRequest hb = KERNELFLEET__HEARTBEAT_REQUEST__INIT;
  Kernelfleet__TaskRef r = KERNELFLEET__TASK_REF__INIT;
  r.task_id = 5;
  Kernelfleet__TaskRef *refs[] = {&r};
  hb.n_running = 1;
  hb.running = refs;
  ProtobufCMessage *resp = NULL;
  /* HeartbeatResponse field 1 (a message) read as RegisterWorkerResponse
   * field 1 (an int64): a wire-type mismatch protobuf-c rejects. */
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("Heartbeat"), &hb.base,
                       &kernelfleet__register_worker_response__descriptor,
                       5000, &resp, err, sizeof err),
                   KF_EPROTO);
  assert_null(resp);
  kf_rpc_client_close(c);
  fx_stop(&f);
}

static void test_too_big(void **state) {
  fx f;
  fx_start(&f, true, 1024);
  kf_rpc_client *c = fx_client(&f, NULL, FX_TOKEN, 0); /* 4 MiB */
  char err[256];
  uint8_t payload[4096];
  memset(payload, 'x', sizeof payload);
  Kernelfleet__TaskSpec spec = KERNELFLEET__TASK_SPEC__INIT;
  spec.kind = "checksum";
  spec.payload.data = payload;
  spec.payload.len = sizeof payload;
  Kernelfleet__TaskSpec *specs[] = {&spec};
  Kernelfleet__SubmitTasksRequest st = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  st.n_tasks = 1;
  st.tasks = specs;
  ProtobufCMessage *resp = NULL;
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("SubmitTasks"), &st.base,
                       &kernelfleet__submit_tasks_response__descriptor, 5000,
                       &resp, err, sizeof err),
                   KF_ETOOBIG);
  assert_int_equal(atomic_load(&f.calls), 0);

  /* The same call, small enough, goes through. */
  spec.payload.len = 100;
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("SubmitTasks"), &st.base,
                       &kernelfleet__submit_tasks_response__descriptor, 5000,
                       &resp, err, sizeof err),
                   0);
  assert_int_equal(((Kernelfleet__SubmitTasksResponse *)resp)->n_task_ids, 1);
  kf_rpc_free(resp);
  kf_rpc_client_close(c);

  /* A client whose own limit is smaller refuses to send. */
  kf_rpc_client *small = fx_client(&f, NULL, FX_TOKEN, 512);
  spec.payload.len = 600;
  assert_int_equal(kf_rpc_client_call_sync(
                       small, FX_PATH("SubmitTasks"), &st.base,
                       &kernelfleet__submit_tasks_response__descriptor, 5000,
                       &resp, err, sizeof err),
                   KF_ETOOBIG);
  kf_rpc_client_close(small);
  assert_int_equal(atomic_load(&f.calls), 1);
  fx_stop(&f);
}

static void test_deadline(void **state) {
  fx f;
  fx_start(&f, true, 0);
  kf_rpc_client *c = fx_client(&f, NULL, FX_TOKEN, 0);
  char err[256];
  Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  /* The handler answers 10 s later.  The deadline was enforced when the
   * call ends DEADLINE_EXCEEDED before that answer was sent: an ordering
   * fact read from the server's side (late_answers), not a bound on how
   * fast a loaded machine runs the test thread again.  Without the 100 ms
   * deadline the call would end OK with the answer, 10 s later. */
  gs.campaign_id = 1000 + 10000;
  ProtobufCMessage *resp = NULL;
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 100,
                       &resp, err, sizeof err),
                   KF_ETIMEDOUT);
  assert_int_equal(atomic_load(&f.late_answers), 0);
  assert_null(resp);
  kf_rpc_client_close(c);
  /* Stop while the timer still holds the call: the late answer after stop
   * only frees it, and the loop thread runs dry once the timer is gone. */
  fx_stop(&f);
}

static void test_unavailable(void **state) {
  kf_rpc_client *c = NULL;
  char err[256];
  /* Port 1 on loopback: nothing listens, the connect is refused. */
  assert_int_equal(kf_rpc_client_open(NULL, "127.0.0.1:1", FX_TOKEN, 0, &c,
                                      err, sizeof err),
                   0);
  Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  ProtobufCMessage *resp = NULL;
  assert_int_equal(kf_rpc_client_call_sync(
                       c, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 5000,
                       &resp, err, sizeof err),
                   KF_EUNAVAIL);
  kf_rpc_client_close(c);
}

static void test_bad_args(void **state) {
  uv_loop_t loop;
  assert_int_equal(uv_loop_init(&loop), 0);
  kf_rpc_server *srv = NULL;
  int port = 0;
  char err[256];
  kf_rpc_server_opts o = {.loop = &loop, .listen_addr = "127.0.0.1:0",
                          .token = "", .methods = fx_methods, .n_methods = 1};
  assert_int_equal(kf_rpc_server_start(&o, &srv, &port, err, sizeof err),
                   KF_EINVAL);
  o.token = FX_TOKEN;
  o.listen_addr = "256.0.0.1:bad";
  assert_int_equal(kf_rpc_server_start(&o, &srv, &port, err, sizeof err),
                   KF_EIO);
  assert_null(srv);
  kf_rpc_server_stop(NULL);
  kf_rpc_client_close(NULL);
  kf_rpc_free(NULL);
  uv_run(&loop, UV_RUN_DEFAULT); /* finishes the failed start's close */
  assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_status_table(void **state) {
  assert_int_equal(kf_rpc_err_to_status(0), 0);
  assert_int_equal(kf_rpc_status_to_err(0), 0);
  struct {
    int kf, st, back;
  } t[] = {
      {KF_EINVAL, 3, KF_EPROTO},      {KF_EPROTO, 3, KF_EPROTO},
      {KF_EAUTH, 16, KF_EAUTH},       {KF_EPERM, 7, KF_EPERM},
      {KF_ENOTFOUND, 5, KF_ENOTFOUND}, {KF_ETOOBIG, 8, KF_ETOOBIG},
      {KF_EUNAVAIL, 14, KF_EUNAVAIL}, {KF_ETIMEDOUT, 4, KF_ETIMEDOUT},
      {KF_ECANCELED, 1, KF_ECANCELED}, {KF_ESTALE, 9, KF_ESTATE},
      {KF_ESTATE, 9, KF_ESTATE},
      {KF_EEXIST, 6, KF_EEXIST},      {KF_EDB, 14, KF_EUNAVAIL},
      {KF_ENOMEM, 13, KF_EINTERNAL},  {KF_EIO, 13, KF_EINTERNAL},
      {KF_ESPAWN, 13, KF_EINTERNAL},  {KF_ESPEC, 13, KF_EINTERNAL},
      {KF_EINTERNAL, 13, KF_EINTERNAL}, {-999, 13, KF_EINTERNAL},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    assert_int_equal(kf_rpc_err_to_status(t[i].kf), t[i].st);
    assert_int_equal(kf_rpc_status_to_err(kf_rpc_err_to_status(t[i].kf)),
                     t[i].back);
  }
  /* Every gRPC status, including unknown ones, maps to some KF error. */
  for (int st = 1; st <= 20; st++)
    assert_true(kf_rpc_status_to_err(st) < 0);
  /* RESOURCE_EXHAUSTED: retry later for a cap and for the transport's
   * memory-quota reset (its text as gRPC 1.51's client reports it);
   * never for a message too large. */
  static const struct {
    const char *details;
    int rc;
  } ex[] = {
      {"busy: 512 calls in flight from this host", KF_EBUSY},
      {"Received RST_STREAM with error code 11", KF_EBUSY},
      {"request of 11983492 bytes is over the 81984-byte limit of "
       "/kernelfleet.Coordinator/Heartbeat", KF_ETOOBIG},
      {"Received message larger than max (20000000 vs. 16777216)",
       KF_ETOOBIG},
      {"", KF_ETOOBIG},
  };
  for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++)
    assert_int_equal(kf_rpc__exhausted_err(ex[i].details,
                                           strlen(ex[i].details)),
                     ex[i].rc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_table),
      cmocka_unit_test(test_bad_args),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_long_poll),
      cmocka_unit_test(test_auth),
      cmocka_unit_test(test_roles),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_too_big),
      cmocka_unit_test(test_deadline),
      cmocka_unit_test(test_unavailable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
