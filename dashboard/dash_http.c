/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dashboard/dash_http.c -- the HTTP side of `kf dashboard`: routes,
 * credentials, sessions and the security headers, on libmicrohttpd (one
 * thread per connection: a request blocks in its gRPC call).
 *
 *   GET  /login              the login form (no credential needed)
 *   POST /login              token=...: checked with the coordinator; on
 *                            success a session cookie (HttpOnly,
 *                            SameSite=Strict) and 303 to /
 *   POST /logout             forgets the session
 *   GET  /static/style.css   the stylesheet (no credential needed)
 *   GET  /, /static/app.js   the page; without a credential / goes to
 *                            /login and app.js is 401
 *   GET  /api/...            JSON (dash_api.c); 401 without a credential
 *                            or when the coordinator refuses it
 *
 * A credential is the session cookie or `Authorization: Bearer TOKEN`.
 * A POST whose Origin is not this server is refused (login CSRF).
 * A token in a URL is refused (400): URLs end up in logs and histories.
 * Every response forbids framing, sniffing and every script, style or
 * connection not from this origin (Content-Security-Policy), and is not
 * cached.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dash.h"
#include "dash_internal.h"
#include "err.h"
#include "log.h"
#include "util.h"

#define COOKIE "kf_dash_session"
#define MAX_FORM 4096                 /* bytes of a login form */
#define SESSIONS 256
#define SESSION_IDLE_MS (12u * 3600u * 1000u)

typedef struct {
  kf_rpc_client *cli;
  kf_dash_sessions *sessions;
  bool secure;                        /* HTTPS: cookies are Secure */
} dash;

/* One request's state across libmicrohttpd's calls. */
typedef struct {
  struct MHD_PostProcessor *pp;
  char token[KF_DASH_TOKEN_MAX + 1];
  size_t form_bytes;
  bool bad_form;                      /* too long, or not a token */
} req;

static const char CSP[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'";

static enum MHD_Result send_resp(struct MHD_Connection *c, unsigned status,
                                 const char *ctype, const char *body,
                                 size_t len, enum MHD_ResponseMemoryMode mode,
                                 const char *cookie, const char *location) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(len, (void *)body, mode);
  if (!r) return MHD_NO;
  bool ok = MHD_add_response_header(r, "Content-Type", ctype) == MHD_YES &&
            MHD_add_response_header(r, "Content-Security-Policy", CSP) ==
                MHD_YES &&
            MHD_add_response_header(r, "X-Content-Type-Options", "nosniff") ==
                MHD_YES &&
            MHD_add_response_header(r, "X-Frame-Options", "DENY") == MHD_YES &&
            MHD_add_response_header(r, "Referrer-Policy", "same-origin") ==
                MHD_YES &&
            MHD_add_response_header(r, "Cache-Control", "no-store") == MHD_YES;
  if (ok && cookie)
    ok = MHD_add_response_header(r, "Set-Cookie", cookie) == MHD_YES;
  if (ok && location)
    ok = MHD_add_response_header(r, "Location", location) == MHD_YES;
  enum MHD_Result q = ok ? MHD_queue_response(c, status, r) : MHD_NO;
  MHD_destroy_response(r);
  return q;
}

static enum MHD_Result send_static(struct MHD_Connection *c, unsigned status,
                                   const char *ctype, const char *body) {
  return send_resp(c, status, ctype, body, strlen(body),
                   MHD_RESPMEM_PERSISTENT, NULL, NULL);
}

static enum MHD_Result redirect(struct MHD_Connection *c, const char *to,
                                const char *cookie) {
  return send_resp(c, 303, "text/plain; charset=utf-8", "", 0,
                   MHD_RESPMEM_PERSISTENT, cookie, to);
}

/* The login page with msg (one of our own fixed texts, escaped anyway). */
static enum MHD_Result login_page(struct MHD_Connection *c, unsigned status,
                                  const char *msg) {
  static const char mark[] = "<!--ERROR-->";
  const char *page = kf_dash__login_html;
  const char *at = strstr(page, mark);
  if (!at || !msg || !*msg)
    return send_static(c, status, "text/html; charset=utf-8", page);
  size_t cap = strlen(page) + 6 * strlen(msg) + 64;
  char *out = malloc(cap);
  if (!out) return MHD_NO;
  size_t o = (size_t)(at - page);
  memcpy(out, page, o);
  o += (size_t)snprintf(out + o, cap - o, "<p id=\"login-error\" class=\"error\">");
  for (const char *p = msg; *p; p++) {
    const char *e = *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '&' ? "&amp;"
                  : *p == '"' ? "&quot;" : *p == '\'' ? "&#39;" : NULL;
    if (e) o += (size_t)snprintf(out + o, cap - o, "%s", e);
    else out[o++] = *p;
  }
  o += (size_t)snprintf(out + o, cap - o, "</p>%s", at + strlen(mark));
  return send_resp(c, status, "text/html; charset=utf-8", out, o,
                   MHD_RESPMEM_MUST_FREE, NULL, NULL);
}

