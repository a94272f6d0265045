/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/spec.c -- reads and checks problem specs (problems/README.md is
 * the format's documentation; common/spec.h the API).
 *
 * A spec is the contract a candidate is judged by, so this file is strict
 * on purpose: every field is typed, unknown and duplicate keys are refused
 * (a misspelt "tolerence" must not silently fall back to a default), names
 * are C identifiers, knob names and values cannot escape a -DNAME=value
 * argument, file names cannot leave the problem directory, and every
 * expression is evaluated at every declared size before the spec is
 * accepted, so no later stage meets a zero dimension, an overflowing byte
 * count or an unknown param.
 *
 * Errors: the first problem found is reported as "FILE: FIELD: reason"
 * (FIELD is a path such as "templates[1].knobs[0].values") and the call
 * returns KF_ESPEC with nothing allocated.  No state; reentrant; the only
 * blocking calls are the file reads of kf_spec_load_dir.
 */
#include "spec.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h> /* isnan, isinf, isfinite: macros, no libm */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "err.h"
#include "spec_internal.h"
#include "text.h"
#include "util.h"

#define SPEC_MAX_SOURCE (1u << 20)  /* bytes per reference/template file */
#define SPEC_MAX_SIZE_VALUE (INT64_C(1) << 40)
#define SPEC_MAX_TENSOR_BYTES (INT64_C(1) << 40)

typedef struct {
  const char *file; /* spec file as named in messages */
  const char *dir;  /* NULL: do not read sources */
  kf_spec *s;
  char *err;
  size_t errlen;
} ctx;

/* "FILE: FIELD: reason".  Always returns KF_ESPEC. */
__attribute__((format(printf, 3, 4))) static int bad(ctx *c,
                                                     const char *field,
                                                     const char *fmt, ...) {
  char why[512], safe[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  /* a reason may quote the spec's own text (a name refused): printed to
   * a terminal it is display-safe, its escapes dropped (red team
   * 2026-12-02-s3-prob, L1) */
  kf_text_sanitize(why, strlen(why), safe, sizeof safe, 0);
  return kf_seterr(KF_ESPEC, c->err, c->errlen, "%s: %s: %s", c->file,
                   field, safe);
}

/* Field paths are built by these two; a path too long for its buffer is
 * cut short, which only shortens a message.  noinline keeps GCC's
 * truncation analysis from flagging that deliberate cut. */
__attribute__((noinline)) static void join(char *dst, size_t n,
                                           const char *path,
                                           const char *key) {
  if (path && *path)
    snprintf(dst, n, "%s.%s", path, key);
  else
    snprintf(dst, n, "%s", key);
}

__attribute__((noinline)) static void index_of(char *dst, size_t n,
                                               const char *path, int i) {
  snprintf(dst, n, "%s[%d]", path, i);
}

static const char *json_kind(const cJSON *v) {
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  if (cJSON_IsArray(v)) return "an array";
  if (cJSON_IsObject(v)) return "an object";
  return "invalid";
}

/* ---- names and tables ---------------------------------------------- */

static const char *const dtype_names[] = {
#define XX(e, s, b) s,
    KF_DTYPE_MAP(XX)
#undef XX
};
static const size_t dtype_sizes[] = {
#define XX(e, s, b) b,
    KF_DTYPE_MAP(XX)
#undef XX
};
static const char *const dist_names[] = {
#define XX(e, s, m) s,
    KF_DIST_MAP(XX)
#undef XX
};

const char *kf_dtype_name(kf_dtype d) {
  return (unsigned)d < KF_DT_COUNT ? dtype_names[d] : "?";
}

size_t kf_dtype_size(kf_dtype d) {
  return (unsigned)d < KF_DT_COUNT ? dtype_sizes[d] : 0;
}

bool kf_dtype_exact(kf_dtype d) {
  return d == KF_DT_I32 || d == KF_DT_I64 || d == KF_DT_BOOL;
}

const char *kf_dist_name(kf_dist d) {
  return (unsigned)d < KF_DIST_COUNT ? dist_names[d] : "?";
}

int kf_dtype_parse(const char *name, kf_dtype *out) {
  for (int i = 0; i < KF_DT_COUNT; i++)
    if (name && strcmp(name, dtype_names[i]) == 0) {
      *out = (kf_dtype)i;
      return 0;
    }
  return KF_ESPEC;
}

int kf_dist_parse(const char *name, kf_dist *out) {
  for (int i = 0; i < KF_DIST_COUNT; i++)
    if (name && strcmp(name, dist_names[i]) == 0) {
      *out = (kf_dist)i;
      return 0;
    }
  return KF_ESPEC;
}


static void list_names(char *buf, size_t n, const char *const *names,
                       int count) {
  size_t off = 0;
  buf[0] = '\0';
  for (int i = 0; i < count && off < n; i++)
    off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? ", " : "",
                            names[i]);
}

static bool is_ident(const char *s, size_t max) {
  size_t n = strlen(s);
  if (n == 0 || n > max) return false;
  if (!(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') ||
        (s[0] >= 'a' && s[0] <= 'z')))
    return false;
  for (size_t i = 1; i < n; i++) {
    char ch = s[i];
    if (!(ch == '_' || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
          (ch >= '0' && ch <= '9')))
      return false;
  }
  return true;
}

/* [A-Za-z0-9_] plus EXTRA. */
static bool is_token(const char *s, size_t max, const char *extra) {
  size_t n = strlen(s);
  if (n == 0 || n > max) return false;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    bool ok = ch == '_' || (ch >= 'A' && ch <= 'Z') ||
              (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              (ch && strchr(extra, ch));
    if (!ok) return false;
  }
  return true;
}

bool kf_spec_knob_name_ok(const char *name) {
  return name && is_ident(name, 31) && strncmp(name, "KF_", 3) != 0;
}

bool kf_spec_knob_value_ok(const char *value) {
  return value && is_token(value, 23, ".+-");
}

/* ---- typed field access --------------------------------------------- */

/* Refuses keys outside ALLOWED (NULL-terminated) and keys given twice:
 * cJSON keeps duplicates and would silently use the first. */
static int check_keys(ctx *c, const cJSON *obj, const char *path,
                      const char *const *allowed) {
  if (!cJSON_IsObject(obj))
    return bad(c, *path ? path : "(top level)", "must be an object, not %s",
               json_kind(obj));
  for (const cJSON *k = obj->child; k; k = k->next) {
    bool known = false;
    for (int i = 0; allowed[i]; i++)
      if (strcmp(k->string, allowed[i]) == 0) known = true;
    char field[192];
    join(field, sizeof field, path, k->string);
    if (!known) {
      char list[512];
      int n = 0;
      while (allowed[n]) n++;
      list_names(list, sizeof list, allowed, n);
      return bad(c, field, "unknown field (expected one of %s)", list);
    }
    for (const cJSON *p = obj->child; p != k; p = p->next)
      if (strcmp(p->string, k->string) == 0)
        return bad(c, field, "given twice");
  }
  return 0;
}

/* String member KEY of OBJ into dst.  Missing: error when required, else
 * dst = "". */
static int get_str(ctx *c, const cJSON *obj, const char *path,
                   const char *key, char *dst, size_t dstlen, bool required) {
  char field[192];
  join(field, sizeof field, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  dst[0] = '\0';
  if (!v) return required ? bad(c, field, "missing (required)") : 0;
  if (!cJSON_IsString(v))
    return bad(c, field, "must be a string, not %s", json_kind(v));
  if (strlen(v->valuestring) >= dstlen)
    return bad(c, field, "too long (at most %zu characters)", dstlen - 1);
  kf_strlcpy(dst, v->valuestring, dstlen);
  return 0;
}

static int get_bool(ctx *c, const cJSON *obj, const char *path,
                    const char *key, bool *out) {
  char field[192];
  join(field, sizeof field, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = false;
  if (!v) return 0;
  if (!cJSON_IsBool(v))
    return bad(c, field, "must be true or false, not %s", json_kind(v));
  *out = cJSON_IsTrue(v);
  return 0;
}

/* An integral JSON number in [lo, hi]. */
static int as_int(ctx *c, const cJSON *v, const char *field, int64_t lo,
                  int64_t hi, int64_t *out) {
  if (!cJSON_IsNumber(v))
    return bad(c, field, "must be an integer, not %s", json_kind(v));
  double d = v->valuedouble;
  if (!isfinite(d) || d < -9007199254740992.0 || d > 9007199254740992.0 ||
      d != (double)(int64_t)d)
    return bad(c, field, "must be an integer, not %g", d);
  if (d < (double)lo || d > (double)hi)
    return bad(c, field, "must be between %lld and %lld (got %.0f)",
               (long long)lo, (long long)hi, d);
  *out = (int64_t)d;
  return 0;
}

static int get_array(ctx *c, const cJSON *obj, const char *path,
                     const char *key, const cJSON **out, bool required) {
  char field[192];
  join(field, sizeof field, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = v;
  if (!v) return required ? bad(c, field, "missing (required)") : 0;
  if (!cJSON_IsArray(v))
    return bad(c, field, "must be an array, not %s", json_kind(v));
  return 0;
}

/* Checks syntax and names of an expression field. */
static int check_expr(ctx *c, const char *field, const char *expr) {
  char why[384];
  int64_t dummy;
  if (kf_spec__expr(expr, (const char(*)[32])c->s->params, c->s->n_params,
                    NULL, &dummy, why, sizeof why))
    return bad(c, field, "%s", why);
  return 0;
}

static int get_expr(ctx *c, const cJSON *obj, const char *path,
                    const char *key, char *dst, size_t dstlen) {
  int rc = get_str(c, obj, path, key, dst, dstlen, true);
  if (rc) return rc;
  char field[192];
  join(field, sizeof field, path, key);
  return check_expr(c, field, dst);
}

/* A file next to spec.json: a plain name, so a spec cannot make the
 * loader read outside its own directory. */
static int get_file(ctx *c, const cJSON *obj, const char *path,
                    const char *key, char *dst, size_t dstlen) {
  int rc = get_str(c, obj, path, key, dst, dstlen, true);
  if (rc) return rc;
  char field[192];
  join(field, sizeof field, path, key);
  if (!is_token(dst, dstlen - 1, ".-") || dst[0] == '.')
    return bad(c, field,
               "'%s' is not a plain file name in the problem directory "
               "(letters, digits, _ . -; no '/', not starting with '.')",
               dst);
  const char *ext = strrchr(dst, '.');
  const char *want = strcmp(c->s->backend, "cuda") == 0    ? ".cu"
                     : strcmp(c->s->backend, "torch") == 0 ? ".py"
                                                           : ".c";
  if (!ext || strcmp(ext, want) != 0)
    return bad(c, field, "'%s' must end in %s for backend %s", dst, want,
               c->s->backend);
  return 0;
}

/* A file of a problem is a regular file inside its directory.  A FIFO
 * named as the reference blocked the reader for ever, and a link to
 * /etc/passwd was read, and its text shown in the compile error (and sent
 * with the campaign), from a problem directory downloaded from elsewhere
 * (red team, 2026-11-30).  0, or why not in why. */
static int inside_file(const char *dir, const char *path, char *why,
                       size_t whylen) {
  char rdir[PATH_MAX], rpath[PATH_MAX];
  if (!realpath(dir, rdir) || !realpath(path, rpath)) {
    snprintf(why, whylen, "%.400s: %s", path, strerror(errno));
    return -1;
  }
  size_t n = strlen(rdir);
  if (strncmp(rpath, rdir, n) != 0 || (rpath[n] != '/' && n > 1)) {
    snprintf(why, whylen, "%.400s leads outside the problem directory (to %.400s): "
             "a problem's files must be inside it", path, rpath);
    return -1;
  }
  struct stat st;
  if (stat(rpath, &st) != 0) {
    snprintf(why, whylen, "%.400s: %s", path, strerror(errno));
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(why, whylen, "%.400s is not a regular file (%s)", path,
             S_ISDIR(st.st_mode)    ? "a directory"
             : S_ISFIFO(st.st_mode) ? "a FIFO"
                                    : "a device or socket");
    return -1;
  }
  return 0;
}

static int read_source(ctx *c, const char *field, const char *file,
                       char **out) {
  *out = NULL;
  if (!c->dir) return 0;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", c->dir, file);
  char why[1200];
  if (inside_file(c->dir, path, why, sizeof why))
    return bad(c, field, "cannot read: %s", why);
  int rc = kf_read_file(path, SPEC_MAX_SOURCE, out, NULL, why, sizeof why);
  if (rc == KF_ENOMEM) return kf_seterr(rc, c->err, c->errlen, "%s", why);
  if (rc) return bad(c, field, "cannot read: %s", why);
  return 0;
}

/* ---- sections -------------------------------------------------------- */

static int parse_params(ctx *c, const cJSON *root) {
  const cJSON *arr;
  int rc = get_array(c, root, "", "params", &arr, true);
  if (rc) return rc;
  int n = cJSON_GetArraySize(arr);
  if (n < 1 || n > KF_SPEC_MAX_PARAMS)
    return bad(c, "params", "needs 1 to %d names (got %d)",
               KF_SPEC_MAX_PARAMS, n);
  int i = 0;
  for (const cJSON *v = arr->child; v; v = v->next, i++) {
    char field[64];
    index_of(field, sizeof field, "params", i);
    if (!cJSON_IsString(v))
      return bad(c, field, "must be a string, not %s", json_kind(v));
    if (!is_ident(v->valuestring, 31))
      return bad(c, field, "'%s' is not a C identifier of at most 31 chars",
                 v->valuestring);
    for (int j = 0; j < i; j++)
      if (strcmp(c->s->params[j], v->valuestring) == 0)
        return bad(c, field, "duplicate param '%s'", v->valuestring);
    kf_strlcpy(c->s->params[i], v->valuestring, sizeof c->s->params[i]);
  }
  c->s->n_params = n;
  return 0;
}

static bool tensor_name_taken(const kf_spec *s, const char *name,
                              const kf_spec_tensor *self) {
  for (int i = 0; i < s->n_inputs; i++)
    if (&s->inputs[i] != self && strcmp(s->inputs[i].name, name) == 0)
      return true;
  for (int i = 0; i < s->n_outputs; i++)
    if (&s->outputs[i] != self && strcmp(s->outputs[i].name, name) == 0)
      return true;
  return false;
}

static int parse_tensor(ctx *c, const cJSON *obj, const char *path,
                        bool input, kf_spec_tensor *t) {
  static const char *const in_keys[] = {"name", "dtype", "shape", "dists",
                                        "range", NULL};
  static const char *const out_keys[] = {"name", "dtype", "shape", NULL};
  int rc = check_keys(c, obj, path, input ? in_keys : out_keys);
  if (rc) return rc;
  char field[192];

  if ((rc = get_str(c, obj, path, "name", t->name, sizeof t->name, true)))
    return rc;
  join(field, sizeof field, path, "name");
  if (!is_ident(t->name, 31))
    return bad(c, field, "'%s' is not a C identifier of at most 31 chars",
               t->name);
  if (tensor_name_taken(c->s, t->name, t))
    return bad(c, field, "duplicate tensor name '%s'", t->name);

  char dt[16];
  if ((rc = get_str(c, obj, path, "dtype", dt, sizeof dt, true))) return rc;
  join(field, sizeof field, path, "dtype");
  if (kf_dtype_parse(dt, &t->dtype)) {
    char list[128];
    list_names(list, sizeof list, dtype_names, KF_DT_COUNT);
    return bad(c, field, "unknown dtype '%s' (expected one of %s)", dt, list);
  }

  const cJSON *shape;
  if ((rc = get_array(c, obj, path, "shape", &shape, true))) return rc;
  join(field, sizeof field, path, "shape");
  int nd = cJSON_GetArraySize(shape);
  if (nd < 1 || nd > KF_SPEC_MAX_DIMS)
    return bad(c, field, "needs 1 to %d dimensions (got %d)",
               KF_SPEC_MAX_DIMS, nd);
  int i = 0;
  for (const cJSON *v = shape->child; v; v = v->next, i++) {
    char dimf[200];
    index_of(dimf, sizeof dimf, field, i);
    /* A bare integer is as good as the string "4". */
    if (cJSON_IsNumber(v)) {
      int64_t n;
      if ((rc = as_int(c, v, dimf, 1, SPEC_MAX_SIZE_VALUE, &n))) return rc;
      snprintf(t->shape[i], sizeof t->shape[i], "%lld", (long long)n);
      continue;
    }
    if (!cJSON_IsString(v))
      return bad(c, dimf, "must be an expression string, not %s",
                 json_kind(v));
    if (strlen(v->valuestring) >= sizeof t->shape[i])
      return bad(c, dimf, "too long (at most %zu characters)",
                 sizeof t->shape[i] - 1);
    kf_strlcpy(t->shape[i], v->valuestring, sizeof t->shape[i]);
    if ((rc = check_expr(c, dimf, t->shape[i]))) return rc;
  }
  t->ndim = nd;
  if (!input) return 0;

  const cJSON *dists;
  if ((rc = get_array(c, obj, path, "dists", &dists, true))) return rc;
  join(field, sizeof field, path, "dists");
  int n = cJSON_GetArraySize(dists);
  if (n < 1 || n > KF_SPEC_MAX_DISTS)
    return bad(c, field, "needs 1 to %d distributions (got %d)",
               KF_SPEC_MAX_DISTS, n);
  bool has_index = false;
  i = 0;
  for (const cJSON *v = dists->child; v; v = v->next, i++) {
    char df[200];
    index_of(df, sizeof df, field, i);
    if (!cJSON_IsString(v))
      return bad(c, df, "must be a string, not %s", json_kind(v));
    kf_dist d;
    if (kf_dist_parse(v->valuestring, &d)) {
      char list[160];
      list_names(list, sizeof list, dist_names, KF_DIST_COUNT);
      return bad(c, df, "unknown distribution '%s' (expected one of %s)",
                 v->valuestring, list);
    }
    for (int j = 0; j < i; j++)
      if (t->dists[j] == d)
        return bad(c, df, "distribution '%s' listed twice", v->valuestring);
    if (d == KF_DIST_INDEX) has_index = true;
    if (d != KF_DIST_SAMPLE && kf_dtype_exact(t->dtype) != (d == KF_DIST_INDEX))
      return bad(c, df,
                 "'%s' does not fit dtype %s: integer tensors take only "
                 "'index' or 'sample', floating tensors anything but "
                 "'index'",
                 v->valuestring, kf_dtype_name(t->dtype));
    t->dists[i] = d;
  }
  t->n_dists = n;

  join(field, sizeof field, path, "range");
  const cJSON *range = cJSON_GetObjectItemCaseSensitive(obj, "range");
  if (has_index && !range)
    return bad(c, field, "missing: distribution 'index' needs a range "
                         "expression (values are drawn from [0, range))");
  if (!has_index && range)
    return bad(c, field, "only meaningful with distribution 'index'");
  if (range) return get_expr(c, obj, path, "range", t->range, sizeof t->range);
  return 0;
}

static int parse_tensors(ctx *c, const cJSON *root, const char *key,
                         bool input) {
  const cJSON *arr;
  int rc = get_array(c, root, "", key, &arr, true);
  if (rc) return rc;
  int n = cJSON_GetArraySize(arr);
  if (n < 1 || n > KF_SPEC_MAX_TENSORS)
    return bad(c, key, "needs 1 to %d tensors (got %d)", KF_SPEC_MAX_TENSORS,
               n);
  kf_spec_tensor *ts = input ? c->s->inputs : c->s->outputs;
  int *count = input ? &c->s->n_inputs : &c->s->n_outputs;
  int i = 0;
  for (const cJSON *v = arr->child; v; v = v->next, i++) {
    char path[64];
    index_of(path, sizeof path, key, i);
    *count = i + 1; /* visible to the duplicate-name check */
    if ((rc = parse_tensor(c, v, path, input, &ts[i]))) return rc;
  }
  return 0;
}

static int parse_size(ctx *c, const cJSON *obj, const char *path,
                      kf_size *out) {
  if (!cJSON_IsObject(obj))
    return bad(c, path, "must be an object of param values, not %s",
               json_kind(obj));
  for (const cJSON *k = obj->child; k; k = k->next) {
    char field[192];
    join(field, sizeof field, path, k->string);
    int idx = -1;
    for (int i = 0; i < c->s->n_params; i++)
      if (strcmp(c->s->params[i], k->string) == 0) idx = i;
    if (idx < 0) {
      char list[300];
      const char *names[KF_SPEC_MAX_PARAMS];
      for (int i = 0; i < c->s->n_params; i++) names[i] = c->s->params[i];
      list_names(list, sizeof list, names, c->s->n_params);
      return bad(c, field, "unknown param '%s' (params: %s)", k->string,
                 list);
    }
    for (const cJSON *p = obj->child; p != k; p = p->next)
      if (strcmp(p->string, k->string) == 0)
        return bad(c, field, "given twice");
    int rc = as_int(c, k, field, 1, SPEC_MAX_SIZE_VALUE, &out->v[idx]);
    if (rc) return rc;
  }
  for (int i = 0; i < c->s->n_params; i++)
    if (!cJSON_GetObjectItemCaseSensitive(obj, c->s->params[i]))
      return bad(c, path, "missing param '%s'", c->s->params[i]);
  return 0;
}

static int parse_sizes(ctx *c, const cJSON *root) {
  static const char *const keys[] = {"check", "bench", NULL};
  const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "sizes");
  if (!obj) return bad(c, "sizes", "missing (required)");
  int rc = check_keys(c, obj, "sizes", keys);
  if (rc) return rc;
  const cJSON *check;
  if ((rc = get_array(c, obj, "sizes", "check", &check, true))) return rc;
  int n = cJSON_GetArraySize(check);
  if (n < 1)
    return bad(c, "sizes.check",
               "empty: the correctness sweep needs at least one size");
  if (n > KF_SPEC_MAX_SIZES)
    return bad(c, "sizes.check", "at most %d sizes (got %d)",
               KF_SPEC_MAX_SIZES, n);
  int i = 0;
  for (const cJSON *v = check->child; v; v = v->next, i++) {
    char path[64];
    index_of(path, sizeof path, "sizes.check", i);
    if ((rc = parse_size(c, v, path, &c->s->check_sizes[i]))) return rc;
    for (int j = 0; j < i; j++)
      if (memcmp(&c->s->check_sizes[j], &c->s->check_sizes[i],
                 sizeof(kf_size)) == 0)
        return bad(c, path, "same size as sizes.check[%d]", j);
  }
  c->s->n_check_sizes = n;
  const cJSON *bench = cJSON_GetObjectItemCaseSensitive(obj, "bench");
  if (!bench) return bad(c, "sizes.bench", "missing (required)");
  if (!cJSON_IsArray(bench))
    return parse_size(c, bench, "sizes.bench", &c->s->bench_size);
  /* a list: every size timed, the time their geometric mean (GPU MODE
   * ranks a submission so over its benchmarks) */
  n = cJSON_GetArraySize(bench);
  if (n < 1 || n > KF_SPEC_MAX_BENCH)
    return bad(c, "sizes.bench", "a list of 1 to %d sizes (got %d); one "
               "size may also be given as an object", KF_SPEC_MAX_BENCH, n);
  i = 0;
  for (const cJSON *v = bench->child; v; v = v->next, i++) {
    char path[64];
    index_of(path, sizeof path, "sizes.bench", i);
    kf_size *z = i ? &c->s->bench_more[i - 1] : &c->s->bench_size;
    if ((rc = parse_size(c, v, path, z))) return rc;
    for (int j = 0; j < i; j++)
      if (!memcmp(kf_spec_bench(c->s, j), z, sizeof *z))
        return bad(c, path, "same size as sizes.bench[%d]", j);
    c->s->n_bench_more = i;
  }
  return 0;
}

static int parse_tolerance(ctx *c, const cJSON *root) {
  const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
  if (!obj) return bad(c, "tolerance", "missing (required)");
  const char *keys[KF_DT_COUNT + 1];
  for (int i = 0; i < KF_DT_COUNT; i++) keys[i] = dtype_names[i];
  keys[KF_DT_COUNT] = NULL;
  int rc = check_keys(c, obj, "tolerance", keys);
  if (rc) return rc;
  static const char *const tol_keys[] = {"rtol", "atol", NULL};
  bool seen[KF_DT_COUNT] = {false};
  for (const cJSON *k = obj->child; k; k = k->next) {
    char path[64];
    join(path, sizeof path, "tolerance", k->string);
    kf_dtype dt = KF_DT_F32;
    kf_dtype_parse(k->string, &dt); /* check_keys made sure it is known */
    bool used = false;
    for (int i = 0; i < c->s->n_outputs; i++)
      if (c->s->outputs[i].dtype == dt) used = true;
    if (!used) return bad(c, path, "no output has dtype %s", k->string);
    if ((rc = check_keys(c, k, path, tol_keys))) return rc;
    double vals[2];
    for (int j = 0; j < 2; j++) {
      char field[96];
      join(field, sizeof field, path, tol_keys[j]);
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(k, tol_keys[j]);
      if (!v) return bad(c, field, "missing (required)");
      if (!cJSON_IsNumber(v))
        return bad(c, field, "must be a number, not %s", json_kind(v));
      vals[j] = v->valuedouble;
      if (!isfinite(vals[j]) || vals[j] < 0)
        return bad(c, field, "must be finite and >= 0 (got %g)", vals[j]);
    }
    if (vals[0] >= 1)
      return bad(c, path,
                 "rtol %g accepts any answer within 100%%; must be < 1",
                 vals[0]);
    c->s->tol[dt] = (kf_tol){.rtol = vals[0], .atol = vals[1]};
    seen[dt] = true;
  }
  for (int i = 0; i < c->s->n_outputs; i++)
    if (!seen[c->s->outputs[i].dtype])
      return bad(c, "tolerance", "no entry for dtype %s of outputs[%d] (%s)",
                 kf_dtype_name(c->s->outputs[i].dtype), i,
                 c->s->outputs[i].name);
  return 0;
}

static int parse_knob(ctx *c, const cJSON *obj, const char *path,
                      kf_spec_template *t, int idx) {
  static const char *const keys[] = {"name", "values", NULL};
  int rc = check_keys(c, obj, path, keys);
  if (rc) return rc;
  kf_spec_knob *k = &t->knobs[idx];
  if ((rc = get_str(c, obj, path, "name", k->name, sizeof k->name, true)))
    return rc;
  char field[192];
  join(field, sizeof field, path, "name");
  if (!kf_spec_knob_name_ok(k->name))
    return bad(c, field,
               "'%s' is not a C identifier of at most 31 chars outside the "
               "reserved KF_ prefix",
               k->name);
  for (int j = 0; j < idx; j++)
    if (strcmp(t->knobs[j].name, k->name) == 0)
      return bad(c, field, "duplicate knob '%s'", k->name);
  const cJSON *vals;
  if ((rc = get_array(c, obj, path, "values", &vals, true))) return rc;
  join(field, sizeof field, path, "values");
  int n = cJSON_GetArraySize(vals);
  if (n < 1)
    return bad(c, field, "knob '%s' has no values", k->name);
  if (n > KF_SPEC_MAX_KNOB_VALUES)
    return bad(c, field, "at most %d values (got %d)",
               KF_SPEC_MAX_KNOB_VALUES, n);
  int i = 0;
  for (const cJSON *v = vals->child; v; v = v->next, i++) {
    char vf[200];
    index_of(vf, sizeof vf, field, i);
    char *dst = k->values[i];
    if (cJSON_IsNumber(v)) {
      int64_t x;
      if ((rc = as_int(c, v, vf, INT32_MIN, INT32_MAX, &x))) return rc;
      snprintf(dst, sizeof k->values[i], "%lld", (long long)x);
    } else if (cJSON_IsString(v)) {
      if (!kf_spec_knob_value_ok(v->valuestring))
        return bad(c, vf,
                   "'%s' is not 1 to 23 characters of [A-Za-z0-9_.+-] "
                   "(it becomes -D%s=value)",
                   v->valuestring, k->name);
      kf_strlcpy(dst, v->valuestring, sizeof k->values[i]);
    } else {
      return bad(c, vf, "must be an integer or a string, not %s",
                 json_kind(v));
    }
    for (int j = 0; j < i; j++)
      if (strcmp(k->values[j], dst) == 0)
        return bad(c, vf, "value %s listed twice", dst);
  }
  k->n_values = n;
  return 0;
}

/* A torch template's "devices": the torch devices it is offered on.  A
 * Triton or CUDA-extension template cannot run in CI's CPU-only torch, so
 * the problem ships it beside its portable templates and a spec whose
 * torch.device is not listed leaves it out (its file is not read). */
static int parse_template_devices(ctx *c, const cJSON *obj, const char *path,
                                  bool *offered) {
  *offered = true;
  const cJSON *arr;
  int rc = get_array(c, obj, path, "devices", &arr, false);
  if (rc || !arr) return rc;
  char field[192];
  join(field, sizeof field, path, "devices");
  if (strcmp(c->s->backend, "torch") != 0)
    return bad(c, field, "only a backend \"torch\" template names devices");
  if (cJSON_GetArraySize(arr) < 1)
    return bad(c, field, "lists no device (expected some of cpu, cuda)");
  *offered = false;
  int i = 0;
  for (const cJSON *v = arr->child; v; v = v->next, i++) {
    char vf[200];
    index_of(vf, sizeof vf, field, i);
    if (!cJSON_IsString(v) || (strcmp(v->valuestring, "cpu") != 0 &&
                               strcmp(v->valuestring, "cuda") != 0))
      return bad(c, vf, "must be \"cpu\" or \"cuda\"");
    if (strcmp(v->valuestring, c->s->torch_device) == 0) *offered = true;
  }
  return 0;
}

static int parse_template(ctx *c, const cJSON *obj, const char *path,
                          int idx, bool *offered) {
  static const char *const keys[] = {"name", "file", "description", "knobs",
                                     "devices", NULL};
  int rc = check_keys(c, obj, path, keys);
  if (rc) return rc;
  kf_spec_template *t = &c->s->templates[idx];
  if ((rc = get_str(c, obj, path, "name", t->name, sizeof t->name, true)))
    return rc;
  char field[192];
  join(field, sizeof field, path, "name");
  if (!is_token(t->name, sizeof t->name - 1, ".-"))
    return bad(c, field, "'%s' must be letters, digits, _ . -", t->name);
  for (int j = 0; j < idx; j++)
    if (strcmp(c->s->templates[j].name, t->name) == 0)
      return bad(c, field, "duplicate template name '%s'", t->name);
  if ((rc = get_file(c, obj, path, "file", t->file, sizeof t->file)))
    return rc;
  if ((rc = get_str(c, obj, path, "description", t->description,
                    sizeof t->description, false)))
    return rc;
  const cJSON *knobs;
  if ((rc = get_array(c, obj, path, "knobs", &knobs, false))) return rc;
  if (knobs) {
    join(field, sizeof field, path, "knobs");
    int n = cJSON_GetArraySize(knobs);
    if (n > KF_SPEC_MAX_KNOBS)
      return bad(c, field, "at most %d knobs (got %d)", KF_SPEC_MAX_KNOBS, n);
    int i = 0;
    for (const cJSON *v = knobs->child; v; v = v->next, i++) {
      char kp[200];
      index_of(kp, sizeof kp, field, i);
      if ((rc = parse_knob(c, v, kp, t, i))) return rc;
    }
    t->n_knobs = n;
  }
  if ((rc = parse_template_devices(c, obj, path, offered))) return rc;
  if (!*offered) return 0;
  join(field, sizeof field, path, "file");
  return read_source(c, field, t->file, &t->source);
}

static int parse_templates(ctx *c, const cJSON *root) {
  const cJSON *arr;
  int rc = get_array(c, root, "", "templates", &arr, true);
  if (rc) return rc;
  int n = cJSON_GetArraySize(arr);
  if (n > KF_SPEC_MAX_TEMPLATES)
    return bad(c, "templates", "at most %d templates (got %d)",
               KF_SPEC_MAX_TEMPLATES, n);
  bool offered[KF_SPEC_MAX_TEMPLATES];
  int i = 0;
  for (const cJSON *v = arr->child; v; v = v->next, i++) {
    char path[64];
    index_of(path, sizeof path, "templates", i);
    c->s->n_templates = i + 1; /* sources freed on failure */
    if ((rc = parse_template(c, v, path, i, &offered[i]))) return rc;
  }
  /* Names are unique across all of them; only the offered ones stay. */
  int kept = 0;
  for (int j = 0; j < n; j++) {
    if (!offered[j]) continue;
    if (kept != j) c->s->templates[kept] = c->s->templates[j];
    kept++;
  }
  c->s->n_templates = kept;
  if (n > 0 && kept == 0)
    return bad(c, "templates", "none is offered on torch device '%s' (each "
               "names devices without it)", c->s->torch_device);
  return 0;
}

/* Evaluates every expression at one size, so nothing downstream meets a
 * zero dimension, a negative flop count or an overflowing byte count. */
static int check_at_size(ctx *c, const kf_size *z, const char *where) {
  kf_spec *s = c->s;
  char sz[256], why[384];
  kf_spec_size_format(s, z, sz, sizeof sz);
  for (int io = 0; io < 2; io++) {
    const kf_spec_tensor *ts = io ? s->outputs : s->inputs;
    int n = io ? s->n_outputs : s->n_inputs;
    for (int i = 0; i < n; i++) {
      const kf_spec_tensor *t = &ts[i];
      int64_t numel = 1;
      for (int d = 0; d < t->ndim; d++) {
        char field[96];
        snprintf(field, sizeof field, "%s[%d].shape[%d]",
                 io ? "outputs" : "inputs", i, d);
        int64_t v;
        if (kf_spec_eval(s, t->shape[d], z, &v, why, sizeof why))
          return bad(c, field, "%s at %s (%s)", why, where, sz);
        if (v < 1)
          return bad(c, field,
                     "is %lld at %s (%s); every dimension must be >= 1",
                     (long long)v, where, sz);
        if (__builtin_mul_overflow(numel, v, &numel) ||
            numel > SPEC_MAX_TENSOR_BYTES / (int64_t)kf_dtype_size(t->dtype))
          return bad(c, field, "tensor larger than 2^40 bytes at %s (%s)",
                     where, sz);
      }
      if (t->range[0]) {
        char field[64];
        snprintf(field, sizeof field, "inputs[%d].range", i);
        int64_t v;
        if (kf_spec_eval(s, t->range, z, &v, why, sizeof why))
          return bad(c, field, "%s at %s (%s)", why, where, sz);
        /* values are drawn from [0, range): the largest range is one past
         * the dtype's largest value (an i64's is its own maximum) */
        int64_t most = t->dtype == KF_DT_I32 ? (int64_t)INT32_MAX + 1
                                             : INT64_MAX;
        if (v < 1 || v > most)
          return bad(c, field, "is %lld at %s (%s); must be 1..%lld",
                     (long long)v, where, sz, (long long)most);
      }
    }
  }
  const char *names[2] = {"flops", "bytes"};
  const char *exprs[2] = {s->flops, s->bytes};
  for (int j = 0; j < 2; j++) {
    int64_t v;
    if (kf_spec_eval(s, exprs[j], z, &v, why, sizeof why))
      return bad(c, names[j], "%s at %s (%s)", why, where, sz);
    if (v < j) /* flops may be 0 (a copy); bytes may not */
      return bad(c, names[j], "is %lld at %s (%s); must be >= %d",
                 (long long)v, where, sz, j);
  }
  return 0;
}

/* The "torch" section (backend torch only): {"kind": "kernelbench" |
 * "gpumode", "device": "cpu" | "cuda", "init": [JSON values: the Model's
 * constructor arguments; a float 2.0 or inf as {"float": 2.0 | "inf"}],
 * "args": [{"t": input index} | {"v": number | {"float": ...}}:
 * forward's arguments in order, when not just the inputs], "case": {GPU
 * MODE: generate_input()'s keyword arguments}, "data": "tuple" | "list"
 * | "one" (GPU MODE: the form of generate_input()'s data)}. */
/* {"float": x}: a Python float that a JSON number would not keep one
 * (2.0 is printed 2 on the way; inf and nan have no JSON number) --
 * harness/torch/runner.py _typed. */
static bool typed_float(const cJSON *v) {
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(v, "float");
  if (!cJSON_IsObject(v) || cJSON_GetArraySize(v) != 1 || !f) return false;
  if (cJSON_IsNumber(f)) return true;
  return cJSON_IsString(f) && (!strcmp(f->valuestring, "inf") ||
                               !strcmp(f->valuestring, "-inf") ||
                               !strcmp(f->valuestring, "nan"));
}

/* {"int": "digits"}: an integer beyond 2^53, which a JSON number (a
 * double, to cJSON and to the canonical hash) would round: 2^61 - 1
 * became 2^61 and then a float (red team 2026-12-01-s3c, H3). */
static bool typed_int(const cJSON *v) {
  const cJSON *i = cJSON_GetObjectItemCaseSensitive(v, "int");
  if (!cJSON_IsObject(v) || cJSON_GetArraySize(v) != 1 || !cJSON_IsString(i))
    return false;
  const char *d = i->valuestring + (i->valuestring[0] == '-');
  size_t n = strlen(d);
  return n > 0 && n <= 200 && strspn(d, "0123456789") == n;
}

/* A value of torch.init or an arg's "v": a plain number that is an
 * integer of magnitude 2^53 or more is refused, since the number the file
 * held is lost by then and two problems would share one hash; such values
 * are written {"int": "..."} (or {"float": x} for a float). */
static int torch_value(ctx *c, const char *where, int idx, const cJSON *v,
                       int depth) {
  if (depth > 16)
    return bad(c, where, "[%d] nests deeper than 16 lists", idx);
  /* every double of that size is integral */
  if (cJSON_IsNumber(v) && (v->valuedouble >= 9007199254740992.0 ||
                            v->valuedouble <= -9007199254740992.0))
    return bad(c, where, "[%d]: the number %.17g is an integer beyond 2^53, "
               "which JSON numbers do not hold exactly (the file's value is "
               "lost by here); write it as {\"int\": \"its digits\"}, or a "
               "float as {\"float\": %.17g}", idx, v->valuedouble,
               v->valuedouble);
  if (cJSON_IsObject(v) && cJSON_GetObjectItemCaseSensitive(v, "int") &&
      !typed_int(v))
    return bad(c, where, "[%d]: {\"int\": ...} takes a string of decimal "
               "digits, an optional '-' first, at most 200", idx);
  if (cJSON_IsArray(v)) {
    const cJSON *x;
    cJSON_ArrayForEach(x, v) {
      int rc = torch_value(c, where, idx, x, depth + 1);
      if (rc) return rc;
    }
  }
  return 0;
}

/* generate_input()'s keyword arguments: Python names, and values a JSON
 * document keeps exactly. */
static int gm_case(ctx *c, const char *where, const cJSON *cs) {
  if (!cJSON_IsObject(cs))
    return bad(c, where, "must be an object (generate_input()'s keyword "
               "arguments)");
  int i = 0;
  const cJSON *a;
  cJSON_ArrayForEach(a, cs) {
    if (!a->string || !*a->string || strlen(a->string) > 64 ||
        strspn(a->string, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
               "YZ0123456789_") != strlen(a->string) ||
        (a->string[0] >= '0' && a->string[0] <= '9'))
      return bad(c, where, "[%d]: '%.64s' is not a Python keyword "
                 "argument name", i, a->string ? a->string : "");
    if (!cJSON_IsNumber(a) && !cJSON_IsString(a) && !cJSON_IsBool(a) &&
        !typed_float(a) && !typed_int(a))
      return bad(c, where, "'%s' must be a number, a string, true, "
                 "false, {\"int\": \"digits\"} or {\"float\": ...}",
                 a->string);
    int rc = torch_value(c, where, i, a, 0);
    if (rc) return rc;
    i++;
  }
  return 0;
}

/* torch.cases: [{"size": {param: value, ...}, "case": {...}}, ...], one
 * entry for every size of sizes.check and sizes.bench and no other.  *out
 * is the same list with each size as its values in params order, the form
 * the sampler matches a draw's size against (runner.py sample). */
static int gm_cases(ctx *c, const cJSON *cases, cJSON **out) {
  kf_spec *s = c->s;
  static const char *const ekeys[] = {"size", "case", NULL};
  int n = cJSON_IsArray(cases) ? cJSON_GetArraySize(cases) : 0;
  if (strcmp(s->torch_kind, "gpumode"))
    return bad(c, "torch.cases", "only a gpumode problem has them");
  if (n < 1 || n > KF_SPEC_MAX_SIZES + KF_SPEC_MAX_BENCH)
    return bad(c, "torch.cases", "must be an array of 1 to %d "
               "{\"size\", \"case\"} objects",
               KF_SPEC_MAX_SIZES + KF_SPEC_MAX_BENCH);
  kf_size z[KF_SPEC_MAX_SIZES + KF_SPEC_MAX_BENCH];
  memset(z, 0, sizeof z);
  cJSON *x = cJSON_CreateArray();
  if (!x) return kf_seterr(KF_ENOMEM, c->err, c->errlen, "out of memory");
  int i = 0, rc = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, cases) {
    char where[64], w2[80];
    index_of(where, sizeof where, "torch.cases", i);
    if (!cJSON_IsObject(e)) {
      rc = bad(c, where, "must be an object {\"size\", \"case\"}");
      break;
    }
    if ((rc = check_keys(c, e, where, ekeys))) break;
    snprintf(w2, sizeof w2, "%s.size", where);
    if ((rc = parse_size(c, cJSON_GetObjectItemCaseSensitive(e, "size"), w2,
                         &z[i])))
      break;
    snprintf(w2, sizeof w2, "%s.case", where);
    if ((rc = gm_case(c, w2, cJSON_GetObjectItemCaseSensitive(e, "case"))))
      break;
    for (int j = 0; j < i && !rc; j++)
      if (!memcmp(&z[j], &z[i], sizeof z[i]))
        rc = bad(c, where, "has the size of torch.cases[%d]: one case a "
                 "size", j);
    if (rc) break;
    cJSON *o = cJSON_CreateObject(), *v = cJSON_CreateArray();
    if (!o || !v) {
      cJSON_Delete(o);
      cJSON_Delete(v);
      rc = kf_seterr(KF_ENOMEM, c->err, c->errlen, "out of memory");
      break;
    }
    for (int k = 0; k < s->n_params; k++)
      cJSON_AddItemToArray(v, cJSON_CreateNumber((double)z[i].v[k]));
    cJSON_AddItemToObject(o, "size", v);
    cJSON_AddItemToObject(o, "case", cJSON_Duplicate(
        cJSON_GetObjectItemCaseSensitive(e, "case"), true));
    cJSON_AddItemToArray(x, o);
    i++;
  }
  /* every size has its case: one without would be drawn by another
   * size's arguments, and refused for its shapes in every evaluation */
  int nb = kf_spec_n_bench(s);
  for (int k = 0; !rc && k < s->n_check_sizes + nb; k++) {
    const kf_size *want = k < s->n_check_sizes
                              ? &s->check_sizes[k]
                              : kf_spec_bench(s, k - s->n_check_sizes);
    bool found = false;
    for (int j = 0; j < n && !found; j++)
      found = !memcmp(&z[j], want, sizeof *want);
    if (!found) {
      char where[64];
      if (k < s->n_check_sizes) index_of(where, sizeof where, "sizes.check", k);
      else if (nb > 1)
        index_of(where, sizeof where, "sizes.bench", k - s->n_check_sizes);
      else snprintf(where, sizeof where, "sizes.bench");
      rc = bad(c, "torch.cases", "%s has no case: each size of the spec "
               "needs one (generate_input()'s arguments for it)", where);
    }
  }
  if (rc) {
    cJSON_Delete(x);
    return rc;
  }
  *out = x;
  return 0;
}

static int parse_torch(ctx *c, const cJSON *root) {
  static const char *const keys[] = {"kind", "device", "init", "args",
                                     "case", "cases",  "data", NULL};
  kf_spec *s = c->s;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "torch");
  bool torch = strcmp(s->backend, "torch") == 0;
  if (!torch) {
    if (t) return bad(c, "torch", "only a backend \"torch\" spec has one");
    return 0;
  }
  if (!t || !cJSON_IsObject(t))
    return bad(c, "torch", "required for backend torch: an object with "
               "\"kind\" (kernelbench or gpumode)");
  int rc = check_keys(c, t, "torch", keys);
  if (rc) return rc;
  if ((rc = get_str(c, t, "torch", "kind", s->torch_kind,
                    sizeof s->torch_kind, true)))
    return rc;
  if (strcmp(s->torch_kind, "kernelbench") && strcmp(s->torch_kind, "gpumode"))
    return bad(c, "torch.kind", "'%s' (expected kernelbench or gpumode)",
               s->torch_kind);
  if ((rc = get_str(c, t, "torch", "device", s->torch_device,
                    sizeof s->torch_device, false)))
    return rc;
  if (!s->torch_device[0])
    kf_strlcpy(s->torch_device, "cpu", sizeof s->torch_device);
  if (strcmp(s->torch_device, "cpu") && strcmp(s->torch_device, "cuda"))
    return bad(c, "torch.device", "'%s' (expected cpu or cuda)",
               s->torch_device);
  const cJSON *init = cJSON_GetObjectItemCaseSensitive(t, "init");
  if (init && !cJSON_IsArray(init))
    return bad(c, "torch.init", "must be an array (get_init_inputs())");
  int i = 0;
  const cJSON *a;
  cJSON_ArrayForEach(a, init) {
    int rc = torch_value(c, "torch.init", i++, a, 0);
    if (rc) return rc;
  }
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(t, "args");
  if (args && !cJSON_IsArray(args))
    return bad(c, "torch.args", "must be an array");
  i = 0;
  cJSON_ArrayForEach(a, args) {
    const cJSON *ti = cJSON_GetObjectItemCaseSensitive(a, "t");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, "v");
    /* {"t": i, "0d": true}: input i is a 0-d tensor, held as shape [1]
     * and passed 0-d (runner.py _call_args) */
    const cJSON *zd = cJSON_GetObjectItemCaseSensitive(a, "0d");
    int na = cJSON_IsObject(a) ? cJSON_GetArraySize(a) : 0;
    if (!((ti && na == 1 + (zd != NULL) && (!zd || cJSON_IsTrue(zd)) &&
           cJSON_IsNumber(ti) && ti->valuedouble >= 0 &&
           ti->valuedouble < s->n_inputs &&
           ti->valuedouble == (double)(int)ti->valuedouble) ||
          (v && na == 1 &&
           (cJSON_IsNumber(v) || typed_float(v) || typed_int(v)))))
      return bad(c, "torch.args", "[%d] must be {\"t\": an input index below"
                 " %d} (with \"0d\": true for a 0-d tensor) or {\"v\": a "
                 "number, {\"int\": \"digits\"}, or {\"float\": a number, "
                 "\"inf\", \"-inf\" or \"nan\"}}", i, s->n_inputs);
    if (v) {
      int rc = torch_value(c, "torch.args", i, v, 0);
      if (rc) return rc;
    }
    if (zd) {
      /* a 0-d tensor has one element: its shape is ["1"] */
      const kf_spec_tensor *in = &s->inputs[(int)ti->valuedouble];
      if (in->ndim != 1 || strcmp(in->shape[0], "1"))
        return bad(c, "torch.args", "[%d]: input '%s' passed 0-d must have "
                   "shape [\"1\"]", i, in->name);
    }
    i++;
  }
  /* GPU MODE: generate_input()'s keyword arguments (the sampler passes
   * its own seed among them: runner.py _drawer) */
  const cJSON *cs = cJSON_GetObjectItemCaseSensitive(t, "case");
  if (cs && strcmp(s->torch_kind, "gpumode"))
    return bad(c, "torch.case", "only a gpumode problem has one "
               "(generate_input()'s arguments)");
  if (cs && !cJSON_IsObject(cs))
    return bad(c, "torch.case", "must be an object (generate_input()'s "
               "keyword arguments)");
  if (cs && (rc = gm_case(c, "torch.case", cs))) return rc;
  /* GPU MODE: the data's form, "tuple" or "list" ("one", the default: a
   * single input is passed bare, several as a tuple) */
  const cJSON *dk = cJSON_GetObjectItemCaseSensitive(t, "data");
  if (dk && strcmp(s->torch_kind, "gpumode"))
    return bad(c, "torch.data", "only a gpumode problem has one");
  if (dk && (!cJSON_IsString(dk) || (strcmp(dk->valuestring, "tuple") &&
                                     strcmp(dk->valuestring, "list") &&
                                     strcmp(dk->valuestring, "one"))))
    return bad(c, "torch.data", "must be \"tuple\", \"list\" or \"one\" "
               "(the form of generate_input()'s data)");
  /* GPU MODE: a case per size -- task.yml's tests and the benchmark (kf
   * import gpumode) -- so that each size is drawn by its own arguments */
  const cJSON *cases = cJSON_GetObjectItemCaseSensitive(t, "cases");
  cJSON *cx = NULL;
  if (cases && (rc = gm_cases(c, cases, &cx))) return rc;
  cJSON *x = cJSON_CreateObject();
  if (!x) {
    cJSON_Delete(cx);
    return kf_seterr(KF_ENOMEM, c->err, c->errlen, "out of memory");
  }
  if (dk) cJSON_AddItemToObject(x, "data", cJSON_Duplicate(dk, true));
  if (init) cJSON_AddItemToObject(x, "init", cJSON_Duplicate(init, true));
  if (args) cJSON_AddItemToObject(x, "args", cJSON_Duplicate(args, true));
  if (cs) cJSON_AddItemToObject(x, "case", cJSON_Duplicate(cs, true));
  if (cx) cJSON_AddItemToObject(x, "cases", cx);
  char *text = cJSON_PrintUnformatted(x);
  cJSON_Delete(x);
  if (!text) return kf_seterr(KF_ENOMEM, c->err, c->errlen, "out of memory");
  size_t len = strlen(text);
  if (len >= sizeof s->torch_extra) {
    free(text);
    return bad(c, "torch", "init, args, case and cases take %zu bytes as "
               "JSON; at most %zu", len, sizeof s->torch_extra - 1);
  }
  memcpy(s->torch_extra, text, len + 1);
  free(text);
  return 0;
}

