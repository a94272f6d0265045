#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-s3/validate.sh OUTDIR -- one device call
# (bundle/kernelfleet.tar.xz and bundle/gputest/ carried): the register
# scrub and the timing gate through the worker's path.
#   1. kf-harness eval-files of register_carry.cu (no knob; SHIFT=1 with 16
#      and with 132 blocks), hidden_stream_ordered.cu and its honest twin
#      without CUPTI -> summary.txt (outcome, determinism, time);
#   2. the GPU unit tests (test-harness-cuda gpu) -> gputests.txt;
#   3. scripts/run-exploits --backend cuda -> exploits.txt.
set -uo pipefail
out=${1:?usage: validate.sh OUTDIR}
mkdir -p "$out"
tar -C /tmp -xJf bundle/kernelfleet.tar.xz
. /tmp/kernelfleet/env.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/gpu.txt" 2>&1
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
ev() {
  local name=$1; shift
  timeout 150 kf-harness eval-files --spec tests/exploits/problems/hardtanh_cuda \
    --seed 1 --time-budget-ms 300 --call-timeout-ms 3000 --compile-timeout-ms 30000 \
    "$@" > "$out/$name.txt" 2>&1
  python3 - "$out/$name.txt" "$name" >> "$out/summary.txt" <<'PY'
import json, sys
t = open(sys.argv[1]).read()
try:
    d = json.loads(t[t.index("{"):])
except Exception as e:
    print(sys.argv[2], "no result:", t[-300:].replace("\n", " ")); sys.exit()
st = {s["stage"]: s for s in d.get("stages", [])}
last = d.get("stages", [{}])[-1]
print(sys.argv[2], d.get("outcome"), "| determinism:", (st.get("determinism") or {}).get("outcome"),
      "|", last.get("stage"), (last.get("reason") or "")[:170])
PY
}
ev carry --source tests/exploits/cuda/register_carry.cu
ev carry_shift16 --source tests/exploits/cuda/register_carry.cu --knob SHIFT=1
ev carry_shift132 --source tests/exploits/cuda/register_carry.cu --knob SHIFT=1 --knob SHIFT_BLOCKS=132
ev hidden_nocupti --source tests/exploits/cuda/hidden_stream_ordered.cu --cuda-no-cupti
ev honest_nocupti --source /tmp/honest.cu --cuda-no-cupti
ev hidden_nocupti2 --source tests/exploits/cuda/hidden_stream_ordered.cu --cuda-no-cupti --seed 2
ev honest_nocupti2 --source /tmp/honest.cu --cuda-no-cupti --seed 2
cat "$out/summary.txt"
KF_BIN_DIR=/tmp/kernelfleet/bin KF_SOURCE_DIR=$PWD LD_LIBRARY_PATH=$PWD/bundle/gputest:$LD_LIBRARY_PATH \
  timeout 200 bundle/gputest/test-harness-cuda gpu > "$out/gputests.txt" 2>&1
echo "gputests rc $?"; grep -E "^\[ *(OK|FAILED|PASSED|RUN) *\]|clamp on" "$out/gputests.txt" | grep -v "RUN" | tail -16
PYTHONUNBUFFERED=1 timeout 200 scripts/run-exploits --bin /tmp/kernelfleet/bin --backend cuda > "$out/exploits.txt" 2>&1
echo "run-exploits rc $?"; grep -E "FAIL|register_carry|hidden_stream|exploits \(CUDA\)|run," "$out/exploits.txt" | cut -c1-220 | tail -12
