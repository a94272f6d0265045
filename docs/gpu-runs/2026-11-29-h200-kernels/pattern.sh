#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-kernels/pattern.sh OUTDIR -- on the GPU
# machine, repository root: pattern.cu in its three modes at 64 and 256
# threads, timed by torch_baselines.py's loop beside torch for
# causal_softmax (and the latest tri_pipe picked by run.sh, if given as
# $2), one JSON line.
set -uo pipefail
out=${1:?usage: pattern.sh OUTDIR [KERNEL.cu]}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
PY=${PY:-/opt/torch/.venv/bin/python3}
d=docs/gpu-runs/2026-11-29-h200-kernels
args=()
for m in 0 1 2; do for t in 64 256; do
  f=$out/pattern-m$m-t$t.cu
  printf '#define MODE %s\n#define THREADS %s\n' $m $t | cat - $d/pattern.cu > "$f"
  args+=(--kernel "causal_softmax=$f")
done; done
[ $# -ge 2 ] && args+=(--kernel "causal_softmax=$2")
$PY scripts/torch_baselines.py --problems causal_softmax --reps 50 "${args[@]}" > "$out/pattern.jsonl" 2>> "$out/stderr.txt"
$PY scripts/torch_baselines.py --copy --copy-gib 0.1875 >> "$out/pattern.jsonl" 2>> "$out/stderr.txt"
