/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/coord.c -- the coordinator's loop: startup, the cron, signals,
 * the worker registry, and shutdown.
 *
 * Loop thread only.  Startup connects and migrates before listening, so a
 * worker never reaches a coordinator whose schema is not ready.  Shutdown
 * on SIGINT/SIGTERM: stop accepting, let the batch in flight finish (its
 * writes are committed or rolled back whole), answer parked long polls
 * empty, close the store.  A kill -9 loses nothing either: every state
 * change is a committed transaction, and leases handed out before the crash
 * are in the tasks table.
 */
#include "coord.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "log.h"
#include "util.h"

/* ------------------------------------------------------ worker registry */

static size_t slot_of(int64_t id, size_t cap) {
  uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 17) & (cap - 1);
}

kf_coord_worker *kf_coord__worker_get(kf_coord *co, int64_t id) {
  if (!co->workers_cap) return NULL;
  for (size_t i = slot_of(id, co->workers_cap);; i = (i + 1) & (co->workers_cap - 1)) {
    if (co->workers[i].id == 0) return NULL;
    if (co->workers[i].id == id) return &co->workers[i];
  }
}

static int grow(kf_coord *co) {
  size_t ncap = co->workers_cap ? co->workers_cap * 2 : 256;
  kf_coord_worker *nw = calloc(ncap, sizeof *nw);
  if (!nw) return KF_ENOMEM;
  for (size_t i = 0; i < co->workers_cap; i++) {
    if (!co->workers[i].id) continue;
    size_t j = slot_of(co->workers[i].id, ncap);
    while (nw[j].id) j = (j + 1) & (ncap - 1);
    nw[j] = co->workers[i];
  }
  free(co->workers);
  co->workers = nw;
  co->workers_cap = ncap;
  return 0;
}

static void worker_clear(kf_coord_worker *w) {
  for (size_t i = 0; i < w->n_kinds; i++) free(w->kinds[i]);
  free(w->kinds);
  w->kinds = NULL;
  w->n_kinds = 0;
}

kf_coord_worker *kf_coord__worker_put(kf_coord *co, int64_t id,
                                      int64_t dc_id, const char *const *kinds,
                                      size_t n_kinds, const char *name,
                                      int64_t cred_id) {
  if ((co->workers_len + 1) * 2 > co->workers_cap && grow(co) != 0)
    return NULL;
  kf_coord_worker *w = kf_coord__worker_get(co, id);
  if (!w) {
    size_t i = slot_of(id, co->workers_cap);
    while (co->workers[i].id) i = (i + 1) & (co->workers_cap - 1);
    w = &co->workers[i];
    memset(w, 0, sizeof *w);
    w->id = id;
    co->workers_len++;
  } else {
    worker_clear(w);
  }
  w->device_class_id = dc_id;
  w->cred_id = cred_id;
  w->kinds = calloc(n_kinds ? n_kinds : 1, sizeof *w->kinds);
  if (!w->kinds) return NULL;
  for (size_t i = 0; i < n_kinds; i++) {
    w->kinds[i] = strdup(kinds[i]);
    if (!w->kinds[i]) return NULL;
    w->n_kinds = i + 1;
  }
  kf_strlcpy(w->name, name ? name : "", sizeof w->name);
  w->last_seen_ms = kf_now_ms();
  return w;
}

/* ------------------------------------------------------------- ops */

void kf_coord__op_free(kf_coord_op *op) {
  if (!op) return;
  if (op->co) op->co->n_ops--;
  free(op->verdicts);
  free(op->notes);
  free(op->hb_live);
  free(op->ids);
  free(op->granted);
  kf_coord__campaign_free(op);
  kf_coord__view_free(op);
  free(op);
}

/* Ask for a flush before the loop next sleeps: the idle handle keeps the
 * poll phase from blocking, the check handle then flushes. */
static void on_idle(uv_idle_t *h) { (void)h; }

void kf_coord__kick(kf_coord *co) {
  if (!co->stopping && !uv_is_active((uv_handle_t *)&co->idle))
    uv_idle_start(&co->idle, on_idle);
}

static void on_check(uv_check_t *h) {
  kf_coord *co = h->data;
  uv_idle_stop(&co->idle);
  kf_coord__flush(co);
}

/* ------------------------------------------------------------- cron */

/*
 * kf_coord_cron, every 100 ms:
 *  - answer long polls whose wait is over (empty);
 *  - answer pending ops whose caller's deadline has passed (a batch stuck
 *    on a hung database must not make them pile up, nor run them later);
 *  - every reap_ms, requeue expired leases (in the next batch);
 *  - every second, allow a lease attempt even if the last one found
 *    nothing, because tasks may be inserted by another coordinator or by
 *    hand;
 *  - every 500 ms while a campaign may be running, ask for a search step
 *    (time budgets end, and workers that appeared get eval tasks, even
 *    when no report arrives);
 *  - every second, reload the credential table (so a revoked token is
 *    refused within about a second, without a restart), and sooner --
 *    at most every 200 ms -- after a call presented a token the table
 *    does not hold (a credential created a moment ago);
 *  - every 10 s, log throughput counters.
 */
