/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_mcp.c -- `kf mcp`: a Model Context Protocol server on stdio that
 * lets an agent (Claude, an IDE assistant, any MCP client) act as a
 * proposer of a running coordinator.
 *
 * The agent gets exactly the powers of `kf campaign` with the credential
 * it was started with, no more: every tool is a coordinator rpc with that
 * token (a worker token is refused by the coordinator, not here), and a
 * proposal is a ProposeCandidate like any other -- compiled, verified and
 * timed in the sandbox by the full pipeline before it counts.  The only
 * thing read locally is the problems directory (list_problems,
 * describe_problem, and create_campaign, which sends the problem the way
 * `kf campaign submit` does).
 *
 * stdout carries protocol messages and nothing else (kf_mcp_send); every
 * log line goes to stderr.  Requests are served one at a time; while
 * wait_evaluation blocks, the server still answers ping and honours
 * notifications/cancelled for it, and queues anything else for after.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_internal.h"
#include "err.h"
#include "kf_mcp.h"
#include "spec.h"
#include "text.h"
#include "util.h"

#ifndef KF_SOURCE_DIR
#define KF_SOURCE_DIR "."
#endif

extern const char kf_proposer__abi_h[]; /* embedded kf_candidate.h */

/* A source may be 1 MiB (the coordinator's cap); JSON escaping can make
 * it up to 6 times longer on the wire. */
#define MAX_MESSAGE (8u << 20)
#define MAX_SOURCE (1u << 20)
#define MAX_QUEUED 256
#define RPC_MS 30000

enum { TOOL_OK = 0, TOOL_FAIL = 1, TOOL_CANCELLED = 2 };

typedef struct {
  kf_rpc_client *cli;
  kf_cli__remote remote;
  char problems[PATH_MAX]; /* realpath; "" when there is none */
  kf_mcp_reader in;
  const char *version;     /* negotiated; NULL before initialize */
  char client[64];         /* clientInfo.name, sanitized, for logs */
  char *queue[MAX_QUEUED]; /* lines that arrived during a wait */
  int queued;
  bool eof;                /* stdin ended: finish and exit */
  bool out_closed;         /* stdout failed: exit */
} mcp;

typedef int (*tool_fn)(mcp *m, const cJSON *args, const cJSON *req_id,
                       const cJSON *progress, cJSON **out, char *err,
                       size_t errlen);

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("kf mcp: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static void send_msg(mcp *m, cJSON *msg) {
  if (m->out_closed) {
    cJSON_Delete(msg);
    return;
  }
  int rc = kf_mcp_send(STDOUT_FILENO, msg);
  if (rc == KF_EIO) {
    logf_("stdout closed: the client went away");
    m->out_closed = true;
  } else if (rc) {
    logf_("cannot send a message: %s", kf_strerror(rc));
  }
}

/* ------------------------------------------------------- coordinator -- */

/* One rpc; on failure the reason in err, worded for the agent. */
static int call(mcp *m, const char *method, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *type, int timeout_ms,
                ProtobufCMessage **resp, char *err, size_t errlen) {
  char path[96], why[1024];
  snprintf(path, sizeof path, "/kernelfleet.Coordinator/%s", method);
  *resp = NULL;
  int rc = kf_rpc_client_call_sync(m->cli, path, req, type, timeout_ms, resp,
                                   why, sizeof why);
  if (!rc) return 0;
  /* The server's text may quote what someone sent (a template name). */
  const char *w = kf_cli__clean(why, 0);
  if (rc == KF_EAUTH)
    kf_seterr(rc, err, errlen, "%s: the coordinator refused the credential"
              " (%s)", method, w);
  else if (rc == KF_EPERM)
    kf_seterr(rc, err, errlen, "%s: permission denied: %s (kf mcp needs a"
              " submitter credential)", method, w);
  else if (rc == KF_EUNAVAIL || rc == KF_ETIMEDOUT)
    kf_seterr(rc, err, errlen, "%s: coordinator %s unreachable: %s", method,
              m->remote.target, w);
  else
    kf_seterr(rc, err, errlen, "%s: %s: %s", method, kf_strerror(rc), w);
  logf_("%s", err);
  return rc;
}

static int get_campaign(mcp *m, int64_t id, uint32_t top,
                        Kernelfleet__GetCampaignResponse **out, char *err,
                        size_t errlen) {
  Kernelfleet__GetCampaignRequest req = KERNELFLEET__GET_CAMPAIGN_REQUEST__INIT;
  req.campaign_id = id;
  req.top = top;
  ProtobufCMessage *resp = NULL;
  int rc = call(m, "GetCampaign", &req.base,
                &kernelfleet__get_campaign_response__descriptor, RPC_MS, &resp,
                err, errlen);
  *out = (void *)resp;
  if (!rc && (!(*out)->status || !(*out)->status->campaign)) {
    kf_rpc_free(resp);
    *out = NULL;
    return kf_seterr(KF_EPROTO, err, errlen,
                     "GetCampaign: the coordinator sent no status");
  }
  return rc;
}

/* ---------------------------------------------------------- problems -- */

/* a/b into out; false when it does not fit (the path is then skipped). */
static bool join(char *out, size_t len, const char *a, const char *b) {
  int n = snprintf(out, len, "%s/%s", a, b);
  return n >= 0 && (size_t)n < len;
}

/* PROBLEM is an id under the problems directory ("cpu/rmsnorm"): one or
 * two names of letters, digits, _ . - (not starting with '.'), which must
 * resolve inside the directory.  An agent cannot read files elsewhere. */
static int problem_path(mcp *m, const char *problem, char *out, size_t len,
                        char *err, size_t errlen) {
  if (!m->problems[0])
    return kf_seterr(KF_ENOTFOUND, err, errlen, "no problems directory: "
                     "start kf mcp with --problems DIR");
  /* Quoted back to the agent and into the log: made printable first. */
  const char *shown = kf_cli__clean(problem, 200);
  int parts = 0;
  bool start = true;
  for (const char *p = problem; *p; p++) {
    if (*p == '/') {
      if (start) break;
      start = true;
      continue;
    }
    if (start) {
      parts++;
      if (*p == '.') {
        start = false;
        parts = 99;
        break;
      }
    }
    start = false;
    if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
        !(*p >= '0' && *p <= '9') && !strchr("_.-", *p)) {
      parts = 99;
      break;
    }
  }
  if (!*problem || start || parts < 1 || parts > 2)
    return kf_seterr(KF_EINVAL, err, errlen, "problem '%s': expected an id "
                     "from list_problems such as \"cpu/rmsnorm\"", shown);
  char joined[PATH_MAX], real[PATH_MAX];
  size_t n = strlen(m->problems);
  if (!join(joined, sizeof joined, m->problems, problem) ||
      !realpath(joined, real) || strncmp(real, m->problems, n) ||
      real[n] != '/')
    return kf_seterr(KF_ENOTFOUND, err, errlen, "problem '%s': no such "
                     "problem (list_problems names them)", shown);
  struct stat st;
  char spec[PATH_MAX];
  if (!join(spec, sizeof spec, real, "spec.json") || stat(spec, &st) ||
      !S_ISREG(st.st_mode))
    return kf_seterr(KF_ENOTFOUND, err, errlen, "problem '%s': no "
                     "spec.json there (list_problems names the problems)",
                     shown);
  snprintf(out, len, "%s", real);
  return 0;
}

