/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/kf_mcp.c -- JSON-RPC 2.0 over MCP's stdio transport: line reading
 * with a cap, message classification, replies, and the tool-argument
 * schema checker (see kf_mcp.h for what each promises).
 *
 * The reader works on the raw fd with poll(2) rather than stdio so the
 * server can wait for input and for the coordinator at the same time
 * (wait_evaluation answers pings and cancellations while it waits): a
 * FILE's hidden buffer would hold lines poll cannot see.
 */
#include "kf_mcp.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "util.h"

const char *const kf_mcp_versions[] = {"2025-11-25", "2025-06-18",
                                       "2025-03-26", "2024-11-05", NULL};

const char *kf_mcp_negotiate(const char *requested) {
  for (int i = 0; requested && kf_mcp_versions[i]; i++)
    if (!strcmp(requested, kf_mcp_versions[i])) return kf_mcp_versions[i];
  return kf_mcp_versions[0];
}

bool kf_mcp_version_ge(const char *version, const char *than) {
  /* ISO dates compare as strings. */
  return version && than && strcmp(version, than) >= 0;
}

/* ------------------------------------------------------------ reading -- */

int kf_mcp_reader_init(kf_mcp_reader *r, int fd, size_t max_line) {
  memset(r, 0, sizeof *r);
  r->fd = fd;
  r->max_line = max_line;
  r->cap = 65536;
  r->buf = malloc(r->cap);
  return r->buf ? 0 : KF_ENOMEM;
}

void kf_mcp_reader_free(kf_mcp_reader *r) {
  free(r->buf);
  memset(r, 0, sizeof *r);
}

/* Drops the bytes before r->start (the lines already returned). */
static void compact(kf_mcp_reader *r) {
  if (r->start == 0) return;
  memmove(r->buf, r->buf + r->start, r->len - r->start);
  r->len -= r->start;
  r->start = 0;
}

/* A complete line in buf from r->start: returns it (1), or reports and
 * skips an over-long one (KF_ETOOBIG), or 0 when none is complete. */
static int take_line(kf_mcp_reader *r, char **line, size_t *len) {
  for (;;) {
    char *s = r->buf + r->start;
    size_t avail = r->len - r->start;
    char *nl = memchr(s, '\n', avail);
    if (r->skipping) {
      if (!nl) {
        r->start = r->len; /* drop it all, keep skipping */
        return 0;
      }
      r->start += (size_t)(nl - s) + 1;
      r->skipping = false;
      continue;
    }
    if (!nl) {
      if (avail > r->max_line) {
        r->start = r->len;
        r->skipping = true;
        return KF_ETOOBIG;
      }
      return 0;
    }
    size_t n = (size_t)(nl - s);
    r->start += n + 1;
    if (n > r->max_line) return KF_ETOOBIG;
    if (n && s[n - 1] == '\r') n--;
    s[n] = '\0';
    *line = s;
    *len = n;
    return 1;
  }
}

int kf_mcp_read_line(kf_mcp_reader *r, int timeout_ms, char **line,
                     size_t *len) {
  uint64_t deadline = timeout_ms < 0 ? 0 : kf_now_ms() + (uint64_t)timeout_ms;
  for (;;) {
    int t = take_line(r, line, len);
    if (t) return t;
    if (r->eof) {
      /* A last message without its newline still counts. */
      if (r->len > r->start && !r->skipping) {
        if (r->len == r->cap) compact(r);
        if (r->len == r->cap) { /* no room for the NUL: drop it, once */
          r->start = r->len;
          r->skipping = true;
          return KF_ETOOBIG;
        }
        r->buf[r->len] = '\0';
        *line = r->buf + r->start;
        *len = r->len - r->start;
        r->start = r->len;
        return 1;
      }
      return -1;
    }
    compact(r);
    if (r->len == r->cap) {
      size_t cap = r->cap * 2;
      if (cap > r->max_line + 2) cap = r->max_line + 2;
      if (cap <= r->cap) {
        /* Cannot happen: take_line skips a line before it fills max. */
        r->skipping = true;
        r->len = 0;
        return KF_ETOOBIG;
      }
      char *nb = realloc(r->buf, cap);
      if (!nb) return KF_ENOMEM;
      r->buf = nb;
      r->cap = cap;
    }
    int wait = -1;
    if (timeout_ms >= 0) {
      uint64_t now = kf_now_ms();
      if (now >= deadline) return 0;
      wait = (int)(deadline - now);
    }
    struct pollfd p = {.fd = r->fd, .events = POLLIN};
    int pr = poll(&p, 1, wait);
    if (pr < 0) {
      if (errno == EINTR) continue;
      return KF_EIO;
    }
    if (pr == 0) return 0;
    ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return KF_EIO;
    }
    if (n == 0) r->eof = true;
    r->len += (size_t)n;
  }
}