static void kf_coord_cron(uv_timer_t *t) {
  kf_coord *co = t->data;
  uint64_t now = kf_now_ms();
  kf_coord__expire_parked(co, false);
  kf_coord__drop_expired(co);
  if (now - co->last_reap_ms >= co->cfg.reap_ms) {
    co->want_reap = true;
    co->last_reap_ms = now;
  }
  if (now - co->last_poll_ms >= 1000) {
    co->maybe_tasks = true;
    co->last_poll_ms = now;
  }
  if (now - co->last_creds_ms >= 1000 ||
      (co->rpc && now - co->last_creds_ms >= 200 &&
       kf_rpc_server_take_miss(co->rpc))) {
    co->want_creds = true;
    co->last_creds_ms = now;
  }
  kf_coord__metrics_cron(co, now);
  if (co->campaigns_active && now - co->last_search_ms >= 500) {
    co->want_search = true;
    co->last_search_ms = now;
  }
  static uint64_t last_stats;
  if (now - last_stats >= 10000) {
    last_stats = now;
    kf_log(KF_LOG_INFO, "stats leased=%llu reported=%llu batches=%llu "
           "workers=%zu", (unsigned long long)co->n_leased,
           (unsigned long long)co->n_reported,
           (unsigned long long)co->n_batches, co->workers_len);
  }
  kf_coord__kick(co);
}

/* ---------------------------------------------------------- signals */

static void on_close_noop(uv_handle_t *h) { (void)h; }

static void begin_stop(kf_coord *co) {
  if (co->stopping) return;
  co->stopping = true;
  kf_log(KF_LOG_INFO, "shutting down");
  kf_coord__expire_parked(co, true);
  uv_timer_stop(&co->cron);
  kf_coord__metrics_stop(co);
  uv_signal_stop(&co->sigint);
  uv_signal_stop(&co->sigterm);
  /* The batch in flight, if any, finishes and answers its calls; the rpc
   * server is stopped in kf_coord_run once the loop has drained. */
  uv_close((uv_handle_t *)&co->cron, on_close_noop);
  uv_close((uv_handle_t *)&co->check, on_close_noop);
  uv_close((uv_handle_t *)&co->idle, on_close_noop);
  uv_close((uv_handle_t *)&co->sigint, on_close_noop);
  uv_close((uv_handle_t *)&co->sigterm, on_close_noop);
}

/* Answers whatever never reached a batch, then stops the rpc server, whose
 * async handle is what keeps the loop alive. */
static void stop_rpc(kf_coord *co) {
  kf_coord__expire_parked(co, true);
  kf_coord_op *op;
  while ((op = co->pending)) {
    co->pending = op->next;
    kf_rpc_call_fail(op->call, KF_EUNAVAIL, "coordinator shutting down");
    kf_coord__op_free(op);
  }
  kf_rpc_server_stop(co->rpc);
  co->rpc = NULL;
}

static void on_signal(uv_signal_t *s, int signum) {
  kf_coord *co = s->data;
  kf_log(KF_LOG_INFO, "signal %d", signum);
  begin_stop(co);
  if (!co->batch_running) stop_rpc(co);
}

void kf_coord__batch_drained(kf_coord *co) {
  if (co->stopping && co->rpc) stop_rpc(co);
}

/* ------------------------------------------------------------ lifecycle */