static enum MHD_Result json_error(struct MHD_Connection *c, unsigned status,
                                  const char *text) {
  /* text is one of ours, without quotes or backslashes */
  char buf[256];
  int n = snprintf(buf, sizeof buf, "{\"error\": \"%s\"}", text);
  return send_resp(c, status, "application/json", buf, (size_t)n,
                   MHD_RESPMEM_MUST_COPY, NULL, NULL);
}

/* The request's credential into tok; sid (may be NULL) gets the session
 * id when it came from the cookie ("" otherwise).  false: none. */
static bool credential(dash *d, struct MHD_Connection *c, char *tok,
                       size_t tlen, char *sid, size_t slen) {
  if (sid) sid[0] = '\0';
  const char *h =
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
  if (h && !strncmp(h, "Bearer ", 7)) {
    if (!kf_dash__token_ok(h + 7)) return false;
    snprintf(tok, tlen, "%s", h + 7);
    return true;
  }
  const char *ck = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, COOKIE);
  if (!ck || !kf_dash__session_token(d->sessions, ck, tok, tlen)) return false;
  if (sid) snprintf(sid, slen, "%s", ck);
  return true;
}

static enum MHD_Result on_form(void *cls, enum MHD_ValueKind kind,
                               const char *key, const char *filename,
                               const char *ctype, const char *enc,
                               const char *data, uint64_t off, size_t size) {
  req *q = cls;
  if (strcmp(key, "token") != 0) return MHD_YES;
  size_t have = strlen(q->token);
  if (off != have || have + size > KF_DASH_TOKEN_MAX) {
    q->bad_form = true;
    return MHD_NO;
  }
  memcpy(q->token + have, data, size);
  q->token[have + size] = '\0';
  return MHD_YES;
}

static enum MHD_Result do_login(dash *d, struct MHD_Connection *c, req *q) {
  /* Pasted tokens often carry a trailing newline. */
  size_t n = strlen(q->token);
  while (n && (q->token[n - 1] == '\n' || q->token[n - 1] == '\r' ||
               q->token[n - 1] == ' '))
    q->token[--n] = '\0';
  if (q->bad_form || !kf_dash__token_ok(q->token))
    return login_page(c, 400, "That is not a credential: paste the token "
                              "(printable characters, no spaces).");
  char err[512] = "";
  int rc = kf_dash__check_token(d->cli, q->token, err, sizeof err);
  if (rc == KF_EAUTH)
    return login_page(c, 401, "The coordinator refused this token.");
  if (rc == KF_EPERM)
    return login_page(c, 403, "This credential's role may not read "
                              "campaigns (a worker token?).");
  if (rc) {
    kf_log(KF_LOG_WARN, "dashboard: login check: %s: %s", kf_strerror(rc),
           err);
    return login_page(c, 502, "The coordinator cannot be reached now; "
                              "try again.");
  }
  char sid[KF_DASH_SID_LEN + 1];
  if (kf_dash__session_add(d->sessions, q->token, sid))
    return login_page(c, 500, "Cannot open a session.");
  char cookie[256];
  snprintf(cookie, sizeof cookie,
           COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict%s", sid,
           d->secure ? "; Secure" : "");
  explicit_bzero(q->token, sizeof q->token);
  return redirect(c, "/", cookie);
}

/* A POST from a page of another origin (login CSRF: logging a victim into
 * the attacker's session; logout) is refused.  Browsers say where a
 * request comes from in Sec-Fetch-Site, or at least in Origin; a client
 * with neither (curl, a script) is not a browser page. */
