/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proposer/llm.c -- the `llm` proposer (llm.h): prompts filled from the
 * context, one chat-completions request per task over libcurl, retries
 * with backoff, the reply parsed (reply.c) and every attempt accounted.
 *
 * Each propose call uses its own curl easy handle, so calls may run on
 * several threads at once.  The key lives only in this struct and in the
 * Authorization header; error texts never quote request headers.
 */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "llm.h"
#include "util.h"

#define MAX_REPLY (8u << 20) /* bytes of one HTTP response body */

/* Embedded at build time (CMakeLists.txt: cmake/embed_file.cmake). */
extern const char kf_llm__prompt_system[];
extern const char kf_llm__prompt_task[];
extern const char kf_llm__prompt_improve[];
extern const char kf_llm__prompt_combine[];
extern const char kf_llm__prompt_prescribe[];
extern const char kf_llm__prompt_port[];

typedef struct {
  kf_proposer base;
  char *url, *model, *key;
  kf_llm_opts o;
} llm;

/* ------------------------------------------------------------ prompts -- */

void kf_llm_prompt_version(const char *name, const char *text, char *out,
                           size_t len) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  char hex[13] = "000000000000";
  if (EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL) == 1 &&
      mdlen >= 6)
    for (int i = 0; i < 6; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
  snprintf(out, len, "%s@%s", name, hex);
}

/* A growing string; allocation failure is sticky. */
typedef struct {
  char *p;
  size_t len, cap;
  bool oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->len + n + 1) nc *= 2;
    char *q = realloc(b->p, nc);
    if (!q) {
      b->oom = true;
      return;
    }
    b->p = q;
    b->cap = nc;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_printf(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) sb_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* snprintf for texts that may be cut (labels, version lists): what does
 * not fit is dropped, by design. */
static void cutf(char *out, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cutf(char *out, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, len, fmt, ap);
  va_end(ap);
}

typedef struct {
  const char *key, *value;
} var;

/* tmpl with every {{KEY}} of vars replaced; unknown keys stay. */
static void render(sbuf *b, const char *tmpl, const var *vars, size_t n) {
  const char *p = tmpl;
  while (*p) {
    const char *o = strstr(p, "{{");
    if (!o) {
      sb_str(b, p);
      return;
    }
    sb_put(b, p, (size_t)(o - p));
    const char *c = strstr(o + 2, "}}");
    bool done = false;
    for (size_t i = 0; c && i < n && !done; i++)
      if ((size_t)(c - o - 2) == strlen(vars[i].key) &&
          strncmp(o + 2, vars[i].key, (size_t)(c - o - 2)) == 0) {
        sb_str(b, vars[i].value ? vars[i].value : "");
        p = c + 2;
        done = true;
      }
    if (!done) {
      sb_put(b, o, 2);
      p = o + 2;
    }
  }
}

static void kernel_label(const kf_proposer_kernel *k, char *out, size_t len) {
  cutf(out, len, "candidate %" PRId64 ", template %s%s%s, by %s, on %s:"
           " %.0f ns, %.2fx the reference, %.0f%% of the roofline floor",
           k->candidate_id, k->template_name[0] ? k->template_name : "-",
           k->knobs[0] ? " " : "", k->knobs, k->proposer, k->device,
           k->time_ns, k->speedup, 100 * k->roofline_fraction);
}

/* A kernel's diagnosis and profile, one line each ("Diagnosis: ...", then
 * kf_proposer_kernel.profile when there is one: "profile (ncu, ...): ..."
 * or "no profile (why)"); for the reference, a line saying there is
 * none. */
static void kernel_diag(const kf_proposer_kernel *k, const char *indent,
                        char *out, size_t len) {
  if (!k) {
    cutf(out, len, "%sDiagnosis: none (the reference has not been"
         " diagnosed).", indent);
    return;
  }
  cutf(out, len, "%sDiagnosis: %s%s%s%s%s", indent,
       k->diagnosis ? k->diagnosis : "none stored for this evaluation",
       k->diagnosis ? "." : "", k->profile[0] ? "\n" : "",
       k->profile[0] ? indent : "", k->profile);
}

