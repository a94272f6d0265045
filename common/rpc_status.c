/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/rpc_status.c -- the translations the rpc module's two halves share:
 * the one table between KF_E* codes and grpc_status_code, protobuf-c
 * messages to and from gRPC byte buffers, deadlines and message limits, and
 * the completion-queue-thread-to-loop handoff (rpc_internal.h).
 *
 * Nothing here keeps state of its own.  The mapping is deliberately lossy in
 * one direction: several KF codes share a gRPC status (EINVAL and EPROTO are
 * both INVALID_ARGUMENT, EDB and EUNAVAIL both UNAVAILABLE), and the reverse
 * picks the one a client should act on (rpc.h promises KF_EPROTO for
 * INVALID_ARGUMENT; an unavailable database looks like an unavailable
 * server, which the caller retries).  The status text carries the detail.
 */
#include <grpc/byte_buffer_reader.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "rpc_internal.h"
#include "text.h"

/* ------------------------------------------------------ status table -- */

/* XX(kf_code, grpc_status): the direction KF -> gRPC.  Codes missing here
 * (ENOMEM, EIO, ESPAWN, ESPEC, EINTERNAL) become INTERNAL: they are this
 * process's trouble, not something the peer can fix by changing the call. */
#define KF_RPC_TO_STATUS(XX)                                                  \
  XX(KF_EINVAL, GRPC_STATUS_INVALID_ARGUMENT)                                 \
  XX(KF_EPROTO, GRPC_STATUS_INVALID_ARGUMENT)                                 \
  XX(KF_EAUTH, GRPC_STATUS_UNAUTHENTICATED)                                   \
  XX(KF_EPERM, GRPC_STATUS_PERMISSION_DENIED)                                 \
  XX(KF_ENOTFOUND, GRPC_STATUS_NOT_FOUND)                                     \
  XX(KF_ETOOBIG, GRPC_STATUS_RESOURCE_EXHAUSTED)                              \
  XX(KF_EBUSY, GRPC_STATUS_RESOURCE_EXHAUSTED)                                \
  XX(KF_EUNAVAIL, GRPC_STATUS_UNAVAILABLE)                                    \
  XX(KF_ETIMEDOUT, GRPC_STATUS_DEADLINE_EXCEEDED)                             \
  XX(KF_ECANCELED, GRPC_STATUS_CANCELLED)                                     \
  XX(KF_ESTALE, GRPC_STATUS_FAILED_PRECONDITION)                              \
  XX(KF_ESTATE, GRPC_STATUS_FAILED_PRECONDITION)                              \
  XX(KF_EEXIST, GRPC_STATUS_ALREADY_EXISTS)                                   \
  XX(KF_EDB, GRPC_STATUS_UNAVAILABLE)

int kf_rpc_err_to_status(int kf_err) {
  switch (kf_err) {
  case KF_OK: return GRPC_STATUS_OK;
#define XX(kf, st) case kf: return st;
  KF_RPC_TO_STATUS(XX)
#undef XX
  default: return GRPC_STATUS_INTERNAL;
  }
}

/* The reverse is a separate switch because it is not the inverse of the
 * table above: it also covers statuses only gRPC itself produces. */
int kf_rpc_status_to_err(int grpc_status) {
  switch (grpc_status) {
  case GRPC_STATUS_OK: return KF_OK;
  case GRPC_STATUS_INVALID_ARGUMENT: return KF_EPROTO;
  case GRPC_STATUS_OUT_OF_RANGE: return KF_EINVAL;
  case GRPC_STATUS_UNAUTHENTICATED: return KF_EAUTH;
  case GRPC_STATUS_PERMISSION_DENIED: return KF_EPERM;
  case GRPC_STATUS_NOT_FOUND: return KF_ENOTFOUND;
  case GRPC_STATUS_RESOURCE_EXHAUSTED: return KF_ETOOBIG;
  case GRPC_STATUS_UNAVAILABLE: return KF_EUNAVAIL;
  /* ABORTED means "retry at a higher level": the same advice as UNAVAILABLE. */
  case GRPC_STATUS_ABORTED: return KF_EUNAVAIL;
  case GRPC_STATUS_DEADLINE_EXCEEDED: return KF_ETIMEDOUT;
  case GRPC_STATUS_CANCELLED: return KF_ECANCELED;
  /* "not now": a campaign that has ended, a cluster too small for a
   * problem.  (KF_ESTALE travels as the same status.) */
  case GRPC_STATUS_FAILED_PRECONDITION: return KF_ESTATE;
  case GRPC_STATUS_ALREADY_EXISTS: return KF_EEXIST;
  case GRPC_STATUS_DATA_LOSS: return KF_EIO;
  /* UNKNOWN, INTERNAL, UNIMPLEMENTED (a method the server lacks: a version
   * mismatch, not a missing record) and anything newer. */
  default: return KF_EINTERNAL;
  }
}

