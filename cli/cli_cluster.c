/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_cluster.c -- `kf cluster`: a whole local cluster in one command.
 *
 * Starts a private PostgreSQL, kf-coordinator and N kf-worker processes
 * (siblings of this binary), submits a batch of checksum tasks over gRPC,
 * shows progress until every task has ended, prints what happened, and
 * stops everything it started, also on ^C.  The data directory is kept
 * when --data is given, so a second run sees the first run's rows.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_internal.h"
#include "err.h"
#include "kernelfleet.pb-c.h"
#include "rpc.h"
#include "util.h"

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) { (void)sig; interrupted = 1; }

static void usage(FILE *f) {
  fprintf(f,
"usage: kf cluster [--tasks N] [--workers N] [--data DIR]\n"
"\n"
"Runs a local cluster: a private PostgreSQL (unix socket only), one\n"
"kf-coordinator and N kf-worker processes; submits N checksum tasks and\n"
"reports what happened.  Logs go to DIR/*.log.\n"
"\n"
"  --tasks N     tasks to run          [200]\n"
"  --workers N   worker processes      [2]\n"
"  --data DIR    keep state here       [a fresh directory under /tmp]\n");
}

int kf_cli_cluster(int argc, char **argv) {
  uint64_t ntasks = 200, nworkers = 2;
  const char *data = NULL;
  static const struct option opts[] = {
      {"tasks", required_argument, 0, 't'},
      {"workers", required_argument, 0, 'w'},
      {"data", required_argument, 0, 'd'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  int c;
  optind = 0;
  /* getopt_long wants argv[0] to be the program name. */
  char **av = calloc((size_t)argc + 2, sizeof *av);
  if (!av) return KF_EXIT_FAIL;
  av[0] = "kf cluster";
  for (int i = 0; i < argc; i++) av[i + 1] = argv[i];
  while ((c = getopt_long(argc + 1, av, "h", opts, NULL)) != -1) {
    switch (c) {
    case 't':
      if (kf_parse_u64(optarg, &ntasks) || ntasks < 1 || ntasks > 100000) {
        fprintf(stderr, "kf cluster: --tasks '%s': expected 1..100000\n",
                optarg);
        free(av);
        return KF_EXIT_USAGE;
      }
      break;
    case 'w':
      if (kf_parse_u64(optarg, &nworkers) || nworkers < 1 || nworkers > 64) {
        fprintf(stderr, "kf cluster: --workers '%s': expected 1..64\n", optarg);
        free(av);
        return KF_EXIT_USAGE;
      }
      break;
    case 'd': data = optarg; break;
    case 'h': usage(stdout); free(av); return KF_EXIT_OK;
    default: usage(stderr); free(av); return KF_EXIT_USAGE;
    }
  }
  free(av);

  char dir[256];
  if (data) {
    kf_strlcpy(dir, data, sizeof dir);
  } else {
    snprintf(dir, sizeof dir, "/tmp/kf-cluster-XXXXXX");
    if (!mkdtemp(dir)) {
      fprintf(stderr, "kf cluster: mkdtemp: %s\n", strerror(errno));
      return KF_EXIT_FAIL;
    }
    chmod(dir, 0755);
  }
  signal(SIGINT, on_sigint);
  signal(SIGTERM, on_sigint);

  char err[2048];
  printf("kf cluster: state in %s\n", dir);
  fflush(stdout);
  kf_cli__local local;
  kf_cli__local_opts lo = {.dir = dir, .workers = (int)nworkers,
                           .cmd = "kf cluster",
                           .interrupted = &interrupted};
  int rc = kf_cli__local_start(&local, &lo);
  if (rc) return rc;
  rc = KF_EXIT_FAIL;
  kf_rpc_client *cli = NULL;
  const char *target = local.target, *token = local.token;
  if (kf_rpc_client_open(NULL, target, token, 64u << 20, &cli, err,
                         sizeof err)) {
    fprintf(stderr, "kf cluster: %s\n", err);
    goto out;
  }
  /* Submit in chunks the coordinator accepts. */
  uint64_t t0 = kf_now_ms();
  for (uint64_t base = 0; base < ntasks;) {
    size_t n = ntasks - base > 1000 ? 1000 : (size_t)(ntasks - base);
    Kernelfleet__TaskSpec *specs = calloc(n, sizeof *specs);
    Kernelfleet__TaskSpec **ptrs = calloc(n, sizeof *ptrs);
    char (*payloads)[96] = calloc(n, sizeof *payloads);
    if (!specs || !ptrs || !payloads) {
      free(specs); free(ptrs); free(payloads);
      goto out;
    }
    for (size_t i = 0; i < n; i++) {
      kernelfleet__task_spec__init(&specs[i]);
      int len = snprintf(payloads[i], sizeof payloads[i],
                         "{\"data\": \"task-%llu\", \"repeat\": 1000}",
                         (unsigned long long)(base + i));
      specs[i].kind = "checksum";
      specs[i].payload.data = (uint8_t *)payloads[i];
      specs[i].payload.len = (size_t)len;
      ptrs[i] = &specs[i];
    }
    Kernelfleet__SubmitTasksRequest req = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
    req.tasks = ptrs;
    req.n_tasks = n;
    ProtobufCMessage *resp = NULL;
    int r = kf_rpc_client_call_sync(cli, "/kernelfleet.Coordinator/SubmitTasks",
                                    &req.base,
                                    &kernelfleet__submit_tasks_response__descriptor,
                                    30000, &resp, err, sizeof err);
    free(specs); free(ptrs); free(payloads);
    kf_rpc_free(resp);
    if (r) {
      fprintf(stderr, "kf cluster: submit: %s: %s\n", kf_strerror(r), err);
      rc = KF_EXIT_UNAVAIL;
      goto out;
    }
    base += n;
  }
  printf("  submitted   %llu checksum tasks\n", (unsigned long long)ntasks);

  Kernelfleet__GetStatusResponse *st = NULL;
  for (;;) {
    if (interrupted) {
      rc = KF_EXIT_INTERRUPT;
      printf("\ninterrupted: stopping the cluster; state kept in %s\n", dir);
      goto out;
    }
    Kernelfleet__GetStatusRequest sreq = KERNELFLEET__GET_STATUS_REQUEST__INIT;
    ProtobufCMessage *resp = NULL;
    int r = kf_rpc_client_call_sync(cli, "/kernelfleet.Coordinator/GetStatus",
                                    &sreq.base,
                                    &kernelfleet__get_status_response__descriptor,
                                    10000, &resp, err, sizeof err);
    if (r) {
      fprintf(stderr, "\nkf cluster: status: %s: %s\n", kf_strerror(r), err);
      usleep(500000);
      continue;
    }
    kf_rpc_free((ProtobufCMessage *)st);
    st = (Kernelfleet__GetStatusResponse *)resp;
    uint64_t ended = st->done + st->failed, total = ended + st->queued + st->leased;
    printf("\r  progress    %llu/%llu ended (%llu queued, %llu running)   ",
           (unsigned long long)ended, (unsigned long long)total,
           (unsigned long long)st->queued, (unsigned long long)st->leased);
    fflush(stdout);
    if (st->queued == 0 && st->leased == 0) break;
    usleep(200000);
  }
  double secs = (double)(kf_now_ms() - t0) / 1000.0;
  printf("\n\n  %-12s %10s\n", "state", "tasks");
  printf("  %-12s %10llu\n", "done", (unsigned long long)st->done);
  printf("  %-12s %10llu\n", "failed", (unsigned long long)st->failed);
  printf("\n  %-12s %-8s %10s\n", "worker", "alive", "leased");
  /* names come from the coordinator: stripped of control characters,
   * escapes and bidi overrides like every name kf prints (kf_cli__clean) */
  for (size_t i = 0; i < st->n_workers; i++)
    printf("  %-12s %-8s %10u\n", kf_cli__clean(st->workers[i]->name, 64),
           st->workers[i]->alive ? "yes" : "no", st->workers[i]->leased);
  printf("\n  %.2f s wall, %.0f tasks/s; logs in %s\n", secs,
         (double)ntasks / secs, dir);
  rc = st->failed ? KF_EXIT_FAIL : KF_EXIT_OK;
  kf_rpc_free((ProtobufCMessage *)st);

out:
  kf_rpc_client_close(cli);
  kf_cli__local_stop(&local);
  return rc;
}
