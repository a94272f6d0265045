/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/worker.c -- the worker's loop: register, long-poll for tasks, run
 * them on work threads, report, heartbeat.
 *
 * Loop thread owns everything here except the kf_task_exec of a running
 * task, which belongs to its work thread until after_run.  Failure policy:
 *  - coordinator unreachable: retry with exponential backoff (100 ms ..
 *    2 s); running tasks go on; results wait in the outbox;
 *  - coordinator forgot us (NOT_FOUND): register again; leases held under
 *    the old id are reported under it and judged by the coordinator;
 *  - a verdict other than ACCEPTED is final: logged, the result dropped;
 *    REPORT_INVALID (the coordinator can never store that result) counts
 *    the task as failed, with the coordinator's reason.
 *
 * Poison: every text a task reports is sanitized here first (kf_text_*:
 * valid UTF-8, no control characters, bounded), whatever the task kind
 * produced, so a candidate's bytes quoted in a reason cannot make the
 * store refuse the report.  A report call the coordinator refuses as a
 * whole (INVALID_ARGUMENT, or too large) is retried one result per call;
 * a single result refused that way is replaced by a small infra_error
 * record saying so (replace_refused), and only if that is refused too is
 * it dropped as failed: one result never holds the others back.  While
 * some result is undeliverable (the last report call failed), the worker
 * leases nothing new, and the outbox bound counts the results in flight
 * too, so results cannot pile up.
 */
#include "worker.h"

#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "device.h"
#include "err.h"
#include "kernelfleet.pb-c.h"
#include "log.h"
#include "outcome.h"
#include "rpc.h"
#include "tasks.h"
#include "text.h"
#include "torch_caps.h"
#include "util.h"
#include "watchdog.h"
#include "httpd.h"
#include "worker_metrics.h"

#define PATH(m) "/kernelfleet.Coordinator/" m
#define REPORT_BATCH 256        /* results per report call, at most */
#define REPORT_BYTES (4u << 20) /* packed results per report call, about */
#define OUTBOX_MAX 256          /* unacknowledged results (outbox + in
                                 * flight) at which we stop leasing */
#define CALL_TIMEOUT_MS 10000

typedef struct task_rec {
  struct task_rec *next;
  uv_work_t work;
  struct kf_worker *w;
  int64_t worker_id; /* the id it was leased under */
  char kind[32];
  void *payload;
  kf_task_exec exec;
  bool running;
  bool replaced;     /* exec is the small stand-in of a refused result */
  uint64_t t0_ns; /* when it started (kf_now_ns) */
} task_rec;

/* A report in flight: the results it carries, until the verdicts come. */
typedef struct report_ctx {
  struct kf_worker *w;
  task_rec **sent;
  size_t n;
} report_ctx;

typedef struct kf_worker {
  uv_loop_t *loop;
  kf_worker_config cfg;
  kf_rpc_client *rpc;
  kf_device dev;
  /* capabilities registered beside the task kinds (torch_caps.h) */
  char torch_kinds[KF_TORCH_CAPS_MAX][KF_TORCH_CAP_LEN];
  int n_torch_kinds;
  int64_t id;
  uint32_t hb_ms;

  task_rec *running; /* leased, executing */
  uint32_t n_running;
  task_rec *outbox;  /* finished, not yet acknowledged */
  size_t n_outbox;
  struct report_ctx *report; /* the report in flight, if any */
  size_t report_max; /* results per report call: REPORT_BATCH, or 1 after a
                      * call was refused as a whole */
  bool undelivered;  /* the last report call failed: lease nothing */

  bool registering, lease_inflight, report_inflight, hb_inflight;
  bool stopping, closed;
  uint32_t backoff_ms;
  uint64_t stop_deadline_ms;

  uv_timer_t hb_timer, retry_timer, report_timer;
  uv_signal_t sigint, sigterm;
  uint64_t n_done;
  uint64_t n_failed; /* results the coordinator refused as INVALID, or
                      * could not take at all */
  kf_worker_stats st;       /* /metrics (worker_metrics.h) */
  struct kf_httpd *httpd;   /* NULL: metrics off */
  uint64_t lease_t0_ns;     /* when the LeaseTasks in flight was sent */
} kf_worker;

static void do_register(kf_worker *w);
static void do_lease(kf_worker *w);
static void do_report(kf_worker *w);
static void maybe_finish(kf_worker *w);
static void on_hb_timer(uv_timer_t *h);

