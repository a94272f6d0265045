#!/bin/bash
# Device calls of 2026-11-30, eighth session (H200), from the repository
# root on the GPU machine with bundle/ carried (bundle/kernelfleet.tar.xz
# of this tree; bundle/old/: kf-harness, kf-harness-cuda and
# kf-harness-runner built from the tree before the change under test, and
# bundle/rt_cuda: the CUDA red team's candidates):
#   run.sh ab        honest kernels, each evaluated by the old and the new
#                    harness in turn (old, new, new, old): the time each
#                    charges, side by side, on one machine in one call
#   run.sh forge     bundle/rt_cuda's forge_reply.cu beside its control
#                    gelu_plain.cu, twice, with the eval's clock figures
#   run.sh redteam   the CUDA red team (bundle/rt_cuda/run.sh)
#   run.sh exploits  scripts/run-exploits --backend all --templates
#   run.sh MODE...   several, in order
# Everything comes back in $OUT/all.tar.gz.
set -u
R=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/w; rm -rf "$W"; mkdir -p "$W"
export KF_PYTHON=$(command -v python3)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/gpu.txt" 2>&1
source scripts/gpu-env
kf_gpu_env "$R" keep || exit 1
export TORCH_EXTENSIONS_DIR=/tmp/te
BIN=$(dirname "$(command -v kf-harness)")
OLD=$R/bundle/old

one() { # one evaluation: label bindir spec source [knobs...]
  local label=$1 bin=$2 spec=$3 src=$4; shift 4
  local args=(eval-files --spec "$spec" --source "$src")
  for k in "$@"; do args+=(--knob "$k"); done
  local tag; tag=$(printf '%s' "$label" | tr '/ =' '___')
  timeout 300 "$bin/kf-harness" "${args[@]}" > "$W/ab/$tag.json" \
    2> "$W/ab/$tag.err" < /dev/null
  python3 - "$W/ab/$tag.json" "$label" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as ex:
    print("%-44s (no result: %s)" % (sys.argv[2], ex)); sys.exit()
t, ref = r.get("time_ns_median") or 0, r.get("ref_time_ns_median") or 0
why = (r.get("reason") or "")
mark = " CHARGED-BY-CLOCK" if "charged by that clock" in why else ""
print("%-44s %-10s cand %9.1f us  ref %9.1f us  %6.3fx  reps %s%s" % (
    sys.argv[2], r.get("outcome"), t / 1e3, ref / 1e3,
    ref / t if t else 0, r.get("repetitions"), mark))
PY
}

ab() {
  echo "== ab $(date -u +%T)"
  mkdir -p "$W/ab"
  for p in gelu_tanh rmsnorm softmax vecsum causal_softmax; do
    spec=problems/cuda/$p
    t=$(python3 -c "import json;print(json.load(open('$spec/spec.json'))['templates'][0]['file'])")
    for round in old1 new1 new2 old2; do
      case $round in old*) b=$OLD ;; *) b=$BIN ;; esac
      one "$p/$t $round" "$b" "$spec" "$spec/$t"
    done
    for round in old new; do
      case $round in old) b=$OLD ;; *) b=$BIN ;; esac
      one "$p/reference.cu $round" "$b" "$spec" "$spec/reference.cu"
    done
  done 2>&1 | tee "$W/ab.txt"
  grep -h "runner commands" "$W"/ab/*new*.err | head -5 > "$W/ab-commands.txt"
}

forge() { # the forged reply beside its honest control, the clock's figures
  echo "== forge $(date -u +%T)"
  mkdir -p "$W/ab"
  for p in problems/cuda/gelu_tanh tests/exploits/problems/gelu_big; do
    for f in gelu_plain forge_reply; do
      one "forge/$(basename $p)/$f" "$BIN" $p "bundle/rt_cuda/$f.cu"
    done
  done 2>&1 | tee -a "$W/forge.txt"
  grep -H "eval's clock\|runner's .* timed calls\|short of\|changed after\|runner commands\|on the eval.s clock" \
    "$W"/ab/forge*.err | sed 's/:.*msg="/: /; s/" src=.*//' | tee -a "$W/forge.txt"
}

honest() { # honest templates and references, the clock's figures
  echo "== honest $(date -u +%T)"
  mkdir -p "$W/ab"
  for p in gelu_tanh rmsnorm softmax causal_softmax residual_rmsnorm; do
    spec=problems/cuda/$p
    for t in $(python3 -c "import json;print(' '.join(t['file'] for t in json.load(open('$spec/spec.json'))['templates']))") reference.cu; do
      one "honest/$p/$t" "$BIN" "$spec" "$spec/$t"
    done
  done 2>&1 | tee -a "$W/honest.txt"
  grep -H "eval's clock\|short of" "$W"/ab/honest*.err \
    | sed 's/:.*msg="/: /; s/" src=.*//' | tee -a "$W/honest.txt"
}

redteam() {
  echo "== redteam $(date -u +%T)"
  RT_OUT=$W/redteam RT_TIMEOUT=${RT_TIMEOUT:-120} \
    timeout "${KF_REDTEAM_S:-240}" bash bundle/rt_cuda/run.sh "$BIN" \
    > "$W/redteam.txt" 2>&1
  echo "redteam: exit $?"; tail -n 60 "$W/redteam.txt"
}

exploits() {
  echo "== exploits $(date -u +%T)"
  local sel=(--templates)
  [ "${KF_EXPLOITS_TEMPLATES:-1}" = 0 ] && sel=(--no-templates)
  [ -n "${KF_EXPLOITS_NAMES:-}" ] && sel=(--no-templates $KF_EXPLOITS_NAMES)
  timeout "${KF_EXPLOITS_S:-300}" scripts/run-exploits --bin "$BIN" \
    --backend "${KF_EXPLOITS_BACKEND:-all}" "${sel[@]}" > "$W/exploits.txt" 2>&1
  echo "run-exploits: exit $?"; tail -n 25 "$W/exploits.txt"
}

[ $# -gt 0 ] || { echo "usage: run.sh ab|redteam|exploits..." >&2; exit 2; }
for mode in "$@"; do
  case $mode in
  ab) ab ;; redteam) redteam ;; exploits) exploits ;; forge) forge ;;
  honest) honest ;;
  *) echo "unknown mode $mode" >&2 ;;
  esac
done
tar -czf "$OUT/all.tar.gz" -C "$W" .
