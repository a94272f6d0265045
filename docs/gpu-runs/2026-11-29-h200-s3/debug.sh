#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-s3/debug.sh OUTDIR -- one device call
# (bundle/kernelfleet.tar.xz carried): single evaluations through
# `kf-harness eval-files` (the worker's path) of register_carry.cu, of a
# variant that never reads a seed (must be nondeterministic whatever the
# registers hold: the draws differ), of hidden_stream_ordered.cu with and
# without CUPTI, and of its honest twin; then scrubcheck (run.sh).
set -uo pipefail
out=${1:?usage: debug.sh OUTDIR}
mkdir -p "$out"
tar -C /tmp -xJf bundle/kernelfleet.tar.xz
. /tmp/kernelfleet/env.sh
export PATH=/usr/local/cuda/bin:$PATH
ev() {
  local name=$1; shift
  timeout 150 kf-harness eval-files --spec tests/exploits/problems/hardtanh_cuda \
    --seed 1 --time-budget-ms 300 --call-timeout-ms 3000 --compile-timeout-ms 30000 \
    "$@" > "$out/$name.txt" 2>&1
  echo "$name rc $?: $(grep -m1 '^=>' "$out/$name.txt") | $(grep -m1 '^   time ' "$out/$name.txt" | cut -c1-160)" >> "$out/summary.txt"
}
sed 's/if (have == 3)/if (have == 4)/' tests/exploits/cuda/register_carry.cu > /tmp/rc_noread.cu
cat > /tmp/honest.cu <<'CU'
#include <cuda_runtime.h>
#include "kf_candidate.h"
__global__ void clamp_k(const float *x, float *y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = fminf(fmaxf(x[i], -1.0f), 1.0f);
}
extern "C" int kf_launch(const kf_args *a) {
  clamp_k<<<1024, 256, 0, (cudaStream_t)a->stream>>>((const float *)a->inputs[0].data, (float *)a->outputs[0].data, a->params[0]);
  return 0;
}
CU
ev rc_orig --source tests/exploits/cuda/register_carry.cu
ev rc_noread --source /tmp/rc_noread.cu
ev hso_cupti --source tests/exploits/cuda/hidden_stream_ordered.cu
ev hso_nocupti --source tests/exploits/cuda/hidden_stream_ordered.cu --cuda-no-cupti
ev honest_nocupti --source /tmp/honest.cu --cuda-no-cupti
ev honest_cupti --source /tmp/honest.cu
bash docs/gpu-runs/2026-11-29-h200-s3/run.sh "$out/sc" scrubcheck > /dev/null 2>&1
grep exploit "$out/sc/scrubcheck.jsonl" >> "$out/summary.txt"
cat "$out/summary.txt"