static void backoff(kf_worker *w) {
  w->backoff_ms = w->backoff_ms ? w->backoff_ms * 2 : 100;
  if (w->backoff_ms > 2000) w->backoff_ms = 2000;
}

static void task_free(task_rec *t) {
  if (!t) return;
  free(t->payload);
  free(t->exec.output);
  free(t);
}

/* ------------------------------------------------------------ register */

static void on_retry(uv_timer_t *h) {
  kf_worker *w = h->data;
  if (w->stopping) return;
  if (!w->id) do_register(w);
  else do_lease(w);
}

static void on_registered(int status, const char *detail,
                          const ProtobufCMessage *m, void *data) {
  kf_worker *w = data;
  w->registering = false;
  if (w->stopping) {
    maybe_finish(w);
    return;
  }
  if (status) {
    kf_log(status == KF_EUNAVAIL || status == KF_ETIMEDOUT ? KF_LOG_WARN
                                                           : KF_LOG_ERROR,
           "register: %s: %s", kf_strerror(status), detail);
    /* Bad fields come back as INVALID_ARGUMENT, which the client reads
     * as KF_EPROTO (rpc_status.c); KF_EINVAL never arrives over the wire. */
    if (status == KF_EAUTH || status == KF_EPERM || status == KF_EINVAL ||
        status == KF_EPROTO) {
      /* Retrying cannot help; stop so the operator sees it. */
      kill(getpid(), SIGTERM);
      return;
    }
    backoff(w);
    uv_timer_start(&w->retry_timer, on_retry, w->backoff_ms, 0);
    return;
  }
  const Kernelfleet__RegisterWorkerResponse *r = (const void *)m;
  w->id = r->worker_id;
  w->backoff_ms = 0;
  w->st.worker_id = w->id;
  w->st.registrations++;
  kf_log_set_worker(w->id);
  kf_log(KF_LOG_INFO, "registered as worker %" PRId64 " (%s, %s)", w->id,
         w->dev.model, w->dev.isa);
  uint32_t hb = r->heartbeat_interval_ms ? r->heartbeat_interval_ms : 3000;
  if (hb != w->hb_ms || !uv_is_active((uv_handle_t *)&w->hb_timer)) {
    w->hb_ms = hb;
    uv_timer_start(&w->hb_timer, on_hb_timer, hb, hb);
  }
  do_lease(w);
}

static void do_register(kf_worker *w) {
  if (w->registering || w->stopping) return;
  const char *kinds[16];
  size_t n = 0;
  for (const kf_task_kind *k = kf_task_kinds; k->kind && n < 16; k++)
    if (!k->available || k->available()) kinds[n++] = k->kind;
  for (int i = 0; i < w->n_torch_kinds && n < 16; i++)
    kinds[n++] = w->torch_kinds[i];
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  Kernelfleet__RegisterWorkerRequest req =
      KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
  req.name = (char *)w->cfg.name;
  req.hostname = host;
  req.device_class = &w->dev.dc;
  req.device = &w->dev.info;
  req.task_kinds = (char **)kinds;
  req.n_task_kinds = n;
  req.slots = w->cfg.slots;
  w->id = 0;
  int rc = kf_rpc_client_call(w->rpc, PATH("RegisterWorker"), &req.base,
                              &kernelfleet__register_worker_response__descriptor,
                              CALL_TIMEOUT_MS, on_registered, w);
  if (rc) {
    kf_log(KF_LOG_ERROR, "register: %s", kf_strerror(rc));
    backoff(w);
    uv_timer_start(&w->retry_timer, on_retry, w->backoff_ms, 0);
    return;
  }
  w->registering = true;
}

/* ----------------------------------------------------------- heartbeat */

static void on_heartbeat_done(int status, const char *detail,
                              const ProtobufCMessage *m, void *data) {
  kf_worker *w = data;
  w->hb_inflight = false;
  if (status == KF_ENOTFOUND && !w->stopping) {
    kf_log(KF_LOG_WARN, "coordinator does not know us (%s); registering", detail);
    do_register(w);
  } else if (status) {
    kf_log(KF_LOG_WARN, "heartbeat: %s: %s", kf_strerror(status), detail);
  }
  maybe_finish(w);
}

static void add_ref(Kernelfleet__TaskRef *refs, Kernelfleet__TaskRef **ptrs,
                    size_t *n, size_t cap, const task_rec *t) {
  if (*n >= cap) return;
  kernelfleet__task_ref__init(&refs[*n]);
  refs[*n].task_id = t->exec.task_id;
  refs[*n].attempt = t->exec.attempt;
  ptrs[*n] = &refs[*n];
  (*n)++;
}

