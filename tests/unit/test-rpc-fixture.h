/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-rpc-fixture.h -- a real rpc server on 127.0.0.1:0 for the
 * test-rpc-*.c files (included by each; not a test itself).
 *
 * Two shapes.  Threaded: the server's loop runs on its own thread, so the
 * test's main thread can block in the *_sync client calls; fx_stop stops
 * the server on that thread through an async handle.  Inline: the test
 * runs the loop itself (async client on the same loop) and stops the
 * server from a loop callback with fx_stop_inline.
 *
 * The methods (all on "/kernelfleet.Coordinator/"):
 *   Heartbeat    echoes `running` back as `revoked`.
 *   GetStatus    campaign_id n >= 0: queued = 2n at once; -1: fails with
 *                KF_ENOTFOUND; 1000+d: answers after d ms from a uv_timer
 *                (the long-poll shape; counted in late_answers once sent);
 *                -2: held in fx->held, unanswered.
 *   SubmitTasks  task_ids = 1..n_tasks.
 *   LeaseTasks   lease_ttl_ms = remaining ms of the call's deadline
 *                (UINT32_MAX for none); records the peer.
 * Every handler counts itself in fx->calls.
 */
#ifndef KF_TEST_RPC_FIXTURE_H
#define KF_TEST_RPC_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// cmocka after the headers it needs
#include <cmocka.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "rpc.h"
#include "token.h"

#define FX_TOKEN "s3cret-token"
#define FX_PATH(m) "/kernelfleet.Coordinator/" m
#define FX_MAX_HELD 256

typedef struct fx {
  uv_loop_t loop;
  uv_thread_t thread;
  bool threaded;
  uv_async_t stop;
  kf_rpc_server *srv;
  int port;
  char target[64];
  atomic_int calls;            /* handler invocations, any method */
  atomic_int late_answers;     /* GetStatus(1000+d) answers sent */
  kf_rpc_call *held[FX_MAX_HELD]; /* GetStatus(-2) calls; loop thread */
  int n_held;
  char peer[128];              /* the first LeaseTasks records it */
  void (*on_held)(struct fx *fx); /* called after a call is held */
} fx;

typedef struct {
  uv_timer_t timer;
  kf_rpc_call *call;
  int64_t n;
  fx *f;
} fx_later;

static inline void fx_later_closed(uv_handle_t *h) { free(h->data); }

static inline void fx_later_fire(uv_timer_t *t) {
  fx_later *l = t->data;
  Kernelfleet__GetStatusResponse r = KERNELFLEET__GET_STATUS_RESPONSE__INIT;
  r.queued = (uint64_t)l->n;
  kf_rpc_call_reply(l->call, &r.base);
  atomic_fetch_add(&l->f->late_answers, 1);
  uv_close((uv_handle_t *)t, fx_later_closed);
}

static inline void fx_heartbeat(kf_rpc_call *call, const ProtobufCMessage *req,
                         void *data) {
  fx *f = data;
  atomic_fetch_add(&f->calls, 1);
  const Kernelfleet__HeartbeatRequest *q = (const void *)req;
  Kernelfleet__HeartbeatResponse r = KERNELFLEET__HEARTBEAT_RESPONSE__INIT;
  r.n_revoked = q->n_running;
  r.revoked = q->running;
  r.reregister = q->worker_id == 42;
  kf_rpc_call_reply(call, &r.base);
}

static inline void fx_get_status(kf_rpc_call *call, const ProtobufCMessage *req,
                          void *data) {
  fx *f = data;
  atomic_fetch_add(&f->calls, 1);
  int64_t n = ((const Kernelfleet__GetStatusRequest *)req)->campaign_id;
  if (n == -1) {
    kf_rpc_call_fail(call, KF_ENOTFOUND, "no such campaign");
  } else if (n == -2) {
    assert_true(f->n_held < FX_MAX_HELD);
    f->held[f->n_held++] = call;
    if (f->on_held)
      f->on_held(f);
  } else if (n >= 1000) {
    fx_later *l = calloc(1, sizeof *l);
    assert_non_null(l);
    l->call = call;
    l->n = n;
    l->f = f;
    l->timer.data = l;
    assert_int_equal(uv_timer_init(&f->loop, &l->timer), 0);
    assert_int_equal(uv_timer_start(&l->timer, fx_later_fire,
                                    (uint64_t)(n - 1000), 0), 0);
  } else {
    Kernelfleet__GetStatusResponse r = KERNELFLEET__GET_STATUS_RESPONSE__INIT;
    r.queued = (uint64_t)n * 2;
    kf_rpc_call_reply(call, &r.base);
  }
}

