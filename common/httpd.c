/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/httpd.c -- libmicrohttpd driven by a libuv loop (httpd.h).
 *
 * MHD runs in "external" epoll mode: it owns an epoll fd holding its
 * listening socket and connections; we watch that fd with a uv_poll_t and
 * call MHD_run when it is readable, then re-arm a uv_timer_t from
 * MHD_get_timeout so idle connections time out even when nothing happens.
 * Every MHD callback therefore runs inside MHD_run, on the loop thread.
 *
 * Shutdown: the poll handle is closed first (libuv must stop watching the
 * fd before it is closed), then the timer; when both are closed the
 * daemon stops (closing its sockets and epoll fd) and the struct is freed.
 */
#include "httpd.h"

#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "err.h"
#include "log.h"

struct kf_httpd {
  struct MHD_Daemon *d;
  uv_poll_t poll;
  uv_timer_t timer;
  int open_handles;
  kf_httpd_render_fn fn;
  void *data;
  unsigned long long scrapes;
};

static void rearm(kf_httpd *h);

static enum MHD_Result answer_text(struct MHD_Connection *c, unsigned code,
                                   const char *text) {
  struct MHD_Response *r = MHD_create_response_from_buffer(
      strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                          "text/plain; charset=utf-8");
  enum MHD_Result ret = MHD_queue_response(c, code, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **state) {
  kf_httpd *h = cls;
  (void)version;
  (void)upload;
  bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
  bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
  if (!get && !head) {
    /* A body is never read: answer at once (MHD then closes). */
    *upload_size = 0;
    return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                       "only GET /metrics is served here\n");
  }
  (void)state;
  if (strcmp(url, "/metrics") != 0)
    return answer_text(c, MHD_HTTP_NOT_FOUND,
                       "not found: this endpoint serves GET /metrics\n");
  kf_metrics_buf b = {0};
  int rc = h->fn(h->data, &b);
  if (rc || b.oom || !b.p) {
    kf_metrics_buf_free(&b);
    return answer_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
                       "metrics unavailable (out of memory)\n");
  }
  struct MHD_Response *r =
      MHD_create_response_from_buffer(b.len, b.p, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    kf_metrics_buf_free(&b);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                          "text/plain; version=0.0.4; charset=utf-8");
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  h->scrapes++;
  return ret;
}

static void on_timer(uv_timer_t *t) {
  kf_httpd *h = t->data;
  MHD_run(h->d);
  rearm(h);
}

static void on_poll(uv_poll_t *p, int status, int events) {
  kf_httpd *h = p->data;
  (void)events;
  if (status < 0) kf_log(KF_LOG_WARN, "metrics endpoint: poll: %s",
                         uv_strerror(status));
  MHD_run(h->d);
  rearm(h);
}

/* MHD's next deadline: connection timeouts, or 0 when it has buffered
 * work to finish without new events. */
static void rearm(kf_httpd *h) {
  MHD_UNSIGNED_LONG_LONG ms;
  if (MHD_get_timeout(h->d, &ms) == MHD_YES)
    uv_timer_start(&h->timer, on_timer, ms > 60000 ? 60000 : (uint64_t)ms, 0);
  else
    uv_timer_stop(&h->timer);
}

static void on_closed(uv_handle_t *hd) {
  kf_httpd *h = hd->data;
  if (--h->open_handles > 0) return;
  if (h->d) MHD_stop_daemon(h->d);
  free(h);
}

void kf_httpd_stop(kf_httpd *h) {
  if (!h) return;
  uv_close((uv_handle_t *)&h->poll, on_closed);
  uv_close((uv_handle_t *)&h->timer, on_closed);
}

unsigned long long kf_httpd_scrapes(const kf_httpd *h) {
  return h ? h->scrapes : 0;
}

/* Splits "host:port" or "[v6]:port" into its parts (copied); a bare
 * "port" is loopback's. */
static int split_addr(const char *addr, char *host, size_t hostlen,
                      char *port, size_t portlen) {
  if (*addr && strspn(addr, "0123456789") == strlen(addr)) {
    if (strlen(addr) >= portlen || hostlen < 10) return -1;
    strcpy(host, "127.0.0.1");
    strcpy(port, addr);
    return atoi(port) <= 65535 ? 0 : -1;
  }
  const char *colon;
  const char *hb = addr, *he;
  if (addr[0] == '[') {
    he = strchr(addr, ']');
    if (!he || he[1] != ':') return -1;
    hb = addr + 1;
    colon = he + 1;
  } else {
    colon = strrchr(addr, ':');
    if (!colon) return -1;
    he = colon;
  }
  size_t hl = (size_t)(he - hb), pl = strlen(colon + 1);
  if (hl == 0 || hl >= hostlen || pl == 0 || pl >= portlen) return -1;
  memcpy(host, hb, hl);
  host[hl] = '\0';
  memcpy(port, colon + 1, pl + 1);
  for (const char *c = port; *c; c++)
    if (*c < '0' || *c > '9') return -1;
  return atoi(port) <= 65535 ? 0 : -1;
}

int kf_httpd_start(uv_loop_t *loop, const char *addr, kf_httpd_render_fn fn,
                   void *data, kf_httpd **out, int *port, char *err,
                   size_t errlen) {
  *out = NULL;
  char host[256], ports[8];
  if (!addr || split_addr(addr, host, sizeof host, ports, sizeof ports)) {
    snprintf(err, errlen, "metrics address '%s': expected HOST:PORT, "
             "[IPV6]:PORT or PORT (loopback) with a port in 0..65535", addr ? addr : "");
    return KF_EINVAL;
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC,
                           .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
  struct addrinfo *ai = NULL;
  int gai = getaddrinfo(host, ports, &hints, &ai);
  if (gai || !ai) {
    snprintf(err, errlen, "metrics address '%s': %s", addr,
             gai ? gai_strerror(gai) : "no address");
    if (ai) freeaddrinfo(ai);
    return KF_EINVAL;
  }
  kf_httpd *h = calloc(1, sizeof *h);
  if (!h) {
    freeaddrinfo(ai);
    return KF_ENOMEM;
  }
  h->fn = fn;
  h->data = data;
  unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
  h->d = MHD_start_daemon(
      flags, 0, NULL, NULL, on_request, h,
      MHD_OPTION_SOCK_ADDR, ai->ai_addr,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)16,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
      MHD_OPTION_END);
  freeaddrinfo(ai);
  if (!h->d) {
    snprintf(err, errlen, "metrics address '%s': cannot listen (in use, "
             "or not an address of this host)", addr);
    free(h);
    return KF_EIO;
  }
  const union MHD_DaemonInfo *ie =
      MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
  const union MHD_DaemonInfo *ip =
      MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
  int rc = ie ? uv_poll_init(loop, &h->poll, ie->epoll_fd) : UV_EINVAL;
  if (rc) {
    snprintf(err, errlen, "metrics endpoint: watching its sockets: %s",
             uv_strerror(rc));
    MHD_stop_daemon(h->d);
    free(h);
    return KF_EIO;
  }
  uv_timer_init(loop, &h->timer);
  h->poll.data = h->timer.data = h;
  h->open_handles = 2;
  if ((rc = uv_poll_start(&h->poll, UV_READABLE, on_poll))) {
    snprintf(err, errlen, "metrics endpoint: uv_poll_start: %s",
             uv_strerror(rc));
    kf_httpd_stop(h);
    return KF_EIO;
  }
  rearm(h);
  if (port) *port = ip ? (int)ip->port : 0;
  *out = h;
  return 0;
}
