/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench_unauth.c -- the unauthenticated-memory flood of issue
 * 10: T threads each send R calls of B bytes (default 256 threads, 4 calls,
 * 16 MiB - 1 KiB) with a wrong token to a real coordinator, while the main
 * thread samples the coordinator's resident memory (/proc/PID/status).
 * Prints the RSS before, the peak seen during the flood, the kernel's
 * high-water mark (VmHWM) and the RSS after, and how the calls were
 * answered.  The coordinator judges the token from the call's metadata and
 * never reads a refused body, so its RSS must stay near where it started.
 * A benchmark that prints figures (scripts/bench-unauth runs it); it
 * asserts nothing about speed.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "rpc.h"
#include "util.h"

static struct {
  const char *target;
  const char *body;
  size_t len;
  uint64_t rounds;
  atomic_int unauth, other, running;
} B;

/* One VmRSS/VmHWM-style field of /proc/PID/status, kB; -1 if unreadable. */
static long status_kb(long pid, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%ld/status", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  long v = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, field, n) && line[n] == ':') {
      v = strtol(line + n + 1, NULL, 10);
      break;
    }
  fclose(f);
  return v;
}

static void *flood(void *arg) {
  (void)arg;
  kf_rpc_client *c = NULL;
  char err[256];
  /* The client's own token is never sent: every call overrides it. */
  if (kf_rpc_client_open(NULL, B.target, "unused", 64u << 20, &c, err,
                         sizeof err)) {
    fprintf(stderr, "bench: %s\n", err);
    atomic_fetch_add(&B.other, (int)B.rounds);
    atomic_fetch_sub(&B.running, 1);
    return NULL;
  }
  for (uint64_t i = 0; i < B.rounds; i++) {
    void *out = NULL;
    size_t outlen = 0;
    int rc = kf_rpc_client_call_raw_sync(
        c, "/kernelfleet.Coordinator/SubmitTasks", B.body, B.len,
        "kft_not-a-valid-token", 120000, &out, &outlen, err, sizeof err);
    free(out);
    if (rc == KF_EAUTH) atomic_fetch_add(&B.unauth, 1);
    else atomic_fetch_add(&B.other, 1);
  }
  kf_rpc_client_close(c);
  atomic_fetch_sub(&B.running, 1);
  return NULL;
}

int main(int argc, char **argv) {
  B.target = "127.0.0.1:7070";
  uint64_t threads = 256, bytes = (16u << 20) - 1024, pid = 0;
  B.rounds = 4;
  static const struct option opts[] = {
      {"coordinator", required_argument, 0, 'c'},
      {"pid", required_argument, 0, 'p'},
      {"threads", required_argument, 0, 't'},
      {"bytes", required_argument, 0, 'b'},
      {"rounds", required_argument, 0, 'r'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    uint64_t *dst = NULL;
    switch (c) {
    case 'c': B.target = optarg; break;
    case 'p': dst = &pid; break;
    case 't': dst = &threads; break;
    case 'b': dst = &bytes; break;
    case 'r': dst = &B.rounds; break;
    case 'h':
      printf("usage: kf-bench-unauth --coordinator HOST:PORT --pid PID\n"
             "         [--threads 256] [--bytes 16776192] [--rounds 4]\n");
      return 0;
    default: return 2;
    }
    if (dst && (kf_parse_u64(optarg, dst) || *dst == 0)) {
      fprintf(stderr, "bench: bad number '%s'\n", optarg);
      return 2;
    }
  }
  if (!pid || threads > 4096 || bytes > (1u << 30)) {
    fprintf(stderr, "bench: --pid is required; --threads <= 4096\n");
    return 2;
  }
  kf_log_init('t', KF_LOG_WARN);
  char *body = malloc(bytes);
  if (!body) {
    fprintf(stderr, "bench: out of memory\n");
    return 1;
  }
  memset(body, 'x', bytes);
  B.body = body;
  B.len = bytes;
  long before = status_kb((long)pid, "VmRSS");
  long hwm_before = status_kb((long)pid, "VmHWM");
  pthread_t *th = calloc(threads, sizeof *th);
  if (!th) return 1;
  atomic_store(&B.running, (int)threads);
  uint64_t t0 = kf_now_ms();
  size_t started = 0;
  for (; started < threads; started++) {
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 256 << 10);
    int e = pthread_create(&th[started], &a, flood, NULL);
    pthread_attr_destroy(&a);
    if (e) {
      fprintf(stderr, "bench: pthread_create failed after %zu threads\n",
              started);
      atomic_fetch_sub(&B.running, (int)(threads - started));
      break;
    }
  }
  long peak = before;
  while (atomic_load(&B.running) > 0) {
    long r = status_kb((long)pid, "VmRSS");
    if (r > peak) peak = r;
    usleep(20000);
  }
  for (size_t i = 0; i < started; i++) pthread_join(th[i], NULL);
  uint64_t ms = kf_now_ms() - t0;
  sleep(1); /* let the coordinator free what it will */
  long after = status_kb((long)pid, "VmRSS");
  long hwm = status_kb((long)pid, "VmHWM");
  printf("calls: %llu threads x %llu rounds x %llu bytes in %.1f s: "
         "%d UNAUTHENTICATED, %d other\n",
         (unsigned long long)threads, (unsigned long long)B.rounds,
         (unsigned long long)bytes, ms / 1000.0, atomic_load(&B.unauth),
         atomic_load(&B.other));
  printf("coordinator RSS: before %.1f MB, peak sampled %.1f MB, after %.1f MB;"
         " VmHWM before %.1f MB, after %.1f MB\n",
         before / 1024.0, peak / 1024.0, after / 1024.0, hwm_before / 1024.0,
         hwm / 1024.0);
  free(th);
  free(body);
  return atomic_load(&B.other) ? 1 : 0;
}
