#!/bin/bash
# task.py drawing a module-level random constant: the reference's process
# runs it inside the reference's code (after runner.py _seed_init), a
# candidate's before _seed_init (runner.py _load: _register_modules first)
export KF_PYTHON=/usr/bin/python3
KF=/work/main/build/kf; H=/work/main/build/kf-harness; R=/tmp/rt-gm
rm -rf $R/r_seed $R/r_seed_out; mkdir -p $R/r_seed
cp $R/GM_UTILS.txt $R/r_seed/utils.py
{ cat $R/GM_TASK.txt; printf 'W = torch.randn(64, 64)  # a fixed random weight of the problem\n'; } > $R/r_seed/task.py
sed 's/return a \* SCALE + b/return a @ task.W + b/; s/^import torch/import torch\nimport task/' $R/GM_LAYOUT.txt > $R/r_seed/reference.py
cat > $R/r_seed_sub.py <<'PY'
from task import input_t, output_t
import task


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    return a @ task.W + b
PY
$KF import gpumode $R/r_seed --out $R/r_seed_out --case '{"size": 64, "seed": 3}' 2>&1 | grep -v '^next:'
for m in "--stop-after verify" "--stop-after verify --torch-persistent"; do
$H eval-files --spec $R/r_seed_out --source $R/r_seed_sub.py $m 2>/dev/null |
  /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print("eval:", r["outcome"], "|", r.get("reason","")[:300])'; done
