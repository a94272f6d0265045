#!/bin/bash
# Device calls of 2026-11-30, second session (H200), from the repository
# root on the GPU machine with bundle/ carried:
#   bash docs/gpu-runs/2026-11-30-h200-s2/run.sh sweep P...
#       scripts/gpu-sweep-remote h200 - state.tar.xz P... (1 minute per
#       problem; the torch columns by scripts/twin-eval: one timer)
#   bash docs/gpu-runs/2026-11-30-h200-s2/run.sh twins
#       the torch-cuda exploits through scripts/run-exploits, then
#       rmsnorm's block_regs at two knob settings through scripts/twin-eval
#       (each twice): the CUDA harness's 1-minute best (THREADS 512, VPT 2)
#       and the lab's best of 2026-11-29 (THREADS 256, VPT 4)
#   bash docs/gpu-runs/2026-11-30-h200-s2/run.sh lab
#       causal_softmax block_regs with the lab knobs ZFIRST and MIX,
#       scripts/cuda_problem_gpucheck.py (checked, one loop), twice
#   bash docs/gpu-runs/2026-11-30-h200-s2/run.sh check
#       the adopted block_regs (zeros first), its whole space, twice
# Everything comes back in $OUT/all.tar.gz (the device tool returns a few
# files only).
set -u
R=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/w; rm -rf "$W"; mkdir -p "$W"
mode=${1:-}; shift
export KF_PYTHON=$(command -v python3)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/gpu.txt" 2>&1
case $mode in
sweep)
  OUT=$W KF_BENCH_MINUTES=${KF_BENCH_MINUTES:-1} KF_SWEEP_CLASSES=h100,h200 \
    KF_BENCH_DEADLINE_S=${KF_BENCH_DEADLINE_S:-560} \
    scripts/gpu-sweep-remote h200 - state.tar.xz "$@"
  echo "gpu-sweep-remote: exit $?"
  cat "$W"/twins-*.jsonl 2>/dev/null
  ;;
twins)
  source scripts/gpu-env
  kf_gpu_env "$R" || exit 1
  export TORCH_EXTENSIONS_DIR=/tmp/te
  echo "== exploits $(date -u +%T)"
  timeout 260 scripts/run-exploits --bin "$(dirname "$(command -v kf-harness)")" --backend torch-cuda > "$W/exploits.txt" 2>&1
  echo "run-exploits: exit $?"; tail -n 15 "$W/exploits.txt"
  sed -e 's/^#define VPT 2$/#define VPT 4/' -e 's/^#define THREADS 512$/#define THREADS 256/' \
    bundle/bests/best-rmsnorm.cu > "$W/rmsnorm-256x4.cu"
  cp bundle/bests/best-rmsnorm.cu "$W/rmsnorm-512x2.cu"
  grep -n "^#define" "$W"/rmsnorm-*.cu
  for k in 1 2; do
    for f in rmsnorm-512x2 rmsnorm-256x4; do
      echo "== $f run $k $(date -u +%T)"
      scripts/twin-eval problems/cuda/rmsnorm "$W/$f.cu" --isa sm_90a --work "$W/t-$f" \
        --timeout 200 | tee -a "$W/twins.jsonl"
    done
  done
  ;;
lab)
  # causal_softmax block_regs with its lab knobs ZFIRST and MIX (not in
  # spec.json's space): this copy's spec gets them, and THREADS 128/256 x
  # VPT 1/2/4; scripts/cuda_problem_gpucheck.py checks every build on every
  # check size and times it (one loop, 30 reps), twice over.
  export PATH=/usr/local/cuda/bin:$PATH
  PY=/opt/torch/.venv/bin/python3
  $PY - <<'PYEOF'
import json
p = "problems/cuda/causal_softmax/spec.json"
s = json.load(open(p))
for t in s["templates"]:
    if t["name"] == "block_regs":
        t["knobs"] = [{"name": "THREADS", "values": [128, 256]},
                      {"name": "VPT", "values": [1, 2, 4]},
                      {"name": "ZFIRST", "values": [0, 1]},
                      {"name": "MIX", "values": [0, 1]}]
json.dump(s, open(p, "w"), indent=1)
PYEOF
  for k in 1 2; do
    echo "== gpucheck $k $(date -u +%T)"
    $PY scripts/cuda_problem_gpucheck.py --problems causal_softmax --grid block_regs \
      --reps 30 --json "$W/check-$k.json" > "$W/check-$k.txt" 2> "$W/check-$k.err"
    echo "gpucheck rc $?"
  done
  $PY - "$W" <<'PYEOF'
import json, sys, collections
w = sys.argv[1]
t = collections.defaultdict(list)
for k in (1, 2):
    try:
        rows = json.load(open("%s/check-%d.json" % (w, k)))
    except Exception as e:
        print("check-%d.json: %s" % (k, e)); continue
    for r in rows:
        if r["template"] != "block_regs": continue
        kn = r["knobs"]
        key = (kn.get("THREADS"), kn.get("VPT"), kn.get("ZFIRST", 0), kn.get("MIX", 0))
        t[key].append((r["ok"], r["ms"]))
print("THREADS VPT ZFIRST MIX  ok  ms(run1, run2)")
for key in sorted(t, key=lambda k: tuple(int(x) for x in k)):
    print("%4s %4s %4s %4s  %s  %s" % (key + (all(o for o, _ in t[key]),
          ", ".join("%.4f" % m if m else "-" for _, m in t[key]))))
PYEOF
  ;;
check)
  # the adopted block_regs (zeros first, always) over spec.json's whole
  # block_regs space, checked and timed (one loop, 30 reps), twice over
  export PATH=/usr/local/cuda/bin:$PATH
  PY=/opt/torch/.venv/bin/python3
  for k in 1 2; do
    echo "== gpucheck $k $(date -u +%T)"
    $PY scripts/cuda_problem_gpucheck.py --problems causal_softmax --grid block_regs \
      --reps 30 --json "$W/check-$k.json" > "$W/check-$k.txt" 2> "$W/check-$k.err"
    echo "gpucheck rc $?"; grep -c "^ok" "$W/check-$k.txt"; grep -v "^ok" "$W/check-$k.txt" | head -5
  done
  grep "block_regs" "$W/check-1.txt" "$W/check-2.txt" | sort -t= -k3 | head -40
  ;;
*) echo "run.sh sweep P... | twins | lab | check"; exit 2 ;;
esac
echo "== end $(date -u +%T)"
(cd "$W" && tar czf "$OUT/all.tar.gz" --exclude=pg .)