/* ------------------------------------------------------------ messages -- */

void kf_mcp_msg_free(kf_mcp_msg *m) {
  cJSON_Delete(m->root);
  memset(m, 0, sizeof *m);
}

/* JSON-RPC ids are strings or numbers; MCP forbids null and we take only
 * integers, so an id always prints back exactly as it came. */
static bool id_ok(const cJSON *id) {
  if (cJSON_IsString(id)) return true;
  if (!cJSON_IsNumber(id)) return false;
  double v = id->valuedouble;
  return isfinite(v) && v == floor(v) && fabs(v) <= 9007199254740991.0;
}

int kf_mcp_parse(const char *line, size_t len, kf_mcp_msg *m, char *err,
                 size_t errlen) {
  memset(m, 0, sizeof *m);
  const char *end = NULL;
  m->root = cJSON_ParseWithLengthOpts(line, len, &end, false);
  if (!m->root) {
    size_t at = end && end >= line ? (size_t)(end - line) : 0;
    kf_seterr(0, err, errlen, "not valid JSON (at byte %zu)", at);
    return KF_MCP_PARSE_ERROR;
  }
  /* Trailing bytes other than whitespace: two messages on one line, or
   * garbage after one. */
  for (const char *p = end; p && p < line + len; p++)
    if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
      kf_seterr(0, err, errlen, "not valid JSON: bytes after the message "
                "(at byte %zu); send one message per line",
                (size_t)(p - line));
      cJSON_Delete(m->root);
      m->root = NULL;
      return KF_MCP_PARSE_ERROR;
    }
  if (cJSON_IsArray(m->root)) {
    kf_seterr(0, err, errlen, "JSON-RPC batches are not supported (MCP "
              "2025-06-18 removed them); send one message per line");
    return KF_MCP_INVALID_REQUEST;
  }
  if (!cJSON_IsObject(m->root)) {
    kf_seterr(0, err, errlen, "a JSON-RPC message is an object");
    return KF_MCP_INVALID_REQUEST;
  }
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(m->root, "id");
  if (id && id_ok(id)) m->id = id;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->root, "jsonrpc");
  if (!cJSON_IsString(v) || strcmp(v->valuestring, "2.0")) {
    kf_seterr(0, err, errlen, "\"jsonrpc\" must be \"2.0\"");
    return KF_MCP_INVALID_REQUEST;
  }
  if (id && !m->id) {
    kf_seterr(0, err, errlen, "\"id\" must be a string or an integer");
    return KF_MCP_INVALID_REQUEST;
  }
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(m->root, "method");
  if (!method) {
    if (m->id && (cJSON_HasObjectItem(m->root, "result") ||
                  cJSON_HasObjectItem(m->root, "error"))) {
      m->kind = KF_MCP_RESPONSE;
      return 0;
    }
    kf_seterr(0, err, errlen, "\"method\" is missing");
    return KF_MCP_INVALID_REQUEST;
  }
  if (!cJSON_IsString(method) || !*method->valuestring) {
    kf_seterr(0, err, errlen, "\"method\" must be a non-empty string");
    return KF_MCP_INVALID_REQUEST;
  }
  m->method = method->valuestring;
  m->kind = m->id ? KF_MCP_REQUEST : KF_MCP_NOTIFICATION;
  /* cJSON keeps strings NUL-terminated: a "\u0000" inside one would cut
   * it short without a word (a kernel source, a name).  Refused instead;
   * outside strings JSON has no backslash, so every escape counts. */
  for (size_t i = 0; i + 1 < len; i++) {
    if (line[i] != '\\') continue;
    if (line[i + 1] == 'u' && i + 5 < len &&
        !strncmp(line + i + 2, "0000", 4)) {
      kf_seterr(0, err, errlen, "a string holds U+0000 (\\u0000 at byte "
                "%zu), which this server does not accept", i);
      return KF_MCP_INVALID_PARAMS;
    }
    i++; /* the escaped character */
  }
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(m->root, "params");
  if (params && !cJSON_IsObject(params)) {
    kf_seterr(0, err, errlen, "\"params\" must be an object (MCP uses"
              " named parameters only)");
    return KF_MCP_INVALID_PARAMS;
  }
  m->params = params;
  return 0;
}