static int load_problem(mcp *m, const char *problem, kf_spec **spec,
                        char *err, size_t errlen) {
  char dir[PATH_MAX];
  int rc = problem_path(m, problem, dir, sizeof dir, err, errlen);
  if (rc) return rc;
  char why[1024];
  rc = kf_spec_load_dir(dir, spec, why, sizeof why);
  if (rc)
    return kf_seterr(rc, err, errlen, "problem '%s': %s",
                     kf_cli__clean(problem, 200), why);
  return 0;
}

static cJSON *json_knob_space(const kf_spec_template *t) {
  cJSON *k = cJSON_CreateObject();
  for (int i = 0; k && i < t->n_knobs; i++) {
    cJSON *vals = cJSON_AddArrayToObject(k, t->knobs[i].name);
    for (int v = 0; vals && v < t->knobs[i].n_values; v++)
      cJSON_AddItemToArray(vals, cJSON_CreateString(t->knobs[i].values[v]));
  }
  return k;
}

static cJSON *json_problem_summary(const char *id, const kf_spec *s) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "problem", id);
  cJSON_AddStringToObject(j, "name", s->name);
  cJSON_AddStringToObject(j, "backend", s->backend);
  cJSON_AddStringToObject(j, "language",
                          strcmp(s->backend, "cuda") ? "c" : "cuda");
  cJSON_AddStringToObject(j, "description", s->description);
  cJSON *ps = cJSON_AddArrayToObject(j, "params");
  for (int i = 0; ps && i < s->n_params; i++)
    cJSON_AddItemToArray(ps, cJSON_CreateString(s->params[i]));
  cJSON *ts = cJSON_AddArrayToObject(j, "templates");
  for (int i = 0; ts && i < s->n_templates; i++) {
    cJSON *t = cJSON_CreateObject();
    if (!t) break;
    cJSON_AddItemToArray(ts, t);
    cJSON_AddStringToObject(t, "name", s->templates[i].name);
    cJSON_AddStringToObject(t, "description", s->templates[i].description);
    cJSON_AddItemToObject(t, "knobs", json_knob_space(&s->templates[i]));
  }
  return j;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the subdirectories of dir (not starting with '.'). */
static int list_dirs(const char *dir, char ***names, int *n) {
  *names = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return KF_EIO;
  struct dirent *e;
  int cap = 0, rc = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char p[PATH_MAX];
    struct stat st;
    if (!join(p, sizeof p, dir, e->d_name) || stat(p, &st) || !S_ISDIR(st.st_mode)) continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 16;
      char **nn = realloc(*names, (size_t)cap * sizeof *nn);
      if (!nn) { rc = KF_ENOMEM; break; }
      *names = nn;
    }
    if (!((*names)[*n] = strdup(e->d_name))) { rc = KF_ENOMEM; break; }
    (*n)++;
  }
  closedir(d);
  if (*n) qsort(*names, (size_t)*n, sizeof **names, cmp_str);
  return rc;
}

static void free_names(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

static void add_problem(mcp *m, cJSON *arr, const char *id) {
  kf_spec *s = NULL;
  char err[1024];
  if (load_problem(m, id, &s, err, sizeof err)) {
    /* A broken problem is listed with its reason, not hidden. */
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "problem", id);
    cJSON_AddStringToObject(j, "error", err);
    cJSON_AddItemToArray(arr, j);
    return;
  }
  cJSON_AddItemToArray(arr, json_problem_summary(id, s));
  kf_spec_free(s);
}

static bool has_spec(const char *dir) {
  char p[PATH_MAX];
  struct stat st;
  return join(p, sizeof p, dir, "spec.json") && !stat(p, &st) && S_ISREG(st.st_mode);
}

static int tool_list_problems(mcp *m, const cJSON *args, const cJSON *req_id,
                              const cJSON *progress, cJSON **out, char *err,
                              size_t errlen) {
  if (!m->problems[0])
    return kf_seterr(TOOL_FAIL, err, errlen, "no problems directory: start "
                     "kf mcp with --problems DIR");
  char **top = NULL;
  int ntop = 0;
  if (list_dirs(m->problems, &top, &ntop))
    return kf_seterr(TOOL_FAIL, err, errlen, "cannot read %s", m->problems);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "problems_dir", m->problems);
  cJSON *arr = cJSON_AddArrayToObject(j, "problems");
  for (int i = 0; arr && i < ntop; i++) {
    char d[PATH_MAX];
    if (!join(d, sizeof d, m->problems, top[i])) continue;
    if (has_spec(d)) {
      add_problem(m, arr, top[i]);
      continue;
    }
    char **sub = NULL;
    int nsub = 0;
    if (list_dirs(d, &sub, &nsub) == 0) {
      for (int k = 0; k < nsub; k++) {
        char id[PATH_MAX], sd[PATH_MAX];
        if (join(id, sizeof id, top[i], sub[k]) &&
            join(sd, sizeof sd, d, sub[k]) && has_spec(sd))
          add_problem(m, arr, id);
      }
    }
    free_names(sub, nsub);
  }
  free_names(top, ntop);
  *out = j;
  return TOOL_OK;
}

static int tool_describe_problem(mcp *m, const cJSON *args,
                                 const cJSON *req_id, const cJSON *progress,
                                 cJSON **out, char *err, size_t errlen) {
  const char *id = cJSON_GetObjectItem(args, "problem")->valuestring;
  kf_spec *s = NULL;
  if (load_problem(m, id, &s, err, errlen)) return TOOL_FAIL;
  cJSON *j = json_problem_summary(id, s);
  cJSON *spec = cJSON_ParseWithLength(s->json, s->json_len);
  cJSON_AddItemToObject(j, "spec", spec ? spec : cJSON_CreateNull());
  cJSON *ref = cJSON_AddObjectToObject(j, "reference");
  cJSON_AddStringToObject(ref, "file", s->reference_file);
  cJSON_AddStringToObject(ref, "source",
                          s->reference_source ? s->reference_source : "");
  cJSON *ts = cJSON_GetObjectItem(j, "templates");
  for (int i = 0; i < s->n_templates; i++) {
    cJSON *t = cJSON_GetArrayItem(ts, i);
    if (!t) break;
    cJSON_AddStringToObject(t, "file", s->templates[i].file);
    cJSON_AddStringToObject(t, "source", s->templates[i].source
                                             ? s->templates[i].source : "");
  }
  cJSON *abi = cJSON_AddObjectToObject(j, "abi");
  cJSON_AddStringToObject(abi, "header", "kf_candidate.h");
  cJSON_AddStringToObject(abi, "source", kf_proposer__abi_h);
  bool cuda = !strcmp(s->backend, "cuda");
  char how[1024];
  snprintf(how, sizeof how,
           "A candidate is one complete %s source that includes "
           "\"kf_candidate.h\" and defines %sint kf_launch(const kf_args *a)"
           " computing the outputs from the inputs exactly as the reference "
           "does, within the spec's tolerance, for every size in "
           "spec.sizes.check and every input distribution.  Sizes arrive in "
           "a->params in spec.params order; tensors in spec order.  Knobs "
           "arrive as -DNAME=value (declare defaults with #ifndef).  It may "
           "not keep state between calls, start threads, touch files or read "
           "outside its buffers: the harness checks.  Send it with "
           "propose_candidate, then wait_evaluation.",
           cuda ? "CUDA (.cu)" : "C11 (.c)", cuda ? "extern \"C\" " : "");
  cJSON_AddStringToObject(j, "how_to_propose", how);
  kf_spec_free(s);
  *out = j;
  return TOOL_OK;
}

