#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-kernels/wb.sh OUTDIR -- on the GPU machine:
# do the output stores' cache hints matter?  Copies rmsnorm and
# causal_softmax to *_wb problems whose templates store with __stwb
# (write-back, the default a plain store gets) instead of __stcs
# (streaming, evict-first), grids them through run.sh, then times the best
# of each beside the __stcs originals' best (best-stcs/, from runs r5 and
# r6 of the same day) and torch by one loop.
set -uo pipefail
out=${1:?usage: wb.sh OUTDIR}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
PY=${PY:-/opt/torch/.venv/bin/python3}
d=docs/gpu-runs/2026-11-29-h200-kernels
for p in rmsnorm causal_softmax; do
  rm -rf problems/cuda/${p}_wb
  cp -r problems/cuda/$p problems/cuda/${p}_wb
  sed -i 's/__stcs(/__stwb(/g' problems/cuda/${p}_wb/*.cu
done
bash $d/run.sh "$out/wb" rmsnorm_wb:block_regs,pipe_rows causal_softmax_wb:tri_pipe >/dev/null 2>&1
args=()
for p in rmsnorm causal_softmax; do
  for f in $d/best-stcs/best-$p-*.cu "$out"/wb/best-${p}_wb-*.cu; do
    case $f in *warp_rows*) continue;; esac
    [ -e "$f" ] && args+=(--kernel "$p=$f")
  done
done
$PY scripts/torch_baselines.py --problems rmsnorm,causal_softmax --reps 50 "${args[@]}" > "$out/sametimer.jsonl" 2>> "$out/stderr.txt"
rm -rf problems/cuda/rmsnorm_wb problems/cuda/causal_softmax_wb
tar -C "$out" -czf "$out.tgz" .
