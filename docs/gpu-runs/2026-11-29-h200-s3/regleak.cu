// SPDX-License-Identifier: Apache-2.0
// docs/gpu-runs/2026-11-29-h200-s3/regleak.cu -- issue 9, "registers are
// not scrubbed": can a kernel read register values that a previous kernel
// of the same context left behind, and what overwrites all of them?
//
// fill<T,B,N>: N words of a tagged pattern (0xC0D00000 | tag << 12 | i)
// loaded into N live registers by every thread of a full wave (T threads,
// B blocks per SM).  peek<T,B,N>: N registers whose loads are predicated
// off (regasm.h, from gen_asm.py), stored: what the physical registers
// held.  Four shapes (255, 128, 64 and 32 registers a thread) cover the
// ways a candidate could lay its registers out.  Between fill and peek:
// the harness's own per-call kernels (copied from harness/cuda/kernels.cu)
// and/or a register scrub (every shape's fill, loading zeros).  One JSON
// line per case: words peek stored, how many carry this case's tag, how
// many an older case's tag.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "regasm.h"

#define CK(x)                                                              \
  do {                                                                     \
    cudaError_t e_ = (x);                                                  \
    if (e_ != cudaSuccess) {                                               \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,            \
              cudaGetErrorString(e_));                                     \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

template <int T, int B, int N>
__global__ void __launch_bounds__(T, B) fill(const unsigned *src,
                                             unsigned *dst) {
  size_t t = (size_t)(blockIdx.x * T + threadIdx.x) * N;
  const unsigned *s = src + t;
  unsigned *d = dst + t;
  if constexpr (N == 200) FILL_ASM_200(s, d);
  if constexpr (N == 120) FILL_ASM_120(s, d);
  if constexpr (N == 56) FILL_ASM_56(s, d);
  if constexpr (N == 24) FILL_ASM_24(s, d);
}

template <int T, int B, int N>
__global__ void __launch_bounds__(T, B) peek(const unsigned *src,
                                             unsigned *out, int flag) {
  unsigned *o = out + (size_t)(blockIdx.x * T + threadIdx.x) * N;
  if constexpr (N == 200) PEEK_ASM_200(src, o, flag);
  if constexpr (N == 120) PEEK_ASM_120(src, o, flag);
  if constexpr (N == 56) PEEK_ASM_56(src, o, flag);
  if constexpr (N == 24) PEEK_ASM_24(src, o, flag);
}

__global__ void tag_words(unsigned *p, size_t n, unsigned tag) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = 0xC0D00000u | (tag << 12) | (unsigned)(i & 0xFFF);
}

// The harness's per-call kernels (harness/cuda/kernels.cu), as they run
// between two calls of one evaluation.
__global__ void k_smem_scrub(unsigned n_words) {
  extern __shared__ unsigned long long smem_words[];
  volatile unsigned long long *w = smem_words;
  for (unsigned i = threadIdx.x; i < n_words; i += blockDim.x) w[i] = 0;
}
template <int WORDS>
__global__ void k_lmem_scrub(int z) {
  volatile unsigned long long w[WORDS];
  for (int i = 0; i < WORDS; i++) w[i + z] = 0;
}
__global__ void k_read(const uint4 *p, size_t n, unsigned long long *sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) atomicAdd(sink, 1ull);
}

static int sms, smem_optin;
static unsigned *d_src, *d_zero, *d_dst, *d_out;
static uint4 *d_flush;
static unsigned long long *d_sink;
static size_t flush_n;
static const size_t SRC_WORDS = 9u << 20, OUT_WORDS = 17u << 20;

static void harness_seq(void) {
  k_smem_scrub<<<sms, 1024, smem_optin>>>((unsigned)(smem_optin / 8));
  CK(cudaGetLastError());
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, (const void *)k_lmem_scrub<128>, 256, 0));
  k_lmem_scrub<128><<<2 * sms * per_sm, 256>>>(0);
  CK(cudaGetLastError());
  k_read<<<sms * 4, 1024>>>(d_flush, flush_n, d_sink);
  CK(cudaGetLastError());
}

// shapes: 0 = 256 x 255 regs, 1 = 512 x 128, 2 = 1024 x 64, 3 = 8 x 256 x 32
static const char *shape_name[] = {"256thr-255reg", "512thr-128reg",
                                   "1024thr-64reg", "8x256thr-32reg"};
