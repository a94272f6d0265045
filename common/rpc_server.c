/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/rpc_server.c -- the gRPC server half of the rpc module.
 *
 * Threads.  One completion-queue thread (cq_main) blocks in
 * grpc_completion_queue_next and does everything that needs no loop state:
 * it re-posts the request for the next call, checks the bearer token from
 * the call's metadata, the method's role and the caps on calls in flight
 * (rpc_limits.c: a call counts from here until its answer is sent), only
 * then asks gRPC for the message (RECEIVING), checks its size against the
 * method's limit and unpacks it, answers refusals (UNAUTHENTICATED,
 * PERMISSION_DENIED, RESOURCE_EXHAUSTED, INVALID_ARGUMENT) itself, and
 * frees calls whose answer has been sent.
 *
 * Credentials.  Methods are registered with GRPC_SRM_PAYLOAD_NONE, so a
 * call's body is not read (beyond HTTP/2's flow-control window) until the
 * credential passed: an unauthenticated 16 MiB call costs the server a
 * window, not 16 MiB.  The check hashes the presented secret (SHA-256)
 * and looks it up in the credential table, a sorted array the loop
 * replaces whole (kf_rpc_server_set_creds) under creds_mu; the queue
 * thread only reads it under that lock.  The bootstrap token is compared
 * in constant time, as before.  Accepted calls go to
 * the loop through the handoff (rpc_internal.h), where the handler runs.
 * The handler answers with kf_rpc_call_reply / kf_rpc_call_fail, which start
 * the one send batch; its completion comes back to the queue thread, which
 * frees the call.  So the loop thread never frees a live call's gRPC state,
 * and the queue thread never touches anything the handler can see.
 *
 * Who owns a call (phase):
 *   POSTED   gRPC: a requested call waiting for a client.
 *   RECEIVING gRPC: authorized, its message being read.
 *   QUEUED   the handoff queue: unpacked, on its way to the loop.
 *   HELD     the handler, on srv->held (loop thread only).
 *   SENDING  gRPC again: the answer batch is in flight; the queue thread
 *            frees the call when it completes.
 *   ORPHAN   the handler, after kf_rpc_server_stop: the server and every
 *            gRPC object are gone but the request is still valid, because
 *            the handler may read it until it answers.  Answering only
 *            frees it.
 *
 * Stop (loop thread) in order: mark stopping (the queue thread then frees
 * new arrivals itself instead of queueing them), shut the server down and
 * cancel every call, free the queued calls, orphan the held ones, wait for
 * the shutdown tag, shut the queue down, join its thread (it drains the
 * remaining completions first), destroy.  The uv_async_t is closed with
 * uv_close, so the loop must turn once more for its memory to be freed
 * (any uv_run after stop does it).
 *
 * TLS: gRPC core's SSL server credentials over PEM files (rpc.h
 * kf_rpc_tls); without them the port is plaintext, and a port that is not
 * loopback logs a warning.
 *
 * Not here: streaming methods.
 */
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <arpa/inet.h>
#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "log.h"
#include "rpc_internal.h"
#include "rpc_limits.h"
#include "token.h"
#include "util.h"

typedef enum {
  CALL_POSTED,
  CALL_RECEIVING,
  CALL_QUEUED,
  CALL_HELD,
  CALL_SENDING,
  CALL_ORPHAN,
} call_phase;

struct kf_rpc_call {
  kf_rpc__node node;              /* handoff link; first */
  kf_rpc_server *srv;             /* NULL once ORPHAN */
  size_t method;                  /* index into srv->methods; or UNKNOWN */
  grpc_call_details details_in;   /* UNKNOWN only: which path was asked */
  call_phase phase;
  grpc_call *call;
  gpr_timespec deadline;          /* the client's, from the request */
  grpc_metadata_array md;         /* request metadata */
  grpc_byte_buffer *payload;      /* request bytes until unpacked */
  ProtobufCMessage *req;          /* unpacked request */
  grpc_byte_buffer *resp;         /* answer bytes while SENDING */
  grpc_slice details;             /* status text while SENDING */
  int cancelled;                  /* RECV_CLOSE_ON_SERVER output */
  char *peer;                     /* gpr_malloc'd, filled on first ask */
  bool admitted;                  /* counted by srv->limits until freed */
  char peer_key[KF_RPC_PEER_KEY]; /* its host, as srv->limits counts it */
  int64_t cred_id;                /* who: 0 bootstrap, else api token id */
  uint8_t hash[KF_TOKEN_HASH_LEN]; /* SHA-256 of the presented secret */
  unsigned role;                  /* KF_ROLE_* of that credential */
  struct kf_rpc_call *hprev, *hnext; /* srv->held while HELD */
};

/* Method index of the catch-all request for paths nobody registered.
 * Without it gRPC would park such calls until their deadline; with it the
 * client hears UNIMPLEMENTED at once. */
#define UNKNOWN ((size_t)-1)