/* Lists every lease we still hold -- running, finished but unreported,
 * and in a report awaiting its verdict -- because the coordinator takes
 * an empty list to mean we hold none and lets any lease it thinks we
 * have expire (coord_rpc.c on_heartbeat). */
static void on_hb_timer(uv_timer_t *h) {
  kf_worker *w = h->data;
  if (w->hb_inflight || !w->id || w->stopping) return;
  Kernelfleet__HeartbeatRequest req = KERNELFLEET__HEARTBEAT_REQUEST__INIT;
  size_t cap = w->n_running + w->n_outbox + (w->report ? w->report->n : 0);
  Kernelfleet__TaskRef *refs = calloc(cap ? cap : 1, sizeof *refs);
  Kernelfleet__TaskRef **ptrs = calloc(cap ? cap : 1, sizeof *ptrs);
  if (!refs || !ptrs) {
    free(refs);
    free(ptrs);
    kf_log(KF_LOG_ERROR, "out of memory building a heartbeat; next tick");
    return;
  }
  size_t n = 0;
  for (task_rec *t = w->running; t; t = t->next) add_ref(refs, ptrs, &n, cap, t);
  for (task_rec *t = w->outbox; t; t = t->next) add_ref(refs, ptrs, &n, cap, t);
  for (size_t i = 0; w->report && i < w->report->n; i++)
    add_ref(refs, ptrs, &n, cap, w->report->sent[i]);
  req.worker_id = w->id;
  req.running = ptrs;
  req.n_running = n;
  if (kf_rpc_client_call(w->rpc, PATH("Heartbeat"), &req.base,
                         &kernelfleet__heartbeat_response__descriptor,
                         (int)w->hb_ms, on_heartbeat_done, w) == 0)
    w->hb_inflight = true;
  free(refs);
  free(ptrs);
}

/* ----------------------------------------------------------------- run */

/* What leaves the worker is valid, display-safe UTF-8 of bounded length,
 * whatever the task kind wrote (a harness reason quotes a candidate's
 * symbol names and compiler output byte for byte). */
static void sanitize_exec(kf_task_exec *e) {
  char tmp[sizeof e->reason];
  kf_text_sanitize(e->stage, strnlen(e->stage, sizeof e->stage), tmp,
                   sizeof e->stage, 0);
  memcpy(e->stage, tmp, sizeof e->stage);
  kf_text_sanitize(e->reason, strnlen(e->reason, sizeof e->reason), tmp,
                   sizeof tmp, KF_TEXT_MULTILINE);
  memcpy(e->reason, tmp, sizeof tmp);
}

static void run_task(uv_work_t *req) {
  task_rec *t = req->data;
  const kf_task_kind *k = kf_task_kind_find(t->kind);
  uint64_t t0 = kf_now_us();
  if (!k) {
    t->exec.outcome = KF_OUTCOME_SPEC_ERROR;
    kf_strlcpy(t->exec.stage, "dispatch", sizeof t->exec.stage);
    snprintf(t->exec.reason, sizeof t->exec.reason,
             "this worker has no task kind '%s'", t->kind);
  } else {
    kf_log_set_task(t->exec.task_id);
    k->run(&t->exec);
    kf_log_set_task(0);
  }
  if (!t->exec.elapsed_us) t->exec.elapsed_us = kf_now_us() - t0;
  sanitize_exec(&t->exec);
}

static void after_task(uv_work_t *req, int status) {
  task_rec *t = req->data;
  kf_worker *w = t->w;
  /* unlink from running, append to outbox */
  for (task_rec **pp = &w->running; *pp; pp = &(*pp)->next)
    if (*pp == t) {
      *pp = t->next;
      break;
    }
  w->n_running--;
  t->running = false;
  if (status == UV_ECANCELED) {
    t->exec.outcome = KF_OUTCOME_INFRA_ERROR;
    kf_strlcpy(t->exec.reason, "worker shutting down", sizeof t->exec.reason);
  }
  kf_worker_stats_task(&w->st, t->kind, t->exec.outcome,
                       (double)(kf_now_ns() - t->t0_ns) / 1e9);
  t->next = w->outbox;
  w->outbox = t;
  w->n_outbox++;
  kf_log(KF_LOG_DEBUG, "task %" PRId64 " attempt %u: %s", t->exec.task_id,
         t->exec.attempt, kf_outcome_name(t->exec.outcome));
  do_report(w);
  if (!w->stopping) do_lease(w);
  maybe_finish(w);
}