static int parse_root(ctx *c, const cJSON *root) {
  static const char *const keys[] = {
      "name",      "backend",   "description",   "params",
      "inputs",    "outputs",   "sizes",         "tolerance",
      "allow_nan", "deterministic", "flops",     "bytes",
      "workspace_bytes", "reference", "templates", "torch", NULL};
  kf_spec *s = c->s;
  int rc = check_keys(c, root, "", keys);
  if (rc) return rc;

  if ((rc = get_str(c, root, "", "name", s->name, sizeof s->name, true)))
    return rc;
  if (!is_token(s->name, sizeof s->name - 1, ".-"))
    return bad(c, "name", "'%s' must be letters, digits, _ . -", s->name);
  if ((rc = get_str(c, root, "", "backend", s->backend, sizeof s->backend,
                    true)))
    return rc;
  if (strcmp(s->backend, "cpu") != 0 && strcmp(s->backend, "cuda") != 0 &&
      strcmp(s->backend, "torch") != 0)
    return bad(c, "backend", "unknown backend '%s' (expected cpu, cuda or "
               "torch)", s->backend);
  if ((rc = get_str(c, root, "", "description", s->description,
                    sizeof s->description, false)))
    return rc;
  if ((rc = parse_params(c, root))) return rc;
  if ((rc = parse_tensors(c, root, "inputs", true))) return rc;
  if ((rc = parse_tensors(c, root, "outputs", false))) return rc;
  if ((rc = parse_sizes(c, root))) return rc;
  if ((rc = parse_tolerance(c, root))) return rc;
  if ((rc = get_bool(c, root, "", "allow_nan", &s->allow_nan))) return rc;
  if ((rc = get_bool(c, root, "", "deterministic", &s->deterministic)))
    return rc;
  if ((rc = get_expr(c, root, "", "flops", s->flops, sizeof s->flops)))
    return rc;
  if ((rc = get_expr(c, root, "", "bytes", s->bytes, sizeof s->bytes)))
    return rc;
  const cJSON *ws = cJSON_GetObjectItemCaseSensitive(root, "workspace_bytes");
  if (ws) {
    int64_t v;
    if ((rc = as_int(c, ws, "workspace_bytes", 0, SPEC_MAX_TENSOR_BYTES, &v)))
      return rc;
    s->workspace_bytes = (size_t)v;
  }
  if ((rc = parse_torch(c, root))) return rc;
  for (int i = 0; i < s->n_inputs; i++)
    for (int j = 0; j < s->inputs[i].n_dists; j++)
      if (s->inputs[i].dists[j] == KF_DIST_SAMPLE &&
          strcmp(s->backend, "torch")) {
        char where[64];
        snprintf(where, sizeof where, "inputs[%d].dists", i);
        return bad(c, where, "distribution 'sample' draws through the "
                   "reference's get_inputs() or generate_input(): torch "
                   "problems only");
      }
  if ((rc = get_file(c, root, "", "reference", s->reference_file,
                     sizeof s->reference_file)))
    return rc;

  for (int i = 0; i < s->n_check_sizes; i++) {
    char where[32];
    index_of(where, sizeof where, "sizes.check", i);
    if ((rc = check_at_size(c, &s->check_sizes[i], where))) return rc;
  }
  for (int i = 0; i < kf_spec_n_bench(s); i++) {
    char where[32] = "sizes.bench";
    if (s->n_bench_more) index_of(where, sizeof where, "sizes.bench", i);
    if ((rc = check_at_size(c, kf_spec_bench(s, i), where))) return rc;
  }

  /* Files last: a spec that is wrong on its own is reported as such even
   * when its files are missing too. */
  if ((rc = read_source(c, "reference", s->reference_file,
                        &s->reference_source)))
    return rc;
  return parse_templates(c, root);
}

