/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench_coordinator.c -- N simulated workers against a real
 * coordinator: each registers, then loops LeaseTasks -> ReportResult (no-op
 * tasks, reported OK at once) until every submitted task is accepted.
 * Prints tasks/s and the p50/p99 latency of LeaseTasks calls that returned
 * tasks.  --think-ms T makes each simulated worker hold its tasks T ms
 * before reporting, as a real one spends time evaluating: without it every
 * worker always has a call queued, and by Little's law the lease latency of
 * N workers is about N / throughput however fast the coordinator is (10,000
 * workers at 20,000 tasks/s: 500 ms a cycle).  A benchmark that prints figures, not a test: it asserts nothing
 * about speed.
 *
 * One process, one libuv loop; workers are spread over several channels
 * (each an rpc client with its own completion-queue thread).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "log.h"
#include "rpc.h"
#include "util.h"

#define PATH(m) "/kernelfleet.Coordinator/" m

typedef struct sim sim;
typedef struct {
  uv_loop_t *loop;
  kf_rpc_client **chan;
  int nchan;
  sim *sims;
  int nsims;
  uint32_t batch;
  uint64_t think_ms;
  uint64_t target, accepted, refused, errors;
  uint64_t t_start_us, t_end_us;
  uint64_t *lat; /* lease latencies, us */
  size_t nlat, caplat;
  bool done;
} bench;

struct sim {
  bench *b;
  int idx;
  int64_t id;
  uint64_t lease_t0;
  int64_t *task_ids;
  uint32_t *attempts;
  size_t nheld;
  uv_timer_t think; /* --think-ms: the simulated evaluation */
};

static void lease(sim *s);

static kf_rpc_client *chan_of(sim *s) { return s->b->chan[s->idx % s->b->nchan]; }

static void finish_if_done(bench *b) {
  if (!b->done && b->accepted >= b->target) {
    b->done = true;
    b->t_end_us = kf_now_us();
    for (int i = 0; i < b->nchan; i++) kf_rpc_client_close(b->chan[i]);
  }
}

static void on_report(int status, const char *detail, const ProtobufCMessage *m,
                      void *data) {
  sim *s = data;
  bench *b = s->b;
  if (status) {
    b->errors++;
    if (status != KF_ECANCELED)
      fprintf(stderr, "report: %s: %s\n", kf_strerror(status), detail);
  } else {
    const Kernelfleet__ReportResultResponse *r = (const void *)m;
    for (size_t i = 0; i < r->n_verdicts; i++) {
      if (r->verdicts[i] == KERNELFLEET__REPORT_VERDICT__REPORT_ACCEPTED)
        b->accepted++;
      else
        b->refused++;
    }
  }
  s->nheld = 0;
  finish_if_done(b);
  if (!b->done) lease(s);
}

static void report(sim *s) {
  Kernelfleet__TaskResult res[256], *ptrs[256];
  for (size_t i = 0; i < s->nheld; i++) {
    kernelfleet__task_result__init(&res[i]);
    res[i].task_id = s->task_ids[i];
    res[i].attempt = s->attempts[i];
    res[i].outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
    ptrs[i] = &res[i];
  }
  Kernelfleet__ReportResultRequest req = KERNELFLEET__REPORT_RESULT_REQUEST__INIT;
  req.worker_id = s->id;
  req.results = ptrs;
  req.n_results = s->nheld;
  if (kf_rpc_client_call(chan_of(s), PATH("ReportResult"), &req.base,
                         &kernelfleet__report_result_response__descriptor,
                         10000, on_report, s) != 0)
    s->b->errors++;
}

static void on_think(uv_timer_t *t) {
  sim *s = t->data;
  if (!s->b->done) report(s);
}