static void start_task(kf_worker *w, const Kernelfleet__Task *task) {
  task_rec *t = calloc(1, sizeof *t);
  void *payload = task->payload.len ? malloc(task->payload.len) : NULL;
  if (!t || (task->payload.len && !payload)) {
    free(t);
    free(payload);
    kf_log(KF_LOG_ERROR, "out of memory for task %" PRId64
           "; its lease will expire", task->task_id);
    return;
  }
  if (payload) memcpy(payload, task->payload.data, task->payload.len);
  t->w = w;
  t->worker_id = w->id;
  t->payload = payload;
  kf_strlcpy(t->kind, task->kind, sizeof t->kind);
  t->exec.task_id = task->task_id;
  t->exec.attempt = task->attempt;
  t->exec.kind = t->kind;
  t->exec.payload = payload;
  t->exec.payload_len = task->payload.len;
  t->exec.timeout_ms = task->timeout_ms;
  t->t0_ns = kf_now_ns();
  t->work.data = t;
  t->next = w->running;
  w->running = t;
  w->n_running++;
  t->running = true;
  int rc = uv_queue_work(w->loop, &t->work, run_task, after_task);
  if (rc) {
    w->running = t->next;
    w->n_running--;
    t->exec.outcome = KF_OUTCOME_INFRA_ERROR;
    snprintf(t->exec.reason, sizeof t->exec.reason, "uv_queue_work: %s",
             uv_strerror(rc));
    t->next = w->outbox;
    w->outbox = t;
    w->n_outbox++;
  }
}

/* --------------------------------------------------------------- lease */

static void on_leased(int status, const char *detail,
                      const ProtobufCMessage *m, void *data) {
  kf_worker *w = data;
  w->lease_inflight = false;
  if (status) {
    if (status == KF_ECANCELED || w->stopping) {
      maybe_finish(w);
      return;
    }
    kf_log(KF_LOG_WARN, "lease: %s: %s", kf_strerror(status), detail);
    if (status == KF_ENOTFOUND) {
      do_register(w);
      return;
    }
    backoff(w);
    uv_timer_start(&w->retry_timer, on_retry, w->backoff_ms, 0);
    return;
  }
  w->backoff_ms = 0;
  const Kernelfleet__LeaseTasksResponse *r = (const void *)m;
  if (r->n_tasks) {
    kf_metrics_hist_observe(&w->st.lease_hist,
                            (double)(kf_now_ns() - w->lease_t0_ns) / 1e9);
    w->st.tasks_leased += r->n_tasks;
  } else {
    w->st.lease_empty++;
  }
  for (size_t i = 0; i < r->n_tasks; i++) {
    if (w->stopping) {
      /* Hand it straight back: an infra error requeues it now instead of
       * after the lease expires. */
      task_rec *t = calloc(1, sizeof *t);
      if (!t) continue;
      t->w = w;
      t->worker_id = w->id;
      t->exec.task_id = r->tasks[i]->task_id;
      t->exec.attempt = r->tasks[i]->attempt;
      t->exec.outcome = KF_OUTCOME_INFRA_ERROR;
      kf_strlcpy(t->exec.reason, "worker shutting down", sizeof t->exec.reason);
      t->next = w->outbox;
      w->outbox = t;
      w->n_outbox++;
      continue;
    }
    start_task(w, r->tasks[i]);
  }
  if (w->stopping) {
    do_report(w);
    maybe_finish(w);
    return;
  }
  do_lease(w);
}

static void do_lease(kf_worker *w) {
  if (w->lease_inflight || w->stopping || !w->id || w->registering) return;
  if (w->n_running >= w->cfg.slots) return;
  /* A result that cannot be delivered now stops new work until it is
   * delivered or dropped: otherwise the worker keeps leasing (and
   * heartbeating those leases) while results pile up undelivered. */
  if (w->undelivered) return;
  /* Keep the outbox bounded, counting the results in flight too: a
   * worker that cannot report stops taking work. */
  size_t unacked = w->n_outbox + (w->report ? w->report->n : 0);
  if (unacked >= OUTBOX_MAX) return;
  Kernelfleet__LeaseTasksRequest req = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
  req.worker_id = w->id;
  req.max_tasks = w->cfg.slots - w->n_running;
  req.wait_ms = w->cfg.lease_wait_ms;
  int rc = kf_rpc_client_call(w->rpc, PATH("LeaseTasks"), &req.base,
                              &kernelfleet__lease_tasks_response__descriptor,
                              (int)w->cfg.lease_wait_ms + 5000, on_leased, w);
  if (rc) {
    kf_log(KF_LOG_ERROR, "lease: %s", kf_strerror(rc));
    backoff(w);
    uv_timer_start(&w->retry_timer, on_retry, w->backoff_ms, 0);
    return;
  }
  w->lease_inflight = true;
  w->lease_t0_ns = kf_now_ns();
}

