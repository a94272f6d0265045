/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/info.c -- the "info" mode of kf-harness-cuda: one GPU's
 * identity and its measured ceilings, as one JSON object on stdout.
 *
 *   identity  name, compute capability, SMs, L2, memory, PCI bus id, UUID,
 *             driver release (/proc/driver/nvidia/version), the CUDA
 *             version the driver supports and the runtime's
 *   copy_gbps cudaMemcpyAsync device-to-device between two buffers of
 *             1 GiB (less when memory is short), bytes read + written,
 *             median of 9 timed copies after 2 warm-ups, timed with events
 *   read_gbps the harness's read kernel (kernels.cu) over one such buffer,
 *             16-byte loads; write_gbps cudaMemsetAsync over it; same
 *             timing.  The too-fast floor takes the best of the three: a
 *             kernel that mostly reads streams faster than a copy
 *   peak_gflops  bf16 GEMM 8192^3 (f32 accumulate) through cuBLAS on
 *             random data, median of 9 after 3 warm-ups.  cuBLAS is
 *             dlopen'ed (libcublas.so.13, then libcublas.so) so nothing
 *             links it; without it peak_gflops is 0 and gemm_error says why
 *
 * Runs as an ordinary process (no sandbox: it loads no candidate).  The
 * eval process never calls this; kf-harness cuda-info does, and the worker
 * runs that once at start.  Exit 0 with the JSON, 1 with {"error": ...}.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "proto.h"