/* --------------------------------------------------------- campaigns -- */

static int64_t arg_i64(const cJSON *args, const char *name, int64_t dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
  return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : dflt;
}

static const char *arg_str(const cJSON *args, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int tool_create_campaign(mcp *m, const cJSON *args,
                                const cJSON *req_id, const cJSON *progress,
                                cJSON **out, char *err, size_t errlen) {
  const char *id = arg_str(args, "problem");
  kf_spec *s = NULL;
  if (load_problem(m, id, &s, err, errlen)) return TOOL_FAIL;
  /* The same defaults as `kf campaign submit`. */
  kf_cli__budget b = {0};
  b.name = arg_str(args, "name");
  b.evals = (uint32_t)arg_i64(args, "evals", 60);
  b.seconds = (uint32_t)arg_i64(args, "minutes", 10) * 60;
  b.population = (uint32_t)arg_i64(args, "population", 0);
  b.plateau = (uint32_t)arg_i64(args, "plateau", 0);
  b.seed = (uint64_t)arg_i64(args, "seed", 0);
  b.showdown = (uint32_t)arg_i64(args, "showdown", 0);
  const cJSON *tr = cJSON_GetObjectItem(args, "target_roofline");
  if (cJSON_IsNumber(tr)) b.target_roofline = tr->valuedouble;
  b.fresh = cJSON_IsTrue(cJSON_GetObjectItem(args, "fresh"));
  int64_t cid = 0;
  char why[1024];
  int rc = kf_cli__create_campaign_rpc(m->cli, s, &b, &cid, why, sizeof why);
  if (rc) {
    kf_seterr(0, err, errlen, "CreateCampaign: %s: %s", kf_strerror(rc),
              kf_cli__clean(why, 0));
    logf_("%s", err);
    kf_spec_free(s);
    return TOOL_FAIL;
  }
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "campaign_id", (double)cid);
  cJSON_AddStringToObject(j, "problem", id);
  cJSON_AddStringToObject(j, "name", b.name ? b.name : s->name);
  cJSON_AddNumberToObject(j, "budget_evals", b.evals);
  cJSON_AddNumberToObject(j, "budget_seconds", b.seconds);
  kf_spec_free(s);
  *out = j;
  return TOOL_OK;
}

/* Knob values may come as JSON numbers ("BLOCK": 64): the text of an
 * integer is what the compiler gets. */
static int knob_value(const cJSON *v, char *buf, size_t len) {
  if (cJSON_IsString(v)) {
    snprintf(buf, len, "%s", v->valuestring);
    return strlen(v->valuestring) < len ? 0 : -1;
  }
  double d = v->valuedouble;
  if (!isfinite(d) || d != floor(d) || fabs(d) > 9007199254740991.0) return -1;
  snprintf(buf, len, "%lld", (long long)d);
  return 0;
}

static int tool_propose(mcp *m, const cJSON *args, const cJSON *req_id,
                        const cJSON *progress, cJSON **out, char *err,
                        size_t errlen) {
  int64_t cid = arg_i64(args, "campaign_id", 0);
  const char *src = arg_str(args, "source");
  const char *tmpl = arg_str(args, "template");
  const char *label = arg_str(args, "proposer");
  char why[96];
  /* cJSON decodes \u0000 into a NUL that would cut the source short
   * without a word; the length in bytes is what the parser produced. */
  if (kf_text_check(src, strlen(src), MAX_SOURCE, why, sizeof why))
    return kf_seterr(TOOL_FAIL, err, errlen, "source %s; a candidate is C or"
                     " CUDA text in UTF-8 of at most %u bytes", why,
                     MAX_SOURCE);
  if (!*src)
    return kf_seterr(TOOL_FAIL, err, errlen, "source is empty");
  /* Attribution: "mcp", or "mcp-LABEL".  An agent cannot pass itself off
   * as the search ("evolution") or the built-in llm proposer. */
  char proposer[64] = "mcp";
  if (label) {
    bool ok = *label && strlen(label) <= 59;
    for (const char *p = label; ok && *p; p++)
      ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
           (*p >= '0' && *p <= '9') || strchr("_.-", *p);
    if (!ok)
      return kf_seterr(TOOL_FAIL, err, errlen, "proposer '%s': 1..59 letters,"
                       " digits, '_', '.' or '-' (recorded as mcp-LABEL)",
                       kf_cli__clean(label, 64));
    snprintf(proposer, sizeof proposer, "mcp-%s", label);
  }
  Kernelfleet__Knob knobs[KF_SPEC_MAX_KNOBS], *kp[KF_SPEC_MAX_KNOBS];
  char vals[KF_SPEC_MAX_KNOBS][32];
  size_t nk = 0;
  const cJSON *k;
  cJSON_ArrayForEach(k, cJSON_GetObjectItem(args, "knobs")) {
    if (nk == KF_SPEC_MAX_KNOBS)
      return kf_seterr(TOOL_FAIL, err, errlen, "knobs: at most %d",
                       KF_SPEC_MAX_KNOBS);
    if (!kf_spec_knob_name_ok(k->string) ||
        knob_value(k, vals[nk], sizeof vals[nk]) ||
        !kf_spec_knob_value_ok(vals[nk]))
      return kf_seterr(TOOL_FAIL, err, errlen, "knobs.%s: names are C "
                       "identifiers of at most 31 characters not starting "
                       "with KF_; values 1..23 letters, digits, '.', '_', "
                       "'+' or '-'", kf_cli__clean(k->string, 64));
    kernelfleet__knob__init(&knobs[nk]);
    knobs[nk].name = k->string;
    knobs[nk].value = vals[nk];
    kp[nk] = &knobs[nk];
    nk++;
  }
  Kernelfleet__ProposeCandidateRequest req =
      KERNELFLEET__PROPOSE_CANDIDATE_REQUEST__INIT;
  req.campaign_id = cid;
  req.source = (char *)src;
  req.knobs = kp;
  req.n_knobs = nk;
  req.proposer = proposer;
  req.template_name = (char *)(tmpl ? tmpl : "");
  ProtobufCMessage *resp = NULL;
  if (call(m, "ProposeCandidate", &req.base,
           &kernelfleet__propose_candidate_response__descriptor, RPC_MS,
           &resp, err, errlen))
    return TOOL_FAIL;
  const Kernelfleet__ProposeCandidateResponse *r = (const void *)resp;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "campaign_id", (double)cid);
  cJSON_AddNumberToObject(j, "candidate_id", (double)r->candidate_id);
  cJSON_AddBoolToObject(j, "duplicate", r->duplicate);
  cJSON_AddStringToObject(j, "proposer", proposer);
  cJSON_AddStringToObject(
      j, "next", r->duplicate
                     ? "this campaign already holds the same source and knobs:"
                       " wait_evaluation returns its evaluation"
                     : "queued for compile, verification and timing: call "
                       "wait_evaluation with this candidate_id");
  kf_rpc_free(resp);
  *out = j;
  return TOOL_OK;
}

/* ------------------------------------------------------ waiting/input -- */

