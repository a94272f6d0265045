/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench_flood.c -- kf-bench-flood: floods a coordinator with
 * one kind of call, as an authenticated but hostile (or unlucky) client
 * would, and prints what came back as one JSON line.
 *
 *   KF_TOKEN=K kf-bench-flood register  --target T --name N [--kind K]
 *   KF_TOKEN=K kf-bench-flood lease     --target T --worker ID [--count N]
 *                  [--conc C] [--deadline-ms D] [--wait-ms W] [--max-tasks M]
 *   kf-bench-flood status    (same flags; GetStatus of the whole cluster)
 *   kf-bench-flood heartbeat (same flags) [--entries E]
 *
 * register prints {"worker_id": ID}.  The floods send --count calls from
 * --conc threads (one channel each), each with --deadline-ms, and print
 * {"sent", "ok", "tasks" (leased tasks received), "codes": {gRPC status
 * name: count}, "messages": {status name: first message}}.  Used by
 * tests/e2e/test_limits.py and scripts/bench-limits; it asserts nothing.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "rpc.h"
#include "util.h"

#define PATH(m) "/kernelfleet.Coordinator/" m

typedef struct {
  const char *mode, *target, *token, *name, *kind;
  int64_t worker;
  long count, conc, deadline_ms, wait_ms, max_tasks, entries;
  atomic_long next, ok, tasks;
  atomic_long codes[32]; /* by KF error code, negated */
  char msgs[32][256];
  pthread_mutex_t mu;
  /* heartbeat mode: the one request every call sends, built before the
   * threads start and only read by them (one copy, not one per thread:
   * 64 threads of 1.5M entries each took 22 GB under ThreadSanitizer and
   * were killed for memory on a loaded CI machine) */
  Kernelfleet__HeartbeatRequest hb;
  Kernelfleet__TaskRef *refs;
  Kernelfleet__TaskRef **prefs;
} flood;

static const char *code_name(int rc) {
  switch (rc) {
  case KF_ETIMEDOUT: return "DEADLINE_EXCEEDED";
  case KF_ETOOBIG: return "RESOURCE_EXHAUSTED";
  case KF_EBUSY: return "RESOURCE_EXHAUSTED(busy)";
  case KF_EUNAVAIL: return "UNAVAILABLE";
  case KF_EPROTO: return "INVALID_ARGUMENT";
  case KF_EAUTH: return "UNAUTHENTICATED";
  case KF_ENOTFOUND: return "NOT_FOUND";
  case KF_ESTATE: return "FAILED_PRECONDITION";
  case KF_ECANCELED: return "CANCELLED";
  default: return "OTHER";
  }
}

static void one_call(flood *f, kf_rpc_client *c) {
  char err[256] = "";
  ProtobufCMessage *resp = NULL;
  int rc;
  int d = (int)f->deadline_ms;
  if (!strcmp(f->mode, "lease")) {
    Kernelfleet__LeaseTasksRequest q = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
    q.worker_id = f->worker;
    q.max_tasks = (uint32_t)f->max_tasks;
    q.wait_ms = (uint32_t)f->wait_ms;
    rc = kf_rpc_client_call_sync(c, PATH("LeaseTasks"), &q.base,
                                 &kernelfleet__lease_tasks_response__descriptor,
                                 d, &resp, err, sizeof err);
    if (!rc)
      atomic_fetch_add(&f->tasks,
                       (long)((Kernelfleet__LeaseTasksResponse *)resp)->n_tasks);
  } else if (!strcmp(f->mode, "status")) {
    Kernelfleet__GetStatusRequest q = KERNELFLEET__GET_STATUS_REQUEST__INIT;
    rc = kf_rpc_client_call_sync(c, PATH("GetStatus"), &q.base,
                                 &kernelfleet__get_status_response__descriptor,
                                 d, &resp, err, sizeof err);
  } else {
    rc = kf_rpc_client_call_sync(c, PATH("Heartbeat"), &f->hb.base,
                                 &kernelfleet__heartbeat_response__descriptor,
                                 d, &resp, err, sizeof err);
  }
  kf_rpc_free(resp);
  if (!rc) {
    atomic_fetch_add(&f->ok, 1);
    return;
  }
  int k = -rc;
  if (k <= 0 || k >= 32) k = 31;
  if (atomic_fetch_add(&f->codes[k], 1) == 0) {
    pthread_mutex_lock(&f->mu);
    snprintf(f->msgs[k], sizeof f->msgs[k], "%s", err);
    pthread_mutex_unlock(&f->mu);
  }
}

static void *thread_main(void *arg) {
  flood *f = arg;
  kf_rpc_client *c = NULL;
  char err[256];
  if (kf_rpc_client_open(NULL, f->target, f->token, 64u << 20, &c, err,
                         sizeof err)) {
    fprintf(stderr, "open %s: %s\n", f->target, err);
    exit(1);
  }
  while (atomic_fetch_add(&f->next, 1) < f->count) one_call(f, c);
  kf_rpc_client_close(c);
  return NULL;
}

/* JSON string body: the messages are ours or gRPC's, but quote anyway. */
static void put_json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') printf("\\%c", ch);
    else if (ch < 0x20) printf("\\u%04x", ch);
    else putchar(ch);
  }
  putchar('"');
}