static void do_fill(int shape, const unsigned *src) {
  switch (shape) {
  case 0: fill<256, 1, 200><<<sms, 256>>>(src, d_dst); break;
  case 1: fill<512, 1, 120><<<sms, 512>>>(src, d_dst); break;
  case 2: fill<1024, 1, 56><<<sms, 1024>>>(src, d_dst); break;
  case 3: fill<256, 8, 24><<<sms * 8, 256>>>(src, d_dst); break;
  }
  CK(cudaGetLastError());
}
static size_t do_peek(int shape) {
  size_t words = 0;
  switch (shape) { /* two waves */
  case 0: peek<256, 1, 200><<<2 * sms, 256>>>(d_src, d_out, 0);
    words = 2ull * sms * 256 * 200; break;
  case 1: peek<512, 1, 120><<<2 * sms, 512>>>(d_src, d_out, 0);
    words = 2ull * sms * 512 * 120; break;
  case 2: peek<1024, 1, 56><<<2 * sms, 1024>>>(d_src, d_out, 0);
    words = 2ull * sms * 1024 * 56; break;
  case 3: peek<256, 8, 24><<<16 * sms, 256>>>(d_src, d_out, 0);
    words = 16ull * sms * 256 * 24; break;
  }
  CK(cudaGetLastError());
  return words;
}
static void scrub(void) {
  for (int s = 0; s < 4; s++) do_fill(s, d_zero);
}

static unsigned tag = 0;
// order: 0 fill/harness/peek, 1 fill/scrub/harness/peek,
//        2 fill/harness/scrub/peek
static void one(int f, int p, int order) {
  tag = tag % 255 + 1;
  CK(cudaMemset(d_out, 0, OUT_WORDS * 4));
  tag_words<<<sms * 8, 256>>>(d_src, SRC_WORDS, tag);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  do_fill(f, d_src);
  if (order == 1) scrub();
  harness_seq();
  if (order == 2) scrub();
  size_t words = do_peek(p);
  CK(cudaDeviceSynchronize());
  std::vector<unsigned> h(words);
  CK(cudaMemcpy(h.data(), d_out, words * 4, cudaMemcpyDeviceToHost));
  size_t mine = 0, older = 0;
  for (size_t i = 0; i < words; i++)
    if ((h[i] >> 20) == 0xC0Du) {
      if (((h[i] >> 12) & 0xFF) == tag) mine++;
      else older++;
    }
  static const char *on[] = {"fill, harness kernels, peek",
                             "fill, register scrub, harness kernels, peek",
                             "fill, harness kernels, register scrub, peek"};
  printf("{\"case\":\"%s\",\"fill\":\"%s\",\"peek\":\"%s\",\"words\":%zu,"
         "\"this_fill\":%zu,\"older_fills\":%zu}\n",
         on[order], shape_name[f], shape_name[p], words, mine, older);
  fflush(stdout);
}

template <typename K> static void regs(const char *n, K k) {
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, k));
  fprintf(stderr, "%s: %d registers, %zu B local\n", n, fa.numRegs,
          fa.localSizeBytes);
}

int main(void) {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  sms = p.multiProcessorCount;
  CK(cudaDeviceGetAttribute(&smem_optin,
                            cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  CK(cudaFuncSetAttribute(k_smem_scrub,
                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                          smem_optin));
  fprintf(stderr, "%s sms %d\n", p.name, sms);
  regs("fill 256x200", fill<256, 1, 200>);
  regs("fill 512x120", fill<512, 1, 120>);
  regs("fill 1024x56", fill<1024, 1, 56>);
  regs("fill 256x24 (8/SM)", fill<256, 8, 24>);
  regs("peek 256x200", peek<256, 1, 200>);
  regs("peek 512x120", peek<512, 1, 120>);
  regs("peek 1024x56", peek<1024, 1, 56>);
  regs("peek 256x24 (8/SM)", peek<256, 8, 24>);
  CK(cudaMalloc(&d_src, SRC_WORDS * 4));
  CK(cudaMalloc(&d_zero, SRC_WORDS * 4));
  CK(cudaMemset(d_zero, 0, SRC_WORDS * 4));
  CK(cudaMalloc(&d_dst, SRC_WORDS * 4));
  CK(cudaMalloc(&d_out, OUT_WORDS * 4));
  flush_n = (size_t)p.l2CacheSize * 2 / 16;
  CK(cudaMalloc(&d_flush, flush_n * 16));
  CK(cudaMemset(d_flush, 1, flush_n * 16));
  CK(cudaMalloc(&d_sink, 8));
  for (int order = 0; order < 3; order++)
    for (int f = 0; f < 4; f++)
      for (int q = 0; q < 4; q++) one(f, q, order);
  return 0;
}