/* The facts of class `cls` (kf_proposer_kernel.device; NULL: the first
 * class), or the class itself when the context has none. */
static const char *device_of(const kf_proposer_context *c, const char *cls) {
  for (size_t i = 0; i < c->n_devices; i++)
    if (!cls || strcmp(c->device_class[i], cls) == 0) return c->devices[i];
  return cls ? cls : "the campaign's devices";
}

/* The user message of a task, and the prompt_version of the files. */
static char *user_prompt(const llm *l, const kf_proposer_context *c,
                         const kf_proposer_task *t, char *ver, size_t vlen) {
  sbuf kernels = {0}, fails = {0}, devs = {0}, task = {0}, out = {0};
  char la[600] = "", lb[600] = "";
  for (size_t i = 0; i < c->n_best; i++) {
    char lab[600], dg[1200];
    kernel_label(&c->best[i], lab, sizeof lab);
    kernel_diag(&c->best[i], "  ", dg, sizeof dg);
    sb_str(&kernels, "- ");
    sb_str(&kernels, lab);
    sb_str(&kernels, "\n");
    sb_str(&kernels, dg);
    sb_str(&kernels, "\n");
  }
  if (!c->n_best) sb_str(&kernels, "None measured yet: start from the"
                                   " reference.\n");
  for (size_t i = 0; i < c->n_failures; i++) {
    const kf_proposer_failure *f = &c->failures[i];
    sb_printf(&fails, "- candidate %" PRId64 " (%s, by %s): %s at %s: ",
              f->candidate_id, f->template_name[0] ? f->template_name : "-",
              f->proposer, f->outcome, f->stage[0] ? f->stage : "-");
    sb_put(&fails, f->reason, strnlen(f->reason, 400));
    sb_str(&fails, "\n");
  }
  if (!c->n_failures) sb_str(&fails, "None.\n");
  for (size_t i = 0; i < c->n_devices; i++)
    sb_printf(&devs, "- %s\n", c->devices[i]);
  if (!c->n_devices)
    sb_str(&devs, "No worker that can run this campaign has registered"
                  " yet.\n");
  sb_printf(&devs, "(%u worker%s of the cluster alive.)\n", c->workers_alive,
            c->workers_alive == 1 ? "" : "s");
  const char *tmpl, *tname;
  switch (t->op) {
  case KF_PROPOSE_COMBINE: tmpl = kf_llm__prompt_combine; tname = "combine.md"; break;
  case KF_PROPOSE_PRESCRIBE: tmpl = kf_llm__prompt_prescribe; tname = "prescribe.md"; break;
  case KF_PROPOSE_PORT: tmpl = kf_llm__prompt_port; tname = "port.md"; break;
  default: tmpl = kf_llm__prompt_improve; tname = "improve.md"; break;
  }
  char da[1200] = "", db[1200] = "";
  if (t->a) kernel_label(t->a, la, sizeof la);
  else snprintf(la, sizeof la, "the reference");
  if (t->b) kernel_label(t->b, lb, sizeof lb);
  kernel_diag(t->a, "", da, sizeof da);
  if (t->b) kernel_diag(t->b, "", db, sizeof db);
  const var tv[] = {
      {"A_LABEL", la},
      {"A_SOURCE", t->a ? t->a->source : c->reference},
      {"A_DIAGNOSIS", da},
      {"A_BOUND", t->a && t->a->bound ? t->a->bound : "undiagnosed"},
      {"B_LABEL", lb},
      {"B_SOURCE", t->b ? t->b->source : ""},
      {"B_DIAGNOSIS", db},
      {"PRESCRIPTION", t->prescription},
      {"TARGET", t->device},
      {"DEVICE", device_of(c, t->a ? t->a->device : NULL)},
      {"LANGUAGE", c->language},
  };
  render(&task, tmpl, tv, sizeof tv / sizeof tv[0]);
  const var v[] = {
      {"PROBLEM", c->problem},       {"LANGUAGE", c->language},
      {"SPEC", c->spec_json},        {"ABI", c->abi},
      {"REFERENCE", c->reference},   {"DEVICES", devs.p ? devs.p : ""},
      {"KERNELS", kernels.p ? kernels.p : ""},
      {"FAILURES", fails.p ? fails.p : ""},
      {"TASK", task.p ? task.p : ""},
  };
  render(&out, kf_llm__prompt_task, v, sizeof v / sizeof v[0]);
  char v1[64], v2[64], v3[64];
  kf_llm_prompt_version("system.md", kf_llm__prompt_system, v1, sizeof v1);
  kf_llm_prompt_version("task.md", kf_llm__prompt_task, v2, sizeof v2);
  kf_llm_prompt_version(tname, tmpl, v3, sizeof v3);
  cutf(ver, vlen, "%s+%s+%s", v1, v2, v3);
  bool oom = kernels.oom || fails.oom || devs.oom || task.oom || out.oom;
  free(kernels.p);
  free(fails.p);
  free(devs.p);
  free(task.p);
  if (oom) {
    free(out.p);
    return NULL;
  }
  (void)l;
  return out.p;
}

