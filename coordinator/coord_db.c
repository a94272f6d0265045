/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/coord_db.c -- batches: how calls reach PostgreSQL.
 *
 * At most one batch is in flight.  kf_coord__flush (loop thread, from the
 * check handle, i.e. just before the loop would sleep) takes every pending
 * op, plus the parked long polls when new tasks may exist, and runs them on
 * a libuv work thread against the store, grouped by kind so that all
 * reports of the batch are one transaction, all leases another, all
 * heartbeats a third.  after_batch (loop thread) answers the calls, parks
 * the long polls that got nothing, and kicks the next flush.
 *
 * The work thread reads the ops' requests and writes only the ops' result
 * fields; it never touches kf_coord's lists or the registry.
 *
 * Deadlines: an op whose caller's deadline has passed is never run
 * against the database.  The loop drops expired pending ops (cron and
 * flush); the work thread checks each op again right before its
 * statements (gone()), since a batch may sit for seconds on a hung
 * database; and a lease granted while its caller gave up is undone at
 * once (kf_store_unlease) instead of being answered into a dead call.
 *
 * Campaigns: a batch runs a search step (search.c) after its reports and
 * before its leases when the loop asked for one (cron, a new campaign or
 * proposal) or when it accepted a report while campaigns may be running,
 * so new eval tasks can be leased in the same batch.  Reports are decoded
 * as EvalResult here, on the work thread, for the store to record as
 * evaluations when their task is a campaign's eval task.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "err.h"
#include "log.h"
#include "search.h"
#include "token.h"
#include "util.h"

typedef struct {
  uv_work_t work;
  kf_coord *co;
  kf_coord_op *ops;
  bool reap;
  int reaped, reap_failed;
  bool underfilled;     /* some lease request got fewer than it asked */
  kf_lease_grant *grant;
  bool search;          /* run a search step whatever happens */
  bool campaigns;       /* campaigns may be running: step after reports */
  bool searched;        /* a step ran; its outcome below */
  int search_rc;
  char search_err[256];
  kf_search_opts search_opts;
  kf_search_stats search_st;
  bool creds;           /* reload the credential table */
  int creds_rc;
  kf_rpc_cred *cred_tab; /* the valid credentials, for the rpc server */
  size_t n_cred;
  int64_t *cred_ids;     /* their ids, sorted, for the coordinator */
  bool metrics;          /* take a /metrics snapshot (coord_metrics.c) */
  uint32_t alive_ms;
  int metrics_rc;
  char metrics_err[256];
  kf_store_metrics msnap;
} kf_batch;

/* Work thread: true when op's caller gave up (its deadline, for a lease
 * less the margin, has passed) -- the op then fails KF_ETIMEDOUT, or as a
 * lease is answered empty (gave_up) -- and it must not reach the
 * database.  Once true, stays true: callers that decide in one loop read
 * op->rc / op->gave_up in the next. */
static bool gone(kf_coord_op *op) {
  if (op->gave_up || op->rc == KF_ETIMEDOUT) return true;
  if (kf_now_ms() < op->give_up_ms) return false;
  if (op->kind == KF_OP_LEASE) {
    op->gave_up = true;
  } else {
    op->rc = KF_ETIMEDOUT;
    snprintf(op->err, sizeof op->err, "the call's deadline passed while it "
             "waited for the database; nothing was done");
  }
  return true;
}

static void set_err(kf_coord_op *op, int rc, kf_store *s) {
  op->rc = rc;
  kf_strlcpy(op->err, kf_store_errmsg(s), sizeof op->err);
}

static void dc_from_proto(kf_device_class *dc,
                          const Kernelfleet__DeviceClass *p) {
  memset(dc, 0, sizeof *dc);
  dc->kind = (int)p->kind;
  kf_strlcpy(dc->model, p->model, sizeof dc->model);
  dc->cc_major = p->cc_major;
  dc->cc_minor = p->cc_minor;
  kf_strlcpy(dc->isa, p->isa, sizeof dc->isa);
}

