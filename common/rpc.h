/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/rpc.h -- unary RPCs over the gRPC C core, handed to a libuv loop.
 *
 * The only module that includes <grpc/...>.  Messages cross this API as
 * protobuf-c structs; packing and unpacking happen inside the module.
 *
 * Threads.  Each server and each async client owns one completion-queue
 * thread that blocks in grpc_completion_queue_next and hands events to the
 * loop through a locked queue plus uv_async_send.  Every callback declared
 * here runs on the loop thread.  Functions marked "loop thread" must be
 * called there; the *_sync client calls may be used from any thread that is
 * not a loop thread of this module.
 *
 * Security.  Every call carries "authorization: Bearer <token>".  The
 * server judges it from the call's initial metadata, before a byte of the
 * message is read (methods are registered without a payload; the message
 * is received only after the credential passed): a token that is neither
 * the bootstrap token (opts.token, role admin, credential id 0) nor in the
 * credential table (kf_rpc_server_set_creds: SHA-256 hashes with a role
 * and an id) is answered UNAUTHENTICATED (KF_EAUTH); a known credential
 * whose role the method does not allow is answered PERMISSION_DENIED
 * (KF_EPERM) naming the role.  The handler learns who called with
 * kf_rpc_call_cred_id / kf_rpc_call_role.  TLS (gRPC core's SSL
 * credentials) is on when the server is given a certificate and key, and
 * then optionally requires client certificates signed by a CA.  Messages over max_msg_bytes are refused by gRPC
 * (RESOURCE_EXHAUSTED, KF_ETOOBIG); bytes that do not unpack as the
 * method's request type, or (with check_text) whose string fields are
 * not UTF-8 or hold a NUL, are refused with INVALID_ARGUMENT (KF_EPROTO).
 * A path the server does not serve is answered UNIMPLEMENTED at once
 * (KF_EINTERNAL on the client).
 *
 * Status mapping (rpc_status.c) is lossy: KF_ETOOBIG (message too large)
 * and KF_EBUSY (a cap on calls or queued work; retry later) both travel
 * as RESOURCE_EXHAUSTED, told apart by the status text's "busy: " prefix
 * (rpc_internal.h); KF_EINVAL and KF_EPROTO both
 * travel as INVALID_ARGUMENT and arrive as KF_EPROTO; KF_EDB and
 * KF_EUNAVAIL both arrive as KF_EUNAVAIL; codes with no gRPC meaning
 * (ENOMEM, EIO, ...) arrive as KF_EINTERNAL.  The status text carries the
 * specifics.
 */
#ifndef KF_RPC_H
#define KF_RPC_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* ------------------------------------------------------------- server -- */

typedef struct kf_rpc_server kf_rpc_server;
typedef struct kf_rpc_call kf_rpc_call;

/* Runs on the loop thread with the unpacked request, which the call owns
 * (valid until the call is answered).  The handler must eventually answer
 * the call exactly once with kf_rpc_call_reply or kf_rpc_call_fail, now or
 * from a later loop callback (long polls keep calls for a while) -- even
 * after kf_rpc_server_stop, where the answer only frees the call. */
typedef void (*kf_rpc_handler)(kf_rpc_call *call, const ProtobufCMessage *req,
                               void *data);

typedef struct {
  const char *path;                          /* "/kernelfleet.Coordinator/X" */
  const ProtobufCMessageDescriptor *request; /* request type */
  kf_rpc_handler handler;
  /* KF_ROLE_* bits (token.h) allowed to call it; admin always may, so 0
   * means admin only. */
  unsigned roles;
} kf_rpc_method;

/* One credential the server accepts: the SHA-256 of its secret, its role
 * (one KF_ROLE_* bit) and its id (> 0; id 0 is the bootstrap token). */
typedef struct {
  uint8_t hash[32];
  unsigned role;
  int64_t id;
} kf_rpc_cred;

/* PEM files for TLS.  Server: cert_file + key_file turn TLS on;
 * ca_file (optional) requires and verifies client certificates.  Client:
 * ca_file turns TLS on and verifies the server against it; cert_file +
 * key_file (optional) present a client certificate. */
typedef struct {
  const char *ca_file;
  const char *cert_file;
  const char *key_file;
} kf_rpc_tls;

