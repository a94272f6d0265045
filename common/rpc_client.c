/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/rpc_client.c -- the gRPC client half of the rpc module.
 *
 * One channel per client.  Every unary call is a single batch of six ops
 * (send metadata with the token, send message, half-close, receive
 * metadata, message and status), so a call costs one completion event.
 *
 * Async calls (client opened with a loop) complete on the client's queue
 * thread (cq_main), which also unpacks the response and maps the status,
 * then hand the finished call to the loop through the handoff
 * (rpc_internal.h); the callback runs there.  The loop thread keeps every
 * call it started on `inflight` until its callback has run, and only the
 * loop thread unrefs a grpc_call, so close can cancel whatever is still
 * outstanding without racing the queue thread.
 *
 * Sync calls use their own create_for_pluck queue and block in
 * grpc_completion_queue_pluck, so they need neither the loop nor the queue
 * thread, and any number of threads may make them at once.
 *
 * Close (loop thread): refuse new calls, cancel the outstanding ones, shut
 * the queue down and join its thread (which first drains every completion),
 * then run each outstanding callback with KF_ECANCELED (in no promised
 * order) before returning.  A callback may close the client; the dispatch
 * loop notices and stops touching it.  Calls started from a callback that
 * runs during close fail with KF_ECANCELED, and a nested close is ignored.
 *
 * Not here: retries (callers own their retry policy, and gRPC's retry filter
 * costs a copy of every message), streaming, TLS.
 */
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "util.h"
#include "log.h"
#include "rpc_internal.h"

typedef struct ccall {
  kf_rpc__node node;       /* handoff link; first */
  grpc_call *call;
  grpc_metadata auth;      /* the one metadata entry we send */
  grpc_byte_buffer *send;
  grpc_metadata_array init_md, trail_md;
  grpc_byte_buffer *recv;
  grpc_status_code status;
  grpc_slice details;
  const ProtobufCMessageDescriptor *resp_type;
  kf_rpc_done cb;
  void *data;
  struct ccall *prev, *next; /* client->inflight; loop thread only */
  /* set by the queue thread before the handoff */
  int rc;
  ProtobufCMessage *resp;
  char *detail;              /* gpr_malloc'd */
} ccall;

struct kf_rpc_client {
  uv_loop_t *loop;         /* NULL: sync calls only */
  grpc_channel *channel;
  grpc_slice auth;         /* "Bearer <token>" */
  grpc_completion_queue *cq; /* async calls only */
  pthread_t thread;
  bool thread_started;
  kf_rpc__handoff handoff;
  bool handoff_ready;
  bool closing;
  ccall *inflight;         /* started, callback not yet run */
  kf_rpc__node *dispatching; /* taken from the handoff, not yet run */
  bool *gone;              /* set by close while on_async runs callbacks */
};

static void *cq_main(void *arg);
static void on_async(uv_async_t *h);

/* ------------------------------------------------------------ shared -- */

/* The six-op batch of a unary call.  md may be NULL (no token).  All the
 * output pointers belong to the caller and must live until completion. */
static grpc_call_error start_unary(grpc_call *call, grpc_metadata *md,
                                   grpc_byte_buffer *send,
                                   grpc_metadata_array *init_md,
                                   grpc_byte_buffer **recv,
                                   grpc_metadata_array *trail_md,
                                   grpc_status_code *status,
                                   grpc_slice *details, void *tag) {
  grpc_op ops[6];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[0].data.send_initial_metadata.count = md ? 1 : 0;
  ops[0].data.send_initial_metadata.metadata = md;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = send;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = init_md;
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = recv;
  ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[5].data.recv_status_on_client.trailing_metadata = trail_md;
  ops[5].data.recv_status_on_client.status = status;
  ops[5].data.recv_status_on_client.status_details = details;
  kf_rpc__tag_release(tag);
  return grpc_call_start_batch(call, ops, 6, tag, NULL);
}

static grpc_call *create_call(kf_rpc_client *c, grpc_completion_queue *cq,
                              const char *path, int timeout_ms) {
  /* Copied: gRPC keeps the path for the call's lifetime, and the caller's
   * string may be gone before the answer arrives. */
  grpc_slice method = grpc_slice_from_copied_string(path);
  grpc_call *call = grpc_channel_create_call(
      c->channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, method, NULL,
      kf_rpc__deadline(timeout_ms), NULL);
  grpc_slice_unref(method);
  return call;
}

