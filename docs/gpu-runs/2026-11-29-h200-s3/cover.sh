#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-s3/cover.sh OUTDIR -- builds regcover.cu
# for the GPU's architecture and prints, per kernel, the registers below
# its count that its SASS never names, and its spills (ptxas -v).
set -uo pipefail
out=${1:?}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
here=docs/gpu-runs/2026-11-29-h200-s3
python3 $here/gen_cover.py --out $here/regcover.cu
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
for a in sm_${cc}a ${EXTRA_ARCH:-}; do
  nvcc -O3 -arch=$a -Xptxas -v -cubin -o /tmp/rc.cubin $here/regcover.cu > "$out/ptxas-$a.txt" 2>&1
  cuobjdump -sass /tmp/rc.cubin > "$out/cover-$a.sass"
  python3 - "$out/cover-$a.sass" "$out/ptxas-$a.txt" "$a" <<'PY' | tee "$out/cover-$a.txt"
import re, sys
sass, ptx, arch = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3]
used = dict(re.findall(r"Compiling entry function '(\w+)'.*?Used (\d+) registers", ptx, re.S))
spill = dict(re.findall(r"Function properties for (\w+)\n.*?(\d+) bytes spill stores", ptx, re.S))
for fn, body in re.findall(r"Function : (\w+)\n(.*?)(?=Function : |\Z)", sass, re.S):
    regs = {int(r) for r in re.findall(r"\bR(\d+)\b", body)}
    n = int(used.get(fn, 0))
    missing = [r for r in range(n) if r not in regs]
    print(arch, fn, "used", n, "spill", spill.get(fn, "?"), "never named:", missing)
PY
done
