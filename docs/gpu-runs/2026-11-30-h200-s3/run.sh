#!/bin/bash
# Device calls of 2026-11-30, third session (H200), from the repository
# root on the GPU machine with bundle/ (and a state file) carried:
#   bash docs/gpu-runs/2026-11-30-h200-s3/run.sh tsweep STATE_IN P...
#       scripts/gpu-torch-sweep-remote h200 STATE_IN state.tar.xz P...:
#       PyTorch problems (GPU copies) through kf sweep, the torch columns
#       from each best's own evaluation, each best exported as a GPU MODE
#       submission and run against the reference
#   bash docs/gpu-runs/2026-11-30-h200-s3/run.sh warmab P...
#       the reference as its own candidate, this tree's kf-harness against
#       fe4c760's (bundle/kf-harness-fe4c760), alternated, twice
#   bash docs/gpu-runs/2026-11-30-h200-s3/run.sh twinab
#       softmax's CUDA best of the second session on its torch twin
#       (scripts/twin-eval), fe4c760's kf-harness then this tree's
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
warmab)
  # the reference as its own candidate (ModelNew = Model) on GPU copies of
  # P..., evaluated by kf-harness eval-files with this tree's kf-harness
  # (new: each side warmed by its own function, one charging rule) and
  # fe4c760's (bundle/kf-harness-fe4c760: a candidate warmed by harness
  # ops only, the reference charged its GPU time), alternated, twice
  source scripts/gpu-env
  kf_gpu_env "$R" || exit 1
  new=$(command -v kf-harness); old=$R/bundle/kf-harness-fe4c760
  python3 scripts/torch_gpu_copies.py "$W/p" "$@" || exit 1
  for p in "$@"; do
    { cat "problems/torch/$p/reference.py"; printf '\nModelNew = Model\n'; } > "$W/$p.refcand.py"
  done
  for k in 1 2; do
    for p in "$@"; do
      for h in old new; do
        (( SECONDS > ${KF_AB_DEADLINE_S:-520} )) && { echo "skipped $h $p $k: deadline"; continue; }
        bin=$old; [ $h = new ] && bin=$new
        echo "== $h $p run $k $(date -u +%T)"
        timeout 200 "$bin" eval-files --spec "$W/p/$p" --source "$W/$p.refcand.py" \
          > "$W/ab-$h-$p-$k.json" 2> "$W/ab-$h-$p-$k.err"
        echo "rc $?"
        python3 - "$W/ab-$h-$p-$k.json" <<'PYEOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("no result:", e); sys.exit(0)
print("%s cand %.2f us ref %.2f us vs eager %.3fx compile %s max-at %s" % (
    r.get("outcome"), (r.get("time_ns_median") or 0) / 1e3,
    (r.get("ref_time_ns_median") or 0) / 1e3, r.get("speedup_eager") or 0,
    r.get("speedup_compile"), r.get("speedup_max_autotune")))
print("  reason:", (r.get("reason") or "")[:200])
for st in r.get("stages") or []:
    if st.get("stage") == "time":
        print("  time:", st.get("reason", "")[:900])
PYEOF
      done
    done
  done
  ;;
twinab)
  # softmax's best of 2026-11-30-h200-s2 call 7 (bundle/softmax.best.cu,
  # pipe_rows 256 x VPT 8 x BPS 2) through scripts/twin-eval on its torch
  # twin, with fe4c760's kf-harness (old), then this tree's (new)
  source scripts/gpu-env
  kf_gpu_env "$R" || exit 1
  mkdir -p "$W/oldbin"
  ln -s "$R/bundle/kf-harness-fe4c760" "$W/oldbin/kf-harness"
  export TORCH_EXTENSIONS_DIR=$W/te
  for h in old new; do
    (( SECONDS > ${KF_AB_DEADLINE_S:-230} )) && { echo "skipped $h: deadline"; continue; }
    echo "== $h $(date -u +%T)"
    p=$PATH; [ $h = old ] && p=$W/oldbin:$PATH
    PATH=$p scripts/twin-eval problems/cuda/softmax bundle/softmax.best.cu \
      --best-json bundle/softmax.best.json --isa sm_90a --work "$W/tw" \
      --timeout 200 | tee -a "$W/twins-$h.jsonl"
  done
  ;;
*) echo "usage: run.sh tsweep STATE_IN P... | warmab P... | twinab" >&2; exit 2 ;;
esac
(cd "$W" && tar czf "$OUT/all.tar.gz" --exclude=pg .)
