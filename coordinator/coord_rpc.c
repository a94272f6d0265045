/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/coord_rpc.c -- the Coordinator service's handlers.
 *
 * Loop thread only.  A handler validates its request (bad input is
 * answered INVALID_ARGUMENT here, naming the field, and never reaches the
 * database; see "validation" below), turns the call into a kf_coord_op on
 * the pending list and
 * asks for a flush.  kf_coord__answer turns a finished op into the reply.
 * Long polls that found no task are parked and answered empty when their
 * wait is over (kf_coord__expire_parked, from the cron).
 */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "coord_check.h"
#include "err.h"
#include "log.h"
#include "outcome.h"
#include "text.h"
#include "token.h"
#include "util.h"

#define MAX_LEASE 256       /* tasks per LeaseTasks */
#define MAX_REPORTS 1024    /* results per ReportResult */
#define MAX_SUBMIT 10000    /* tasks per SubmitTasks */
#define MAX_KINDS 16        /* task kinds per worker */
#define MAX_NAME 63         /* worker names */
#define MAX_KIND 31         /* task kinds */
#define MAX_MODEL 127       /* device_class.model */
#define MAX_ISA 31          /* device_class.isa */
#define MAX_SLOTS 1024      /* slots of one worker */
#define MAX_WAIT_MS 600000u /* wait_ms of a long poll (it is then capped) */
#define MAX_TIMEOUT_MS 86400000u /* a task's timeout_ms: a day */
#define MAX_CC 1000         /* compute capability numbers */
#define MAX_GBPS 1e7        /* a measured bandwidth or GFLOP/s, plausible */
#define MAX_BYTES (1ull << 62) /* mem_bytes, l2_bytes */
/* Leases a worker may list in one Heartbeat: far more than kf-worker
 * ever lists (its running tasks, at most MAX_SLOTS, plus at most 256
 * unacknowledged results), far less than the 2.7M refs that once took
 * 375 MB.
 * The method's request limit below is sized from it. */
#define MAX_RUNNING 4096
/* A TaskRef is at most 19 bytes on the wire (tag, length, two varints). */
#define HEARTBEAT_MAX_BYTES (MAX_RUNNING * 20 + 64)
/* Requests of the methods that carry no lists or sources. */
#define SMALL_MAX_BYTES (64u << 10)
/* A lease must be answered this long before the caller's deadline, or
 * the tasks could be granted into a call the client has given up on. */
#define LEASE_MARGIN_MS 500

kf_coord_op *kf_coord__op_new(kf_coord *co, kf_coord_op_kind kind,
                              kf_rpc_call *call, const ProtobufCMessage *req) {
  if (co->cfg.max_queued_ops && co->n_ops >= co->cfg.max_queued_ops) {
    char msg[200];
    snprintf(msg, sizeof msg, "coordinator queue full: %zu operations wait "
             "for the database or a task (cap %u, --max-queued-ops); try "
             "again later", co->n_ops, co->cfg.max_queued_ops);
    kf_rpc_call_fail(call, KF_EBUSY, msg);
    return NULL;
  }
  kf_coord_op *op = calloc(1, sizeof *op);
  if (!op) {
    kf_rpc_call_fail(call, KF_ENOMEM, "coordinator out of memory");
    return NULL;
  }
  op->co = co;
  co->n_ops++;
  op->kind = kind;
  op->call = call;
  op->req = req;
  int64_t left = kf_rpc_call_remaining_ms(call);
  op->give_up_ms = left == INT64_MAX ? UINT64_MAX
                                     : kf_now_ms() + (uint64_t)left;
  op->cred_id = kf_rpc_call_cred_id(call);
  op->t0_ns = kf_now_ns();
  return op;
}

static kf_coord_op *op_new(kf_coord *co, kf_coord_op_kind kind,
                           kf_rpc_call *call, const ProtobufCMessage *req) {
  return kf_coord__op_new(co, kind, call, req);
}

