// SPDX-License-Identifier: Apache-2.0
// placement.cu -- lab: does where the output lies relative to the input
// change a memory-bound kernel's time?  The harness puts every buffer of a
// call in one VMM image (harness/cuda/runner.c alloc_image), the output a
// guard and a page after the input (harness/core/layout.c); torch's
// caching allocator gives each tensor its own 2 MiB-aligned block.  The
// harness times memory-bound bests ~5% above torch_baselines.py's loop;
// TLBs and clocks are ruled out (2026-11-29-h200-s3 tlb.cu, warm.sh).
//
// One kernel (y = 2x, bf16, 16-byte vectors, grid-stride: a read stream
// and a write stream, as the row kernels are) over X bytes, timed by CUDA
// events with a 2x-L2 flush before each repetition (as the runner does),
// median of R, for: separate cudaMallocs; one cudaMalloc with y at
// x + X + delta; one VMM mapping (the harness's) with y at x + X + delta.
// Prints one line per case: median us, GB/s (read + write).
//
// Build: nvcc -O3 -arch=sm_90a -o placement placement.cu -lcuda
// Run:   ./placement [MiB=256] [reps=60]
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, \
  cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
  fprintf(stderr, "%s:%d %s: %d\n", __FILE__, __LINE__, #x, (int)r_); \
  exit(1); } } while (0)

__global__ void twice(const uint4 *__restrict__ x, uint4 *__restrict__ y,
                      size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = __ldg(x + i);
    __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&v);
    for (int k = 0; k < 4; k++) h[k] = __hadd2(h[k], h[k]);
    y[i] = v;
  }
}

__global__ void fill(uint4 *p, size_t n, unsigned s) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = make_uint4(0x3f803f80u ^ (unsigned)i, s, 0x3f803f80u, 1);
}

static int sms;
static char *flush;
static size_t flush_len;

static double time_case(const char *x, char *y, size_t bytes, int reps) {
  size_t n = bytes / 16;
  fill<<<sms * 4, 256>>>((uint4 *)x, n, 7);
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < reps + 5; r++) {
    CK(cudaMemsetAsync(flush, r & 0xff, flush_len));
    CK(cudaEventRecord(a));
    twice<<<sms * 8, 512>>>((const uint4 *)x, (uint4 *)y, n);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 5) t.push_back(ms * 1000.f);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static void report(const char *what, size_t delta, double us, size_t bytes) {
  printf("%-22s delta %10zu  median %9.2f us  %7.1f GB/s\n", what, delta, us,
         2.0 * bytes / (us * 1e3));
  fflush(stdout);
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoull(argv[1], 0, 10) : 256;
  int reps = argc > 2 ? atoi(argv[2]) : 60;
  size_t X = mib << 20;
  CK(cudaFree(0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  flush_len = std::max<size_t>(2 * (size_t)l2, 64u << 20);
  CK(cudaMalloc(&flush, flush_len));
  const size_t deltas[] = {4096, 8192, 16384, 65536, 262144, 1u << 20,
                           2u << 20, (2u << 20) + 4096, (2u << 20) + 65536,
                           3u << 20, 37u << 20};
  const size_t maxd = 64u << 20;
  for (int round = 0; round < 2; round++) {
    printf("# round %d, X = %zu MiB, %d reps, flush %zu MiB\n", round, mib,
           reps, flush_len >> 20);
    char *x, *y;
    CK(cudaMalloc(&x, X));
    CK(cudaMalloc(&y, X));
    report("separate cudaMalloc", (size_t)(y - x), time_case(x, y, X, reps),
           X);
    CK(cudaFree(x));
    CK(cudaFree(y));
    char *big;
    CK(cudaMalloc(&big, 2 * X + maxd));
    for (size_t d : deltas)
      report("one cudaMalloc", d, time_case(big, big + X + d, X, reps), X);
    CK(cudaFree(big));
    // the harness's image: one cuMemCreate mapped into a reservation
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t gran = 0;
    CU(cuMemGetAllocationGranularity(&gran, &prop,
                                     CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t sz = (2 * X + maxd + gran - 1) / gran * gran;
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    CU(cuMemAddressReserve(&va, sz + 2 * gran, 0, 0, 0));
    CU(cuMemCreate(&h, sz, &prop, 0));
    CU(cuMemMap(va + gran, sz, 0, h, 0));
    CUmemAccessDesc acc = {};
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU(cuMemSetAccess(va + gran, sz, &acc, 1));
    char *img = (char *)(uintptr_t)(va + gran);
    for (size_t d : deltas)
      report("VMM image (harness)", d, time_case(img, img + X + d, X, reps),
             X);
    // and the input at a page offset inside the image, as a layout with
    // a guard before the first buffer places it
    report("VMM image, x at +4K", 4096,
           time_case(img + 4096, img + 4096 + X + 4096, X, reps), X);
    CU(cuMemUnmap(va + gran, sz));
    CU(cuMemRelease(h));
    CU(cuMemAddressFree(va, sz + 2 * gran));
  }
  return 0;
}
