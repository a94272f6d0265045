#!/bin/bash
# reference.py with `from __future__ import annotations`: the prologue's
# compile() inherits it for task.py/utils.py in the reference's process,
# runner.py _read_modules compiles them dont_inherit=True for a candidate
export KF_PYTHON=/usr/bin/python3
KF=/work/main/build/kf; H=/work/main/build/kf-harness; R=/tmp/rt-gm
rm -rf $R/f_fut $R/f_fut_out; mkdir -p $R/f_fut
cp $R/GM_UTILS.txt $R/f_fut/utils.py
{ cat $R/GM_TASK.txt; printf '\n\ndef describe(x: KernelSpec) -> str:\n    return "spec"\n'; } > $R/f_fut/task.py
{ printf 'from __future__ import annotations\n'; cat $R/GM_LAYOUT.txt; } > $R/f_fut/reference.py
$KF import gpumode $R/f_fut --out $R/f_fut_out --case '{"size": 64, "seed": 3}' 2>&1 | grep -v '^next:'
for m in "--stop-after verify" "--stop-after verify --torch-persistent"; do
$H eval-files --spec $R/f_fut_out --source $R/sub.py $m 2>/dev/null |
  /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print("eval:", r["outcome"], "|", r.get("reason","")[:300])'; done
