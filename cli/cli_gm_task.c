/*
 * cli/cli_gm_task.c -- GPU MODE's task.yml, read for `kf import gpumode`.
 *
 * A GPU MODE problem directory lists the arguments its generate_input()
 * is run with in task.yml: `tests` (the shapes checked) and `benchmarks`
 * (the shapes ranked).  Without it, kf import fell back to {"size": 4096,
 * "seed": 42}, which no problem whose generate_input() takes other names
 * (batch_size, vocab_size, k, ...) accepts: GPU MODE's own problems did
 * not import.  The file is YAML; libyaml parses it, and the two lists are
 * handed on as JSON (cJSON), the form the rest of kf import speaks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include <cjson/cJSON.h>

#include "cli_gm_task.h"
#include "util.h"

#define TASK_MAX (256u << 10)
/* an alias may point back at its own mapping, or expand a billion times
 * (nested aliases): the walk is bounded in depth and in nodes */
#define TASK_DEPTH 32
#define TASK_NODES 100000

typedef struct {
  yaml_document_t *doc;
  int budget;
} walk;

/* A plain scalar as YAML 1.1 reads it in these files: an integer, a
 * float, true/false/null; anything else (and every quoted one) a string. */
static cJSON *scalar(const yaml_node_t *n) {
  const char *s = (const char *)n->data.scalar.value;
  if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
    return cJSON_CreateString(s);
  if (!strcmp(s, "true") || !strcmp(s, "True")) return cJSON_CreateTrue();
  if (!strcmp(s, "false") || !strcmp(s, "False")) return cJSON_CreateFalse();
  if (!strcmp(s, "null") || !strcmp(s, "~") || !*s) return cJSON_CreateNull();
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  /* cJSON holds numbers as doubles: an integer past 2^53 would arrive
   * as another integer, so it stays text and is refused by its user */
  if (end && !*end && !errno && v > -(1LL << 53) && v < (1LL << 53))
    return cJSON_CreateNumber((double)v);
  double d = strtod(s, &end);
  if (end && !*end && end != s) return cJSON_CreateNumber(d);
  return cJSON_CreateString(s);
}

static cJSON *node_json(walk *w, int id, int depth, char *err, size_t errlen) {
  yaml_node_t *n = yaml_document_get_node(w->doc, id);
  if (!n) {
    snprintf(err, errlen, "a node the parser did not make");
    return NULL;
  }
  if (depth > TASK_DEPTH || --w->budget < 0) {
    snprintf(err, errlen, "nested deeper than %d, or over %d nodes with "
             "aliases expanded", TASK_DEPTH, TASK_NODES);
    return NULL;
  }
  cJSON *out = NULL;
  switch (n->type) {
  case YAML_SCALAR_NODE:
    out = scalar(n);
    break;
  case YAML_SEQUENCE_NODE:
    out = cJSON_CreateArray();
    for (yaml_node_item_t *it = n->data.sequence.items.start;
         out && it < n->data.sequence.items.top; it++) {
      cJSON *x = node_json(w, *it, depth + 1, err, errlen);
      if (!x) {
        cJSON_Delete(out);
        return NULL;
      }
      cJSON_AddItemToArray(out, x);
    }
    break;
  case YAML_MAPPING_NODE:
    out = cJSON_CreateObject();
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
         out && p < n->data.mapping.pairs.top; p++) {
      yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
      if (!k || k->type != YAML_SCALAR_NODE) {
        snprintf(err, errlen, "line %lu: a key that is not a plain value",
                 k ? (unsigned long)k->start_mark.line + 1 : 0ul);
        cJSON_Delete(out);
        return NULL;
      }
      cJSON *x = node_json(w, p->value, depth + 1, err, errlen);
      if (!x) {
        cJSON_Delete(out);
        return NULL;
      }
      /* a repeated key: the last one, as YAML loaders do */
      cJSON_DeleteItemFromObjectCaseSensitive(out,
                                              (const char *)k->data.scalar.value);
      cJSON_AddItemToObject(out, (const char *)k->data.scalar.value, x);
    }
    break;
  default:
    snprintf(err, errlen, "an empty node");
    return NULL;
  }
  if (!out) snprintf(err, errlen, "out of memory");
  return out;
}

/* task.yml's list named key as JSON (NULL with err empty when task.yml
 * has no such key; NULL with err filled when it cannot be read).  Only
 * that list is walked: the rest of the file (files, description, ...) is
 * GPU MODE's business. */
static cJSON *load(const char *text, size_t len, const char *key, char *err,
                   size_t errlen) {
  yaml_parser_t p;
  yaml_document_t doc;
  err[0] = '\0';
  if (!yaml_parser_initialize(&p)) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  if (!yaml_parser_load(&p, &doc)) {
    snprintf(err, errlen, "line %lu: %s", (unsigned long)p.problem_mark.line + 1,
             p.problem ? p.problem : "does not parse as YAML");
    yaml_parser_delete(&p);
    return NULL;
  }
  cJSON *out = NULL;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root || root->type != YAML_MAPPING_NODE) {
    snprintf(err, errlen, "not a mapping of keys (files, tests, "
             "benchmarks, ...)");
  } else {
    int id = 0; /* the last of a repeated key, as YAML loaders do */
    for (yaml_node_pair_t *q = root->data.mapping.pairs.start;
         q < root->data.mapping.pairs.top; q++) {
      yaml_node_t *k = yaml_document_get_node(&doc, q->key);
      if (k && k->type == YAML_SCALAR_NODE &&
          !strcmp((const char *)k->data.scalar.value, key))
        id = q->value;
    }
    walk w = {.doc = &doc, .budget = TASK_NODES};
    if (id) out = node_json(&w, id, 0, err, errlen);
  }
  yaml_document_delete(&doc);
  yaml_parser_delete(&p);
  return out;
}

