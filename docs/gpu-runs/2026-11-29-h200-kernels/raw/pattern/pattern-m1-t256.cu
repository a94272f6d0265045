#define MODE 1
#define THREADS 256
/* SPDX-License-Identifier: Apache-2.0 */
/*
 * docs/gpu-runs/2026-11-29-h200-kernels/pattern.cu -- NOT a softmax: the
 * causal_softmax problem's memory traffic with no arithmetic, to time what
 * its access pattern alone costs on a GPU (torch_baselines.py --kernel
 * times it beside the real kernels; it is never verified).  One block of
 * THREADS per row, 16-byte accesses, unrolled by 4.
 *   MODE 0  y[r][c] = c <= i ? x[r][c] : 0   (the problem's traffic)
 *   MODE 1  y[r][c] = 0                      (its writes alone)
 *   MODE 2  read x[r][0..i], one value per row written (its reads alone)
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "kf_candidate.h"

#ifndef THREADS
#define THREADS 64
#endif
#ifndef MODE
#define MODE 0
#endif

__global__ void __launch_bounds__(THREADS)
pattern(const uint4 *__restrict__ x, uint4 *__restrict__ y, int S) {
  const int row = blockIdx.x, len = row % S + 1, nv = S / 8;
  const uint4 *xr = x + (int64_t)row * nv;
  uint4 *yr = y + (int64_t)row * nv;
  const int lv = (len + 7) / 8;
  if (MODE == 0) {
#pragma unroll 4
    for (int v = threadIdx.x; v < nv; v += THREADS)
      __stcs(yr + v, v < lv ? __ldcs(xr + v) : make_uint4(0u, 0u, 0u, 0u));
  } else if (MODE == 1) {
#pragma unroll 4
    for (int v = threadIdx.x; v < nv; v += THREADS) __stcs(yr + v, make_uint4(0u, 0u, 0u, 0u));
  } else {
    uint32_t acc = 0;
#pragma unroll 4
    for (int v = threadIdx.x; v < lv; v += THREADS) {
      const uint4 t = __ldcs(xr + v);
      acc ^= t.x ^ t.y ^ t.z ^ t.w;
    }
    if (acc == 0x12345678u) yr[0].x = acc; /* keeps the loads */
  }
}

extern "C" int kf_launch(const kf_args *a) {
  const int64_t H = a->params[0], S = a->params[1];
  if (S % 8) return 1;
  pattern<<<(unsigned)(H * S), THREADS, 0, (cudaStream_t)a->stream>>>(
      (const uint4 *)a->inputs[0].data, (uint4 *)a->outputs[0].data, (int)S);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