typedef struct {
  kf_rpc_method m;
  void *reg;       /* grpc_server_register_method handle */
  bool check_text; /* refuse bad strings before the handler (rpc.h) */
  size_t max_bytes; /* largest request, bytes; 0: the server's limit */
} method_slot;

struct kf_rpc_server {
  uv_loop_t *loop;
  void *data;
  grpc_server *server;
  grpc_completion_queue *cq;
  pthread_t thread;
  bool thread_started;
  method_slot *methods;
  size_t n_methods;
  char *auth;     /* "Bearer <token>", the whole expected header value */
  size_t auth_len;
  kf_rpc_limits *limits; /* calls in flight (rpc_limits.h) */
  pthread_mutex_t creds_mu;
  kf_rpc_cred *creds; /* sorted by hash; guarded by creds_mu */
  size_t n_creds;
  atomic_bool cred_miss; /* an unknown token was presented */
  bool hold_misses;      /* park unknown tokens until the next reload */
  kf_rpc__node *auth_wait; /* those calls; guarded by creds_mu */
  size_t n_auth_wait;
  kf_rpc__handoff handoff;
  atomic_bool stopping;
  kf_rpc_call *held; /* handed to handlers, unanswered; loop thread only */
  kf_rpc__node *dispatching; /* taken from the handoff, handler not run yet */
  bool *gone;        /* set by stop while on_async runs handlers */
  /* shutdown_and_notify completion; distinct address = distinct tag */
  char shutdown_tag;
  pthread_mutex_t sd_mu;
  pthread_cond_t sd_cv;
  bool sd_done; /* guarded by sd_mu */
};

/* Frees a call in any phase but HELD/ORPHAN bookkeeping (callers unlink it
 * from srv->held first).  Any thread: touches only the call itself. */
static void call_free(kf_rpc_call *c) {
  /* An orphan's server (and its counts) are gone already. */
  if (c->admitted && c->srv)
    kf_rpc_limits_release(c->srv->limits, c->peer_key);
  if (c->call)
    grpc_call_unref(c->call); /* cancels it if it is still running */
  grpc_metadata_array_destroy(&c->md);
  if (c->method == UNKNOWN)
    grpc_call_details_destroy(&c->details_in);
  if (c->payload)
    grpc_byte_buffer_destroy(c->payload);
  if (c->resp)
    grpc_byte_buffer_destroy(c->resp);
  grpc_slice_unref(c->details);
  if (c->req)
    protobuf_c_message_free_unpacked(c->req, NULL);
  if (c->peer)
    gpr_free(c->peer);
  free(c);
}

/* Posts a request for the next call to method i.  Queue thread (and start,
 * before the thread exists).  Returns 0 or KF_E*. */
static int post(kf_rpc_server *srv, size_t i) {
  kf_rpc_call *c = calloc(1, sizeof *c);
  if (!c)
    return KF_ENOMEM;
  c->srv = srv;
  c->method = i;
  c->phase = CALL_POSTED;
  c->details = grpc_empty_slice();
  grpc_metadata_array_init(&c->md);
  grpc_call_error e;
  kf_rpc__tag_release(c);
  if (i == UNKNOWN) {
    grpc_call_details_init(&c->details_in);
    e = grpc_server_request_call(srv->server, &c->call, &c->details_in,
                                 &c->md, srv->cq, srv->cq, c);
  } else {
    e = grpc_server_request_registered_call(
        srv->server, srv->methods[i].reg, &c->call, &c->deadline, &c->md,
        NULL /* PAYLOAD_NONE: the body is asked for after the check */,
        srv->cq, srv->cq, c);
  }
  if (e != GRPC_CALL_OK) {
    call_free(c);
    kf_log(KF_LOG_ERROR, "rpc: cannot request calls for %s: %s",
           i == UNKNOWN ? "unknown methods" : srv->methods[i].m.path,
           grpc_call_error_to_string(e));
    return KF_EINTERNAL;
  }
  return 0;
}

/* Starts the one batch that answers a unary call.  Any thread that owns c
 * (queue thread for refusals, loop thread for handler answers); the batch's
 * completion frees c on the queue thread. */
static void send_answer(kf_rpc_call *c, grpc_status_code st,
                        const char *msg) {
  c->phase = CALL_SENDING;
  if (msg && *msg)
    c->details = grpc_slice_from_copied_string(msg);
  grpc_op ops[4];
  memset(ops, 0, sizeof ops);
  size_t n = 0;
  ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
  if (c->resp) {
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = c->resp;
  }
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.status = st;
  ops[n++].data.send_status_from_server.status_details =
      GRPC_SLICE_LENGTH(c->details) ? &c->details : NULL;
  ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
  grpc_call *call = c->call; /* c is the queue thread's once released */
  kf_rpc__tag_release(c);
  grpc_call_error e = grpc_call_start_batch(call, ops, n, c, NULL);
  if (e != GRPC_CALL_OK) {
    /* No completion will come: free here.  The unref cancels the call, so
     * the client still hears something. */
    kf_log(KF_LOG_ERROR, "rpc: cannot answer call: %s",
           grpc_call_error_to_string(e));
    call_free(c);
  }
}