/* Status of a finished call, to 0 / KF_E*; unpacks into *resp when asked. */
static int finish(grpc_status_code status, const grpc_slice *details,
                  grpc_byte_buffer *recv,
                  const ProtobufCMessageDescriptor *type,
                  ProtobufCMessage **resp) {
  if (status == GRPC_STATUS_RESOURCE_EXHAUSTED)
    return kf_rpc__exhausted_err(GRPC_SLICE_START_PTR(*details),
                                 GRPC_SLICE_LENGTH(*details));
  if (status != GRPC_STATUS_OK)
    return kf_rpc_status_to_err(status);
  /* A unary OK always carries a message, even an empty one. */
  if (!recv)
    return KF_EPROTO;
  if (type) {
    *resp = kf_rpc__unpack(recv, type);
    if (!*resp)
      return KF_EPROTO;
  }
  return 0;
}

/* Channel credentials: SSL over tls's PEM files when tls->ca_file is set,
 * else insecure.  NULL with err filled on failure. */
static grpc_channel_credentials *channel_creds(const kf_rpc_tls *tls,
                                               char *err, size_t errlen) {
  if (!tls || !tls->ca_file || !*tls->ca_file) {
    grpc_channel_credentials *c = grpc_insecure_credentials_create();
    if (!c) kf_seterr(KF_EINTERNAL, err, errlen, "rpc client: no credentials");
    return c;
  }
  char *ca = NULL, *cert = NULL, *key = NULL;
  size_t len;
  grpc_channel_credentials *c = NULL;
  if (kf_read_file(tls->ca_file, 1u << 20, &ca, &len, err, errlen)) goto out;
  bool pair = tls->cert_file && *tls->cert_file;
  if (pair != (tls->key_file && *tls->key_file)) {
    kf_seterr(KF_EINVAL, err, errlen,
              "rpc client: --tls-cert and --tls-key go together");
    goto out;
  }
  if (pair && (kf_read_file(tls->cert_file, 1u << 20, &cert, &len, err,
                            errlen) ||
               kf_read_file(tls->key_file, 1u << 20, &key, &len, err,
                            errlen)))
    goto out;
  grpc_ssl_pem_key_cert_pair kp = {.private_key = key, .cert_chain = cert};
  c = grpc_ssl_credentials_create(ca, pair ? &kp : NULL, NULL, NULL);
  if (!c) kf_seterr(KF_EINTERNAL, err, errlen, "rpc client: bad TLS files");
out:
  free(ca);
  free(cert);
  if (key) {
    memset(key, 0, strlen(key)); /* a private key: do not leave it around */
    free(key);
  }
  return c;
}

int kf_rpc_client_open(uv_loop_t *loop, const char *target, const char *token,
                       size_t max_msg_bytes, kf_rpc_client **out, char *err,
                       size_t errlen) {
  return kf_rpc_client_open_tls(loop, target, token, NULL, max_msg_bytes, out,
                                err, errlen);
}

int kf_rpc_client_open_tls(uv_loop_t *loop, const char *target,
                           const char *token, const kf_rpc_tls *tls,
                           size_t max_msg_bytes, kf_rpc_client **out,
                           char *err, size_t errlen) {
  if (!target || !*target || !token || !out)
    return kf_seterr(KF_EINVAL, err, errlen,
                     "rpc client: target and token are required");
  kf_rpc_client *c = calloc(1, sizeof *c);
  char *bearer = malloc(strlen("Bearer ") + strlen(token) + 1);
  if (!c || !bearer) {
    free(c);
    free(bearer);
    return kf_seterr(KF_ENOMEM, err, errlen, "rpc client: out of memory");
  }
  sprintf(bearer, "Bearer %s", token);
  grpc_init();
  c->loop = loop;
  c->auth = grpc_slice_from_copied_string(bearer);
  free(bearer);

  grpc_arg args[3];
  size_t n = kf_rpc__msg_limit_args(max_msg_bytes, args);
  args[n++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                         .key = (char *)GRPC_ARG_ENABLE_RETRIES,
                         .value.integer = 0};
  grpc_channel_args cargs = {.num_args = n, .args = args};
  grpc_channel_credentials *creds = channel_creds(tls, err, errlen);
  int rc = 0;
  if (!creds) {
    rc = KF_EIO;
    goto fail;
  }
  c->channel = grpc_channel_create(target, creds, &cargs);
  grpc_channel_credentials_release(creds);
  if (!c->channel) {
    rc = kf_seterr(KF_EINTERNAL, err, errlen,
                   "rpc client: cannot create channel to %s", target);
    goto fail;
  }
  if (loop) {
    c->cq = grpc_completion_queue_create_for_next(NULL);
    if (!c->cq) {
      rc = kf_seterr(KF_EINTERNAL, err, errlen, "rpc client: no queue");
      goto fail;
    }
    if ((rc = kf_rpc__handoff_init(&c->handoff, loop, on_async, c))) {
      kf_seterr(rc, err, errlen, "rpc client: cannot create async");
      goto fail;
    }
    c->handoff_ready = true;
    uv_unref((uv_handle_t *)c->handoff.async); /* idle until a call starts */
    if (pthread_create(&c->thread, NULL, cq_main, c) != 0) {
      rc = kf_seterr(KF_EINTERNAL, err, errlen,
                     "rpc client: cannot start queue thread");
      goto fail;
    }
    c->thread_started = true;
  }
  *out = c;
  return 0;
fail:
  kf_rpc_client_close(c);
  return rc;
}

