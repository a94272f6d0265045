/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/inputs.c -- draw keys from the secret seed, input data on
 * the host from a key (core/gen.h, split over threads), digests, element
 * conversions for every dtype.
 *
 * Keys: SipHash-2-4 keyed by the 64-bit seed (twice, the second half
 * scrambled) over the tuple that names one tensor of one draw.  SipHash
 * is a PRF: a runner that is handed a key learns nothing about the seed
 * or about any other key, so handing a key out right before the call that
 * uses it gives away nothing in advance.  Each draw of each stage
 * (verification case, determinism, each timed repetition, showdown
 * repetition) has its own tuple, so no two draws share data.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gen.h"
#include "internal.h"
#include "spec.h"

/* ------------------------------------------------------------- keys */

static inline uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

#define SIPROUND                                                              \
  do {                                                                        \
    v0 += v1;                                                                 \
    v1 = rotl(v1, 13);                                                        \
    v1 ^= v0;                                                                 \
    v0 = rotl(v0, 32);                                                        \
    v2 += v3;                                                                 \
    v3 = rotl(v3, 16);                                                        \
    v3 ^= v2;                                                                 \
    v0 += v3;                                                                 \
    v3 = rotl(v3, 21);                                                        \
    v3 ^= v0;                                                                 \
    v2 += v1;                                                                 \
    v1 = rotl(v1, 17);                                                        \
    v1 ^= v2;                                                                 \
    v2 = rotl(v2, 32);                                                        \
  } while (0)

/* SipHash-2-4 of n 64-bit words under the 128-bit key (k0, k1). */
static uint64_t siphash(uint64_t k0, uint64_t k1, const uint64_t *m, int n) {
  uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
  uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
  for (int i = 0; i < n; i++) {
    v3 ^= m[i];
    SIPROUND;
    SIPROUND;
    v0 ^= m[i];
  }
  uint64_t b = (uint64_t)(8 * n) << 56;
  v3 ^= b;
  SIPROUND;
  SIPROUND;
  v0 ^= b;
  v2 ^= 0xff;
  SIPROUND;
  SIPROUND;
  SIPROUND;
  SIPROUND;
  return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t kf_harness__key(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
  uint64_t m[3] = {a, b, c};
  return siphash(seed, kf_gen_mix(seed ^ 0x5851f42d4c957f2dull), m, 3);
}

/* -------------------------------------------------------------- fill */

typedef struct {
  void *dst;
  int dt, dist;
  int64_t n, range;
  uint64_t key;
} fill_job;

static void fill_part(void *arg, int part, int parts) {
  fill_job *j = arg;
  int64_t lo, hi;
  kf_harness__par_range(j->n, part, parts, 64, &lo, &hi);
  for (int64_t i = lo; i < hi; i++)
    kf_gen_store(j->dst, j->dt, (uint64_t)i, j->key, j->dist, j->range);
}

void kf_harness__fill(void *dst, int dt, int64_t n, int dist, int64_t range,
                      uint64_t key) {
  fill_job j = {.dst = dst, .dt = dt, .dist = dist, .n = n, .range = range,
                .key = key};
  int parts = n >= (1 << 18) ? kf_harness__par_parts() : 1;
  kf_harness__par_run(parts, fill_part, &j);
}

/* ------------------------------------------------------------ digest */

typedef struct {
  const unsigned char *p;
  size_t words;
  uint64_t sum[KF_HARNESS_PAR_MAX];
} digest_job;

static void digest_part(void *arg, int part, int parts) {
  digest_job *j = arg;
  int64_t lo, hi;
  kf_harness__par_range((int64_t)j->words, part, parts, 64, &lo, &hi);
  uint64_t s = 0;
  for (int64_t i = lo; i < hi; i++) {
    uint64_t w;
    memcpy(&w, j->p + 8 * (size_t)i, 8);
    s += kf_gen_digest_term(w, (uint64_t)i);
  }
  j->sum[part] = s;
}

uint64_t kf_harness__digest(const unsigned char *p, size_t len) {
  digest_job j = {.p = p, .words = len / 8};
  int parts = len >= (8u << 20) ? kf_harness__par_parts() : 1;
  int used = kf_harness__par_run(parts, digest_part, &j);
  (void)used;
  uint64_t s = 0;
  for (int i = 0; i < parts; i++) s += j.sum[i];
  if (len % 8) {
    uint64_t w = 0;
    memcpy(&w, p + 8 * j.words, len % 8);
    s += kf_gen_digest_term(w, j.words);
  }
  return s;
}

/* -------------------------------------------------------- conversions */

static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static float from_f16(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  float f;
  if (e == 0) {
    f = ldexpf((float)m, -24);
    return sign ? -f : f;
  }
  uint32_t u = e == 31 ? sign | 0x7f800000u | (m << 13)
                       : sign | ((e - 15 + 127) << 23) | (m << 13);
  memcpy(&f, &u, 4);
  return f;
}

bool kf_harness__is_float(int dt) {
  return dt == KF_DT_F32 || dt == KF_DT_F64 || dt == KF_DT_BF16 ||
         dt == KF_DT_F16;
}

unsigned char kf_harness__poison_byte(int dt) {
  return kf_harness__is_float(dt) ? 0xFF : 0xA5;
}

unsigned char kf_harness__out_poison(int dt, bool alt) {
  unsigned char b = kf_harness__poison_byte(dt);
  return alt && !kf_harness__is_float(dt) ? (unsigned char)(b ^ 0xFF) : b;
}

double kf_harness__load(const void *buf, int dt, int64_t i) {
  switch (dt) {
  case KF_DT_F32: {
    float f;
    memcpy(&f, (const char *)buf + 4 * i, 4);
    return f;
  }
  case KF_DT_F64: {
    double d;
    memcpy(&d, (const char *)buf + 8 * i, 8);
    return d;
  }
  case KF_DT_BF16: {
    uint16_t h;
    memcpy(&h, (const char *)buf + 2 * i, 2);
    return from_bf16(h);
  }
  case KF_DT_F16: {
    uint16_t h;
    memcpy(&h, (const char *)buf + 2 * i, 2);
    return from_f16(h);
  }
  case KF_DT_I32: {
    int32_t v;
    memcpy(&v, (const char *)buf + 4 * i, 4);
    return v;
  }
  case KF_DT_I64: {
    int64_t v;
    memcpy(&v, (const char *)buf + 8 * i, 8);
    return (double)v;
  }
  case KF_DT_BOOL: return ((const uint8_t *)buf)[i] != 0;
  default: return 0;
  }
}

/* --------------------------------------------------------------- rng */

static uint64_t splitmix(uint64_t *x) {
  return kf_gen_mix(*x += 0x9e3779b97f4a7c15ull);
}

void kf_harness__rng_seed(kf_harness_rng *r, uint64_t seed, uint64_t a,
                          uint64_t b, uint64_t c) {
  uint64_t x = seed;
  x = splitmix(&x) ^ a;
  x = splitmix(&x) ^ (b << 32 | c);
  for (int i = 0; i < 4; i++) r->s[i] = splitmix(&x);
  if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) r->s[0] = 1;
}

uint64_t kf_harness__rng_next(kf_harness_rng *r) {
  uint64_t *s = r->s;
  uint64_t out = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return out;
}