static bool same_id(const cJSON *a, const cJSON *b) {
  if (!a || !b) return false;
  if (cJSON_IsString(a) && cJSON_IsString(b))
    return !strcmp(a->valuestring, b->valuestring);
  return cJSON_IsNumber(a) && cJSON_IsNumber(b) &&
         a->valuedouble == b->valuedouble;
}

static void reply_error(mcp *m, const cJSON *id, int code, const char *msg) {
  /* Quotes of what the client sent (a field name) may be any bytes: the
   * reply and the log get valid, printable UTF-8. */
  const char *text = kf_cli__clean(msg, 0);
  logf_("error %d: %s", code, text);
  send_msg(m, kf_mcp_error(id, code, text));
}

/* While a tool waits: reads input for up to ms.  A ping is answered, a
 * cancellation of req_id ends the wait (TOOL_CANCELLED), anything else is
 * kept for later.  End of input also ends the wait: nobody is left to
 * read the answer. */
static int service_input(mcp *m, const cJSON *req_id, int ms) {
  uint64_t until = kf_now_ms() + (uint64_t)ms;
  for (;;) {
    uint64_t now = kf_now_ms();
    if (now >= until) return TOOL_OK;
    char *line;
    size_t len;
    int rc = kf_mcp_read_line(&m->in, (int)(until - now), &line, &len);
    if (rc == 0) return TOOL_OK;
    if (rc < 0 && rc != KF_ETOOBIG) {
      m->eof = true;
      return TOOL_CANCELLED;
    }
    if (rc == KF_ETOOBIG) {
      reply_error(m, NULL, KF_MCP_INVALID_REQUEST, "message too large");
      continue;
    }
    kf_mcp_msg msg;
    char why[256];
    if (kf_mcp_parse(line, len, &msg, why, sizeof why) == 0) {
      if (msg.kind == KF_MCP_NOTIFICATION &&
          !strcmp(msg.method, "notifications/cancelled") &&
          same_id(cJSON_GetObjectItemCaseSensitive(msg.params, "requestId"),
                  req_id)) {
        kf_mcp_msg_free(&msg);
        return TOOL_CANCELLED;
      }
      if (msg.kind == KF_MCP_REQUEST && !strcmp(msg.method, "ping")) {
        send_msg(m, kf_mcp_result(msg.id, cJSON_CreateObject()));
        kf_mcp_msg_free(&msg);
        continue;
      }
    }
    kf_mcp_msg_free(&msg);
    if (m->queued == MAX_QUEUED) {
      reply_error(m, NULL, KF_MCP_INTERNAL_ERROR,
                  "too many messages queued while a tool runs; dropped one");
      continue;
    }
    char *copy = strndup(line, len);
    if (copy) m->queue[m->queued++] = copy;
  }
}

/* What an evaluation carries.  The profile and the diagnosis (issue 11,
 * items 1 and 2) come as fields of the evaluation once the coordinator
 * sends them: kf_cli__json_eval is where `kf campaign export` adds them,
 * and they pass through here; until then they are null, so an agent can
 * rely on the keys. */
static cJSON *eval_json(const Kernelfleet__EvaluationSummary *e) {
  cJSON *j = kf_cli__json_eval(e);
  if (!j) return NULL;
  cJSON_AddBoolToObject(j, "passed", e->outcome ==
                                         KERNELFLEET__OUTCOME__OUTCOME_OK);
  if (!cJSON_HasObjectItem(j, "profile")) cJSON_AddNullToObject(j, "profile");
  if (!cJSON_HasObjectItem(j, "diagnosis"))
    cJSON_AddNullToObject(j, "diagnosis");
  return j;
}

static bool same_class(const Kernelfleet__DeviceClass *a,
                       const Kernelfleet__DeviceClass *b) {
  if (!a || !b) return a == b;
  return a->kind == b->kind && a->cc_major == b->cc_major &&
         a->cc_minor == b->cc_minor && !strcmp(a->model, b->model) &&
         !strcmp(a->isa, b->isa);
}

static bool campaign_running(const char *state) {
  return !strcmp(state, "running") || !strcmp(state, "showdown");
}

static void progress_note(mcp *m, const cJSON *token, double done,
                          const char *text) {
  cJSON *p = cJSON_CreateObject();
  if (!p) return;
  cJSON_AddItemToObject(p, "progressToken", cJSON_Duplicate(token, true));
  cJSON_AddNumberToObject(p, "progress", done);
  cJSON_AddStringToObject(p, "message", text);
  send_msg(m, kf_mcp_notification("notifications/progress", p));
}

/* One look at the candidate: its evaluations (ListEvaluations, filtered:
 * the contract has no per-candidate query) and the device classes that
 * should evaluate it but have not (GetStatus).  *snap is the answer's
 * body; *found evaluations, *pending classes.  0 or a KF_E* code. */
static int wait_look(mcp *m, int64_t cid, int64_t cand,
                     const Kernelfleet__CampaignStatus *cs, cJSON **snap,
                     size_t *found, size_t *pending, char *err,
                     size_t errlen) {
  uint64_t want = (uint64_t)cs->evals_done + cs->evals_running + 1000;
  Kernelfleet__ListEvaluationsRequest lr =
      KERNELFLEET__LIST_EVALUATIONS_REQUEST__INIT;
  lr.campaign_id = cid;
  lr.limit = want > 100000 ? 100000 : (uint32_t)want;
  ProtobufCMessage *lresp = NULL, *sresp = NULL;
  int rc = call(m, "ListEvaluations", &lr.base,
                &kernelfleet__list_evaluations_response__descriptor, 120000,
                &lresp, err, errlen);
  if (rc) return rc;
  Kernelfleet__GetStatusRequest sr = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  rc = call(m, "GetStatus", &sr.base,
            &kernelfleet__get_status_response__descriptor, RPC_MS, &sresp,
            err, errlen);
  if (rc) {
    kf_rpc_free(lresp);
    return rc;
  }
  const Kernelfleet__ListEvaluationsResponse *l = (const void *)lresp;
  const Kernelfleet__GetStatusResponse *st = (const void *)sresp;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "campaign_id", (double)cid);
  cJSON_AddNumberToObject(j, "candidate_id", (double)cand);
  cJSON_AddStringToObject(j, "campaign_state", cs->campaign->state);
  cJSON *evs = cJSON_AddArrayToObject(j, "evaluations");
  const Kernelfleet__DeviceClass *kind_of = NULL;
  *found = *pending = 0;
  for (size_t i = 0; i < l->n_evaluations; i++) {
    const Kernelfleet__EvaluationSummary *e = l->evaluations[i];
    if (e->candidate_id != cand) continue;
    (*found)++;
    if (!kind_of) kind_of = e->device_class;
    cJSON_AddItemToArray(evs, eval_json(e));
  }
  /* Classes with an alive worker of the backend but no evaluation yet;
   * the backend's kind is that of the evaluations already there. */
  cJSON *pend = cJSON_AddArrayToObject(j, "pending_device_classes");
  for (size_t w = 0; kind_of && w < st->n_workers; w++) {
    const Kernelfleet__WorkerStatus *ws = st->workers[w];
    if (!ws->alive || !ws->device_class ||
        ws->device_class->kind != kind_of->kind)
      continue;
    bool have = false;
    for (size_t i = 0; !have && i < l->n_evaluations; i++)
      have = l->evaluations[i]->candidate_id == cand &&
             same_class(l->evaluations[i]->device_class, ws->device_class);
    for (size_t v = 0; !have && v < w; v++) /* listed already */
      have = st->workers[v]->alive &&
             same_class(st->workers[v]->device_class, ws->device_class);
    if (have) continue;
    (*pending)++;
    cJSON *pc = cJSON_CreateObject();
    cJSON_AddStringToObject(pc, "model", ws->device_class->model);
    cJSON_AddStringToObject(pc, "isa", ws->device_class->isa);
    cJSON_AddItemToArray(pend, pc);
  }
  kf_rpc_free(sresp);
  kf_rpc_free(lresp);
  *snap = j;
  return 0;
}

