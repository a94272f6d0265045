/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/search.c -- one step of the evolutionary search (search.h).
 *
 * Runs on the batch's work thread and touches nothing but the store and
 * its own locals: no kf_coord field, no logging of per-candidate detail.
 * All state is in PostgreSQL; a step reads what it needs, decides, and
 * writes its decisions in one kf_store_schedule transaction per device
 * class, so a crash between two steps loses nothing and repeats nothing.
 *
 * Genomes: a template (by index in the campaign's templates) plus one value
 * index per knob.  Proposals (ProposeCandidate) carry their own source and
 * knobs; they are evaluated first and ranked with the rest, but only
 * candidates whose source is their template's take part in breeding.  A
 * proposal that declared a knob space became a template itself (origin
 * "proposer", appended by the store), so it breeds like a hand-written
 * one; once it has evaluated ok on a class, that class first explores
 * its space (random points, up to EXPLORE keys of it) before the usual
 * selection, so that what a proposer wrote is tuned at once.
 *
 * Islands: each device class is an island -- its population is its own
 * evaluations, and its children are bred for it alone.  Migration: a
 * class's best genome (a template instance) that another class has not
 * measured is planned there, before that class's own draws, once per key;
 * so when the best of a class changes, the new best migrates.
 *
 * Noise: two candidates are compared with kf_search_beats, never by raw
 * median, for the best and for the plateau count; parents within the
 * population are picked by median (the tournament), which only steers.
 */
#include "search.h"
#include "search_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "outcome.h"
#include "spec.h"
#include "util.h"

#define MAXK KF_SPEC_MAX_KNOBS
#define MAXV KF_SPEC_MAX_KNOB_VALUES
#define MAX_TEMPLATES 64
#define WALK_LIMIT 65536   /* genomes walked per template when draws fail */
#define FLAGS_LEN 1024
#define KNOBS_LEN 1536
#define REUSE_PER_STEP 64  /* reused evaluations planned per class and step */
#define EXPLORE 4          /* keys of a proposer's template tried at once */

bool kf_search_beats(double ma, double sa, double mb, double sb) {
  double tol = 0.02;
  if (sa > tol) tol = sa;
  if (sb > tol) tol = sb;
  return ma > 0 && mb > 0 && ma * (1 + tol) < mb;
}

/* ------------------------------------------------------------ random -- */

static uint64_t rng_next(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
static uint32_t rng_below(uint64_t *x, uint32_t n) {
  return (uint32_t)(rng_next(x) % n);
}

static double rng_unit(uint64_t *x) {
  return (double)(rng_next(x) >> 11) / 9007199254740992.0;
}

/* --------------------------------------------------------- templates -- */

typedef struct {
  const char *name, *source; /* point into the cJSON tree */
  char sha[65];
  int n_knobs;
  const char *knob[MAXK];
  int n_values[MAXK];
  const char *values[MAXK][MAXV];
  int order[MAXK];           /* knob indices by name: the flags order */
  double space;              /* genomes of this template */
  bool proposed;             /* origin "proposer": a proposal's knob space */
} tmpl_t;

typedef struct {
  int t;
  uint8_t v[MAXK];
} genome;

/* Parses the campaign's templates; shas is the store's comma-separated
 * list in the same order.  Malformed entries are skipped (CreateCampaign
 * validated them; this only guards against hand-edited rows). */
static int parse_templates(const kf_campaign *c, cJSON **tree, tmpl_t **out,
                           int *n) {
  *out = NULL;
  *n = 0;
  *tree = cJSON_Parse(c->templates_json);
  if (!*tree || !cJSON_IsArray(*tree)) return 0;
  int cnt = cJSON_GetArraySize(*tree);
  if (cnt > MAX_TEMPLATES) cnt = MAX_TEMPLATES;
  tmpl_t *ts = calloc(cnt ? (size_t)cnt : 1, sizeof *ts);
  if (!ts) return KF_ENOMEM;
  const char *sha = c->template_shas;
  int k = 0;
  for (int i = 0; i < cnt; i++) {
    const cJSON *t = cJSON_GetArrayItem(*tree, i);
    const char *comma = strchr(sha, ',');
    size_t shalen = comma ? (size_t)(comma - sha) : strlen(sha);
    char thissha[65] = "";
    if (shalen == 64) memcpy(thissha, sha, 64);
    sha = comma ? comma + 1 : sha + shalen;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "name");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(t, "source");
    const cJSON *knobs = cJSON_GetObjectItemCaseSensitive(t, "knobs");
    if (!cJSON_IsString(name) || !cJSON_IsString(src) || !thissha[0])
      continue;
    tmpl_t *tp = &ts[k];
    tp->name = name->valuestring;
    tp->source = src->valuestring;
    const cJSON *origin = cJSON_GetObjectItemCaseSensitive(t, "origin");
    tp->proposed = cJSON_IsString(origin) &&
                   strcmp(origin->valuestring, "proposer") == 0;
    memcpy(tp->sha, thissha, sizeof tp->sha);
    tp->space = 1;
    bool ok = true;
    int nk = cJSON_IsArray(knobs) ? cJSON_GetArraySize(knobs) : 0;
    for (int j = 0; j < nk && ok; j++) {
      const cJSON *kb = cJSON_GetArrayItem(knobs, j);
      const cJSON *kn = cJSON_GetObjectItemCaseSensitive(kb, "name");
      const cJSON *kv = cJSON_GetObjectItemCaseSensitive(kb, "values");
      int nv = cJSON_IsArray(kv) ? cJSON_GetArraySize(kv) : 0;
      if (!cJSON_IsString(kn) || nv < 1 || nv > MAXV || tp->n_knobs >= MAXK) {
        ok = false;
        break;
      }
      int q = tp->n_knobs++;
      tp->knob[q] = kn->valuestring;
      tp->n_values[q] = nv;
      for (int v = 0; v < nv; v++) {
        const cJSON *val = cJSON_GetArrayItem(kv, v);
        if (!cJSON_IsString(val)) ok = false;
        else tp->values[q][v] = val->valuestring;
      }
      tp->space *= nv;
    }
    if (!ok) {
      memset(tp, 0, sizeof *tp);
      continue;
    }
    for (int j = 0; j < tp->n_knobs; j++) tp->order[j] = j;
    for (int a = 1; a < tp->n_knobs; a++) /* insertion sort by name */
      for (int b = a; b > 0 && strcmp(tp->knob[tp->order[b - 1]],
                                      tp->knob[tp->order[b]]) > 0; b--) {
        int x = tp->order[b];
        tp->order[b] = tp->order[b - 1];
        tp->order[b - 1] = x;
      }
    k++;
  }
  *out = ts;
  *n = k;
  return 0;
}

static int find_template(const tmpl_t *ts, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(ts[i].name, name) == 0) return i;
  return -1;
}

