/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/coord.h -- the coordinator's state and its internal API.
 *
 * Process model: one libuv loop thread owns every field of kf_coord.  The
 * rpc module's queue thread hands calls to it; PostgreSQL work runs on one
 * libuv work thread at a time (a "batch"), which reads the ops it was given
 * and the store, and nothing else.  Calls that arrive while a batch runs
 * wait in `pending` and go out together in the next batch, so the database
 * sees a few large transactions instead of one per call.
 *
 * Files: coord.c (lifecycle, cron, signals, worker registry),
 * coord_rpc.c (request validation, parking, answers), coord_db.c (the
 * batch: what runs on the work thread and how results come back).
 */
#ifndef KF_COORD_H
#define KF_COORD_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "kernelfleet.pb-c.h"
#include "metrics.h"
#include "rpc.h"
#include "store.h"
#include "store_metrics.h"

typedef struct {
  const char *db_url;        /* libpq conninfo */
  const char *listen_addr;   /* host:port; port 0 picks one */
  const char *token;         /* bootstrap credential: role admin, id 0 */
  const char *tls_cert;      /* PEM files; cert+key turn TLS on */
  const char *tls_key;
  const char *tls_client_ca; /* set: require client certs signed by it */
  const char *port_file;     /* if set, the bound port is written here */
  uint32_t lease_ttl_ms;     /* lease length without heartbeat */
  uint32_t heartbeat_ms;     /* interval told to workers */
  uint32_t reap_ms;          /* how often expired leases are requeued */
  uint32_t max_attempts;     /* default for tasks that do not say */
  size_t max_msg_bytes;      /* gRPC message limit, bytes */
  size_t rpc_memory_bytes;   /* gRPC transport memory quota, bytes */
  uint32_t max_wait_ms;      /* longest long poll we hold */
  /* campaign search (search.h kf_search_opts) */
  uint32_t eval_per_slot;    /* eval tasks queued or running per worker
                              * slot, count */
  uint32_t eval_timeout_ms;  /* each eval task's wall-clock budget, ms */
  uint32_t eval_attempts;    /* attempts per eval task, count */
  /* bounded resources (docs/security.md, Resources) */
  uint32_t max_calls;          /* calls in flight in all, count; 0: no cap */
  uint32_t max_calls_per_peer; /* calls in flight from one host, count */
  uint32_t max_queued_ops;     /* ops waiting for the database, in a batch
                                * or parked as long polls, count */
  uint32_t db_statement_ms;    /* statement_timeout of every session, ms */
  uint32_t db_lock_ms;         /* lock_timeout of every session, ms */
  const char *metrics_listen;  /* HOST:PORT of /metrics; NULL: off */
  const char *metrics_port_file; /* if set, its bound port is written here */
} kf_coord_config;

typedef enum {
  KF_OP_REGISTER,
  KF_OP_HEARTBEAT,
  KF_OP_LEASE,
  KF_OP_REPORT,
  KF_OP_SUBMIT,
  KF_OP_STATUS,
  KF_OP_CAMPAIGN, /* a campaign RPC (coord_campaign.c) */
  KF_OP_VIEW,     /* a dashboard view RPC (coord_views.c) */
} kf_coord_op_kind;

/* A worker as the loop knows it; filled on RegisterWorker or, after a
 * restart, from the store on first contact. */
typedef struct {
  int64_t id;
  int64_t device_class_id;
  char **kinds; /* task kinds it runs */
  size_t n_kinds;
  char name[64];
  uint64_t last_seen_ms;
  uint32_t leased_hint; /* tasks handed out by this coordinator run */
  int64_t cred_id;      /* the credential it registered with (0: bootstrap) */
} kf_coord_worker;

/* One call on its way through a batch.  The request stays owned by the
 * call; everything the work thread writes is in the `out` fields. */