/* --------------------------------------------------------------- http -- */

typedef struct {
  sbuf body;
  bool too_big;
  long retry_after_s; /* from Retry-After; -1 none */
} reply;

static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
  reply *r = ud;
  size_t len = sz * n;
  if (r->body.len + len > MAX_REPLY) {
    r->too_big = true;
    return 0; /* curl stops with CURLE_WRITE_ERROR */
  }
  sb_put(&r->body, p, len);
  return r->body.oom ? 0 : len;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud) {
  reply *r = ud;
  size_t len = sz * n;
  if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
    char tmp[32];
    size_t m = len - 12 < sizeof tmp - 1 ? len - 12 : sizeof tmp - 1;
    memcpy(tmp, p + 12, m);
    tmp[m] = '\0';
    char *end;
    long v = strtol(tmp, &end, 10);
    if (end != tmp && v >= 0) r->retry_after_s = v;
  }
  return len;
}

/* Abandons a transfer once the caller cancels. */
static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c,
                       curl_off_t d) {
  const llm *l = ud;
  (void)a, (void)b, (void)c, (void)d;
  return l->o.cancel && *l->o.cancel ? 1 : 0;
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

/* Printable excerpt of an error body, for a reason. */
static void excerpt(const char *s, size_t n, char *out, size_t len) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 1 < len && o < 200; i++) {
    unsigned char c = (unsigned char)s[i];
    out[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : ' ';
  }
  out[o] = '\0';
}

/* The request body: model, messages, max_tokens, temperature. */
static char *request_json(const llm *l, const char *user) {
  cJSON *j = cJSON_CreateObject();
  cJSON *msgs = cJSON_AddArrayToObject(j, "messages");
  cJSON *sys = cJSON_CreateObject(), *usr = cJSON_CreateObject();
  char *out = NULL;
  if (!j || !msgs || !sys || !usr) {
    cJSON_Delete(sys);
    cJSON_Delete(usr);
    goto done;
  }
  cJSON_AddItemToArray(msgs, sys);
  cJSON_AddItemToArray(msgs, usr);
  if (!cJSON_AddStringToObject(j, "model", l->model) ||
      !cJSON_AddStringToObject(sys, "role", "system") ||
      !cJSON_AddStringToObject(sys, "content", kf_llm__prompt_system) ||
      !cJSON_AddStringToObject(usr, "role", "user") ||
      !cJSON_AddStringToObject(usr, "content", user) ||
      !cJSON_AddNumberToObject(j, "max_tokens",
                               l->o.max_tokens ? l->o.max_tokens : 4096))
    goto done;
  if (l->o.temperature >= 0 &&
      !cJSON_AddNumberToObject(j, "temperature", l->o.temperature))
    goto done;
  out = cJSON_PrintUnformatted(j);
done:
  cJSON_Delete(j);
  return out;
}

