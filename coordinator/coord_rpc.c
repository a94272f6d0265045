/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/coord_rpc.c -- the Coordinator service's handlers.
 *
 * Loop thread only.  A handler validates its request (bad input is
 * answered INVALID_ARGUMENT here, naming the field, and never reaches the
 * database), turns the call into a kf_coord_op on the pending list and
 * asks for a flush.  kf_coord__answer turns a finished op into the reply.
 * Long polls that found no task are parked and answered empty when their
 * wait is over (kf_coord__expire_parked, from the cron).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "err.h"
#include "log.h"
#include "outcome.h"
#include "util.h"

#define MAX_LEASE 256       /* tasks per LeaseTasks */
#define MAX_REPORTS 1024    /* results per ReportResult */
#define MAX_SUBMIT 10000    /* tasks per SubmitTasks */
#define MAX_KINDS 16        /* task kinds per worker */
#define MAX_NAME 63

static kf_coord_op *op_new(kf_coord *co, kf_coord_op_kind kind,
                           kf_rpc_call *call, const ProtobufCMessage *req) {
  kf_coord_op *op = calloc(1, sizeof *op);
  if (!op) {
    kf_rpc_call_fail(call, KF_ENOMEM, "coordinator out of memory");
    return NULL;
  }
  op->kind = kind;
  op->call = call;
  op->req = req;
  return op;
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

static bool str_ok(const char *s, size_t max) {
  return s && *s && strlen(s) <= max;
}

/* ------------------------------------------------------------ handlers */

static void on_register(kf_rpc_call *call, const ProtobufCMessage *m,
                        void *data) {
  kf_coord *co = data;
  const Kernelfleet__RegisterWorkerRequest *r = (const void *)m;
  const char *bad = NULL;
  if (!str_ok(r->name, MAX_NAME)) bad = "name must be 1..63 characters";
  else if (!r->device_class) bad = "device_class is required";
  else if (r->device_class->kind != KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU &&
           r->device_class->kind != KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA)
    bad = "device_class.kind must be CPU or CUDA";
  else if (!str_ok(r->device_class->model, 127))
    bad = "device_class.model must be 1..127 characters";
  else if (strlen(r->device_class->isa) > 31)
    bad = "device_class.isa longer than 31 characters";
  else if (r->n_task_kinds == 0 || r->n_task_kinds > MAX_KINDS)
    bad = "task_kinds must list 1..16 kinds";
  /* The measurement identity's strings (0004): keys of an index. */
  else if (r->device && strlen(r->device->harness_build) > 64)
    bad = "device.harness_build longer than 64 characters";
  else if (r->device && (strlen(r->device->compiler) > 255 ||
                         strlen(r->device->driver_version) > 255 ||
                         strlen(r->device->runtime_version) > 255))
    bad = "device.compiler, driver_version and runtime_version must be at"
          " most 255 characters";
  for (size_t i = 0; !bad && i < r->n_task_kinds; i++)
    if (!str_ok(r->task_kinds[i], 31)) bad = "a task kind must be 1..31 characters";
  if (bad) {
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

static void on_heartbeat(kf_rpc_call *call, const ProtobufCMessage *m,
                         void *data) {
  kf_coord *co = data;
  const Kernelfleet__HeartbeatRequest *r = (const void *)m;
  if (r->worker_id <= 0) {
    kf_rpc_call_fail(call, KF_EINVAL, "worker_id must be positive");
    return;
  }
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
  if (r->worker_id <= 0) {
    kf_rpc_call_fail(call, KF_EINVAL, "worker_id must be positive");
    return;
  }
  if (r->max_tasks == 0 || r->max_tasks > MAX_LEASE) {
    kf_rpc_call_fail(call, KF_EINVAL, "max_tasks must be 1..256");
    return;
  }
  kf_coord_op *op = op_new(co, KF_OP_LEASE, call, m);
  if (!op) return;
  /* Answer a little before the caller's deadline, so tasks we lease are
   * never sent into a call the client already gave up on. */
  int64_t remain = kf_rpc_call_remaining_ms(call) - 500;
  uint64_t wait = r->wait_ms < co->cfg.max_wait_ms ? r->wait_ms
                                                   : co->cfg.max_wait_ms;
  if (remain < 0) remain = 0;
  if ((int64_t)wait > remain) wait = (uint64_t)remain;
  op->deadline_ms = kf_now_ms() + wait;
  op->needs_lookup = touch_worker(co, r->worker_id) == NULL;
  op_push(co, op);
}

static void on_report(kf_rpc_call *call, const ProtobufCMessage *m,
                      void *data) {
  kf_coord *co = data;
  const Kernelfleet__ReportResultRequest *r = (const void *)m;
  char bad[160] = "";
  if (r->worker_id <= 0)
    snprintf(bad, sizeof bad, "worker_id must be positive");
  else if (r->n_results == 0 || r->n_results > MAX_REPORTS)
    snprintf(bad, sizeof bad, "results must hold 1..%d entries", MAX_REPORTS);
  for (size_t i = 0; !bad[0] && i < r->n_results; i++) {
    const Kernelfleet__TaskResult *t = r->results[i];
    if (t->task_id <= 0)
      snprintf(bad, sizeof bad, "results[%zu].task_id must be positive", i);
    else if (t->attempt == 0)
      snprintf(bad, sizeof bad, "results[%zu].attempt must be positive", i);
    else if (!kf_outcome_name((int)t->outcome))
      snprintf(bad, sizeof bad, "results[%zu].outcome %d is not an outcome",
               i, (int)t->outcome);
  }
  if (bad[0]) {
    kf_rpc_call_fail(call, KF_EINVAL, bad);
    return;
  }
  touch_worker(co, r->worker_id);
  kf_coord_op *op = op_new(co, KF_OP_REPORT, call, m);
  if (!op) return;
  op->verdicts = calloc(r->n_results, sizeof *op->verdicts);
  if (!op->verdicts) {
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
  char bad[160] = "";
  if (r->n_tasks == 0 || r->n_tasks > MAX_SUBMIT)
    snprintf(bad, sizeof bad, "tasks must hold 1..%d entries", MAX_SUBMIT);
  for (size_t i = 0; !bad[0] && i < r->n_tasks; i++) {
    const Kernelfleet__TaskSpec *t = r->tasks[i];
    if (!str_ok(t->kind, 31))
      snprintf(bad, sizeof bad, "tasks[%zu].kind must be 1..31 characters",
               i);
    else if (t->max_attempts > 100)
      snprintf(bad, sizeof bad, "tasks[%zu].max_attempts over 100", i);
    else if (t->device_class && t->device_class->kind != 0 &&
             !str_ok(t->device_class->model, 127))
      snprintf(bad, sizeof bad, "tasks[%zu].device_class.model is empty", i);
  }
  if (bad[0]) {
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
  kf_coord_op *op = op_new(co, KF_OP_STATUS, call, m);
  if (op) op_push(co, op);
}

#define METHOD(name, type, fn)                                              \
  { "/kernelfleet.Coordinator/" name, &kernelfleet__##type##__descriptor, fn }

const kf_rpc_method kf_coord__methods[] = {
    METHOD("RegisterWorker", register_worker_request, on_register),
    METHOD("Heartbeat", heartbeat_request, on_heartbeat),
    METHOD("LeaseTasks", lease_tasks_request, on_lease),
    METHOD("ReportResult", report_result_request, on_report),
    METHOD("SubmitTasks", submit_tasks_request, on_submit),
    METHOD("GetStatus", get_status_request, on_status),
    METHOD("CreateCampaign", create_campaign_request,
           kf_coord__on_create_campaign),
    METHOD("GetCampaign", get_campaign_request, kf_coord__on_get_campaign),
    METHOD("ListEvaluations", list_evaluations_request,
           kf_coord__on_list_evaluations),
    METHOD("GetBest", get_best_request, kf_coord__on_get_best),
    METHOD("StopCampaign", stop_campaign_request, kf_coord__on_stop_campaign),
    METHOD("ProposeCandidate", propose_candidate_request,
           kf_coord__on_propose_candidate),
};
const size_t kf_coord__n_methods =
    sizeof kf_coord__methods / sizeof kf_coord__methods[0];

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
                              r->n_task_kinds, r->name)) {
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
  case KF_OP_REPORT: {
    const Kernelfleet__ReportResultRequest *r = (const void *)op->req;
    Kernelfleet__ReportResultResponse resp =
        KERNELFLEET__REPORT_RESULT_RESPONSE__INIT;
    Kernelfleet__ReportVerdict *v = calloc(r->n_results, sizeof *v);
    if (!v) {
      kf_rpc_call_fail(op->call, KF_ENOMEM, "coordinator out of memory");
      return;
    }
    for (size_t i = 0; i < r->n_results; i++) {
      v[i] = (Kernelfleet__ReportVerdict)op->verdicts[i];
      if (op->verdicts[i] == KF_VERDICT_ACCEPTED) co->n_reported++;
    }
    resp.n_verdicts = r->n_results;
    resp.verdicts = v;
    kf_rpc_call_reply(op->call, &resp.base);
    free(v);
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
