/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-rpc-async.c -- the async client and the server on one
 * loop: many concurrent calls, errors through callbacks, closing a client
 * with calls in flight, and stopping a server that still holds calls or is
 * stopped from inside a handler.
 *
 * Everything runs on the test's loop (fixture "inline" shape); each test
 * ends by running the loop dry and closing it, which fails if any handle
 * was left open, and LSan checks that nothing leaked.
 */
#include "test-rpc-fixture.h"
#include "util.h"

typedef struct {
  fx *f;
  kf_rpc_client *c;
  int n;             /* calls started */
  int done;          /* callbacks run */
  int ok, failed;
  unsigned char *seen; /* per call: callbacks run for it */
  int last_status;
  char last_detail[128];
  uv_timer_t timer;
} ctx;

typedef struct {
  ctx *x;
  int i;
} slot;

/* ---------------------------------------------------- many at once -- */

static slot *slots;

static void many_done(int status, const char *detail,
                      const ProtobufCMessage *resp, void *data) {
  slot *s = data;
  ctx *x = s->x;
  assert_non_null(detail);
  if (status != 0)
    fail_msg("call %d: %s (%s)", s->i, kf_err_name(status), detail);
  assert_int_equal(((const Kernelfleet__GetStatusResponse *)resp)->queued,
                   (uint64_t)(s->i % 1000) * 2);
  x->seen[s->i]++;
  if (++x->done == x->n) {
    kf_rpc_client_close(x->c);
    fx_stop_inline(x->f);
  }
}

static void test_many(void **state) {
  fx f;
  fx_start(&f, false, 0);
  ctx x = {.f = &f, .n = 2000};
  x.c = fx_client(&f, &f.loop, FX_TOKEN, 0);
  x.seen = calloc((size_t)x.n, 1);
  slots = calloc((size_t)x.n, sizeof *slots);
  assert_non_null(x.seen);
  assert_non_null(slots);
  uint64_t t0 = kf_now_us();
  for (int i = 0; i < x.n; i++) {
    Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;
    gs.campaign_id = i % 1000; /* 1000 and up mean "answer later" */
    slots[i] = (slot){&x, i};
    assert_int_equal(kf_rpc_client_call(
                         x.c, FX_PATH("GetStatus"), &gs.base,
                         &kernelfleet__get_status_response__descriptor, 20000,
                         many_done, &slots[i]),
                     0);
  }
  uv_run(&f.loop, UV_RUN_DEFAULT);
  uint64_t dt = kf_now_us() - t0;
  print_message("%d calls in %.1f ms (%.0f calls/s)\n", x.n, dt / 1000.0,
                x.n * 1e6 / (double)(dt ? dt : 1));
  assert_int_equal(x.done, x.n);
  assert_int_equal(atomic_load(&f.calls), x.n);
  for (int i = 0; i < x.n; i++)
    assert_int_equal(x.seen[i], 1);
  free(x.seen);
  free(slots);
  fx_close_loop(&f);
}

/* --------------------------------------------------------- errors -- */

static void err_done(int status, const char *detail,
                     const ProtobufCMessage *resp, void *data) {
  ctx *x = data;
  assert_null(resp);
  x->last_status = status;
  snprintf(x->last_detail, sizeof x->last_detail, "%s", detail);
  x->done++;
}

static void test_async_errors(void **state) {
  fx f;
  fx_start(&f, false, 0);
  ctx x = {.f = &f};
  Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;

  x.c = fx_client(&f, &f.loop, "wrong", 0);
  assert_int_equal(kf_rpc_client_call(
                       x.c, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 5000,
                       err_done, &x),
                   0);
  while (x.done < 1)
    uv_run(&f.loop, UV_RUN_ONCE);
  assert_int_equal(x.last_status, KF_EAUTH);
  assert_int_equal(atomic_load(&f.calls), 0);
  kf_rpc_client_close(x.c);

  x.c = fx_client(&f, &f.loop, FX_TOKEN, 0);
  gs.campaign_id = -1;
  assert_int_equal(kf_rpc_client_call(
                       x.c, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 5000,
                       err_done, &x),
                   0);
  while (x.done < 2)
    uv_run(&f.loop, UV_RUN_ONCE);
  assert_int_equal(x.last_status, KF_ENOTFOUND);
  assert_string_equal(x.last_detail, "no such campaign");
  /* Sent only now: on a loaded machine the first call can take longer
   * than this one's 50 ms, and their answers would come the other way
   * round. */
  gs.campaign_id = 1000 + 2000; /* answered after the deadline */
  assert_int_equal(kf_rpc_client_call(
                       x.c, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 50,
                       err_done, &x),
                   0);
  while (x.done < 3)
    uv_run(&f.loop, UV_RUN_ONCE);
  assert_int_equal(x.last_status, KF_ETIMEDOUT);

  /* Argument checks fail up front and never call back. */
  assert_int_equal(kf_rpc_client_call(x.c, FX_PATH("GetStatus"), &gs.base,
                                      NULL, 50, err_done, &x),
                   KF_EINVAL);
  kf_rpc_client *sync_only = fx_client(&f, NULL, FX_TOKEN, 0);
  assert_int_equal(kf_rpc_client_call(
                       sync_only, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 50,
                       err_done, &x),
                   KF_EINVAL);
  kf_rpc_client_close(sync_only);
  kf_rpc_client_close(x.c);
  /* The long-poll timer still holds its call: stop orphans it and its late
   * answer frees it while the loop runs dry. */
  fx_stop_inline(&f);
  fx_close_loop(&f);
  assert_int_equal(x.done, 3);
}