static cJSON *envelope(const cJSON *id) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "jsonrpc", "2.0");
  cJSON *idc = id ? cJSON_Duplicate(id, true) : cJSON_CreateNull();
  if (!idc) {
    cJSON_Delete(j);
    return NULL;
  }
  cJSON_AddItemToObject(j, "id", idc);
  return j;
}

cJSON *kf_mcp_result(const cJSON *id, cJSON *result) {
  cJSON *j = envelope(id);
  if (!j || !result) {
    cJSON_Delete(j);
    cJSON_Delete(result);
    return NULL;
  }
  cJSON_AddItemToObject(j, "result", result);
  return j;
}

cJSON *kf_mcp_error(const cJSON *id, int code, const char *message) {
  cJSON *j = envelope(id);
  if (!j) return NULL;
  cJSON *e = cJSON_AddObjectToObject(j, "error");
  if (!e) {
    cJSON_Delete(j);
    return NULL;
  }
  cJSON_AddNumberToObject(e, "code", code);
  cJSON_AddStringToObject(e, "message", message ? message : "");
  return j;
}

cJSON *kf_mcp_notification(const char *method, cJSON *params) {
  cJSON *j = cJSON_CreateObject();
  if (!j) {
    cJSON_Delete(params);
    return NULL;
  }
  cJSON_AddStringToObject(j, "jsonrpc", "2.0");
  cJSON_AddStringToObject(j, "method", method);
  if (params) cJSON_AddItemToObject(j, "params", params);
  return j;
}

int kf_mcp_send(int fd, cJSON *msg) {
  /* cJSON escapes control characters inside strings, so the printed
   * message holds no newline of its own. */
  char *s = msg ? cJSON_PrintUnformatted(msg) : NULL;
  cJSON_Delete(msg);
  if (!s) return KF_ENOMEM;
  size_t n = strlen(s);
  s[n] = '\n'; /* replaces the NUL; we write n + 1 bytes and free */
  size_t off = 0;
  int rc = 0;
  while (off < n + 1) {
    ssize_t w = write(fd, s + off, n + 1 - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      rc = KF_EIO;
      break;
    }
    off += (size_t)w;
  }
  cJSON_free(s);
  return rc;
}

/* ------------------------------------------------------------ schemas -- */

static const char *type_of(const cJSON *v) {
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  if (cJSON_IsArray(v)) return "an array";
  if (cJSON_IsObject(v)) return "an object";
  return "something else";
}

static bool check_at(const cJSON *schema, const cJSON *v, const char *path,
                     char *err, size_t errlen);

static bool check_object(const cJSON *schema, const cJSON *v,
                         const char *path, char *err, size_t errlen) {
  const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
  const cJSON *extra =
      cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
  const cJSON *req = cJSON_GetObjectItemCaseSensitive(schema, "required");
  const cJSON *r;
  cJSON_ArrayForEach(r, req) {
    if (cJSON_IsString(r) &&
        !cJSON_GetObjectItemCaseSensitive(v, r->valuestring)) {
      kf_seterr(0, err, errlen, "%s: missing required field \"%s\"", path,
                r->valuestring);
      return false;
    }
  }
  const cJSON *maxp = cJSON_GetObjectItemCaseSensitive(schema,
                                                       "maxProperties");
  if (cJSON_IsNumber(maxp) && cJSON_GetArraySize(v) > maxp->valueint) {
    kf_seterr(0, err, errlen, "%s: at most %d fields", path, maxp->valueint);
    return false;
  }
  const cJSON *f;
  cJSON_ArrayForEach(f, v) {
    char sub[256];
    snprintf(sub, sizeof sub, "%s.%s", path, f->string ? f->string : "?");
    const cJSON *ps = props ? cJSON_GetObjectItemCaseSensitive(
                                  props, f->string)
                            : NULL;
    if (!ps && cJSON_IsObject(extra)) ps = extra;
    if (!ps) {
      if (cJSON_IsFalse(extra)) {
        kf_seterr(0, err, errlen, "%s: unknown field (this tool takes: %s)",
                  sub, "see its inputSchema");
        /* Name the known fields: an agent fixes a typo faster. */
        if (props) {
          char known[200] = "";
          size_t k = 0;
          const cJSON *p;
          cJSON_ArrayForEach(p, props) {
            int w = snprintf(known + k, sizeof known - k, "%s%s",
                             k ? ", " : "", p->string);
            if (w < 0 || (size_t)w >= sizeof known - k) break;
            k += (size_t)w;
          }
          kf_seterr(0, err, errlen, "%s: unknown field (this tool takes: %s)",
                    sub, k ? known : "no arguments");
        }
        return false;
      }
      continue;
    }
    if (!check_at(ps, f, sub, err, errlen)) return false;
  }
  return true;
}

