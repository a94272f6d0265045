/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/main.c -- kf-worker: flags and environment, then worker.c's loop.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "token.h"
#include "util.h"
#include "watchdog.h"
#include "worker.h"

static void usage(FILE *f) {
  fprintf(f,
"usage: kf-worker [OPTIONS]\n"
"\n"
"Leases tasks from a coordinator, runs them on this machine's device and\n"
"reports the results.\n"
"\n"
"  --coordinator HOST:PORT  coordinator address  [$KF_COORDINATOR, 127.0.0.1:7070]\n"
"  --token-file PATH        file holding the worker's credential (mode\n"
"                           600)  [$KF_TOKEN_FILE; or $KF_TOKEN itself]\n"
"  --tls-ca PATH            PEM CA: talk TLS, verify the coordinator\n"
"                           [$KF_TLS_CA]\n"
"  --tls-cert PATH          client certificate (PEM), with --tls-key,\n"
"  --tls-key PATH           when the coordinator asks for one\n"
"  --name NAME              shown in status      [host-pid]\n"
"  --device DEV             cpu, cuda:N (one GPU per worker) or auto\n"
"                           (cuda:0 if a GPU works, else cpu)  [cpu]\n"
"  --device-class NAME      CPU workers only: register the device class\n"
"                           under model NAME instead of the CPU's own\n"
"                           (names a CPU fleet; tests run two CPU classes\n"
"                           on one machine with it)  [$KF_DEVICE_CLASS]\n"
"  --slots N                tasks run at once    [1; 6 for cuda]\n"
"                           (CUDA: compiles of N tasks overlap while the\n"
"                           GPU stages take turns under a per-GPU lock)\n"
"  --lease-wait-ms N        long-poll wait       [10000]\n"
"  --metrics-listen ADDR    serve Prometheus /metrics on HOST:PORT, or PORT\n"
"                           alone for 127.0.0.1 (read-only, no\n"
"                           authentication: keep it on loopback or a\n"
"                           scrape-only network) [$KF_METRICS_LISTEN, off]\n"
"  --metrics-port-file PATH write the metrics port here once listening\n"
"  --log-level LEVEL        debug|info|warn|error [$KF_LOG_LEVEL, info]\n"
"  -h, --help               this text\n"
"\n"
"SIGINT/SIGTERM: stop leasing, finish running tasks, deliver results, exit.\n");
}

