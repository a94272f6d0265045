/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/eval_common.c -- what the CPU evaluation (eval.c) and the CUDA
 * evaluation (eval_cuda.c) do the same way: stage bookkeeping, the work
 * directory, taking a built .so into a jail, the canaried buffer layout,
 * the distribution cases, the input and determinism checks, the timing
 * statistics and writing the result.
 *
 * Nothing here knows which backend it serves: where the two differ in a
 * detail (the guard size, the largest .so), the caller passes it, and
 * each function takes only the fields it uses.  Reasons go into the
 * caller's `why` buffer with the same texts as before the split.  Runs in
 * the eval process, single-threaded, and never touches candidate code.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "internal.h"
#include "kernelfleet.pb-c.h"
#include "log.h"
#include "outcome.h"
#include "spec.h"
#include "util.h"

/* ------------------------------------------------------------ stages */

int kf_harness__stage_begin(kf_harness_stages *st,
                            Kernelfleet__EvalResult *res, char *why,
                            const char *name) {
  size_t i = res->n_stages;
  if (i >= KF_HARNESS_MAX_STAGES) abort(); /* fixed list of stages */
  kernelfleet__stage_result__init(&st->stages[i]);
  kf_strlcpy(st->names[i], name, sizeof st->names[i]);
  st->stages[i].stage = st->names[i];
  st->reasons[i][0] = '\0';
  st->stages[i].reason = st->reasons[i];
  st->ptrs[i] = &st->stages[i];
  res->n_stages = i + 1;
  st->t0 = kf_now_us();
  why[0] = '\0';
  return (int)i;
}

int kf_harness__stage_end(kf_harness_stages *st, Kernelfleet__EvalResult *res,
                          int outcome, const char *reason) {
  size_t i = res->n_stages - 1;
  st->stages[i].outcome =
      (Kernelfleet__Outcome)(outcome ? outcome : KF_OUTCOME_OK);
  kf_strlcpy(st->reasons[i], reason ? reason : "", KF_HARNESS_WHY);
  st->stages[i].elapsed_us = kf_now_us() - st->t0;
  if (outcome) {
    res->outcome = (Kernelfleet__Outcome)outcome;
    kf_log(KF_LOG_INFO, "stage %s: %s: %s", st->names[i],
           kf_outcome_name(outcome), st->reasons[i]);
  } else {
    kf_log(KF_LOG_INFO, "stage %s: ok (%" PRIu64 " us)%s%s", st->names[i],
           (uint64_t)st->stages[i].elapsed_us, *st->reasons[i] ? ": " : "",
           st->reasons[i]);
  }
  return outcome;
}

/* ----------------------------------------------------------- workdir */

