#!/bin/bash
# Device calls of 2026-11-30, seventh session (H200), from the repository
# root on the GPU machine with bundle/ carried:
#   bash docs/gpu-runs/2026-11-30-h200-s7/run.sh exploits
#       scripts/run-exploits --backend all --templates (as in the fifth
#       session's run.sh): the whole corpus, cpu, cuda and torch-cuda
#   bash docs/gpu-runs/2026-11-30-h200-s7/run.sh redteam
#       the CUDA red team's candidates (bundle/rt_cuda: written outside
#       the tree this session; run.sh and manifest.json there) through the
#       bundled kf-harness, each beside an honest control
#   bash docs/gpu-runs/2026-11-30-h200-s7/run.sh both
# Everything comes back in $OUT/all.tar.gz.
set -u
R=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/w; rm -rf "$W"; mkdir -p "$W"
mode=${1:-}; shift
export KF_PYTHON=$(command -v python3)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/gpu.txt" 2>&1
source scripts/gpu-env
kf_gpu_env "$R" keep || exit 1
export TORCH_EXTENSIONS_DIR=/tmp/te
BIN=$(dirname "$(command -v kf-harness)")

exploits() {
  echo "== exploits $(date -u +%T)"
  timeout "${KF_EXPLOITS_S:-300}" scripts/run-exploits --bin "$BIN" \
    --backend all --templates > "$W/exploits.txt" 2>&1
  echo "run-exploits: exit $?"; tail -n 25 "$W/exploits.txt"
}

redteam() {
  echo "== redteam $(date -u +%T)"
  RT_OUT=$W/redteam RT_TIMEOUT=${RT_TIMEOUT:-120} \
    timeout "${KF_REDTEAM_S:-240}" bash bundle/rt_cuda/run.sh "$BIN" \
    > "$W/redteam.txt" 2>&1
  echo "redteam: exit $?"; cat "$W/redteam.txt" | tail -n 60
}

case $mode in
exploits) exploits ;;
redteam) redteam ;;
both) redteam; exploits ;;
*) echo "usage: run.sh exploits|redteam|both" >&2; exit 2 ;;
esac
tar -czf "$OUT/all.tar.gz" -C "$W" .