int kf_coord_run(const kf_coord_config *cfg) {
  kf_coord co_s;
  kf_coord *co = &co_s;
  memset(co, 0, sizeof *co);
  co->cfg = *cfg;
  co->maybe_tasks = true;
  co->campaigns_active = true; /* the first search step finds out */
  char err[512];

  int rc = kf_store_open(cfg->db_url, &co->store, err, sizeof err);
  if (rc) {
    kf_log(KF_LOG_FATAL, "database: %s", err);
    return rc;
  }
  rc = kf_store_migrate(co->store);
  if (rc) {
    kf_log(KF_LOG_FATAL, "migrating schema: %s", kf_store_errmsg(co->store));
    kf_store_close(co->store);
    return rc;
  }
  kf_log(KF_LOG_INFO, "schema at version %d",
         kf_store_schema_version(co->store));
  /* After migrating: migrations run without time limits anyway. */
  if ((rc = kf_store_set_timeouts(co->store, cfg->db_statement_ms,
                                  cfg->db_lock_ms))) {
    kf_log(KF_LOG_FATAL, "database: %s", kf_store_errmsg(co->store));
    kf_store_close(co->store);
    return rc;
  }

  uv_loop_t loop;
  if ((rc = uv_loop_init(&loop)) != 0) {
    kf_log(KF_LOG_FATAL, "uv_loop_init: %s", uv_strerror(rc));
    kf_store_close(co->store);
    return KF_EINTERNAL;
  }
  co->loop = &loop;
  /* The credentials before the first call, so a valid token is never
   * refused for arriving early. */
  kf_rpc_cred *creds = NULL;
  size_t n_creds = 0;
  rc = kf_coord__load_creds(co->store, &creds, &n_creds);
  if (rc) {
    kf_log(KF_LOG_FATAL, "loading credentials: %s",
           kf_store_errmsg(co->store));
    kf_store_close(co->store);
    uv_loop_close(&loop);
    return rc;
  }
  co->last_creds_ms = kf_now_ms();
  rc = kf_coord__cred_ids(creds, n_creds, &co->cred_ids);
  if (rc) {
    kf_log(KF_LOG_FATAL, "loading credentials: out of memory");
    free(creds);
    kf_store_close(co->store);
    uv_loop_close(&loop);
    return rc;
  }
  co->n_cred_ids = n_creds;
  kf_rpc_tls tls = {.cert_file = cfg->tls_cert, .key_file = cfg->tls_key,
                    .ca_file = cfg->tls_client_ca};
  kf_rpc_server_opts o = {
      .loop = &loop,
      .listen_addr = cfg->listen_addr,
      .token = cfg->token,
      .creds = creds,
      .n_creds = n_creds,
      .tls = &tls,
      .hold_misses = true, /* the cron reloads on a miss (kf_coord_cron) */
      .max_msg_bytes = cfg->max_msg_bytes,
      .memory_quota_bytes = cfg->rpc_memory_bytes,
      .methods = kf_coord__methods,
      .n_methods = kf_coord__n_methods,
      .check_text = true,
      .raw_text = kf_coord__raw_text,
      .max_calls = cfg->max_calls,
      .max_calls_per_peer = cfg->max_calls_per_peer,
      .max_request_bytes = kf_coord__max_request_bytes,
      .data = co,
  };
  rc = kf_rpc_server_start(&o, &co->rpc, &co->port, err, sizeof err);
  free(creds);
  if (rc) {
    kf_log(KF_LOG_FATAL, "listen %s: %s", cfg->listen_addr, err);
    free(co->cred_ids);
    kf_store_close(co->store);
    uv_loop_close(&loop);
    return rc;
  }
  kf_log(KF_LOG_INFO, "listening on port %d", co->port);
  if (cfg->port_file) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s.tmp", cfg->port_file);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d\n", co->port) < 0 || fclose(f) != 0 ||
        rename(tmp, cfg->port_file) != 0) {
      kf_log(KF_LOG_FATAL, "cannot write port file %s", cfg->port_file);
      kf_rpc_server_stop(co->rpc);
      uv_run(&loop, UV_RUN_DEFAULT);
      free(co->cred_ids);
      kf_store_close(co->store);
      uv_loop_close(&loop);
      return KF_EIO;
    }
  }

  if (cfg->metrics_listen && (rc = kf_coord__metrics_start(co))) {
    kf_rpc_server_stop(co->rpc);
    uv_run(&loop, UV_RUN_DEFAULT);
    free(co->cred_ids);
    kf_store_close(co->store);
    uv_loop_close(&loop);
    return rc;
  }

  uv_timer_init(&loop, &co->cron);
  co->cron.data = co;
  uv_timer_start(&co->cron, kf_coord_cron, 100, 100);
  uv_check_init(&loop, &co->check);
  co->check.data = co;
  uv_check_start(&co->check, on_check);
  uv_idle_init(&loop, &co->idle);
  co->idle.data = co;
  uv_signal_init(&loop, &co->sigint);
  co->sigint.data = co;
  uv_signal_start(&co->sigint, on_signal, SIGINT);
  uv_signal_init(&loop, &co->sigterm);
  co->sigterm.data = co;
  uv_signal_start(&co->sigterm, on_signal, SIGTERM);
  co->want_reap = true; /* leases may have expired while we were down */

  uv_run(&loop, UV_RUN_DEFAULT);

  if (co->rpc) { /* loop ended without a signal (should not happen) */
    stop_rpc(co);
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  for (size_t i = 0; i < co->workers_cap; i++)
    if (co->workers[i].id) worker_clear(&co->workers[i]);
  free(co->workers);
  free(co->cred_ids);
  kf_store_metrics_free(&co->msnap);
  kf_store_close(co->store);
  rc = uv_loop_close(&loop);
  if (rc) kf_log(KF_LOG_WARN, "loop closed with handles open: %s",
                 uv_strerror(rc));
  kf_log(KF_LOG_INFO, "stopped");
  return 0;
}