/* ------------------------------------------------------ byte buffers -- */

grpc_byte_buffer *kf_rpc__pack(const ProtobufCMessage *msg) {
  size_t n = protobuf_c_message_get_packed_size(msg);
  /* Pack straight into the slice gRPC will send: one allocation, no copy.
   * gpr allocations abort on failure rather than return NULL. */
  grpc_slice s = grpc_slice_malloc(n);
  size_t w = protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(s));
  grpc_byte_buffer *bb = NULL;
  if (w == n)
    bb = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return bb;
}

grpc_byte_buffer *kf_rpc__bytes(const void *bytes, size_t len) {
  grpc_slice s = grpc_slice_from_copied_buffer(bytes, len);
  grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return bb;
}

/* Borrows the bytes of bb when they sit in one uncompressed slice (the
 * common case for small messages), else flattens them into *tmp. */
static bool flatten(grpc_byte_buffer *bb, grpc_slice *tmp, const uint8_t **p,
                    size_t *n) {
  *tmp = grpc_empty_slice();
  if (!bb) {
    *p = NULL;
    *n = 0;
    return true;
  }
  if (bb->type == GRPC_BB_RAW &&
      bb->data.raw.compression == GRPC_COMPRESS_NONE &&
      bb->data.raw.slice_buffer.count == 1) {
    /* By pointer, not a copy: a small slice keeps its bytes inline, in
     * the grpc_slice struct itself, so a local copy's start pointer would
     * point into this dead frame once we return (found by fuzz_rpc). */
    const grpc_slice *s = &bb->data.raw.slice_buffer.slices[0];
    *p = GRPC_SLICE_START_PTR(*s);
    *n = GRPC_SLICE_LENGTH(*s);
    return true;
  }
  grpc_byte_buffer_reader r;
  if (!grpc_byte_buffer_reader_init(&r, bb))
    return false; /* undecodable compressed payload */
  *tmp = grpc_byte_buffer_reader_readall(&r);
  grpc_byte_buffer_reader_destroy(&r);
  *p = GRPC_SLICE_START_PTR(*tmp);
  *n = GRPC_SLICE_LENGTH(*tmp);
  return true;
}

ProtobufCMessage *kf_rpc__unpack(grpc_byte_buffer *bb,
                                 const ProtobufCMessageDescriptor *type) {
  grpc_slice tmp;
  const uint8_t *p;
  size_t n;
  if (!flatten(bb, &tmp, &p, &n))
    return NULL;
  /* protobuf-c reads nothing when n == 0, but wants a valid pointer. */
  static const uint8_t none[1];
  ProtobufCMessage *m = protobuf_c_message_unpack(type, NULL, n, p ? p : none);
  grpc_slice_unref(tmp);
  return m;
}

ProtobufCMessage *kf_rpc__unpack_request(grpc_byte_buffer *bb,
                                         const ProtobufCMessageDescriptor *type,
                                         bool check_text, char *why,
                                         size_t whylen) {
  grpc_slice tmp;
  const uint8_t *p;
  size_t n;
  snprintf(why, whylen, "malformed %s", type->name);
  if (!flatten(bb, &tmp, &p, &n))
    return NULL;
  static const uint8_t none[1];
  ProtobufCMessage *m = protobuf_c_message_unpack(type, NULL, n, p ? p : none);
  /* After a successful unpack, so the walk only ever sees well-formed
   * bytes; before the handler, so it never sees a string cut short. */
  if (m && check_text && kf_text_check_wire(type, p, n, why, whylen) != 0) {
    protobuf_c_message_free_unpacked(m, NULL);
    m = NULL;
  }
  grpc_slice_unref(tmp);
  return m;
}

