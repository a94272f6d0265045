#!/bin/bash
# The device call of 2026-11-30 (H200), from the repository root on the GPU
# machine, with bundle/ carried:  bash docs/gpu-runs/2026-11-30-h200/run.sh
# Writes into $OUT: gatelab.txt (gatelab.py), relu-*.json/.log (the idle
# gate against tests/exploits/torch/leftover_*.py beside the reference as
# a candidate), twin-*.json/.log and times.txt (the CUDA harness's best
# kernels through `kf wrap` and the torch backend: the JIT cache's
# effect, rmsnorm twice; causal_softmax and layernorm with the new
# binding).  KF_TWINS="P ..." picks the twins, KF_NO_RELU=1 skips the relu
# exploits, KF_NO_LAB=1 gatelab.py; everything comes back in $OUT/all.tar.gz.
set -u
R=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export KF_PYTHON=$(command -v python3)
source scripts/gpu-env
kf_gpu_env "$R" || exit 1
export TORCH_EXTENSIONS_DIR=/tmp/te
py() { env -u LD_LIBRARY_PATH "$KF_PYTHON" "$@"; }
summ() { py -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[1].split("/")[-1], r.get("outcome"), "speedup_eager=%s" % r.get("speedup_eager"), "t=%s ref=%s gbps=%s" % (r.get("time_ns_median"), r.get("ref_time_ns_median"), r.get("achieved_gbps")), (r.get("reason") or "")[:400])' "$1" 2>&1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
nvidia-smi -q -d COMPUTE 2>/dev/null | grep -i -A3 "compute mode\|timeslice" >> "$OUT/gpu.txt"

[ -n "${KF_NO_LAB:-}" ] || {
echo "== gatelab $(date -u +%T)"
timeout 150 env -u LD_LIBRARY_PATH "$KF_PYTHON" docs/gpu-runs/2026-11-30-h200/gatelab.py > "$OUT/gatelab.txt" 2>&1
tail -25 "$OUT/gatelab.txt"
}

[ -n "${KF_NO_RELU:-}" ] || {
echo "== relu exploits $(date -u +%T)"
py - <<'PYEOF'
import json, shutil
shutil.rmtree("/tmp/relu", ignore_errors=True)
shutil.copytree("problems/torch/kb1_relu", "/tmp/relu")
s = json.load(open("/tmp/relu/spec.json"))
s["torch"]["device"] = "cuda"
s["sizes"]["bench"] = {"B": 2048, "D": 16384}
json.dump(s, open("/tmp/relu/spec.json", "w"), indent=1)
open("/tmp/relu-reference.py", "w").write(
    open("problems/torch/kb1_relu/reference.py").read() + "\nModelNew = Model\n")
PYEOF
for c in /tmp/relu-reference.py tests/exploits/torch/leftover_work.py tests/exploits/torch/leftover_short.py; do
  n=$(basename "$c" .py)
  s0=$(date +%s)
  timeout 200 kf-harness eval-files --spec /tmp/relu --source "$c" > "$OUT/relu-$n.json" 2> "$OUT/relu-$n.log"
  echo "relu $n rc=$? $(( $(date +%s) - s0 )) s"; summ "$OUT/relu-$n.json"
done

}
echo "== twins $(date -u +%T)"
for P in ${KF_TWINS:-rmsnorm rmsnorm causal_softmax layernorm}; do
  k=1; while [ -e "$OUT/twin-$P-$k.json" ]; do k=$((k+1)); done
  kf wrap --problem problems/cuda/$P --isa sm_90a bundle/bests/best-$P.cu --out /tmp/kb-$P.py > /dev/null 2>> "$OUT/twin-$P-$k.log" || { echo "wrap $P failed"; continue; }
  s0=$(date +%s%N)
  timeout 170 kf-harness eval-files --spec problems/cuda/$P/torch --source /tmp/kb-$P.py > "$OUT/twin-$P-$k.json" 2>> "$OUT/twin-$P-$k.log"
  rc=$?
  echo "twin $P run $k rc=$rc wall_ms=$(( ($(date +%s%N) - s0) / 1000000 ))" | tee -a "$OUT/times.txt"
  summ "$OUT/twin-$P-$k.json"
  py -c 'import json,sys; r=json.load(open(sys.argv[1])); [print("  stage", s.get("stage"), s.get("elapsed_us"), (s.get("reason") or "")[:160]) for s in r.get("stages", [])]; print("  baselines", r.get("baselines","")[:300])' "$OUT/twin-$P-$k.json" 2>&1 | tee -a "$OUT/times.txt"
done
echo "== end $(date -u +%T)"
grep -h "jit cache\|stage determinism\|stage load" "$OUT"/twin-*.log 2>/dev/null | cut -c1-330
# one file back: the device tool returns a few files only
(cd "$OUT" && tar czf all.tar.gz --exclude=all.tar.gz . && find . -type f ! -name all.tar.gz -delete)
