// SPDX-License-Identifier: Apache-2.0
// docs/gpu-runs/2026-11-29-h200-s3/scrubcheck.cu -- the register scrub of
// harness/cuda/kernels.cu (kf_cuda_reg_scrub), checked on a GPU before the
// runner uses it.  Built with kernels.cu and the exploit
// tests/exploits/cuda/register_carry.cu (run.sh):
//  1. coverage: fill<T,B,N> loads a tagged pattern into every register of
//     every SM (four shapes: 255, 128, 64, 32 registers a thread); then the
//     harness's other per-call kernels (local and shared memory scrubs, L2
//     read sweep: kernels.h) and kf_cuda_reg_scrub, in either order, or no
//     scrub at all (the control); then peek<T,B,N> stores registers it
//     never wrote.  Counts the words carrying this case's tag and an older
//     case's.
//  2. the exploit: kf_launch twice on one input with the harness's
//     kernels between (and the register scrub or not): equal outputs mean
//     the seed was carried in registers.
// One JSON line per case.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "regasm.h"
#include "kernels.h"
#include "../../../tests/exploits/cuda/register_carry.cu"

#define CK(x)                                                              \
  do {                                                                     \
    cudaError_t e_ = (cudaError_t)(x);                                     \
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

static int sms, smem_bytes, lmem_variant, lmem_blocks;
static kf_cuda_regscrub rs;
static unsigned *d_src, *d_dst, *d_out;
static void *d_flush;
static size_t flush_bytes;
static unsigned long long *d_sink;
static const size_t SRC_WORDS = 9u << 20, OUT_WORDS = 17u << 20;

// The runner's kernels between two calls (runner.c run_step and the
// verification of a call's outputs): output poison, input draw, canaries,
// digest and canary check, local memory, the L2 flush and its read sweep,
// shared memory.  full = 0: only the last four.
static int full_between = 1;
static unsigned char *d_img;
static void harness_kernels(void) {
  if (full_between) {
    CK(kf_cuda_digest(d_img, 1 << 20, d_sink));
    CK(kf_cuda_canary_check(d_img, 0, 1 << 20, d_sink));
    CK(cudaMemsetAsync(d_img, 0x7f, 1 << 22, 0));
    CK(kf_cuda_gen(d_img, 0, 1 << 20, 1, 0, 12345));
    CK(kf_cuda_canary(d_img, 1 << 22, 1 << 20));
  }
  CK(kf_cuda_lmem_scrub(lmem_variant, lmem_blocks));
  CK(cudaMemsetAsync(d_flush, 0x5a, flush_bytes, 0));
  CK(kf_cuda_smem_scrub(sms, smem_bytes));
  CK(kf_cuda_read(d_flush, flush_bytes, sms, d_sink));
}

static const char *shape_name[] = {"256thr-255reg", "512thr-128reg",
                                   "1024thr-64reg", "8x256thr-32reg"};
static void do_fill(int shape) {
  switch (shape) {
  case 0: fill<256, 1, 200><<<sms, 256>>>(d_src, d_dst); break;
  case 1: fill<512, 1, 120><<<sms, 512>>>(d_src, d_dst); break;
  case 2: fill<1024, 1, 56><<<sms, 1024>>>(d_src, d_dst); break;
  case 3: fill<256, 8, 24><<<sms * 8, 256>>>(d_src, d_dst); break;
  }
  CK(cudaGetLastError());
}
static size_t do_peek(int shape) {
  size_t w = 0;
  switch (shape) { /* two waves */
  case 0: peek<256, 1, 200><<<2 * sms, 256>>>(d_src, d_out, 0);
    w = 2ull * sms * 256 * 200; break;
  case 1: peek<512, 1, 120><<<2 * sms, 512>>>(d_src, d_out, 0);
    w = 2ull * sms * 512 * 120; break;
  case 2: peek<1024, 1, 56><<<2 * sms, 1024>>>(d_src, d_out, 0);
    w = 2ull * sms * 1024 * 56; break;
  case 3: peek<256, 8, 24><<<16 * sms, 256>>>(d_src, d_out, 0);
    w = 16ull * sms * 256 * 24; break;
  }
  CK(cudaGetLastError());
  return w;
}

static unsigned tag = 0;
// order: 0 no register scrub (control), 1 scrub then the harness's other
// kernels, 2 the harness's other kernels then the scrub
static void coverage(int f, int p, int order) {
  tag = tag % 255 + 1;
  CK(cudaMemset(d_out, 0, OUT_WORDS * 4));
  tag_words<<<sms * 8, 256>>>(d_src, SRC_WORDS, tag);
  CK(cudaDeviceSynchronize());
  do_fill(f);
  if (order == 1) CK(kf_cuda_reg_scrub(d_flush, &rs));
  harness_kernels();
  if (order == 2) CK(kf_cuda_reg_scrub(d_flush, &rs));
  size_t words = do_peek(p);
  CK(cudaDeviceSynchronize());
  std::vector<unsigned> h(words);
  CK(cudaMemcpy(h.data(), d_out, words * 4, cudaMemcpyDeviceToHost));
  static const int nper[] = {200, 120, 56, 24};
  std::vector<size_t> at(nper[p], 0); /* hits by register index */
  size_t mine = 0, older = 0;
  for (size_t i = 0; i < words; i++)
    if ((h[i] >> 20) == 0xC0Du) {
      if (((h[i] >> 12) & 0xFF) == tag) mine++;
      else older++;
      at[i % nper[p]]++;
    }
  if (order == 0 && f == p) { /* which of peek's registers held them */
    printf("{\"part\":\"where\",\"fill\":\"%s\",\"register_hits\":{",
           shape_name[f]);
    const char *sep = "";
    for (int j = 0; j < nper[p]; j++)
      if (at[j]) printf("%s\"%d\":%zu", sep, j, at[j]), sep = ",";
    printf("}}\n");
  }
  static const char *on[] = {"no register scrub (control)",
                             "register scrub, harness kernels",
                             "harness kernels, register scrub"};
  printf("{\"part\":\"coverage\",\"between\":\"%s\",\"fill\":\"%s\","
         "\"peek\":\"%s\",\"words\":%zu,\"this_fill\":%zu,"
         "\"older_fills\":%zu}\n",
         on[order], shape_name[f], shape_name[p], words, mine, older);
  fflush(stdout);
}

static void exploit(int scrub) {
  const int64_t n = 1 << 20;
  float *x, *y;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, 2 * n * 4));
  std::vector<float> hx(n), y1(n), y2(n);
  for (int64_t i = 0; i < n; i++) hx[i] = (float)((i * 37) % 1000) / 250.0f - 2.0f;
  CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
  int64_t params[1] = {n};
  kf_tensor in = {}, out = {};
  in.data = x; in.dtype = 0; in.ndim = 1; in.dims[0] = n; in.numel = n;
  out = in;
  out.data = y;
  kf_args a = {};
  a.abi_version = KF_ABI_VERSION;
  a.n_inputs = a.n_outputs = a.n_params = 1;
  a.inputs = &in; a.outputs = &out; a.params = params;
  int same = 0, runs = 6;
  std::vector<float> prev(n);
  for (int r = 0; r < runs; r++) {
    CK(cudaMemset(y, 0xff, n * 4)); /* poisoned, as the runner does */
    if (scrub >= 10) { /* one kernel after the scrub: which one brings
                          the seed back? */
      CK(kf_cuda_reg_scrub(d_flush, &rs));
      if (scrub == 10) CK(cudaMemsetAsync(d_flush, 0x5a, flush_bytes, 0));
      if (scrub == 11) CK(cudaMemsetAsync(d_img, 0, 4096, 0));
      if (scrub == 12) CK(kf_cuda_smem_scrub(sms, smem_bytes));
      if (scrub == 13) CK(kf_cuda_lmem_scrub(lmem_variant, lmem_blocks));
      if (scrub == 14) CK(kf_cuda_read(d_flush, flush_bytes, sms, d_sink));
      if (scrub == 15) CK(kf_cuda_canary(d_img, 0, 4096));
    } else if (scrub == 2) { /* runner.c's order: the scrub before the flush */
      CK(kf_cuda_digest(d_img, 1 << 20, d_sink));
      CK(kf_cuda_canary_check(d_img, 0, 1 << 20, d_sink));
      CK(kf_cuda_lmem_scrub(lmem_variant, lmem_blocks));
      CK(kf_cuda_reg_scrub(d_flush, &rs));
      CK(cudaMemsetAsync(d_flush, 0x5a, flush_bytes, 0));
      CK(cudaMemsetAsync(d_img, 0, 4096, 0));
      CK(kf_cuda_smem_scrub(sms, smem_bytes));
    } else {
      harness_kernels();
      if (scrub) CK(kf_cuda_reg_scrub(d_flush, &rs));
    }
    if (kf_launch(&a)) { fprintf(stderr, "kf_launch failed\n"); exit(1); }
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(y1.data(), y, n * 4, cudaMemcpyDeviceToHost));
    if (r && !memcmp(prev.data(), y1.data(), n * 4)) same++;
    prev = y1;
  }
  printf("{\"part\":\"exploit\",\"mode\":%d,\"between\":\"%s\","
         "\"register_scrub\":%s,\"calls\":%d,"
         "\"calls_equal_to_the_one_before\":%d}\n",
         scrub, full_between ? "all the runner's kernels" : "scrubs and flush only",
         scrub >= 10 ? "\"then one kernel\"" :
         scrub == 2 ? "\"in runner.c's order\"" : scrub ? "true" : "false",
         runs, same);
  fflush(stdout);
  cudaFree(x);
  cudaFree(y);
}