/* Appends s as a JSON string body (escaped) at *o, bounded by end. */
static void json_str(char **o, char *end, const char *s) {
  for (; *s && *o + 7 < end; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') {
      *(*o)++ = '\\';
      *(*o)++ = (char)ch;
    } else if (ch < 0x20) {
      *o += snprintf(*o, (size_t)(end - *o), "\\u%04x", ch);
    } else {
      *(*o)++ = (char)ch;
    }
  }
}

/* flags "-DA=1 -DB=2" (knobs by name) and knobs {"A": "1", ...}. */
static void genome_text(const tmpl_t *t, const genome *g, char *flags,
                        char *knobs) {
  char *o = flags, *end = flags + FLAGS_LEN;
  *o = '\0';
  for (int j = 0; j < t->n_knobs; j++) {
    int q = t->order[j];
    o += snprintf(o, (size_t)(end - o), "%s-D%s=%s", j ? " " : "", t->knob[q],
                  t->values[q][g->v[q]]);
    if (o >= end) o = end - 1;
  }
  o = knobs;
  end = knobs + KNOBS_LEN;
  *o++ = '{';
  for (int q = 0; q < t->n_knobs && o + 8 < end; q++) {
    if (q) *o++ = ',';
    *o++ = '"';
    json_str(&o, end - 4, t->knob[q]);
    *o++ = '"';
    *o++ = ':';
    *o++ = '"';
    json_str(&o, end - 4, t->values[q][g->v[q]]);
    *o++ = '"';
  }
  *o++ = '}';
  *o = '\0';
}

/* A row's knobs as a genome of its template; false when the row is not a
 * plain instance of one (free-form source, unknown knob or value). */
static bool row_genome(const tmpl_t *ts, int nt, const kf_cand_row *r,
                       genome *g) {
  int t = find_template(ts, nt, r->template_name);
  if (t < 0 || strcmp(ts[t].sha, r->source_sha256) != 0) return false;
  cJSON *j = cJSON_Parse(r->knobs_json);
  if (!j) return false;
  memset(g, 0, sizeof *g);
  g->t = t;
  bool ok = cJSON_GetArraySize(j) == ts[t].n_knobs;
  for (int q = 0; q < ts[t].n_knobs && ok; q++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, ts[t].knob[q]);
    ok = false;
    for (int x = 0; cJSON_IsString(v) && x < ts[t].n_values[q]; x++)
      if (strcmp(v->valuestring, ts[t].values[q][x]) == 0) {
        g->v[q] = (uint8_t)x;
        ok = true;
        break;
      }
  }
  cJSON_Delete(j);
  return ok;
}

/* ----------------------------------------------------------- key set -- */

/* What a key means to the campaign being stepped, by priority: when two
 * rows name one key, the higher kind wins. */
typedef enum {
  KEY_FREE = 0, /* nothing usable on this class: measure it */
  KEY_BUSY,     /* another campaign of the problem is measuring it: not
                 * now, maybe reusable later */
  KEY_REUSE,    /* another campaign of the problem measured it under the
                 * class's environment: reuse (aggregate) that */
  KEY_MINE,     /* this campaign holds it (task, reuse or duplicate) */
} key_kind;

typedef struct {
  uint64_t *h;
  int64_t *owner;  /* the key's candidate; 0: planned in this step */
  int64_t *eval;   /* KEY_REUSE: the evaluation to copy */
  uint8_t *kind;   /* key_kind */
  size_t cap, n;
} keyset;

static uint64_t key_hash(const char *sha, const char *flags) {
  static const unsigned char sep = 0xff; /* in neither: "ab"+"c" != "a"+"bc" */
  uint64_t h = kf_fnv1a(KF_FNV1A_INIT, sha, strlen(sha));
  h = kf_fnv1a(h, &sep, 1);
  h = kf_fnv1a(h, flags, strlen(flags));
  return h ? h : 1;
}

/* Kind of a key (KEY_FREE when absent); *owner and *eval may be NULL. */
static key_kind keyset_get(const keyset *k, uint64_t h, int64_t *owner,
                           int64_t *eval) {
  if (owner) *owner = 0;
  if (eval) *eval = 0;
  if (!k->cap) return KEY_FREE;
  for (size_t i = h & (k->cap - 1);; i = (i + 1) & (k->cap - 1)) {
    if (!k->h[i]) return KEY_FREE;
    if (k->h[i] == h) {
      if (owner) *owner = k->owner[i];
      if (eval) *eval = k->eval[i];
      return (key_kind)k->kind[i];
    }
  }
}

/* Adds or updates a key; a kind never gives way to a lower one (so
 * KEY_MINE, this campaign's own row, wins over anything another campaign
 * holds). */