static bool transient(int rc) {
  return rc == KF_EUNAVAIL || rc == KF_ETIMEDOUT || rc == KF_EBUSY;
}

/* A candidate's evaluation is final when there is one for every device
 * class of the campaign's backend that has an alive worker (a proposal is
 * evaluated once on each), or when the campaign ended (what is there is
 * all there will be).  The evaluations are read again only when the
 * campaign's count of them moved (or every tenth second, for workers
 * that came or went); a coordinator that is briefly unreachable
 * (restart) is waited for until the deadline. */
static int tool_wait(mcp *m, const cJSON *args, const cJSON *req_id,
                     const cJSON *progress, cJSON **out, char *err,
                     size_t errlen) {
  int64_t cid = arg_i64(args, "campaign_id", 0);
  int64_t cand = arg_i64(args, "candidate_id", 0);
  int64_t timeout_s = arg_i64(args, "timeout_seconds", 50);
  uint64_t t0 = kf_now_ms(), deadline = t0 + (uint64_t)timeout_s * 1000;
  uint64_t next_note = t0 + 5000;
  cJSON *j = NULL;
  uint32_t last_done = 0;
  char last_state[32] = "";
  int stale_looks = 0;
  size_t found = 0, pending = 0;
  bool final = false;
  for (;;) {
    Kernelfleet__GetCampaignResponse *g = NULL;
    int rc = get_campaign(m, cid, 0, &g, err, errlen);
    if (!rc) {
      const Kernelfleet__CampaignStatus *cs = g->status;
      bool ended = !campaign_running(cs->campaign->state);
      if (!j || cs->evals_done != last_done ||
          strcmp(cs->campaign->state, last_state) || ++stale_looks >= 10) {
        cJSON *snap = NULL;
        rc = wait_look(m, cid, cand, cs, &snap, &found, &pending, err,
                       errlen);
        if (!rc) {
          cJSON_Delete(j);
          j = snap;
          last_done = cs->evals_done;
          snprintf(last_state, sizeof last_state, "%s", cs->campaign->state);
          stale_looks = 0;
        }
      }
      final = !rc && (ended || (found > 0 && pending == 0));
      kf_rpc_free((ProtobufCMessage *)g);
    }
    uint64_t now = kf_now_ms();
    /* The first look must work: a wrong campaign id is an error now, not
     * after the timeout. */
    if (rc && (!j || !transient(rc) || now >= deadline)) {
      cJSON_Delete(j);
      return TOOL_FAIL;
    }
    if (!rc && (final || now >= deadline)) {
      cJSON_AddBoolToObject(j, "final", final);
      cJSON_AddBoolToObject(j, "timed_out", !final);
      cJSON_AddNumberToObject(j, "waited_ms", (double)(now - t0));
      if (!final)
        cJSON_AddStringToObject(j, "next", "not evaluated yet: call "
                                "wait_evaluation again");
      else if (!found)
        cJSON_AddStringToObject(j, "next", "the campaign ended before this"
                                " candidate was evaluated");
      *out = j;
      return TOOL_OK;
    }
    if (progress && now >= next_note) {
      char text[128];
      snprintf(text, sizeof text, "waiting for candidate %lld: %zu "
               "evaluation(s) so far", (long long)cand, found);
      progress_note(m, progress, (double)(now - t0) / 1000.0, text);
      next_note = now + 5000;
    }
    uint64_t left = deadline > now ? deadline - now : 0;
    if (service_input(m, req_id, left < 1000 ? (int)left : 1000) ==
        TOOL_CANCELLED) {
      cJSON_Delete(j);
      return TOOL_CANCELLED;
    }
  }
}

static int tool_status(mcp *m, const cJSON *args, const cJSON *req_id,
                       const cJSON *progress, cJSON **out, char *err,
                       size_t errlen) {
  Kernelfleet__GetCampaignResponse *g = NULL;
  if (get_campaign(m, arg_i64(args, "campaign_id", 0),
                   (uint32_t)arg_i64(args, "top", 5), &g, err, errlen))
    return TOOL_FAIL;
  cJSON *j = kf_cli__json_status(g->status);
  cJSON *top = cJSON_AddArrayToObject(j, "top");
  for (size_t i = 0; top && i < g->n_top; i++)
    cJSON_AddItemToArray(top, eval_json(g->top[i]));
  kf_rpc_free((ProtobufCMessage *)g);
  /* What went wrong lately, with stage and reason: the same context the
   * built-in proposers get, so an agent does not repeat a mistake. */
  uint32_t nf = (uint32_t)arg_i64(args, "failures", 5);
  cJSON *fails = cJSON_AddArrayToObject(j, "recent_failures");
  if (nf) {
    Kernelfleet__ListEvaluationsRequest lr =
        KERNELFLEET__LIST_EVALUATIONS_REQUEST__INIT;
    lr.campaign_id = arg_i64(args, "campaign_id", 0);
    lr.limit = nf;
    lr.failures_only = true;
    ProtobufCMessage *resp = NULL;
    if (call(m, "ListEvaluations", &lr.base,
             &kernelfleet__list_evaluations_response__descriptor, RPC_MS,
             &resp, err, errlen)) {
      cJSON_Delete(j);
      return TOOL_FAIL;
    }
    const Kernelfleet__ListEvaluationsResponse *l = (const void *)resp;
    for (size_t i = 0; fails && i < l->n_evaluations && i < nf; i++)
      cJSON_AddItemToArray(fails, eval_json(l->evaluations[i]));
    kf_rpc_free(resp);
  }
  *out = j;
  return TOOL_OK;
}

static int tool_best(mcp *m, const cJSON *args, const cJSON *req_id,
                     const cJSON *progress, cJSON **out, char *err,
                     size_t errlen) {
  int64_t cid = arg_i64(args, "campaign_id", 0);
  Kernelfleet__GetCampaignResponse *g = NULL;
  /* An unknown campaign is an error; a known one without a verified
   * kernel is an answer (found: false). */
  if (get_campaign(m, cid, 0, &g, err, errlen)) return TOOL_FAIL;
  Kernelfleet__GetBestRequest req = KERNELFLEET__GET_BEST_REQUEST__INIT;
  req.campaign_id = cid;
  ProtobufCMessage *resp = NULL;
  char why[1024];
  int rc = kf_rpc_client_call_sync(m->cli, "/kernelfleet.Coordinator/GetBest",
                                   &req.base,
                                   &kernelfleet__get_best_response__descriptor,
                                   RPC_MS, &resp, why, sizeof why);
  const Kernelfleet__GetBestResponse *b = (const void *)resp;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "campaign_id", (double)cid);
  cJSON_AddStringToObject(j, "campaign_state", g->status->campaign->state);
  if (rc == KF_ENOTFOUND || (!rc && (!b->best || !b->best->candidate_id))) {
    cJSON_AddBoolToObject(j, "found", false);
    cJSON_AddNullToObject(j, "best");
  } else if (rc) {
    cJSON_Delete(j);
    kf_rpc_free((ProtobufCMessage *)g);
    kf_seterr(0, err, errlen, "GetBest: %s: %s", kf_strerror(rc),
              kf_cli__clean(why, 0));
    logf_("%s", err);
    return TOOL_FAIL;
  } else {
    cJSON_AddBoolToObject(j, "found", true);
    cJSON_AddItemToObject(j, "best", eval_json(b->best));
    cJSON_AddStringToObject(j, "language", b->language);
    const cJSON *inc = cJSON_GetObjectItem(args, "include_source");
    if (!cJSON_IsFalse(inc)) cJSON_AddStringToObject(j, "source", b->source);
  }
  kf_rpc_free(resp);
  kf_rpc_free((ProtobufCMessage *)g);
  *out = j;
  return TOOL_OK;
}

