/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/layout.c -- where one call's buffers lie in a side's image,
 * the canary around them, and which distributions the inputs are drawn
 * from.
 *
 * A layout holds ONE input set, ONE output slot and the workspace, for
 * every stage and every size: a call cannot tell a timed call from a
 * verification call by what it is handed, and there is no second set or
 * slot in which a call could find another call's inputs or leave
 * something for it.  Each buffer starts on a page and is surrounded by
 * `guard` bytes of position-dependent canary (plus the rest of its last
 * page), so a host backend can leave the guard pages unmapped and a
 * device backend can check them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "gen.h"
#include "outcome.h"
#include "spec.h"

#define PAGE 4096u

void kf_harness__canary(unsigned char *map, size_t from, size_t to,
                        uint8_t salt) {
  for (size_t o = from; o < to; o++) map[o] = kf_gen_canary(o) ^ salt;
}

size_t kf_harness__canary_bad(const unsigned char *map, size_t from,
                              size_t to, uint8_t salt) {
  for (size_t o = from; o < to; o++)
    if (map[o] != (unsigned char)(kf_gen_canary(o) ^ salt)) return o;
  return to;
}

/* Places a buffer of `bytes` after *cur: guard, the data (page-aligned),
 * its guard, up to the next page.  Returns the data's offset. */
static uint64_t place(size_t *cur, size_t bytes, size_t guard) {
  uint64_t data = (*cur + guard + PAGE - 1) & ~(uint64_t)(PAGE - 1);
  *cur = (data + bytes + guard + PAGE - 1) & ~(size_t)(PAGE - 1);
  return data;
}

int kf_harness__make_layout(const kf_spec *s, const kf_size *size,
                            size_t guard, size_t max_bytes,
                            kf_harness_layout *L, char *why, size_t whylen) {
  memset(L, 0, sizeof *L);
  L->size = *size;
  L->n_in = s->n_inputs;
  L->n_out = s->n_outputs;
  L->guard = guard;
  char err[256];
  /* sum in 128 bits' worth of care: each tensor is bounded first */
  uint64_t sum = 0;
  for (int side = 0; side < 2; side++) {
    int n = side ? s->n_outputs : s->n_inputs;
    for (int i = 0; i < n; i++) {
      const kf_spec_tensor *t = side ? &s->outputs[i] : &s->inputs[i];
      int64_t dims[KF_SPEC_MAX_DIMS], numel;
      if (kf_spec_shape(s, t, size, dims, &numel, err, sizeof err)) {
        snprintf(why, whylen, "shape of %s: %s", t->name, err);
        return KF_OUTCOME_SPEC_ERROR;
      }
      if (numel < 0 || numel > (1ll << 40)) {
        snprintf(why, whylen, "%s has %" PRId64 " elements", t->name, numel);
        return KF_OUTCOME_SPEC_ERROR;
      }
      size_t b = (size_t)numel * kf_dtype_size(t->dtype);
      sum += b;
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
  sum += s->workspace_bytes;
  if (max_bytes && sum > max_bytes) {
    char szs[256];
    kf_spec_size_format(s, size, szs, sizeof szs);
    snprintf(why, whylen, "at size %s the tensors and workspace take %.3g "
             "GiB per runner, more than the %.3g GiB this harness may map "
             "(the spec's sizes are too large for this machine)", szs,
             (double)sum / (1 << 30), (double)max_bytes / (1 << 30));
    return KF_OUTCOME_SPEC_ERROR;
  }
  size_t cur = 0;
  for (int i = 0; i < L->n_in; i++)
    L->in_off[i] = place(&cur, L->in_b[i], guard);
  for (int i = 0; i < L->n_out; i++)
    L->out_off[i] = place(&cur, L->out_b[i], guard);
  L->ws_b = s->workspace_bytes;
  L->ws_off = place(&cur, L->ws_b, guard);
  L->total = cur;
  return 0;
}

bool kf_harness__buffer_at(const kf_harness_layout *L, int b, uint64_t *off,
                           size_t *len) {
  if (b < 0) return false;
  if (b < L->n_in) {
    *off = L->in_off[b];
    *len = L->in_b[b];
  } else if (b < L->n_in + L->n_out) {
    *off = L->out_off[b - L->n_in];
    *len = L->out_b[b - L->n_in];
  } else if (b == L->n_in + L->n_out) {
    *off = L->ws_off;
    *len = L->ws_b;
  } else {
    return false;
  }
  return true;
}

size_t kf_harness__footprint(const kf_harness_layout *L) {
  size_t n = 0, len;
  uint64_t off;
  for (int b = 0; kf_harness__buffer_at(L, b, &off, &len); b++) n += len;
  return n;
}

int kf_harness__gap_regions(const kf_harness_layout *L, kf_harness_region *r) {
  int n = 0;
  uint64_t prev = 0, off;
  size_t len;
  for (int b = 0; kf_harness__buffer_at(L, b, &off, &len); b++) {
    r[n++] = (kf_harness_region){prev, off - prev};
    prev = off + len;
  }
  r[n++] = (kf_harness_region){prev, L->total - prev};
  return n;
}

int kf_harness__guard_regions(const kf_harness_layout *L,
                              kf_harness_region *r) {
  int n = 0;
  uint64_t off;
  size_t len;
  for (int b = 0; kf_harness__buffer_at(L, b, &off, &len); b++) {
    r[n++] = (kf_harness_region){off - L->guard, L->guard};
    uint64_t end = off + len;
    uint64_t stop = (end + L->guard + PAGE - 1) & ~(uint64_t)(PAGE - 1);
    if (stop > L->total) stop = L->total;
    r[n++] = (kf_harness_region){end, stop - end};
  }
  return n;
}

int kf_harness__output_regions(const kf_harness_layout *L,
                               kf_harness_region *r) {
  for (int i = 0; i < L->n_out; i++)
    r[i] = (kf_harness_region){L->out_off[i], L->out_b[i]};
  return L->n_out;
}

int kf_harness__guard_reason(const kf_spec *s, const kf_harness_layout *L,
                             uint64_t bad, const char *ctx, char *why,
                             size_t whylen) {
  uint64_t off;
  size_t len;
  for (int b = 0; kf_harness__buffer_at(L, b, &off, &len); b++) {
    const char *kind = b < L->n_in ? "input"
                       : b < L->n_in + L->n_out ? "output" : "buffer";
    const char *name = b < L->n_in ? s->inputs[b].name
                       : b < L->n_in + L->n_out ? s->outputs[b - L->n_in].name
                                                : "workspace";
    if (bad < off && bad + L->guard >= off) {
      snprintf(why, whylen, "%s: wrote %" PRIu64 " bytes before the start "
               "of %s '%s' (byte offset -%" PRIu64 ")", ctx, off - bad, kind,
               name, off - bad);
      return KF_OUTCOME_OUT_OF_BOUNDS;
    }
    uint64_t end = off + len;
    uint64_t stop = (end + L->guard + PAGE - 1) & ~(uint64_t)(PAGE - 1);
    if (bad >= end && bad < stop) {
      snprintf(why, whylen, "%s: wrote past the end of %s '%s' (%zu bytes "
               "long; first bad byte at offset %" PRIu64 ")", ctx, kind, name,
               len, bad - off);
      return KF_OUTCOME_OUT_OF_BOUNDS;
    }
  }
  snprintf(why, whylen, "%s: wrote outside every buffer (image offset %"
           PRIu64 ")", ctx, bad);
  return KF_OUTCOME_OUT_OF_BOUNDS;
}

/* ------------------------------------------------------ distributions */

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
