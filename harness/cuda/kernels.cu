// SPDX-License-Identifier: Apache-2.0
//
// harness/cuda/kernels.cu -- the trusted device code of kf-harness-cuda:
// drawing inputs from a key (harness/core/gen.h, the same definitions the
// host uses), the canary around buffers, finding a changed canary byte,
// digests of inputs, and the read-bandwidth probe of `info`.  The runner
// (runner.c, plain C) calls the extern "C" wrappers below; each launches on
// the legacy default stream and returns the launch's error.  Nothing here
// is candidate code, and none of it runs inside a candidate's call, so
// CUPTI attributes none of it to the candidate.
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "gen.h"
#include "kernels.h"

namespace {

constexpr int kThreads = 256;

int blocks_for(uint64_t n) {
  uint64_t b = (n + kThreads - 1) / kThreads;
  if (b > 65535ull * 8) b = 65535ull * 8;
  return b ? (int)b : 1;
}

__global__ void k_gen(unsigned char *dst, int dt, uint64_t n, int dist,
                      int64_t range, uint64_t key) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    kf_gen_store(dst, dt, i, key, dist, range);
}

__global__ void k_canary(unsigned char *base, uint64_t off, uint64_t len) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < len;
       i += (uint64_t)gridDim.x * blockDim.x)
    base[off + i] = kf_gen_canary(off + i);
}

__global__ void k_canary_check(const unsigned char *base, uint64_t off,
                               uint64_t len, unsigned long long *first) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < len;
       i += (uint64_t)gridDim.x * blockDim.x)
    if (base[off + i] != kf_gen_canary(off + i))
      atomicMin(first, (unsigned long long)(off + i));
}

__global__ void k_digest(const unsigned char *p, uint64_t len,
                         unsigned long long *sum) {
  __shared__ unsigned long long part[kThreads];
  unsigned long long s = 0;
  uint64_t words = len / 8;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
       i < words; i += (uint64_t)gridDim.x * blockDim.x) {
    uint64_t w;
    memcpy(&w, p + 8 * i, 8);
    s += kf_gen_digest_term(w, i);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && len % 8) {
    uint64_t w = 0;
    memcpy(&w, p + 8 * words, len % 8);
    s += kf_gen_digest_term(w, words);
  }
  part[threadIdx.x] = s;
  __syncthreads();
  for (int k = kThreads / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, part[0]);
}

__global__ void k_read(const uint4 *p, uint64_t n, unsigned long long *sink) {
  /* four independent 16-byte loads in flight per thread per step */
  uint32_t acc = 0;
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride],
          d = p[i + 3 * stride];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^
           c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride) {
    uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) atomicAdd(sink, 1ull); /* keeps the loads */
}

// Every word of the block's dynamic shared memory zeroed.  Volatile: the
// stores are never read, and must not be optimized away.
__global__ void k_smem_scrub(unsigned n_words) {
  extern __shared__ unsigned long long smem_words[];
  volatile unsigned long long *w = smem_words;
  for (unsigned i = threadIdx.x; i < n_words; i += blockDim.x) w[i] = 0;
}

// Every word of a WORDS-word local array zeroed.  Local memory is a pool
// the driver keeps for the context, a window per hardware thread slot,
// and a kernel that reads its uninitialized local array sees what the
// slot's last thread left: z (0, unknown to the compiler) keeps the array
// in local memory, volatile keeps the stores.
template <int WORDS>
__global__ void k_lmem_scrub(int z) {
  volatile unsigned long long w[WORDS];
  for (int i = 0; i < WORDS; i++) w[i + z] = 0;
}

typedef void (*lmem_fn)(int);
// 512 B to 64 KiB a thread, doubling.
const lmem_fn kLmem[] = {k_lmem_scrub<64>,   k_lmem_scrub<128>,
                         k_lmem_scrub<256>,  k_lmem_scrub<512>,
                         k_lmem_scrub<1024>, k_lmem_scrub<2048>,
                         k_lmem_scrub<4096>, k_lmem_scrub<8192>};
constexpr int kLmemVariants = sizeof kLmem / sizeof kLmem[0];
constexpr int kLmemThreads = 256;

}  // namespace

extern "C" int kf_cuda_gen(unsigned char *dst, int dt, uint64_t n, int dist,
                           int64_t range, uint64_t key) {
  if (!n) return 0;
  k_gen<<<blocks_for(n), kThreads>>>(dst, dt, n, dist, range, key);
  return (int)cudaGetLastError();
}

extern "C" int kf_cuda_canary(unsigned char *base, uint64_t off,
                              uint64_t len) {
  if (!len) return 0;
  k_canary<<<blocks_for(len), kThreads>>>(base, off, len);
  return (int)cudaGetLastError();
}

extern "C" int kf_cuda_canary_check(const unsigned char *base, uint64_t off,
                                    uint64_t len, unsigned long long *first) {
  if (!len) return 0;
  k_canary_check<<<blocks_for(len), kThreads>>>(base, off, len, first);
  return (int)cudaGetLastError();
}

extern "C" int kf_cuda_digest(const unsigned char *p, uint64_t len,
                              unsigned long long *sum) {
  if (!len) return 0;
  k_digest<<<blocks_for(len / 8 + 1), kThreads>>>(p, len, sum);
  return (int)cudaGetLastError();
}

extern "C" int kf_cuda_read(const void *p, uint64_t bytes, int sms,
                            unsigned long long *sink) {
  uint64_t n = bytes / 16;
  int blocks = sms > 0 ? sms * 4 : 1024;
  k_read<<<blocks, 1024>>>((const uint4 *)p, n, sink);
  return (int)cudaGetLastError();
}

extern "C" int kf_cuda_smem_prepare(int device, int *bytes) {
  *bytes = 0;
  int optin = 0;
  cudaError_t e = cudaDeviceGetAttribute(
      &optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (e != cudaSuccess) return (int)e;
  e = cudaFuncSetAttribute(k_smem_scrub,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
  if (e != cudaSuccess) return (int)e;
  *bytes = optin;
  return 0;
}

extern "C" int kf_cuda_smem_scrub(int sms, int bytes) {
  if (sms <= 0 || bytes <= 0) return 0;
  k_smem_scrub<<<sms, 1024, (size_t)bytes>>>((unsigned)(bytes / 8));
  return (int)cudaGetLastError();
}

extern "C" int kf_cuda_lmem_prepare(int device, uint32_t min_bytes,
                                    int *variant, int *blocks) {
  *variant = -1;
  *blocks = 0;
  size_t stack = 0;
  cudaError_t e = cudaDeviceGetLimit(&stack, cudaLimitStackSize);
  if (e != cudaSuccess) return (int)e;
  uint64_t need = min_bytes > stack ? min_bytes : stack;
  int v = 0;
  while (v < kLmemVariants - 1 && (512ull << v) < need) v++;
  if ((512ull << v) < need) return (int)cudaErrorInvalidValue;
  int sms = 0, per_sm = 0;
  e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e != cudaSuccess) return (int)e;
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, (const void *)kLmem[v], kLmemThreads, 0);
  if (e != cudaSuccess) return (int)e;
  if (sms <= 0 || per_sm <= 0) return (int)cudaErrorInvalidValue;
  *variant = v;
  /* two full waves: the first fills every slot of every SM */
  *blocks = 2 * sms * per_sm;
  return 0;
}

extern "C" int kf_cuda_lmem_scrub(int variant, int blocks) {
  if (variant < 0 || variant >= kLmemVariants || blocks <= 0) return 0;
  kLmem[variant]<<<blocks, kLmemThreads>>>(0);
  return (int)cudaGetLastError();
}