/* Reads content and usage from a 2xx body.  0, or KF_EPROTO with why. */
static int parse_completion(const char *body, size_t len, char **content,
                            uint64_t *pt, uint64_t *ct, char *why,
                            size_t wlen) {
  *content = NULL;
  cJSON *j = cJSON_ParseWithLength(body, len);
  if (!j) {
    snprintf(why, wlen, "the response body is not JSON");
    return KF_EPROTO;
  }
  const cJSON *usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens");
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(usage,
                                                    "completion_tokens");
  if (cJSON_IsNumber(p) && p->valuedouble >= 0 && p->valuedouble < 1e15)
    *pt += (uint64_t)p->valuedouble;
  if (cJSON_IsNumber(c) && c->valuedouble >= 0 && c->valuedouble < 1e15)
    *ct += (uint64_t)c->valuedouble;
  const cJSON *ch = cJSON_GetArrayItem(
      cJSON_GetObjectItemCaseSensitive(j, "choices"), 0);
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(ch, "message");
  const cJSON *txt = cJSON_GetObjectItemCaseSensitive(msg, "content");
  int rc = 0;
  if (!cJSON_IsString(txt)) {
    snprintf(why, wlen, "the response has no choices[0].message.content");
    rc = KF_EPROTO;
  } else if (!(*content = strdup(txt->valuestring))) {
    snprintf(why, wlen, "out of memory");
    rc = KF_ENOMEM;
  }
  cJSON_Delete(j);
  return rc;
}

/* ------------------------------------------------------------ propose -- */

