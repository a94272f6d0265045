/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cpu/gemm/blocked.c -- cache-blocked GEMM with a small register
 * block.
 *
 * Knobs: BM x BK tiles of A and BK x BN tiles of B are reused while they
 * sit in L1/L2; inside a tile MR rows of C are updated together, so each
 * B element loaded from cache feeds MR multiply-adds.  Edge tiles are
 * clipped to M, N, K, and rows left over from MR take a one-row path, so
 * every size is handled.  C is zeroed first (outputs arrive poisoned) and
 * accumulated tile by tile in f32.
 */
#include "kf_candidate.h"

#ifndef BM
#error "knob BM must be given as -DBM=value"
#endif
#ifndef BN
#error "knob BN must be given as -DBN=value"
#endif
#ifndef BK
#error "knob BK must be given as -DBK=value"
#endif
#ifndef MR
#error "knob MR must be given as -DMR=value"
#endif
_Static_assert(BM >= 1 && BN >= 1 && BK >= 1, "tiles must be >= 1");
_Static_assert(MR >= 1 && MR <= 8, "MR must be 1..8");

static int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }

int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 2 ||
      a->n_outputs != 1 || a->n_params != 3)
    return 1;
  const int64_t M = a->params[0], N = a->params[1], K = a->params[2];
  const float *A = a->inputs[0].data;
  const float *B = a->inputs[1].data;
  float *C = a->outputs[0].data;
  for (int64_t i = 0; i < M * N; i++) C[i] = 0.0f;

  for (int64_t i0 = 0; i0 < M; i0 += BM) {
    const int64_t i1 = min64(i0 + BM, M);
    for (int64_t k0 = 0; k0 < K; k0 += BK) {
      const int64_t k1 = min64(k0 + BK, K);
      for (int64_t j0 = 0; j0 < N; j0 += BN) {
        const int64_t j1 = min64(j0 + BN, N);
        int64_t i = i0;
        for (; i + MR <= i1; i += MR)
          for (int64_t k = k0; k < k1; k++) {
            const float *b = B + k * N;
            float av[MR];
            for (int r = 0; r < MR; r++) av[r] = A[(i + r) * K + k];
            for (int64_t j = j0; j < j1; j++) {
              const float bj = b[j];
              for (int r = 0; r < MR; r++) C[(i + r) * N + j] += av[r] * bj;
            }
          }
        for (; i < i1; i++)
          for (int64_t k = k0; k < k1; k++) {
            const float aik = A[i * K + k];
            const float *b = B + k * N;
            float *c = C + i * N;
            for (int64_t j = j0; j < j1; j++) c[j] += aik * b[j];
          }
      }
    }
  }
  return 0;
}
