#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-kernels/hints.sh OUTDIR -- on the GPU
# machine: rmsnorm's two-sweep path unrolled (rmsnorm_u) and unrolled with
# L2 eviction hints (rmsnorm_uh), block_regs and pipe_rows, every knob
# combination checked and timed by run.sh; then their bests beside the
# unchanged templates' (best-stcs/) and torch.compile by one loop.
set -uo pipefail
out=${1:?usage: hints.sh OUTDIR}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
PY=${PY:-/opt/torch/.venv/bin/python3}
d=docs/gpu-runs/2026-11-29-h200-kernels
for m in u uh; do
  rm -rf problems/cuda/rmsnorm_$m
  cp -r problems/cuda/rmsnorm problems/cuda/rmsnorm_$m
  for t in block_regs pipe_rows; do
    $PY $d/hints.py problems/cuda/rmsnorm/$t.cu problems/cuda/rmsnorm_$m/$t.cu $m
  done
done
bash $d/run.sh "$out/h" rmsnorm_u:block_regs,pipe_rows rmsnorm_uh:block_regs,pipe_rows >/dev/null 2>&1
args=()
for f in $d/best-stcs/best-rmsnorm-*.cu "$out"/h/best-rmsnorm_u*-block_regs.cu "$out"/h/best-rmsnorm_u*-pipe_rows.cu; do
  [ -e "$f" ] && args+=(--kernel "rmsnorm=$f")
done
$PY scripts/torch_baselines.py --problems rmsnorm --reps 50 "${args[@]}" > "$out/sametimer.jsonl" 2>> "$out/stderr.txt"
$PY scripts/torch_baselines.py --problems rmsnorm --reps 50 "${args[@]}" >> "$out/sametimer.jsonl" 2>> "$out/stderr.txt"
rm -rf problems/cuda/rmsnorm_u problems/cuda/rmsnorm_uh
tar -C "$out" -czf "$out.tgz" .