/* ------------------------------------------------------------- async -- */

static void ccall_free(ccall *cc) {
  if (cc->call)
    grpc_call_unref(cc->call);
  if (cc->send)
    grpc_byte_buffer_destroy(cc->send);
  if (cc->recv)
    grpc_byte_buffer_destroy(cc->recv);
  grpc_metadata_array_destroy(&cc->init_md);
  grpc_metadata_array_destroy(&cc->trail_md);
  grpc_slice_unref(cc->details);
  if (cc->resp)
    protobuf_c_message_free_unpacked(cc->resp, NULL);
  if (cc->detail)
    gpr_free(cc->detail);
  free(cc);
}

/* Queue thread: everything about a finished call that needs no loop state,
 * so the loop only runs the callback. */
static void *cq_main(void *arg) {
  kf_rpc_client *c = arg;
  for (;;) {
    grpc_event ev = grpc_completion_queue_next(
        c->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN)
      break;
    if (ev.type != GRPC_OP_COMPLETE)
      continue;
    ccall *cc = ev.tag;
    kf_rpc__tag_acquire(cc);
    if (!ev.success)
      cc->rc = KF_EINTERNAL; /* a client batch fails only on misuse */
    else
      cc->rc = finish(cc->status, &cc->details, cc->recv, cc->resp_type,
                      &cc->resp);
    cc->detail = grpc_slice_to_c_string(cc->details);
    /* The bytes are no longer needed; free them off the loop thread. */
    if (cc->send) {
      grpc_byte_buffer_destroy(cc->send);
      cc->send = NULL;
    }
    if (cc->recv) {
      grpc_byte_buffer_destroy(cc->recv);
      cc->recv = NULL;
    }
    kf_rpc__handoff_push(&c->handoff, &cc->node);
  }
  return NULL;
}

static void inflight_unlink(kf_rpc_client *c, ccall *cc) {
  if (cc->prev)
    cc->prev->next = cc->next;
  else
    c->inflight = cc->next;
  if (cc->next)
    cc->next->prev = cc->prev;
}

/* Runs one callback and frees the call.  Loop thread. */
static void dispatch(kf_rpc_client *c, ccall *cc, int rc, const char *detail) {
  inflight_unlink(c, cc);
  /* An idle client must not keep the loop alive, any more than an idle
   * uv_tcp_t would: only calls in flight hold a reference. */
  if (!c->inflight)
    uv_unref((uv_handle_t *)c->handoff.async);
  cc->cb(rc, detail ? detail : "", rc == 0 ? cc->resp : NULL, cc->data);
  ccall_free(cc);
}

static void on_async(uv_async_t *h) {
  kf_rpc_client *c = h->data;
  bool gone = false;
  c->gone = &gone;
  /* Kept on the client rather than in a local so a callback that closes
   * the client leaves nothing for this loop to touch (close frees these
   * through `inflight`). */
  c->dispatching = kf_rpc__handoff_take(&c->handoff);
  while (c->dispatching) {
    ccall *cc = (ccall *)c->dispatching;
    c->dispatching = cc->node.next;
    dispatch(c, cc, cc->rc, cc->detail);
    if (gone)
      return;
  }
  c->gone = NULL;
}

