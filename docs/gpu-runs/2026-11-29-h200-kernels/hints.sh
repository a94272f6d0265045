#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-kernels/hints.sh OUTDIR [PROBLEM...] --
# on the GPU machine: for each PROBLEM (default layernorm softmax), the multi-sweep
# path of every template that has one unrolled (P_u) and unrolled with L2
# eviction hints (P_uh), every knob combination checked and timed by
# run.sh beside the templates as they are; then the bests of all three
# by one loop beside torch.compile.  The run of
# 2026-11-29 (h8-hints.tgz) was rmsnorm with an earlier version of this
# script, which also timed best-stcs/ beside them; rmsnorm's templates
# have the hint since, so hints.py finds nothing to change there now.
# Next: layernorm and softmax (block_regs, pipe_rows: the same shape).
set -uo pipefail
out=${1:?usage: hints.sh OUTDIR [PROBLEM...]}; shift
probs=("$@"); [ ${#probs[@]} -gt 0 ] || probs=(layernorm softmax)
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
PY=${PY:-/opt/torch/.venv/bin/python3}
d=docs/gpu-runs/2026-11-29-h200-kernels
grids=()
for p in "${probs[@]}"; do
  for m in u uh; do
    rm -rf problems/cuda/${p}_$m
    cp -r problems/cuda/$p problems/cuda/${p}_$m
    g=""
    for f in problems/cuda/$p/*.cu; do
      t=$(basename "$f" .cu)
      [ "$t" = reference ] && continue
      if $PY $d/hints.py "$f" problems/cuda/${p}_$m/$t.cu $m 2>> "$out/stderr.txt"; then
        g+="${g:+,}$t"
      fi
    done
    [ -n "$g" ] && grids+=("${p}_$m:$g")
  done
  # the templates as they are, the same way, for the same loop below
  [ -n "$g" ] && grids+=("$p:$g")
done
bash $d/run.sh "$out/h" "${grids[@]}" >/dev/null 2>&1
for p in "${probs[@]}"; do
  args=()
  for f in "$out"/h/best-${p}-*.cu "$out"/h/best-${p}_u*.cu; do
    case $f in *warp_rows*) continue;; esac
    [ -e "$f" ] && args+=(--kernel "$p=$f")
  done
  $PY scripts/torch_baselines.py --problems "$p" --reps 50 "${args[@]}" >> "$out/sametimer.jsonl" 2>> "$out/stderr.txt"
  rm -rf problems/cuda/${p}_u problems/cuda/${p}_uh
done
tar -C "$out" -czf "$out.tgz" .