static int keyset_put(keyset *k, uint64_t h, key_kind kind, int64_t owner,
                      int64_t eval) {
  if ((k->n + 1) * 2 > k->cap) {
    size_t ncap = k->cap ? k->cap * 2 : 256;
    uint64_t *nh = calloc(ncap, sizeof *nh);
    int64_t *no = calloc(ncap, sizeof *no);
    int64_t *ne = calloc(ncap, sizeof *ne);
    uint8_t *nk = calloc(ncap, sizeof *nk);
    if (!nh || !no || !ne || !nk) {
      free(nh);
      free(no);
      free(ne);
      free(nk);
      return KF_ENOMEM;
    }
    for (size_t i = 0; i < k->cap; i++) {
      if (!k->h[i]) continue;
      size_t j = k->h[i] & (ncap - 1);
      while (nh[j]) j = (j + 1) & (ncap - 1);
      nh[j] = k->h[i];
      no[j] = k->owner[i];
      ne[j] = k->eval[i];
      nk[j] = k->kind[i];
    }
    free(k->h);
    free(k->owner);
    free(k->eval);
    free(k->kind);
    k->h = nh;
    k->owner = no;
    k->eval = ne;
    k->kind = nk;
    k->cap = ncap;
  }
  size_t i = h & (k->cap - 1);
  while (k->h[i] && k->h[i] != h) i = (i + 1) & (k->cap - 1);
  if (k->h[i] && k->kind[i] > kind) return 0;
  if (!k->h[i]) k->n++;
  k->h[i] = h;
  k->owner[i] = owner;
  k->eval[i] = eval;
  k->kind[i] = (uint8_t)kind;
  return 0;
}

static void keyset_free(keyset *k) {
  free(k->h);
  free(k->owner);
  free(k->eval);
  free(k->kind);
  *k = (keyset){0};
}

/* A drawn key the step may take: new, or another campaign's to reuse. */
static bool key_usable(key_kind kind) {
  return kind == KEY_FREE || kind == KEY_REUSE;
}

/* ------------------------------------------------------------ breeding -- */

typedef struct {
  genome g;
  int64_t cand;
  int32_t gen;
  double med, spread;
  const char *bound;          /* its diagnosis (0007), "" when none */
} parent_t;

static int cmp_parent(const void *a, const void *b) {
  const parent_t *x = a, *y = b;
  if (x->med != y->med) return x->med < y->med ? -1 : 1;
  return (x->cand > y->cand) - (x->cand < y->cand);
}

/* Tournament of k = 3 over pool[0..n) (sorted best first, so the lowest
 * index wins), among entries of template t (any when t < 0) other than
 * skip.  -1 when there is none. */
static int tournament(const parent_t *pool, int n, int t, int skip,
                      uint64_t *rng) {
  int m = 0;
  for (int i = 0; i < n; i++)
    if ((t < 0 || pool[i].g.t == t) && i != skip) m++;
  int best = -1;
  for (int r = 0; r < 3 && m > 0; r++) {
    int k = (int)rng_below(rng, (uint32_t)m), pick = -1;
    for (int i = 0; i < n; i++)
      if ((t < 0 || pool[i].g.t == t) && i != skip && k-- == 0) {
        pick = i;
        break;
      }
    if (best < 0 || pick < best) best = pick;
  }
  return best;
}

/* Changes one or two knobs that have a choice.  false when none has. */
static bool mutate(const tmpl_t *t, genome *g, uint64_t *rng,
                   const char *bound) {
  int mut[MAXK], m = 0;
  for (int q = 0; q < t->n_knobs; q++)
    if (t->n_values[q] > 1) mut[m++] = q;
  if (!m) return false;
  int times = (m > 1 && rng_unit(rng) < 0.35) ? 2 : 1;
  for (int i = 0; i < times; i++) {
    /* the first change prefers a knob that matters for the diagnosis */
    int j = i || !bound || !*bound
                ? -1
                : kf_search__pick_knob(t->knob, mut, m, bound, rng_unit(rng));
    if (j < 0) j = (int)rng_below(rng, (uint32_t)m);
    int q = mut[j];
    mut[j] = mut[--m]; /* a knob changes at most once */
    uint32_t nv = (uint32_t)t->n_values[q];
    g->v[q] = (uint8_t)((g->v[q] + 1 + rng_below(rng, nv - 1)) % nv);
  }
  return true;
}

/* A random genome of a template that `usable` allows (all when NULL;
 * usable allows at least one). */
static void random_genome(const tmpl_t *ts, int nt, const bool *usable,
                          genome *g, uint64_t *rng) {
  memset(g, 0, sizeof *g);
  int n = 0;
  for (int i = 0; i < nt; i++) n += !usable || usable[i];
  int k = (int)rng_below(rng, (uint32_t)(n ? n : 1));
  g->t = 0;
  for (int i = 0; i < nt; i++)
    if ((!usable || usable[i]) && k-- == 0) {
      g->t = i;
      break;
    }
  for (int q = 0; q < ts[g->t].n_knobs; q++)
    g->v[q] = (uint8_t)rng_below(rng, (uint32_t)ts[g->t].n_values[q]);
}

/* ------------------------------------------------------------- a class -- */

typedef struct {
  kf_eval_plan plan;
  char flags[FLAGS_LEN];
  char knobs[KNOBS_LEN];
  int64_t parents[2];
  const char *source;        /* for the payload */
  const char *knobs_json;    /* for the payload */
  uint8_t *payload;
} plan_t;

typedef struct {
  kf_store *s;
  const kf_search_opts *o;
  const kf_campaign *c;
  const tmpl_t *ts;
  int nt;
  const kf_cand_list *evals;
} camp_ctx;