int kf_cli__gm_task_parse(const char *text, size_t len, const char *list,
                          cJSON **out, char *err, size_t errlen) {
  char yerr[300] = "";
  *out = NULL;
  cJSON *l = load(text, len, list, yerr, sizeof yerr);
  if (!l && yerr[0]) {
    snprintf(err, errlen, "%s", yerr);
    return -1;
  }
  if (l && !cJSON_IsArray(l)) {
    snprintf(err, errlen, "%s is not a list", list);
    cJSON_Delete(l);
    return -1;
  }
  /* each entry generate_input()'s keyword arguments: plain values */
  int i = 0;
  const cJSON *c, *v;
  cJSON_ArrayForEach(c, l) {
    if (!cJSON_IsObject(c)) {
      snprintf(err, errlen, "%s:%d is not a mapping of generate_input's "
               "keyword arguments", list, i);
      cJSON_Delete(l);
      return -1;
    }
    cJSON_ArrayForEach(v, c) {
      if (!cJSON_IsNumber(v) && !cJSON_IsString(v) && !cJSON_IsBool(v)) {
        snprintf(err, errlen, "%s:%d: argument %.64s is not a number, a "
                 "string or a boolean", list, i, v->string);
        cJSON_Delete(l);
        return -1;
      }
    }
    i++;
  }
  *out = l;
  return 0;
}

int kf_cli__gm_task_list(const char *dir, const char *list, cJSON **out,
                         char *err, size_t errlen) {
  char path[4200];
  *out = NULL;
  snprintf(path, sizeof path, "%s/task.yml", dir);
  if (access(path, F_OK) && errno == ENOENT) return 1;
  char *text = NULL, rerr[600], perr[400];
  size_t len = 0;
  if (kf_read_file(path, TASK_MAX, &text, &len, rerr, sizeof rerr)) {
    snprintf(err, errlen, "%s", rerr);
    return -1;
  }
  int rc = kf_cli__gm_task_parse(text, len, list, out, perr, sizeof perr);
  free(text);
  if (rc) snprintf(err, errlen, "%s: %s", path, perr);
  return rc;
}

int kf_cli__gm_task_case(const char *dir, const char *which, char **case_json,
                         char *said, size_t saidlen, char *err, size_t errlen) {
  *case_json = NULL;
  /* which: "benchmarks:N" or "tests:N"; NULL, the largest benchmark */
  char list[16] = "benchmarks";
  long idx = -1;
  if (which) {
    const char *colon = strchr(which, ':');
    char *end = NULL;
    size_t ln = colon ? (size_t)(colon - which) : 0;
    if (colon) idx = strtol(colon + 1, &end, 10);
    if (!colon || ln >= sizeof list || !end || *end || end == colon + 1 ||
        idx < 0) {
      snprintf(err, errlen, "--case '%s': a JSON object, or benchmarks:N "
               "or tests:N (N from 0) of task.yml", which);
      return -1;
    }
    memcpy(list, which, ln);
    list[ln] = '\0';
    if (strcmp(list, "benchmarks") && strcmp(list, "tests")) {
      snprintf(err, errlen, "--case '%s': task.yml's lists are benchmarks "
               "and tests", which);
      return -1;
    }
  }
  cJSON *l = NULL;
  int rc = kf_cli__gm_task_list(dir, list, &l, err, errlen);
  if (rc == 1 && which) {
    snprintf(err, errlen, "--case %s: %s/task.yml is not there", which, dir);
    return -1;
  }
  if (rc) return rc;
  rc = -1;
  int n = cJSON_GetArraySize(l);
  if (!n) {
    snprintf(err, errlen, "%s/task.yml has no %s list (generate_input's "
             "keyword arguments, one mapping each); give --case", dir, list);
    goto out;
  }
  if (idx >= n) {
    snprintf(err, errlen, "--case %s: %s/task.yml lists %d %s (0 to %d)",
             which, dir, n, list, n - 1);
    goto out;
  }
  if (idx < 0) { /* the largest: by the product of its sizes */
    double best = -1;
    for (int i = 0; i < n; i++) {
      double prod = 1;
      const cJSON *v;
      cJSON_ArrayForEach(v, cJSON_GetArrayItem(l, i))
        if (cJSON_IsNumber(v) && v->valuedouble >= 1 &&
            strcmp(v->string, "seed"))
          prod *= v->valuedouble;
      if (prod >= best) best = prod, idx = i;
    }
  }
  *case_json = cJSON_PrintUnformatted(cJSON_GetArrayItem(l, (int)idx));
  if (!*case_json) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  snprintf(said, saidlen, "task.yml %s:%ld (of %d)", list, idx, n);
  rc = 0;
out:
  cJSON_Delete(l);
  return rc;
}
