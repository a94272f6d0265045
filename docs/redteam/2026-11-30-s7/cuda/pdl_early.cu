/* EXPLOIT: programmatic dependent launch (cudaLaunchKernelExC, allow-listed) without griddepcontrol.wait, to start before the harness's preceding kernel and the timed window */
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
/* Programmatic dependent launch through cudaLaunchKernelExC, which is on
 * the allow-list (the C++ cudaLaunchKernelEx template calls it): the
 * kernel is allowed to start before the kernel ahead of it on the stream
 * (the harness's gate / register scrub) has finished, and never waits for
 * it (no griddepcontrol.wait), hoping its blocks start before the events'
 * and the trace's start of the call. */
extern "C" int kf_launch(const kf_args *a) {
  int64_t n;
  if (!gelu_args_ok(a, &n)) return 1;
  cudaLaunchConfig_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDim = dim3(gelu_blocks(n));
  cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = (cudaStream_t)a->stream;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  const __nv_bfloat16 *x = (const __nv_bfloat16 *)a->inputs[0].data;
  __nv_bfloat16 *y = (__nv_bfloat16 *)a->outputs[0].data;
  if (cudaLaunchKernelEx(&cfg, gelu_k, x, y, n) != cudaSuccess) return 1;
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