static int cmp_f(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

static float median(float *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_f);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void json_str(const char *key, const char *v, int last) {
  printf("  \"%s\": \"", key);
  for (const char *p = v; *p; p++) {
    if (*p == '"' || *p == '\\') printf("\\%c", *p);
    else if ((unsigned char)*p < 0x20) printf(" ");
    else putchar(*p);
  }
  printf("\"%s\n", last ? "" : ",");
}

static void driver_release(char *out, size_t len) {
  out[0] = '\0';
  FILE *f = fopen("/proc/driver/nvidia/version", "r");
  if (!f) return;
  char line[512];
  if (fgets(line, sizeof line, f)) {
    /* "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04
     * Release Build ...": the first token of the form N.N[.N] */
    for (char *p = line; *p; p++) {
      if (p > line && p[-1] != ' ') continue;
      size_t n = strspn(p, "0123456789.");
      if (n >= 3 && n < len && p[n] == ' ' && strchr(p, '.') &&
          strchr(p, '.') < p + n && p[0] != '.') {
        memcpy(out, p, n);
        out[n] = '\0';
        break;
      }
    }
  }
  fclose(f);
}

/* GB/s of kind 0 copy (bytes read + written), 1 read, 2 write; 0 on
 * failure (why says so). */
static double measure_bw(int kind, size_t free_b, int sms, char *why,
                         size_t whylen) {
  size_t n = (size_t)1 << 30;
  while (n > (64u << 20) && 2 * n + (256u << 20) > free_b) n >>= 1;
  void *a = NULL, *b = NULL;
  unsigned long long *sink = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  double gbps = 0;
  static const char *const name[] = {"copy", "read", "write"};
  if (cudaMalloc(&a, n) != cudaSuccess || cudaMalloc(&b, n) != cudaSuccess ||
      cudaMalloc((void **)&sink, sizeof *sink) != cudaSuccess ||
      cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
    snprintf(why, whylen, "%s: allocation of 2 x %zu MiB failed", name[kind],
             n >> 20);
    goto out;
  }
  cudaMemset(a, 0x3c, n);
  cudaMemset(b, 0x5a, n);
  float t[9];
  for (int i = 0; i < 11; i++) {
    cudaEventRecord(e0, 0);
    if (kind == 0)
      cudaMemcpyAsync(i & 1 ? a : b, i & 1 ? b : a, n,
                      cudaMemcpyDeviceToDevice, 0);
    else if (kind == 1)
      kf_cuda_read(i & 1 ? a : b, n, sms, sink);
    else
      cudaMemsetAsync(i & 1 ? a : b, i & 0xff, n, 0);
    cudaEventRecord(e1, 0);
    if (cudaEventSynchronize(e1) != cudaSuccess) {
      snprintf(why, whylen, "%s: %s", name[kind],
               cudaGetErrorString(cudaGetLastError()));
      goto out;
    }
    if (i >= 2) cudaEventElapsedTime(&t[i - 2], e0, e1);
  }
  float ms = median(t, 9);
  double bytes = kind == 0 ? 2.0 * (double)n : (double)n;
  if (ms > 0) gbps = bytes / ((double)ms * 1e6);
out:
  cudaGetLastError();
  if (a) cudaFree(a);
  if (b) cudaFree(b);
  if (sink) cudaFree(sink);
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  return gbps;
}

/* cuBLAS through dlopen: the few entry points and enum values we use
 * (cublas_api.h, library_types.h). */
typedef int (*cublas_create_fn)(void **);
typedef int (*cublas_destroy_fn)(void *);
typedef int (*cublas_gemm_ex_fn)(void *, int, int, int, int, int,
                                 const void *, const void *, int, int,
                                 const void *, int, int, const void *, void *,
                                 int, int, int, int);
#define KF_CUBLAS_OP_N 0
#define KF_CUDA_R_16BF 14
#define KF_CUBLAS_COMPUTE_32F 68
#define KF_CUBLAS_GEMM_DEFAULT (-1)

static uint16_t rand_bf16(uint64_t *x) {
  *x = *x * 6364136223846793005ull + 1442695040888963407ull;
  /* uniform in about [-1, 1): sign, exponent 126 or 125, 7 random bits */
  uint16_t sign = (uint16_t)((*x >> 63) << 15);
  uint16_t expo = (uint16_t)(((*x >> 62) & 1) ? 126 : 125);
  return (uint16_t)(sign | expo << 7 | ((*x >> 40) & 0x7f));
}

/* GFLOP/s, 0 on failure (why says so). */
static double measure_gemm(size_t free_b, char *why, size_t whylen) {
  const int n = 8192;
  const size_t bytes = (size_t)n * n * 2;
  void *lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, whylen, "cuBLAS not found: %s", e ? e : "dlopen failed");
    return 0;
  }
  cublas_create_fn create = (cublas_create_fn)dlsym(lib, "cublasCreate_v2");
  cublas_destroy_fn destroy = (cublas_destroy_fn)dlsym(lib, "cublasDestroy_v2");
  cublas_gemm_ex_fn gemm = (cublas_gemm_ex_fn)dlsym(lib, "cublasGemmEx");
  if (!create || !destroy || !gemm) {
    snprintf(why, whylen, "cuBLAS lacks cublasCreate_v2/cublasGemmEx");
    return 0;
  }
  if (3 * bytes + (256u << 20) > free_b) {
    snprintf(why, whylen, "gemm: not enough free device memory");
    return 0;
  }
  void *h = NULL, *A = NULL, *B = NULL, *C = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  double gflops = 0;
  uint16_t *host = malloc(bytes);
  int st = create(&h);
  if (st != 0 || !host) {
    snprintf(why, whylen, "cublasCreate failed (status %d)", st);
    goto out;
  }
  if (cudaMalloc(&A, bytes) != cudaSuccess || cudaMalloc(&B, bytes) != cudaSuccess ||
      cudaMalloc(&C, bytes) != cudaSuccess || cudaEventCreate(&e0) != cudaSuccess ||
      cudaEventCreate(&e1) != cudaSuccess) {
    snprintf(why, whylen, "gemm: allocation failed");
    goto out;
  }
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < (size_t)n * n; i++) host[i] = rand_bf16(&x);
  cudaMemcpy(A, host, bytes, cudaMemcpyHostToDevice);
  for (size_t i = 0; i < (size_t)n * n; i++) host[i] = rand_bf16(&x);
  cudaMemcpy(B, host, bytes, cudaMemcpyHostToDevice);
  float alpha = 1.0f, beta = 0.0f, t[9];
  for (int i = 0; i < 12; i++) {
    cudaEventRecord(e0, 0);
    st = gemm(h, KF_CUBLAS_OP_N, KF_CUBLAS_OP_N, n, n, n, &alpha, A,
              KF_CUDA_R_16BF, n, B, KF_CUDA_R_16BF, n, &beta, C,
              KF_CUDA_R_16BF, n, KF_CUBLAS_COMPUTE_32F, KF_CUBLAS_GEMM_DEFAULT);
    cudaEventRecord(e1, 0);
    if (st != 0 || cudaEventSynchronize(e1) != cudaSuccess) {
      snprintf(why, whylen, "cublasGemmEx failed (status %d, %s)", st,
               cudaGetErrorString(cudaGetLastError()));
      goto out;
    }
    if (i >= 3) cudaEventElapsedTime(&t[i - 3], e0, e1);
  }
  float ms = median(t, 9);
  if (ms > 0) gflops = 2.0 * (double)n * n * n / ((double)ms * 1e6);