int kf_rpc_client_call(kf_rpc_client *c, const char *path,
                       const ProtobufCMessage *req,
                       const ProtobufCMessageDescriptor *resp_type,
                       int timeout_ms, kf_rpc_done cb, void *data) {
  if (!c || !c->loop || !path || !req || !resp_type || !cb)
    return KF_EINVAL;
  if (c->closing)
    return KF_ECANCELED;
  ccall *cc = calloc(1, sizeof *cc);
  if (!cc)
    return KF_ENOMEM;
  grpc_metadata_array_init(&cc->init_md);
  grpc_metadata_array_init(&cc->trail_md);
  cc->details = grpc_empty_slice();
  cc->resp_type = resp_type;
  cc->cb = cb;
  cc->data = data;
  cc->auth.key = grpc_slice_from_static_string("authorization");
  cc->auth.value = c->auth;
  cc->send = kf_rpc__pack(req);
  if (!cc->send) {
    ccall_free(cc);
    return KF_ENOMEM;
  }
  cc->call = create_call(c, c->cq, path, timeout_ms);
  if (!cc->call) {
    ccall_free(cc);
    return KF_EINTERNAL;
  }
  grpc_call_error e =
      start_unary(cc->call, &cc->auth, cc->send, &cc->init_md, &cc->recv,
                  &cc->trail_md, &cc->status, &cc->details, cc);
  if (e != GRPC_CALL_OK) {
    kf_log(KF_LOG_ERROR, "rpc: cannot start %s: %s", path,
           grpc_call_error_to_string(e));
    ccall_free(cc);
    return KF_EINTERNAL;
  }
  if (!c->inflight)
    uv_ref((uv_handle_t *)c->handoff.async);
  cc->prev = NULL;
  cc->next = c->inflight;
  if (c->inflight)
    c->inflight->prev = cc;
  c->inflight = cc;
  return 0;
}

void kf_rpc_client_close(kf_rpc_client *c) {
  if (!c || c->closing) /* NULL, or called again from a callback of close */
    return;
  c->closing = true;
  if (c->gone)
    *c->gone = true; /* closed from inside a callback */
  /* Best effort by design: a call that already finished ignores the cancel,
   * and its completion is on its way to the queue either way. */
  for (ccall *cc = c->inflight; cc; cc = cc->next)
    (void)grpc_call_cancel(cc->call, NULL);
  if (c->cq) {
    grpc_completion_queue_shutdown(c->cq);
    if (c->thread_started)
      pthread_join(c->thread, NULL);
  }
  /* Every call has completed now; their nodes sit in the handoff or in
   * `dispatching`, but `inflight` lists them all. */
  if (c->handoff_ready) {
    kf_rpc__handoff_take(&c->handoff);
    c->dispatching = NULL;
    while (c->inflight)
      dispatch(c, c->inflight, KF_ECANCELED, "client closed");
    kf_rpc__handoff_close(&c->handoff);
  }
  if (c->cq)
    grpc_completion_queue_destroy(c->cq);
  if (c->channel)
    grpc_channel_destroy(c->channel);
  grpc_slice_unref(c->auth);
  free(c);
  grpc_shutdown();
}

/* -------------------------------------------------------------- sync -- */

/* One blocking call on a private pluck queue.  On success *recv holds the
 * response bytes (caller destroys).  Any thread but the client's loop. */