/* ------------------------------------------- client close in flight -- */

static int cancel_seen;

static void cancel_done(int status, const char *detail,
                        const ProtobufCMessage *resp, void *data) {
  assert_int_equal(status, KF_ECANCELED);
  assert_null(resp);
  ctx *x = data;
  /* Starting a call on a closing client fails without a callback. */
  Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  assert_int_equal(kf_rpc_client_call(
                       x->c, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 50,
                       cancel_done, x),
                   KF_ECANCELED);
  kf_rpc_client_close(x->c); /* nested close: ignored */
  cancel_seen++;
}

static ctx *cancel_ctx;

static void cancel_on_held(fx *f) {
  ctx *x = cancel_ctx;
  if (f->n_held < x->n)
    return;
  /* Every call reached the handler and is held: close the client now.
   * All callbacks must have run by the time close returns. */
  kf_rpc_client_close(x->c);
  assert_int_equal(cancel_seen, x->n);
  /* The server answers into cancelled calls: harmless, and frees them. */
  Kernelfleet__GetStatusResponse r = KERNELFLEET__GET_STATUS_RESPONSE__INIT;
  for (int i = 0; i < f->n_held; i++)
    kf_rpc_call_reply(f->held[i], &r.base);
  f->n_held = 0;
  fx_stop_inline(f);
}

