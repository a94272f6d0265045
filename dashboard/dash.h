/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dashboard/dash.h -- `kf dashboard`: a read-only web view of a running
 * coordinator (docs/dashboard.md).
 *
 * A separate process: an HTTP server (libmicrohttpd) in front of a gRPC
 * client of the coordinator.  It holds no credential of its own.  Every
 * request must carry a coordinator credential -- `Authorization: Bearer`,
 * or the session cookie that POST /login sets after the coordinator
 * accepted the token -- and every gRPC call made for that request carries
 * THAT credential, so the coordinator's roles decide what is shown: a
 * token the coordinator refuses gets 401 (the login page), never data.
 * Only read RPCs are called.  Static assets are embedded at build time;
 * the page renders what /api/... returns with textContent, never as
 * markup.
 */
#ifndef KF_DASH_H
#define KF_DASH_H

#include <signal.h>
#include <stdbool.h>

#include "rpc.h"

typedef struct {
  const char *listen;        /* "127.0.0.1:PORT" (PORT 0: any free one) */
  const char *coordinator;   /* "host:port" */
  kf_rpc_tls tls;            /* toward the coordinator; ca_file set: TLS */
  const char *port_file;     /* NULL, or where to write the bound port */
  /* PEM files: serve HTTPS (the session cookie is then Secure) */
  const char *https_cert, *https_key;
  volatile sig_atomic_t *stop; /* set (by a signal handler) to stop */
} kf_dash_opts;

/* Serves until *o->stop is set.  Returns 0, or a KF_E* code with the
 * reason in err (cannot bind, cannot read the PEM files, no client). */
int kf_dash_run(const kf_dash_opts *o, char *err, size_t errlen);

#endif