static int do_register(flood *f) {
  kf_rpc_client *c = NULL;
  char err[256];
  if (kf_rpc_client_open(NULL, f->target, f->token, 0, &c, err, sizeof err)) {
    fprintf(stderr, "open: %s\n", err);
    return 1;
  }
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "flood-cpu";
  dc.isa = "x86_64";
  char *kinds[] = {(char *)f->kind};
  Kernelfleet__RegisterWorkerRequest q =
      KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
  q.name = (char *)f->name;
  q.hostname = "flood";
  q.device_class = &dc;
  q.n_task_kinds = 1;
  q.task_kinds = kinds;
  q.slots = 1;
  ProtobufCMessage *resp = NULL;
  int rc = kf_rpc_client_call_sync(
      c, PATH("RegisterWorker"), &q.base,
      &kernelfleet__register_worker_response__descriptor, 30000, &resp, err,
      sizeof err);
  if (rc) {
    fprintf(stderr, "register: %s\n", err);
    kf_rpc_client_close(c);
    return 1;
  }
  printf("{\"worker_id\": %lld}\n",
         (long long)((Kernelfleet__RegisterWorkerResponse *)resp)->worker_id);
  kf_rpc_free(resp);
  kf_rpc_client_close(c);
  return 0;
}

int main(int argc, char **argv) {
  static flood f;
  f.kind = "checksum";
  f.name = "flood";
  f.count = 100;
  f.conc = 16;
  f.deadline_ms = 300;
  f.max_tasks = 10;
  f.entries = 10;
  pthread_mutex_init(&f.mu, NULL);
  if (argc < 2) {
    fprintf(stderr, "usage: kf-bench-flood register|lease|status|heartbeat"
            " --target T ... (the token from $KF_TOKEN)\n");
    return 2;
  }
  f.mode = argv[1];
  static const struct option opts[] = {
      {"target", required_argument, 0, 't'},
      {"name", required_argument, 0, 'n'},
      {"kind", required_argument, 0, 'K'},
      {"worker", required_argument, 0, 'w'},
      {"count", required_argument, 0, 'c'},
      {"conc", required_argument, 0, 'C'},
      {"deadline-ms", required_argument, 0, 'd'},
      {"wait-ms", required_argument, 0, 'W'},
      {"max-tasks", required_argument, 0, 'm'},
      {"entries", required_argument, 0, 'e'},
      {0, 0, 0, 0},
  };
  int o;
  optind = 2;
  while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (o) {
    case 't': f.target = optarg; break;
    case 'n': f.name = optarg; break;
    case 'K': f.kind = optarg; break;
    case 'w': f.worker = atoll(optarg); break;
    case 'c': f.count = atol(optarg); break;
    case 'C': f.conc = atol(optarg); break;
    case 'd': f.deadline_ms = atol(optarg); break;
    case 'W': f.wait_ms = atol(optarg); break;
    case 'm': f.max_tasks = atol(optarg); break;
    case 'e': f.entries = atol(optarg); break;
    default: return 2;
    }
  }
  /* Never from argv: a token there is visible in /proc/PID/cmdline. */
  f.token = getenv("KF_TOKEN");
  if (!f.target || !f.token || !*f.token) {
    fprintf(stderr, "kf-bench-flood: --target and $KF_TOKEN are required\n");
    return 2;
  }
  if (!strcmp(f.mode, "register")) return do_register(&f);
  if (strcmp(f.mode, "lease") && strcmp(f.mode, "status") &&
      strcmp(f.mode, "heartbeat")) {
    fprintf(stderr, "kf-bench-flood: unknown mode %s\n", f.mode);
    return 2;
  }
  if (f.conc < 1) f.conc = 1;
  if (f.conc > 1024) f.conc = 1024;
  if (!strcmp(f.mode, "heartbeat")) {
    size_t n = f.entries > 0 ? (size_t)f.entries : 0;
    f.refs = calloc(n + 1, sizeof *f.refs);
    f.prefs = calloc(n + 1, sizeof *f.prefs);
    if (!f.refs || !f.prefs) {
      fprintf(stderr, "out of memory\n");
      return 1;
    }
    for (size_t i = 0; i < n; i++) {
      kernelfleet__task_ref__init(&f.refs[i]);
      f.refs[i].task_id = (int64_t)i + 1;
      f.refs[i].attempt = 1;
      f.prefs[i] = &f.refs[i];
    }
    kernelfleet__heartbeat_request__init(&f.hb);
    f.hb.worker_id = f.worker;
    f.hb.n_running = n;
    f.hb.running = f.prefs;
  }
  pthread_t *ts = calloc((size_t)f.conc, sizeof *ts);
  if (!ts) return 1;
  uint64_t t0 = kf_now_ms();
  for (long i = 0; i < f.conc; i++)
    if (pthread_create(&ts[i], NULL, thread_main, &f) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  for (long i = 0; i < f.conc; i++) pthread_join(ts[i], NULL);
  free(ts);
  free(f.refs);
  free(f.prefs);
  printf("{\"mode\": \"%s\", \"sent\": %ld, \"ok\": %ld, \"tasks\": %ld, "
         "\"wall_ms\": %llu, \"codes\": {", f.mode, f.count,
         atomic_load(&f.ok), atomic_load(&f.tasks),
         (unsigned long long)(kf_now_ms() - t0));
  bool first = true;
  for (int k = 1; k < 32; k++) {
    long n = atomic_load(&f.codes[k]);
    if (!n) continue;
    printf("%s\"%s\": %ld", first ? "" : ", ", code_name(-k), n);
    first = false;
  }
  printf("}, \"messages\": {");
  first = true;
  for (int k = 1; k < 32; k++) {
    if (!atomic_load(&f.codes[k])) continue;
    printf("%s\"%s\": ", first ? "" : ", ", code_name(-k));
    put_json_str(f.msgs[k]);
    first = false;
  }
  printf("}}\n");
  return 0;
}