typedef struct {
  uv_loop_t *loop;             /* loop that runs the handlers */
  const char *listen_addr;     /* "127.0.0.1:0" picks a free port */
  const char *token;           /* bootstrap token: role admin, id 0 */
  const kf_rpc_cred *creds;    /* initial credential table (copied) */
  size_t n_creds;
  const kf_rpc_tls *tls;       /* NULL or no cert_file: plaintext */
  /* true: a call whose token is not in the table waits (at most 64 at
   * once, its body unread) for the owner's next kf_rpc_server_set_creds
   * or kf_rpc_server_recheck instead of being refused at once, so a
   * credential stored a moment ago works on its first call.  The owner
   * must then reload soon after kf_rpc_server_take_miss says true. */
  bool hold_misses;
  size_t max_msg_bytes;        /* receive and send limit, bytes; 0: 4 MiB */
  /* Memory gRPC's transport may hold for all connections together
   * (a grpc_resource_quota), bytes; 0: no cap.  Over it the transport
   * resets streams (the client sees RESOURCE_EXHAUSTED) until it is back
   * under.  This is what bounds an authenticated flood of oversized
   * messages: gRPC receives a message whole before a method's
   * max_request_bytes can refuse it.  Must leave room for a few
   * max_msg_bytes messages. */
  size_t memory_quota_bytes;
  const kf_rpc_method *methods;
  size_t n_methods;
  /* true: a request with a string field (at any depth) that is not UTF-8
   * or holds a NUL is refused INVALID_ARGUMENT naming the field, before
   * its handler runs -- unpacked, the string would silently read cut at
   * the NUL -- except for the methods whose paths raw_text lists
   * (NULL-terminated; may be NULL), whose handlers judge their strings
   * themselves. */
  bool check_text;
  const char *const *raw_text;
  /* Calls in flight (from arrival, token checked, to the answer sent):
   * at most max_calls in all and max_calls_per_peer from one peer host
   * (rpc_limits.h); beyond either the call is answered RESOURCE_EXHAUSTED
   * naming the cap (the client reads KF_EBUSY: retry later, unlike
   * KF_ETOOBIG), before its request is unpacked.  0: no cap. */
  uint32_t max_calls;
  uint32_t max_calls_per_peer;
  /* NULL, or n_methods entries: the largest request methods[i] takes,
   * bytes (0: max_msg_bytes).  A larger one is refused RESOURCE_EXHAUSTED
   * before it is unpacked -- unpacked, a message of many tiny entries
   * takes many times its size. */
  const size_t *max_request_bytes;
  void *data;                  /* passed to every handler */
} kf_rpc_server_opts;

/* Binds, starts the completion-queue thread and begins accepting calls.
 * On success *out is set and *bound_port holds the port actually bound.
 * On failure returns a KF_E* code with text in err; nothing is left
 * running.  Loop thread. */
int kf_rpc_server_start(const kf_rpc_server_opts *opts, kf_rpc_server **out,
                        int *bound_port, char *err, size_t errlen);

/* Stops accepting, cancels calls still in flight (including calls a handler
 * still holds: answering them afterwards is a no-op that frees them, and
 * their requests stay readable until then), frees calls that had not yet
 * reached a handler, joins the queue thread and frees the server.
 * NULL-safe.  Loop thread, including from inside a handler; the loop need
 * not be running.  Blocks briefly while gRPC finishes shutting down.
 *
 * The server's uv_async_t is released with uv_close, which completes on a
 * later loop turn: after stop, run the loop again (uv_run, any mode, e.g.
 * the usual run-until-empty before uv_loop_close) so the handle's memory is
 * freed; until then uv_loop_close returns UV_EBUSY.  While it runs, the
 * server keeps the loop alive. */
void kf_rpc_server_stop(kf_rpc_server *srv);

/* Replaces the credential table (copied; the old one is freed).  Calls
 * already past their check keep their verdict.  0 or KF_ENOMEM (the old
 * table stays).  Any thread (the table is locked), but not concurrently
 * with kf_rpc_server_stop; the coordinator calls it on its loop. */
int kf_rpc_server_set_creds(kf_rpc_server *srv, const kf_rpc_cred *creds,
                            size_t n);

/* Judges the calls waiting for a reload (opts.hold_misses) against the
 * current table: admitted or refused UNAUTHENTICATED.  set_creds does it
 * too; call this when a reload failed.  Threads as set_creds. */
void kf_rpc_server_recheck(kf_rpc_server *srv);

/* true when some call presented a token the table does not hold since the
 * last time this was asked (the owner may reload its table sooner).  Any
 * thread. */
bool kf_rpc_server_take_miss(kf_rpc_server *srv);

/* The credential a call was accepted with: its id (0: the bootstrap
 * token) and its role (one KF_ROLE_* bit). */
int64_t kf_rpc_call_cred_id(const kf_rpc_call *call);
unsigned kf_rpc_call_role(const kf_rpc_call *call);

/* Milliseconds until the caller's deadline (INT64_MAX when it set none,
 * never negative).  The wire format rounds timeouts up, so this may exceed
 * the client's timeout_ms by a few ms. */
int64_t kf_rpc_call_remaining_ms(const kf_rpc_call *call);

/* Peer address as gRPC reports it ("ipv4:127.0.0.1:5555"); owned by call.
 * "" for a call orphaned by stop whose peer was never asked before. */
