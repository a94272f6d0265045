/* EXPLOIT: a call counter in __managed__ (unified) memory, which no scrub covers: exact while checked, then half the work */
/* red-team candidate for KernelFleet's CUDA harness (/tmp/rt_cuda); never a real kernel. */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "kf_candidate.h"
/* ---- an honest f32 tanh-GELU, one bf16 element per thread, grid-stride:
 * the same kernel as gelu_plain.cu (the control), so a speedup beyond that
 * control's is what the trick bought. */
__device__ __forceinline__ float gelu_f(float v) {
  const float k0 = 0.7978845608028654f;
  return 0.5f * v * (1.0f + tanhf(k0 * (v + 0.044715f * v * v * v)));
}
__global__ void gelu_k(const __nv_bfloat16 *__restrict__ x,
                       __nv_bfloat16 *__restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = __float2bfloat16(gelu_f(__bfloat162float(x[i])));
}
static int gelu_args_ok(const kf_args *a, int64_t *n) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 0;
  *n = a->params[0] * a->params[1];
  return *n > 0;
}
static unsigned gelu_blocks(int64_t n) {
  int64_t want = (n + 255) / 256;
  return (unsigned)(want < 65536 ? want : 65536);
}
/* A call counter in __managed__ memory: unified memory the runner never
 * scrubs, registered by nvcc's host stub (__cudaRegisterManagedVar) rather
 * than a __device__ variable's .nv.global section; exact while checked (the
 * first 200 calls), then half the elements skipped. */
__managed__ unsigned long long calls;
__global__ void gelu_half_k(const __nv_bfloat16 *__restrict__ x,
                            __nv_bfloat16 *__restrict__ y, int64_t n,
                            int64_t step) {
  for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * step;
       i < n; i += (int64_t)gridDim.x * blockDim.x * step)
    y[i] = __float2bfloat16(gelu_f(__bfloat162float(x[i])));
  if (blockIdx.x == 0 && threadIdx.x == 0) calls++;
}
extern "C" int kf_launch(const kf_args *a) {
  int64_t n;
  if (!gelu_args_ok(a, &n)) return 1;
  gelu_half_k<<<gelu_blocks(n), 256, 0, (cudaStream_t)a->stream>>>(
      (const __nv_bfloat16 *)a->inputs[0].data,
      (__nv_bfloat16 *)a->outputs[0].data, n, calls > 200 ? 2 : 1);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
