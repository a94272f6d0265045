/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/gen.h -- input values, canaries and digests as pure
 * functions of (key, element index), compiled both into the eval process
 * (C, for host-side backends) and into the CUDA runner's trusted kernels
 * (harness/cuda/kernels.cu), so that every backend draws its inputs the
 * same way and a GPU can draw them itself instead of receiving them.
 *
 * Element i of a tensor drawn under key k depends on (k, i) only: no
 * stream state, so a draw splits over any number of threads and gives the
 * same bits, and nothing about one element tells anything about another
 * or about another key.  Keys are derived in the eval process from the
 * secret seed with a keyed PRF (inputs.c), so the one key a runner is
 * handed, right before the call that uses it, says nothing about the
 * seed or about the inputs of any other call.
 *
 * The host computes in double, the device in float: values of one key
 * differ between backends in the last bits, never between two runners of
 * one backend (same code, same machine), which is what the comparison of
 * candidate and reference relies on.
 */
#ifndef KF_HARNESS_GEN_H
#define KF_HARNESS_GEN_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define KF_HD __device__ __forceinline__
typedef float kf_real;
#else
#define KF_HD static inline
typedef double kf_real;
#endif

/* Distribution codes: KF_DIST_MAP in common/spec.h (same order). */
enum {
  KF_GEN_NORMAL = 0,
  KF_GEN_UNIFORM,
  KF_GEN_WIDE,
  KF_GEN_OFFSET,
  KF_GEN_TINY,
  KF_GEN_MIXED,
  KF_GEN_INDEX,
  KF_GEN_UNIT,
  KF_GEN_SAMPLE, /* drawn by the torch backend's sampler, never here */
};

/* Dtype codes: KF_DTYPE_MAP in common/spec.h (same order). */
enum {
  KF_GEN_F32 = 0,
  KF_GEN_F64,
  KF_GEN_BF16,
  KF_GEN_F16,
  KF_GEN_I32,
  KF_GEN_I64,
  KF_GEN_BOOL, /* one byte, 0 or 1 (torch.bool) */
};

/* splitmix64's finalizer: a bijection with full avalanche. */
KF_HD uint64_t kf_gen_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* 64 random bits number `j` of element i under key k. */
KF_HD uint64_t kf_gen_bits(uint64_t k, uint64_t i, uint64_t j) {
  return kf_gen_mix(k + (2 * i + j + 1) * 0x9e3779b97f4a7c15ull);
}

#ifdef __CUDACC__
KF_HD kf_real kf_gen_unit(uint64_t b) { /* (0, 1), 24 bits */
  return ((float)(b >> 40) + 0.5f) * 0x1.0p-24f;
}
KF_HD kf_real kf_gen_log(kf_real x) { return logf(x); }
KF_HD kf_real kf_gen_sqrt(kf_real x) { return sqrtf(x); }
KF_HD kf_real kf_gen_cos2pi(kf_real x) { return cospif(2.0f * x); }
#else
#include <math.h>
KF_HD kf_real kf_gen_unit(uint64_t b) { /* (0, 1), 53 bits */
  return ((double)(b >> 11) + 0.5) * 0x1.0p-53;
}
KF_HD kf_real kf_gen_log(kf_real x) { return log(x); }
KF_HD kf_real kf_gen_sqrt(kf_real x) { return sqrt(x); }
KF_HD kf_real kf_gen_cos2pi(kf_real x) { return cos(6.283185307179586 * x); }
#endif

KF_HD kf_real kf_gen_normal(uint64_t a, uint64_t b) {
  return kf_gen_sqrt((kf_real)-2 * kf_gen_log(kf_gen_unit(a))) *
         kf_gen_cos2pi(kf_gen_unit(b));
}

