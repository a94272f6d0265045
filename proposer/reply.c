/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proposer/reply.c -- what a model's reply means: the kernel in a fenced
 * code block, the knob space in a ```json block (kf_llm_reply_parse).
 *
 * The reply is untrusted text: every failure is a reason, never a crash,
 * and nothing here decides what the kernel may do (the coordinator and the
 * harness do).  The knob rules are spec.json's (common/spec.h), checked
 * here so that a malformed declaration is a proposer failure with its
 * reason rather than a refused proposal.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "llm.h"

void kf_proposal_clear(kf_proposal *p) {
  free(p->source);
  memset(p, 0, sizeof *p);
}

typedef struct {
  const char *info;   /* the info string, up to info_len */
  size_t info_len;
  const char *body;
  size_t len;
} fence;

/* The next fenced block at or after *pos: a line starting with ``` (after
 * up to three spaces) opens it, the next line starting with ``` closes it.
 * false when there is none (an unclosed fence is none). */
static bool next_fence(const char **pos, fence *f) {
  const char *p = *pos;
  while (*p) {
    const char *line = p;
    const char *q = line;
    int sp = 0;
    while (*q == ' ' && sp < 3) q++, sp++;
    const char *eol = strchr(line, '\n');
    if (!eol) eol = line + strlen(line);
    if (strncmp(q, "```", 3) == 0) {
      q += 3;
      while (*q == '`') q++;
      while (*q == ' ' || *q == '\t') q++;
      f->info = q;
      const char *ie = q;
      while (ie < eol && *ie != ' ' && *ie != '\t' && *ie != '\r') ie++;
      f->info_len = (size_t)(ie - q);
      if (!*eol) return false;
      const char *b = eol + 1;
      for (const char *l = b; *l;) {
        const char *m = l;
        int s2 = 0;
        while (*m == ' ' && s2 < 3) m++, s2++;
        const char *e2 = strchr(l, '\n');
        if (strncmp(m, "```", 3) == 0) {
          f->body = b;
          f->len = (size_t)(l - b);
          *pos = e2 ? e2 + 1 : l + strlen(l);
          return true;
        }
        if (!e2) break;
        l = e2 + 1;
      }
      return false;
    }
    p = *eol ? eol + 1 : eol;
  }
  return false;
}

static bool info_is(const fence *f, const char *name) {
  return f->info_len == strlen(name) &&
         strncasecmp(f->info, name, f->info_len) == 0;
}

static bool info_is_code(const fence *f) {
  static const char *const langs[] = {"c",   "cuda", "cu", "cpp",
                                      "c++", "h",    "cc", NULL};
  if (f->info_len == 0) return true;
  for (int i = 0; langs[i]; i++)
    if (info_is(f, langs[i])) return true;
  return false;
}

/* One knob value as text: strings as they are, numbers as integers when
 * integral, else %g. */
static bool value_text(const cJSON *v, char *out, size_t len) {
  if (cJSON_IsString(v)) {
    if (strlen(v->valuestring) >= len) return false;
    snprintf(out, len, "%s", v->valuestring);
    return true;
  }
  if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
    double d = v->valuedouble;
    if (d == floor(d) && fabs(d) < 1e15) snprintf(out, len, "%.0f", d);
    else snprintf(out, len, "%g", d);
    return true;
  }
  return false;
}

static int add_knob(kf_proposal *out, const char *name, const cJSON *values,
                    char *err, size_t errlen) {
  if (out->n_knobs >= KF_SPEC_MAX_KNOBS) {
    snprintf(err, errlen, "knobs JSON: at most %d knobs", KF_SPEC_MAX_KNOBS);
    return KF_EPROTO;
  }
  if (!name || !kf_spec_knob_name_ok(name)) {
    snprintf(err, errlen, "knobs JSON: knob name '%.40s' must be a C"
             " identifier of 1..31 characters not starting with KF_",
             name ? name : "");
    return KF_EPROTO;
  }
  for (int i = 0; i < out->n_knobs; i++)
    if (strcmp(out->knobs[i].name, name) == 0) {
      snprintf(err, errlen, "knobs JSON: knob %s repeats", name);
      return KF_EPROTO;
    }
  int nv = cJSON_IsArray(values) ? cJSON_GetArraySize(values) : -1;
  if (nv < 1 || nv > KF_SPEC_MAX_KNOB_VALUES) {
    snprintf(err, errlen, "knobs JSON: knob %s needs an array of 1..%d"
             " values", name, KF_SPEC_MAX_KNOB_VALUES);
    return KF_EPROTO;
  }
  kf_spec_knob *k = &out->knobs[out->n_knobs];
  memset(k, 0, sizeof *k);
  snprintf(k->name, sizeof k->name, "%s", name);
  int i = 0;
  for (const cJSON *v = values->child; v; v = v->next, i++) {
    char t[64];
    if (!value_text(v, t, sizeof t) || !kf_spec_knob_value_ok(t)) {
      snprintf(err, errlen, "knobs JSON: %s[%d] must be a number or 1..23"
               " characters of [A-Za-z0-9_.+-]", name, i);
      return KF_EPROTO;
    }
    for (int j = 0; j < k->n_values; j++)
      if (strcmp(k->values[j], t) == 0) {
        snprintf(err, errlen, "knobs JSON: %s value %s repeats", name, t);
        return KF_EPROTO;
      }
    /* kf_spec_knob_value_ok: at most 23 characters, so it fits */
    memcpy(k->values[k->n_values++], t, strlen(t) + 1);
  }
  out->n_knobs++;
  return 0;
}

