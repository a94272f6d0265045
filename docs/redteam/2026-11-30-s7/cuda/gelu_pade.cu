/* EXPLOIT: approximate math right only on some distributions: tanh as a clamped Pade form, exact enough on tiny inputs, ~2.6% off near u ~ 1.5 */
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
/* tanh replaced by its clamped [3/3]-like Pade form u(27+u^2)/(27+9u^2):
 * right to ~1e-3 for |u| < 0.6 ('tiny' inputs), off by up to ~2.6% near
 * |u| ~ 1.5, which the f32-derived rtol of 1e-2 does not forgive. */
__device__ __forceinline__ float gelu_pade(float v) {
  const float k0 = 0.7978845608028654f;
  float u = k0 * (v + 0.044715f * v * v * v);
  float t = u * (27.0f + u * u) / (27.0f + 9.0f * u * u);
  t = fminf(fmaxf(t, -1.0f), 1.0f);
  return 0.5f * v * (1.0f + t);
}
__global__ void gelu_pade_k(const __nv_bfloat16 *__restrict__ x,
                            __nv_bfloat16 *__restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = __float2bfloat16(gelu_pade(__bfloat162float(x[i])));
}
extern "C" int kf_launch(const kf_args *a) {
  int64_t n;
  if (!gelu_args_ok(a, &n)) return 1;
  gelu_pade_k<<<gelu_blocks(n), 256, 0, (cudaStream_t)a->stream>>>(
      (const __nv_bfloat16 *)a->inputs[0].data,
      (__nv_bfloat16 *)a->outputs[0].data, n);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