static bool same_origin(struct MHD_Connection *c) {
  const char *site =
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
  if (site) return !strcmp(site, "same-origin") || !strcmp(site, "none");
  const char *o = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
  if (!o) return true;
  if (!h) return false;
  const char *p = strstr(o, "://");
  return p && !strcmp(p + 3, h);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
                              const char *url, const char *method,
                              const char *version, const char *upload,
                              size_t *upload_size, void **con_cls) {
  dash *d = cls;
  bool post = !strcmp(method, "POST");
  if (!*con_cls) {
    req *q = calloc(1, sizeof *q);
    if (!q) return MHD_NO;
    *con_cls = q;
    if (post && !strcmp(url, "/login")) {
      q->pp = MHD_create_post_processor(c, 1024, on_form, q);
      if (!q->pp) q->bad_form = true;
    }
    return MHD_YES;
  }
  req *q = *con_cls;
  if (*upload_size) {
    q->form_bytes += *upload_size;
    if (q->form_bytes > MAX_FORM) q->bad_form = true;
    if (q->pp && !q->bad_form &&
        MHD_post_process(q->pp, upload, *upload_size) != MHD_YES)
      q->bad_form = true;
    *upload_size = 0;
    return MHD_YES;
  }
  if (strcmp(method, "GET") && strcmp(method, "HEAD") && !post)
    return send_static(c, 405, "text/plain; charset=utf-8",
                       "method not allowed\n");
  if (MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token") ||
      MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "access_token"))
    return send_static(c, 400, "text/plain; charset=utf-8",
                       "a credential never goes in a URL: use the login "
                       "form or an Authorization: Bearer header\n");
  if (post && !same_origin(c))
    return send_static(c, 403, "text/plain; charset=utf-8",
                       "a form of another site may not post here\n");
  if (post) {
    if (!strcmp(url, "/login")) {
      if (!q->pp && !q->bad_form) q->bad_form = true;
      return do_login(d, c, q);
    }
    if (!strcmp(url, "/logout")) {
      const char *ck = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, COOKIE);
      if (ck) kf_dash__session_drop(d->sessions, ck);
      return redirect(c, "/login",
                      COOKIE "=; Path=/; HttpOnly; SameSite=Strict; "
                             "Max-Age=0");
    }
    return send_static(c, 405, "text/plain; charset=utf-8",
                       "method not allowed\n");
  }
  if (!strcmp(url, "/login"))
    return login_page(c, 200, NULL);
  if (!strcmp(url, "/static/style.css"))
    return send_static(c, 200, "text/css; charset=utf-8", kf_dash__style_css);
  char tok[KF_DASH_TOKEN_MAX + 1], sid[KF_DASH_SID_LEN + 1];
  bool authed = credential(d, c, tok, sizeof tok, sid, sizeof sid);
  if (!strcmp(url, "/") || !strcmp(url, "/index.html")) {
    if (!authed) return redirect(c, "/login", NULL);
    return send_static(c, 200, "text/html; charset=utf-8", kf_dash__index_html);
  }
  if (!strcmp(url, "/static/app.js")) {
    if (!authed) return json_error(c, 401, "log in first");
    return send_static(c, 200, "text/javascript; charset=utf-8",
                       kf_dash__app_js);
  }
  if (!strncmp(url, "/api/", 5)) {
    if (!authed) return json_error(c, 401, "log in first");
    char *body = NULL;
    bool refused = false;
    int status = kf_dash__api(d->cli, tok, url + 5, &body, &refused);
    explicit_bzero(tok, sizeof tok);
    /* a revoked token's session is gone for good */
    if (refused && sid[0]) kf_dash__session_drop(d->sessions, sid);
    if (!body) return json_error(c, 500, "out of memory");
    return send_resp(c, (unsigned)status, "application/json", body,
                     strlen(body), MHD_RESPMEM_MUST_FREE, NULL, NULL);
  }
  return send_static(c, 404, "text/plain; charset=utf-8", "not found\n");
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode why) {
  req *q = *con_cls;
  if (!q) return;
  if (q->pp) MHD_destroy_post_processor(q->pp);
  explicit_bzero(q, sizeof *q);
  free(q);
  *con_cls = NULL;
}

/* libmicrohttpd's own messages, into our log (hidden at kf's default
 * level): the failure that matters is reported by kf_dash_run itself. */
static void mhd_log(void *cls, const char *fmt, va_list ap) {
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  size_t n = strlen(msg);
  while (n && msg[n - 1] == '\n') msg[--n] = '\0';
  kf_log(KF_LOG_INFO, "dashboard: libmicrohttpd: %s", msg);
}

/* "HOST:PORT" or "[V6]:PORT" into a socket address. */
static int parse_listen(const char *s, struct sockaddr_storage *ss,
                        bool *v6, char *err, size_t errlen) {
  char host[128];
  const char *colon = strrchr(s, ':');
  if (!colon || colon == s || (size_t)(colon - s) >= sizeof host)
    return kf_seterr(KF_EINVAL, err, errlen,
                     "--listen '%s': expected HOST:PORT", s);
  memcpy(host, s, (size_t)(colon - s));
  host[colon - s] = '\0';
  uint64_t port;
  if (kf_parse_u64(colon + 1, &port) || port > 65535)
    return kf_seterr(KF_EINVAL, err, errlen,
                     "--listen '%s': port must be 0..65535", s);
  memset(ss, 0, sizeof *ss);
  size_t hl = strlen(host);
  if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
    host[hl - 1] = '\0';
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons((uint16_t)port);
    if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
      return kf_seterr(KF_EINVAL, err, errlen,
                       "--listen '%s': not an IPv6 address", s);
    *v6 = true;
    return 0;
  }
  struct sockaddr_in *a = (struct sockaddr_in *)ss;
  a->sin_family = AF_INET;
  a->sin_port = htons((uint16_t)port);
  if (!strcmp(host, "localhost")) snprintf(host, sizeof host, "127.0.0.1");
  if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
    return kf_seterr(KF_EINVAL, err, errlen,
                     "--listen '%s': not an IPv4 address (or [IPv6])", s);
  *v6 = false;
  return 0;
}

