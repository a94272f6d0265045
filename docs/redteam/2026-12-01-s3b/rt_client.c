/* rt_client.c -- a hostile worker / raw client for the red team of
 * 2026-12-01-s3b.  Token from $KF_TOKEN.  Subcommands (target first):
 *   rt_client T register NAME MODEL SLOTS KIND...     -> prints worker id
 *        ($RT_MEM bytes of memory, $RT_BUILD harness build, default "")
 *   rt_client T lease WID MAX WAITMS DIR              -> one line per task:
 *        "id attempt kind campaign timeout"; payload in DIR/task_ID.bin
 *   rt_client T report WID TASK ATTEMPT OUTCOME STAGE REASON OUTFILE|-
 *        REASON: \xNN escapes decoded; prints verdict and note
 *   rt_client T heartbeat WID TASK ATTEMPT
 *   rt_client T raw METHOD INFILE                     -> raw bytes call
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "rpc.h"

#define PATH(m) "/kernelfleet.Coordinator/" m

static unsigned char *slurp(const char *p, size_t *n) {
  FILE *f = fopen(p, "rb");
  if (!f) { perror(p); exit(2); }
  size_t cap = 1 << 20, len = 0;
  unsigned char *b = malloc(cap);
  size_t r;
  while ((r = fread(b + len, 1, cap - len, f)) > 0) {
    len += r;
    if (len == cap) b = realloc(b, cap *= 2);
  }
  fclose(f);
  *n = len;
  return b;
}

static char *unescape(const char *s) {
  char *o = malloc(strlen(s) + 1), *q = o;
  while (*s) {
    if (s[0] == '\\' && s[1] == 'x' && s[2] && s[3]) {
      char h[3] = {s[2], s[3], 0};
      *q++ = (char)strtol(h, NULL, 16);
      s += 4;
    } else
      *q++ = *s++;
  }
  *q = 0;
  return o;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *tok = getenv("KF_TOKEN");
  kf_rpc_client *c;
  char err[1024];
  if (kf_rpc_client_open(NULL, argv[1], tok ? tok : "", 64u << 20, &c, err,
                         sizeof err)) {
    fprintf(stderr, "open: %s\n", err);
    return 1;
  }
  const char *cmd = argv[2];
  ProtobufCMessage *resp = NULL;
  int rc;
  if (!strcmp(cmd, "register") && argc >= 7) {
    Kernelfleet__RegisterWorkerRequest q = KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
    Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
    Kernelfleet__DeviceInfo di = KERNELFLEET__DEVICE_INFO__INIT;
    dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
    dc.model = argv[4];
    dc.isa = getenv("RT_ISA") ? getenv("RT_ISA") : "x86-64-v3";
    di.cores = 2;
    di.mem_bytes = getenv("RT_MEM") ? strtoull(getenv("RT_MEM"), 0, 10) : (8ull << 30);
    di.copy_gbps = 10;
    di.harness_build = getenv("RT_BUILD") ? getenv("RT_BUILD") : "";
    di.compiler = getenv("RT_CC") ? getenv("RT_CC") : "";
    di.driver_version = getenv("RT_DRIVER") ? getenv("RT_DRIVER") : "";
    di.runtime_version = getenv("RT_RUNTIME") ? getenv("RT_RUNTIME") : "";
    if (getenv("RT_CORES")) di.cores = (uint32_t)atoi(getenv("RT_CORES"));
    q.name = argv[3];
    q.hostname = "rt";
    q.device_class = &dc;
    q.device = &di;
    q.slots = (uint32_t)atoi(argv[5]);
    q.n_task_kinds = (size_t)(argc - 6);
    q.task_kinds = argv + 6;
    rc = kf_rpc_client_call_sync(c, PATH("RegisterWorker"), &q.base,
                                 &kernelfleet__register_worker_response__descriptor,
                                 10000, &resp, err, sizeof err);
    if (rc) { fprintf(stderr, "register: %d %s\n", rc, err); return 1; }
    printf("%lld\n", (long long)((Kernelfleet__RegisterWorkerResponse *)resp)->worker_id);
  } else if (!strcmp(cmd, "lease") && argc >= 7) {
    Kernelfleet__LeaseTasksRequest q = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
    q.worker_id = atoll(argv[3]);
    q.max_tasks = (uint32_t)atoi(argv[4]);
    q.wait_ms = (uint32_t)atoi(argv[5]);
    rc = kf_rpc_client_call_sync(c, PATH("LeaseTasks"), &q.base,
                                 &kernelfleet__lease_tasks_response__descriptor,
                                 (int)q.wait_ms + 5000, &resp, err, sizeof err);
    if (rc) { fprintf(stderr, "lease: %d %s\n", rc, err); return 1; }
    Kernelfleet__LeaseTasksResponse *r = (void *)resp;
    for (size_t i = 0; i < r->n_tasks; i++) {
      Kernelfleet__Task *t = r->tasks[i];
      printf("%lld %u %s %lld %u\n", (long long)t->task_id, t->attempt, t->kind,
             (long long)t->campaign_id, t->timeout_ms);
      char p[4096];
      snprintf(p, sizeof p, "%s/task_%lld.bin", argv[6], (long long)t->task_id);
      FILE *f = fopen(p, "wb");
      if (f) { fwrite(t->payload.data, 1, t->payload.len, f); fclose(f); }
    }
  } else if (!strcmp(cmd, "report") && argc >= 10) {
    Kernelfleet__ReportResultRequest q = KERNELFLEET__REPORT_RESULT_REQUEST__INIT;
    Kernelfleet__TaskResult t = KERNELFLEET__TASK_RESULT__INIT, *tp = &t;
    q.worker_id = atoll(argv[3]);
    t.task_id = atoll(argv[4]);
    t.attempt = (uint32_t)atoi(argv[5]);
    t.outcome = atoi(argv[6]);
    t.stage = unescape(argv[7]);
    t.reason = unescape(argv[8]);
    if (strcmp(argv[9], "-")) {
      size_t n;
      t.output.data = slurp(argv[9], &n);
      t.output.len = n;
    }
    t.elapsed_us = 1000;
    q.n_results = 1;
    q.results = &tp;
    rc = kf_rpc_client_call_sync(c, PATH("ReportResult"), &q.base,
                                 &kernelfleet__report_result_response__descriptor,
                                 20000, &resp, err, sizeof err);
    if (rc) { fprintf(stderr, "report: %d %s\n", rc, err); return 1; }
    Kernelfleet__ReportResultResponse *r = (void *)resp;
    for (size_t i = 0; i < r->n_verdicts; i++)
      printf("verdict %d %s\n", r->verdicts[i],
             i < r->n_details ? r->details[i] : "");
  } else if (!strcmp(cmd, "heartbeat") && argc >= 6) {
    Kernelfleet__HeartbeatRequest q = KERNELFLEET__HEARTBEAT_REQUEST__INIT;
    Kernelfleet__TaskRef ref = KERNELFLEET__TASK_REF__INIT, *rp = &ref;
    q.worker_id = atoll(argv[3]);
    ref.task_id = atoll(argv[4]);
    ref.attempt = (uint32_t)atoi(argv[5]);
    q.n_running = 1;
    q.running = &rp;
    rc = kf_rpc_client_call_sync(c, PATH("Heartbeat"), &q.base,
                                 &kernelfleet__heartbeat_response__descriptor,
                                 10000, &resp, err, sizeof err);
    if (rc) { fprintf(stderr, "heartbeat: %d %s\n", rc, err); return 1; }
    printf("revoked %zu reregister %d\n",
           ((Kernelfleet__HeartbeatResponse *)resp)->n_revoked,
           ((Kernelfleet__HeartbeatResponse *)resp)->reregister);
  } else if (!strcmp(cmd, "raw") && argc >= 5) {
    size_t n, on;
    unsigned char *b = slurp(argv[4], &n);
    void *out;
    char path[256];
    snprintf(path, sizeof path, PATH("%s"), argv[3]);
    rc = kf_rpc_client_call_raw_sync(c, path, b, n, NULL, 20000, &out, &on,
                                     err, sizeof err);
    if (rc) { fprintf(stderr, "raw: %d %s\n", rc, err); return 1; }
    printf("ok %zu bytes\n", on);
    fwrite(out, 1, on, stderr);
  } else {
    fprintf(stderr, "bad usage\n");
    return 2;
  }
  kf_rpc_free(resp);
  kf_rpc_client_close(c);
  return 0;
}