static int parse_knobs(const fence *f, kf_proposal *out, char *err,
                       size_t errlen) {
  cJSON *j = cJSON_ParseWithLength(f->body, f->len);
  if (!j) {
    snprintf(err, errlen, "knobs JSON: not valid JSON");
    return KF_EPROTO;
  }
  int rc = 0;
  if (!cJSON_IsObject(j)) {
    snprintf(err, errlen, "knobs JSON: must be an object with \"knobs\"");
    rc = KF_EPROTO;
    goto out;
  }
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
  if (name && !cJSON_IsNull(name)) {
    size_t n = cJSON_IsString(name) ? strlen(name->valuestring) : 0;
    bool ok = n > 0 && n < sizeof out->name;
    for (size_t i = 0; ok && i < n; i++) {
      char c = name->valuestring[i];
      ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    }
    if (!ok) {
      snprintf(err, errlen, "knobs JSON: name must be 1..63 characters of"
               " [A-Za-z0-9_.-]");
      rc = KF_EPROTO;
      goto out;
    }
    snprintf(out->name, sizeof out->name, "%s", name->valuestring);
  }
  const cJSON *knobs = cJSON_GetObjectItemCaseSensitive(j, "knobs");
  if (cJSON_IsObject(knobs)) {
    for (const cJSON *k = knobs->child; k && !rc; k = k->next)
      rc = add_knob(out, k->string, k, err, errlen);
  } else if (cJSON_IsArray(knobs)) {
    for (const cJSON *k = knobs->child; k && !rc; k = k->next) {
      const cJSON *kn = cJSON_GetObjectItemCaseSensitive(k, "name");
      rc = add_knob(out, cJSON_IsString(kn) ? kn->valuestring : NULL,
                    cJSON_GetObjectItemCaseSensitive(k, "values"), err,
                    errlen);
    }
  } else if (knobs) {
    snprintf(err, errlen, "knobs JSON: \"knobs\" must be an object"
             " {NAME: [values]} or an array of {name, values}");
    rc = KF_EPROTO;
  }
out:
  cJSON_Delete(j);
  return rc;
}

int kf_llm_reply_parse(const char *content, kf_proposal *out, char *err,
                       size_t errlen) {
  memset(out, 0, sizeof *out);
  err[0] = '\0';
  if (!content || !*content) {
    snprintf(err, errlen, "empty reply");
    return KF_EPROTO;
  }
  const char *pos = content;
  fence f, code = {0}, json = {0};
  bool have_code = false, have_json = false;
  while (next_fence(&pos, &f)) {
    if (!have_json && info_is(&f, "json")) {
      json = f;
      have_json = true;
    } else if (!have_code && info_is_code(&f)) {
      code = f;
      have_code = true;
    }
  }
  if (!have_code) {
    snprintf(err, errlen, "no fenced code block in the reply");
    return KF_EPROTO;
  }
  size_t n = code.len;
  while (n && (code.body[n - 1] == '\n' || code.body[n - 1] == '\r' ||
               code.body[n - 1] == ' ' || code.body[n - 1] == '\t'))
    n--;
  if (n == 0) {
    snprintf(err, errlen, "the code block is empty");
    return KF_EPROTO;
  }
  out->source = malloc(n + 2);
  if (!out->source) {
    snprintf(err, errlen, "out of memory");
    return KF_ENOMEM;
  }
  memcpy(out->source, code.body, n);
  out->source[n] = '\n';
  out->source[n + 1] = '\0';
  if (memchr(code.body, '\0', n)) { /* cannot happen with C strings */
    kf_proposal_clear(out);
    snprintf(err, errlen, "the code block holds a NUL byte");
    return KF_EPROTO;
  }
  int rc = have_json ? parse_knobs(&json, out, err, errlen) : 0;
  if (!rc) {
    for (int k = 0; k < out->n_knobs; k++)
      if (!strstr(out->source, out->knobs[k].name)) {
        snprintf(err, errlen, "knobs JSON: knob %s does not appear in the"
                 " code", out->knobs[k].name);
        rc = KF_EPROTO;
        break;
      }
  }
  if (rc) kf_proposal_clear(out);
  return rc;
}