/* -------------------------------------------------------------- report */

static void on_report_timer(uv_timer_t *h) { do_report(h->data); }

/* The result is gone for good: counted as failed, with why. */
static void drop_failed(kf_worker *w, task_rec *t, const char *why) {
  w->n_failed++;
  kf_log(KF_LOG_ERROR, "task %" PRId64 " attempt %u: result refused for good"
         " (%s); recorded as failed, dropped", t->exec.task_id,
         t->exec.attempt, why);
  task_free(t);
}

/* A result the coordinator refused as a whole (too large, or malformed)
 * can never be delivered as it is, and dropping it left its task to fail
 * much later as "lease expired" with nothing stored.  It is sent once
 * more as a small stand-in -- infra_error at stage "report", no output,
 * a reason naming what was refused and why -- so the task's failure is
 * stored with its reason and the coordinator's retry policy applies.
 * The coordinator's text is sanitized like any other (it may quote
 * bytes of ours). */
static void replace_refused(task_rec *t, const char *why) {
  char r[sizeof t->exec.reason];
  snprintf(r, sizeof r, "the worker's result (outcome %s at stage %.31s, "
           "%zu bytes of output) was refused by the coordinator as a whole,"
           " so it was replaced by this record: %s",
           kf_outcome_name(t->exec.outcome), t->exec.stage,
           t->exec.output_len, why);
  kf_text_sanitize(r, strlen(r), t->exec.reason, sizeof t->exec.reason, 0);
  free(t->exec.output);
  t->exec.output = NULL;
  t->exec.output_len = 0;
  t->exec.outcome = KF_OUTCOME_INFRA_ERROR;
  snprintf(t->exec.stage, sizeof t->exec.stage, "report");
  t->replaced = true;
}

static void on_reported(int status, const char *detail,
                        const ProtobufCMessage *m, void *data) {
  report_ctx *ctx = data;
  kf_worker *w = ctx->w;
  w->report_inflight = false;
  w->report = NULL;
  /* Refused as a whole: INVALID_ARGUMENT (the client reads KF_EPROTO) or
   * too large.  Resending the same call cannot help.  Several results:
   * send them one per call, so the one at fault is found and the others
   * get through; a single one: it can never be delivered. */
  bool whole = status == KF_EPROTO || status == KF_EINVAL ||
               status == KF_ETOOBIG;
  if (whole && ctx->n == 1 && !ctx->sent[0]->replaced) {
    /* the one at fault is found: its stand-in goes out next */
    task_rec *t = ctx->sent[0];
    char why[300];
    snprintf(why, sizeof why, "%s: %s", kf_strerror(status), detail);
    kf_log(KF_LOG_WARN, "task %" PRId64 " attempt %u: result refused as a "
           "whole (%s); sending a small infra_error record in its place",
           t->exec.task_id, t->exec.attempt, why);
    replace_refused(t, why);
    t->next = w->outbox;
    w->outbox = t;
    w->n_outbox++;
    if (!w->closed && (!w->stopping || kf_now_ms() < w->stop_deadline_ms))
      uv_timer_start(&w->report_timer, on_report_timer, 0, 0);
  } else if (whole && ctx->n == 1) {
    char why[300];
    snprintf(why, sizeof why, "%s: %s", kf_strerror(status), detail);
    drop_failed(w, ctx->sent[0], why);
    w->undelivered = false;
    w->report_max = REPORT_BATCH;
  } else if (status) {
    /* Put them back; nothing is lost until a verdict arrives. */
    for (size_t i = 0; i < ctx->n; i++) {
      ctx->sent[i]->next = w->outbox;
      w->outbox = ctx->sent[i];
      w->n_outbox++;
    }
    if (whole) {
      w->report_max = 1;
      kf_log(KF_LOG_WARN, "report of %zu results refused as a whole: %s: %s;"
             " sending them one by one", ctx->n, kf_strerror(status),
             detail);
    } else {
      w->undelivered = true;
      kf_log(KF_LOG_WARN, "report of %zu results: %s: %s; will retry",
             ctx->n, kf_strerror(status), detail);
    }
    if (!w->stopping || kf_now_ms() < w->stop_deadline_ms) {
      backoff(w);
      uv_timer_start(&w->report_timer, on_report_timer,
                     whole ? 0 : w->backoff_ms, 0);
    }
  } else {
    const Kernelfleet__ReportResultResponse *r = (const void *)m;
    for (size_t i = 0; i < ctx->n; i++) {
      int v = i < r->n_verdicts ? (int)r->verdicts[i] : 0;
      const char *why = i < r->n_details ? r->details[i] : "";
      task_rec *t = ctx->sent[i];
      if (v == KERNELFLEET__REPORT_VERDICT__REPORT_ACCEPTED ||
          v == KERNELFLEET__REPORT_VERDICT__REPORT_DUPLICATE) {
        w->n_done++;
      } else if (v == KERNELFLEET__REPORT_VERDICT__REPORT_INVALID) {
        char clean[256];
        kf_text_sanitize(why, strlen(why), clean, sizeof clean, 0);
        drop_failed(w, t, clean);
        continue;
      } else {
        kf_log(KF_LOG_WARN, "task %" PRId64 " attempt %u: result refused (%s)",
               t->exec.task_id, t->exec.attempt,
               v == KERNELFLEET__REPORT_VERDICT__REPORT_STALE ? "stale lease"
               : v == KERNELFLEET__REPORT_VERDICT__REPORT_NOT_HOLDER
                   ? "not the lease holder"
               : v == KERNELFLEET__REPORT_VERDICT__REPORT_UNKNOWN_TASK
                   ? "unknown task"
                   : "unknown verdict");
      }
      task_free(t);
    }
    w->backoff_ms = 0;
    w->undelivered = false;
    /* One by one until the outbox is empty, so a refused batch is not
     * rebuilt around its culprit again. */
    if (!w->outbox) w->report_max = REPORT_BATCH;
  }
  free(ctx->sent);
  free(ctx);
  if (w->outbox && !uv_is_active((uv_handle_t *)&w->report_timer)) do_report(w);
  if (!w->stopping) do_lease(w);
  maybe_finish(w);
}

