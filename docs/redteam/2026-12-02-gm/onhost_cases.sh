#!/bin/bash
# _OnHost (runner.py:2373): variants of GPU MODE's generate_input, each
# imported and evaluated with the honest submission (a*SCALE+b; task.SCALE=3)
export KF_PYTHON=/usr/bin/python3
KF=/work/main/build/kf; H=/work/main/build/kf-harness
R=/tmp/rt-gm; T=$R/GM_TASK.txt; U=$R/GM_UTILS.txt
run() { # name  generate_input-body-file
  rm -rf $R/o_$1 $R/o_$1_out; mkdir -p $R/o_$1; cp $T $R/o_$1/task.py; cp $U $R/o_$1/utils.py
  { printf 'from utils import make_match_reference\nimport torch\nfrom task import input_t, output_t, SCALE\n\n\ndef ref_kernel(data):\n    a, b = data\n    return a * SCALE + b\n\n\n'; cat; } > $R/o_$1/reference.py
  echo "=== $1"; $KF import gpumode $R/o_$1 --out $R/o_$1_out --case '{"size": 64, "seed": 3}' 2>&1 | grep -v '^next:' | tail -2
  [ -d $R/o_$1_out ] && for m in "--stop-after verify" "--torch-persistent"; do
    $H eval-files --spec $R/o_$1_out --source $R/sub.py $m 2>/dev/null |
      /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print("   ", sys.argv[1], r["outcome"], "|", r.get("reason","")[:250])' "$m"; done
}
# 1 isinstance(gen, torch.Generator): torch.Generator is a function in the draw
run isinst <<'PY'
def generate_input(size, seed):
    gen = torch.Generator(device='cuda')
    assert isinstance(gen, torch.Generator)
    gen.manual_seed(seed)
    return (torch.randn(size, size, device='cuda', generator=gen),
            torch.randn(size, size, device='cuda', generator=gen))
PY
# 2 raises for some seeds (an exception inside the mode), later draws
run raises <<'PY'
def generate_input(size, seed):
    gen = torch.Generator(device='cuda')
    gen.manual_seed(seed)
    if seed % 3 == 1:
        raise ValueError("unlucky seed %d" % seed)
    return (torch.randn(size, size, device='cuda', generator=gen),
            torch.randn(size, size, device='cuda', generator=gen))
PY
# 3 a generator built at import time (module level)
run modgen <<'PY'
GEN = torch.Generator(device='cuda')
def generate_input(size, seed):
    GEN.manual_seed(seed)
    return (torch.randn(size, size, device='cuda', generator=GEN),
            torch.randn(size, size, device='cuda', generator=GEN))
PY
# 4 torch.Generator captured before the draw (from torch import Generator)
run fromimp <<'PY'
from torch import Generator
def generate_input(size, seed):
    gen = Generator(device='cuda')
    gen.manual_seed(seed)
    return (torch.randn(size, size, device='cuda', generator=gen),
            torch.randn(size, size, device='cuda', generator=gen))
PY
# 5 positional device / torch.device objects / .to(device=) / type()
run positional <<'PY'
def generate_input(size, seed):
    gen = torch.Generator(torch.device('cuda', 0))
    gen.manual_seed(seed)
    dev = torch.device('cuda:0')
    a = torch.randn(size, size, generator=gen).to(device=dev, dtype=torch.float32)
    b = torch.as_tensor(torch.randn(size, size, generator=gen).numpy(), dtype=torch.float32, device=dev)
    return (a, b)
PY
# 6 torch.cuda.* calls inside the draw
run cudaapi <<'PY'
def generate_input(size, seed):
    torch.cuda.manual_seed(seed)
    gen = torch.Generator(device='cuda')
    gen.manual_seed(seed)
    a = torch.randn(size, size, device='cuda', generator=gen)
    b = torch.randn(size, size, device='cuda', generator=gen)
    torch.cuda.synchronize()
    return (a, b)
PY
# 7 leaves the patched Generator behind (stored in a global)
run keeps <<'PY'
G = None
def generate_input(size, seed):
    global G
    G = torch.Generator
    gen = G(device='cuda')
    gen.manual_seed(seed)
    return (torch.randn(size, size, device='cuda', generator=gen),
            torch.randn(size, size, device='cuda', generator=gen))
PY