static void test_client_close_cancels(void **state) {
  fx f;
  fx_start(&f, false, 0);
  ctx x = {.f = &f, .n = 5};
  cancel_ctx = &x;
  cancel_seen = 0;
  f.on_held = cancel_on_held;
  x.c = fx_client(&f, &f.loop, FX_TOKEN, 0);
  Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  gs.campaign_id = -2; /* held by the server */
  for (int i = 0; i < x.n; i++)
    assert_int_equal(kf_rpc_client_call(
                         x.c, FX_PATH("GetStatus"), &gs.base,
                         &kernelfleet__get_status_response__descriptor, 20000,
                         cancel_done, &x),
                     0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  assert_int_equal(cancel_seen, x.n);
  fx_close_loop(&f);
}

/* ------------------------------------- server stop with held calls -- */

static void held_done(int status, const char *detail,
                      const ProtobufCMessage *resp, void *data) {
  ctx *x = data;
  assert_null(resp);
  /* The server went away under the call: some error, never success. */
  if (status == 0)
    fail_msg("held call succeeded after stop");
  x->failed++;
  if (++x->done == x->n)
    kf_rpc_client_close(x->c);
}

static void held_stop_timer(uv_timer_t *t) {
  ctx *x = t->data;
  fx *f = x->f;
  kf_rpc_call *held[FX_MAX_HELD];
  int n = f->n_held;
  memcpy(held, f->held, sizeof held[0] * (size_t)n);
  f->n_held = 0;
  assert_true(kf_rpc_call_remaining_ms(held[0]) > 0);
  assert_non_null(strstr(kf_rpc_call_peer(held[0]), "127.0.0.1:"));
  fx_stop_inline(f);
  /* After stop the accessors still answer (the peer was cached above),
   * and answers only free the calls. */
  assert_true(kf_rpc_call_remaining_ms(held[0]) > 0);
  assert_non_null(kf_rpc_call_peer(held[1]));
  Kernelfleet__GetStatusResponse r = KERNELFLEET__GET_STATUS_RESPONSE__INIT;
  for (int i = 0; i < n; i++) {
    if (i % 2)
      kf_rpc_call_reply(held[i], &r.base);
    else
      kf_rpc_call_fail(held[i], KF_EUNAVAIL, "shutting down");
  }
  uv_close((uv_handle_t *)t, NULL);
}

static ctx *held_ctx;

static void held_on_held(fx *f) {
  ctx *x = held_ctx;
  if (f->n_held == x->n)
    assert_int_equal(uv_timer_start(&x->timer, held_stop_timer, 20, 0), 0);
}

static void test_stop_with_held_calls(void **state) {
  fx f;
  fx_start(&f, false, 0);
  ctx x = {.f = &f, .n = 3};
  held_ctx = &x;
  f.on_held = held_on_held;
  assert_int_equal(uv_timer_init(&f.loop, &x.timer), 0);
  x.timer.data = &x;
  x.c = fx_client(&f, &f.loop, FX_TOKEN, 0);
  Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  gs.campaign_id = -2;
  for (int i = 0; i < x.n; i++)
    assert_int_equal(kf_rpc_client_call(
                         x.c, FX_PATH("GetStatus"), &gs.base,
                         &kernelfleet__get_status_response__descriptor, 20000,
                         held_done, &x),
                     0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  assert_int_equal(x.failed, x.n);
  fx_close_loop(&f);
}

/* ---------------------------------------- stop from inside a handler -- */

static ctx *inner_ctx;

static void inner_on_held(fx *f) {
  if (f->n_held != 1)
    return;
  /* Stop from inside the handler, with more calls likely queued behind
   * this one in the same wakeup: stop must free those, and the dispatch
   * loop must not touch the server again. */
  kf_rpc_call *held = f->held[0];
  f->n_held = 0;
  fx_stop_inline(f);
  kf_rpc_call_fail(held, KF_EUNAVAIL, "stopped");
}

static void inner_done(int status, const char *detail,
                       const ProtobufCMessage *resp, void *data) {
  ctx *x = data;
  if (status == 0)
    fail_msg("call succeeded on a stopped server");
  if (++x->done == x->n)
    kf_rpc_client_close(x->c);
}

static void test_stop_from_handler(void **state) {
  fx f;
  fx_start(&f, false, 0);
  ctx x = {.f = &f, .n = 200};
  inner_ctx = &x;
  f.on_held = inner_on_held;
  x.c = fx_client(&f, &f.loop, FX_TOKEN, 0);
  Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  gs.campaign_id = -2;
  for (int i = 0; i < x.n; i++)
    assert_int_equal(kf_rpc_client_call(
                         x.c, FX_PATH("GetStatus"), &gs.base,
                         &kernelfleet__get_status_response__descriptor, 20000,
                         inner_done, &x),
                     0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  assert_int_equal(x.done, x.n);
  assert_null(f.srv);
  fx_close_loop(&f);
}

/* ------------------------------------- client closed from callback -- */

static void close_in_cb_done(int status, const char *detail,
                             const ProtobufCMessage *resp, void *data) {
  ctx *x = data;
  x->done++;
  if (x->done == 1) {
    /* First answer: close at once; the rest of this wakeup's batch and
     * everything still in flight get KF_ECANCELED inside this close. */
    kf_rpc_client_close(x->c);
    assert_int_equal(x->done, x->n);
    fx_stop_inline(x->f);
  } else {
    assert_int_equal(status, KF_ECANCELED);
  }
}

static void test_close_from_callback(void **state) {
  fx f;
  fx_start(&f, false, 0);
  ctx x = {.f = &f, .n = 300};
  x.c = fx_client(&f, &f.loop, FX_TOKEN, 0);
  for (int i = 0; i < x.n; i++) {
    Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;
    gs.campaign_id = i;
    assert_int_equal(kf_rpc_client_call(
                         x.c, FX_PATH("GetStatus"), &gs.base,
                         &kernelfleet__get_status_response__descriptor, 20000,
                         close_in_cb_done, &x),
                     0);
  }
  uv_run(&f.loop, UV_RUN_DEFAULT);
  assert_int_equal(x.done, x.n);
  fx_close_loop(&f);
}

/* ------------------------------------------- idle client, idle loop -- */

static void idle_done(int status, const char *detail,
                      const ProtobufCMessage *resp, void *data) {
  *(int *)data = status;
}

static void test_idle_client_lets_loop_end(void **state) {
  uv_loop_t loop;
  assert_int_equal(uv_loop_init(&loop), 0);
  kf_rpc_client *c = NULL;
  char err[256];
  assert_int_equal(kf_rpc_client_open(&loop, "127.0.0.1:1", FX_TOKEN, 0, &c,
                                      err, sizeof err),
                   0);
  /* Nothing in flight: the loop has nothing to wait for. */
  assert_int_equal(uv_run(&loop, UV_RUN_NOWAIT), 0);
  /* A call in flight keeps it alive until its callback has run.  The
   * refused connection must be what ends it, not the deadline: under
   * ThreadSanitizer on a loaded machine gRPC took over 5 s to report the
   * refusal, so the deadline is far beyond any such delay. */
  int status = 1;
  Kernelfleet__GetStatusRequest gs = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  assert_int_equal(kf_rpc_client_call(
                       c, FX_PATH("GetStatus"), &gs.base,
                       &kernelfleet__get_status_response__descriptor, 120000,
                       idle_done, &status),
                   0);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(status, KF_EUNAVAIL);
  kf_rpc_client_close(c);
  uv_run(&loop, UV_RUN_DEFAULT); /* the async handle's close */
  assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_many),
      cmocka_unit_test(test_async_errors),
      cmocka_unit_test(test_client_close_cancels),
      cmocka_unit_test(test_stop_with_held_calls),
      cmocka_unit_test(test_stop_from_handler),
      cmocka_unit_test(test_close_from_callback),
      cmocka_unit_test(test_idle_client_lets_loop_end),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