out:
  cudaGetLastError();
  free(host);
  if (A) cudaFree(A);
  if (B) cudaFree(B);
  if (C) cudaFree(C);
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (h) destroy(h);
  return gflops;
}

int kf_harness_cuda_info_main(int argc, char **argv) {
  int device = 0;
  int measure = 1;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--device") && i + 1 < argc) device = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-measure")) measure = 0;
  }
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || device < 0 || device >= count) {
    printf("{\"error\": \"%s\"}\n",
           e != cudaSuccess ? cudaGetErrorString(e) : "no such device");
    return 1;
  }
  struct cudaDeviceProp p;
  if ((e = cudaGetDeviceProperties(&p, device)) != cudaSuccess ||
      (e = cudaSetDevice(device)) != cudaSuccess || (e = cudaFree(0)) != cudaSuccess) {
    printf("{\"error\": \"%s\"}\n", cudaGetErrorString(e));
    return 1;
  }
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  char release[64], pci[32], uuid[64], buf[64];
  driver_release(release, sizeof release);
  cudaDeviceGetPCIBusId(pci, sizeof pci, device);
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  const unsigned char *u = (const unsigned char *)p.uuid.bytes;
  snprintf(uuid, sizeof uuid,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
           u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
           u[11], u[12], u[13], u[14], u[15]);
  char copy_why[256] = "", gemm_why[256] = "";
  double copy = 0, rd = 0, wr = 0, gflops = 0;
  if (measure) {
    copy = measure_bw(0, free_b, p.multiProcessorCount, copy_why,
                      sizeof copy_why);
    rd = measure_bw(1, free_b, p.multiProcessorCount, copy_why,
                    sizeof copy_why);
    wr = measure_bw(2, free_b, p.multiProcessorCount, copy_why,
                    sizeof copy_why);
    gflops = measure_gemm(free_b, gemm_why, sizeof gemm_why);
  }
  printf("{\n");
  printf("  \"device\": %d,\n", device);
  json_str("name", p.name, 0);
  printf("  \"cc_major\": %d,\n  \"cc_minor\": %d,\n", p.major, p.minor);
  printf("  \"sm_count\": %d,\n", p.multiProcessorCount);
  printf("  \"l2_bytes\": %d,\n", p.l2CacheSize);
  printf("  \"persisting_l2_max_bytes\": %d,\n", p.persistingL2CacheMaxSize);
  printf("  \"mem_bytes\": %zu,\n", (size_t)p.totalGlobalMem);
  printf("  \"smem_per_block_optin\": %zu,\n", (size_t)p.sharedMemPerBlockOptin);
  printf("  \"regs_per_sm\": %d,\n", p.regsPerMultiprocessor);
  json_str("pci_bus_id", pci, 0);
  json_str("uuid", uuid, 0);
  json_str("driver", release, 0);
  snprintf(buf, sizeof buf, "%d.%d", drv / 1000, drv % 1000 / 10);
  json_str("driver_cuda", buf, 0);
  snprintf(buf, sizeof buf, "%d.%d", rt / 1000, rt % 1000 / 10);
  json_str("runtime", buf, 0);
  printf("  \"measured\": %s,\n", measure ? "true" : "false");
  printf("  \"copy_gbps\": %.3f,\n", copy);
  printf("  \"read_gbps\": %.3f,\n", rd);
  printf("  \"write_gbps\": %.3f,\n", wr);
  if (*copy_why) json_str("copy_error", copy_why, 0);
  printf("  \"peak_gflops\": %.3f%s\n", gflops, *gemm_why ? "," : "");
  if (*gemm_why) json_str("gemm_error", gemm_why, 1);
  printf("}\n");
  return fflush(stdout) == 0 ? 0 : 1;
}
