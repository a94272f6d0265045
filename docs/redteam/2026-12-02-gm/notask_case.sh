#!/bin/bash
# reference.py that does not import task.py (types written inline), while
# the directory has task.py and GPU MODE's submission imports it
export KF_PYTHON=/usr/bin/python3
KF=/work/main/build/kf; H=/work/main/build/kf-harness; R=/tmp/rt-gm
rm -rf $R/n_notask $R/n_notask_out; mkdir -p $R/n_notask
cp $R/GM_TASK.txt $R/n_notask/task.py
cat > $R/n_notask/reference.py <<'PY'
import torch


def ref_kernel(data):
    a, b = data
    return a * 3.0 + b


def generate_input(size: int, seed: int):
    gen = torch.Generator(device='cuda')
    gen.manual_seed(seed)
    return (torch.randn(size, size, device='cuda', generator=gen),
            torch.randn(size, size, device='cuda', generator=gen))
PY
$KF import gpumode $R/n_notask --out $R/n_notask_out --case '{"size": 64, "seed": 3}' 2>&1 | grep -v '^next:'
$H eval-files --spec $R/n_notask_out --source $R/sub.py --stop-after verify 2>/dev/null |
  /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print("eval:", r["outcome"], "|", r.get("reason","")[:300])'