/* ------------------------------------------------------------- tools -- */

#define ID_SCHEMA(what)                                                      \
  "{\"type\": \"integer\", \"minimum\": 1, \"maximum\": 9007199254740991,"  \
  " \"description\": \"" what "\"}"

static const struct {
  const char *name, *title, *description, *schema;
  tool_fn fn;
} tools[] = {
    {"list_problems", "List problems",
     "Lists the problems (kernels to optimize) this server can start "
     "campaigns for: id, backend (cpu or cuda), description, size params "
     "and the starter templates with their knob spaces.",
     "{\"type\": \"object\", \"properties\": {}, "
     "\"additionalProperties\": false}",
     tool_list_problems},
    {"describe_problem", "Describe a problem",
     "Everything needed to write a candidate for one problem: the spec "
     "(inputs, outputs, shapes, check and bench sizes, tolerances, input "
     "distributions, roofline bytes/flops), the candidate ABI header "
     "kf_candidate.h, the trusted reference source and each template's "
     "source with its knobs.",
     "{\"type\": \"object\", \"properties\": {\"problem\": {\"type\": "
     "\"string\", \"maxLength\": 200, \"description\": \"problem id from "
     "list_problems, e.g. cpu/rmsnorm\"}}, \"required\": [\"problem\"], "
     "\"additionalProperties\": false}",
     tool_describe_problem},
    {"create_campaign", "Create a campaign",
     "Starts a search campaign for a problem on the coordinator.  The "
     "search evaluates the problem's templates and breeds knob settings; "
     "candidates you propose join it.  Returns campaign_id.",
     "{\"type\": \"object\", \"properties\": {"
     "\"problem\": {\"type\": \"string\", \"maxLength\": 200, "
     "\"description\": \"problem id from list_problems\"},"
     "\"name\": {\"type\": \"string\", \"maxLength\": 63, \"description\":"
     " \"campaign name (default: the problem's)\"},"
     "\"evals\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": "
     "1000000, \"description\": \"evaluations the search may run "
     "(default 60; proposals are evaluated beyond it)\"},"
     "\"minutes\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": "
     "10080, \"description\": \"wall-clock budget (default 10)\"},"
     "\"population\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": "
     "10000},"
     "\"plateau\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": "
     "1000000, \"description\": \"stop after this many evaluations without"
     " gain\"},"
     "\"target_roofline\": {\"type\": \"number\", \"exclusiveMinimum\": 0,"
     " \"maximum\": 2, \"description\": \"stop at this fraction of the "
     "roofline floor (the copy bandwidth; a read-mostly problem passes 1)\"},"
     "\"seed\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": "
     "9007199254740991},"
     "\"fresh\": {\"type\": \"boolean\", \"description\": \"reuse no stored"
     " measurement\"},"
     "\"showdown\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 64,"
     " \"description\": \"candidates per device class re-timed at the "
     "end\"}}, \"required\": [\"problem\"], \"additionalProperties\": "
     "false}",
     tool_create_campaign},
    {"propose_candidate", "Propose a candidate kernel",
     "Adds your own kernel source to a running campaign.  It goes through "
     "the full pipeline like every candidate -- sandboxed compile, link "
     "check, verification on every check size and input distribution, "
     "determinism, timing against the reference -- and, if it passes, "
     "joins the search (its knobs are tuned too).  Returns candidate_id; "
     "then call wait_evaluation.",
     "{\"type\": \"object\", \"properties\": {"
     "\"campaign_id\": " ID_SCHEMA("the campaign") ","
     "\"source\": {\"type\": \"string\", \"maxLength\": 1048576, "
     "\"description\": \"complete C (cpu) or CUDA (cuda) source "
     "implementing kf_launch (see describe_problem)\"},"
     "\"knobs\": {\"type\": \"object\", \"maxProperties\": 12, "
     "\"additionalProperties\": {\"type\": [\"string\", \"integer\"]}, "
     "\"description\": \"knob values, passed as -DNAME=value\"},"
     "\"template\": {\"type\": \"string\", \"maxLength\": 63, "
     "\"description\": \"the template this source came from, if any\"},"
     "\"proposer\": {\"type\": \"string\", \"maxLength\": 59, "
     "\"description\": \"a label for you; recorded as mcp-LABEL\"}}, "
     "\"required\": [\"campaign_id\", \"source\"], "
     "\"additionalProperties\": false}",
     tool_propose},
    {"wait_evaluation", "Wait for an evaluation",
     "Blocks until the candidate's evaluation is final (one per device "
     "class that runs the campaign) or timeout_seconds pass.  Returns each "
     "evaluation's outcome (ok, compile_error, wrong_answer, ...), stage, "
     "reason, times, speedup and roofline fraction, with profile and "
     "diagnosis where the evaluation carries them.  final false: call it "
     "again.",
     "{\"type\": \"object\", \"properties\": {"
     "\"campaign_id\": " ID_SCHEMA("the campaign") ","
     "\"candidate_id\": " ID_SCHEMA("from propose_candidate") ","
     "\"timeout_seconds\": {\"type\": \"integer\", \"minimum\": 0, "
     "\"maximum\": 3600, \"description\": \"how long to wait (default 50, "
     "below the usual 60 s client request timeout)\"}}, "
     "\"required\": [\"campaign_id\", \"candidate_id\"], "
     "\"additionalProperties\": false}",
     tool_wait},
    {"campaign_status", "Campaign status",
     "A campaign's state, budget, evaluations done and running, best "
     "speedup so far, outcomes by kind, its top evaluations and its recent "
     "failures with stage and reason.",
     "{\"type\": \"object\", \"properties\": {"
     "\"campaign_id\": " ID_SCHEMA("the campaign") ","
     "\"top\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 100, "
     "\"description\": \"how many best evaluations to include (default "
     "5)\"},"
     "\"failures\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": "
     "100, \"description\": \"how many recent failures (stage, reason) to "
     "include (default 5)\"}}, \"required\": [\"campaign_id\"], "
     "\"additionalProperties\": false}",
     tool_status},
    {"best", "Best kernel",
     "The campaign's best verified kernel: its evaluation (times, speedup)"
     " and its source.  found false when nothing has passed yet.",
     "{\"type\": \"object\", \"properties\": {"
     "\"campaign_id\": " ID_SCHEMA("the campaign") ","
     "\"include_source\": {\"type\": \"boolean\", \"description\": "
     "\"default true\"}}, \"required\": [\"campaign_id\"], "
     "\"additionalProperties\": false}",
     tool_best},
};
#define N_TOOLS ((int)(sizeof tools / sizeof tools[0]))
static cJSON *schemas[N_TOOLS];

