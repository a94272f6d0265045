#!/bin/bash
# Device calls of 2026-12-01 (H200), from the repository root on the GPU
# machine with bundle/ carried (bundle/kernelfleet.tar.xz of this tree;
# bundle/old/kf-harness: built from the tree before the change under test,
# with its runner.py embedded):
#   run.sh tab P...   honest torch sides on GPU copies of problems/torch/P
#                     (scripts/torch_gpu_copies.py): the reference as its
#                     own candidate and the first template's first knobs,
#                     each evaluated by the old and the new kf-harness in
#                     turn (old, new, new, old), with the eval's clock
#                     figures of the new one
#   run.sh tforge     tests/exploits/torch/forge_charge.py beside its twin,
#                     and docs/redteam/2026-12-01/torch/forge_lean.py, on
#                     tests/exploits/problems/sinsum_torch_cuda, new and
#                     old
#   run.sh texploits  scripts/run-exploits --backend torch-cuda
#   run.sh MODE...    several, in order (tab takes the rest of the line)
# Everything comes back in $OUT/all.tar.gz.
set -u
R=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/w; rm -rf "$W"; mkdir -p "$W/ab"
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
  python3 - "$W/ab/$tag.json" "$label" "$W/ab/$tag.err" <<'PY'
import json, re, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as ex:
    print("%-48s (no result: %s)" % (sys.argv[2], ex)); sys.exit()
t, ref = r.get("time_ns_median") or 0, r.get("ref_time_ns_median") or 0
why = (r.get("reason") or "")
mark = " CHARGED-BY-CLOCK" if "charged by that clock" in why else ""
clock = ""
for line in open(sys.argv[3], errors="replace"):
    m = re.search(r"clock of its commands less its claim is ([\d.]+) us a "
                  r"repetition, the reference's ([\d.]+) us \(the "
                  r"repetitions' differences deviate by ([\d.]+) us\); "
                  r"allowed ([\d.]+)", line)
    if m:
        clock = "  part %s ref %s mad %s slack %s" % m.groups()
print("%-48s %-10s cand %9.1f us  ref %9.1f us  %6.3fx  reps %s%s%s" % (
    sys.argv[2], r.get("outcome"), t / 1e3, ref / 1e3,
    ref / t if t else 0, r.get("repetitions"), mark, clock))
if r.get("outcome") != "ok":
    print("    reason:", why[:300])
PY
}

tab() {
  echo "== tab $(date -u +%T) $*"
  python3 scripts/torch_gpu_copies.py "$W/p" "$@" || return
  for p in "$@"; do
    spec=$W/p/$p
    { cat "$spec/reference.py"; printf '\nModelNew = Model\n'; } > "$W/$p.refcand.py"
    read -r t knobs < <(python3 - "$spec/spec.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = (s.get("templates") or [{}])[0]
print(t.get("file", "-"), " ".join("%s=%s" % (k["name"], k["values"][0])
                                   for k in t.get("knobs", [])))
PY
)
    for round in old1 new1 new2 old2; do
      case $round in old*) b=$OLD ;; *) b=$BIN ;; esac
      (( SECONDS > ${KF_TAB_DEADLINE_S:-400} )) && { echo "skipped $p $round: deadline"; continue; }
      one "$p/reference $round" "$b" "$spec" "$W/$p.refcand.py"
      [ "$t" != - ] && one "$p/$t $round" "$b" "$spec" "$spec/$t" $knobs
    done
  done 2>&1 | tee -a "$W/tab.txt"
}

tforge() {
  echo "== tforge $(date -u +%T)"
  local p=tests/exploits/problems/sinsum_torch_cuda
  for round in new old; do
    case $round in old) b=$OLD ;; *) b=$BIN ;; esac
    for f in tests/exploits/torch/forge_charge_twin.py \
             tests/exploits/torch/forge_charge.py \
             docs/redteam/2026-12-01/torch/forge_lean.py; do
      one "tforge/$(basename "$f" .py) $round" "$b" $p "$f"
    done
  done 2>&1 | tee -a "$W/tforge.txt"
}

texploits() {
  echo "== texploits $(date -u +%T)"
  timeout "${KF_EXPLOITS_S:-300}" scripts/run-exploits --bin "$BIN" \
    --backend torch-cuda --templates > "$W/texploits.txt" 2>&1
  echo "run-exploits: exit $?"; tail -n 25 "$W/texploits.txt"
}

[ $# -gt 0 ] || { echo "usage: run.sh tab P...|tforge|texploits..." >&2; exit 2; }
while [ $# -gt 0 ]; do
  mode=$1; shift
  case $mode in
  tab) tab "$@"; set -- ;;
  tforge) tforge ;; texploits) texploits ;;
  *) echo "unknown mode $mode" >&2 ;;
  esac
done
grep -h "not page-locked" "$W"/ab/*.err | sort | uniq -c | head -5
tar -czf "$OUT/all.tar.gz" -C "$W" .