static int cred_cmp(const void *a, const void *b) {
  return memcmp(((const kf_rpc_cred *)a)->hash, ((const kf_rpc_cred *)b)->hash,
                KF_TOKEN_HASH_LEN);
}

/* At most this many calls wait for a credential reload at once; beyond
 * it an unknown token is refused at once.  Such a call holds its
 * metadata only (its body is not read), a few hundred bytes. */
#define MAX_AUTH_WAIT 64

enum { AUTH_REFUSED, AUTH_OK, AUTH_WAITING };

/* Looks c->hash up in the table; true with c->cred_id/role set.  Caller
 * holds creds_mu. */
static bool lookup_locked(kf_rpc_server *srv, kf_rpc_call *c) {
  kf_rpc_cred key;
  memcpy(key.hash, c->hash, sizeof key.hash);
  const kf_rpc_cred *hit =
      srv->n_creds ? bsearch(&key, srv->creds, srv->n_creds,
                             sizeof *srv->creds, cred_cmp)
                   : NULL;
  if (!hit)
    return false;
  c->cred_id = hit->id;
  c->role = hit->role;
  return true;
}

/* Who presented md's bearer token: AUTH_OK with c->cred_id and c->role
 * set; AUTH_REFUSED when none was presented or it is unknown; or, with
 * hold_misses, AUTH_WAITING: an unknown token parks the call on
 * srv->auth_wait until the owner's next set_creds / recheck judges it
 * again (so a credential created a moment ago works at once).  The
 * bootstrap token is compared in constant time (how long a wrong guess
 * takes to reject must not say how much of it was right); table entries
 * are compared by SHA-256, which says nothing useful about the secret.
 * Queue thread. */
static int authenticate(kf_rpc_server *srv, kf_rpc_call *c) {
  const grpc_metadata_array *md = &c->md;
  for (size_t i = 0; i < md->count; i++) {
    if (grpc_slice_str_cmp(md->metadata[i].key, "authorization") != 0)
      continue;
    grpc_slice v = md->metadata[i].value;
    size_t len = GRPC_SLICE_LENGTH(v);
    const uint8_t *p = GRPC_SLICE_START_PTR(v);
    if (len == srv->auth_len) {
      unsigned char diff = 0;
      for (size_t k = 0; k < srv->auth_len; k++)
        diff |= (unsigned char)(p[k] ^ (uint8_t)srv->auth[k]);
      if (diff == 0) {
        c->cred_id = 0;
        c->role = KF_ROLE_ADMIN;
        return AUTH_OK;
      }
    }
    if (len <= 7 || len > 7 + KF_TOKEN_MAX || memcmp(p, "Bearer ", 7) != 0)
      return AUTH_REFUSED;
    if (kf_token_hash((const char *)p + 7, len - 7, c->hash) != 0)
      return AUTH_REFUSED;
    int verdict = AUTH_REFUSED;
    pthread_mutex_lock(&srv->creds_mu);
    if (lookup_locked(srv, c)) {
      verdict = AUTH_OK;
    } else if (srv->hold_misses && srv->n_auth_wait < MAX_AUTH_WAIT &&
               !atomic_load(&srv->stopping)) {
      /* stopping is read under creds_mu, which stop takes after setting
       * it to drain this list: a call parked here is always drained. */
      /* Parked and flagged under one lock: a reload that swaps the table
       * after this sees the call, one before it left the flag set. */
      c->node.next = srv->auth_wait;
      srv->auth_wait = &c->node;
      srv->n_auth_wait++;
      verdict = AUTH_WAITING;
    }
    if (verdict != AUTH_OK)
      atomic_store(&srv->cred_miss, true);
    pthread_mutex_unlock(&srv->creds_mu);
    return verdict;
  }
  return AUTH_REFUSED;
}

/* The role names a method allows, for PERMISSION_DENIED's text. */
static void roles_text(unsigned roles, char *out, size_t len) {
  snprintf(out, len, "%s%sadmin", roles & KF_ROLE_WORKER ? "worker, " : "",
           roles & KF_ROLE_SUBMITTER ? "submitter, " : "");
}

/* The call's message has arrived (or failed to): unpack it and hand it to
 * the loop.  Queue thread. */
