/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_common.c -- plumbing the remote subcommands share: argv for
 * getopt_long, where the coordinator is, the one error policy for rpc
 * failures (message + exit code), the campaign budget options, and turning
 * a problem directory into a CreateCampaign request.
 *
 * Error policy: every failure is reported once, here, as "CMD: what:
 * reason", and becomes an exit code of cli.h; callers only pass the code
 * on.  UNIMPLEMENTED from the coordinator (a server that predates an rpc)
 * gets a hint instead of a bare "internal error".
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_internal.h"
#include "err.h"
#include "profile.h"
#include "spec.h"
#include "text.h"
#include "token.h"
#include "util.h"

char **kf_cli__shift_argv(int argc, char **argv, const char *name) {
  char **av = calloc((size_t)argc + 2, sizeof *av);
  if (!av) return NULL;
  av[0] = (char *)name;
  for (int i = 0; i < argc; i++) av[i + 1] = argv[i];
  return av;
}

void kf_cli__remote_init(kf_cli__remote *r) {
  memset(r, 0, sizeof *r);
  r->target = kf_getenv_or("KF_COORDINATOR", "127.0.0.1:7070");
  r->token = kf_getenv_or("KF_TOKEN", NULL);
  r->token_file = kf_getenv_or("KF_TOKEN_FILE", NULL);
  r->tls_ca = kf_getenv_or("KF_TLS_CA", NULL);
  r->tls_cert = kf_getenv_or("KF_TLS_CERT", NULL);
  r->tls_key = kf_getenv_or("KF_TLS_KEY", NULL);
  r->json = false;
}

bool kf_cli__remote_opt(kf_cli__remote *r, int c, const char *arg) {
  switch (c) {
  case 0x200: r->token_file = arg; return true;
  case 0x201: r->tls_ca = arg; return true;
  case 0x202: r->tls_cert = arg; return true;
  case 0x203: r->tls_key = arg; return true;
  default: return false;
  }
}

int kf_cli__open(const kf_cli__remote *r, const char *cmd,
                 kf_rpc_client **cli) {
  char err[512];
  char *secret = NULL;
  const char *token = r->token;
  if (r->token_file && *r->token_file) {
    if (kf_token_read_file_alloc(r->token_file, &secret, err, sizeof err)) {
      fprintf(stderr, "%s: %s\n", cmd, err);
      return KF_EXIT_USAGE;
    }
    token = secret;
  }
  if (!token || !*token) {
    fprintf(stderr, "%s: no token: pass --token-file or set KF_TOKEN\n",
            cmd);
    return KF_EXIT_USAGE;
  }
  kf_rpc_tls tls = {.ca_file = r->tls_ca, .cert_file = r->tls_cert,
                    .key_file = r->tls_key};
  int rc = kf_rpc_client_open_tls(NULL, r->target, token, &tls, 64u << 20,
                                  cli, err, sizeof err);
  free(secret);
  if (rc) {
    fprintf(stderr, "%s: coordinator %s: %s\n", cmd, r->target, err);
    return KF_EXIT_UNAVAIL;
  }
  return 0;
}

const char *kf_cli__clean(const char *s, size_t max) {
  static char ring[8][1024];
  static unsigned next;
  char *b = ring[next++ % 8];
  size_t cap = max && max < sizeof ring[0] ? max + 1 : sizeof ring[0];
  kf_text_sanitize(s, s ? strlen(s) : 0, b, cap, 0);
  return b;
}

int kf_cli__exit_for(int rc) {
  switch (rc) {
  case 0: return KF_EXIT_OK;
  case KF_EUNAVAIL:
  case KF_EBUSY: /* a coordinator cap: try again later */
  case KF_ETIMEDOUT: return KF_EXIT_UNAVAIL;
  case KF_EINVAL:
  case KF_EAUTH:
  case KF_EPROTO:
  case KF_ENOTFOUND:
  case KF_ESTATE: /* a campaign that ended, a problem too big */
  case KF_ESPEC: return KF_EXIT_USAGE;
  default: return KF_EXIT_FAIL;
  }
}

int kf_cli__report(const char *cmd, const char *method, int rc,
                   const char *err) {
  if (rc == KF_EINTERNAL && strstr(err, "unknown method")) {
    fprintf(stderr,
            "%s: the coordinator does not serve %s (it predates campaigns);\n"
            "  run a kf-coordinator from the same build as this kf\n",
            cmd, method);
    return KF_EXIT_UNAVAIL;
  }
  /* The server's text may quote what someone else sent. */
  err = kf_cli__clean(err, 0);
  if (rc == KF_EUNAVAIL || rc == KF_ETIMEDOUT)
    fprintf(stderr, "%s: %s: coordinator unreachable: %s\n", cmd, method, err);
  else if (rc == KF_EAUTH)
    fprintf(stderr, "%s: %s: the coordinator refused the token (%s)\n", cmd,
            method, err);
  else
    fprintf(stderr, "%s: %s: %s: %s\n", cmd, method, kf_strerror(rc), err);
  return kf_cli__exit_for(rc);
}