static void do_report(kf_worker *w) {
  if (w->report_inflight || !w->outbox || w->closed) return;
  size_t max = w->report_max ? w->report_max : REPORT_BATCH;
  size_t n = w->n_outbox < max ? w->n_outbox : max;
  report_ctx *ctx = calloc(1, sizeof *ctx);
  task_rec **sent = calloc(n, sizeof *sent);
  Kernelfleet__TaskResult *res = calloc(n, sizeof *res);
  Kernelfleet__TaskResult **ptrs = calloc(n, sizeof *ptrs);
  if (!ctx || !sent || !res || !ptrs) {
    free(ctx);
    free(sent);
    free(res);
    free(ptrs);
    kf_log(KF_LOG_ERROR, "out of memory building a report; will retry");
    uv_timer_start(&w->report_timer, on_report_timer, 500, 0);
    return;
  }
  /* One call carries results of one worker id; results from before a
   * re-registration go out under their own id in a later call. */
  int64_t wid = w->outbox->worker_id;
  size_t k = 0, bytes = 0;
  for (task_rec **pp = &w->outbox; *pp && k < n;) {
    task_rec *t = *pp;
    if (t->worker_id != wid) {
      pp = &t->next;
      continue;
    }
    /* Keep a call well under the message limit; one result always goes. */
    size_t sz = t->exec.output_len + strlen(t->exec.reason) + 64;
    if (k > 0 && bytes + sz > REPORT_BYTES) break;
    bytes += sz;
    *pp = t->next;
    w->n_outbox--;
    sent[k] = t;
    kernelfleet__task_result__init(&res[k]);
    res[k].task_id = t->exec.task_id;
    res[k].attempt = t->exec.attempt;
    res[k].outcome = (Kernelfleet__Outcome)t->exec.outcome;
    res[k].stage = t->exec.stage;
    res[k].reason = t->exec.reason;
    res[k].output.data = t->exec.output;
    res[k].output.len = t->exec.output_len;
    res[k].elapsed_us = t->exec.elapsed_us;
    ptrs[k] = &res[k];
    k++;
  }
  Kernelfleet__ReportResultRequest req = KERNELFLEET__REPORT_RESULT_REQUEST__INIT;
  req.worker_id = wid;
  req.results = ptrs;
  req.n_results = k;
  ctx->w = w;
  ctx->sent = sent;
  ctx->n = k;
  int rc = kf_rpc_client_call(w->rpc, PATH("ReportResult"), &req.base,
                              &kernelfleet__report_result_response__descriptor,
                              CALL_TIMEOUT_MS, on_reported, ctx);
  free(res);
  free(ptrs);
  if (rc) {
    on_reported(rc, kf_strerror(rc), NULL, ctx);
    return;
  }
  w->report_inflight = true;
  w->report = ctx;
}

