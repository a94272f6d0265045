#!/bin/bash
# Device calls of 2026-11-30, fifth session (H200), from the repository
# root on the GPU machine with bundle/ (and a state file) carried:
#   bash docs/gpu-runs/2026-11-30-h200-s5/run.sh check P... [-- sweep...]
#       scripts/torch_problem_gpucheck.py P...: every template a GPU copy
#       of P offers (the new Triton ones), each knob value once, checked
#       against the reference and timed beside it (CUDA events)
#   bash docs/gpu-runs/2026-11-30-h200-s5/run.sh tsweep STATE_IN P...
#       scripts/gpu-torch-sweep-remote h200 STATE_IN state.tar.xz P...:
#       the problems' GPU copies through kf sweep (their Triton templates
#       now among the search's), the torch columns from each best's own
#       evaluation, each best exported as a GPU MODE submission and run
#       against the reference
#   bash docs/gpu-runs/2026-11-30-h200-s5/run.sh both STATE_IN CHECK_P -- SWEEP_P...
#       check, then tsweep, in one call
#   bash docs/gpu-runs/2026-11-30-h200-s5/run.sh exploits [CHECK_P...]
#       scripts/run-exploits --backend all --templates: the whole exploit
#       corpus (cpu, cuda, torch-cuda) and the shipped templates through
#       the bundled kf-harness on the GPU; then check CHECK_P when given
# Everything but the state comes back in $OUT/all.tar.gz (the device tool
# returns a few files only); the state as $OUT/state.tar.xz.
set -u
R=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/w; rm -rf "$W"; mkdir -p "$W"
mode=${1:-}; shift
export KF_PYTHON=$(command -v python3)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/gpu.txt" 2>&1

check() {
  echo "== check $* $(date -u +%T)"
  timeout "${KF_CHECK_S:-240}" python3 scripts/torch_problem_gpucheck.py \
    --reps 15 "$@" 2>&1 | tee "$W/check.txt"
  echo "check: exit ${PIPESTATUS[0]}"
}

tsweep() {
  local state_in=$1; shift
  echo "== tsweep $* $(date -u +%T)"
  OUT=$W KF_BENCH_MINUTES=${KF_BENCH_MINUTES:-4} KF_SWEEP_EVALS=${KF_SWEEP_EVALS:-6} \
    KF_SWEEP_NAME=torch KF_BENCH_DEADLINE_S=${KF_BENCH_DEADLINE_S:-480} \
    scripts/gpu-torch-sweep-remote h200 "$state_in" state.tar.xz "$@"
  echo "gpu-torch-sweep-remote: exit $?"
  cat "$W"/exports/check.txt 2>/dev/null
  mv "$W/state.tar.xz" "$OUT/" 2>/dev/null
}

exploits() {
  source scripts/gpu-env
  kf_gpu_env "$R" keep || return 1
  export TORCH_EXTENSIONS_DIR=/tmp/te
  echo "== exploits $(date -u +%T)"
  timeout "${KF_EXPLOITS_S:-300}" scripts/run-exploits \
    --bin "$(dirname "$(command -v kf-harness)")" --backend all --templates \
    > "$W/exploits.txt" 2>&1
  echo "run-exploits: exit $?"; tail -n 25 "$W/exploits.txt"
}

case $mode in
check) check "$@" ;;
exploits) exploits; [ $# -gt 0 ] && check "$@" ;;
tsweep) tsweep "$@" ;;
both)
  state_in=$1; shift
  cp=(); while [ $# -gt 0 ] && [ "$1" != -- ]; do cp+=("$1"); shift; done
  shift
  check "${cp[@]}"
  tsweep "$state_in" "$@"
  ;;
*) echo "usage: run.sh check P... | exploits [P...] | tsweep STATE_IN P... | both STATE_IN P... -- P..." >&2; exit 2 ;;
esac
(cd "$W" && tar czf "$OUT/all.tar.gz" --exclude=pg .)
