/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/inputs.c -- input data drawn from the secret seed, one stream per
 * (seed, case, distribution, tensor), with the distributions of
 * KF_DIST_MAP (common/spec.h), and element conversions for every dtype.
 *
 * xoshiro256** for speed, seeded by splitmix64 so that neighbouring case
 * numbers give unrelated streams.  The runner never sees the seed: it gets
 * the drawn values in the memfd and nothing else.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void kf_harness__rng_seed(kf_harness_rng *r, uint64_t seed, uint64_t a,
                          uint64_t b, uint64_t c) {
  uint64_t x = seed;
  x = splitmix(&x) ^ a;
  x = splitmix(&x) ^ (b << 32 | c);
  for (int i = 0; i < 4; i++) r->s[i] = splitmix(&x);
  if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) r->s[0] = 1;
}

static inline uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
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

/* U[0, 1) with 53 bits */
static double unit(kf_harness_rng *r) {
  return (double)(kf_harness__rng_next(r) >> 11) * 0x1.0p-53;
}

static double normal(kf_harness_rng *r) {
  double u1 = unit(r), u2 = unit(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static double draw(kf_harness_rng *r, int dist) {
  switch (dist) {
  case KF_DIST_NORMAL: return normal(r);
  case KF_DIST_UNIFORM: return 2.0 * unit(r) - 1.0;
  case KF_DIST_WIDE: return 200.0 * unit(r) - 100.0;
  case KF_DIST_OFFSET: return 1000.0 + normal(r);
  case KF_DIST_TINY: return 1e-3 * normal(r);
  case KF_DIST_MIXED: {
    uint64_t k = kf_harness__rng_next(r) % 8;
    switch (k) {
    case 0: return 0.0;
    case 1: return 1.0;
    case 2: return -1.0;
    case 3: return normal(r);
    case 4: return 2.0 * unit(r) - 1.0;
    case 5: return 200.0 * unit(r) - 100.0;
    case 6: return 1000.0 + normal(r);
    default: return 1e-3 * normal(r);
    }
  }
  default: return normal(r);
  }
}

/* round to nearest even: float -> bf16 / f16 */
static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t to_f16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
  if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* overflow */
  if (abs < 0x33000001u) return (uint16_t)sign;              /* underflow */
  int e = (int)(abs >> 23) - 127;
  uint32_t m = (abs & 0x7fffffu) | 0x800000u;
  if (e < -14) { /* subnormal half */
    int shift = -14 - e + 13;
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t q = ((uint32_t)(e + 15) << 10) | ((m >> 13) & 0x3ffu);
  uint32_t rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1))) q++;
  return (uint16_t)(sign | q);
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

void kf_harness__fill(void *dst, int dt, int64_t n, int dist, int64_t range,
                      kf_harness_rng *r) {
  for (int64_t i = 0; i < n; i++) {
    double v;
    if (dist == KF_DIST_INDEX)
      v = range > 0 ? (double)(kf_harness__rng_next(r) % (uint64_t)range) : 0;
    else
      v = draw(r, dist);
    switch (dt) {
    case KF_DT_F32: ((float *)dst)[i] = (float)v; break;
    case KF_DT_F64: ((double *)dst)[i] = v; break;
    case KF_DT_BF16: ((uint16_t *)dst)[i] = to_bf16((float)v); break;
    case KF_DT_F16: ((uint16_t *)dst)[i] = to_f16((float)v); break;
    case KF_DT_I32: ((int32_t *)dst)[i] = (int32_t)llround(v); break;
    case KF_DT_I64: ((int64_t *)dst)[i] = (int64_t)llround(v); break;
    default: break;
    }
  }
}

double kf_harness__load(const void *buf, int dt, int64_t i) {
  switch (dt) {
  case KF_DT_F32: return ((const float *)buf)[i];
  case KF_DT_F64: return ((const double *)buf)[i];
  case KF_DT_BF16: return from_bf16(((const uint16_t *)buf)[i]);
  case KF_DT_F16: return from_f16(((const uint16_t *)buf)[i]);
  case KF_DT_I32: return ((const int32_t *)buf)[i];
  case KF_DT_I64: return (double)((const int64_t *)buf)[i];
  default: return 0;
  }
}