const char *kf_rpc_call_peer(const kf_rpc_call *call);

/* Answers with OK and resp (packed here; the caller keeps ownership of
 * resp, which must not be NULL).  The call and its request are freed; do
 * not touch them again.  Loop thread. */
void kf_rpc_call_reply(kf_rpc_call *call, const ProtobufCMessage *resp);

/* Answers with the gRPC status mapped from a KF_E* code and `msg` as the
 * status details (NULL: kf_strerror's text).  kf_err 0 is a caller bug and
 * is sent as INTERNAL.  Frees the call.  Loop thread. */
void kf_rpc_call_fail(kf_rpc_call *call, int kf_err, const char *msg);

/* ------------------------------------------------------------- client -- */

typedef struct kf_rpc_client kf_rpc_client;

/* Opens a channel to target ("127.0.0.1:5555").  loop may be NULL, in which
 * case only the *_sync calls may be used.  Connection is lazy: a dead
 * server shows up as KF_EUNAVAIL on the first call.  Returns 0 or KF_E*.
 * With a loop, the client holds a uv_async_t on it that keeps the loop
 * alive only while async calls are in flight; gRPC's retries are off (the
 * caller owns its retry policy).  Loop thread when loop is set. */
int kf_rpc_client_open(uv_loop_t *loop, const char *target, const char *token,
                       size_t max_msg_bytes, kf_rpc_client **out, char *err,
                       size_t errlen);
/* kf_rpc_client_open over TLS when tls && tls->ca_file (the PEM files are
 * read here; a file that cannot be read is KF_EIO); plaintext otherwise. */
int kf_rpc_client_open_tls(uv_loop_t *loop, const char *target,
                           const char *token, const kf_rpc_tls *tls,
                           size_t max_msg_bytes, kf_rpc_client **out,
                           char *err, size_t errlen);

/* Closes the channel, cancels calls in flight (their callbacks still run,
 * with KF_ECANCELED, before this returns), joins the queue thread and
 * frees the client.  NULL-safe.  Loop thread, including from inside one of
 * its own callbacks; a callback run by close may neither start calls
 * (KF_ECANCELED) nor close again (ignored).  No *_sync call may be in
 * flight on another thread.  As with the server, the uv_async_t finishes
 * closing on a later loop turn. */
void kf_rpc_client_close(kf_rpc_client *c);

/* status: 0 or KF_E*; detail: server's status text (never NULL); resp: the
 * unpacked response on success, else NULL.  resp is freed after the
 * callback returns.  Loop thread. */
typedef void (*kf_rpc_done)(int status, const char *detail,
                            const ProtobufCMessage *resp, void *data);

/* Starts a call; cb runs exactly once on the loop thread unless this
 * returns an error, in which case it never runs.  req is packed before
 * return.  timeout_ms <= 0: no deadline.  Returns 0, KF_EINVAL (no loop,
 * NULL argument), KF_ECANCELED (client closing), KF_ENOMEM, KF_EINTERNAL.
 * Many calls may be in flight at once over the one channel.  Loop thread. */
int kf_rpc_client_call(kf_rpc_client *c, const char *path,
                       const ProtobufCMessage *req,
                       const ProtobufCMessageDescriptor *resp_type,
                       int timeout_ms, kf_rpc_done cb, void *data);

/* Blocking call (timeout_ms <= 0: no deadline).  On success returns 0 and
 * *resp holds a response that the caller frees with kf_rpc_free.  On failure returns KF_E* with the server's
 * status text in err.  Any thread except the client's loop thread. */
int kf_rpc_client_call_sync(kf_rpc_client *c, const char *path,
                            const ProtobufCMessage *req,
                            const ProtobufCMessageDescriptor *resp_type,
                            int timeout_ms, ProtobufCMessage **resp, char *err,
                            size_t errlen);

/* Sends raw request bytes (tests send malformed messages with it; kf
 * dashboard sends each request with its user's own token) and, on
 * success, returns the raw response bytes in *out (malloc'd, caller frees;
 * non-NULL even when *outlen is 0).  token overrides the client's token
 * when non-NULL ("" sends none).  Same threads as kf_rpc_client_call_sync. */
int kf_rpc_client_call_raw_sync(kf_rpc_client *c, const char *path,
                                const void *bytes, size_t len,
                                const char *token, int timeout_ms,
                                void **out, size_t *outlen, char *err,
                                size_t errlen);

/* Frees a response returned by kf_rpc_client_call_sync.  NULL-safe. */
void kf_rpc_free(ProtobufCMessage *msg);

/* gRPC status code <-> KF_E*, the one table of that mapping. */
int kf_rpc_status_to_err(int grpc_status);
int kf_rpc_err_to_status(int kf_err);

#endif