int main(int argc, char **argv) {
  /* The worker's watchdog is this program too (watchdog.h). */
  if (argc >= 2 && strcmp(argv[1], KF_WATCHDOG_ARG) == 0)
    return kf_watchdog_main(argc, argv);
  char name[96];
  char host[64] = "worker";
  gethostname(host, sizeof host - 1);
  snprintf(name, sizeof name, "%.40s-%d", host, (int)getpid());
  kf_worker_config cfg = {
      .coordinator = kf_getenv_or("KF_COORDINATOR", "127.0.0.1:7070"),
      .tls_ca = kf_getenv_or("KF_TLS_CA", NULL),
      .tls_cert = kf_getenv_or("KF_TLS_CERT", NULL),
      .tls_key = kf_getenv_or("KF_TLS_KEY", NULL),
      .name = name,
      .slots = 1,
      .lease_wait_ms = 10000,
      .device = "cpu",
      .device_class = kf_getenv_or("KF_DEVICE_CLASS", NULL),
      .metrics_listen = kf_getenv_or("KF_METRICS_LISTEN", NULL),
  };
  const char *level = kf_getenv_or("KF_LOG_LEVEL", "info");
  const char *token_file = NULL;
  static const struct option opts[] = {
      {"coordinator", required_argument, 0, 'c'},
      {"token-file", required_argument, 0, 't'},
      {"tls-ca", required_argument, 0, 'A'},
      {"tls-cert", required_argument, 0, 'C'},
      {"tls-key", required_argument, 0, 'K'},
      {"name", required_argument, 0, 'n'},
      {"slots", required_argument, 0, 's'},
      {"device", required_argument, 0, 'd'},
      {"device-class", required_argument, 0, 'D'},
      {"lease-wait-ms", required_argument, 0, 'w'},
      {"log-level", required_argument, 0, 'v'},
      {"metrics-listen", required_argument, 0, 'm'},
      {"metrics-port-file", required_argument, 0, 'P'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  int c;
  uint64_t v;
  bool slots_given = false;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'c': cfg.coordinator = optarg; break;
    case 't': token_file = optarg; break;
    case 'A': cfg.tls_ca = optarg; break;
    case 'C': cfg.tls_cert = optarg; break;
    case 'K': cfg.tls_key = optarg; break;
    case 'n':
      if (!*optarg || strlen(optarg) > 63) {
        fprintf(stderr, "kf-worker: --name must be 1..63 characters\n");
        return 2;
      }
      cfg.name = optarg;
      break;
    case 's':
      if (kf_parse_u64(optarg, &v) || v < 1 || v > 256) {
        fprintf(stderr, "kf-worker: --slots '%s': expected 1..256\n", optarg);
        return 2;
      }
      cfg.slots = (uint32_t)v;
      slots_given = true;
      break;
    case 'd':
      if (strcmp(optarg, "cpu") && strcmp(optarg, "auto") &&
          strncmp(optarg, "cuda:", 5)) {
        fprintf(stderr, "kf-worker: --device '%s': expected cpu, cuda:N or "
                "auto\n", optarg);
        return 2;
      }
      cfg.device = optarg;
      break;
    case 'D':
      cfg.device_class = optarg;
      break;
    case 'w':
      if (kf_parse_u64(optarg, &v) || v > 60000) {
        fprintf(stderr, "kf-worker: --lease-wait-ms '%s': expected 0..60000\n",
                optarg);
        return 2;
      }
      cfg.lease_wait_ms = (uint32_t)v;
      break;
    case 'm': cfg.metrics_listen = optarg; break;
    case 'P': cfg.metrics_port_file = optarg; break;
    case 'v': level = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "kf-worker: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  if (cfg.device_class) {
    /* The model is stored and shown: printable ASCII, a sane length. */
    size_t n = strlen(cfg.device_class);
    bool ok = n >= 1 && n <= 127;
    for (size_t i = 0; ok && i < n; i++)
      ok = cfg.device_class[i] >= 0x20 && cfg.device_class[i] < 0x7f;
    if (!ok) {
      fprintf(stderr, "kf-worker: --device-class '%s': expected 1..127"
              " printable ASCII characters\n", cfg.device_class);
      return 2;
    }
    if (!strncmp(cfg.device, "cuda:", 5)) {
      fprintf(stderr, "kf-worker: --device-class is for CPU workers (a"
              " GPU's class is its model and compute capability)\n");
      return 2;
    }
  }
  if (cfg.metrics_listen && !*cfg.metrics_listen) cfg.metrics_listen = NULL;
  if (cfg.metrics_port_file && !cfg.metrics_listen) {
    fprintf(stderr, "kf-worker: --metrics-port-file needs --metrics-listen\n");
    return 2;
  }
  int lv = kf_log_parse_level(level);
  if (lv < 0) {
    fprintf(stderr, "kf-worker: --log-level '%s': expected debug, info, warn "
            "or error\n", level);
    return 2;
  }
  char terr[512];
  char *token = NULL;
  if (kf_token_load(token_file, &token, terr, sizeof terr)) {
    fprintf(stderr, "kf-worker: %s\n", terr);
    return 2;
  }
  if (!token) {
    fprintf(stderr, "kf-worker: no token: pass --token-file or set "
            "KF_TOKEN\n");
    return 2;
  }
  cfg.token = token;
  /* The harness and the candidates it runs inherit our environment: the
   * credential must not be there for them to read. */
  unsetenv("KF_TOKEN");
  unsetenv("KF_TOKEN_FILE");
  /* A CUDA worker compiles ahead: its GPU stages are serialized by the
   * harness's GPU lock, its compiles (and its runners' start) are not.
   * An nvcc compile takes a few seconds and a GPU stage about one, so six
   * slots keep the GPU busy while the others compile; a queued task waits
   * for the lock a few seconds, far inside its own timeout. */
  if (!slots_given && (!strncmp(cfg.device, "cuda:", 5) ||
                       (!strcmp(cfg.device, "auto") &&
                        access("/dev/nvidia0", F_OK) == 0)))
    cfg.slots = 6;
  /* One libuv work thread per slot, so slots really run at once. */
  char threads[16];
  snprintf(threads, sizeof threads, "%u", cfg.slots + 1);
  setenv("UV_THREADPOOL_SIZE", threads, 0);
  kf_log_init('w', (kf_log_level)lv);
  int rc = kf_worker_run(&cfg);
  free(token);
  return rc == 0 ? 0 : 1;
}