int64_t kf_coord__op_worker(const kf_coord_op *op) {
  switch (op->kind) {
  case KF_OP_LEASE:
    return ((const Kernelfleet__LeaseTasksRequest *)op->req)->worker_id;
  case KF_OP_HEARTBEAT:
    return ((const Kernelfleet__HeartbeatRequest *)op->req)->worker_id;
  case KF_OP_REPORT:
    return ((const Kernelfleet__ReportResultRequest *)op->req)->worker_id;
  default:
    return 0;
  }
}

static void op_push(kf_coord *co, kf_coord_op *op) {
  /* Append, so reports and leases keep arrival order within a batch. */
  kf_coord_op **pp = &co->pending;
  while (*pp) pp = &(*pp)->next;
  op->next = NULL;
  *pp = op;
  kf_coord__kick(co);
}

void kf_coord__push(kf_coord *co, kf_coord_op *op) { op_push(co, op); }

/* ---------------------------------------------------------- validation */
/*
 * Everything a request carries is checked here, before any SQL: a value
 * the database would refuse (an integer out of its column's range, a NaN
 * in JSON, text that is not UTF-8) must come back as INVALID_ARGUMENT
 * naming the field, not as UNAVAILABLE with PostgreSQL's words, which
 * clients retry forever.  NUL bytes and invalid UTF-8 in string fields
 * were refused already, field named, before the handler ran (rpc.h,
 * kf_rpc_method.raw_text); the checks below still look at UTF-8 because
 * they are cheap and the store's copy of them is the last line.
 */

/* false, with "FIELD is empty" / "FIELD is longer than N bytes (L)" /
 * "FIELD is not valid UTF-8 (byte K)" in bad, when s is not 1..max (or,
 * with may_be_empty, 0..max) bytes of UTF-8. */
static bool text_ok(char *bad, size_t blen, const char *field, const char *s,
                    bool may_be_empty, size_t max) {
  size_t n = s ? strlen(s) : 0;
  char why[96];
  if (n == 0 && !may_be_empty) {
    snprintf(bad, blen, "%s is empty", field);
    return false;
  }
  if (kf_text_check(s, n, max, why, sizeof why)) {
    snprintf(bad, blen, "%s %s", field, why);
    return false;
  }
  return true;
}

/* A task kind travels in text arrays and, after a restart, through the
 * comma-separated list kf_store_get_worker returns: so it is 1..31 of
 * [A-Za-z0-9_.:-], never a ',' or a quote. */
static bool kind_ok(char *bad, size_t blen, const char *field, const char *s) {
  if (!text_ok(bad, blen, field, s, false, MAX_KIND)) return false;
  for (const char *p = s; *p; p++)
    if (!isalnum((unsigned char)*p) && !strchr("_.:-", *p)) {
      snprintf(bad, blen, "%s may only hold letters, digits and _.:-"
               " (byte %zu)", field, (size_t)(p - s));
      return false;
    }
  return true;
}

/* A measured rate: finite, 0..MAX_GBPS. */
static bool rate_ok(char *bad, size_t blen, const char *field, double v) {
  if (isfinite(v) && v >= 0 && v <= MAX_GBPS) return true;
  snprintf(bad, blen, "%s must be a number in 0..%g (got %g)", field,
           MAX_GBPS, v);
  return false;
}

/* A device class; `field` prefixes the messages ("tasks[3].device_class").
 * any: kind 0 (any device) is allowed, and then nothing else is read. */
static bool dc_ok(char *bad, size_t blen, const char *field,
                  const Kernelfleet__DeviceClass *dc, bool any) {
  char f[96];
  if (!dc) {
    snprintf(bad, blen, "%s is required", field);
    return false;
  }
  if (any && dc->kind == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_UNSPECIFIED)
    return true;
  if (dc->kind != KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU &&
      dc->kind != KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA) {
    snprintf(bad, blen, "%s.kind must be CPU or CUDA", field);
    return false;
  }
  snprintf(f, sizeof f, "%s.model", field);
  if (!text_ok(bad, blen, f, dc->model, false, MAX_MODEL)) return false;
  snprintf(f, sizeof f, "%s.isa", field);
  if (!text_ok(bad, blen, f, dc->isa, true, MAX_ISA)) return false;
  if (dc->cc_major > MAX_CC || dc->cc_minor > MAX_CC) {
    snprintf(bad, blen, "%s.cc_major and cc_minor must be 0..%d", field,
             MAX_CC);
    return false;
  }
  return true;
}

