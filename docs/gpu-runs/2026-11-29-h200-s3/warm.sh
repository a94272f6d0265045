#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-s3/warm.sh OUTDIR -- one device call
# (bundle carried): is the harness's ~5% over the same-timer loop the GPU's
# clocks?  rmsnorm's block_regs (THREADS=512 VPT=2, session b1's best)
# through `kf-harness eval-files` with --cuda-warm-us 2000 (the default),
# 20000 and 100000, then 2000 again; then the same build by
# scripts/torch_baselines.py's loop (which runs back to back).
set -uo pipefail
out=${1:?usage: warm.sh OUTDIR}
mkdir -p "$out"
tar -C /tmp -xJf bundle/kernelfleet.tar.xz
. /tmp/kernelfleet/env.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
k=/tmp/rms_best.cu
{ echo "#define THREADS 512"; echo "#define VPT 2"; cat problems/cuda/rmsnorm/block_regs.cu; } > $k
for w in 2000 20000 100000 2000; do
  timeout 120 kf-harness eval-files --spec problems/cuda/rmsnorm --source problems/cuda/rmsnorm/block_regs.cu \
    --knob THREADS=512 --knob VPT=2 --seed 1 --cuda-warm-us $w --time-budget-ms 2000 \
    > "$out/warm$w.txt" 2>&1
  python3 - "$out/warm$w.txt" $w <<'PY' | tee -a "$out/summary.txt"
import json, sys
t = open(sys.argv[1]).read()
try:
    d = json.loads(t[t.index("{"):])
    st = {s["stage"]: s for s in d["stages"]}
    print("warm-us", sys.argv[2], d["outcome"], st["time"]["reason"][:150])
except Exception as e:
    print("warm-us", sys.argv[2], "no result", t[-200:].replace("\n", " "))
PY
done
PY_T=${PY:-/opt/torch/.venv/bin/python3}
timeout 120 $PY_T scripts/torch_baselines.py --problems rmsnorm --reps 50 --kernel rmsnorm=$k \
  > "$out/sametimer.jsonl" 2> "$out/sametimer.err"
cat "$out/sametimer.jsonl" | tee -a "$out/summary.txt"
