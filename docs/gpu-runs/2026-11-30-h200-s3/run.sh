#!/bin/bash
# Device calls of 2026-11-30, third session (H200), from the repository
# root on the GPU machine with bundle/ (and a state file) carried:
#   bash docs/gpu-runs/2026-11-30-h200-s3/run.sh tsweep STATE_IN P...
#       scripts/gpu-torch-sweep-remote h200 STATE_IN state.tar.xz P...:
#       PyTorch problems (GPU copies) through kf sweep, the torch columns
#       from each best's own evaluation, each best exported as a GPU MODE
#       submission and run against the reference
# Everything but the state comes back in $OUT/all.tar.gz (the device tool
# returns a few files only); the state as $OUT/state.tar.xz.
set -u
R=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/w; rm -rf "$W"; mkdir -p "$W"
mode=${1:-}; shift
export KF_PYTHON=$(command -v python3)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/gpu.txt" 2>&1
case $mode in
tsweep)
  state_in=$1; shift
  OUT=$W KF_BENCH_MINUTES=${KF_BENCH_MINUTES:-3} KF_SWEEP_EVALS=${KF_SWEEP_EVALS:-3} \
    KF_SWEEP_NAME=torch KF_BENCH_DEADLINE_S=${KF_BENCH_DEADLINE_S:-480} \
    scripts/gpu-torch-sweep-remote h200 "$state_in" state.tar.xz "$@"
  echo "gpu-torch-sweep-remote: exit $?"
  cat "$W"/exports/check.txt 2>/dev/null
  mv "$W/state.tar.xz" "$OUT/" 2>/dev/null
  ;;
*) echo "usage: run.sh tsweep STATE_IN P..." >&2; exit 2 ;;
esac
(cd "$W" && tar czf "$OUT/all.tar.gz" --exclude=pg .)
