/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/main.c -- kf-coordinator: flags and environment, then the
 * loop in coord.c.  Every flag has an environment variable; flags win.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "err.h"
#include "log.h"
#include "token.h"
#include "util.h"

static void usage(FILE *f) {
  fprintf(f,
"usage: kf-coordinator [OPTIONS]\n"
"\n"
"Schedules tasks to workers; every state change is stored in PostgreSQL.\n"
"\n"
"  --db URL             libpq conninfo or URI            [$KF_DB_URL]\n"
"  --listen HOST:PORT   gRPC address (port 0: any free)  [$KF_LISTEN, 127.0.0.1:7070]\n"
"  --token-file PATH    bootstrap admin token, read from a file only its\n"
"                       owner may read [$KF_TOKEN_FILE; or $KF_TOKEN itself].\n"
"                       Tokens are never taken from argv (ps shows argv).\n"
"                       Other credentials: `kf token create`.\n"
"  --tls-cert PATH      PEM certificate: serve TLS       [$KF_TLS_CERT]\n"
"  --tls-key PATH       its PEM private key              [$KF_TLS_KEY]\n"
"  --tls-client-ca PATH require client certificates signed by this CA\n"
"                                                       [$KF_TLS_CLIENT_CA]\n"
"  --port-file PATH     write the bound port here once listening\n"
"  --lease-ttl-ms N     lease length without heartbeats  [$KF_LEASE_TTL_MS, 15000]\n"
"  --heartbeat-ms N     heartbeat interval for workers   [$KF_HEARTBEAT_MS, 3000]\n"
"  --reap-ms N          how often expired leases requeue [1000]\n"
"  --max-attempts N     default attempts per task        [3]\n"
"  --max-msg-bytes N    largest gRPC message             [16777216]\n"
"  --eval-per-slot N    campaign eval tasks kept queued or running per\n"
"                       worker slot                      [2]\n"
"  --eval-timeout-ms N  wall-clock limit of one eval task [120000]\n"
"  --eval-attempts N    attempts per eval task           [2]\n"
"\n"
"Bounded resources (beyond a cap a call is answered RESOURCE_EXHAUSTED\n"
"naming the cap; docs/security.md, Resources):\n"
"  --max-calls N        calls in flight at once, in all   [2048]\n"
"  --max-calls-per-peer N  calls in flight from one client host [512]\n"
"  --rpc-memory-mb N    memory gRPC may hold for messages being received,\n"
"                       all connections together; over it streams are\n"
"                       reset (RESOURCE_EXHAUSTED).  At least 2 x\n"
"                       max-msg-bytes      [max(64, 4 x max-msg-bytes MiB)]\n"
"  --max-queued-ops N   calls waiting for the database or parked as\n"
"                       long polls                       [1024]\n"
"  --db-statement-timeout-ms N  PostgreSQL statement_timeout; the\n"
"                       coordinator also gives up on a silent database\n"
"                       2 s after it (0: no limit)      [10000]\n"
"  --db-lock-timeout-ms N  PostgreSQL lock_timeout (0: none) [5000]\n"
"  --metrics-listen ADDR  serve Prometheus /metrics on HOST:PORT, or PORT\n"
"                       alone for 127.0.0.1 (read-only, no authentication:\n"
"                       keep it on loopback or a scrape-only network)\n"
"                                                       [$KF_METRICS_LISTEN, off]\n"
"  --metrics-port-file PATH  write the metrics port here once listening\n"
"  --log-level LEVEL    debug|info|warn|error            [$KF_LOG_LEVEL, info]\n"
"  -h, --help           this text\n"
"\n"
"SIGINT/SIGTERM stop it cleanly; a kill -9 loses nothing stored.\n");
}