/* Fills the EvalRequest knobs from a {"NAME": "value"} object. */
static int pack_payload(const camp_ctx *x, plan_t *p) {
  cJSON *j = cJSON_Parse(p->knobs_json ? p->knobs_json : "{}");
  int nk = j ? cJSON_GetArraySize(j) : 0;
  Kernelfleet__Knob *kv = calloc((size_t)nk + 1, sizeof *kv);
  Kernelfleet__Knob **kp = calloc((size_t)nk + 1, sizeof *kp);
  int rc = 0;
  if (!kv || !kp) {
    rc = KF_ENOMEM;
    goto out;
  }
  int n = 0;
  for (const cJSON *it = j ? j->child : NULL; it; it = it->next) {
    if (!cJSON_IsString(it) || !it->string) continue;
    kernelfleet__knob__init(&kv[n]);
    kv[n].name = it->string;
    kv[n].value = it->valuestring;
    kp[n] = &kv[n];
    n++;
  }
  uint64_t seed = 0;
  ssize_t got;
  do {
    got = getrandom(&seed, sizeof seed, 0);
  } while (got < 0 && errno == EINTR);
  if (got != (ssize_t)sizeof seed) {
    rc = KF_EIO;
    goto out;
  }
  Kernelfleet__EvalRequest rq = KERNELFLEET__EVAL_REQUEST__INIT;
  rq.problem = (char *)x->c->problem;
  rq.problem_spec.data = (uint8_t *)x->c->spec_json;
  rq.problem_spec.len = x->c->spec_json_len;
  rq.source = (char *)p->source;
  rq.n_knobs = (size_t)n;
  rq.knobs = kp;
  rq.reference_source = (char *)x->c->reference_source;
  rq.seed = seed;
  rq.candidate_id = p->plan.candidate_id;
  rq.language = (char *)x->c->language;
  kf_search__profile_request(x->c, x->evals, p->plan.device_class_id, &rq);
  size_t len = kernelfleet__eval_request__get_packed_size(&rq);
  p->payload = malloc(len ? len : 1);
  if (!p->payload) {
    rc = KF_ENOMEM;
    goto out;
  }
  kernelfleet__eval_request__pack(&rq, p->payload);
  p->plan.payload = p->payload;
  p->plan.payload_len = len;
out:
  cJSON_Delete(j);
  free(kv);
  free(kp);
  return rc;
}

/* Finds a usable genome (new, or reusable) by walking template t's space
 * in order from a random offset.  1 found; 0 walked it all; -1 gave up at
 * WALK_LIMIT, or saw keys another campaign is still evaluating (they may
 * become reusable: the space is not exhausted). */
static int walk(const tmpl_t *t, int ti, const keyset *keys, genome *g,
                uint64_t *rng) {
  bool busy = false;
  double space = t->space;
  uint64_t n = space > WALK_LIMIT ? WALK_LIMIT : (uint64_t)space;
  uint64_t start = space > 1 ? rng_next(rng) % (uint64_t)fmin(space, 1e18) : 0;
  char flags[FLAGS_LEN], knobs[KNOBS_LEN];
  for (uint64_t i = 0; i < n; i++) {
    uint64_t idx = start + i;
    if (space <= 1e18) idx %= (uint64_t)space;
    memset(g, 0, sizeof *g);
    g->t = ti;
    for (int q = 0; q < t->n_knobs; q++) {
      g->v[q] = (uint8_t)(idx % (uint64_t)t->n_values[q]);
      idx /= (uint64_t)t->n_values[q];
    }
    genome_text(t, g, flags, knobs);
    key_kind kind = keyset_get(keys, key_hash(t->sha, flags), NULL, NULL);
    if (key_usable(kind)) return 1;
    if (kind == KEY_BUSY) busy = true;
  }
  return space > WALK_LIMIT || busy ? -1 : 0;
}

/* Steps one device class of a campaign: plans up to `need` eval tasks,
 * and reuses of other campaigns' evaluations of the keys it draws, up to
 * budget_left of both together.  *made: tasks created; *reused:
 * evaluations reused.  *exhausted: no genome is left on this class. */
