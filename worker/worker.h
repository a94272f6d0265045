/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/worker.h -- a worker: registers its device with the coordinator,
 * leases tasks, runs them, reports results, and keeps its leases alive.
 *
 * Process model: one libuv loop owns the worker's state; task bodies run on
 * libuv work threads (one per slot); all RPCs are async calls of the rpc
 * module whose callbacks run on the loop.  Results wait in an outbox until
 * the coordinator answers with a verdict, so a coordinator restart or a
 * PostgreSQL restart delays a report but never loses it.
 */
#ifndef KF_WORKER_H
#define KF_WORKER_H

#include <stdint.h>

typedef struct {
  const char *coordinator; /* host:port */
  const char *token;        /* bearer secret (never from argv) */
  const char *tls_ca;       /* PEM CA: TLS to the coordinator; NULL: none */
  const char *tls_cert;     /* optional client certificate + key (PEM) */
  const char *tls_key;
  const char *name;        /* shown in status; default host-pid */
  uint32_t slots;          /* tasks run at once */
  uint32_t lease_wait_ms;  /* long-poll wait */
  const char *device;      /* "cpu", "cuda:N" or "auto" (device.h) */
  /* CPU only, NULL: detected.  Registers the device class under this
   * model name instead of /proc/cpuinfo's: names a CPU fleet ("cpu-a"),
   * and lets tests run two CPU classes on one machine. */
  const char *device_class;
  const char *metrics_listen;    /* HOST:PORT of /metrics; NULL: off */
  const char *metrics_port_file; /* if set, its bound port is written here */
} kf_worker_config;

/* Runs until SIGINT/SIGTERM: then stops leasing, finishes running tasks,
 * delivers their results (best effort, bounded) and returns 0.  Returns a
 * KF_E* code if startup fails. */
int kf_worker_run(const kf_worker_config *cfg);

#endif
