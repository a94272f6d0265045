/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/rpc_internal.h -- what rpc_server.c, rpc_client.c and rpc_status.c
 * share, and nothing outside the rpc module may include.
 *
 * The handoff: a completion-queue thread pushes finished work onto a locked
 * singly linked list and wakes the loop with uv_async_send; the loop's async
 * callback takes the whole list at once (uv_async_send coalesces, so one
 * wakeup may stand for many pushes).  The uv_async_t is malloc'd apart from
 * its owner because uv_close finishes on a later loop turn, after the owner
 * (server or client) is already gone.
 */
#ifndef KF_RPC_INTERNAL_H
#define KF_RPC_INTERNAL_H

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <pthread.h>
#include <stdbool.h>

#include "rpc.h"

/* Happens-before through gRPC's completion queue, told to ThreadSanitizer.
 * A tag handed to gRPC (grpc_call_start_batch, request_call) comes back
 * from grpc_completion_queue_next/pluck on another thread; gRPC orders the
 * two, but inside a library TSan does not instrument, so without these
 * every field of a call looks raced.  Release a tag just before handing it
 * over, acquire it just after it comes back.  No-ops outside TSan builds
 * (-DKF_SANITIZE=thread). */
#if defined(__SANITIZE_THREAD__)
#define KF_RPC__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KF_RPC__TSAN 1
#endif
#endif
#ifdef KF_RPC__TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define kf_rpc__tag_release(tag) __tsan_release(tag)
#define kf_rpc__tag_acquire(tag) __tsan_acquire(tag)
#else
#define kf_rpc__tag_release(tag) ((void)(tag))
#define kf_rpc__tag_acquire(tag) ((void)(tag))
#endif

/* Intrusive link; embed it first in whatever travels through a handoff. */
typedef struct kf_rpc__node {
  struct kf_rpc__node *next;
} kf_rpc__node;

typedef struct {
  pthread_mutex_t mu;
  kf_rpc__node *head, *tail; /* FIFO, guarded by mu */
  uv_async_t *async;         /* malloc'd; freed by its close callback */
} kf_rpc__handoff;

/* Creates the async handle on loop (loop thread).  cb receives the handle;
 * handle->data is set to data.  Returns 0 or KF_ENOMEM / KF_EINTERNAL. */
int kf_rpc__handoff_init(kf_rpc__handoff *h, uv_loop_t *loop, uv_async_cb cb,
                         void *data);
/* Appends n and wakes the loop.  Any thread, until handoff_close. */
void kf_rpc__handoff_push(kf_rpc__handoff *h, kf_rpc__node *n);
/* Takes everything queued so far, oldest first; NULL when empty. */
kf_rpc__node *kf_rpc__handoff_take(kf_rpc__handoff *h);
/* uv_close on the async handle (its memory is freed when the loop runs the
 * close callback) and destroys the mutex.  Nothing may push any more, and
 * the queue must already be empty (take it first).  Loop thread. */
void kf_rpc__handoff_close(kf_rpc__handoff *h);

/* Packs msg into a new byte buffer (one slice, no extra copy).  NULL on
 * allocation failure. */
grpc_byte_buffer *kf_rpc__pack(const ProtobufCMessage *msg);
/* Byte buffer over a copy of bytes; NULL on allocation failure. */
grpc_byte_buffer *kf_rpc__bytes(const void *bytes, size_t len);
/* Unpacks bb (NULL means zero bytes: an all-default proto3 message) as
 * type.  Returns the message, or NULL when the bytes do not parse. */
ProtobufCMessage *kf_rpc__unpack(grpc_byte_buffer *bb,
                                 const ProtobufCMessageDescriptor *type);
/* kf_rpc__unpack for a server's request: NULL with why ("malformed
 * kernelfleet.X", or kf_text_check_wire's "field contains a NUL byte ...")
 * when the bytes do not parse or, with check_text, a string field is not
 * UTF-8 or holds a NUL (which unpacking would silently cut at). */
ProtobufCMessage *kf_rpc__unpack_request(grpc_byte_buffer *bb,
                                         const ProtobufCMessageDescriptor *type,
                                         bool check_text, char *why,
                                         size_t whylen);
/* Copies bb's bytes into a malloc'd buffer (never NULL on success, even
 * for zero bytes).  Returns 0 or KF_ENOMEM. */
int kf_rpc__read_all(grpc_byte_buffer *bb, void **out, size_t *len);

/* RESOURCE_EXHAUSTED means two things: a message too large (KF_ETOOBIG:
 * sending it again cannot help) or a cap on calls or queued work reached
 * (KF_EBUSY: try again later).  The server starts the status text of the
 * second with this prefix, and the client reads it back as KF_EBUSY. */
#define KF_RPC__BUSY_PREFIX "busy: "
/* The stream reset gRPC's transport sends when its memory quota is full
 * (RST_STREAM ENHANCE_YOUR_CALM, code 11) reaches the client as
 * RESOURCE_EXHAUSTED with this text: also KF_EBUSY, since the same
 * message may go through once the flood has passed. */
#define KF_RPC__RESET_PREFIX "Received RST_STREAM"
/* KF_EBUSY or KF_ETOOBIG for a RESOURCE_EXHAUSTED with these details. */
int kf_rpc__exhausted_err(const void *details, size_t len);

/* Absolute deadline timeout_ms from now; <= 0 means none. */
gpr_timespec kf_rpc__deadline(int timeout_ms);
/* Channel args for max_msg_bytes (0: 4 MiB), into caller storage of two
 * grpc_arg (plus any the caller appends after them). */
size_t kf_rpc__msg_limit_args(size_t max_msg_bytes, grpc_arg *args);

#endif