static int step_class(const camp_ctx *x, const kf_eval_class *cls,
                      uint32_t need, uint32_t budget_left,
                      uint32_t issued_total, uint32_t *made, uint32_t *reused,
                      bool *exhausted) {
  kf_store *s = x->s;
  const kf_campaign *c = x->c;
  const tmpl_t *ts = x->ts;
  int nt = x->nt;
  int64_t dc = cls->device_class_id;
  *made = 0;
  *reused = 0;
  *exhausted = false;
  kf_cand_list *keys = NULL, *pending = NULL;
  keyset ks = {0};
  parent_t *pool = NULL;
  plan_t *plans = NULL;
  size_t np = 0;
  bool *sched = NULL;
  int64_t *cids = NULL, *tids = NULL;
  int rc;

  /* Another campaign's row is usable only when the store found its
   * evaluation reusable here (same problem, the class's one environment,
   * not timing-dependent); one in flight may become so; anything else
   * (failed, timing-dependent, another environment) is measured anew. */
  if ((rc = kf_store_eval_keys(s, c->id, dc, cls->environment_id,
                               c->template_shas, &keys)))
    goto out;
  for (size_t i = 0; i < keys->n; i++) {
    const kf_cand_row *r = &keys->v[i];
    key_kind kind = r->campaign_id == c->id ? KEY_MINE
                    : r->eval_id            ? KEY_REUSE
                    : (!strcmp(r->stage, "queued") ||
                       !strcmp(r->stage, "leased"))
                        ? KEY_BUSY
                        : KEY_FREE;
    if (kind == KEY_FREE) continue;
    if ((rc = keyset_put(&ks, key_hash(r->source_sha256, r->flags), kind,
                         r->candidate_id, r->eval_id)))
      goto out;
  }
  if ((rc = kf_store_pending_candidates(s, c->id, dc, &pending))) goto out;

  /* Plans: every pending proposal may become a duplicate row, plus at
   * most `need` scheduled evaluations and REUSE_PER_STEP reused ones. */
  size_t cap = pending->n + need + REUSE_PER_STEP + 1;
  plans = calloc(cap, sizeof *plans);
  if (!plans) {
    rc = KF_ENOMEM;
    goto out;
  }
  uint32_t left = need, budget = budget_left, reuses = 0;
  for (size_t i = 0; i < pending->n; i++) {
    const kf_cand_row *r = &pending->v[i];
    uint64_t h = key_hash(r->source_sha256, r->flags);
    int64_t owner = 0, ev = 0;
    key_kind kind = keyset_get(&ks, h, &owner, &ev);
    plan_t *p = &plans[np];
    p->plan = (kf_eval_plan){.candidate_id = r->candidate_id,
                             .device_class_id = dc};
    if (kind == KEY_BUSY) continue; /* stays pending; reused once measured */
    if (kind == KEY_MINE) {
      p->plan.duplicate_of = owner ? owner : r->candidate_id;
      np++;
      continue;
    }
    /* A proposal was accepted, so it is evaluated even past budget_evals
     * (it still counts toward it, leaving the search less); only the
     * workers' capacity paces it. */
    if (kind == KEY_FREE ? !left : reuses == REUSE_PER_STEP) break;
    if (kind == KEY_REUSE) {
      p->plan.duplicate_of = owner;
      p->plan.reuse_eval = ev;
      p->plan.environment_id = cls->environment_id;
      reuses++;
    } else {
      p->plan.priority = 1; /* proposals are evaluated next */
      p->source = r->source;
      p->knobs_json = r->knobs_json;
      left--;
    }
    if ((rc = keyset_put(&ks, h, KEY_MINE, r->candidate_id, 0))) goto out;
    np++;
    if (budget) budget--;
  }

  /* The class's population: its ok, breedable evaluations, best first. */
  size_t npool = 0;
  pool = calloc(x->evals->n + 1, sizeof *pool);
  if (!pool) {
    rc = KF_ENOMEM;
    goto out;
  }
  for (size_t i = 0; i < x->evals->n; i++) {
    const kf_cand_row *r = &x->evals->v[i];
    if (r->device_class_id != dc || r->outcome != KF_OUTCOME_OK ||
        r->time_ns_median <= 0)
      continue;
    parent_t *p = &pool[npool];
    if (!row_genome(ts, nt, r, &p->g)) continue;
    p->cand = r->candidate_id;
    p->gen = r->generation;
    p->med = r->time_ns_median;
    p->spread = r->time_ns_spread;
    p->bound = r->bound ? r->bound : "";
    npool++;
  }
  qsort(pool, npool, sizeof *pool, cmp_parent);
  if (npool > c->population) npool = c->population;

  uint64_t rng = c->search_seed ^ ((uint64_t)issued_total * 0xD6E8FEB86659FD93ull) ^
                 ((uint64_t)dc * 0xC2B2AE3D27D4EB4Full);
  (void)rng_next(&rng);

  /* Migrants: the best genome of every other class, when this class
   * holds no key of it yet. */
  typedef struct {
    genome g;
    int64_t cand;
    int32_t gen;
  } migrant;
  migrant mig[16];
  int nmig = 0, next_mig = 0;
  {
    kf_search__best bests[16];
    size_t nb = kf_search__class_bests(x->evals, bests, 16, NULL);
    for (size_t b = 0; b < nb && nmig < 16; b++) {
      if (bests[b].dc == dc) continue;
      genome g;
      char fl[FLAGS_LEN], kn[KNOBS_LEN];
      if (!row_genome(ts, nt, bests[b].best, &g)) continue;
      genome_text(&ts[g.t], &g, fl, kn);
      if (!key_usable(keyset_get(&ks, key_hash(ts[g.t].sha, fl), NULL, NULL)))
        continue;
      mig[nmig++] = (migrant){g, bests[b].best->candidate_id,
                              bests[b].best->generation + 1};
    }
  }

  /* Random draws and walks leave out a proposer's template until it has
   * evaluated ok here: what a model wrote may not even compile.  Once it
   * has, explore[] holds the points of its space still to try first (up
   * to EXPLORE distinct points of this campaign on the class, planned
   * proposals included). */
  int explore[MAX_TEMPLATES] = {0};
  bool usable[MAX_TEMPLATES];
  for (int ti = 0; ti < nt; ti++) {
    usable[ti] = !ts[ti].proposed;
    if (!ts[ti].proposed) continue;
    bool ok = false;
    for (size_t i = 0; i < x->evals->n && !ok; i++) {
      const kf_cand_row *r = &x->evals->v[i];
      ok = r->device_class_id == dc && r->outcome == KF_OUTCOME_OK &&
           strcmp(r->source_sha256, ts[ti].sha) == 0;
    }
    usable[ti] = ok;
    if (!ok || ts[ti].space < 2) continue;
    /* distinct points (flags): a duplicate proposal is no new point */
    keyset seen = {0};
    for (size_t i = 0; i < keys->n + pending->n && !rc; i++) {
      const kf_cand_row *r =
          i < keys->n ? &keys->v[i] : &pending->v[i - keys->n];
      if ((i < keys->n && r->campaign_id != c->id) ||
          strcmp(r->source_sha256, ts[ti].sha) != 0)
        continue;
      rc = keyset_put(&seen, key_hash(r->source_sha256, r->flags), KEY_MINE,
                      0, 0);
    }
    int have = (int)seen.n;
    keyset_free(&seen);
    if (rc) goto out;
    int want = ts[ti].space < EXPLORE ? (int)ts[ti].space : EXPLORE;
    explore[ti] = want > have ? want - have : 0;
  }
  bool initial = cls->issued < c->population || npool < 2;
  uint32_t tries_each = x->o->tries ? x->o->tries : 64;
  int next_default = 0;
  bool walked_all = false;
  while (left > 0 && budget > 0 && reuses < REUSE_PER_STEP && nt > 0 &&
         !walked_all) {
    genome g;
    int32_t gen = 0;
    int64_t par[2] = {0, 0};
    int npar = 0;
    bool found = false;
    char flags[FLAGS_LEN], knobs[KNOBS_LEN];
    int xt = -1;
    for (int ti = 0; ti < nt && xt < 0; ti++)
      if (explore[ti] > 0) xt = ti;
    bool migrating = xt < 0 && next_mig < nmig;
    for (uint32_t t = 0; t < tries_each && !found; t++) {
      npar = 0;
      gen = 0;
      if (migrating) {
        const migrant *m = &mig[next_mig++];
        g = m->g;
        par[npar++] = m->cand;
        gen = m->gen;
        t--; /* migrants do not use up draws */
        if (next_mig == nmig) migrating = false;
      } else if (xt >= 0) {
        memset(&g, 0, sizeof g);
        g.t = xt;
        for (int q = 0; q < ts[xt].n_knobs; q++)
          g.v[q] = (uint8_t)rng_below(&rng, (uint32_t)ts[xt].n_values[q]);
        gen = 1;
      } else if (initial && next_default < nt) {
        memset(&g, 0, sizeof g);
        g.t = next_default++;
        t--; /* defaults do not use up draws */
        if (!usable[g.t]) continue;
      } else if (initial || npool == 0) {
        random_genome(ts, nt, usable, &g, &rng);
      } else {
        int a = tournament(pool, (int)npool, -1, -1, &rng);
        if (a < 0) break;
        g = pool[a].g;
        par[npar++] = pool[a].cand;
        gen = pool[a].gen + 1;
        bool crossed = false;
        if (rng_unit(&rng) < 0.5) {
          int b = tournament(pool, (int)npool, g.t, a, &rng);
          if (b >= 0) {
            const tmpl_t *tp = &ts[g.t];
            for (int q = 0; q < tp->n_knobs; q++)
              if (rng_next(&rng) & 1) g.v[q] = pool[b].g.v[q];
            par[npar++] = pool[b].cand;
            if (pool[b].gen + 1 > gen) gen = pool[b].gen + 1;
            crossed = memcmp(g.v, pool[a].g.v, sizeof g.v) != 0 &&
                      memcmp(g.v, pool[b].g.v, sizeof g.v) != 0;
          }
        }
        if ((!crossed || rng_unit(&rng) < 0.3) &&
            !mutate(&ts[g.t], &g, &rng, pool[a].bound) && !crossed)
          continue;
      }
      genome_text(&ts[g.t], &g, flags, knobs);
      found = key_usable(keyset_get(&ks, key_hash(ts[g.t].sha, flags), NULL,
                                    NULL));
    }
    if (xt >= 0) {
      /* Its space is small or mostly known: the usual search goes on. */
      explore[xt] = found ? explore[xt] - 1 : 0;
      if (!found) continue;
    }
    if (!found) {
      /* Draws keep hitting known keys: walk the spaces in order. */
      int start = (int)rng_below(&rng, (uint32_t)nt);
      bool all_done = true;
      for (int i = 0; i < nt && !found; i++) {
        int ti = (start + i) % nt;
        if (!usable[ti]) continue;
        int w = walk(&ts[ti], ti, &ks, &g, &rng);
        if (w == 1) found = true;
        if (w != 0) all_done = false;
      }
      if (!found) {
        walked_all = all_done;
        break;
      }
      npar = 0;
      gen = 0;
      genome_text(&ts[g.t], &g, flags, knobs);
    }
    uint64_t h = key_hash(ts[g.t].sha, flags);
    int64_t owner = 0, ev = 0;
    key_kind kind = keyset_get(&ks, h, &owner, &ev);
    plan_t *p = &plans[np++];
    memcpy(p->flags, flags, sizeof p->flags);
    memcpy(p->knobs, knobs, sizeof p->knobs);
    memcpy(p->parents, par, sizeof par);
    p->source = ts[g.t].source;
    p->knobs_json = p->knobs;
    p->plan = (kf_eval_plan){
        .new_candidate = true,
        .device_class_id = dc,
        .template_name = ts[g.t].name,
        .knobs_json = p->knobs,
        .source = ts[g.t].source,
        .proposer = "evolution",
        .parents = p->parents,
        .n_parents = (size_t)npar,
        .generation = gen,
        .flags = p->flags,
    };
    if (kind == KEY_REUSE) {
      /* Measured by another campaign: record it here, no task. */
      p->plan.duplicate_of = owner;
      p->plan.reuse_eval = ev;
      p->plan.environment_id = cls->environment_id;
      reuses++;
    } else {
      left--;
    }
    budget--;
    if ((rc = keyset_put(&ks, h, KEY_MINE, 0, 0))) goto out;
  }
  *exhausted = walked_all || nt == 0;
  if (np == 0) goto out;

  /* Ids first: the payload names its candidate. */
  cids = calloc(np, sizeof *cids);
  tids = calloc(np, sizeof *tids);
  sched = calloc(np, sizeof *sched);
  if (!cids || !tids || !sched) {
    rc = KF_ENOMEM;
    goto out;
  }
  if ((rc = kf_store_reserve_ids(s, np, cids, tids))) goto out;
  for (size_t i = 0; i < np; i++) {
    plan_t *p = &plans[i];
    if (p->plan.new_candidate) p->plan.candidate_id = cids[i];
    if (p->plan.duplicate_of) continue;
    p->plan.task_id = tids[i];
    p->plan.max_attempts = x->o->max_attempts ? x->o->max_attempts : 2;
    p->plan.timeout_ms = x->o->timeout_ms ? x->o->timeout_ms : 120000;
    if ((rc = pack_payload(x, p))) goto out;
  }
  kf_eval_plan *flat = calloc(np, sizeof *flat);
  if (!flat) {
    rc = KF_ENOMEM;
    goto out;
  }
  for (size_t i = 0; i < np; i++) flat[i] = plans[i].plan;
  rc = kf_store_schedule(s, c->id, flat, np, sched);
  free(flat);
  for (size_t i = 0; !rc && i < np; i++) {
    if (!sched[i]) continue;
    if (plans[i].plan.task_id) (*made)++;
    else if (plans[i].plan.reuse_eval) (*reused)++;
  }
out:
  for (size_t i = 0; i < np; i++) free(plans[i].payload);
  free(plans);
  free(pool);
  free(cids);
  free(tids);
  free(sched);
  keyset_free(&ks);
  kf_store_list_free(keys);
  kf_store_list_free(pending);
  return rc;
}

