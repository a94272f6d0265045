/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/httpd.h -- a read-only HTTP endpoint on a libuv loop: serves
 * `GET /metrics` (and HEAD) with text a callback renders, nothing else.
 *
 * libmicrohttpd parses HTTP; it runs without threads of its own (epoll,
 * driven by a uv_poll_t and a uv_timer_t), so the render callback runs on
 * the loop's thread and may read everything the loop owns, with no
 * locking and no hand-over.  Limits: 32 connections at once, 10 s idle
 * timeout per connection, 16 KiB of request per connection; other paths
 * get 404, other methods 405.  No authentication: bind it to loopback
 * (the default of every program) or to a network only the scraper
 * reaches (infra/README.md, Metrics).
 */
#ifndef KF_HTTPD_H
#define KF_HTTPD_H

#include <stddef.h>
#include <uv.h>

#include "metrics.h"

typedef struct kf_httpd kf_httpd;

/* Fills out with the exposition text; returns 0, or non-zero to answer
 * 500 (nothing of out is sent). */
typedef int (*kf_httpd_render_fn)(void *data, kf_metrics_buf *out);

/* Listens on addr ("HOST:PORT", "[V6]:PORT", or "PORT" alone for
 * 127.0.0.1; a numeric host or a name that resolves; port 0 picks a free
 * one, returned in *port).  0, or KF_EINVAL
 * (bad address, text in err) / KF_EIO (cannot listen) / KF_ENOMEM. */
int kf_httpd_start(uv_loop_t *loop, const char *addr, kf_httpd_render_fn fn,
                   void *data, kf_httpd **out, int *port, char *err,
                   size_t errlen);
/* Stops listening, drops open connections and frees h once its handles
 * have closed (on the loop).  NULL-safe. */
void kf_httpd_stop(kf_httpd *h);

/* Number of GET /metrics answered so far (for tests and logs). */
unsigned long long kf_httpd_scrapes(const kf_httpd *h);

#endif
