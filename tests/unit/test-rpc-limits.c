/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-rpc-limits.c -- the rpc server's caps on calls in
 * flight (per peer host and in total) and on one method's request size.
 *
 * A real server on 127.0.0.1 (the rpc fixture's methods) whose handler
 * holds GetStatus(-2) calls unanswered: holder threads block in sync
 * calls until the test releases them.  With the cap's worth of calls held,
 * one more call must come back RESOURCE_EXHAUSTED, read as KF_EBUSY (retry
 * later; not KF_ETOOBIG, which a worker treats as final) naming the cap, without reaching a handler; once the held calls are answered, the
 * same call succeeds (the count went back down).  A Heartbeat over its
 * method's byte limit is refused the same way before it is unpacked.
 * Waits are on conditions (the handler's call counter), never on time.
 */
#include <pthread.h>
#include <time.h>

#include "rpc_limits.h"
#include "test-rpc-fixture.h"

typedef struct {
  fx f;
  uv_async_t release; /* answers every held call, on the loop thread */
} lfx;

static void release_cb(uv_async_t *h) {
  fx *f = h->data;
  for (int i = 0; i < f->n_held; i++) {
    Kernelfleet__GetStatusResponse r = KERNELFLEET__GET_STATUS_RESPONSE__INIT;
    r.queued = 7;
    kf_rpc_call_reply(f->held[i], &r.base);
  }
  f->n_held = 0;
}

/* The stop path: answer anything held, stop the server, close both
 * handles so the loop runs dry and fx_stop can prove it empty. */
static void lfx_stop_cb(uv_async_t *h) {
  lfx *l = h->data;
  release_cb(&l->release);
  kf_rpc_server_stop(l->f.srv);
  l->f.srv = NULL;
  uv_close((uv_handle_t *)&l->release, NULL);
  uv_close((uv_handle_t *)h, NULL);
}

/* Like fx_start (threaded), with caps; Heartbeat takes at most hb_bytes. */
static void lfx_start(lfx *l, uint32_t max_calls, uint32_t per_peer,
                      size_t hb_bytes) {
  fx *f = &l->f;
  memset(l, 0, sizeof *l);
  atomic_init(&f->calls, 0);
  f->threaded = true;
  assert_int_equal(uv_loop_init(&f->loop), 0);
  assert_int_equal(uv_async_init(&f->loop, &f->stop, lfx_stop_cb), 0);
  f->stop.data = l;
  assert_int_equal(uv_async_init(&f->loop, &l->release, release_cb), 0);
  l->release.data = f;
  size_t n = sizeof fx_methods / sizeof fx_methods[0];
  size_t limits[8] = {0};
  assert_true(n <= 8);
  limits[0] = hb_bytes; /* fx_methods[0] is Heartbeat */
  kf_rpc_server_opts o = {
      .loop = &f->loop,
      .listen_addr = "127.0.0.1:0",
      .token = FX_TOKEN,
      .methods = fx_methods,
      .n_methods = n,
      .max_calls = max_calls,
      .max_calls_per_peer = per_peer,
      .max_request_bytes = limits,
      .data = f,
  };
  char err[256] = "";
  if (kf_rpc_server_start(&o, &f->srv, &f->port, err, sizeof err))
    fail_msg("server start: %s", err);
  snprintf(f->target, sizeof f->target, "127.0.0.1:%d", f->port);
  assert_int_equal(uv_thread_create(&f->thread, fx_thread, f), 0);
}

static void lfx_stop(lfx *l) { fx_stop(&l->f); }

typedef struct {
  kf_rpc_client *c;
  int64_t campaign_id;
  int rc;
  char err[256];
  uint64_t queued;
} holder;

static void *hold_main(void *arg) {
  holder *h = arg;
  Kernelfleet__GetStatusRequest q = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  q.campaign_id = h->campaign_id;
  ProtobufCMessage *resp = NULL;
  h->rc = kf_rpc_client_call_sync(h->c, FX_PATH("GetStatus"), &q.base,
                                  &kernelfleet__get_status_response__descriptor,
                                  120000, &resp, h->err, sizeof h->err);
  if (resp) h->queued = ((Kernelfleet__GetStatusResponse *)resp)->queued;
  kf_rpc_free(resp);
  return NULL;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Starts n holder threads and waits (generously) until the handler holds
 * all of them. */
static void hold(lfx *l, kf_rpc_client *c, holder *hs, pthread_t *ts, int n) {
  int before = atomic_load(&l->f.calls);
  for (int i = 0; i < n; i++) {
    hs[i] = (holder){.c = c, .campaign_id = -2};
    assert_int_equal(pthread_create(&ts[i], NULL, hold_main, &hs[i]), 0);
  }
  for (int i = 0; i < 6000 && atomic_load(&l->f.calls) < before + n; i++)
    sleep_ms(10);
  assert_int_equal(atomic_load(&l->f.calls), before + n);
}

static void unhold(lfx *l, holder *hs, pthread_t *ts, int n) {
  uv_async_send(&l->release);
  for (int i = 0; i < n; i++) {
    assert_int_equal(pthread_join(ts[i], NULL), 0);
    if (hs[i].rc) fail_msg("held call %d: %d %s", i, hs[i].rc, hs[i].err);
    assert_int_equal(hs[i].queued, 7);
  }
}

/* One quick call: GetStatus(1).  Returns its status, text in err. */
static int quick(kf_rpc_client *c, char *err, size_t errlen) {
  Kernelfleet__GetStatusRequest q = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  q.campaign_id = 1;
  ProtobufCMessage *resp = NULL;
  int rc = kf_rpc_client_call_sync(c, FX_PATH("GetStatus"), &q.base,
                                   &kernelfleet__get_status_response__descriptor,
                                   60000, &resp, err, errlen);
  kf_rpc_free(resp);
  return rc;
}

static void per_peer_cap(void **state) {
  (void)state;
  lfx l;
  lfx_start(&l, 0, 3, 0);
  /* Two channels: the cap is per host, not per connection. */
  kf_rpc_client *a = fx_client(&l.f, NULL, FX_TOKEN, 0);
  kf_rpc_client *b = fx_client(&l.f, NULL, FX_TOKEN, 0);
  holder hs[3];
  pthread_t ts[3];
  hold(&l, a, hs, ts, 2);
  hold(&l, b, hs + 2, ts + 2, 1);
  int calls = atomic_load(&l.f.calls);
  char err[256] = "";
  assert_int_equal(quick(b, err, sizeof err), KF_EBUSY);
  assert_non_null(strstr(err, "per-peer cap"));
  assert_non_null(strstr(err, "127.0.0.1"));
  assert_int_equal(quick(a, err, sizeof err), KF_EBUSY);
  assert_int_equal(atomic_load(&l.f.calls), calls); /* no handler ran */
  unhold(&l, hs, ts, 3);
  /* Answered calls no longer count: the cap's worth again, then more. */
  err[0] = '\0';
  if (quick(a, err, sizeof err)) fail_msg("after release: %s", err);
  hold(&l, a, hs, ts, 3);
  assert_int_equal(quick(a, err, sizeof err), KF_EBUSY);
  unhold(&l, hs, ts, 3);
  kf_rpc_client_close(a);
  kf_rpc_client_close(b);
  lfx_stop(&l);
}

static void total_cap(void **state) {
  (void)state;
  lfx l;
  lfx_start(&l, 2, 0, 0);
  kf_rpc_client *c = fx_client(&l.f, NULL, FX_TOKEN, 0);
  holder hs[2];
  pthread_t ts[2];
  hold(&l, c, hs, ts, 2);
  char err[256] = "";
  assert_int_equal(quick(c, err, sizeof err), KF_EBUSY);
  assert_non_null(strstr(err, "total cap"));
  /* A wrong token is still told so: the caps count only callers who
   * passed the door. */
  kf_rpc_client *bad = fx_client(&l.f, NULL, "wrong", 0);
  assert_int_equal(quick(bad, err, sizeof err), KF_EAUTH);
  kf_rpc_client_close(bad);
  unhold(&l, hs, ts, 2);
  if (quick(c, err, sizeof err)) fail_msg("after release: %s", err);
  kf_rpc_client_close(c);
  lfx_stop(&l);
}

static int heartbeat(kf_rpc_client *c, size_t n, char *err, size_t errlen) {
  Kernelfleet__TaskRef *refs = calloc(n + 1, sizeof *refs);
  Kernelfleet__TaskRef **pr = calloc(n + 1, sizeof *pr);
  assert_true(refs && pr);
  for (size_t i = 0; i < n; i++) {
    kernelfleet__task_ref__init(&refs[i]);
    refs[i].task_id = 1000000 + (int64_t)i;
    refs[i].attempt = 1;
    pr[i] = &refs[i];
  }
  Kernelfleet__HeartbeatRequest q = KERNELFLEET__HEARTBEAT_REQUEST__INIT;
  q.worker_id = 1;
  q.n_running = n;
  q.running = pr;
  ProtobufCMessage *resp = NULL;
  int rc = kf_rpc_client_call_sync(c, FX_PATH("Heartbeat"), &q.base,
                                   &kernelfleet__heartbeat_response__descriptor,
                                   60000, &resp, err, errlen);
  kf_rpc_free(resp);
  free(refs);
  free(pr);
  return rc;
}

static void method_bytes(void **state) {
  (void)state;
  lfx l;
  lfx_start(&l, 0, 0, 1024);
  kf_rpc_client *c = fx_client(&l.f, NULL, FX_TOKEN, 0);
  char err[256] = "";
  if (heartbeat(c, 10, err, sizeof err)) fail_msg("small heartbeat: %s", err);
  int calls = atomic_load(&l.f.calls);
  assert_int_equal(heartbeat(c, 500, err, sizeof err), KF_ETOOBIG);
  assert_non_null(strstr(err, "1024-byte limit"));
  assert_non_null(strstr(err, "Heartbeat"));
  assert_int_equal(atomic_load(&l.f.calls), calls);
  /* Other methods keep the server's limit. */
  if (quick(c, err, sizeof err)) fail_msg("GetStatus: %s", err);
  kf_rpc_client_close(c);
  lfx_stop(&l);
}

static void peer_keys(void **state) {
  (void)state;
  char k[KF_RPC_PEER_KEY];
  kf_rpc_limits_peer_key("ipv4:127.0.0.1:5555", k);
  assert_string_equal(k, "127.0.0.1");
  kf_rpc_limits_peer_key("ipv6:[::1]:443", k);
  assert_string_equal(k, "[::1]");
  kf_rpc_limits_peer_key("unix:/tmp/s", k);
  assert_string_equal(k, "unix:/tmp/s");
  kf_rpc_limits_peer_key(NULL, k);
  assert_string_equal(k, "");
  kf_rpc_limits *l = NULL;
  assert_int_equal(kf_rpc_limits_new(3, 2, &l), 0);
  char why[160];
  assert_int_equal(kf_rpc_limits_admit(l, "a", why, sizeof why), 0);
  assert_int_equal(kf_rpc_limits_admit(l, "a", why, sizeof why), 0);
  assert_int_equal(kf_rpc_limits_admit(l, "a", why, sizeof why), KF_EBUSY);
  assert_int_equal(kf_rpc_limits_admit(l, "b", why, sizeof why), 0);
  assert_int_equal(kf_rpc_limits_admit(l, "c", why, sizeof why), KF_EBUSY);
  assert_non_null(strstr(why, "total cap"));
  assert_int_equal(kf_rpc_limits_in_flight(l, NULL), 3);
  kf_rpc_limits_release(l, "a");
  assert_int_equal(kf_rpc_limits_in_flight(l, "a"), 1);
  assert_int_equal(kf_rpc_limits_admit(l, "c", why, sizeof why), 0);
  kf_rpc_limits_release(l, "a");
  kf_rpc_limits_release(l, "b");
  kf_rpc_limits_release(l, "c");
  assert_int_equal(kf_rpc_limits_in_flight(l, NULL), 0);
  kf_rpc_limits_free(l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(peer_keys),
      cmocka_unit_test(per_peer_cap),
      cmocka_unit_test(total_cap),
      cmocka_unit_test(method_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