/* --------------------------------------------------------- a campaign -- */

size_t kf_search__class_bests(const kf_cand_list *evals, kf_search__best *out,
                              size_t cap, uint32_t *since) {
  size_t nb = 0;
  uint32_t n_since = 0;
  for (size_t i = 0; i < evals->n; i++) {
    const kf_cand_row *r = &evals->v[i];
    n_since++;
    if (r->outcome != KF_OUTCOME_OK || r->time_ns_median <= 0) continue;
    size_t b = 0;
    while (b < nb && out[b].dc != r->device_class_id) b++;
    if (b == nb) {
      if (nb == cap) continue;
      out[nb++] = (kf_search__best){r->device_class_id, NULL};
    }
    const kf_cand_row *cur = out[b].best;
    if (!cur || kf_search_beats(r->time_ns_median, r->time_ns_spread,
                                cur->time_ns_median, cur->time_ns_spread)) {
      out[b].best = r;
      n_since = 0;
    }
  }
  if (since) *since = n_since;
  return nb;
}

/* The plateau count of class dc: its evaluations after the last one that
 * changed its noise-aware best (all of them while it has none). */
static uint32_t class_since(const kf_cand_list *evals, int64_t dc) {
  const kf_cand_row *cur = NULL;
  uint32_t n = 0;
  for (size_t i = 0; i < evals->n; i++) {
    const kf_cand_row *r = &evals->v[i];
    if (r->device_class_id != dc) continue;
    n++;
    if (r->outcome != KF_OUTCOME_OK || r->time_ns_median <= 0) continue;
    if (!cur || kf_search_beats(r->time_ns_median, r->time_ns_spread,
                                cur->time_ns_median, cur->time_ns_spread)) {
      cur = r;
      n = 0;
    }
  }
  return n;
}

