/* SPDX-License-Identifier: Apache-2.0 */
/*
 * problems/cpu/gemm/loops.c -- untiled GEMM whose loop order is the knob.
 *
 * Knob ORDER: ijk (dot product per C element, B read with stride N), ikj
 * (row of C updated by a scaled row of B: unit stride everywhere, the
 * order compilers vectorise), kij (rank-1 updates of all of C: C is
 * streamed K times).  Same arithmetic, very different memory access; the
 * knob lets the search measure which the cache prefers.  ikj and kij
 * accumulate in C, so C is zeroed first (outputs arrive poisoned).
 */
#include "kf_candidate.h"

#ifndef ORDER
#error "knob ORDER must be given as -DORDER=ijk|ikj|kij"
#endif
/* ORDER is an identifier; map it to a number the preprocessor can test. */
#define ORDER_ijk 1
#define ORDER_ikj 2
#define ORDER_kij 3
#define ORDER_ID_(o) ORDER_##o
#define ORDER_ID(o) ORDER_ID_(o)
#if ORDER_ID(ORDER) < 1 || ORDER_ID(ORDER) > 3
#error "ORDER must be ijk, ikj or kij"
#endif

int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 2 ||
      a->n_outputs != 1 || a->n_params != 3)
    return 1;
  const int64_t M = a->params[0], N = a->params[1], K = a->params[2];
  const float *A = a->inputs[0].data;
  const float *B = a->inputs[1].data;
  float *C = a->outputs[0].data;
#if ORDER_ID(ORDER) == 1
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
#elif ORDER_ID(ORDER) == 2
  for (int64_t i = 0; i < M; i++) {
    float *c = C + i * N;
    for (int64_t j = 0; j < N; j++) c[j] = 0.0f;
    for (int64_t k = 0; k < K; k++) {
      const float aik = A[i * K + k];
      const float *b = B + k * N;
      for (int64_t j = 0; j < N; j++) c[j] += aik * b[j];
    }
  }
#else
  for (int64_t i = 0; i < M * N; i++) C[i] = 0.0f;
  for (int64_t k = 0; k < K; k++)
    for (int64_t i = 0; i < M; i++) {
      const float aik = A[i * K + k];
      const float *b = B + k * N;
      float *c = C + i * N;
      for (int64_t j = 0; j < N; j++) c[j] += aik * b[j];
    }
#endif
  return 0;
}