int kf_dash_run(const kf_dash_opts *o, char *err, size_t errlen) {
  struct sockaddr_storage ss;
  bool v6 = false;
  int rc = parse_listen(o->listen, &ss, &v6, err, errlen);
  if (rc) return rc;
  char *cert = NULL, *key = NULL;
  if ((o->https_cert != NULL) != (o->https_key != NULL))
    return kf_seterr(KF_EINVAL, err, errlen,
                     "--https-cert and --https-key go together");
  if (o->https_cert) {
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
      return kf_seterr(KF_EINVAL, err, errlen,
                       "this libmicrohttpd was built without TLS");
    char e2[256];
    if (kf_read_file(o->https_cert, 1u << 20, &cert, NULL, e2, sizeof e2) ||
        kf_read_file(o->https_key, 1u << 20, &key, NULL, e2, sizeof e2)) {
      free(cert);
      free(key);
      return kf_seterr(KF_EIO, err, errlen, "%s", e2);
    }
  }
  dash d = {.secure = o->https_cert != NULL};
  d.sessions = kf_dash__sessions_new(SESSIONS, SESSION_IDLE_MS);
  if (!d.sessions) {
    free(cert);
    free(key);
    return kf_seterr(KF_ENOMEM, err, errlen, "out of memory");
  }
  /* The channel's own token is never sent: every call passes the caller's
   * (kf_rpc_client_call_raw_sync's token argument). */
  rc = kf_rpc_client_open_tls(NULL, o->coordinator, "unused", &o->tls,
                              64u << 20, &d.cli, err, errlen);
  if (rc) {
    kf_dash__sessions_free(d.sessions);
    free(cert);
    free(key);
    return rc;
  }
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION |
                   MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
  if (v6) flags |= MHD_USE_IPv6;
  if (cert) flags |= MHD_USE_TLS;
  struct MHD_OptionItem tls_opts[] = {
      {MHD_OPTION_HTTPS_MEM_CERT, 0, cert},
      {MHD_OPTION_HTTPS_MEM_KEY, 0, key},
      {MHD_OPTION_END, 0, NULL},
  };
  errno = 0;
  struct MHD_Daemon *md = MHD_start_daemon(
      flags, 0, NULL, NULL, handle, &d,
      MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_SOCK_ADDR,
      (struct sockaddr *)&ss, MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)32,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
      MHD_OPTION_ARRAY, cert ? tls_opts : tls_opts + 2, MHD_OPTION_END);
  if (!md) {
    int e = errno;
    rc = kf_seterr(KF_EIO, err, errlen, "cannot serve HTTP on %s: %s",
                   o->listen, e ? strerror(e) : "libmicrohttpd refused (--log-level "
                   "info shows its reason)");
    goto out;
  }
  const union MHD_DaemonInfo *di =
      MHD_get_daemon_info(md, MHD_DAEMON_INFO_BIND_PORT);
  unsigned port = di ? di->port : 0;
  if (o->port_file) {
    char tmp[1100], txt[16];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->port_file);
    snprintf(txt, sizeof txt, "%u\n", port);
    FILE *f = fopen(tmp, "w");
    if (!f || fputs(txt, f) < 0 || fclose(f) != 0 ||
        rename(tmp, o->port_file) != 0) {
      rc = kf_seterr(KF_EIO, err, errlen, "cannot write %s", o->port_file);
      MHD_stop_daemon(md);
      goto out;
    }
  }
  char host[128];
  snprintf(host, sizeof host, "%.*s", (int)(strrchr(o->listen, ':') - o->listen),
           o->listen);
  bool loopback =
      v6 ? IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr)
         : (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
  if (!loopback && !cert)
    fprintf(stderr, "kf dashboard: serving %s without HTTPS: tokens typed "
                    "into the login form cross the network in the clear "
                    "(--https-cert/--https-key)\n", o->listen);
  printf("kf dashboard: %s://%s:%u/ (coordinator %s)\n",
         cert ? "https" : "http", host, port, o->coordinator);
  fflush(stdout);
  while (!*o->stop) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  MHD_stop_daemon(md);
out:
  kf_rpc_client_close(d.cli);
  kf_dash__sessions_free(d.sessions);
  if (key) explicit_bzero(key, strlen(key));
  free(cert);
  free(key);
  return rc;
}