/* The campaign's stop reason once no class searches: the classes' one
 * reason, or each class's ("per class: MODEL: REASON; ..."). */
static void combined_reason(const kf_class_list *cl, char *buf, size_t len) {
  buf[0] = '\0';
  bool same = true;
  for (size_t i = 1; i < cl->n && same; i++)
    same = !strcmp(cl->v[i].stop_reason, cl->v[0].stop_reason);
  if (cl->n == 0) return;
  if (same) {
    snprintf(buf, len, "%s", cl->v[0].stop_reason);
    return;
  }
  size_t o = (size_t)snprintf(buf, len, "per class:");
  for (size_t i = 0; i < cl->n && o < len; i++) {
    int w = snprintf(buf + o, len - o, "%s %.60s: %.100s", i ? ";" : "",
                     cl->v[i].dc.model, cl->v[i].stop_reason);
    if (w < 0) break;
    o += (size_t)w;
  }
}

static const char *class_state(const kf_class_list *cl, int64_t dc) {
  for (size_t i = 0; i < cl->n; i++)
    if (cl->v[i].device_class_id == dc) return cl->v[i].state;
  return "";
}

/* Each class the campaign runs on searches until its own rule stops it
 * (budget_evals counts its evaluations, budget_seconds runs from the
 * class's start, the plateau counts its evaluations, the roofline target
 * is its best's), then re-times its top in its own showdown.  The
 * campaign moves to "showdown" once no class searches and is done once
 * every class is.  A campaign no class ever ran on ends on its wall-clock
 * budget, as before 0009. */