static int llm_propose(kf_proposer *self, const kf_proposer_context *ctx,
                       const kf_proposer_task *task, kf_proposal *out,
                       kf_proposer_acct *a) {
  llm *l = (llm *)self;
  memset(out, 0, sizeof *out);
  memset(a, 0, sizeof *a);
  snprintf(a->model, sizeof a->model, "%s", l->model);
  char *user = user_prompt(l, ctx, task, a->prompt_version,
                           sizeof a->prompt_version);
  char *body = user ? request_json(l, user) : NULL;
  free(user);
  if (!body) {
    snprintf(a->outcome, sizeof a->outcome, "transport");
    snprintf(a->reason, sizeof a->reason, "out of memory");
    return KF_ENOMEM;
  }
  CURL *h = curl_easy_init();
  struct curl_slist *hdr = NULL;
  char auth[1100] = "";
  if (l->key) snprintf(auth, sizeof auth, "Authorization: Bearer %s", l->key);
  /* The operator travels as a header too: endpoints ignore it, and a
   * replay or logging proxy can answer or file by kind without parsing
   * the prompt (scripts/llm-replay-server). */
  char ophdr[64];
  snprintf(ophdr, sizeof ophdr, "X-KernelFleet-Operation: %s",
           kf_proposer_op_name(task->op));
  struct curl_slist *h0 = curl_slist_append(NULL, "Content-Type: application/json");
  struct curl_slist *h1 = h0 ? curl_slist_append(h0, ophdr) : NULL;
  if (!h1) curl_slist_free_all(h0);
  struct curl_slist *h2 = h1 && auth[0] ? curl_slist_append(h1, auth) : h1;
  hdr = h2;
  /* The header list holds its own copy of the key: wipe ours. */
  explicit_bzero(auth, sizeof auth);
  if (!h || !hdr) {
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    free(body);
    snprintf(a->outcome, sizeof a->outcome, "transport");
    snprintf(a->reason, sizeof a->reason, "cannot set up libcurl");
    return KF_ENOMEM;
  }
  uint64_t t0 = now_ms();
  int retries = l->o.retries < 0 ? 0 : l->o.retries;
  long backoff = l->o.backoff_ms > 0 ? l->o.backoff_ms : 500;
  long backoff_max = l->o.backoff_max_ms > 0 ? l->o.backoff_max_ms : 8000;
  int rc = KF_EUNAVAIL;
  char *content = NULL;
  for (int attempt = 0; attempt <= retries; attempt++) {
    reply r = {.retry_after_s = -1};
    char cerr[CURL_ERROR_SIZE] = "";
    a->attempts++;
    bool ok = curl_easy_setopt(h, CURLOPT_URL, l->url) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_POSTFIELDS, body) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_WRITEDATA, &r) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_HEADERDATA, &r) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_XFERINFODATA, l) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
                               (long)(l->o.timeout_ms > 0 ? l->o.timeout_ms
                                                          : 120000)) == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                               (long)(l->o.connect_timeout_ms > 0
                                          ? l->o.connect_timeout_ms
                                          : 10000)) == CURLE_OK &&
              /* http(s) only, and never follow a redirect elsewhere with
               * the key */
              curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK &&
              curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) == CURLE_OK;
    if (!ok) {
      snprintf(a->outcome, sizeof a->outcome, "transport");
      snprintf(a->reason, sizeof a->reason, "cannot set libcurl options");
      free(r.body.p);
      rc = KF_EINTERNAL;
      break;
    }
    CURLcode cc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    a->http_status = (uint32_t)(status > 0 && status < 1000 ? status : 0);
    bool retry = false;
    if (cc != CURLE_OK) {
      bool to = cc == CURLE_OPERATION_TIMEDOUT;
      if (cc == CURLE_ABORTED_BY_CALLBACK)
        snprintf(cerr, sizeof cerr, "cancelled");
      snprintf(a->outcome, sizeof a->outcome, "%s",
               to ? "timeout" : r.too_big ? "malformed" : "transport");
      snprintf(a->reason, sizeof a->reason, "attempt %d: %s", attempt + 1,
               r.too_big ? "the response is larger than 8 MiB"
               : cerr[0] ? cerr : curl_easy_strerror(cc));
      retry = !r.too_big;
      rc = to ? KF_ETIMEDOUT : KF_EUNAVAIL;
    } else if (status == 429 || status >= 500) {
      char ex[256];
      excerpt(r.body.p ? r.body.p : "", r.body.len, ex, sizeof ex);
      snprintf(a->outcome, sizeof a->outcome, "http_error");
      snprintf(a->reason, sizeof a->reason, "attempt %d: HTTP %ld: %s",
               attempt + 1, status, ex);
      retry = true;
      rc = KF_EUNAVAIL;
    } else if (status < 200 || status >= 300) {
      char ex[256];
      excerpt(r.body.p ? r.body.p : "", r.body.len, ex, sizeof ex);
      snprintf(a->outcome, sizeof a->outcome, "http_error");
      snprintf(a->reason, sizeof a->reason, "HTTP %ld: %s", status, ex);
      rc = KF_EPROTO;
    } else {
      char why[256] = "";
      rc = parse_completion(r.body.p ? r.body.p : "", r.body.len, &content,
                            &a->prompt_tokens, &a->completion_tokens, why,
                            sizeof why);
      if (rc) {
        snprintf(a->outcome, sizeof a->outcome, "malformed");
        snprintf(a->reason, sizeof a->reason, "%s", why);
      }
    }
    long wait = backoff;
    if (r.retry_after_s >= 0) wait = r.retry_after_s * 1000;
    if (wait > backoff_max) wait = backoff_max;
    free(r.body.p);
    if (!retry || attempt == retries || (l->o.cancel && *l->o.cancel)) break;
    for (long w = 0; w < wait && !(l->o.cancel && *l->o.cancel); w += 100)
      sleep_ms(wait - w < 100 ? wait - w : 100);
    backoff = backoff * 2 > backoff_max ? backoff_max : backoff * 2;
  }
  a->latency_ms = now_ms() - t0;
  a->cost = (double)a->prompt_tokens / 1000.0 * l->o.price_in_1k +
            (double)a->completion_tokens / 1000.0 * l->o.price_out_1k;
  curl_slist_free_all(hdr);
  curl_easy_cleanup(h);
  free(body);
  if (!content) return rc;
  char why[512];
  rc = kf_llm_reply_parse(content, out, why, sizeof why);
  free(content);
  if (rc) {
    snprintf(a->outcome, sizeof a->outcome, "malformed");
    snprintf(a->reason, sizeof a->reason, "%s", why);
    return rc;
  }
  snprintf(a->outcome, sizeof a->outcome, "ok");
  a->reason[0] = '\0';
  return 0;
}