static int call_sync(kf_rpc_client *c, const char *path, grpc_byte_buffer *send,
                     grpc_metadata *md, int timeout_ms,
                     const ProtobufCMessageDescriptor *type,
                     ProtobufCMessage **resp, grpc_byte_buffer **recv_out,
                     char *err, size_t errlen) {
  grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
  if (!cq)
    return kf_seterr(KF_EINTERNAL, err, errlen, "rpc: no queue");
  grpc_call *call = create_call(c, cq, path, timeout_ms);
  if (!call) {
    grpc_completion_queue_shutdown(cq);
    grpc_completion_queue_destroy(cq);
    return kf_seterr(KF_EINTERNAL, err, errlen, "rpc: cannot create call");
  }
  grpc_metadata_array init_md, trail_md;
  grpc_metadata_array_init(&init_md);
  grpc_metadata_array_init(&trail_md);
  grpc_byte_buffer *recv = NULL;
  grpc_status_code status = GRPC_STATUS_UNKNOWN;
  grpc_slice details = grpc_empty_slice();
  char tag;
  int rc;
  grpc_call_error e = start_unary(call, md, send, &init_md, &recv, &trail_md,
                                  &status, &details, &tag);
  if (e != GRPC_CALL_OK) {
    rc = kf_seterr(KF_EINTERNAL, err, errlen, "rpc: cannot start %s: %s",
                   path, grpc_call_error_to_string(e));
  } else {
    /* The call's own deadline bounds this wait. */
    grpc_event ev = grpc_completion_queue_pluck(
        cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    kf_rpc__tag_acquire(&tag);
    if (ev.type != GRPC_OP_COMPLETE || !ev.success) {
      rc = kf_seterr(KF_EINTERNAL, err, errlen, "rpc: %s did not complete",
                     path);
    } else {
      rc = finish(status, &details, recv, type, resp);
      if (rc != 0) {
        char *d = grpc_slice_to_c_string(details);
        kf_seterr(rc, err, errlen, "%s",
                  d && *d ? d
                  : rc == KF_EPROTO && status == GRPC_STATUS_OK
                      ? "malformed response"
                      : kf_strerror(rc));
        gpr_free(d);
      }
    }
  }
  if (rc == 0 && recv_out) {
    *recv_out = recv;
    recv = NULL;
  }
  if (recv)
    grpc_byte_buffer_destroy(recv);
  grpc_metadata_array_destroy(&init_md);
  grpc_metadata_array_destroy(&trail_md);
  grpc_slice_unref(details);
  grpc_call_unref(call);
  grpc_completion_queue_shutdown(cq);
  grpc_completion_queue_destroy(cq);
  return rc;
}

int kf_rpc_client_call_sync(kf_rpc_client *c, const char *path,
                            const ProtobufCMessage *req,
                            const ProtobufCMessageDescriptor *resp_type,
                            int timeout_ms, ProtobufCMessage **resp, char *err,
                            size_t errlen) {
  if (!c || !path || !req || !resp_type || !resp)
    return kf_seterr(KF_EINVAL, err, errlen, "rpc: bad arguments");
  *resp = NULL;
  grpc_byte_buffer *send = kf_rpc__pack(req);
  if (!send)
    return kf_seterr(KF_ENOMEM, err, errlen, "rpc: cannot pack request");
  grpc_metadata md = {.key = grpc_slice_from_static_string("authorization"),
                      .value = c->auth};
  int rc = call_sync(c, path, send, &md, timeout_ms, resp_type, resp, NULL,
                     err, errlen);
  grpc_byte_buffer_destroy(send);
  return rc;
}

int kf_rpc_client_call_raw_sync(kf_rpc_client *c, const char *path,
                                const void *bytes, size_t len,
                                const char *token, int timeout_ms,
                                void **out, size_t *outlen, char *err,
                                size_t errlen) {
  if (!c || !path || (!bytes && len) || !out || !outlen)
    return kf_seterr(KF_EINVAL, err, errlen, "rpc: bad arguments");
  *out = NULL;
  *outlen = 0;
  grpc_metadata md = {.key = grpc_slice_from_static_string("authorization"),
                      .value = grpc_slice_ref(c->auth)};
  if (token) {
    grpc_slice_unref(md.value);
    size_t n = strlen("Bearer ") + strlen(token) + 1;
    char *b = malloc(n);
    if (!b)
      return kf_seterr(KF_ENOMEM, err, errlen, "rpc: out of memory");
    snprintf(b, n, "Bearer %s", token);
    md.value = grpc_slice_from_copied_string(b);
    free(b);
  }
  grpc_byte_buffer *send = kf_rpc__bytes(bytes ? bytes : "", len);
  grpc_byte_buffer *recv = NULL;
  int rc = send ? call_sync(c, path, send, token && !*token ? NULL : &md,
                            timeout_ms, NULL, NULL, &recv, err, errlen)
                : kf_seterr(KF_ENOMEM, err, errlen, "rpc: out of memory");
  if (send)
    grpc_byte_buffer_destroy(send);
  grpc_slice_unref(md.value);
  if (rc == 0) {
    rc = kf_rpc__read_all(recv, out, outlen);
    if (rc)
      kf_seterr(rc, err, errlen, "rpc: cannot read response");
    grpc_byte_buffer_destroy(recv);
  }
  return rc;
}

void kf_rpc_free(ProtobufCMessage *msg) {
  if (msg)
    protobuf_c_message_free_unpacked(msg, NULL);
}