/* ------------------------------------------------------------ shutdown */

static void on_close_noop(uv_handle_t *h) { (void)h; }

static void maybe_finish(kf_worker *w) {
  if (!w->stopping || w->closed) return;
  bool deadline = kf_now_ms() >= w->stop_deadline_ms;
  if (w->n_running) return; /* tasks finish on their own; bounded by timeouts */
  if ((w->outbox || w->report_inflight) && !deadline) {
    /* A failed report waits out its backoff here too: retrying at once
     * would spin while the coordinator is down. */
    if (!uv_is_active((uv_handle_t *)&w->report_timer)) do_report(w);
    return;
  }
  if (w->registering || w->hb_inflight || w->report_inflight ||
      w->lease_inflight) {
    if (!deadline) return;
  }
  w->closed = true;
  if (w->outbox)
    kf_log(KF_LOG_WARN, "%zu results undelivered at exit; their leases will "
           "expire and the tasks run again", w->n_outbox);
  uv_timer_stop(&w->hb_timer);
  uv_timer_stop(&w->retry_timer);
  uv_timer_stop(&w->report_timer);
  uv_close((uv_handle_t *)&w->hb_timer, on_close_noop);
  uv_close((uv_handle_t *)&w->retry_timer, on_close_noop);
  uv_close((uv_handle_t *)&w->report_timer, on_close_noop);
  uv_close((uv_handle_t *)&w->sigint, on_close_noop);
  uv_close((uv_handle_t *)&w->sigterm, on_close_noop);
  kf_httpd_stop(w->httpd);
  w->httpd = NULL;
  /* Cancels the long poll; its callback runs with ECANCELED. */
  kf_rpc_client_close(w->rpc);
  w->rpc = NULL;
}

static void on_stop_tick(uv_timer_t *h) { maybe_finish(h->data); }

static void on_signal(uv_signal_t *s, int signum) {
  kf_worker *w = s->data;
  if (w->stopping) {
    kf_log(KF_LOG_WARN, "second signal %d: exiting now", signum);
    _exit(1);
  }
  kf_log(KF_LOG_INFO, "signal %d: finishing %u running tasks", signum,
         w->n_running);
  w->stopping = true;
  w->stop_deadline_ms = kf_now_ms() + 5000;
  uv_timer_stop(&w->retry_timer);
  uv_timer_stop(&w->hb_timer);
  /* Reuse the heartbeat timer as a shutdown tick so the deadline is
   * noticed even when nothing else happens. */
  uv_timer_start(&w->hb_timer, on_stop_tick, 200, 200);
  do_report(w);
  maybe_finish(w);
}

/* /metrics on the loop; the bound port also goes to a file when asked
 * (tests, and supervisors that pick port 0). */
static int start_metrics(kf_worker *w) {
  char err[512];
  int port = 0;
  int rc = kf_worker_metrics_start(w->loop, w->cfg.metrics_listen, &w->st,
                                   &w->httpd, &port, err, sizeof err);
  if (rc) {
    kf_log(KF_LOG_FATAL, "%s", err);
    return rc;
  }
  kf_log(KF_LOG_INFO, "metrics on %s (port %d): GET /metrics",
         w->cfg.metrics_listen, port);
  const char *pf = w->cfg.metrics_port_file;
  if (pf) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s.tmp", pf);
    FILE *f = fopen(tmp, "w");
    bool ok = f && fprintf(f, "%d\n", port) >= 0;
    if (f && fclose(f) != 0) ok = false;
    if (!ok || rename(tmp, pf) != 0) {
      kf_log(KF_LOG_FATAL, "cannot write metrics port file %s", pf);
      kf_httpd_stop(w->httpd);
      w->httpd = NULL;
      return KF_EIO;
    }
  }
  return 0;
}