/* ---- public ---------------------------------------------------------- */

static int parse_named(const char *json, size_t len, const char *dir,
                       const char *file, kf_spec **out, char *err,
                       size_t errlen) {
  *out = NULL;
  if (!json) return kf_seterr(KF_EINVAL, err, errlen, "%s: no text", file);
  kf_spec *s = calloc(1, sizeof *s);
  if (!s) return kf_seterr(KF_ENOMEM, err, errlen, "%s: out of memory", file);
  ctx c = {.file = file, .dir = dir, .s = s, .err = err, .errlen = errlen};

  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, false);
  if (!root) {
    size_t at = end && end >= json && end <= json + len
                    ? (size_t)(end - json) : 0;
    int line = 1, column = 1, depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < at; i++) {
      if (json[i] == '\n') {
        line++;
        column = 1;
      } else {
        column++;
      }
      /* how deep the error is: cJSON stops at CJSON_NESTING_LIMIT, which
       * read as invalid JSON (red team 2026-12-01-s3c, U3) */
      if (in_str) {
        if (json[i] == '\\') i++, column++;
        else if (json[i] == '"') in_str = false;
      } else if (json[i] == '"') {
        in_str = true;
      } else if (json[i] == '[' || json[i] == '{') {
        depth++;
      } else if (json[i] == ']' || json[i] == '}') {
        depth--;
      }
    }
    free(s);
    if (depth >= CJSON_NESTING_LIMIT)
      return kf_seterr(KF_ESPEC, err, errlen,
                       "%s: (top level): lists or objects nested deeper than "
                       "%d levels, near line %d column %d", file,
                       CJSON_NESTING_LIMIT, line, column);
    return kf_seterr(KF_ESPEC, err, errlen,
                     "%s: (top level): not valid JSON near line %d column %d",
                     file, line, column);
  }
  int rc = parse_root(&c, root);
  cJSON_Delete(root);
  if (!rc) {
    s->json = malloc(len + 1);
    if (!s->json) {
      rc = kf_seterr(KF_ENOMEM, err, errlen, "%s: out of memory", file);
    } else {
      memcpy(s->json, json, len);
      s->json[len] = '\0';
      s->json_len = len;
    }
  }
  if (rc) {
    kf_spec_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int kf_spec_parse(const char *json, size_t len, const char *dir,
                  kf_spec **out, char *err, size_t errlen) {
  char file[1024];
  if (dir)
    snprintf(file, sizeof file, "%s/spec.json", dir);
  else
    snprintf(file, sizeof file, "spec.json");
  return parse_named(json, len, dir, file, out, err, errlen);
}

int kf_spec_load_dir(const char *dir, kf_spec **out, char *err,
                     size_t errlen) {
  *out = NULL;
  if (!dir) return kf_seterr(KF_EINVAL, err, errlen, "no problem directory");
  char path[1024];
  snprintf(path, sizeof path, "%s/spec.json", dir);
  char *text;
  size_t len;
  char why[1200];
  struct stat lst; /* a missing spec.json is kf_read_file's error */
  if (lstat(path, &lst) == 0 && inside_file(dir, path, why, sizeof why))
    return kf_seterr(KF_EINVAL, err, errlen, "%s", why);
  int rc = kf_read_file(path, SPEC_MAX_SOURCE, &text, &len, err, errlen);
  if (rc) return rc;
  rc = parse_named(text, len, dir, path, out, err, errlen);
  free(text);
  return rc;
}

void kf_spec_free(kf_spec *s) {
  if (!s) return;
  free(s->reference_source);
  for (int i = 0; i < s->n_templates; i++) free(s->templates[i].source);
  free(s->json);
  free(s);
}

int kf_spec_eval(const kf_spec *s, const char *expr, const kf_size *size,
                 int64_t *out, char *err, size_t errlen) {
  return kf_spec__expr(expr, (const char(*)[32])s->params, s->n_params,
                       size->v, out, err, errlen);
}

int kf_spec_shape(const kf_spec *s, const kf_spec_tensor *t,
                  const kf_size *size, int64_t dims[KF_SPEC_MAX_DIMS],
                  int64_t *numel, char *err, size_t errlen) {
  char why[384];
  int64_t n = 1;
  for (int d = 0; d < KF_SPEC_MAX_DIMS; d++) dims[d] = d < t->ndim ? 0 : 1;
  for (int d = 0; d < t->ndim; d++) {
    if (kf_spec_eval(s, t->shape[d], size, &dims[d], why, sizeof why))
      return kf_seterr(KF_ESPEC, err, errlen, "%s: shape[%d]: %s", t->name,
                       d, why);
    if (dims[d] < 1)
      return kf_seterr(KF_ESPEC, err, errlen,
                       "%s: shape[%d]: is %lld; must be >= 1", t->name, d,
                       (long long)dims[d]);
    if (__builtin_mul_overflow(n, dims[d], &n))
      return kf_seterr(KF_ESPEC, err, errlen,
                       "%s: element count overflows", t->name);
  }
  *numel = n;
  return 0;
}

/* b rounded up to pages, with a guard on both sides, added to *sum;
 * false on overflow. */
static bool kf_spec__place(uint64_t *sum, uint64_t b, uint64_t guard) {
  uint64_t pages;
  if (__builtin_add_overflow(b, 4095u, &pages)) return false;
  pages &= ~(uint64_t)4095u;
  return !__builtin_add_overflow(pages, 2 * guard, &pages) &&
         !__builtin_add_overflow(*sum, pages, sum);
}

int kf_spec_runner_bytes(const kf_spec *s, const kf_size *size, int sets,
                         int slots, uint64_t guard, uint64_t *bytes,
                         char *err, size_t errlen) {
  uint64_t sum = 0;
  for (int side = 0; side < 2; side++) {
    int n = side ? s->n_outputs : s->n_inputs;
    for (int i = 0; i < n; i++) {
      const kf_spec_tensor *t = side ? &s->outputs[i] : &s->inputs[i];
      int64_t dims[KF_SPEC_MAX_DIMS], numel;
      int rc = kf_spec_shape(s, t, size, dims, &numel, err, errlen);
      if (rc) return rc;
      uint64_t b;
      if (__builtin_mul_overflow((uint64_t)numel,
                                 (uint64_t)kf_dtype_size(t->dtype), &b))
        return kf_seterr(KF_ESPEC, err, errlen, "%s: byte count overflows",
                         t->name);
      for (int k = 0; k < (side ? slots : sets); k++)
        if (!kf_spec__place(&sum, b, guard))
          return kf_seterr(KF_ESPEC, err, errlen, "%s: byte count overflows",
                           t->name);
    }
  }
  if (!kf_spec__place(&sum, s->workspace_bytes, guard))
    return kf_seterr(KF_ESPEC, err, errlen, "workspace: byte count overflows");
  *bytes = sum;
  return 0;
}

const kf_spec_template *kf_spec_template_find(const kf_spec *s,
                                              const char *name) {
  for (int i = 0; s && name && i < s->n_templates; i++)
    if (strcmp(s->templates[i].name, name) == 0) return &s->templates[i];
  return NULL;
}

char *kf_spec_size_format(const kf_spec *s, const kf_size *size, char *buf,
                          size_t len) {
  size_t off = 0;
  if (!len) return buf;
  buf[0] = '\0';
  for (int i = 0; i < s->n_params && off < len; i++)
    off += (size_t)snprintf(buf + off, len - off, "%s%s=%lld", i ? " " : "",
                            s->params[i], (long long)size->v[i]);
  return buf;
}

bool kf_spec_within_tol(const kf_spec *s, kf_dtype dt, double got,
                        double want) {
  if (isnan(got) || isnan(want))
    return s->allow_nan && isnan(got) && isnan(want);
  if (isinf(got) || isinf(want)) return s->allow_nan && got == want;
  if ((unsigned)dt >= KF_DT_COUNT) return false;
  return kf_tol_ok(&s->tol[dt], got, want);
}

/* ---- canonical hash -------------------------------------------------- */

/* The serialization is a sequence of "key=value\n" lines in a fixed
 * order, strings length-prefixed so no value can imitate a line break,
 * expressions with their blanks removed (blanks never separate two tokens
 * of a valid expression), floats in %a (exact).  "kf-spec-v1" heads it: a
 * change of this format is a change of every hash, which is what it must
 * be. */
typedef struct {
  EVP_MD_CTX *md;
  bool bad;
} hasher;

__attribute__((format(printf, 2, 3))) static void hput(hasher *h,
                                                       const char *fmt,
                                                       ...) {
  if (h->bad) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  /* Every field is bounded far below the line; a longer one would be a
   * bug here, and a truncated line must not pass for a hash. */
  if (n < 0 || (size_t)n >= sizeof line ||
      EVP_DigestUpdate(h->md, line, (size_t)n) != 1)
    h->bad = true;
}

static void hstr(hasher *h, const char *key, const char *v) {
  hput(h, "%s=%zu:%s\n", key, strlen(v), v);
}

static void hexpr(hasher *h, const char *key, const char *v) {
  char e[256];
  size_t k = 0;
  for (; *v && k + 1 < sizeof e; v++)
    if (*v != ' ' && *v != '\t' && *v != '\n' && *v != '\r') e[k++] = *v;
  e[k] = '\0';
  hstr(h, key, e);
}

static void hsize(hasher *h, const char *key, const kf_spec *s,
                  const kf_size *z) {
  hput(h, "%s=", key);
  for (int i = 0; i < s->n_params; i++)
    hput(h, "%s%lld", i ? "," : "", (long long)z->v[i]);
  hput(h, "\n");
}

static void htensor(hasher *h, const char *key, const kf_spec_tensor *t,
                    bool input) {
  hstr(h, key, t->name);
  hput(h, "dtype=%s\nndim=%d\n", kf_dtype_name(t->dtype), t->ndim);
  for (int d = 0; d < t->ndim; d++) hexpr(h, "dim", t->shape[d]);
  if (!input) return;
  hput(h, "dists=");
  for (int i = 0; i < t->n_dists; i++)
    hput(h, "%s%s", i ? "," : "", kf_dist_name(t->dists[i]));
  hput(h, "\n");
  hexpr(h, "range", t->range);
}

int kf_spec_n_bench(const kf_spec *s) { return 1 + s->n_bench_more; }

const kf_size *kf_spec_bench(const kf_spec *s, int i) {
  return i > 0 ? &s->bench_more[i - 1] : &s->bench_size;
}

int kf_spec_bench_bytes(const kf_spec *s, int64_t *out, char *err,
                        size_t errlen) {
  double lsum = 0;
  int n = kf_spec_n_bench(s);
  *out = 0;
  for (int i = 0; i < n; i++) {
    int64_t b;
    if (kf_spec_eval(s, s->bytes, kf_spec_bench(s, i), &b, err, errlen))
      return KF_ESPEC;
    if (n == 1) { /* exact, as before there were lists */
      *out = b;
      return 0;
    }
    if (b < 1) return 0; /* no floor: the mean of rates with a zero is 0 */
    lsum += log((double)b);
  }
  *out = (int64_t)llround(exp(lsum / n));
  return 0;
}

int kf_spec_canonical_hash(const kf_spec *s, char out[65]) {
  out[0] = '\0';
  hasher h = {.md = EVP_MD_CTX_new()};
  if (!h.md) return KF_ENOMEM;
  if (EVP_DigestInit_ex(h.md, EVP_sha256(), NULL) != 1) h.bad = true;
  hput(&h, "kf-spec-v1\n");
  hstr(&h, "name", s->name);
  hstr(&h, "backend", s->backend);
  hput(&h, "params=%d\n", s->n_params);
  for (int i = 0; i < s->n_params; i++) hstr(&h, "param", s->params[i]);
  hput(&h, "inputs=%d\n", s->n_inputs);
  for (int i = 0; i < s->n_inputs; i++)
    htensor(&h, "input", &s->inputs[i], true);
  hput(&h, "outputs=%d\n", s->n_outputs);
  for (int i = 0; i < s->n_outputs; i++)
    htensor(&h, "output", &s->outputs[i], false);
  hput(&h, "check=%d\n", s->n_check_sizes);
  for (int i = 0; i < s->n_check_sizes; i++)
    hsize(&h, "size", s, &s->check_sizes[i]);
  if (s->n_bench_more) /* absent before: old hashes hold */
    hput(&h, "benches=%d\n", kf_spec_n_bench(s));
  for (int i = 0; i < kf_spec_n_bench(s); i++)
    hsize(&h, "bench", s, kf_spec_bench(s, i));
  for (int d = 0; d < KF_DT_COUNT; d++)
    hput(&h, "tol.%s=%a,%a\n", kf_dtype_name((kf_dtype)d), s->tol[d].rtol,
         s->tol[d].atol);
  hput(&h, "allow_nan=%d\ndeterministic=%d\n", s->allow_nan ? 1 : 0,
       s->deterministic ? 1 : 0);
  hexpr(&h, "flops", s->flops);
  hexpr(&h, "bytes", s->bytes);
  hput(&h, "workspace_bytes=%zu\n", s->workspace_bytes);
  if (!strcmp(s->backend, "torch")) { /* absent before: old hashes hold */
    hstr(&h, "torch.kind", s->torch_kind);
    hstr(&h, "torch.device", s->torch_device);
    hstr(&h, "torch.extra", s->torch_extra);
  }
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int dl = 0;
  if (!h.bad && (EVP_DigestFinal_ex(h.md, d, &dl) != 1 || dl != 32))
    h.bad = true;
  EVP_MD_CTX_free(h.md);
  if (h.bad) return KF_EINTERNAL;
  for (unsigned i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
  return 0;
}