static void do_register(kf_store *s, kf_coord_op *op) {
  const Kernelfleet__RegisterWorkerRequest *r = (const void *)op->req;
  kf_worker_reg reg = {
      .name = r->name,
      .hostname = r->hostname,
      .task_kinds = (const char *const *)r->task_kinds,
      .n_task_kinds = r->n_task_kinds,
      .slots = r->slots ? r->slots : 1,
  };
  dc_from_proto(&reg.dc, r->device_class);
  char json[1024];
  const Kernelfleet__DeviceInfo *d = r->device;
  if (d)
    snprintf(json, sizeof json,
             "{\"cores\": %u, \"l2_bytes\": %llu, \"mem_bytes\": %llu, "
             "\"copy_gbps\": %.3f, \"peak_gflops\": %.3f, "
             "\"read_gbps\": %.3f, \"write_gbps\": %.3f}",
             d->cores, (unsigned long long)d->l2_bytes,
             (unsigned long long)d->mem_bytes, d->copy_gbps, d->peak_gflops,
             d->read_gbps, d->write_gbps);
  else
    snprintf(json, sizeof json, "{}");
  reg.device_json = json;
  /* The environment its measurements are identified by (0004). */
  if (d) {
    reg.harness_build = d->harness_build;
    reg.toolchain = d->compiler;
    reg.driver = d->driver_version;
    reg.runtime = d->runtime_version;
  }
  reg.token_id = op->cred_id; /* binding: only this credential acts for it */
  int rc = kf_store_register_worker(s, &reg, &op->new_id, &op->new_dc_id);
  if (rc) set_err(op, rc, s);
}

/* A worker the loop does not know (a restart since it registered): its
 * kinds and class for the registry, and the binding check the loop could
 * not make (coord_rpc.c binding_ok). */
static void do_lookup(kf_store *s, kf_coord_op *op) {
  int64_t id = kf_coord__op_worker(op);
  int rc = kf_store_get_worker(s, id, &op->new_dc_id, op->kinds_csv,
                               sizeof op->kinds_csv, &op->bound_cred);
  if (rc == KF_ENOTFOUND) {
    op->rc = rc;
    snprintf(op->err, sizeof op->err,
             "unknown worker %" PRId64 ": register again", id);
  } else if (rc) {
    set_err(op, rc, s);
  } else if (op->bound_cred != op->cred_id) {
    op->rc = KF_EPERM;
    snprintf(op->err, sizeof op->err, "worker %" PRId64 " was registered"
             " with another credential; only that credential may act for it",
             id);
  }
}

int kf_coord__load_creds(kf_store *s, kf_rpc_cred **out, size_t *n) {
  kf_token_row *rows;
  size_t nr;
  *out = NULL;
  *n = 0;
  int rc = kf_store_token_list(s, false, &rows, &nr);
  if (rc) return rc;
  kf_rpc_cred *t = calloc(nr ? nr : 1, sizeof *t);
  if (!t) {
    free(rows);
    return KF_ENOMEM;
  }
  size_t k = 0;
  for (size_t i = 0; i < nr; i++) {
    unsigned role = kf_token_role_parse(rows[i].role);
    if (!role || kf_token_hex_decode(rows[i].hash, t[k].hash)) continue;
    t[k].role = role;
    t[k].id = rows[i].id;
    k++;
  }
  free(rows);
  *out = t;
  *n = k;
  return 0;
}

