#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-s2/var.sh OUTDIR GRID PROBLEM... -- on the
# GPU machine: cache-hint variants of PROBLEM's GRID templates (comma
# list), each a copy PROBLEM_v made by one sed script (VARIANTS below),
# every knob combination checked and timed by the kernel lab's run.sh
# beside the templates as they are; then the best of each by one loop,
# twice, beside torch eager and torch.compile.  VARS="ld" runs only those.
set -uo pipefail
out=${1:?usage: var.sh OUTDIR GRID PROBLEM...}; grid=${2:?GRID}; shift 2
probs=("$@")
mkdir -p "$out"
PY=${PY:-/opt/torch/.venv/bin/python3}
lab=docs/gpu-runs/2026-11-29-h200-kernels
# wb: output stores write-back (a plain store, as Triton's) not streaming;
# ld: that, and the inputs' loads through the read-only path without the
# evict-first hint (the inputs are never written by the kernel)
declare -A VARIANTS=(
  [wb]='s/__stcs(/__stwb(/g'
  [ld]='s/__stcs(/__stwb(/g; s/__ldcs(/__ldg(/g'
)
vars=${VARS:-${!VARIANTS[@]}}   # VARS="ld": only those
grids=()
for p in "${probs[@]}"; do
  for v in $vars; do
    rm -rf problems/cuda/${p}_$v
    cp -r problems/cuda/$p problems/cuda/${p}_$v
    sed -i "${VARIANTS[$v]}" problems/cuda/${p}_$v/*.cu
    grids+=("${p}_$v:$grid")
  done
  grids+=("$p:$grid")
done
bash $lab/run.sh "$out/h" "${grids[@]}" >/dev/null 2>&1
for p in "${probs[@]}"; do
  args=()
  for f in "$out"/h/best-${p}-*.cu "$out"/h/best-${p}_*.cu; do
    case $f in *warp_rows*) continue;; esac
    [ -e "$f" ] && args+=(--kernel "$p=$f")
  done
  for rep in 1 2; do
    $PY scripts/torch_baselines.py --problems "$p" --reps 50 "${args[@]}" >> "$out/sametimer.jsonl" 2>> "$out/stderr.txt"
  done
  for v in $vars; do rm -rf problems/cuda/${p}_$v; done
done
tar -C "$out" -czf "$out.tgz" .