static void on_lease(int status, const char *detail, const ProtobufCMessage *m,
                     void *data) {
  sim *s = data;
  bench *b = s->b;
  if (status) {
    if (status != KF_ECANCELED) {
      b->errors++;
      fprintf(stderr, "lease: %s: %s\n", kf_strerror(status), detail);
    }
    if (!b->done && status != KF_ECANCELED) lease(s);
    return;
  }
  const Kernelfleet__LeaseTasksResponse *r = (const void *)m;
  if (r->n_tasks == 0) {
    if (!b->done) lease(s);
    return;
  }
  if (b->nlat == b->caplat) {
    size_t nc = b->caplat ? b->caplat * 2 : 65536;
    uint64_t *nl = realloc(b->lat, nc * sizeof *nl);
    if (nl) {
      b->lat = nl;
      b->caplat = nc;
    }
  }
  if (b->nlat < b->caplat) b->lat[b->nlat++] = kf_now_us() - s->lease_t0;
  for (size_t i = 0; i < r->n_tasks && i < 256; i++) {
    s->task_ids[i] = r->tasks[i]->task_id;
    s->attempts[i] = r->tasks[i]->attempt;
  }
  s->nheld = r->n_tasks < 256 ? r->n_tasks : 256;
  if (b->think_ms) {
    int rc = uv_timer_start(&s->think, on_think, b->think_ms, 0);
    if (rc == 0) return;
    fprintf(stderr, "think timer: %s\n", uv_strerror(rc));
    b->errors++;
  }
  report(s);
}

static void lease(sim *s) {
  Kernelfleet__LeaseTasksRequest req = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
  req.worker_id = s->id;
  req.max_tasks = s->b->batch;
  req.wait_ms = 2000;
  s->lease_t0 = kf_now_us();
  if (kf_rpc_client_call(chan_of(s), PATH("LeaseTasks"), &req.base,
                         &kernelfleet__lease_tasks_response__descriptor, 8000,
                         on_lease, s) != 0)
    s->b->errors++;
}

static int registered;

