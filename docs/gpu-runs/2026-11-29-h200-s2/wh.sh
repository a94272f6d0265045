#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-s2/wh.sh OUTDIR [PROBLEM...] -- on the GPU
# machine: for each PROBLEM (default rmsnorm residual_rmsnorm), pipe_rows
# with w kept in registers across the block's rows (whoist.py) as
# PROBLEM_w, every knob combination checked and timed by the kernel lab's
# run.sh beside the templates as they are; then the bests by one loop
# beside torch eager and torch.compile (scripts/torch_baselines.py).
set -uo pipefail
out=${1:?usage: wh.sh OUTDIR [PROBLEM...]}; shift
probs=("$@"); [ ${#probs[@]} -gt 0 ] || probs=(rmsnorm residual_rmsnorm)
mkdir -p "$out"
PY=${PY:-/opt/torch/.venv/bin/python3}
here=docs/gpu-runs/2026-11-29-h200-s2
lab=docs/gpu-runs/2026-11-29-h200-kernels
grids=()
for p in "${probs[@]}"; do
  rm -rf problems/cuda/${p}_w
  cp -r problems/cuda/$p problems/cuda/${p}_w
  $PY $here/whoist.py problems/cuda/$p/pipe_rows.cu problems/cuda/${p}_w/pipe_rows.cu 2>> "$out/stderr.txt" &&
    grids+=("${p}_w:pipe_rows")
  g=$(ls problems/cuda/$p/*.cu | xargs -n1 basename | sed 's/\.cu$//' | grep -vx 'reference\|warp_rows' | paste -sd,)
  grids+=("$p:$g")
done
bash $lab/run.sh "$out/h" "${grids[@]}" >/dev/null 2>&1
for p in "${probs[@]}"; do
  args=()
  for f in "$out"/h/best-${p}-*.cu "$out"/h/best-${p}_w-*.cu; do
    case $f in *warp_rows*) continue;; esac
    [ -e "$f" ] && args+=(--kernel "$p=$f")
  done
  for rep in 1 2; do
    $PY scripts/torch_baselines.py --problems "$p" --reps 50 "${args[@]}" >> "$out/sametimer.jsonl" 2>> "$out/stderr.txt"
  done
  rm -rf problems/cuda/${p}_w
done
tar -C "$out" -czf "$out.tgz" .