static bool device_ok(char *bad, size_t blen,
                      const Kernelfleet__DeviceInfo *d) {
  if (!d) return true;
  if (d->mem_bytes > MAX_BYTES || d->l2_bytes > MAX_BYTES) {
    snprintf(bad, blen, "device.mem_bytes and l2_bytes must be at most"
             " 2^62");
    return false;
  }
  return rate_ok(bad, blen, "device.copy_gbps", d->copy_gbps) &&
         rate_ok(bad, blen, "device.peak_gflops", d->peak_gflops) &&
         rate_ok(bad, blen, "device.read_gbps", d->read_gbps) &&
         rate_ok(bad, blen, "device.write_gbps", d->write_gbps) &&
         text_ok(bad, blen, "device.driver_version", d->driver_version, true,
                 MAX_MODEL) &&
         text_ok(bad, blen, "device.runtime_version", d->runtime_version,
                 true, MAX_MODEL) &&
         text_ok(bad, blen, "device.compiler", d->compiler, true,
                 MAX_MODEL) &&
         /* a key of the measurement identity's index (0004) */
         text_ok(bad, blen, "device.harness_build", d->harness_build, true,
                 64);
}

bool kf_coord__check_register(const Kernelfleet__RegisterWorkerRequest *r,
                              char *bad, size_t blen) {
  bool ok = text_ok(bad, blen, "name", r->name, false, MAX_NAME) &&
            text_ok(bad, blen, "hostname", r->hostname, true, 255) &&
            dc_ok(bad, blen, "device_class", r->device_class, false) &&
            device_ok(bad, blen, r->device);
  if (ok && r->slots > MAX_SLOTS) {
    snprintf(bad, blen, "slots must be 0..%d (got %u)", MAX_SLOTS,
             r->slots);
    ok = false;
  }
  if (ok && (r->n_task_kinds == 0 || r->n_task_kinds > MAX_KINDS)) {
    snprintf(bad, blen, "task_kinds must list 1..%d kinds", MAX_KINDS);
    ok = false;
  }
  for (size_t i = 0; ok && i < r->n_task_kinds; i++) {
    char f[48];
    snprintf(f, sizeof f, "task_kinds[%zu]", i);
    ok = kind_ok(bad, blen, f, r->task_kinds[i]);
  }
  return ok;
}

bool kf_coord__check_heartbeat(const Kernelfleet__HeartbeatRequest *r,
                               char *bad, size_t blen) {
  if (r->worker_id <= 0)
    snprintf(bad, blen, "worker_id must be positive");
  else if (r->n_running > MAX_RUNNING)
    snprintf(bad, blen, "running must hold 0..%d leases (got %zu)",
             MAX_RUNNING, r->n_running);
  else
    return true;
  return false;
}

bool kf_coord__check_lease(const Kernelfleet__LeaseTasksRequest *r,
                           char *bad, size_t blen) {
  if (r->worker_id <= 0)
    snprintf(bad, blen, "worker_id must be positive");
  else if (r->max_tasks == 0 || r->max_tasks > MAX_LEASE)
    snprintf(bad, blen, "max_tasks must be 1..%d (got %u)", MAX_LEASE,
             r->max_tasks);
  else if (r->wait_ms > MAX_WAIT_MS)
    snprintf(bad, blen, "wait_ms must be 0..%u (got %u)", MAX_WAIT_MS,
             r->wait_ms);
  else
    return true;
  return false;
}

/* Only what makes the whole call meaningless is refused here.  Each
 * result is judged on its own by the store (kf_store_report_ex): a bad
 * one gets REPORT_INVALID and the rest are stored -- refusing the call
 * for one result would hold every other result of the batch hostage
 * (the worker retries the call), which is how one poisoned reason once
 * stalled a cluster.  So ReportResult is in kf_coord__raw_text. */
bool kf_coord__check_report(const Kernelfleet__ReportResultRequest *r,
                            char *bad, size_t blen) {
  if (r->worker_id <= 0)
    snprintf(bad, blen, "worker_id must be positive");
  else if (r->n_results == 0 || r->n_results > MAX_REPORTS)
    snprintf(bad, blen, "results must hold 1..%d entries", MAX_REPORTS);
  else
    return true;
  return false;
}

