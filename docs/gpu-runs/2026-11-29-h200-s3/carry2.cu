// SPDX-License-Identifier: Apache-2.0
// docs/gpu-runs/2026-11-29-h200-s3/carry2.cu -- does register_carry.cu's
// seed cross processes?  One call of its kf_launch on a fixed input (SHIFT
// as built), then the output's hash; run.sh-style callers run it several
// times in a row: equal hashes in a row mean the seed went from one
// process's context to the next through the registers.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "../../../tests/exploits/cuda/register_carry.cu"

int main(void) {
  const int64_t n = 1 << 20;
  float *x, *y;
  if (cudaMalloc(&x, n * 4) || cudaMalloc(&y, n * 4)) return 1;
  std::vector<float> h(n);
  for (int64_t i = 0; i < n; i++) h[i] = (float)((i * 37) % 1000) / 250.0f - 2.0f;
  cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemset(y, 0xff, n * 4);
  int64_t params[1] = {n};
  kf_tensor in = {}, out = {};
  in.data = x; in.dtype = 0; in.ndim = 1; in.dims[0] = n; in.numel = n;
  out = in;
  out.data = y;
  kf_args a = {};
  a.abi_version = KF_ABI_VERSION;
  a.n_inputs = a.n_outputs = a.n_params = 1;
  a.inputs = &in; a.outputs = &out; a.params = params;
  if (kf_launch(&a) || cudaDeviceSynchronize()) return 1;
  cudaMemcpy(h.data(), y, n * 4, cudaMemcpyDeviceToHost);
  unsigned long long f = 1469598103934665603ull;
  const unsigned char *p = (const unsigned char *)h.data();
  for (size_t i = 0; i < (size_t)n * 4; i++) f = (f ^ p[i]) * 1099511628211ull;
  printf("%016llx\n", f);
  return 0;
}