static bool check_at(const cJSON *schema, const cJSON *v, const char *path,
                     char *err, size_t errlen) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(schema, "type");
  const char *type = cJSON_IsString(t) ? t->valuestring : NULL;
  /* "type": ["string", "integer"] -- any of them. */
  if (cJSON_IsArray(t)) {
    const cJSON *alt;
    cJSON_ArrayForEach(alt, t) {
      if (!cJSON_IsString(alt)) continue;
      cJSON *one = cJSON_Duplicate(schema, true);
      if (!one) return false;
      cJSON_ReplaceItemInObjectCaseSensitive(
          one, "type", cJSON_CreateString(alt->valuestring));
      char e2[8];
      bool ok = check_at(one, v, path, e2, sizeof e2);
      cJSON_Delete(one);
      if (ok) return true;
    }
    char want[96] = "";
    size_t k = 0;
    cJSON_ArrayForEach(alt, t) {
      int w = snprintf(want + k, sizeof want - k, "%s%s", k ? " or " : "",
                       cJSON_IsString(alt) ? alt->valuestring : "?");
      if (w < 0 || (size_t)w >= sizeof want - k) break;
      k += (size_t)w;
    }
    kf_seterr(0, err, errlen, "%s: expected %s, got %s", path, want,
              type_of(v));
    return false;
  }
  if (!type) return true;
  if (!strcmp(type, "object")) {
    if (!cJSON_IsObject(v)) {
      kf_seterr(0, err, errlen, "%s: expected an object, got %s", path,
                type_of(v));
      return false;
    }
    return check_object(schema, v, path, err, errlen);
  }
  if (!strcmp(type, "string")) {
    if (!cJSON_IsString(v)) {
      kf_seterr(0, err, errlen, "%s: expected a string, got %s", path,
                type_of(v));
      return false;
    }
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(schema, "maxLength");
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(schema, "minLength");
    size_t n = strlen(v->valuestring); /* bytes: a bound, not a count */
    if (cJSON_IsNumber(ml) && n > (size_t)ml->valuedouble) {
      kf_seterr(0, err, errlen, "%s: longer than %.0f bytes (%zu)", path,
                ml->valuedouble, n);
      return false;
    }
    if (cJSON_IsNumber(mn) && n < (size_t)mn->valuedouble) {
      kf_seterr(0, err, errlen, "%s: shorter than %.0f characters", path,
                mn->valuedouble);
      return false;
    }
    return true;
  }
  if (!strcmp(type, "boolean")) {
    if (!cJSON_IsBool(v)) {
      kf_seterr(0, err, errlen, "%s: expected a boolean, got %s", path,
                type_of(v));
      return false;
    }
    return true;
  }
  if (!strcmp(type, "integer") || !strcmp(type, "number")) {
    bool integer = !strcmp(type, "integer");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        (integer && v->valuedouble != floor(v->valuedouble))) {
      kf_seterr(0, err, errlen, "%s: expected %s, got %s", path,
                integer ? "an integer" : "a number",
                cJSON_IsNumber(v) ? "a fraction" : type_of(v));
      return false;
    }
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(schema, "minimum");
    const cJSON *hi = cJSON_GetObjectItemCaseSensitive(schema, "maximum");
    const cJSON *xlo =
        cJSON_GetObjectItemCaseSensitive(schema, "exclusiveMinimum");
    if ((cJSON_IsNumber(lo) && v->valuedouble < lo->valuedouble) ||
        (cJSON_IsNumber(hi) && v->valuedouble > hi->valuedouble) ||
        (cJSON_IsNumber(xlo) && v->valuedouble <= xlo->valuedouble)) {
      char range[96] = "";
      size_t k = 0;
      if (cJSON_IsNumber(lo))
        k += (size_t)snprintf(range, sizeof range, ">= %.17g", lo->valuedouble);
      else if (cJSON_IsNumber(xlo))
        k += (size_t)snprintf(range, sizeof range, "> %.17g", xlo->valuedouble);
      if (cJSON_IsNumber(hi) && k < sizeof range)
        snprintf(range + k, sizeof range - k, "%s<= %.17g", k ? " and " : "",
                 hi->valuedouble);
      kf_seterr(0, err, errlen, "%s: %.17g is out of range (%s)", path,
                v->valuedouble, range);
      return false;
    }
    return true;
  }
  return true;
}

bool kf_mcp_schema_check(const cJSON *schema, const cJSON *value, char *err,
                         size_t errlen) {
  return check_at(schema, value, "arguments", err, errlen);
}
