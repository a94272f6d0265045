#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-s3/run.sh OUTDIR [PROGRAM...] -- one
# device call from the repository root: builds each PROGRAM (default:
# regleak busyprobe scrubcheck) with the machine's nvcc for the GPU's own
# architecture and runs it.  scrubcheck links harness/cuda/kernels.cu and
# tests/exploits/cuda/register_carry.cu.
set -uo pipefail
out=${1:?usage: run.sh OUTDIR [PROGRAM...]}; shift
progs=${*:-regleak busyprobe scrubcheck}
mkdir -p "$out"
here=docs/gpu-runs/2026-11-29-h200-s3
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv > "$out/gpu.txt" 2>&1
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
arch=sm_${cc}a
python3 "$here/gen_asm.py" --out "$here/regasm.h" # regleak, scrubcheck
for p in $progs; do
  extra=()
  [ "$p" = scrubcheck ] && extra=(-Iharness/core -Iharness/cuda harness/cuda/kernels.cu)
  nvcc -std=c++17 -O3 -arch=$arch -Xptxas -v -o "$out/$p" "$here/$p.cu" "${extra[@]}" > "$out/$p.build.txt" 2>&1 || { echo "$p build failed" >> "$out/status.txt"; continue; }
  timeout 240 "$out/$p" > "$out/$p.jsonl" 2> "$out/$p.stderr.txt"
  echo "$p rc $?" >> "$out/status.txt"
  rm -f "$out/$p"
done
cat "$out/status.txt" "$out"/*.stderr.txt