static bool task_spec_ok(char *bad, size_t blen, size_t i,
                         const Kernelfleet__TaskSpec *t) {
  char f[64];
  snprintf(f, sizeof f, "tasks[%zu].kind", i);
  if (!kind_ok(bad, blen, f, t->kind)) return false;
  if (t->max_attempts > 100) {
    snprintf(bad, blen, "tasks[%zu].max_attempts must be 0..100 (got %u)", i,
             t->max_attempts);
    return false;
  }
  if (t->timeout_ms > MAX_TIMEOUT_MS) {
    snprintf(bad, blen, "tasks[%zu].timeout_ms must be 0..%u (a day; got"
             " %u)", i, MAX_TIMEOUT_MS, t->timeout_ms);
    return false;
  }
  if (t->campaign_id < 0) {
    snprintf(bad, blen, "tasks[%zu].campaign_id must be 0 (none) or a"
             " campaign's id (got %" PRId64 ")", i, t->campaign_id);
    return false;
  }
  snprintf(f, sizeof f, "tasks[%zu].device_class", i);
  if (t->device_class && !dc_ok(bad, blen, f, t->device_class, true))
    return false;
  return true;
}

bool kf_coord__check_submit(const Kernelfleet__SubmitTasksRequest *r,
                            char *bad, size_t blen) {
  if (r->n_tasks == 0 || r->n_tasks > MAX_SUBMIT) {
    snprintf(bad, blen, "tasks must hold 1..%d entries", MAX_SUBMIT);
    return false;
  }
  for (size_t i = 0; i < r->n_tasks; i++)
    if (!task_spec_ok(bad, blen, i, r->tasks[i])) return false;
  return true;
}

bool kf_coord__check_status(const Kernelfleet__GetStatusRequest *r,
                            char *bad, size_t blen) {
  if (r->campaign_id >= 0) return true;
  snprintf(bad, blen, "campaign_id must be 0 (the whole cluster) or a"
           " campaign's id");
  return false;
}

/* ------------------------------------------------------------ handlers */