int kf_cli__call(kf_rpc_client *cli, const char *cmd, const char *method,
                 const ProtobufCMessage *req,
                 const ProtobufCMessageDescriptor *resp_type, int timeout_ms,
                 ProtobufCMessage **resp) {
  char path[128], err[1024];
  snprintf(path, sizeof path, "/kernelfleet.Coordinator/%s", method);
  *resp = NULL;
  int rc = kf_rpc_client_call_sync(cli, path, req, resp_type, timeout_ms, resp,
                                   err, sizeof err);
  return rc ? kf_cli__report(cmd, method, rc, err) : 0;
}

/* ------------------------------------------------------------ budget -- */

static int parse_u32(const char *arg, uint64_t lo, uint64_t hi, uint32_t *out,
                     const char *opt, const char *cmd) {
  uint64_t v;
  if (kf_parse_u64(arg, &v) || v < lo || v > hi) {
    fprintf(stderr, "%s: %s '%s': expected %llu..%llu\n", cmd, opt, arg,
            (unsigned long long)lo, (unsigned long long)hi);
    return KF_EXIT_USAGE;
  }
  *out = (uint32_t)v;
  return 0;
}

int kf_cli__budget_opt(kf_cli__budget *b, int c, const char *arg,
                       const char *cmd) {
  uint32_t v;
  switch (c) {
  case 0x100: return parse_u32(arg, 1, 1000000, &b->evals, "--evals", cmd);
  case 0x101:
    if (parse_u32(arg, 1, 10080, &v, "--minutes", cmd)) return KF_EXIT_USAGE;
    b->seconds = v * 60;
    return 0;
  case 0x102:
    return parse_u32(arg, 1, 10000, &b->population, "--population", cmd);
  case 0x103:
    if (kf_parse_u64(arg, &b->seed)) {
      fprintf(stderr, "%s: --seed '%s': expected an integer\n", cmd, arg);
      return KF_EXIT_USAGE;
    }
    return 0;
  case 0x104: return parse_u32(arg, 1, 1000000, &b->plateau, "--plateau", cmd);
  case 0x105: {
    char *end;
    double f = strtod(arg, &end);
    if (end == arg || *end || !(f > 0.0 && f <= KF_TARGET_ROOFLINE_MAX)) {
      fprintf(stderr, "%s: --target-roofline '%s': expected 0 < F <= %g\n",
              cmd, arg, KF_TARGET_ROOFLINE_MAX);
      return KF_EXIT_USAGE;
    }
    b->target_roofline = f;
    return 0;
  }
  case 0x106: b->name = arg; return 0;
  case 0x107: b->fresh = true; return 0;
  case 0x108: return parse_u32(arg, 1, 64, &b->showdown, "--showdown", cmd);
  case 0x109: {
    int k;
    if (kf_prof_policy_parse(arg, &k) != 0) {
      fprintf(stderr, "%s: --profile '%s': expected all, none or top:K (K "
              "1..999)\n", cmd, arg);
      return KF_EXIT_USAGE;
    }
    b->profile = arg;
    return 0;
  }
  default: return KF_EXIT_USAGE;
  }
}

/* ----------------------------------------------------------- problem -- */

int kf_cli__load_problem(const char *dir, const char *cmd, kf_spec **out) {
  char err[1024];
  int rc = kf_spec_load_dir(dir, out, err, sizeof err);
  if (rc == 0) return 0;
  (void)dir; /* the spec module's text names the file */
  fprintf(stderr, "%s: %s\n", cmd, err);
  return rc == KF_ENOMEM ? KF_EXIT_FAIL : KF_EXIT_USAGE;
}

int kf_cli__campaign_problem(const kf_spec *spec, const char *dir,
                             const char *cmd) {
  if (spec->n_templates > 0) return 0;
  /* a spec may have none (a problem only checked or timed); the search
   * breeds templates' knobs and proposals start from them */
  fprintf(stderr, "%s: %s/spec.json: templates: none; a campaign searches "
          "a problem's templates, so it needs at least one (to evaluate "
          "one kernel: kf-harness eval-files --spec %s --source FILE)\n",
          cmd, dir, dir);
  return KF_EXIT_USAGE;
}