typedef struct kf_coord_op {
  struct kf_coord_op *next;
  struct kf_coord *co;      /* counts it in n_ops until it is freed */
  kf_coord_op_kind kind;
  kf_rpc_call *call;
  const ProtobufCMessage *req;
  uint64_t deadline_ms;     /* LEASE: answer empty at this time */
  uint64_t t0_ns;           /* kf_now_ns when the loop took the call */
  /* kf_now_ms after which the op must not reach the database: the
   * caller's deadline (LEASE: minus the margin a grant needs to reach
   * it); UINT64_MAX when it set none.  Read by the work thread too. */
  uint64_t give_up_ms;
  bool gave_up;             /* LEASE: dropped on the work thread, answer
                             * empty */
  bool needs_lookup;        /* worker unknown to the loop: ask the store */
  int64_t cred_id;          /* the caller's credential (kf_rpc_call_cred_id) */
  int64_t bound_cred;       /* lookup: the worker's registered credential */
  bool *hb_live;            /* HEARTBEAT: per listed lease, still held */
  kf_lease_req lease;       /* LEASE: copied from the registry */
  /* filled on the work thread */
  int rc;                   /* 0 or KF_E* */
  char err[512];
  int64_t new_id;           /* REGISTER: worker id */
  int64_t new_dc_id;        /* REGISTER/lookup: device class id */
  char kinds_csv[512];      /* lookup: worker's task kinds */
  kf_verdict *verdicts;     /* REPORT */
  kf_report_note *notes;    /* REPORT: why INVALID, per result */
  int64_t *ids;             /* SUBMIT */
  kf_task_counts counts;    /* STATUS */
  kf_leased_task **granted; /* LEASE: pointers into the batch's grant */
  size_t n_granted;
  struct kf_coord__camp *camp; /* CAMPAIGN: inputs and results */
  struct kf_coord__view *view; /* VIEW: what the store read */
} kf_coord_op;

typedef struct kf_coord {
  uv_loop_t *loop;
  kf_coord_config cfg;
  kf_rpc_server *rpc;
  int port;
  kf_store *store; /* touched only by the batch in flight */

  kf_coord_op *pending;    /* ops for the next batch, in arrival order */
  kf_coord_op *parked;     /* long polls waiting for tasks */
  size_t n_ops;            /* ops alive (pending, parked, in the batch) */
  bool batch_running;
  bool want_reap;
  bool maybe_tasks;        /* a lease attempt could find something */
  bool campaigns_active;   /* some campaign may be running: search steps */
  bool want_search;        /* run a search step in the next batch */
  bool want_creds;         /* reload the credential table in the next batch */
  /* The valid credentials' ids as last loaded, sorted: a long poll
   * admitted before its credential was revoked is refused here rather
   * than granted tasks (kf_coord__cred_valid). */
  int64_t *cred_ids;
  size_t n_cred_ids;
  uint64_t last_creds_ms;
  uint64_t last_search_ms;
  bool stopping;
  uint64_t last_reap_ms, last_poll_ms;

  kf_coord_worker *workers; /* open-addressing table keyed by id */
  size_t workers_cap, workers_len;

  uv_timer_t cron;
  uv_check_t check;
  uv_idle_t idle;
  uv_signal_t sigint, sigterm;

  /* counters for the log line the cron prints */
  uint64_t n_leased, n_reported, n_batches;

  /* /metrics (coord_metrics.c), loop thread only */
  struct kf_httpd *httpd;
  kf_metrics_hist lease_hist;  /* LeaseTasks answered with tasks */
  uint64_t n_lease_empty;      /* LeaseTasks answered with none */
  kf_store_metrics msnap;      /* the last store snapshot */
  bool msnap_ok;               /* one was ever taken */
  uint64_t msnap_ms;           /* when (kf_now_ms) */
  uint64_t n_msnap_fail;       /* snapshots the store failed */
  bool want_metrics;           /* take a snapshot in the next batch */
  uint64_t last_metrics_ms, last_scrape_ms;
} kf_coord;

/* coord.c */
kf_coord_worker *kf_coord__worker_get(kf_coord *co, int64_t id);
kf_coord_worker *kf_coord__worker_put(kf_coord *co, int64_t id,
                                      int64_t dc_id, const char *const *kinds,
                                      size_t n_kinds, const char *name,
                                      int64_t cred_id);
/* Loads every valid credential from the store into an rpc table
 * (malloc'd, *out; free() it).  Work thread or startup: touches only s. */
int kf_coord__load_creds(kf_store *s, kf_rpc_cred **out, size_t *n);
/* The ids of table t, sorted (malloc'd, *out; free() it).  0 or
 * KF_ENOMEM. */
int kf_coord__cred_ids(const kf_rpc_cred *t, size_t n, int64_t **out);
/* Whether credential id is in ids (sorted): 0, the bootstrap token, always
 * is. */