static cJSON *tools_list(void) {
  cJSON *r = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(r, "tools");
  for (int i = 0; arr && i < N_TOOLS; i++) {
    cJSON *t = cJSON_CreateObject();
    if (!t) break;
    cJSON_AddItemToArray(arr, t);
    cJSON_AddStringToObject(t, "name", tools[i].name);
    cJSON_AddStringToObject(t, "title", tools[i].title);
    cJSON_AddStringToObject(t, "description", tools[i].description);
    cJSON_AddItemToObject(t, "inputSchema", cJSON_Duplicate(schemas[i], true));
    cJSON *ann = cJSON_AddObjectToObject(t, "annotations");
    bool ro = tools[i].fn != tool_create_campaign &&
              tools[i].fn != tool_propose;
    /* Nothing an agent can call deletes or overwrites: a campaign or a
     * candidate is only ever added (the hint's default is "destructive"). */
    cJSON_AddBoolToObject(ann, "readOnlyHint", ro);
    if (!ro) cJSON_AddBoolToObject(ann, "destructiveHint", false);
    cJSON_AddBoolToObject(ann, "openWorldHint", false);
  }
  return r;
}

/* The answer to a tools/call: text content always (every client shows
 * it), structuredContent from 2025-06-18 on. */
static cJSON *tool_result(mcp *m, cJSON *out, const char *errtext) {
  cJSON *r = cJSON_CreateObject();
  cJSON *content = cJSON_AddArrayToObject(r, "content");
  cJSON *c = cJSON_CreateObject();
  cJSON_AddItemToArray(content, c);
  cJSON_AddStringToObject(c, "type", "text");
  if (out) {
    char *text = cJSON_PrintUnformatted(out);
    cJSON_AddStringToObject(c, "text", text ? text : "{}");
    cJSON_free(text);
    if (kf_mcp_version_ge(m->version, "2025-06-18"))
      cJSON_AddItemToObject(r, "structuredContent", out);
    else
      cJSON_Delete(out);
  } else {
    cJSON_AddStringToObject(c, "text", errtext);
  }
  cJSON_AddBoolToObject(r, "isError", out == NULL);
  return r;
}

static void on_tools_call(mcp *m, const kf_mcp_msg *msg) {
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(msg->params, "name");
  if (!cJSON_IsString(name)) {
    reply_error(m, msg->id, KF_MCP_INVALID_PARAMS,
                "tools/call: params.name must be a string");
    return;
  }
  int t = -1;
  for (int i = 0; i < N_TOOLS; i++)
    if (!strcmp(tools[i].name, name->valuestring)) t = i;
  char err[2048];
  if (t < 0) {
    char known[256] = "";
    size_t k = 0;
    for (int i = 0; i < N_TOOLS; i++)
      k += (size_t)snprintf(known + k, sizeof known - k, "%s%s",
                            i ? ", " : "", tools[i].name);
    snprintf(err, sizeof err, "unknown tool '%s' (tools: %s)",
             kf_cli__clean(name->valuestring, 64), known);
    reply_error(m, msg->id, KF_MCP_INVALID_PARAMS, err);
    return;
  }
  const cJSON *args =
      cJSON_GetObjectItemCaseSensitive(msg->params, "arguments");
  cJSON *empty = NULL;
  if (!args || cJSON_IsNull(args)) args = empty = cJSON_CreateObject();
  char why[1024];
  if (!kf_mcp_schema_check(schemas[t], args, why, sizeof why)) {
    snprintf(err, sizeof err, "invalid arguments for %s: %s", tools[t].name,
             why);
    reply_error(m, msg->id, KF_MCP_INVALID_PARAMS, err);
    cJSON_Delete(empty);
    return;
  }
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(msg->params, "_meta");
  const cJSON *progress =
      cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
  if (progress && !cJSON_IsString(progress) && !cJSON_IsNumber(progress))
    progress = NULL;
  uint64_t t0 = kf_now_ms();
  cJSON *out = NULL;
  err[0] = '\0';
  int rc = tools[t].fn(m, args, msg->id, progress, &out, err, sizeof err);
  cJSON_Delete(empty);
  logf_("%s: %s (%llu ms)%s%s", tools[t].name,
        rc == TOOL_OK ? "ok" : rc == TOOL_CANCELLED ? "cancelled" : "error",
        (unsigned long long)(kf_now_ms() - t0), rc == TOOL_FAIL ? ": " : "",
        rc == TOOL_FAIL ? err : "");
  if (rc == TOOL_CANCELLED) return; /* a cancelled request gets no answer */
  if (rc == TOOL_OK && !out) {
    rc = TOOL_FAIL;
    snprintf(err, sizeof err, "out of memory");
  }
  send_msg(m, kf_mcp_result(msg->id,
                            tool_result(m, rc == TOOL_OK ? out : NULL, err)));
}

static void on_initialize(mcp *m, const kf_mcp_msg *msg) {
  const cJSON *pv =
      cJSON_GetObjectItemCaseSensitive(msg->params, "protocolVersion");
  if (!cJSON_IsString(pv)) {
    reply_error(m, msg->id, KF_MCP_INVALID_PARAMS,
                "initialize: params.protocolVersion must be a string");
    return;
  }
  if (m->version) {
    reply_error(m, msg->id, KF_MCP_INVALID_REQUEST,
                "initialize: the session is initialized already");
    return;
  }
  m->version = kf_mcp_negotiate(pv->valuestring);
  const cJSON *ci = cJSON_GetObjectItemCaseSensitive(msg->params,
                                                     "clientInfo");
  const cJSON *cn = cJSON_GetObjectItemCaseSensitive(ci, "name");
  snprintf(m->client, sizeof m->client, "%s",
           kf_cli__clean(cJSON_IsString(cn) ? cn->valuestring : "?", 48));
  logf_("client %s asked for protocol %s; speaking %s", m->client,
        kf_cli__clean(pv->valuestring, 32), m->version);
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "protocolVersion", m->version);
  cJSON *caps = cJSON_AddObjectToObject(r, "capabilities");
  cJSON *tc = cJSON_AddObjectToObject(caps, "tools");
  cJSON_AddBoolToObject(tc, "listChanged", false);
  cJSON *si = cJSON_AddObjectToObject(r, "serverInfo");
  cJSON_AddStringToObject(si, "name", "kernelfleet");
  cJSON_AddStringToObject(si, "title", "KernelFleet");
  cJSON_AddStringToObject(si, "version", "0.1");
  cJSON_AddStringToObject(
      r, "instructions",
      "KernelFleet searches for fast, verified kernels.  Typical loop: "
      "list_problems; describe_problem; create_campaign (or use a "
      "campaign_id you were given); propose_candidate with a complete "
      "source; wait_evaluation until final; read the outcome, reason and "
      "speedup (and profile/diagnosis when present); improve and propose "
      "again; campaign_status and best show where the search stands.");
  send_msg(m, kf_mcp_result(msg->id, r));
}