static Kernelfleet__DeviceKind backend_kind(const kf_spec *s) {
  const char *backend = s->backend;
  if (!strcmp(backend, "torch")) /* PyTorch runs on the spec's device */
    backend = s->torch_device;
  if (!strcmp(backend, "cuda")) return KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA;
  if (!strcmp(backend, "cpu")) return KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  return KERNELFLEET__DEVICE_KIND__DEVICE_KIND_UNSPECIFIED;
}

int kf_cli__create_campaign_rpc(kf_rpc_client *cli, const kf_spec *s,
                                const kf_cli__budget *b, int64_t *id,
                                char *err, size_t errlen) {
  *id = 0;
  /* One block for every array the request points into; the strings stay
   * the spec's. */
  int nt = s->n_templates;
  Kernelfleet__TemplateSource tmpl[KF_SPEC_MAX_TEMPLATES];
  Kernelfleet__TemplateSource *tmpl_p[KF_SPEC_MAX_TEMPLATES];
  Kernelfleet__KnobSpace knob[KF_SPEC_MAX_TEMPLATES][KF_SPEC_MAX_KNOBS];
  Kernelfleet__KnobSpace *knob_p[KF_SPEC_MAX_TEMPLATES][KF_SPEC_MAX_KNOBS];
  char *vals[KF_SPEC_MAX_TEMPLATES][KF_SPEC_MAX_KNOBS][KF_SPEC_MAX_KNOB_VALUES];
  for (int t = 0; t < nt; t++) {
    const kf_spec_template *st = &s->templates[t];
    kernelfleet__template_source__init(&tmpl[t]);
    tmpl[t].name = (char *)st->name;
    tmpl[t].file = (char *)st->file;
    tmpl[t].source = st->source ? st->source : "";
    for (int k = 0; k < st->n_knobs; k++) {
      kernelfleet__knob_space__init(&knob[t][k]);
      knob[t][k].name = (char *)st->knobs[k].name;
      for (int v = 0; v < st->knobs[k].n_values; v++)
        vals[t][k][v] = (char *)st->knobs[k].values[v];
      knob[t][k].values = vals[t][k];
      knob[t][k].n_values = (size_t)st->knobs[k].n_values;
      knob_p[t][k] = &knob[t][k];
    }
    tmpl[t].knobs = knob_p[t];
    tmpl[t].n_knobs = (size_t)st->n_knobs;
    tmpl_p[t] = &tmpl[t];
  }
  Kernelfleet__CreateCampaignRequest req =
      KERNELFLEET__CREATE_CAMPAIGN_REQUEST__INIT;
  req.name = (char *)(b->name ? b->name : s->name);
  req.problem = (char *)s->name;
  req.spec_json.data = (uint8_t *)s->json;
  req.spec_json.len = s->json_len;
  req.reference_source = s->reference_source ? s->reference_source : "";
  req.templates = tmpl_p;
  req.n_templates = (size_t)nt;
  req.backend = backend_kind(s);
  req.language = !strcmp(s->backend, "torch") ? "python"
                 : req.backend == KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA
                     ? "cuda" : "c";
  req.budget_evals = b->evals;
  req.budget_seconds = b->seconds;
  req.population = b->population;
  req.plateau_evals = b->plateau;
  req.target_roofline = b->target_roofline;
  req.search_seed = b->seed;
  req.fresh = b->fresh;
  req.showdown_top = b->showdown;
  req.device_class = (char *)(b->device_class ? b->device_class : "");
  req.profile = (char *)(b->profile ? b->profile : "");
  ProtobufCMessage *resp = NULL;
  int rc = kf_rpc_client_call_sync(
      cli, "/kernelfleet.Coordinator/CreateCampaign", &req.base,
      &kernelfleet__create_campaign_response__descriptor, 60000, &resp, err,
      errlen);
  if (rc) return rc;
  *id = ((Kernelfleet__CreateCampaignResponse *)resp)->campaign_id;
  kf_rpc_free(resp);
  if (*id <= 0)
    return kf_seterr(KF_EPROTO, err, errlen,
                     "the coordinator returned no campaign id");
  return 0;
}

int kf_cli__create_campaign(kf_rpc_client *cli, const char *cmd,
                            const kf_spec *s, const kf_cli__budget *b,
                            int64_t *id) {
  char err[1024];
  int rc = kf_cli__create_campaign_rpc(cli, s, b, id, err, sizeof err);
  if (rc == KF_EPROTO && *id <= 0) {
    fprintf(stderr, "%s: CreateCampaign: %s\n", cmd, err);
    return KF_EXIT_FAIL;
  }
  return rc ? kf_cli__report(cmd, "CreateCampaign", rc, err) : 0;
}

void kf_cli__sb_printf(kf_cli__sbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0,
                      fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->oom = true;
      return;
    }
    if (b->p && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
    char *q = realloc(b->p, cap);
    if (!q) {
      b->oom = true;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
}