static int num_opt(const char *name, const char *v, uint64_t min, uint64_t max,
                   uint64_t *out) {
  if (kf_parse_u64(v, out) != 0 || *out < min || *out > max) {
    fprintf(stderr, "kf-coordinator: --%s '%s': expected a number in %llu..%llu\n",
            name, v, (unsigned long long)min, (unsigned long long)max);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  kf_coord_config cfg = {
      .db_url = kf_getenv_or("KF_DB_URL", NULL),
      .listen_addr = kf_getenv_or("KF_LISTEN", "127.0.0.1:7070"),
      .tls_cert = kf_getenv_or("KF_TLS_CERT", NULL),
      .tls_key = kf_getenv_or("KF_TLS_KEY", NULL),
      .tls_client_ca = kf_getenv_or("KF_TLS_CLIENT_CA", NULL),
      .lease_ttl_ms = 15000,
      .heartbeat_ms = 3000,
      .reap_ms = 1000,
      .max_attempts = 3,
      .max_msg_bytes = 16u << 20,
      .max_wait_ms = 30000,
      .eval_per_slot = 2,
      .eval_timeout_ms = 120000,
      .eval_attempts = 2,
      .max_calls = 2048,
      .max_calls_per_peer = 512,
      .max_queued_ops = 1024,
      .db_statement_ms = KF_STORE_STATEMENT_MS,
      .db_lock_ms = KF_STORE_LOCK_MS,
      .metrics_listen = kf_getenv_or("KF_METRICS_LISTEN", NULL),
  };
  const char *level = kf_getenv_or("KF_LOG_LEVEL", "info");
  const char *token_file = NULL;
  uint64_t v;
  uint64_t rpc_memory_mb = 0; /* 0: the default, from max_msg_bytes */
  const char *e;
  if ((e = getenv("KF_LEASE_TTL_MS")) && *e) {
    if (num_opt("lease-ttl-ms", e, 500, 3600000, &v)) return 2;
    cfg.lease_ttl_ms = (uint32_t)v;
  }
  if ((e = getenv("KF_HEARTBEAT_MS")) && *e) {
    if (num_opt("heartbeat-ms", e, 100, 600000, &v)) return 2;
    cfg.heartbeat_ms = (uint32_t)v;
  }

  /* Long-only options: codes past every short option letter. */
  enum {
    OPT_MAX_CALLS = 256,
    OPT_MAX_PEER,
    OPT_MAX_OPS,
    OPT_DB_STMT,
    OPT_DB_LOCK,
    OPT_METRICS,
    OPT_METRICS_PORT_FILE,
    OPT_RPC_MEMORY,
  };
  static const struct option opts[] = {
      {"db", required_argument, 0, 'd'},
      {"listen", required_argument, 0, 'l'},
      {"token-file", required_argument, 0, 't'},
      {"tls-cert", required_argument, 0, 'C'},
      {"tls-key", required_argument, 0, 'K'},
      {"tls-client-ca", required_argument, 0, 'Q'},
      {"port-file", required_argument, 0, 'p'},
      {"lease-ttl-ms", required_argument, 0, 'L'},
      {"heartbeat-ms", required_argument, 0, 'H'},
      {"reap-ms", required_argument, 0, 'R'},
      {"max-attempts", required_argument, 0, 'A'},
      {"max-msg-bytes", required_argument, 0, 'M'},
      {"rpc-memory-mb", required_argument, 0, OPT_RPC_MEMORY},
      {"log-level", required_argument, 0, 'v'},
      {"eval-per-slot", required_argument, 0, 'S'},
      {"eval-timeout-ms", required_argument, 0, 'T'},
      {"eval-attempts", required_argument, 0, 'E'},
      {"max-calls", required_argument, 0, OPT_MAX_CALLS},
      {"max-calls-per-peer", required_argument, 0, OPT_MAX_PEER},
      {"max-queued-ops", required_argument, 0, OPT_MAX_OPS},
      {"db-statement-timeout-ms", required_argument, 0, OPT_DB_STMT},
      {"db-lock-timeout-ms", required_argument, 0, OPT_DB_LOCK},
      {"metrics-listen", required_argument, 0, OPT_METRICS},
      {"metrics-port-file", required_argument, 0, OPT_METRICS_PORT_FILE},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'd': cfg.db_url = optarg; break;
    case 'l': cfg.listen_addr = optarg; break;
    case 't': token_file = optarg; break;
    case 'C': cfg.tls_cert = optarg; break;
    case 'K': cfg.tls_key = optarg; break;
    case 'Q': cfg.tls_client_ca = optarg; break;
    case 'p': cfg.port_file = optarg; break;
    case 'L':
      if (num_opt("lease-ttl-ms", optarg, 500, 3600000, &v)) return 2;
      cfg.lease_ttl_ms = (uint32_t)v;
      break;
    case 'H':
      if (num_opt("heartbeat-ms", optarg, 100, 600000, &v)) return 2;
      cfg.heartbeat_ms = (uint32_t)v;
      break;
    case 'R':
      if (num_opt("reap-ms", optarg, 50, 600000, &v)) return 2;
      cfg.reap_ms = (uint32_t)v;
      break;
    case 'A':
      if (num_opt("max-attempts", optarg, 1, 100, &v)) return 2;
      cfg.max_attempts = (uint32_t)v;
      break;
    case 'M':
      if (num_opt("max-msg-bytes", optarg, 4096, 1u << 30, &v)) return 2;
      cfg.max_msg_bytes = (size_t)v;
      break;
    case OPT_RPC_MEMORY:
      if (num_opt("rpc-memory-mb", optarg, 1, 1u << 20, &v)) return 2;
      rpc_memory_mb = v;
      break;
    case 'S':
      if (num_opt("eval-per-slot", optarg, 1, 64, &v)) return 2;
      cfg.eval_per_slot = (uint32_t)v;
      break;
    case 'T':
      if (num_opt("eval-timeout-ms", optarg, 1000, 3600000, &v)) return 2;
      cfg.eval_timeout_ms = (uint32_t)v;
      break;
    case 'E':
      if (num_opt("eval-attempts", optarg, 1, 100, &v)) return 2;
      cfg.eval_attempts = (uint32_t)v;
      break;
    case OPT_MAX_CALLS:
      if (num_opt("max-calls", optarg, 1, 1000000, &v)) return 2;
      cfg.max_calls = (uint32_t)v;
      break;
    case OPT_MAX_PEER:
      if (num_opt("max-calls-per-peer", optarg, 1, 1000000, &v)) return 2;
      cfg.max_calls_per_peer = (uint32_t)v;
      break;
    case OPT_MAX_OPS:
      if (num_opt("max-queued-ops", optarg, 1, 1000000, &v)) return 2;
      cfg.max_queued_ops = (uint32_t)v;
      break;
    case OPT_DB_STMT:
      if (num_opt("db-statement-timeout-ms", optarg, 0, 3600000, &v))
        return 2;
      cfg.db_statement_ms = (uint32_t)v;
      break;
    case OPT_DB_LOCK:
      if (num_opt("db-lock-timeout-ms", optarg, 0, 3600000, &v)) return 2;
      cfg.db_lock_ms = (uint32_t)v;
      break;
    case OPT_METRICS: cfg.metrics_listen = optarg; break;
    case OPT_METRICS_PORT_FILE: cfg.metrics_port_file = optarg; break;
    case 'v': level = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "kf-coordinator: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  int lv = kf_log_parse_level(level);
  if (lv < 0) {
    fprintf(stderr, "kf-coordinator: --log-level '%s': expected debug, info, "
            "warn or error\n", level);
    return 2;
  }
  if (!rpc_memory_mb) {
    rpc_memory_mb = 4 * ((cfg.max_msg_bytes + (1u << 20) - 1) >> 20);
    if (rpc_memory_mb < 64) rpc_memory_mb = 64;
  } else if ((rpc_memory_mb << 20) < 2 * (uint64_t)cfg.max_msg_bytes) {
    /* Below two messages one honest large call would be reset whenever
     * another is arriving. */
    fprintf(stderr, "kf-coordinator: --rpc-memory-mb %llu is below twice "
            "--max-msg-bytes (%zu bytes): raise it to at least %llu\n",
            (unsigned long long)rpc_memory_mb, cfg.max_msg_bytes,
            (unsigned long long)((2 * (uint64_t)cfg.max_msg_bytes +
                                  (1u << 20) - 1) >> 20));
    return 2;
  }
  cfg.rpc_memory_bytes = (size_t)(rpc_memory_mb << 20);
  if (cfg.metrics_listen && !*cfg.metrics_listen) cfg.metrics_listen = NULL;
  if (cfg.metrics_port_file && !cfg.metrics_listen) {
    fprintf(stderr, "kf-coordinator: --metrics-port-file needs "
            "--metrics-listen\n");
    return 2;
  }
  if (!cfg.db_url) {
    fprintf(stderr, "kf-coordinator: no database: pass --db or set KF_DB_URL\n");
    return 2;
  }
  char terr[512];
  char *token = NULL;
  if (kf_token_load(token_file, &token, terr, sizeof terr)) {
    fprintf(stderr, "kf-coordinator: %s\n", terr);
    return 2;
  }
  if (!token) {
    fprintf(stderr, "kf-coordinator: no token: pass --token-file or set "
            "KF_TOKEN (the bootstrap admin credential)\n");
    return 2;
  }
  cfg.token = token;
  if (!cfg.tls_cert != !cfg.tls_key) {
    fprintf(stderr, "kf-coordinator: --tls-cert and --tls-key go together\n");
    free(token);
    return 2;
  }
  if (cfg.tls_client_ca && !cfg.tls_cert) {
    fprintf(stderr, "kf-coordinator: --tls-client-ca needs --tls-cert\n");
    free(token);
    return 2;
  }
  if (cfg.heartbeat_ms * 2 > cfg.lease_ttl_ms) {
    fprintf(stderr, "kf-coordinator: --heartbeat-ms %u must be at most half "
            "of --lease-ttl-ms %u, or live leases would expire\n",
            cfg.heartbeat_ms, cfg.lease_ttl_ms);
    free(token);
    return 2;
  }
  kf_log_init('c', (kf_log_level)lv);
  int rc = kf_coord_run(&cfg);
  free(token);
  return rc == 0 ? 0 : (rc == KF_EUNAVAIL || rc == KF_EDB) ? 3 : 1;
}