/* Element i of distribution dist (not INDEX) under key k. */
KF_HD kf_real kf_gen_value(uint64_t k, uint64_t i, int dist) {
  uint64_t a = kf_gen_bits(k, i, 0), b = kf_gen_bits(k, i, 1);
  if (dist == KF_GEN_MIXED) {
    /* the low bits of b pick the kind; its high bits feed the value */
    switch ((int)(b & 7)) {
    /* zero of either sign: 1/x, copysign and signbit tell them apart,
     * and a kernel that loses the sign must meet one (red team,
     * 2026-11-30: mixed never drew -0.0) */
    case 0: return (a & 1) ? -(kf_real)0 : (kf_real)0;
    case 1: return 1;
    case 2: return -1;
    case 3: dist = KF_GEN_NORMAL; break;
    case 4: dist = KF_GEN_UNIFORM; break;
    case 5: dist = KF_GEN_WIDE; break;
    case 6: dist = KF_GEN_OFFSET; break;
    default: dist = KF_GEN_TINY; break;
    }
  }
  switch (dist) {
  case KF_GEN_UNIFORM: return 2 * kf_gen_unit(a) - 1;
  case KF_GEN_UNIT: return kf_gen_unit(a);
  case KF_GEN_WIDE: return 200 * kf_gen_unit(a) - 100;
  case KF_GEN_OFFSET: return 1000 + kf_gen_normal(a, b);
  case KF_GEN_TINY: return (kf_real)1e-3 * kf_gen_normal(a, b);
  default: return kf_gen_normal(a, b);
  }
}

/* Round to nearest even: float -> bf16 / f16 bits. */
KF_HD uint16_t kf_gen_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

KF_HD uint16_t kf_gen_to_f16(float f) {
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
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1),
             half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t q = ((uint32_t)(e + 15) << 10) | ((m >> 13) & 0x3ffu);
  uint32_t rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1))) q++;
  return (uint16_t)(sign | q);
}

/* Writes element i of a tensor of dtype dt at dst. */
KF_HD void kf_gen_store(void *dst, int dt, uint64_t i, uint64_t k, int dist,
                        int64_t range) {
  kf_real v;
  if (dist == KF_GEN_INDEX) {
    int64_t n =
        range > 0 ? (int64_t)(kf_gen_bits(k, i, 0) % (uint64_t)range) : 0;
    /* An integer tensor gets the integer itself: through kf_real (53 bits
     * on the host, 24 on the device) a draw over a range past 2^53 had its
     * low bits cleared, and a kernel doing integer math in double passed an
     * exact spec (red team, 2026-11-30). */
    if (dt == KF_GEN_I32) {
      ((int32_t *)dst)[i] = (int32_t)n;
      return;
    }
    if (dt == KF_GEN_BOOL) {
      ((uint8_t *)dst)[i] = n != 0;
      return;
    }
    if (dt == KF_GEN_I64) {
      ((int64_t *)dst)[i] = n;
      return;
    }
    v = (kf_real)n;
  } else {
    v = kf_gen_value(k, i, dist);
  }
  switch (dt) {
  case KF_GEN_F32: ((float *)dst)[i] = (float)v; break;
  case KF_GEN_F64: ((double *)dst)[i] = (double)v; break;
  case KF_GEN_BF16: ((uint16_t *)dst)[i] = kf_gen_to_bf16((float)v); break;
  case KF_GEN_F16: ((uint16_t *)dst)[i] = kf_gen_to_f16((float)v); break;
  case KF_GEN_I32:
    ((int32_t *)dst)[i] = (int32_t)(v < 0 ? v - (kf_real)0.5 : v + (kf_real)0.5);
    break;
  case KF_GEN_I64:
    ((int64_t *)dst)[i] = (int64_t)(v < 0 ? v - (kf_real)0.5 : v + (kf_real)0.5);
    break;
  /* a float distribution's sign: a fair coin for the symmetric ones */
  case KF_GEN_BOOL: ((uint8_t *)dst)[i] = v > 0; break;
  default: break;
  }
}

/* The canary byte at image offset o: position-dependent, so a block of
 * canary copied elsewhere does not pass. */
KF_HD unsigned char kf_gen_canary(uint64_t o) {
  return (unsigned char)((((uint32_t)o * 0x9E3779B1u) >> 24) ^ 0x5C);
}

/* One 8-byte word's share of a digest: a region's digest is the sum
 * (mod 2^64) of its words' terms, so it splits over threads in any order.
 * Word w (little-endian bytes, zero-padded at the tail) at index i. */
KF_HD uint64_t kf_gen_digest_term(uint64_t w, uint64_t i) {
  return kf_gen_mix(w ^ kf_gen_mix(i + 0x632be59bd9b4e019ull));
}

#endif