int kf_worker_run(const kf_worker_config *cfg) {
  kf_worker ws;
  kf_worker *w = &ws;
  memset(w, 0, sizeof *w);
  w->cfg = *cfg;
  /* First, before any thread or child: the work directory and the
   * watchdog that removes it, and kills every harness, when we die. */
  char workdir[PATH_MAX], why[512];
  if (kf_watchdog_start(workdir, sizeof workdir, why, sizeof why)) {
    kf_log(KF_LOG_FATAL, "%s", why);
    return KF_EIO;
  }
  kf_task_eval_set_workdir(workdir);
  /* The device (worker/device_cuda.c): ceilings measured once, registered
   * with the device and used by every eval's roofline check. */
  char derr[512];
  if (kf_device_setup(&w->dev, cfg->device, derr, sizeof derr)) {
    kf_log(KF_LOG_FATAL, "device %s: %s", cfg->device, derr);
    return KF_EINVAL;
  }
  /* PyTorch, probed once now (no thread yet): torch campaigns are leased
   * only to workers that have it */
  w->n_torch_kinds = kf_torch_caps_probe(
      w->dev.dc.kind != KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU,
      w->torch_kinds, derr, sizeof derr);
  if (w->n_torch_kinds)
    kf_log(KF_LOG_INFO, "torch: %s%s", w->torch_kinds[1],
           w->n_torch_kinds > 2 ? ", built with CUDA" : "");
  else
    kf_log(KF_LOG_INFO, "no torch problems here: %s", derr);
  if (cfg->device_class) {
    /* A GPU's class is what nvcc targets and what it measures: it is
     * never renamed. */
    if (w->dev.dc.kind != KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU) {
      kf_log(KF_LOG_FATAL, "--device-class is for CPU workers; device %s"
             " is a GPU (%s)", cfg->device, w->dev.model);
      return KF_EINVAL;
    }
    kf_strlcpy(w->dev.model, cfg->device_class, sizeof w->dev.model);
    kf_log(KF_LOG_INFO, "device class named %s (--device-class)",
           w->dev.model);
  }

  uv_loop_t loop;
  int rc = uv_loop_init(&loop);
  if (rc) {
    kf_log(KF_LOG_FATAL, "uv_loop_init: %s", uv_strerror(rc));
    return KF_EINTERNAL;
  }
  w->loop = &loop;
  char err[256];
  kf_rpc_tls tls = {.ca_file = cfg->tls_ca, .cert_file = cfg->tls_cert,
                    .key_file = cfg->tls_key};
  rc = kf_rpc_client_open_tls(&loop, cfg->coordinator, cfg->token, &tls,
                              16u << 20, &w->rpc, err, sizeof err);
  if (rc) {
    kf_log(KF_LOG_FATAL, "coordinator %s: %s", cfg->coordinator, err);
    uv_loop_close(&loop);
    return rc;
  }
  uv_timer_init(&loop, &w->hb_timer);
  uv_timer_init(&loop, &w->retry_timer);
  uv_timer_init(&loop, &w->report_timer);
  w->hb_timer.data = w->retry_timer.data = w->report_timer.data = w;
  uv_signal_init(&loop, &w->sigint);
  uv_signal_init(&loop, &w->sigterm);
  w->sigint.data = w->sigterm.data = w;
  uv_signal_start(&w->sigint, on_signal, SIGINT);
  uv_signal_start(&w->sigterm, on_signal, SIGTERM);

  kf_worker_stats_init(&w->st, cfg->name, &w->dev, cfg->slots);
  w->st.running = &w->n_running;
  w->st.outbox = &w->n_outbox;
  w->st.delivered = &w->n_done;
  w->st.refused = &w->n_failed;
  if (cfg->metrics_listen && (rc = start_metrics(w))) {
    kf_rpc_client_close(w->rpc);
    uv_close((uv_handle_t *)&w->hb_timer, on_close_noop);
    uv_close((uv_handle_t *)&w->retry_timer, on_close_noop);
    uv_close((uv_handle_t *)&w->report_timer, on_close_noop);
    uv_close((uv_handle_t *)&w->sigint, on_close_noop);
    uv_close((uv_handle_t *)&w->sigterm, on_close_noop);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    return rc;
  }

  kf_log(KF_LOG_INFO, "worker %s: %u slots, coordinator %s", cfg->name,
         cfg->slots, cfg->coordinator);
  do_register(w);
  uv_run(&loop, UV_RUN_DEFAULT);

  while (w->outbox) {
    task_rec *t = w->outbox;
    w->outbox = t->next;
    task_free(t);
  }
  rc = uv_loop_close(&loop);
  if (rc) kf_log(KF_LOG_WARN, "loop closed with handles open: %s",
                 uv_strerror(rc));
  kf_log(KF_LOG_INFO, "stopped after %llu tasks (%llu results refused)",
         (unsigned long long)w->n_done, (unsigned long long)w->n_failed);
  return 0;
}