static int cmp_id(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int kf_coord__cred_ids(const kf_rpc_cred *t, size_t n, int64_t **out) {
  int64_t *ids = malloc((n ? n : 1) * sizeof *ids);
  if (!ids) return KF_ENOMEM;
  for (size_t i = 0; i < n; i++) ids[i] = t[i].id;
  qsort(ids, n, sizeof *ids, cmp_id);
  *out = ids;
  return 0;
}

bool kf_coord__cred_valid(const int64_t *ids, size_t n, int64_t id) {
  return id == 0 || (n && bsearch(&id, ids, n, sizeof *ids, cmp_id));
}

/* A lease whose credential is no longer valid.  Its call was admitted
 * before the revocation (a long poll waits up to its deadline), so the
 * server's check at arrival does not cover it: it must get no task. */
static void refuse_revoked(kf_coord_op *op) {
  op->rc = KF_EAUTH;
  snprintf(op->err, sizeof op->err, "credential %" PRId64 " was revoked",
           op->cred_id);
}

static void do_submit(kf_store *s, kf_coord_op *op, uint32_t max_attempts) {
  const Kernelfleet__SubmitTasksRequest *r = (const void *)op->req;
  kf_task_spec *specs = calloc(r->n_tasks, sizeof *specs);
  if (!specs) {
    op->rc = KF_ENOMEM;
    return;
  }
  int rc = 0;
  for (size_t i = 0; i < r->n_tasks && !rc; i++) {
    const Kernelfleet__TaskSpec *t = r->tasks[i];
    specs[i] = (kf_task_spec){
        .kind = t->kind,
        .payload = t->payload.data,
        .payload_len = t->payload.len,
        .max_attempts = t->max_attempts ? t->max_attempts : max_attempts,
        .priority = t->priority,
        .campaign_id = t->campaign_id,
        .timeout_ms = t->timeout_ms,
    };
    if (t->device_class && t->device_class->kind != 0) {
      kf_device_class dc;
      dc_from_proto(&dc, t->device_class);
      rc = kf_store_device_class_id(s, &dc, &specs[i].device_class_id);
    }
  }
  if (!rc) rc = kf_store_submit(s, specs, r->n_tasks, op->ids);
  if (rc) set_err(op, rc, s);
  free(specs);
}

/* What decode_eval adds to a row besides the EvalResult's own fields. */
typedef struct {
  kf_diag diag;
  kf_prof prof;
  char bad[200];
} eval_extra;

/* The diagnosis (common/diagnose.h) of an ok EvalResult, from its own
 * numbers and the ceilings its harness measured, refined by its profile;
 * the profile checked (a bad one makes the report INVALID). */
static void diagnose(const Kernelfleet__TaskResult *t,
                     const Kernelfleet__EvalResult *e, kf_eval_row *row,
                     eval_extra *x) {
  if (e->profile) {
    if (kf_prof_from_pb(e->profile, &x->prof, x->bad, sizeof x->bad) == 0)
      row->prof = &x->prof;
    else
      row->bad = x->bad;
  }
  if (t->outcome != KERNELFLEET__OUTCOME__OUTCOME_OK ||
      e->outcome != KERNELFLEET__OUTCOME__OUTCOME_OK)
    return;
  double ceil = e->ceiling_gbps;
  const Kernelfleet__DeviceInfo *d = e->device;
  if (!(ceil > 0) && d) {
    ceil = d->copy_gbps;
    if (d->read_gbps > ceil) ceil = d->read_gbps;
    if (d->write_gbps > ceil) ceil = d->write_gbps;
  }
  kf_diag_in in = {
      .gpu = e->device_class &&
             e->device_class->kind == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA,
      .time_ns = e->time_ns_median,
      .gbps = e->achieved_gbps,
      .gflops = e->achieved_gflops,
      .ceil_gbps = ceil,
      .ceil_gflops = d ? d->peak_gflops : 0,
      .prof = row->prof,
  };
  if (kf_diag_classify(&in, &x->diag) == 0) row->diag = &x->diag;
}

/* An eval task's output is its EvalResult; anything else does not unpack
 * or is never used (the store only records evaluations of eval tasks). */
static Kernelfleet__EvalResult *decode_eval(const Kernelfleet__TaskResult *t,
                                            kf_eval_row *row,
                                            eval_extra *x) {
  if (t->output.len == 0) return NULL;
  Kernelfleet__EvalResult *e =
      kernelfleet__eval_result__unpack(NULL, t->output.len, t->output.data);
  if (!e) return NULL;
  *row = (kf_eval_row){
      .time_ns_median = e->time_ns_median,
      .time_ns_spread = e->time_ns_spread,
      .ref_time_ns_median = e->ref_time_ns_median,
      .ref_time_ns_spread = e->ref_time_ns_spread,
      .achieved_gbps = e->achieved_gbps,
      .compile_time_ns_median = e->compile_time_ns_median,
      .max_autotune_time_ns_median = e->max_autotune_time_ns_median,
      .stream_gbps = e->stream_gbps,
      .repetitions = e->repetitions,
      .timing_dependent = e->timing_dependent,
      .harness_build = e->harness_build,
      .toolchain = e->toolchain,
      .result = t->output.data,
      .result_len = t->output.len,
  };
  diagnose(t, e, row, x);
  return e;
}

/* Returns true when some report was accepted. */
static bool do_reports(kf_store *s, kf_coord_op *ops) {
  size_t n = 0;
  bool accepted = false;
  /* A report whose lookup failed (unknown worker, another credential)
   * has op->rc set already and is stored nowhere. */
  for (kf_coord_op *op = ops; op; op = op->next)
    if (op->kind == KF_OP_REPORT && !op->rc && !gone(op))
      n += ((const Kernelfleet__ReportResultRequest *)op->req)->n_results;
  if (!n) return false;
  kf_report *reps = calloc(n, sizeof *reps);
  kf_verdict *v = calloc(n, sizeof *v);
  kf_report_note *notes = calloc(n, sizeof *notes);
  kf_eval_row *rows = calloc(n, sizeof *rows);
  Kernelfleet__EvalResult **msgs = calloc(n, sizeof *msgs);
  eval_extra *extra = calloc(n, sizeof *extra);
  int rc = (!reps || !v || !notes || !rows || !msgs || !extra) ? KF_ENOMEM
                                                               : 0;
  size_t k = 0;
  for (kf_coord_op *op = ops; op && !rc; op = op->next) {
    if (op->kind != KF_OP_REPORT || op->rc) continue;
    const Kernelfleet__ReportResultRequest *r = (const void *)op->req;
    for (size_t i = 0; i < r->n_results; i++) {
      const Kernelfleet__TaskResult *t = r->results[i];
      reps[k++] = (kf_report){
          .worker_id = r->worker_id,
          .task_id = t->task_id,
          .attempt = t->attempt,
          .outcome = (int)t->outcome,
          .stage = t->stage,
          .reason = t->reason,
          .output = t->output.data,
          .output_len = t->output.len,
          .elapsed_us = t->elapsed_us,
      };
      msgs[k - 1] = decode_eval(t, &rows[k - 1], &extra[k - 1]);
      if (msgs[k - 1]) reps[k - 1].eval = &rows[k - 1];
    }
  }
  if (!rc) rc = kf_store_report_ex(s, reps, n, v, notes);
  k = 0;
  for (kf_coord_op *op = ops; op; op = op->next) {
    if (op->kind != KF_OP_REPORT || op->rc) continue;
    size_t m = ((const Kernelfleet__ReportResultRequest *)op->req)->n_results;
    if (rc) {
      if (rc == KF_ENOMEM) op->rc = rc;
      else set_err(op, rc, s);
    } else {
      memcpy(op->verdicts, v + k, m * sizeof *v);
      if (op->notes) memcpy(op->notes, notes + k, m * sizeof *notes);
      for (size_t i = 0; i < m; i++) {
        if (v[k + i] == KF_VERDICT_ACCEPTED) accepted = true;
        if (v[k + i] == KF_VERDICT_INVALID)
          kf_log(KF_LOG_WARN, "worker %" PRId64 ": result of task %" PRId64
                 " attempt %u refused: %s", reps[k + i].worker_id,
                 reps[k + i].task_id, reps[k + i].attempt, notes[k + i].text);
      }
    }
    k += m;
  }
  for (size_t i = 0; msgs && i < n; i++)
    if (msgs[i]) kernelfleet__eval_result__free_unpacked(msgs[i], NULL);
  free(msgs);
  free(extra);
  free(rows);
  free(reps);
  free(v);
  free(notes);
  return accepted;
}

/* All heartbeats of the batch in one statement: each extends exactly the
 * leases its worker listed (see kf_store_heartbeat), and learns which of
 * them it no longer holds. */
static void do_heartbeats(kf_store *s, kf_coord_op *ops, int ttl) {
  size_t n = 0, nrefs = 0;
  for (kf_coord_op *op = ops; op; op = op->next)
    if (op->kind == KF_OP_HEARTBEAT && !op->rc && !gone(op)) {
      n++;
      nrefs += ((const Kernelfleet__HeartbeatRequest *)op->req)->n_running;
    }
  if (!n) return;
  int64_t *ids = calloc(n, sizeof *ids);
  kf_lease_ref *refs = calloc(nrefs + 1, sizeof *refs);
  bool *live = calloc(nrefs + 1, sizeof *live);
  int rc = ids && refs && live ? 0 : KF_ENOMEM;
  size_t k = 0, kr = 0;
  for (kf_coord_op *op = ops; op && !rc; op = op->next) {
    if (op->kind != KF_OP_HEARTBEAT || op->rc) continue;
    const Kernelfleet__HeartbeatRequest *r = (const void *)op->req;
    ids[k++] = r->worker_id;
    for (size_t i = 0; i < r->n_running; i++)
      refs[kr++] = (kf_lease_ref){r->worker_id, r->running[i]->task_id,
                                  r->running[i]->attempt};
  }
  if (!rc) rc = kf_store_heartbeat(s, ids, n, refs, nrefs, ttl, live);
  kr = 0;
  for (kf_coord_op *op = ops; op; op = op->next) {
    if (op->kind != KF_OP_HEARTBEAT || op->rc) continue;
    size_t m = ((const Kernelfleet__HeartbeatRequest *)op->req)->n_running;
    if (rc == KF_ENOMEM) op->rc = rc;
    else if (rc) set_err(op, rc, s);
    else if (m && op->hb_live) memcpy(op->hb_live, live + kr, m * sizeof *live);
    kr += m;
  }
  free(ids);
  free(refs);
  free(live);
}

/* The lease statement may have waited (a stopped database resumed):
 * grants whose caller has given up since go back to the queue now, or
 * they would sit leased to a call nobody reads until the lease expired. */
static void undo_late_grants(kf_store *s, kf_coord_op **who, size_t n) {
  size_t nref = 0;
  for (size_t i = 0; i < n; i++)
    if (who[i]->n_granted && gone(who[i])) nref += who[i]->n_granted;
  if (!nref) return;
  kf_lease_ref *refs = calloc(nref, sizeof *refs);
  size_t k = 0;
  for (size_t i = 0; refs && i < n; i++) {
    kf_coord_op *op = who[i];
    if (!op->gave_up) continue;
    for (size_t j = 0; j < op->n_granted; j++)
      refs[k++] = (kf_lease_ref){op->lease.worker_id,
                                 op->granted[j]->task_id,
                                 op->granted[j]->attempt};
  }
  int undone = 0;
  int rc = refs ? kf_store_unlease(s, refs, nref, &undone) : KF_ENOMEM;
  if (rc)
    kf_log(KF_LOG_WARN, "%zu lease(s) granted after their caller gave up "
           "stay leased until they expire: %s", nref,
           rc == KF_ENOMEM ? "out of memory" : kf_store_errmsg(s));
  else
    kf_log(KF_LOG_INFO, "%d lease(s) granted after their caller gave up "
           "went back to the queue", undone);
  for (size_t i = 0; i < n; i++)
    if (who[i]->gave_up) who[i]->n_granted = 0;
  free(refs);
}

static void do_leases(kf_batch *b, kf_store *s, int ttl) {
  size_t n = 0;
  for (kf_coord_op *op = b->ops; op; op = op->next)
    if (op->kind == KF_OP_LEASE && !op->needs_lookup && !op->rc && !gone(op))
      n++;
  if (!n) return;
  kf_lease_req *reqs = calloc(n, sizeof *reqs);
  kf_coord_op **who = calloc(n, sizeof *who);
  if (!reqs || !who) {
    free(reqs);
    free(who);
    for (kf_coord_op *op = b->ops; op; op = op->next)
      if (op->kind == KF_OP_LEASE && !op->needs_lookup && !op->gave_up)
        op->rc = KF_ENOMEM;
    return;
  }
  size_t k = 0;
  for (kf_coord_op *op = b->ops; op; op = op->next)
    if (op->kind == KF_OP_LEASE && !op->needs_lookup && !op->rc &&
        !op->gave_up) {
      reqs[k] = op->lease;
      who[k++] = op;
    }
  int rc = kf_store_lease(s, reqs, n, ttl, &b->grant);
  if (rc) {
    for (size_t i = 0; i < n; i++) set_err(who[i], rc, s);
  } else {
    if (b->grant->avoided_err[0])
      kf_log(KF_LOG_WARN, "leasing tasks that avoid a worker (left queued): "
             "%s", b->grant->avoided_err);
    /* Count per request first, so each op gets one exact array. */
    for (size_t i = 0; i < b->grant->n; i++)
      who[b->grant->tasks[i].req_index]->n_granted++;
    for (size_t i = 0; i < n; i++) {
      if (who[i]->n_granted < reqs[i].max_tasks) b->underfilled = true;
      if (who[i]->n_granted) {
        who[i]->granted = calloc(who[i]->n_granted, sizeof *who[i]->granted);
        if (!who[i]->granted) who[i]->rc = KF_ENOMEM;
        who[i]->n_granted = 0;
      }
    }
    for (size_t i = 0; i < b->grant->n; i++) {
      kf_coord_op *op = who[b->grant->tasks[i].req_index];
      if (op->granted) op->granted[op->n_granted++] = &b->grant->tasks[i];
    }
    undo_late_grants(s, who, n);
  }
  free(reqs);
  free(who);
}

static void batch_work(uv_work_t *w) {
  kf_batch *b = w->data;
  kf_coord *co = b->co;
  kf_store *s = co->store;
  int ttl = (int)co->cfg.lease_ttl_ms;
  if (b->creds) {
    b->creds_rc = kf_coord__load_creds(s, &b->cred_tab, &b->n_cred);
    if (!b->creds_rc)
      b->creds_rc = kf_coord__cred_ids(b->cred_tab, b->n_cred, &b->cred_ids);
    /* A revocation this reload sees holds for this batch's leases too. */
    for (kf_coord_op *op = b->ops; !b->creds_rc && op; op = op->next)
      if (op->kind == KF_OP_LEASE && !op->rc &&
          !kf_coord__cred_valid(b->cred_ids, b->n_cred, op->cred_id))
        refuse_revoked(op);
  }
  for (kf_coord_op *op = b->ops; op; op = op->next) {
    if (op->kind != KF_OP_REPORT && op->kind != KF_OP_STATUS &&
        op->kind != KF_OP_HEARTBEAT && gone(op))
      continue; /* the others are judged right before their statements */
    if (op->kind == KF_OP_REGISTER) do_register(s, op);
    else if (op->needs_lookup) do_lookup(s, op);
    else if (op->kind == KF_OP_SUBMIT) do_submit(s, op, co->cfg.max_attempts);
    else if (op->kind == KF_OP_CAMPAIGN) kf_coord__campaign_work(s, op);
    else if (op->kind == KF_OP_VIEW) kf_coord__view_work(s, op);
  }
  bool accepted = do_reports(s, b->ops);
  if (b->search || (b->campaigns && accepted)) {
    b->searched = true;
    b->search_rc = kf_search_step(s, 0, &b->search_opts, &b->search_st);
    if (b->search_rc)
      kf_strlcpy(b->search_err, kf_store_errmsg(s), sizeof b->search_err);
  }
  do_heartbeats(s, b->ops, ttl);
  if (b->reap) {
    int rc = kf_store_reap(s, &b->reaped, &b->reap_failed);
    if (rc) {
      kf_log(KF_LOG_WARN, "reaping leases: %s", kf_store_errmsg(s));
      b->reap = false;
    }
  }
  do_leases(b, s, ttl);
  if (b->metrics) {
    b->metrics_rc = kf_store_metrics_read(s, b->alive_ms, 50, &b->msnap);
    if (b->metrics_rc)
      kf_strlcpy(b->metrics_err, kf_store_errmsg(s), sizeof b->metrics_err);
  }
  for (kf_coord_op *op = b->ops; op; op = op->next) {
    if (op->kind != KF_OP_STATUS || gone(op)) continue;
    const Kernelfleet__GetStatusRequest *r = (const void *)op->req;
    /* A campaign that does not exist is NOT_FOUND, not all zeros. */
    kf_campaign *c = NULL;
    int rc = r->campaign_id ? kf_store_campaign_get(s, r->campaign_id, &c) : 0;
    kf_store_campaign_free(c);
    if (!rc) rc = kf_store_counts(s, r->campaign_id, &op->counts);
    if (rc) set_err(op, rc, s);
  }
}

/* Splits a comma-separated kinds list in place into an argv-like array. */
static size_t split_csv(char *csv, char **out, size_t max) {
  size_t n = 0;
  for (char *tok = strtok(csv, ","); tok && n < max; tok = strtok(NULL, ","))
    out[n++] = tok;
  return n;
}

static void after_lookup(kf_coord *co, kf_coord_op *op) {
  int64_t id = kf_coord__op_worker(op);
  char *kinds[16];
  size_t nk = split_csv(op->kinds_csv, kinds, 16);
  if (!kf_coord__worker_put(co, id, op->new_dc_id, (const char *const *)kinds,
                            nk, "", op->bound_cred)) {
    op->rc = KF_ENOMEM;
  }
  op->needs_lookup = false;
}

/* Where a lease op goes after a batch: answered, or parked again. */
static bool lease_done(kf_coord_op *op) {
  if (op->n_granted) return true;
  if (op->rc && op->rc != KF_EUNAVAIL && op->rc != KF_EDB) return true;
  return kf_now_ms() >= op->deadline_ms;
}

static void push_front(kf_coord_op **list, kf_coord_op *op) {
  op->next = *list;
  *list = op;
}

static void after_batch(uv_work_t *w, int status) {
  kf_batch *b = w->data;
  kf_coord *co = b->co;
  co->n_batches++;
  if (b->creds) {
    /* Revocations and new credentials take effect here, for every call
     * checked from now on. */
    if (b->creds_rc) {
      kf_log(KF_LOG_WARN, "reloading credentials: %s", kf_strerror(b->creds_rc));
      if (co->rpc) kf_rpc_server_recheck(co->rpc); /* refuse the waiting */
    } else {
      if (co->rpc && kf_rpc_server_set_creds(co->rpc, b->cred_tab, b->n_cred))
        kf_log(KF_LOG_WARN, "reloading credentials: out of memory");
      free(co->cred_ids);
      co->cred_ids = b->cred_ids;
      co->n_cred_ids = b->n_cred;
      b->cred_ids = NULL;
      /* Long polls parked under a credential revoked since: refused now,
       * not left to be granted tasks when some arrive. */
      for (kf_coord_op **pp = &co->parked; *pp;) {
        kf_coord_op *op = *pp;
        if (kf_coord__cred_valid(co->cred_ids, co->n_cred_ids, op->cred_id)) {
          pp = &op->next;
          continue;
        }
        *pp = op->next;
        op->next = NULL;
        refuse_revoked(op);
        kf_coord__answer(co, op);
        kf_coord__op_free(op);
      }
    }
    free(b->cred_tab);
    free(b->cred_ids);
  }
  if (b->reap && (b->reaped || b->reap_failed)) {
    kf_log(KF_LOG_WARN, "expired leases: %d requeued, %d failed", b->reaped,
           b->reap_failed);
    if (b->reaped) co->maybe_tasks = true;
  }
  if (b->underfilled) co->maybe_tasks = false;
  if (b->metrics)
    kf_coord__metrics_took(co, b->metrics_rc, &b->msnap, b->metrics_err);
  if (b->searched) {
    if (b->search_rc) {
      kf_log(KF_LOG_WARN, "search step: %s", b->search_err);
    } else {
      /* Before the answers: a CreateCampaign answered below sets it. */
      co->campaigns_active = b->search_st.running > 0;
      if (b->search_st.finished)
        kf_log(KF_LOG_INFO, "search: %u campaign(s) finished",
               b->search_st.finished);
    }
    if (b->search_st.scheduled) co->maybe_tasks = true;
  }
  for (kf_coord_op *op = b->ops; op; op = op->next)
    if (op->kind == KF_OP_LEASE && (op->rc == KF_EUNAVAIL || op->rc == KF_EDB))
      /* The database is down.  Retaking the parked polls at once would
       * spin (a failed reconnect takes microseconds: ~8000 batches a
       * second were seen during a restart); the cron's once-a-second
       * maybe_tasks, a submit or a requeue retries them instead. */
      co->maybe_tasks = false;

  kf_coord_op *op = b->ops;
  while (op) {
    kf_coord_op *next = op->next;
    if (op->gave_up) {
      /* A lease whose caller gave up during the batch: nothing was (or
       * stays) granted; its empty answer goes nowhere, but frees it. */
      op->n_granted = 0;
      op->rc = 0;
      kf_coord__answer(co, op);
      kf_coord__op_free(op);
    } else if (op->needs_lookup && op->kind != KF_OP_REGISTER) {
      if (op->rc) {
        kf_coord__answer(co, op);
        kf_coord__op_free(op);
      } else {
        after_lookup(co, op);
        if (op->kind == KF_OP_LEASE && !op->rc) {
          push_front(&co->pending, op); /* lease it next batch */
        } else {
          kf_coord__answer(co, op);
          kf_coord__op_free(op);
        }
      }
    } else if (op->kind == KF_OP_LEASE && !lease_done(op)) {
      op->rc = 0;
      op->err[0] = '\0';
      push_front(&co->parked, op);
    } else {
      if (op->kind == KF_OP_LEASE && op->rc && op->n_granted == 0 &&
          (op->rc == KF_EUNAVAIL || op->rc == KF_EDB)) {
        op->rc = 0; /* waited out a database outage: answer empty */
      }
      kf_coord__answer(co, op);
      kf_coord__op_free(op);
    }
    op = next;
  }
  kf_store_grant_free(b->grant);
  free(b);
  co->batch_running = false;
  if (co->stopping) {
    kf_coord__batch_drained(co);
    return;
  }
  if (co->pending || co->want_reap || co->want_search || co->want_creds ||
      co->want_metrics || (co->parked && co->maybe_tasks))
    kf_coord__kick(co);
  (void)status;
}

void kf_coord__flush(kf_coord *co) {
  if (co->batch_running || co->stopping) return;
  kf_coord__drop_expired(co);
  bool take_parked = co->parked && co->maybe_tasks;
  if (!co->pending && !co->want_reap && !take_parked && !co->want_search &&
      !co->want_creds && !co->want_metrics)
    return;
  kf_batch *b = calloc(1, sizeof *b);
  if (!b) {
    kf_log(KF_LOG_ERROR, "out of memory starting a batch");
    return;
  }
  b->co = co;
  b->ops = co->pending;
  co->pending = NULL;
  if (take_parked) {
    kf_coord_op **tail = &b->ops;
    while (*tail) tail = &(*tail)->next;
    *tail = co->parked;
    co->parked = NULL;
  }
  b->reap = co->want_reap;
  co->want_reap = false;
  b->search = co->want_search;
  co->want_search = false;
  b->creds = co->want_creds;
  co->want_creds = false;
  b->metrics = co->want_metrics;
  co->want_metrics = false;
  b->alive_ms = 3 * co->cfg.heartbeat_ms + 1000;
  b->campaigns = co->campaigns_active;
  b->search_opts = (kf_search_opts){
      .alive_ms = 3 * co->cfg.heartbeat_ms + 1000,
      .per_slot = co->cfg.eval_per_slot,
      .timeout_ms = co->cfg.eval_timeout_ms,
      .max_attempts = co->cfg.eval_attempts,
  };
  /* Lease requests read the registry here, on the loop thread. */
  for (kf_coord_op *op = b->ops; op; op = op->next) {
    if (op->kind != KF_OP_LEASE || op->needs_lookup) continue;
    const Kernelfleet__LeaseTasksRequest *r = (const void *)op->req;
    kf_coord_worker *w = kf_coord__worker_get(co, r->worker_id);
    if (!w) {
      op->needs_lookup = true;
      continue;
    }
    op->lease = (kf_lease_req){
        .worker_id = w->id,
        .device_class_id = w->device_class_id,
        .task_kinds = (const char *const *)w->kinds,
        .n_task_kinds = w->n_kinds,
        .max_tasks = r->max_tasks,
    };
    op->n_granted = 0;
    free(op->granted);
    op->granted = NULL;
    if (!kf_coord__cred_valid(co->cred_ids, co->n_cred_ids, op->cred_id))
      refuse_revoked(op);
  }
  b->work.data = b;
  int rc = uv_queue_work(co->loop, &b->work, batch_work, after_batch);
  if (rc) {
    kf_log(KF_LOG_ERROR, "uv_queue_work: %s", uv_strerror(rc));
    co->pending = b->ops; /* try again on the next kick */
    free(b);
    return;
  }
  co->batch_running = true;
}