int main(void) {
  CK(cudaFree(0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(kf_cuda_smem_prepare(0, &smem_bytes));
  CK(kf_cuda_lmem_prepare(0, 1024, &lmem_variant, &lmem_blocks));
  flush_bytes = 256u << 20;
  CK(cudaMalloc(&d_flush, flush_bytes));
  CK(cudaMemset(d_flush, 0x5a, flush_bytes));
  CK(kf_cuda_reg_prepare(0, flush_bytes, &rs));
  fprintf(stderr, "sms %d reg scrub blocks %d (32 regs) %d (64 regs)\n",
          sms, rs.blocks32, rs.blocks64);
  CK(cudaMalloc(&d_src, SRC_WORDS * 4));
  CK(cudaMalloc(&d_dst, SRC_WORDS * 4));
  CK(cudaMalloc(&d_out, OUT_WORDS * 4));
  CK(cudaMalloc(&d_sink, 8));
  CK(cudaMalloc(&d_img, 8u << 20));
  if (!getenv("SC_EXPLOIT_ONLY"))
    for (int order = 0; order < 3; order++)
      for (int f = 0; f < 4; f++)
        for (int q = 0; q < 4; q++) coverage(f, q, order);
  for (int m = 10; m <= 15; m++) exploit(m);
  exploit(0);
  exploit(1);
  exploit(2);
  full_between = 0;
  exploit(0);
  exploit(1);
  return 0;
}