static int step_campaign(kf_store *s, int64_t id, const kf_search_opts *o,
                         kf_search_stats *st) {
  kf_campaign *c = NULL;
  kf_cand_list *evals = NULL;
  kf_eval_class *cls = NULL;
  kf_class_list *cl = NULL;
  size_t ncls = 0;
  cJSON *tree = NULL;
  tmpl_t *ts = NULL;
  int nt = 0;
  kf_search__best *bests = NULL;
  int64_t *dcs = NULL;
  size_t nb = 0;
  int rc = kf_store_campaign_get(s, id, &c);
  if (rc == KF_ENOTFOUND) return 0;
  if (rc) return rc;
  bool running = strcmp(c->state, "running") == 0;
  if (!running && strcmp(c->state, "showdown") != 0) goto out;

  /* The classes: every one that can evaluate it now joins (running). */
  if ((rc = kf_store_eval_classes(s, id, o->alive_ms, &cls, &ncls))) goto out;
  dcs = calloc(ncls + 1, sizeof *dcs);
  if (!dcs) {
    rc = KF_ENOMEM;
    goto out;
  }
  for (size_t i = 0; i < ncls; i++) dcs[i] = cls[i].device_class_id;
  if ((rc = kf_store_campaign_classes(s, id, dcs, running ? ncls : 0, &cl)))
    goto out;
  if (!running) {
    /* In its showdown: a campaign from before 0009 has no class rows. */
    if (cl->n == 0) {
      rc = kf_search__showdown_step(s, o, c, st);
      goto out;
    }
    if ((rc = kf_search__class_showdowns(s, o, c, cl))) goto out;
    kf_store_class_list_free(cl);
    cl = NULL;
    if ((rc = kf_store_campaign_classes(s, id, NULL, 0, &cl))) goto out;
    bool all_done = true;
    for (size_t i = 0; i < cl->n; i++)
      all_done &= !strcmp(cl->v[i].state, "done");
    if (all_done) rc = kf_search__finish(s, o, c, NULL, NULL, st);
    else st->running++;
    goto out;
  }

  kf_campaign_counts cnt;
  if ((rc = kf_store_campaign_counts(s, id, &cnt))) goto out;
  if ((rc = kf_store_evaluations(s, id, KF_EVALS_BY_ID, 0, &evals))) goto out;

  /* Best per class, and overall the highest speedup of the classes'. */
  bests = calloc(evals->n + 1, sizeof *bests);
  if (!bests) {
    rc = KF_ENOMEM;
    goto out;
  }
  nb = kf_search__class_bests(evals, bests, evals->n + 1, NULL);
  const kf_cand_row *best = NULL;
  for (size_t b = 0; b < nb; b++) {
    const kf_cand_row *r = bests[b].best;
    if (!best || r->speedup > best->speedup) best = r;
  }
  if (best && best->candidate_id != c->best_candidate_id &&
      (rc = kf_store_campaign_set_best(s, id, best->candidate_id)))
    goto out;

  /* A proposal the campaign accepted is evaluated before a class ends:
   * no rule stops it while one waits (never planned, or its task queued
   * or leased), unless no worker could evaluate it -- then the
   * wall-clock budget still ends the class. */
  bool waiting = cnt.proposals_waiting > 0;

  if (cl->n == 0) {
    /* No class ever ran it: only the wall clock ends it. */
    if (c->elapsed_ms >= (uint64_t)c->budget_seconds * 1000) {
      rc = kf_search__showdown_begin(s, o, c, "budget_seconds elapsed", evals,
                                     st);
      goto out;
    }
    st->running++;
    goto out;
  }

  /* Classes in their showdown: record the ended ones. */
  if ((rc = kf_search__class_showdowns(s, o, c, cl))) goto out;

  /* Stop rules per class, cheapest evidence first. */
  bool stopped_any = false;
  for (size_t i = 0; i < cl->n; i++) {
    const kf_class_row *k = &cl->v[i];
    if (strcmp(k->state, "running") != 0) continue;
    const kf_eval_class *alive = NULL;
    for (size_t j = 0; j < ncls && !alive; j++)
      if (cls[j].device_class_id == k->device_class_id) alive = &cls[j];
    const kf_cand_row *kb = NULL;
    const kf_search__best *kbest = NULL;
    for (size_t b = 0; b < nb && !kb; b++)
      if (bests[b].dc == k->device_class_id) {
        kb = bests[b].best;
        kbest = &bests[b];
      }
    if (kb && kb->candidate_id != k->best_candidate_id &&
        (rc = kf_store_class_set_best(s, id, k->device_class_id,
                                      kb->candidate_id)))
      goto out;
    uint32_t since = class_since(evals, k->device_class_id);
    const char *stop = NULL;
    char diag_stop[128];
    if (k->elapsed_ms >= (uint64_t)c->budget_seconds * 1000 &&
        !(waiting && alive))
      stop = "budget_seconds elapsed";
    else if (waiting)
      stop = NULL;
    else if (c->target_roofline > 0 && kb &&
             kb->roofline_fraction >= c->target_roofline)
      stop = "target roofline reached";
    else if (kbest &&
             kf_search__diag_stop(kbest, 1, diag_stop, sizeof diag_stop))
      stop = diag_stop;
    else if (k->evals >= c->budget_evals ||
             (k->issued >= c->budget_evals && k->outstanding == 0))
      stop = "budget_evals reached";
    else if (c->plateau_evals > 0 && since >= c->plateau_evals)
      stop = "plateau";
    if (!stop) continue;
    bool changed = false;
    if ((rc = kf_search__class_stop(s, o, c, k->device_class_id, stop, evals,
                                    alive, &changed)))
      goto out;
    stopped_any |= changed;
  }

  if (stopped_any) {
    kf_store_class_list_free(cl);
    cl = NULL;
    if ((rc = kf_store_campaign_classes(s, id, NULL, 0, &cl))) goto out;
  }
  if ((rc = kf_search__class_showdowns(s, o, c, cl))) goto out;
  if (stopped_any) {
    kf_store_class_list_free(cl);
    cl = NULL;
    if ((rc = kf_store_campaign_classes(s, id, NULL, 0, &cl))) goto out;
  }
  bool any_running = false, any_showdown = false;
  for (size_t i = 0; i < cl->n; i++) {
    any_running |= !strcmp(cl->v[i].state, "running");
    any_showdown |= !strcmp(cl->v[i].state, "showdown");
  }
  if (!any_running) {
    /* Every class stopped: the campaign's showdown, or its end. */
    char reason[512];
    combined_reason(cl, reason, sizeof reason);
    bool changed = false;
    if (any_showdown) {
      rc = kf_store_campaign_enter_showdown(s, id, reason, &changed);
      if (!rc) st->running++;
    } else {
      rc = kf_search__finish(s, o, c, reason, cl->v[0].showdown, st);
    }
    goto out;
  }
  st->running++;

  if ((rc = parse_templates(c, &tree, &ts, &nt))) goto out;
  camp_ctx x = {s, o, c, ts, nt, evals};
  uint32_t issued = cnt.issued;
  uint32_t per_slot = o->per_slot ? o->per_slot : 2;
  for (size_t i = 0; i < ncls; i++) {
    int64_t dc = cls[i].device_class_id;
    if (strcmp(class_state(cl, dc), "running") != 0) continue;
    const kf_class_row *k = NULL;
    for (size_t j = 0; j < cl->n && !k; j++)
      if (cl->v[j].device_class_id == dc) k = &cl->v[j];
    /* Past the class's budget only waiting proposals are planned. */
    if (k->issued >= c->budget_evals && !waiting) continue;
    uint32_t want = per_slot * (cls[i].slots ? cls[i].slots : cls[i].workers);
    uint32_t need = want > cls[i].outstanding ? want - cls[i].outstanding : 0;
    uint32_t budget = c->budget_evals > k->issued
                          ? c->budget_evals - k->issued : 0;
    /* The budget caps the search's own candidates; a waiting proposal
     * needs only room on the class (step_class). */
    if (need > budget && !waiting) need = budget;
    if (need == 0) continue;
    uint32_t made = 0, reused = 0;
    bool exh = false;
    if ((rc = step_class(&x, &cls[i], need, budget, issued, &made, &reused,
                         &exh)))
      goto out;
    issued += made + reused;
    st->scheduled += made;
    st->reused += reused;
    if (exh && made == 0 && reused == 0 && cls[i].outstanding == 0 &&
        !waiting) {
      bool changed = false;
      if ((rc = kf_search__class_stop(s, o, c, dc, "search space exhausted",
                                      evals, &cls[i], &changed)))
        goto out;
    }
  }
out:
  cJSON_Delete(tree);
  free(ts);
  free(cls);
  free(dcs);
  free(bests);
  kf_store_class_list_free(cl);
  kf_store_list_free(evals);
  kf_store_campaign_free(c);
  return rc;
}

int kf_search_step(kf_store *s, int64_t campaign_id, const kf_search_opts *o,
                   kf_search_stats *st) {
  kf_search_stats local;
  if (!st) st = &local;
  memset(st, 0, sizeof *st);
  if (campaign_id) return step_campaign(s, campaign_id, o, st);
  int64_t *ids = NULL;
  size_t n = 0;
  int rc = kf_store_campaigns_running(s, &ids, &n);
  if (rc) return rc;
  int first = 0;
  for (size_t i = 0; i < n; i++) {
    rc = step_campaign(s, ids[i], o, st);
    if (rc && !first) first = rc;
    /* A dead connection fails every later call the same way. */
    if (rc == KF_EUNAVAIL) break;
  }
  free(ids);
  return first;
}
