/* SPDX-License-Identifier: Apache-2.0 */
/*
 * l2dirty.cu -- does the harness's L2 flush charge the candidate for
 * writing back the flush's own dirty lines?
 *
 * The CUDA runner flushes L2 before each timed call with a memset of
 * 2 x L2 bytes; the lines it leaves are dirty, and the first thing the
 * candidate's kernel does is evict them (a write-back of up to one L2 of
 * data, inside the timed span).  This program times one template's
 * kf_launch (built in with -DCAND=...) and a device-to-device copy of the
 * same footprint under three flushes, interleaved round by round:
 *   memset       the runner's flush today
 *   memset+read  the same, then a read-only sweep of the flush buffer
 *                (L2 left holding clean lines)
 *   none         no flush (inputs larger than L2 stay mostly out of it)
 * and prints medians.  Events on the stream, as the runner's, with the
 * flush queued ahead so the launch's host latency is hidden.
 *
 * usage: l2dirty M N INS OUTS [ROUNDS]   INS/OUTS: one letter per tensor,
 *        F = M x N bf16, V = N bf16 (e.g. rmsnorm: FV F)
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include CAND

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, \
          cudaGetErrorString(e_)); exit(2); } } while (0)

__global__ void k_fill(uint16_t *p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    float f = ((float)(h & 0xffff) / 65536.f - 0.5f) * 4.f;
    p[i] = (uint16_t)(__float_as_uint(f) >> 16);
  }
}

__global__ void k_read(const uint4 *p, size_t n, unsigned *sink) {
  uint32_t acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

static int cmpf(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: l2dirty M N INS OUTS [ROUNDS]\n"); return 2; }
  const int64_t M = atoll(argv[1]), N = atoll(argv[2]);
  const char *ins = argv[3], *outs = argv[4];
  const int rounds = argc > 5 ? atoi(argv[5]) : 30;
  int dev = 0, sms = 0, l2 = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  kf_tensor tin[4], tout[4];
  int nin = (int)strlen(ins), nout = (int)strlen(outs);
  double traffic = 0;
  size_t full = (size_t)M * N * 2;
  for (int i = 0; i < nin + nout; i++) {
    char k = i < nin ? ins[i] : outs[i - nin];
    kf_tensor *t = i < nin ? &tin[i] : &tout[i - nin];
    memset(t, 0, sizeof *t);
    size_t n = k == 'F' ? (size_t)M * N : (size_t)N;
    CK(cudaMalloc(&t->data, n * 2));
    k_fill<<<1024, 256>>>((uint16_t *)t->data, n, 77u + i);
    t->dtype = 2;
    t->ndim = k == 'F' ? 2 : 1;
    if (k == 'F') { t->dims[0] = M; t->dims[1] = N; } else t->dims[0] = N;
    t->numel = (int64_t)n;
    traffic += (double)n * 2;
  }
  size_t flen = (size_t)l2 * 2;
  if (flen < (64u << 20)) flen = 64u << 20;
  void *flush, *ca, *cb, *big_a, *big_b;
  unsigned *sink;
  CK(cudaMalloc(&flush, flen));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMalloc(&ca, full));
  CK(cudaMalloc(&cb, full));
  const size_t big = (size_t)1 << 30;
  CK(cudaMalloc(&big_a, big));
  CK(cudaMalloc(&big_b, big));
  CK(cudaMemset(big_a, 1, big));
  CK(cudaMemset(ca, 1, full));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  int64_t params[2] = {M, N};
  kf_args a = {KF_ABI_VERSION, nin, nout, 2, tin, tout, params, NULL, 0, (void *)st};
  CK(cudaDeviceSynchronize());

  /* 1 GiB copy, as kf-harness-cuda info measures it */
  float bigt[9];
  for (int i = 0; i < 11; i++) {
    CK(cudaEventRecord(e0, st));
    CK(cudaMemcpyAsync(i & 1 ? big_a : big_b, i & 1 ? big_b : big_a, big,
                       cudaMemcpyDeviceToDevice, st));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    if (i >= 2) CK(cudaEventElapsedTime(&bigt[i - 2], e0, e1));
  }
  qsort(bigt, 9, sizeof(float), cmpf);
  const double copy_gbps = 2.0 * big / (bigt[4] * 1e6);

  enum { NMODE = 3, NWHAT = 2 };
  const char *mname[NMODE] = {"memset", "memset+read", "none"};
  const char *wname[NWHAT] = {"kernel", "copy"};
  float *t[NMODE][NWHAT];
  for (int m = 0; m < NMODE; m++)
    for (int w = 0; w < NWHAT; w++) t[m][w] = (float *)calloc(rounds, sizeof(float));
  for (int r = -2; r < rounds; r++) {
    for (int m = 0; m < NMODE; m++) {
      for (int w = 0; w < NWHAT; w++) {
        /* busy the GPU, as the runner's warm-up */
        for (int i = 0; i < 4; i++) CK(cudaMemsetAsync(flush, i, flen, st));
        if (m != 2) CK(cudaMemsetAsync(flush, r & 0xff, flen, st));
        if (m == 1) k_read<<<sms * 4, 512, 0, st>>>((const uint4 *)flush, flen / 16, sink);
        CK(cudaEventRecord(e0, st));
        if (w == 0) {
          if (kf_launch(&a) != 0) { fprintf(stderr, "kf_launch failed\n"); return 2; }
        } else {
          CK(cudaMemcpyAsync(cb, ca, full, cudaMemcpyDeviceToDevice, st));
        }
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0) t[m][w][r] = ms;
      }
    }
  }
  printf("device %s, %d SMs, L2 %d MiB, flush %zu MiB\n", prop.name, sms, l2 >> 20, flen >> 20);
  printf("1 GiB copy: %.1f GB/s (median of 9)\n", copy_gbps);
  printf("problem M=%lld N=%lld ins=%s outs=%s traffic %.1f MB, template %s\n",
         (long long)M, (long long)N, ins, outs, traffic / 1e6, CAND);
  printf("%-12s %-7s %9s %9s %9s %8s\n", "flush", "what", "med_us", "min_us", "GB/s", "%copy");
  for (int m = 0; m < NMODE; m++)
    for (int w = 0; w < NWHAT; w++) {
      qsort(t[m][w], rounds, sizeof(float), cmpf);
      double med = t[m][w][rounds / 2];
      double by = w == 0 ? traffic : 2.0 * full;
      double g = by / (med * 1e6);
      printf("%-12s %-7s %9.2f %9.2f %9.1f %7.1f%%\n", mname[m], wname[w],
             med * 1e3, t[m][w][0] * 1e3, g, 100.0 * g / copy_gbps);
    }
  return 0;
}