static void on_register(kf_rpc_call *call, const ProtobufCMessage *m,
                        void *data) {
  kf_coord *co = data;
  char bad[256] = "";
  if (!kf_coord__check_register((const void *)m, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  kf_coord_op *op = op_new(co, KF_OP_REGISTER, call, m);
  if (op) op_push(co, op);
}

static kf_coord_worker *touch_worker(kf_coord *co, int64_t id) {
  kf_coord_worker *w = kf_coord__worker_get(co, id);
  if (w) w->last_seen_ms = kf_now_ms();
  return w;
}

/* Binding: a worker registered with credential T acts only with T.  false
 * (and the call answered PERMISSION_DENIED) when the loop knows worker id
 * and the caller's credential is another; a worker the loop does not know
 * is checked against the store on the work thread (coord_db.c do_lookup).
 * Admin credentials are bound like any other: no one acts for a worker
 * with someone else's credential. */
static bool binding_ok(kf_coord *co, kf_rpc_call *call, int64_t id) {
  kf_coord_worker *w = kf_coord__worker_get(co, id);
  if (!w || w->cred_id == kf_rpc_call_cred_id(call)) return true;
  char msg[160];
  snprintf(msg, sizeof msg, "worker %" PRId64 " was registered with another"
           " credential; only that credential may act for it", id);
  kf_rpc_call_fail(call, KF_EPERM, msg);
  return false;
}

static void on_heartbeat(kf_rpc_call *call, const ProtobufCMessage *m,
                         void *data) {
  kf_coord *co = data;
  const Kernelfleet__HeartbeatRequest *r = (const void *)m;
  char bad[128] = "";
  if (!kf_coord__check_heartbeat(r, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  if (!binding_ok(co, call, r->worker_id)) return;
  kf_coord_op *op = op_new(co, KF_OP_HEARTBEAT, call, m);
  if (!op) return;
  op->needs_lookup = touch_worker(co, r->worker_id) == NULL;
  if (r->n_running) {
    op->hb_live = calloc(r->n_running, sizeof *op->hb_live);
    if (!op->hb_live) {
      kf_rpc_call_fail(call, KF_ENOMEM, "coordinator out of memory");
      kf_coord__op_free(op);
      return;
    }
  }
  op_push(co, op);
}

static void on_lease(kf_rpc_call *call, const ProtobufCMessage *m,
                     void *data) {
  kf_coord *co = data;
  const Kernelfleet__LeaseTasksRequest *r = (const void *)m;
  char bad[128] = "";
  if (!kf_coord__check_lease(r, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  /* Answer a little before the caller's deadline, so tasks we lease are
   * never sent into a call the client already gave up on; a caller that
   * left us less than that gets its empty answer now. */
  int64_t left = kf_rpc_call_remaining_ms(call);
  if (left <= LEASE_MARGIN_MS) {
    Kernelfleet__LeaseTasksResponse resp =
        KERNELFLEET__LEASE_TASKS_RESPONSE__INIT;
    resp.lease_ttl_ms = co->cfg.lease_ttl_ms;
    kf_rpc_call_reply(call, &resp.base);
    return;
  }
  if (!binding_ok(co, call, r->worker_id)) return;
  kf_coord_op *op = op_new(co, KF_OP_LEASE, call, m);
  if (!op) return;
  if (left != INT64_MAX) op->give_up_ms -= LEASE_MARGIN_MS;
  int64_t remain = left - LEASE_MARGIN_MS;
  uint64_t wait = r->wait_ms < co->cfg.max_wait_ms ? r->wait_ms
                                                   : co->cfg.max_wait_ms;
  if (remain < 0) remain = 0;
  if ((int64_t)wait > remain) wait = (uint64_t)remain;
  op->deadline_ms = kf_now_ms() + wait;
  op->needs_lookup = touch_worker(co, r->worker_id) == NULL;
  op_push(co, op);
}

/* Validated by kf_coord__check_report: only what makes the whole call
 * meaningless is refused. */
static void on_report(kf_rpc_call *call, const ProtobufCMessage *m,
                      void *data) {
  kf_coord *co = data;
  const Kernelfleet__ReportResultRequest *r = (const void *)m;
  char bad[160] = "";
  if (!kf_coord__check_report(r, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  if (!binding_ok(co, call, r->worker_id)) return;
  kf_coord_op *op = op_new(co, KF_OP_REPORT, call, m);
  if (!op) return;
  op->needs_lookup = touch_worker(co, r->worker_id) == NULL;
  op->verdicts = calloc(r->n_results, sizeof *op->verdicts);
  op->notes = calloc(r->n_results, sizeof *op->notes);
  if (!op->verdicts || !op->notes) {
    kf_rpc_call_fail(call, KF_ENOMEM, "coordinator out of memory");
    kf_coord__op_free(op);
    return;
  }
  op_push(co, op);
}

static void on_submit(kf_rpc_call *call, const ProtobufCMessage *m,
                      void *data) {
  kf_coord *co = data;
  const Kernelfleet__SubmitTasksRequest *r = (const void *)m;
  char bad[256] = "";
  if (!kf_coord__check_submit(r, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  kf_coord_op *op = op_new(co, KF_OP_SUBMIT, call, m);
  if (!op) return;
  op->ids = calloc(r->n_tasks, sizeof *op->ids);
  if (!op->ids) {
    kf_rpc_call_fail(call, KF_ENOMEM, "coordinator out of memory");
    kf_coord__op_free(op);
    return;
  }
  op_push(co, op);
}

static void on_status(kf_rpc_call *call, const ProtobufCMessage *m,
                      void *data) {
  kf_coord *co = data;
  char bad[96] = "";
  if (!kf_coord__check_status((const void *)m, bad, sizeof bad)) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  kf_coord_op *op = op_new(co, KF_OP_STATUS, call, m);
  if (op) op_push(co, op);
}

#define METHOD(name, type, fn, roles)                                       \
  { "/kernelfleet.Coordinator/" name, &kernelfleet__##type##__descriptor, fn, \
    roles }
#define W KF_ROLE_WORKER
#define S KF_ROLE_SUBMITTER

/* Who may call what (admin may call everything).  A worker runs tasks and
 * nothing else; a submitter submits work, proposes candidates and reads,
 * but can never register a worker or report a result. */
const kf_rpc_method kf_coord__methods[] = {
    METHOD("RegisterWorker", register_worker_request, on_register, W),
    METHOD("Heartbeat", heartbeat_request, on_heartbeat, W),
    METHOD("LeaseTasks", lease_tasks_request, on_lease, W),
    METHOD("ReportResult", report_result_request, on_report, W),
    METHOD("SubmitTasks", submit_tasks_request, on_submit, S),
    METHOD("GetStatus", get_status_request, on_status, S),
    METHOD("CreateCampaign", create_campaign_request,
           kf_coord__on_create_campaign, S),
    METHOD("GetCampaign", get_campaign_request, kf_coord__on_get_campaign, S),
    METHOD("ListEvaluations", list_evaluations_request,
           kf_coord__on_list_evaluations, S),
    METHOD("GetBest", get_best_request, kf_coord__on_get_best, S),
    METHOD("StopCampaign", stop_campaign_request, kf_coord__on_stop_campaign,
           S),
    METHOD("ProposeCandidate", propose_candidate_request,
           kf_coord__on_propose_candidate, S),
    METHOD("ProposerRecordCalls", proposer_record_calls_request,
           kf_coord__on_proposer_record, S),
    METHOD("ProposerUsage", proposer_usage_request,
           kf_coord__on_proposer_usage, S),
    METHOD("ListCampaigns", list_campaigns_request,
           kf_coord__on_list_campaigns, S),
    METHOD("GetCampaignSeries", get_campaign_series_request,
           kf_coord__on_get_series, S),
    METHOD("GetReference", get_reference_request, kf_coord__on_get_reference,
           S),
};
#undef W
#undef S

/* Each method's request limit, bytes, in kf_coord__methods' order (0:
 * --max-msg-bytes): only reports, submits, campaigns and proposals carry
 * lists or sources that need more than a small message. */
const size_t kf_coord__max_request_bytes[] = {
    SMALL_MAX_BYTES,     /* RegisterWorker */
    HEARTBEAT_MAX_BYTES, /* Heartbeat */
    SMALL_MAX_BYTES,     /* LeaseTasks */
    0,                   /* ReportResult */
    0,                   /* SubmitTasks */
    SMALL_MAX_BYTES,     /* GetStatus */
    0,                   /* CreateCampaign */
    SMALL_MAX_BYTES,     /* GetCampaign */
    SMALL_MAX_BYTES,     /* ListEvaluations */
    SMALL_MAX_BYTES,     /* GetBest */
    SMALL_MAX_BYTES,     /* StopCampaign */
    0,                   /* ProposeCandidate */
    0,                   /* ProposerRecordCalls */
    SMALL_MAX_BYTES,     /* ProposerUsage */
    SMALL_MAX_BYTES,     /* ListCampaigns */
    SMALL_MAX_BYTES,     /* GetCampaignSeries */
    SMALL_MAX_BYTES,     /* GetReference */
};
_Static_assert(sizeof kf_coord__max_request_bytes /
                       sizeof kf_coord__max_request_bytes[0] ==
                   sizeof kf_coord__methods / sizeof kf_coord__methods[0],
               "one request limit per method");
const size_t kf_coord__n_methods =
    sizeof kf_coord__methods / sizeof kf_coord__methods[0];
/* Methods whose strings are judged by their handlers, not at the door:
 * ReportResult refuses a bad result alone (on_report). */
const char *const kf_coord__raw_text[] = {
    "/kernelfleet.Coordinator/ReportResult", NULL};

/* ------------------------------------------------------------- answers */

static void fail_op(kf_coord_op *op) {
  /* Database trouble is the cluster's, not the caller's: UNAVAILABLE tells
   * the worker to retry later with the same request. */
  int code = op->rc == KF_EDB ? KF_EUNAVAIL : op->rc;
  kf_rpc_call_fail(op->call, code, op->err[0] ? op->err : kf_strerror(code));
}

static void answer_lease(kf_coord *co, kf_coord_op *op) {
  const Kernelfleet__LeaseTasksRequest *r = (const void *)op->req;
  Kernelfleet__LeaseTasksResponse resp = KERNELFLEET__LEASE_TASKS_RESPONSE__INIT;
  Kernelfleet__Task *tasks = NULL, **ptrs = NULL;
  if (op->n_granted) {
    tasks = calloc(op->n_granted, sizeof *tasks);
    ptrs = calloc(op->n_granted, sizeof *ptrs);
    if (!tasks || !ptrs) {
      /* The tasks stay leased to this worker and come back through the
       * reaper once the lease expires. */
      free(tasks);
      free(ptrs);
      kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
      return;
    }
  }
  for (size_t i = 0; i < op->n_granted; i++) {
    const kf_leased_task *g = op->granted[i];
    kernelfleet__task__init(&tasks[i]);
    tasks[i].task_id = g->task_id;
    tasks[i].attempt = g->attempt;
    tasks[i].kind = (char *)g->kind;
    tasks[i].payload.data = (uint8_t *)g->payload;
    tasks[i].payload.len = g->payload_len;
    tasks[i].campaign_id = g->campaign_id;
    tasks[i].timeout_ms = g->timeout_ms;
    ptrs[i] = &tasks[i];
  }
  resp.n_tasks = op->n_granted;
  resp.tasks = ptrs;
  resp.lease_ttl_ms = co->cfg.lease_ttl_ms;
  kf_coord_worker *w = kf_coord__worker_get(co, r->worker_id);
  if (w) w->leased_hint += (uint32_t)op->n_granted;
  co->n_leased += op->n_granted;
  kf_coord__metrics_lease(co, op, op->n_granted);
  kf_rpc_call_reply(op->call, &resp.base);
  free(tasks);
  free(ptrs);
}

void kf_coord__answer(kf_coord *co, kf_coord_op *op) {
  if (op->rc) {
    fail_op(op);
    return;
  }
  switch (op->kind) {
  case KF_OP_REGISTER: {
    const Kernelfleet__RegisterWorkerRequest *r = (const void *)op->req;
    if (!kf_coord__worker_put(co, op->new_id, op->new_dc_id,
                              (const char *const *)r->task_kinds,
                              r->n_task_kinds, r->name, op->cred_id)) {
      kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
      return;
    }
    kf_log(KF_LOG_INFO, "worker %" PRId64 " registered: %s (%s)", op->new_id,
           r->name, r->device_class->model);
    Kernelfleet__RegisterWorkerResponse resp =
        KERNELFLEET__REGISTER_WORKER_RESPONSE__INIT;
    resp.worker_id = op->new_id;
    resp.heartbeat_interval_ms = co->cfg.heartbeat_ms;
    resp.lease_ttl_ms = co->cfg.lease_ttl_ms;
    kf_rpc_call_reply(op->call, &resp.base);
    break;
  }
  case KF_OP_HEARTBEAT: {
    /* Leases the worker listed but no longer holds: it can drop that work,
     * whose report would be refused as stale anyway. */
    const Kernelfleet__HeartbeatRequest *r = (const void *)op->req;
    Kernelfleet__HeartbeatResponse resp = KERNELFLEET__HEARTBEAT_RESPONSE__INIT;
    Kernelfleet__TaskRef **rev = NULL;
    size_t nrev = 0;
    if (r->n_running && op->hb_live) {
      rev = calloc(r->n_running, sizeof *rev);
      if (!rev) {
        kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
        return;
      }
      for (size_t i = 0; i < r->n_running; i++)
        if (!op->hb_live[i]) rev[nrev++] = r->running[i];
    }
    resp.revoked = rev;
    resp.n_revoked = nrev;
    kf_rpc_call_reply(op->call, &resp.base);
    free(rev);
    break;
  }
  case KF_OP_LEASE:
    answer_lease(co, op);
    break;
  case KF_OP_CAMPAIGN:
    kf_coord__campaign_answer(co, op);
    break;
  case KF_OP_VIEW:
    kf_coord__view_answer(co, op);
    break;
  case KF_OP_REPORT: {
    const Kernelfleet__ReportResultRequest *r = (const void *)op->req;
    Kernelfleet__ReportResultResponse resp =
        KERNELFLEET__REPORT_RESULT_RESPONSE__INIT;
    Kernelfleet__ReportVerdict *v = calloc(r->n_results, sizeof *v);
    char **why = calloc(r->n_results, sizeof *why);
    if (!v || !why) {
      free(v);
      free(why);
      kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
      return;
    }
    bool refused = false;
    for (size_t i = 0; i < r->n_results; i++) {
      v[i] = (Kernelfleet__ReportVerdict)op->verdicts[i];
      if (op->verdicts[i] == KF_VERDICT_ACCEPTED) co->n_reported++;
      why[i] = op->notes ? op->notes[i].text : "";
      if (why[i][0]) refused = true;
    }
    resp.n_verdicts = r->n_results;
    resp.verdicts = v;
    /* details only when something was refused: the common answer stays
     * as small as before. */
    resp.n_details = refused ? r->n_results : 0;
    resp.details = why;
    kf_rpc_call_reply(op->call, &resp.base);
    free(v);
    free(why);
    break;
  }
  case KF_OP_SUBMIT: {
    const Kernelfleet__SubmitTasksRequest *r = (const void *)op->req;
    Kernelfleet__SubmitTasksResponse resp =
        KERNELFLEET__SUBMIT_TASKS_RESPONSE__INIT;
    resp.n_task_ids = r->n_tasks;
    resp.task_ids = op->ids;
    co->maybe_tasks = true;
    kf_rpc_call_reply(op->call, &resp.base);
    break;
  }
  case KF_OP_STATUS: {
    Kernelfleet__GetStatusResponse resp = KERNELFLEET__GET_STATUS_RESPONSE__INIT;
    resp.queued = op->counts.queued;
    resp.leased = op->counts.leased;
    resp.done = op->counts.done;
    resp.failed = op->counts.failed;
    size_t n = 0;
    Kernelfleet__WorkerStatus *ws = calloc(co->workers_len + 1, sizeof *ws);
    Kernelfleet__WorkerStatus **wp = calloc(co->workers_len + 1, sizeof *wp);
    if (!ws || !wp) {
      free(ws);
      free(wp);
      kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
      return;
    }
    uint64_t now = kf_now_ms();
    for (size_t i = 0; i < co->workers_cap; i++) {
      kf_coord_worker *w = &co->workers[i];
      if (!w->id) continue;
      kernelfleet__worker_status__init(&ws[n]);
      ws[n].worker_id = w->id;
      ws[n].name = w->name;
      ws[n].alive = now - w->last_seen_ms < 3ull * co->cfg.heartbeat_ms + 1000;
      ws[n].leased = w->leased_hint;
      wp[n] = &ws[n];
      n++;
    }
    resp.n_workers = n;
    resp.workers = wp;
    kf_rpc_call_reply(op->call, &resp.base);
    free(ws);
    free(wp);
    break;
  }
  }
}

void kf_coord__drop_expired(kf_coord *co) {
  uint64_t now = kf_now_ms();
  kf_coord_op **pp = &co->pending;
  while (*pp) {
    kf_coord_op *op = *pp;
    if (op->give_up_ms > now) {
      pp = &op->next;
      continue;
    }
    *pp = op->next;
    if (op->kind == KF_OP_LEASE) {
      /* A long poll's ordinary end: nothing for you (yet). */
      op->n_granted = 0;
      op->rc = 0;
      answer_lease(co, op);
    } else {
      kf_rpc_call_fail(op->call, KF_ETIMEDOUT, "the call's deadline passed "
                       "while it waited for the database; nothing was done");
    }
    kf_coord__op_free(op);
  }
}

/* Answers parked long polls whose time is up (or all of them, at
 * shutdown) with no tasks. */
void kf_coord__expire_parked(kf_coord *co, bool all) {
  uint64_t now = kf_now_ms();
  kf_coord_op **pp = &co->parked;
  while (*pp) {
    kf_coord_op *op = *pp;
    if (all || op->deadline_ms <= now) {
      *pp = op->next;
      op->n_granted = 0;
      op->rc = 0;
      answer_lease(co, op);
      kf_coord__op_free(op);
    } else {
      pp = &op->next;
    }
  }
}