static void llm_destroy(kf_proposer *self) {
  llm *l = (llm *)self;
  if (l->key) explicit_bzero(l->key, strlen(l->key));
  free(l->key);
  free(l->url);
  free(l->model);
  free(l);
}

static const kf_proposer_ops LLM_OPS = {llm_propose, llm_destroy};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

int kf_llm_new(const kf_llm_opts *o, kf_proposer **out, char *err,
               size_t errlen) {
  *out = NULL;
  if (!o->url || (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8))) {
    snprintf(err, errlen, "--llm-url must start with http:// or https://");
    return KF_EINVAL;
  }
  if (!o->model || !*o->model || strlen(o->model) > 58) {
    snprintf(err, errlen, "--llm-model must be 1..58 characters");
    return KF_EINVAL;
  }
  for (const char *p = o->model; *p; p++)
    if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) {
      snprintf(err, errlen, "--llm-model must be printable ASCII without"
               " spaces");
      return KF_EINVAL;
    }
  if (o->key && (strpbrk(o->key, "\r\n") || strlen(o->key) > 1000)) {
    snprintf(err, errlen, "the LLM key holds a line break or is longer than"
             " 1000 bytes");
    return KF_EINVAL;
  }
  if (!(o->price_in_1k >= 0) || !(o->price_out_1k >= 0) ||
      o->price_in_1k > 1e6 || o->price_out_1k > 1e6) {
    snprintf(err, errlen, "prices per 1k tokens must be numbers in [0, 1e6]");
    return KF_EINVAL;
  }
  pthread_once(&curl_once, curl_init);
  if (curl_init_rc != CURLE_OK) {
    snprintf(err, errlen, "curl_global_init failed: %s",
             curl_easy_strerror(curl_init_rc));
    return KF_EINTERNAL;
  }
  llm *l = calloc(1, sizeof *l);
  if (!l) goto oom;
  l->o = *o;
  size_t ul = strlen(o->url);
  while (ul > 0 && o->url[ul - 1] == '/') ul--;
  const char *suffix = "/chat/completions";
  bool full = ul >= strlen(suffix) &&
              strncmp(o->url + ul - strlen(suffix), suffix, strlen(suffix)) == 0;
  l->url = malloc(ul + strlen(suffix) + 1);
  l->model = strdup(o->model);
  l->key = o->key && *o->key ? strdup(o->key) : NULL;
  if (!l->url || !l->model || (o->key && *o->key && !l->key)) {
    llm_destroy(&l->base);
    goto oom;
  }
  memcpy(l->url, o->url, ul);
  l->url[ul] = '\0';
  if (!full) strcat(l->url, suffix);
  l->o.url = l->url;
  l->o.model = l->model;
  l->o.key = NULL; /* only l->key holds it */
  l->base.ops = &LLM_OPS;
  snprintf(l->base.label, sizeof l->base.label, "llm:%s", l->model);
  *out = &l->base;
  return 0;
oom:
  snprintf(err, errlen, "out of memory");
  return KF_ENOMEM;
}