static void on_register(int status, const char *detail,
                        const ProtobufCMessage *m, void *data) {
  sim *s = data;
  if (status) {
    fprintf(stderr, "register: %s: %s\n", kf_strerror(status), detail);
    exit(1);
  }
  s->id = ((const Kernelfleet__RegisterWorkerResponse *)m)->worker_id;
  if (++registered == s->b->nsims) {
    s->b->t_start_us = kf_now_us();
    for (int i = 0; i < s->b->nsims; i++) lease(&s->b->sims[i]);
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  const char *target = "127.0.0.1:7070", *token = kf_getenv_or("KF_TOKEN", "");
  uint64_t nworkers = 500, ntasks = 50000, batch = 8, nchan = 4, think_ms = 0;
  static const struct option opts[] = {
      {"coordinator", required_argument, 0, 'c'},
      {"workers", required_argument, 0, 'w'},
      {"tasks", required_argument, 0, 'n'},
      {"batch", required_argument, 0, 'b'},
      {"channels", required_argument, 0, 'C'},
      {"think-ms", required_argument, 0, 'T'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    uint64_t *dst = NULL;
    switch (c) {
    case 'c': target = optarg; break;
    case 'w': dst = &nworkers; break;
    case 'n': dst = &ntasks; break;
    case 'b': dst = &batch; break;
    case 'C': dst = &nchan; break;
    case 'T':
      if (kf_parse_u64(optarg, &think_ms) || think_ms > 600000) {
        fprintf(stderr, "bench: --think-ms '%s': expected 0..600000\n", optarg);
        return 2;
      }
      continue;
    case 'h':
      printf("usage: kf-bench-coordinator --coordinator HOST:PORT   (token: $KF_TOKEN)\n"
             "         [--workers 500] [--tasks 50000] [--batch 8] [--channels 4]\n"
             "         [--think-ms 0]   (each worker holds its tasks T ms before reporting)\n"
             "The tasks are submitted by this program before timing starts.\n");
      return 0;
    default: return 2;
    }
    if (dst && (kf_parse_u64(optarg, dst) || *dst == 0)) {
      fprintf(stderr, "bench: bad number '%s'\n", optarg);
      return 2;
    }
  }
  if (batch > 256 || nchan > 64 || nworkers > 100000) {
    fprintf(stderr, "bench: --batch <= 256, --channels <= 64\n");
    return 2;
  }
  kf_log_init('t', KF_LOG_WARN);
  char err[512];

  /* Submit first, on a sync client, so the timed part is lease+report. */
  kf_rpc_client *sub;
  if (kf_rpc_client_open(NULL, target, token, 64u << 20, &sub, err, sizeof err)) {
    fprintf(stderr, "bench: %s\n", err);
    return 3;
  }
  uint64_t t_sub = kf_now_us();
  for (uint64_t base = 0; base < ntasks;) {
    size_t n = ntasks - base > 5000 ? 5000 : (size_t)(ntasks - base);
    Kernelfleet__TaskSpec *specs = calloc(n, sizeof *specs);
    Kernelfleet__TaskSpec **ptrs = calloc(n, sizeof *ptrs);
    if (!specs || !ptrs) return 1;
    for (size_t i = 0; i < n; i++) {
      kernelfleet__task_spec__init(&specs[i]);
      specs[i].kind = "noop";
      ptrs[i] = &specs[i];
    }
    Kernelfleet__SubmitTasksRequest req = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
    req.tasks = ptrs;
    req.n_tasks = n;
    ProtobufCMessage *resp = NULL;
    int rc = kf_rpc_client_call_sync(sub, PATH("SubmitTasks"), &req.base,
                                     &kernelfleet__submit_tasks_response__descriptor,
                                     60000, &resp, err, sizeof err);
    free(specs);
    free(ptrs);
    kf_rpc_free(resp);
    if (rc) {
      fprintf(stderr, "bench: submit: %s: %s\n", kf_strerror(rc), err);
      return 3;
    }
    base += n;
  }
  double sub_s = (double)(kf_now_us() - t_sub) / 1e6;
  kf_rpc_client_close(sub);

  uv_loop_t loop;
  uv_loop_init(&loop);
  bench b = {.loop = &loop, .nchan = (int)nchan, .nsims = (int)nworkers,
             .batch = (uint32_t)batch, .think_ms = think_ms, .target = ntasks};
  b.chan = calloc(nchan, sizeof *b.chan);
  b.sims = calloc(nworkers, sizeof *b.sims);
  if (!b.chan || !b.sims) return 1;
  for (uint64_t i = 0; i < nchan; i++)
    if (kf_rpc_client_open(&loop, target, token, 64u << 20, &b.chan[i], err,
                           sizeof err)) {
      fprintf(stderr, "bench: %s\n", err);
      return 3;
    }
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "simulated";
  dc.isa = "none";
  char *kinds[] = {"noop"};
  for (uint64_t i = 0; i < nworkers; i++) {
    sim *s = &b.sims[i];
    s->b = &b;
    s->idx = (int)i;
    if (uv_timer_init(&loop, &s->think)) return 1;
    s->think.data = s;
    s->task_ids = calloc(256, sizeof *s->task_ids);
    s->attempts = calloc(256, sizeof *s->attempts);
    if (!s->task_ids || !s->attempts) return 1;
    char name[32];
    snprintf(name, sizeof name, "sim-%llu", (unsigned long long)i);
    Kernelfleet__RegisterWorkerRequest req =
        KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
    req.name = name;
    req.device_class = &dc;
    req.task_kinds = kinds;
    req.n_task_kinds = 1;
    if (kf_rpc_client_call(chan_of(s), PATH("RegisterWorker"), &req.base,
                           &kernelfleet__register_worker_response__descriptor,
                           30000, on_register, s)) {
      fprintf(stderr, "bench: register call failed\n");
      return 3;
    }
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  for (uint64_t i = 0; i < nworkers; i++) uv_close((uv_handle_t *)&b.sims[i].think, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  if (uv_loop_close(&loop)) fprintf(stderr, "bench: loop not closed cleanly\n");

  double secs = (double)(b.t_end_us - b.t_start_us) / 1e6;
  qsort(b.lat, b.nlat, sizeof *b.lat, cmp_u64);
  double p50 = b.nlat ? b.lat[b.nlat / 2] / 1000.0 : 0;
  double p99 = b.nlat ? b.lat[(size_t)((double)b.nlat * 0.99)] / 1000.0 : 0;
  printf("workers=%llu tasks=%llu batch=%llu channels=%llu think_ms=%llu\n",
         (unsigned long long)nworkers, (unsigned long long)ntasks,
         (unsigned long long)batch, (unsigned long long)nchan,
         (unsigned long long)think_ms);
  printf("submit: %.0f tasks/s\n", (double)ntasks / sub_s);
  printf("lease+report: %.2f s, %.0f tasks/s, lease latency p50 %.2f ms "
         "p99 %.2f ms (%zu leases), refused %llu, errors %llu\n",
         secs, (double)b.accepted / secs, p50, p99, b.nlat,
         (unsigned long long)b.refused, (unsigned long long)b.errors);
  for (uint64_t i = 0; i < nworkers; i++) {
    free(b.sims[i].task_ids);
    free(b.sims[i].attempts);
  }
  free(b.sims);
  free(b.chan);
  free(b.lat);
  return b.accepted >= ntasks ? 0 : 1;
}