static void on_message(kf_rpc_server *srv, kf_rpc_call *c, bool ok) {
  if (!ok || atomic_load(&srv->stopping)) {
    /* The client went away mid-message, or we are stopping. */
    call_free(c);
    return;
  }
  const method_slot *m = &srv->methods[c->method];
  char msg[320];
  /* The method's size limit before unpacking: the unpacked request is
   * several times the bytes. */
  size_t len = c->payload ? grpc_byte_buffer_length(c->payload) : 0;
  if (m->max_bytes && len > m->max_bytes) {
    snprintf(msg, sizeof msg, "request of %zu bytes is over the %zu-byte "
             "limit of %s", len, m->max_bytes, m->m.path);
    send_answer(c, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
    return;
  }
  c->req = kf_rpc__unpack_request(c->payload, m->m.request, m->check_text,
                                  msg, sizeof msg);
  if (c->payload) {
    grpc_byte_buffer_destroy(c->payload);
    c->payload = NULL;
  }
  if (!c->req) {
    send_answer(c, GRPC_STATUS_INVALID_ARGUMENT, msg);
    return;
  }
  c->phase = CALL_QUEUED;
  kf_rpc__handoff_push(&srv->handoff, &c->node);
}

static void admit(kf_rpc_server *srv, kf_rpc_call *c);

/* A requested call arrived (queue thread). */
static void on_arrival(kf_rpc_server *srv, kf_rpc_call *c, bool ok) {
  if (!ok) {
    /* The server is shutting down: the posted request is returned empty. */
    call_free(c);
    return;
  }
  bool stopping = atomic_load(&srv->stopping);
  /* Re-post first so the next client is not kept waiting on our checks. */
  if (!stopping && post(srv, c->method) != 0)
    kf_log(KF_LOG_ERROR, "rpc: %s stops accepting calls",
           c->method == UNKNOWN ? "unknown methods"
                                : srv->methods[c->method].m.path);
  if (stopping) {
    call_free(c);
    return;
  }
  if (c->method == UNKNOWN) {
    char *path = grpc_slice_to_c_string(c->details_in.method);
    char msg[200];
    snprintf(msg, sizeof msg, "unknown method %s", path ? path : "?");
    gpr_free(path);
    send_answer(c, GRPC_STATUS_UNIMPLEMENTED, msg);
    return;
  }
  /* Judged from the metadata alone: nothing of the body has been asked
   * for yet, so a refused call never costs its message's memory. */
  int verdict = authenticate(srv, c);
  if (verdict == AUTH_REFUSED)
    send_answer(c, GRPC_STATUS_UNAUTHENTICATED, "missing or wrong token");
  else if (verdict == AUTH_OK)
    admit(srv, c);
}

/* An authenticated call: refused PERMISSION_DENIED when its role may not
 * call the method, else its message is asked for (on_message goes on).
 * Queue thread, or the loop thread for a call that waited for a reload;
 * either way the only owner of c. */
static void admit(kf_rpc_server *srv, kf_rpc_call *c) {
  const method_slot *m = &srv->methods[c->method];
  char msg[320];
  if (!(c->role & (m->m.roles | KF_ROLE_ADMIN))) {
    const char *name = strrchr(m->m.path, '/');
    char allowed[64];
    roles_text(m->m.roles, allowed, sizeof allowed);
    snprintf(msg, sizeof msg, "a %s credential may not call %s (allowed: %s)",
             kf_token_role_name(c->role), name ? name + 1 : m->m.path,
             allowed);
    send_answer(c, GRPC_STATUS_PERMISSION_DENIED, msg);
    return;
  }
  /* Calls in flight are counted from here, before the body is asked
   * for: the body is where the memory goes. */
  if (!c->peer) c->peer = grpc_call_get_peer(c->call);
  kf_rpc_limits_peer_key(c->peer, c->peer_key);
  char why[256];
  if (kf_rpc_limits_admit(srv->limits, c->peer_key, why, sizeof why) != 0) {
    snprintf(msg, sizeof msg, "%s%s", KF_RPC__BUSY_PREFIX, why);
    send_answer(c, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
    return;
  }
  c->admitted = true;
  c->phase = CALL_RECEIVING;
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_MESSAGE;
  op.data.recv_message.recv_message = &c->payload;
  /* c goes to gRPC, and comes back to the queue thread: from the loop
   * thread too, for a call that waited for a credential reload. */
  kf_rpc__tag_release(c);
  grpc_call_error e = grpc_call_start_batch(c->call, &op, 1, c, NULL);
  if (e != GRPC_CALL_OK) {
    kf_log(KF_LOG_ERROR, "rpc: cannot receive message: %s",
           grpc_call_error_to_string(e));
    call_free(c);
  }
}

static void *cq_main(void *arg) {
  kf_rpc_server *srv = arg;
  for (;;) {
    grpc_event ev = grpc_completion_queue_next(
        srv->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN)
      break;
    if (ev.type != GRPC_OP_COMPLETE)
      continue; /* GRPC_QUEUE_TIMEOUT cannot happen with no deadline */
    if (ev.tag == &srv->shutdown_tag) {
      pthread_mutex_lock(&srv->sd_mu);
      srv->sd_done = true;
      pthread_cond_signal(&srv->sd_cv);
      pthread_mutex_unlock(&srv->sd_mu);
      continue;
    }
    kf_rpc_call *c = ev.tag;
    kf_rpc__tag_acquire(c);
    if (c->phase == CALL_POSTED)
      on_arrival(srv, c, ev.success);
    else if (c->phase == CALL_RECEIVING)
      on_message(srv, c, ev.success);
    else /* CALL_SENDING: answered (or failed to be); either way done */
      call_free(c);
  }
  return NULL;
}

static void held_link(kf_rpc_server *srv, kf_rpc_call *c) {
  c->hprev = NULL;
  c->hnext = srv->held;
  if (srv->held)
    srv->held->hprev = c;
  srv->held = c;
}

static void held_unlink(kf_rpc_server *srv, kf_rpc_call *c) {
  if (c->hprev)
    c->hprev->hnext = c->hnext;
  else
    srv->held = c->hnext;
  if (c->hnext)
    c->hnext->hprev = c->hprev;
  c->hprev = c->hnext = NULL;
}

/* Loop thread: run the handlers for everything the queue thread handed
 * over since the last wakeup. */
static void on_async(uv_async_t *h) {
  kf_rpc_server *srv = h->data;
  bool gone = false;
  srv->gone = &gone;
  /* The batch lives on srv, not in a local, so a handler that stops the
   * server lets stop free the calls it has not reached. */
  srv->dispatching = kf_rpc__handoff_take(&srv->handoff);
  while (srv->dispatching) {
    kf_rpc_call *c = (kf_rpc_call *)srv->dispatching;
    /* Advance now: the handler may answer, and the queue thread may free c
     * before the handler even returns. */
    srv->dispatching = c->node.next;
    c->phase = CALL_HELD;
    held_link(srv, c);
    const kf_rpc_method *m = &srv->methods[c->method].m;
    m->handler(c, c->req, srv->data);
    if (gone)
      return;
  }
  srv->gone = NULL;
}

/* Undoes whatever start got as far as.  Loop thread. */
static void server_free(kf_rpc_server *srv) {
  if (srv->server)
    grpc_server_destroy(srv->server);
  if (srv->cq)
    grpc_completion_queue_destroy(srv->cq);
  kf_rpc__handoff_close(&srv->handoff);
  pthread_cond_destroy(&srv->sd_cv);
  pthread_mutex_destroy(&srv->sd_mu);
  pthread_mutex_destroy(&srv->creds_mu);
  free(srv->creds);
  free(srv->methods);
  free(srv->auth);
  kf_rpc_limits_free(srv->limits);
  free(srv);
  grpc_shutdown();
}

/* true when addr ("host:port", "[v6]:port") names a loopback host only. */
static bool is_loopback(const char *addr) {
  char host[256];
  const char *colon = strrchr(addr, ':');
  size_t n = colon ? (size_t)(colon - addr) : strlen(addr);
  if (n >= sizeof host)
    return false;
  memcpy(host, addr, n);
  host[n] = '\0';
  if (!strcmp(host, "localhost"))
    return true;
  char *h = host;
  if (h[0] == '[' && n >= 2 && h[n - 1] == ']') {
    h[n - 1] = '\0';
    h++;
  }
  struct in_addr a4;
  struct in6_addr a6;
  if (inet_pton(AF_INET, h, &a4) == 1)
    return (ntohl(a4.s_addr) >> 24) == 127;
  if (inet_pton(AF_INET6, h, &a6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&a6);
  return false; /* a name, "0.0.0.0", "[::]": reachable from elsewhere */
}

/* Server credentials: SSL over the PEM files when tls->cert_file is set
 * (requiring client certificates signed by tls->ca_file when that is set
 * too), else insecure.  NULL with err filled on failure. */
static grpc_server_credentials *server_creds(const kf_rpc_tls *tls, char *err,
                                             size_t errlen) {
  if (!tls || !tls->cert_file || !*tls->cert_file) {
    grpc_server_credentials *c = grpc_insecure_server_credentials_create();
    if (!c)
      kf_seterr(KF_EINTERNAL, err, errlen, "rpc server: no credentials");
    return c;
  }
  char *cert = NULL, *key = NULL, *ca = NULL;
  size_t len;
  grpc_server_credentials *c = NULL;
  if (!tls->key_file || !*tls->key_file) {
    kf_seterr(KF_EINVAL, err, errlen, "rpc server: --tls-cert needs --tls-key");
    return NULL;
  }
  if (kf_read_file(tls->cert_file, 1u << 20, &cert, &len, err, errlen) ||
      kf_read_file(tls->key_file, 1u << 20, &key, &len, err, errlen))
    goto out;
  if (tls->ca_file && *tls->ca_file &&
      kf_read_file(tls->ca_file, 1u << 20, &ca, &len, err, errlen))
    goto out;
  grpc_ssl_pem_key_cert_pair kp = {.private_key = key, .cert_chain = cert};
  c = grpc_ssl_server_credentials_create_ex(
      ca, &kp, 1,
      ca ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
         : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
      NULL);
  if (!c)
    kf_seterr(KF_EINVAL, err, errlen, "rpc server: bad TLS certificate/key");
out:
  free(cert);
  free(ca);
  if (key) {
    memset(key, 0, strlen(key)); /* a private key: do not leave it around */
    free(key);
  }
  return c;
}

int kf_rpc_server_set_creds(kf_rpc_server *srv, const kf_rpc_cred *creds,
                            size_t n) {
  kf_rpc_cred *copy = NULL;
  if (n) {
    copy = malloc(n * sizeof *copy);
    if (!copy)
      return KF_ENOMEM;
    memcpy(copy, creds, n * sizeof *copy);
    qsort(copy, n, sizeof *copy, cred_cmp);
  }
  pthread_mutex_lock(&srv->creds_mu);
  kf_rpc_cred *old = srv->creds;
  srv->creds = copy;
  srv->n_creds = n;
  pthread_mutex_unlock(&srv->creds_mu);
  free(old);
  kf_rpc_server_recheck(srv);
  return 0;
}

void kf_rpc_server_recheck(kf_rpc_server *srv) {
  pthread_mutex_lock(&srv->creds_mu);
  kf_rpc__node *n = srv->auth_wait;
  srv->auth_wait = NULL;
  srv->n_auth_wait = 0;
  pthread_mutex_unlock(&srv->creds_mu);
  while (n) {
    kf_rpc_call *c = (kf_rpc_call *)n;
    n = n->next;
    c->node.next = NULL;
    if (atomic_load(&srv->stopping)) {
      call_free(c);
      continue;
    }
    pthread_mutex_lock(&srv->creds_mu);
    bool ok = lookup_locked(srv, c);
    pthread_mutex_unlock(&srv->creds_mu);
    if (ok)
      admit(srv, c);
    else
      send_answer(c, GRPC_STATUS_UNAUTHENTICATED, "missing or wrong token");
  }
}

bool kf_rpc_server_take_miss(kf_rpc_server *srv) {
  return atomic_exchange(&srv->cred_miss, false);
}

int64_t kf_rpc_call_cred_id(const kf_rpc_call *call) { return call->cred_id; }

unsigned kf_rpc_call_role(const kf_rpc_call *call) { return call->role; }

int kf_rpc_server_start(const kf_rpc_server_opts *opts, kf_rpc_server **out,
                        int *bound_port, char *err, size_t errlen) {
  if (!opts || !opts->loop || !opts->listen_addr || !opts->token ||
      !*opts->token || (opts->n_methods && !opts->methods))
    return kf_seterr(KF_EINVAL, err, errlen,
                     "rpc server: loop, listen address and token are required");
  for (size_t i = 0; i < opts->n_methods; i++)
    if (!opts->methods[i].path || !opts->methods[i].request ||
        !opts->methods[i].handler)
      return kf_seterr(KF_EINVAL, err, errlen,
                       "rpc server: method %zu lacks path, type or handler", i);

  kf_rpc_server *srv = calloc(1, sizeof *srv);
  if (!srv)
    return kf_seterr(KF_ENOMEM, err, errlen, "rpc server: out of memory");
  /* From here on server_free undoes everything, including this. */
  grpc_init();
  srv->loop = opts->loop;
  srv->data = opts->data;
  atomic_init(&srv->stopping, false);
  pthread_mutex_init(&srv->sd_mu, NULL);
  pthread_cond_init(&srv->sd_cv, NULL);
  pthread_mutex_init(&srv->creds_mu, NULL);
  atomic_init(&srv->cred_miss, false);
  int rc;
  if ((rc = kf_rpc__handoff_init(&srv->handoff, opts->loop, on_async, srv))) {
    /* handoff_close is a no-op on a handoff that never got its handle */
    server_free(srv);
    return kf_seterr(rc, err, errlen, "rpc server: cannot create async");
  }
  if (kf_rpc_limits_new(opts->max_calls, opts->max_calls_per_peer,
                        &srv->limits) != 0) {
    server_free(srv);
    return kf_seterr(KF_ENOMEM, err, errlen, "rpc server: out of memory");
  }
  srv->auth_len = strlen("Bearer ") + strlen(opts->token);
  srv->auth = malloc(srv->auth_len + 1);
  srv->methods = calloc(opts->n_methods ? opts->n_methods : 1,
                        sizeof *srv->methods);
  if (!srv->auth || !srv->methods) {
    server_free(srv);
    return kf_seterr(KF_ENOMEM, err, errlen, "rpc server: out of memory");
  }
  snprintf(srv->auth, srv->auth_len + 1, "Bearer %s", opts->token);
  if ((rc = kf_rpc_server_set_creds(srv, opts->creds, opts->n_creds))) {
    server_free(srv);
    return kf_seterr(rc, err, errlen, "rpc server: out of memory");
  }
  srv->n_methods = opts->n_methods;
  srv->hold_misses = opts->hold_misses;

  grpc_arg args[4];
  size_t nargs = kf_rpc__msg_limit_args(opts->max_msg_bytes, args);
  /* No BDP probing: HTTP/2 then keeps each stream's receive window at its
   * 64 KiB default instead of growing it to megabytes, so a call whose
   * body we never ask for (refused from its metadata) costs at most a
   * window.  Measured (scripts/bench-unauth, 256 threads of 16 MiB
   * unauthenticated calls): coordinator peak RSS 22 MB without probing,
   * 142-197 MB with it.  The price: a large message crosses a long,
   * fat link at 64 KiB per round trip. */
  args[nargs++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                             .key = (char *)GRPC_ARG_HTTP2_BDP_PROBE,
                             .value.integer = 0};
  /* The transport's memory, all connections together.  Without a quota
   * gRPC receives every accepted call's message whole, up to
   * max_msg_bytes, however small the method's own limit: 64 authenticated
   * 12 MB Heartbeats at once took the coordinator to 684 MB; under a 64
   * MiB quota, 112 MB (scripts/bench-limits, docs/security.md). */
  grpc_resource_quota *quota = NULL;
  if (opts->memory_quota_bytes) {
    quota = grpc_resource_quota_create("kf-rpc-server");
    if (!quota) {
      server_free(srv);
      return kf_seterr(KF_ENOMEM, err, errlen, "rpc server: out of memory");
    }
    grpc_resource_quota_resize(quota, opts->memory_quota_bytes);
    args[nargs++] = (grpc_arg){
        .type = GRPC_ARG_POINTER,
        .key = (char *)GRPC_ARG_RESOURCE_QUOTA,
        .value.pointer = {quota, grpc_resource_quota_arg_vtable()}};
  }
  grpc_channel_args cargs = {.num_args = nargs, .args = args};
  srv->cq = grpc_completion_queue_create_for_next(NULL);
  srv->server = srv->cq ? grpc_server_create(&cargs, NULL) : NULL;
  if (quota)
    grpc_resource_quota_unref(quota); /* the server holds its own ref */
  if (!srv->server) {
    server_free(srv);
    return kf_seterr(KF_EINTERNAL, err, errlen, "rpc server: create failed");
  }
  for (size_t i = 0; i < opts->n_methods; i++) {
    srv->methods[i].m = opts->methods[i];
    srv->methods[i].check_text = opts->check_text;
    srv->methods[i].max_bytes =
        opts->max_request_bytes ? opts->max_request_bytes[i] : 0;
    for (size_t k = 0; opts->raw_text && opts->raw_text[k]; k++)
      if (strcmp(opts->raw_text[k], opts->methods[i].path) == 0)
        srv->methods[i].check_text = false;
    srv->methods[i].reg = grpc_server_register_method(
        srv->server, opts->methods[i].path, NULL,
        GRPC_SRM_PAYLOAD_NONE, 0);
    if (!srv->methods[i].reg) {
      server_free(srv);
      return kf_seterr(KF_EINVAL, err, errlen,
                       "rpc server: cannot register %s (duplicate?)",
                       opts->methods[i].path);
    }
  }
  grpc_server_register_completion_queue(srv->server, srv->cq, NULL);
  grpc_server_credentials *creds = server_creds(opts->tls, err, errlen);
  if (!creds) {
    server_free(srv);
    return KF_EIO;
  }
  int port = grpc_server_add_http2_port(srv->server, opts->listen_addr, creds);
  grpc_server_credentials_release(creds);
  if (port <= 0) {
    server_free(srv);
    return kf_seterr(KF_EIO, err, errlen, "rpc server: cannot listen on %s",
                     opts->listen_addr);
  }
  if (!(opts->tls && opts->tls->cert_file) && !is_loopback(opts->listen_addr))
    kf_log(KF_LOG_WARN, "rpc: listening on %s without TLS: tokens and results"
           " cross the network in the clear (pass --tls-cert/--tls-key)",
           opts->listen_addr);
  grpc_server_start(srv->server);

  /* The server is live: from here a failure must go through the full stop
   * sequence, since gRPC may already hold posted requests. */
  for (size_t i = 0; i <= srv->n_methods; i++) {
    if ((rc = post(srv, i < srv->n_methods ? i : UNKNOWN)) != 0) {
      kf_rpc_server_stop(srv);
      return kf_seterr(rc, err, errlen, "rpc server: cannot accept calls");
    }
  }
  if (pthread_create(&srv->thread, NULL, cq_main, srv) != 0) {
    kf_rpc_server_stop(srv);
    return kf_seterr(KF_EINTERNAL, err, errlen,
                     "rpc server: cannot start queue thread");
  }
  srv->thread_started = true;
  if (bound_port)
    *bound_port = port;
  *out = srv;
  return 0;
}

void kf_rpc_server_stop(kf_rpc_server *srv) {
  if (!srv)
    return;
  atomic_store(&srv->stopping, true);
  if (srv->gone)
    *srv->gone = true; /* stopped from inside a handler */
  grpc_server_shutdown_and_notify(srv->server, srv->cq, &srv->shutdown_tag);
  grpc_server_cancel_all_calls(srv->server);

  /* Calls queued for the loop but never handled: nobody else will see them.
   * The queue thread may still add a few it unpacked before seeing
   * `stopping`; the second take after the join catches those. */
  kf_rpc__node *n = srv->dispatching;
  srv->dispatching = NULL;
  while (n) {
    kf_rpc__node *next = n->next;
    call_free((kf_rpc_call *)n);
    n = next;
  }
  n = kf_rpc__handoff_take(&srv->handoff);
  while (n) {
    kf_rpc__node *next = n->next;
    call_free((kf_rpc_call *)n);
    n = next;
  }
  /* Calls waiting for a credential reload: nobody will judge them now. */
  pthread_mutex_lock(&srv->creds_mu);
  n = srv->auth_wait;
  srv->auth_wait = NULL;
  srv->n_auth_wait = 0;
  pthread_mutex_unlock(&srv->creds_mu);
  while (n) {
    kf_rpc__node *next = n->next;
    call_free((kf_rpc_call *)n);
    n = next;
  }
  /* Calls a handler holds: drop every gRPC reference now (the server cannot
   * finish shutting down while they live), keep the request the handler
   * may still read, and let its eventual answer free the rest. */
  while (srv->held) {
    kf_rpc_call *c = srv->held;
    held_unlink(srv, c);
    grpc_call_unref(c->call);
    c->call = NULL;
    grpc_metadata_array_destroy(&c->md);
    grpc_metadata_array_init(&c->md); /* empty: nothing to free later */
    if (c->admitted)
      kf_rpc_limits_release(srv->limits, c->peer_key);
    c->admitted = false;
    c->srv = NULL;
    c->phase = CALL_ORPHAN;
  }

  if (srv->thread_started) {
    pthread_mutex_lock(&srv->sd_mu);
    while (!srv->sd_done)
      pthread_cond_wait(&srv->sd_cv, &srv->sd_mu);
    pthread_mutex_unlock(&srv->sd_mu);
    grpc_completion_queue_shutdown(srv->cq);
    pthread_join(srv->thread, NULL);
  } else {
    /* start failed before the thread existed: drain here instead */
    grpc_completion_queue_shutdown(srv->cq);
    for (;;) {
      grpc_event ev = grpc_completion_queue_next(
          srv->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
      if (ev.type == GRPC_QUEUE_SHUTDOWN)
        break;
      if (ev.type == GRPC_OP_COMPLETE && ev.tag != &srv->shutdown_tag) {
        kf_rpc__tag_acquire(ev.tag);
        call_free(ev.tag);
      }
    }
  }
  n = kf_rpc__handoff_take(&srv->handoff);
  while (n) {
    kf_rpc__node *next = n->next;
    call_free((kf_rpc_call *)n);
    n = next;
  }
  server_free(srv);
}

int64_t kf_rpc_call_remaining_ms(const kf_rpc_call *call) {
  gpr_timespec d = gpr_convert_clock_type(call->deadline, GPR_CLOCK_MONOTONIC);
  if (d.tv_sec == INT64_MAX) /* gpr_inf_future: no deadline */
    return INT64_MAX;
  gpr_timespec left = gpr_time_sub(d, gpr_now(GPR_CLOCK_MONOTONIC));
  if (left.tv_sec < 0)
    return 0;
  /* A client may send a deadline years away; clamp instead of overflow. */
  if (left.tv_sec > INT64_MAX / 1000 - 1)
    return INT64_MAX;
  return (int64_t)left.tv_sec * 1000 + left.tv_nsec / 1000000;
}

const char *kf_rpc_call_peer(const kf_rpc_call *call) {
  /* Asked rarely (logs), so fetched on demand; the cache is the only thing
   * a "const" accessor writes, and only the loop thread calls it. */
  kf_rpc_call *c = (kf_rpc_call *)call;
  if (!c->peer && c->call)
    c->peer = grpc_call_get_peer(c->call);
  return c->peer ? c->peer : "";
}

/* Common front of reply and fail: true when the call must still be
 * answered, false when it was orphaned by stop and has just been freed. */
static bool take_held(kf_rpc_call *c) {
  if (c->phase == CALL_ORPHAN) {
    call_free(c);
    return false;
  }
  held_unlink(c->srv, c);
  return true;
}

void kf_rpc_call_reply(kf_rpc_call *call, const ProtobufCMessage *resp) {
  assert(resp); /* a reply without a message is kf_rpc_call_fail's job */
  if (!take_held(call))
    return;
  call->resp = kf_rpc__pack(resp);
  if (!call->resp) {
    send_answer(call, GRPC_STATUS_INTERNAL, "cannot pack response");
    return;
  }
  send_answer(call, GRPC_STATUS_OK, NULL);
}

void kf_rpc_call_fail(kf_rpc_call *call, int kf_err, const char *msg) {
  if (!take_held(call))
    return;
  /* Failing with 0 is a caller bug; OK without a message would reach the
   * client as a protocol error, so say plainly that something broke. */
  grpc_status_code st = kf_err ? (grpc_status_code)kf_rpc_err_to_status(kf_err)
                               : GRPC_STATUS_INTERNAL;
  if (kf_err == KF_EBUSY) { /* the client tells it from KF_ETOOBIG by this */
    char text[512];
    snprintf(text, sizeof text, "%s%s", KF_RPC__BUSY_PREFIX,
             msg ? msg : kf_strerror(kf_err));
    send_answer(call, st, text);
    return;
  }
  send_answer(call, st, msg ? msg : kf_strerror(kf_err));
}