int kf_harness__workdir_make(kf_harness_workdir *w, const char *base,
                             char *why, size_t whylen) {
  if (!base || !*base) base = kf_getenv_or("TMPDIR", "/tmp");
  snprintf(w->work, sizeof w->work, "%s/kf-harness-XXXXXX", base);
  if (!mkdtemp(w->work)) {
    snprintf(why, whylen, "mkdtemp %s: %s", w->work, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  w->have_work = true;
  snprintf(w->build, sizeof w->build, "%s/build", w->work);
  snprintf(w->jail_c, sizeof w->jail_c, "%s/jail-c", w->work);
  snprintf(w->jail_r, sizeof w->jail_r, "%s/jail-r", w->work);
  bool root = geteuid() == 0;
  if (chmod(w->work, 0711) != 0 || mkdir(w->build, 0700) != 0 ||
      (root && chown(w->build, 65534, 65534) != 0) ||
      mkdir(w->jail_c, 0755) != 0 || mkdir(w->jail_r, 0755) != 0) {
    snprintf(why, whylen, "workdir %s: %s", w->work, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  return 0;
}

void kf_harness__workdir_remove(kf_harness_workdir *w) {
  if (w->have_work) kf_remove_tree(w->work);
}

int kf_harness__take_so(const char *build, const char *base, const char *jail,
                        size_t max, unsigned char **buf, size_t *len,
                        char *why, size_t whylen) {
  char path[1200], err[512];
  snprintf(path, sizeof path, "%s/%s.so", build, base);
  char *data;
  int rc = kf_read_file(path, max, &data, len, err, sizeof err);
  if (rc) {
    if (rc == KF_ETOOBIG)
      snprintf(why, whylen, "%s.so: larger than %zu MiB", base, max >> 20);
    else
      snprintf(why, whylen, "%s.so: %s", base, err);
    return rc == KF_ETOOBIG ? KF_OUTCOME_LINK_REJECTED : KF_OUTCOME_INFRA_ERROR;
  }
  *buf = (unsigned char *)data;
  snprintf(path, sizeof path, "%s/%s.so", jail, base);
  FILE *f = fopen(path, "wbx");
  if (!f || fwrite(data, 1, *len, f) != *len || fclose(f) != 0 ||
      chmod(path, 0444) != 0) {
    snprintf(why, whylen, "write %s: %s", path, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  return 0;
}

/* ------------------------------------------------------------ layout */

void kf_harness__canary(unsigned char *map, size_t from, size_t to) {
  for (size_t o = from; o < to; o++)
    map[o] = (unsigned char)(((uint32_t)o * 0x9E3779B1u) >> 24) ^ 0x5C;
}

size_t kf_harness__canary_bad(const unsigned char *map, size_t from,
                              size_t to) {
  for (size_t o = from; o < to; o++)
    if (map[o] != ((unsigned char)(((uint32_t)o * 0x9E3779B1u) >> 24) ^ 0x5C))
      return o;
  return to;
}

static uint64_t place(size_t *cur, size_t bytes, size_t guard) {
  uint64_t data = *cur + guard;
  *cur = (data + bytes + guard + 4095) & ~(size_t)4095;
  return data;
}

int kf_harness__make_layout(const kf_spec *s, const kf_size *size, int sets,
                            int slots, size_t guard, kf_harness_layout *L,
                            char *why, size_t whylen) {
  memset(L, 0, sizeof *L);
  L->size = *size;
  L->sets = sets;
  L->slots = slots;
  L->n_in = s->n_inputs;
  L->n_out = s->n_outputs;
  char err[256];
  for (int side = 0; side < 2; side++) {
    int n = side ? s->n_outputs : s->n_inputs;
    for (int i = 0; i < n; i++) {
      const kf_spec_tensor *t = side ? &s->outputs[i] : &s->inputs[i];
      int64_t dims[KF_SPEC_MAX_DIMS], numel;
      if (kf_spec_shape(s, t, size, dims, &numel, err, sizeof err)) {
        snprintf(why, whylen, "shape of %s: %s", t->name, err);
        return KF_OUTCOME_SPEC_ERROR;
      }
      if (numel < 0 || numel > (1ll << 34)) {
        snprintf(why, whylen, "%s has %" PRId64 " elements", t->name, numel);
        return KF_OUTCOME_SPEC_ERROR;
      }
      size_t b = (size_t)numel * kf_dtype_size(t->dtype);
      if (side) {
        L->out_dt[i] = t->dtype;
        L->out_ndim[i] = t->ndim;
        memcpy(L->out_dims[i], dims, sizeof L->out_dims[i]);
        L->out_n[i] = numel;
        L->out_b[i] = b;
      } else {
        L->in_dt[i] = t->dtype;
        L->in_ndim[i] = t->ndim;
        memcpy(L->in_dims[i], dims, sizeof L->in_dims[i]);
        L->in_n[i] = numel;
        L->in_b[i] = b;
      }
    }
  }
  size_t cur = 0;
  for (int k = 0; k < sets; k++)
    for (int i = 0; i < L->n_in; i++)
      L->in_off[k][i] = place(&cur, L->in_b[i], guard);
  for (int k = 0; k < slots; k++)
    for (int i = 0; i < L->n_out; i++)
      L->out_off[k][i] = place(&cur, L->out_b[i], guard);
  L->ws_b = s->workspace_bytes;
  L->ws_off = place(&cur, L->ws_b, guard);
  L->total = cur;
  return 0;
}

void kf_harness__fill_tdescs(const kf_harness_layout *L, int set, int slot,
                             kf_harness_tdesc *in, kf_harness_tdesc *out) {
  for (int i = 0; i < L->n_in; i++) {
    in[i].off = L->in_off[set][i];
    in[i].dtype = L->in_dt[i];
    in[i].ndim = L->in_ndim[i];
    memcpy(in[i].dims, L->in_dims[i], sizeof in[i].dims);
    in[i].numel = L->in_n[i];
  }
  for (int i = 0; i < L->n_out; i++) {
    out[i].off = L->out_off[slot][i];
    out[i].dtype = L->out_dt[i];
    out[i].ndim = L->out_ndim[i];
    memcpy(out[i].dims, L->out_dims[i], sizeof out[i].dims);
    out[i].numel = L->out_n[i];
  }
}

/* ------------------------------------------------------------ inputs */

int kf_harness__input_dist(const kf_spec_tensor *t, int dist) {
  for (int k = 0; k < t->n_dists; k++)
    if ((int)t->dists[k] == dist) return dist;
  return t->n_dists ? (int)t->dists[0] : KF_DIST_NORMAL;
}

int kf_harness__input_range(const kf_spec *s, const kf_spec_tensor *t, int d,
                            const kf_size *size, int64_t *range, char *why,
                            size_t whylen) {
  *range = 0;
  if (d == KF_DIST_INDEX) {
    char err[256];
    if (!t->range[0] ||
        kf_spec_eval(s, t->range, size, range, err, sizeof err)) {
      snprintf(why, whylen, "input %s: index range: %s", t->name,
               t->range[0] ? err : "missing");
      return KF_OUTCOME_SPEC_ERROR;
    }
  }
  return 0;
}

void kf_harness__collect_dists(const kf_spec *s, int *dists, int *n_dists) {
  *n_dists = 0;
  for (int i = 0; i < s->n_inputs; i++)
    for (int k = 0; k < s->inputs[i].n_dists; k++) {
      int d = (int)s->inputs[i].dists[k];
      bool seen = false;
      for (int j = 0; j < *n_dists; j++) seen |= dists[j] == d;
      if (!seen && *n_dists < KF_DIST_COUNT) dists[(*n_dists)++] = d;
    }
  if (!*n_dists) dists[(*n_dists)++] = KF_DIST_NORMAL;
}

/* ------------------------------------------------------------ checks */

int kf_harness__check_inputs(const kf_spec *s, const kf_harness_layout *L,
                             const unsigned char *cand_map,
                             const unsigned char *ref_map, int set,
                             const char *ctx, char *why, size_t whylen) {
  for (int i = 0; i < L->n_in; i++) {
    uint64_t off = L->in_off[set][i];
    if (memcmp(cand_map + off, ref_map + off, L->in_b[i]) != 0) {
      snprintf(why, whylen, "%s: wrote into input '%s'", ctx,
               s->inputs[i].name);
      return KF_OUTCOME_OUT_OF_BOUNDS;
    }
  }
  return 0;
}

int kf_harness__check_same_outputs(const kf_spec *s,
                                   const kf_harness_layout *L,
                                   const unsigned char *map, const char *ctx,
                                   char *why, size_t whylen) {
  for (int j = 0; j < L->n_out; j++) {
    const unsigned char *a = map + L->out_off[0][j];
    const unsigned char *b = map + L->out_off[1][j];
    size_t es = kf_dtype_size(L->out_dt[j]);
    for (int64_t i = 0; i < L->out_n[j]; i++)
      if (memcmp(a + (size_t)i * es, b + (size_t)i * es, es) != 0) {
        snprintf(why, whylen, "%s: two runs on the same inputs differ at "
                 "output '%s' index %" PRId64 ": %.9g vs %.9g (the spec asks "
                 "for bitwise determinism)", ctx, s->outputs[j].name, i,
                 kf_harness__load(a, L->out_dt[j], i),
                 kf_harness__load(b, L->out_dt[j], i));
        return KF_OUTCOME_NONDETERMINISTIC;
      }
  }
  return 0;
}

/* ------------------------------------------------------------ timing */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

double kf_harness__median(const uint64_t *v, int from, int n, uint64_t *tmp) {
  memcpy(tmp, v + from, (size_t)n * sizeof *tmp);
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_u64);
  return n % 2 ? (double)tmp[n / 2]
               : ((double)tmp[n / 2 - 1] + (double)tmp[n / 2]) / 2;
}

void kf_harness__stats(const uint64_t *v, int n, uint64_t *tmp, double *med,
                       double *spread) {
  *med = kf_harness__median(v, 0, n, tmp); /* leaves tmp sorted */
  double p10 = (double)tmp[(int)(0.1 * (n - 1))];
  double p90 = (double)tmp[(int)(0.9 * (n - 1) + 0.5)];
  *spread = *med > 0 ? (p90 - p10) / *med : 0;
}

bool kf_harness__reps_enough(const uint64_t *tc, const uint64_t *tr, int m,
                             int min_reps, uint64_t elapsed_ms,
                             uint64_t budget_ms, uint64_t *tmp) {
  if (m >= min_reps) {
    double mc = kf_harness__median(tc, 0, m, tmp);
    double mch = kf_harness__median(tc, m / 2, m - m / 2, tmp);
    double mr = kf_harness__median(tr, 0, m, tmp);
    double mrh = kf_harness__median(tr, m / 2, m - m / 2, tmp);
    bool stable = fabs(mc - mch) <= 0.01 * mc && fabs(mr - mrh) <= 0.01 * mr;
    return stable || elapsed_ms > budget_ms;
  }
  return m >= 3 && elapsed_ms > 20 * budget_ms; /* very slow calls */
}

void kf_harness__time_results(const kf_spec *s, const kf_size *sz,
                              const uint64_t *tc, const uint64_t *tr, int n,
                              uint64_t *tmp, Kernelfleet__EvalResult *res,
                              int64_t *bytes, int64_t *flops) {
  double cm, cs, rm, rs;
  kf_harness__stats(tc, n, tmp, &cm, &cs);
  kf_harness__stats(tr, n, tmp, &rm, &rs);
  res->time_ns_median = cm;
  res->time_ns_spread = cs;
  res->ref_time_ns_median = rm;
  res->ref_time_ns_spread = rs;
  res->repetitions = (uint32_t)n;
  char err[256];
  *bytes = 0;
  *flops = 0;
  if (s->bytes[0] &&
      kf_spec_eval(s, s->bytes, sz, bytes, err, sizeof err) == 0 && cm > 0)
    res->achieved_gbps = (double)*bytes / cm;
  if (s->flops[0] &&
      kf_spec_eval(s, s->flops, sz, flops, err, sizeof err) == 0 && cm > 0)
    res->achieved_gflops = (double)*flops / cm;
}

/* --------------------------------------------------------------- I/O */

static int write_full(int fd, const void *buf, size_t n) {
  size_t off = 0;
  while (off < n) {
    ssize_t w = write(fd, (const char *)buf + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    off += (size_t)w;
  }
  return 0;
}

int kf_harness__write_result(const Kernelfleet__EvalResult *r, int fd) {
  size_t n = kernelfleet__eval_result__get_packed_size(r);
  unsigned char *buf = malloc(n + 4);
  if (!buf) return KF_ENOMEM;
  buf[0] = (unsigned char)n;
  buf[1] = (unsigned char)(n >> 8);
  buf[2] = (unsigned char)(n >> 16);
  buf[3] = (unsigned char)(n >> 24);
  kernelfleet__eval_result__pack(r, buf + 4);
  int rc = write_full(fd, buf, n + 4);
  free(buf);
  if (rc) {
    kf_log(KF_LOG_ERROR, "cannot write the result: %s", strerror(errno));
    return KF_EIO;
  }
  return 0;
}