static inline void fx_submit(kf_rpc_call *call, const ProtobufCMessage *req,
                      void *data) {
  fx *f = data;
  atomic_fetch_add(&f->calls, 1);
  const Kernelfleet__SubmitTasksRequest *q = (const void *)req;
  int64_t *ids = calloc(q->n_tasks + 1, sizeof *ids);
  assert_non_null(ids);
  for (size_t i = 0; i < q->n_tasks; i++)
    ids[i] = (int64_t)i + 1;
  Kernelfleet__SubmitTasksResponse r = KERNELFLEET__SUBMIT_TASKS_RESPONSE__INIT;
  r.n_task_ids = q->n_tasks;
  r.task_ids = ids;
  kf_rpc_call_reply(call, &r.base);
  free(ids);
}

static inline void fx_lease(kf_rpc_call *call, const ProtobufCMessage *req,
                     void *data) {
  fx *f = data;
  /* The first call records it, before counting: a test that loads calls
   * first may then read peer while later calls run (the reply's path
   * through gRPC orders them too, but ThreadSanitizer cannot see it). */
  if (!f->peer[0])
    snprintf(f->peer, sizeof f->peer, "%s", kf_rpc_call_peer(call));
  atomic_fetch_add(&f->calls, 1);
  int64_t ms = kf_rpc_call_remaining_ms(call);
  Kernelfleet__LeaseTasksResponse r = KERNELFLEET__LEASE_TASKS_RESPONSE__INIT;
  r.lease_ttl_ms = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
  kf_rpc_call_reply(call, &r.base);
}

static const kf_rpc_method fx_methods[] = {
    {FX_PATH("Heartbeat"), &kernelfleet__heartbeat_request__descriptor,
     fx_heartbeat, KF_ROLE_WORKER},
    {FX_PATH("GetStatus"), &kernelfleet__get_status_request__descriptor,
     fx_get_status, KF_ROLE_SUBMITTER},
    {FX_PATH("SubmitTasks"), &kernelfleet__submit_tasks_request__descriptor,
     fx_submit, KF_ROLE_SUBMITTER},
    {FX_PATH("LeaseTasks"), &kernelfleet__lease_tasks_request__descriptor,
     fx_lease, KF_ROLE_WORKER},
};

/* Stops the server on its loop thread and lets the loop run dry. */
static inline void fx_stop_cb(uv_async_t *h) {
  fx *f = h->data;
  kf_rpc_server_stop(f->srv);
  f->srv = NULL;
  uv_close((uv_handle_t *)h, NULL);
}

static inline void fx_thread(void *arg) {
  fx *f = arg;
  uv_run(&f->loop, UV_RUN_DEFAULT);
}

static inline void fx_start(fx *f, bool threaded, size_t max_msg_bytes) {
  memset(f, 0, sizeof *f);
  atomic_init(&f->calls, 0);
  atomic_init(&f->late_answers, 0);
  f->threaded = threaded;
  assert_int_equal(uv_loop_init(&f->loop), 0);
  if (threaded) {
    assert_int_equal(uv_async_init(&f->loop, &f->stop, fx_stop_cb), 0);
    f->stop.data = f;
  }
  kf_rpc_server_opts o = {
      .loop = &f->loop,
      .listen_addr = "127.0.0.1:0",
      .token = FX_TOKEN,
      .max_msg_bytes = max_msg_bytes,
      .methods = fx_methods,
      .n_methods = sizeof fx_methods / sizeof fx_methods[0],
      .data = f,
  };
  char err[256] = "";
  int rc = kf_rpc_server_start(&o, &f->srv, &f->port, err, sizeof err);
  if (rc)
    fail_msg("server start: %s", err);
  assert_true(f->port > 0);
  snprintf(f->target, sizeof f->target, "127.0.0.1:%d", f->port);
  /* Started here, before the thread exists: the thread creation orders it
   * before everything the loop thread does. */
  if (threaded)
    assert_int_equal(uv_thread_create(&f->thread, fx_thread, f), 0);
}

/* Threaded shape: stop from the main thread, join, prove the loop empty. */
static inline void fx_stop(fx *f) {
  assert_true(f->threaded);
  uv_async_send(&f->stop);
  assert_int_equal(uv_thread_join(&f->thread), 0);
  assert_int_equal(uv_loop_close(&f->loop), 0);
}

/* Inline shape: the test's own loop callback stops the server. */
static inline void fx_stop_inline(fx *f) {
  kf_rpc_server_stop(f->srv);
  f->srv = NULL;
}

/* Inline shape, after the test's uv_run returned: the loop must be empty
 * (every handle closed, including the server's async). */
static inline void fx_close_loop(fx *f) {
  uv_run(&f->loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&f->loop), 0);
}

static inline kf_rpc_client *fx_client(fx *f, uv_loop_t *loop, const char *token,
                                size_t max_msg_bytes) {
  kf_rpc_client *c = NULL;
  char err[256] = "";
  int rc = kf_rpc_client_open(loop, f->target, token, max_msg_bytes, &c, err,
                              sizeof err);
  if (rc)
    fail_msg("client open: %s", err);
  return c;
}

#endif