/* One message from the client. */
static void handle(mcp *m, const char *line, size_t len) {
  size_t i = 0;
  while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
    i++;
  if (i == len) return; /* blank lines are not messages */
  kf_mcp_msg msg;
  char why[512];
  int rc = kf_mcp_parse(line, len, &msg, why, sizeof why);
  if (rc) {
    /* A notification with bad params is dropped: it is never answered. */
    bool notif = msg.root && !msg.id && rc == KF_MCP_INVALID_PARAMS;
    if (notif) logf_("dropped a notification: %s", why);
    else reply_error(m, msg.id, rc, why);
    kf_mcp_msg_free(&msg);
    return;
  }
  if (msg.kind == KF_MCP_RESPONSE) {
    /* We never send requests; a stray response is ignored. */
  } else if (msg.kind == KF_MCP_NOTIFICATION) {
    /* notifications/initialized, notifications/cancelled for a request
     * already answered, anything else: nothing to do. */
  } else if (!strcmp(msg.method, "initialize")) {
    on_initialize(m, &msg);
  } else if (!strcmp(msg.method, "ping")) {
    send_msg(m, kf_mcp_result(msg.id, cJSON_CreateObject()));
  } else if (!m->version) {
    reply_error(m, msg.id, KF_MCP_INVALID_REQUEST,
                "the session is not initialized: send initialize first");
  } else if (!strcmp(msg.method, "tools/list")) {
    send_msg(m, kf_mcp_result(msg.id, tools_list()));
  } else if (!strcmp(msg.method, "tools/call")) {
    if (!msg.params)
      reply_error(m, msg.id, KF_MCP_INVALID_PARAMS,
                  "tools/call: params are required");
    else
      on_tools_call(m, &msg);
  } else {
    snprintf(why, sizeof why, "method not found: '%s' (this server offers "
             "initialize, ping, tools/list and tools/call)",
             kf_cli__clean(msg.method, 64));
    reply_error(m, msg.id, KF_MCP_METHOD_NOT_FOUND, why);
  }
  kf_mcp_msg_free(&msg);
}

/* ----------------------------------------------------------- command -- */

static void usage(FILE *f) {
  fprintf(f,
"usage: kf mcp [--coordinator HOST:PORT] [--token-file PATH]\n"
"              [--problems DIR] [TLS options]\n"
"\n"
"A Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one\n"
"message per line) for AI agents: it lets an agent list and read\n"
"problems, create campaigns, propose its own kernels, wait for their\n"
"verdicts and read the best -- with the powers of the credential it was\n"
"started with (a submitter token) and nothing more.  Every proposal is\n"
"compiled, verified and timed by the full pipeline.  Logs go to stderr.\n"
"Tools: list_problems, describe_problem, create_campaign,\n"
"propose_candidate, wait_evaluation, campaign_status, best.\n"
"See docs/mcp.md for an agent configuration.\n"
"\n"
"  --coordinator H:P   coordinator [$KF_COORDINATOR, else 127.0.0.1:7070]\n"
KF_CLI__REMOTE_HELP
"  --problems DIR      problems directory [$KF_PROBLEMS_DIR, else\n"
"                      ./problems, else the source tree's problems/]\n"
"\n"
"Exit codes: 0 the client closed stdin, 1 stdout failed, 2 usage error\n"
"(no token, bad options), 3 the coordinator cannot be opened.\n");
}

static void pick_problems(mcp *m, const char *opt) {
  const char *cands[3] = {opt, NULL, NULL};
  int n = 1;
  if (!opt) {
    n = 0;
    const char *env = kf_getenv_or("KF_PROBLEMS_DIR", NULL);
    if (env) cands[n++] = env;
    else {
      cands[n++] = "problems";
      cands[n++] = KF_SOURCE_DIR "/problems";
    }
  }
  for (int i = 0; i < n; i++) {
    struct stat st;
    if (cands[i] && realpath(cands[i], m->problems) &&
        !stat(m->problems, &st) && S_ISDIR(st.st_mode))
      return;
  }
  m->problems[0] = '\0';
}

int kf_cli_mcp(int argc, char **argv) {
  mcp m;
  memset(&m, 0, sizeof m);
  kf_cli__remote_init(&m.remote);
  const char *problems = NULL;
  static const struct option opts[] = {
      {"coordinator", required_argument, 0, 'c'},
      KF_CLI__REMOTE_OPTIONS,
      {"problems", required_argument, 0, 'p'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  char **av = kf_cli__shift_argv(argc, argv, "kf mcp");
  if (!av) return KF_EXIT_FAIL;
  optind = 0;
  int c;
  while ((c = getopt_long(argc + 1, av, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'c': m.remote.target = optarg; break;
    case 'p': problems = optarg; break;
    case 'h':
      usage(stdout);
      free(av);
      return KF_EXIT_OK;
    default:
      if (!kf_cli__remote_opt(&m.remote, c, optarg)) {
        fprintf(stderr, "Run `kf mcp --help` for the options.\n");
        free(av);
        return KF_EXIT_USAGE;
      }
    }
  }
  if (optind < argc + 1) {
    fprintf(stderr, "kf mcp: unexpected argument '%s'\n", av[optind]);
    free(av);
    return KF_EXIT_USAGE;
  }
  free(av);
  pick_problems(&m, problems);
  if (problems && !m.problems[0]) {
    fprintf(stderr, "kf mcp: --problems %s: not a directory\n", problems);
    return KF_EXIT_USAGE;
  }
  if (!m.problems[0])
    logf_("no problems directory found; list_problems will say so "
          "(pass --problems DIR)");
  for (int i = 0; i < N_TOOLS; i++) {
    schemas[i] = cJSON_Parse(tools[i].schema);
    if (!schemas[i]) {
      fprintf(stderr, "kf mcp: internal error: schema of %s\n",
              tools[i].name);
      return KF_EXIT_FAIL;
    }
  }
  int rc = kf_cli__open(&m.remote, "kf mcp", &m.cli);
  if (rc) return rc;
  /* A client that closes the pipe must not kill us mid-write. */
  signal(SIGPIPE, SIG_IGN);
  if (kf_mcp_reader_init(&m.in, STDIN_FILENO, MAX_MESSAGE)) {
    kf_rpc_client_close(m.cli);
    return KF_EXIT_FAIL;
  }
  logf_("serving MCP on stdio; coordinator %s; problems %s", m.remote.target,
        m.problems[0] ? m.problems : "(none)");
  rc = KF_EXIT_OK;
  while (!m.out_closed) {
    if (m.queued) {
      char *line = m.queue[0];
      memmove(m.queue, m.queue + 1, (size_t)--m.queued * sizeof *m.queue);
      handle(&m, line, strlen(line));
      free(line);
      continue;
    }
    if (m.eof) break;
    char *line;
    size_t len;
    int r = kf_mcp_read_line(&m.in, -1, &line, &len);
    if (r == -1) break;
    if (r == KF_ETOOBIG) {
      char why[96];
      snprintf(why, sizeof why, "message longer than %u bytes: skipped",
               MAX_MESSAGE);
      reply_error(&m, NULL, KF_MCP_INVALID_REQUEST, why);
      continue;
    }
    if (r < 0) {
      logf_("reading stdin: %s", kf_strerror(r));
      rc = KF_EXIT_FAIL;
      break;
    }
    handle(&m, line, len);
  }
  if (m.out_closed) rc = KF_EXIT_FAIL;
  for (int i = 0; i < m.queued; i++) free(m.queue[i]);
  for (int i = 0; i < N_TOOLS; i++) cJSON_Delete(schemas[i]);
  kf_mcp_reader_free(&m.in);
  kf_rpc_client_close(m.cli);
  logf_("done");
  return rc;
}