bool kf_coord__cred_valid(const int64_t *ids, size_t n, int64_t id);
void kf_coord__kick(kf_coord *co);
void kf_coord__op_free(kf_coord_op *op);
void kf_coord__batch_drained(kf_coord *co);
int kf_coord_run(const kf_coord_config *cfg);

/* coord_rpc.c */
extern const kf_rpc_method kf_coord__methods[];
extern const size_t kf_coord__n_methods;
extern const char *const kf_coord__raw_text[];
extern const size_t kf_coord__max_request_bytes[];
void kf_coord__answer(kf_coord *co, kf_coord_op *op);
void kf_coord__expire_parked(kf_coord *co, bool all);

void kf_coord__push(kf_coord *co, kf_coord_op *op);
/* A new op for call, counted against max_queued_ops and given its
 * give_up_ms; NULL when refused (the call is then answered
 * RESOURCE_EXHAUSTED naming the cap) or out of memory (answered too). */
kf_coord_op *kf_coord__op_new(kf_coord *co, kf_coord_op_kind kind,
                              kf_rpc_call *call, const ProtobufCMessage *req);
/* Answers and frees pending ops whose caller's deadline has passed, so a
 * call the client gave up on never reaches the database. */
void kf_coord__drop_expired(kf_coord *co);
/* The worker_id a HEARTBEAT, LEASE or REPORT op acts for. */
int64_t kf_coord__op_worker(const kf_coord_op *op);

/* coord_db.c */
void kf_coord__flush(kf_coord *co);

/* coord_metrics.c: /metrics on the loop (common/httpd.h).  start: 0 or a
 * KF_E* with the text logged; stop: NULL-safe, closes on the loop. */
int kf_coord__metrics_start(kf_coord *co);
void kf_coord__metrics_stop(kf_coord *co);
/* Cron: asks for a store snapshot every 2 s while someone scraped in the
 * last minute. */
void kf_coord__metrics_cron(kf_coord *co, uint64_t now);
/* answer_lease: one LeaseTasks answered with n tasks. */
void kf_coord__metrics_lease(kf_coord *co, const kf_coord_op *op, size_t n);
/* after_batch: the snapshot the batch took (moved into co) or its error. */
void kf_coord__metrics_took(kf_coord *co, int rc, kf_store_metrics *m,
                            const char *err);

/* coord_campaign.c: handlers (listed in kf_coord__methods), the work
 * thread's part of a KF_OP_CAMPAIGN op, its answer, and its free. */
void kf_coord__on_create_campaign(kf_rpc_call *call,
                                  const ProtobufCMessage *m, void *data);
void kf_coord__on_get_campaign(kf_rpc_call *call, const ProtobufCMessage *m,
                               void *data);
void kf_coord__on_list_evaluations(kf_rpc_call *call,
                                   const ProtobufCMessage *m, void *data);
void kf_coord__on_get_best(kf_rpc_call *call, const ProtobufCMessage *m,
                           void *data);
void kf_coord__on_stop_campaign(kf_rpc_call *call, const ProtobufCMessage *m,
                                void *data);
void kf_coord__on_propose_candidate(kf_rpc_call *call,
                                    const ProtobufCMessage *m, void *data);
void kf_coord__on_proposer_record(kf_rpc_call *call,
                                  const ProtobufCMessage *m, void *data);
void kf_coord__on_proposer_usage(kf_rpc_call *call,
                                 const ProtobufCMessage *m, void *data);
void kf_coord__campaign_work(kf_store *s, kf_coord_op *op);
void kf_coord__campaign_answer(kf_coord *co, kf_coord_op *op);
void kf_coord__campaign_free(kf_coord_op *op);

/* coord_views.c: the dashboard's read-only RPCs, as coord_campaign.c. */
void kf_coord__on_list_campaigns(kf_rpc_call *call, const ProtobufCMessage *m,
                                 void *data);
void kf_coord__on_get_series(kf_rpc_call *call, const ProtobufCMessage *m,
                             void *data);
void kf_coord__on_get_reference(kf_rpc_call *call, const ProtobufCMessage *m,
                                void *data);
void kf_coord__view_work(kf_store *s, kf_coord_op *op);
void kf_coord__view_answer(kf_coord *co, kf_coord_op *op);
void kf_coord__view_free(kf_coord_op *op);

#endif