int kf_rpc__read_all(grpc_byte_buffer *bb, void **out, size_t *len) {
  grpc_slice tmp;
  const uint8_t *p;
  size_t n;
  if (!flatten(bb, &tmp, &p, &n))
    return KF_EPROTO;
  /* +1 so a zero-length answer is still a real, freeable pointer. */
  void *buf = malloc(n + 1);
  if (buf && n)
    memcpy(buf, p, n);
  grpc_slice_unref(tmp);
  if (!buf)
    return KF_ENOMEM;
  *out = buf;
  *len = n;
  return 0;
}

int kf_rpc__exhausted_err(const void *details, size_t len) {
  static const char *const busy[] = {KF_RPC__BUSY_PREFIX,
                                     KF_RPC__RESET_PREFIX};
  for (size_t i = 0; i < sizeof busy / sizeof busy[0]; i++) {
    size_t n = strlen(busy[i]);
    if (len >= n && memcmp(details, busy[i], n) == 0)
      return KF_EBUSY; /* a cap or the memory quota: retry later */
  }
  return KF_ETOOBIG;
}

/* ---------------------------------------------------- call plumbing -- */

gpr_timespec kf_rpc__deadline(int timeout_ms) {
  if (timeout_ms <= 0)
    return gpr_inf_future(GPR_CLOCK_REALTIME);
  return gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                      gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
}

size_t kf_rpc__msg_limit_args(size_t max_msg_bytes, grpc_arg *args) {
  size_t lim = max_msg_bytes ? max_msg_bytes : 4u << 20;
  int v = lim > INT_MAX ? INT_MAX : (int)lim;
  args[0] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                       .key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
                       .value.integer = v};
  args[1] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                       .key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH,
                       .value.integer = v};
  return 2;
}

/* ----------------------------------------------------------- handoff -- */

static void free_async(uv_handle_t *h) { free(h); }

int kf_rpc__handoff_init(kf_rpc__handoff *h, uv_loop_t *loop, uv_async_cb cb,
                         void *data) {
  h->head = h->tail = NULL;
  h->async = malloc(sizeof *h->async);
  if (!h->async)
    return KF_ENOMEM;
  if (pthread_mutex_init(&h->mu, NULL) != 0) {
    free(h->async);
    h->async = NULL;
    return KF_EINTERNAL;
  }
  if (uv_async_init(loop, h->async, cb) != 0) {
    pthread_mutex_destroy(&h->mu);
    free(h->async);
    h->async = NULL;
    return KF_EINTERNAL;
  }
  h->async->data = data;
  return 0;
}

void kf_rpc__handoff_push(kf_rpc__handoff *h, kf_rpc__node *n) {
  n->next = NULL;
  pthread_mutex_lock(&h->mu);
  bool was_empty = h->head == NULL;
  if (h->tail)
    h->tail->next = n;
  else
    h->head = n;
  h->tail = n;
  pthread_mutex_unlock(&h->mu);
  /* A non-empty queue already has a wakeup on its way (or being handled,
   * and that handler's take will see n): skip the extra syscall. */
  if (was_empty)
    uv_async_send(h->async);
}

kf_rpc__node *kf_rpc__handoff_take(kf_rpc__handoff *h) {
  pthread_mutex_lock(&h->mu);
  kf_rpc__node *n = h->head;
  h->head = h->tail = NULL;
  pthread_mutex_unlock(&h->mu);
  return n;
}

void kf_rpc__handoff_close(kf_rpc__handoff *h) {
  if (!h->async)
    return;
  uv_close((uv_handle_t *)h->async, free_async);
  h->async = NULL;
  pthread_mutex_destroy(&h->mu);
}
