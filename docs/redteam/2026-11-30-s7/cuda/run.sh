#!/bin/bash
# /tmp/rt_cuda/run.sh -- run the red-team CUDA candidates of manifest.json
# (beside this script) through kf-harness eval-files, plus the honest
# baseline of each problem used (the spec's first shipped template, the
# first value of each knob), and print one line per entry:
#   file  outcome  speedup(ref/cand)  expected  reason
#
# usage (from the repository root, /work/main layout):
#   bash /tmp/rt_cuda/run.sh BUILD_DIR [extra eval-files options...]
# e.g. bash /tmp/rt_cuda/run.sh build
#      bash /tmp/rt_cuda/run.sh build --time-budget-ms 3000
# Env: RT_ONLY=substring (run only entries whose file contains it),
#      RT_TIMEOUT=seconds per evaluation (default 1200).
# Raw JSON and stderr of every evaluation go to $RT_OUT (default
# ./rt_cuda_results.<timestamp>).
set -u
BIN=${1:?usage: run.sh DIR_WITH_kf-harness [eval-files options...]}
shift
EXTRA=("$@")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=$(cd "$BIN" && pwd) || { echo "no directory $BIN"; exit 2; }
[ -x "$BIN/kf-harness" ] || { echo "no executable $BIN/kf-harness"; exit 2; }
OUT=${RT_OUT:-$PWD/rt_cuda_results.$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
TMO=${RT_TIMEOUT:-1200}

# the job list: fields separated by \x1f: label problem source knobs(K=V,...) expected
python3 - "$HERE/manifest.json" "${RT_ONLY:-}" > "$OUT/jobs.txt" <<'PY'
import json, os, sys
man = json.load(open(sys.argv[1]))
only = sys.argv[2]
here = os.path.dirname(os.path.abspath(sys.argv[1]))
probs = []
for e in man["entries"]:
    if e["problem"] not in probs:
        probs.append(e["problem"])
def line(label, prob, src, knobs, exp):
    kv = ",".join("%s=%s" % (k, v) for k, v in sorted(knobs.items()))
    print("\x1f".join([label, prob, src, kv, exp.replace("\x1f", " ").replace("\n", " ")]))
for p in probs:
    try:
        spec = json.load(open(os.path.join(p, "spec.json")))
    except Exception as ex:
        print("cannot read %s/spec.json (run from the repository root): %s" % (p, ex), file=sys.stderr)
        continue
    ts = spec.get("templates", [])
    if not ts:
        print("%s has no shipped template: no baseline" % p, file=sys.stderr)
        continue
    t = ts[0]
    knobs = {k["name"]: str(k["values"][0]) for k in t.get("knobs", [])}
    line("BASELINE:" + os.path.basename(p) + "/" + t["file"], p,
         os.path.join(p, t["file"]), knobs, "ok (honest template, default knobs)")
for e in man["entries"]:
    if only and only not in e["file"]:
        continue
    line(e["file"], e["problem"], os.path.join(here, e["file"]),
         e.get("knobs", {}), e["honest_expectation"])
PY

printf '%-34s %-18s %-9s %s\n' FILE OUTCOME SPEEDUP "STAGE: REASON"
i=0
while IFS=$'\x1f' read -r label prob src kv exp; do
  i=$((i + 1))
  args=(eval-files --spec "$prob" --source "$src")
  if [ -n "$kv" ]; then
    IFS=, read -ra kva <<< "$kv"
    for k in "${kva[@]}"; do args+=(--knob "$k"); done
  fi
  tag=$(printf '%02d_%s' "$i" "$(basename "$src" .cu)")
  echo "${BIN}/kf-harness ${args[*]} ${EXTRA[*]:-}" > "$OUT/$tag.cmd"
  timeout "$TMO" "$BIN/kf-harness" "${args[@]}" "${EXTRA[@]}" \
    > "$OUT/$tag.json" 2> "$OUT/$tag.err" < /dev/null
  rc=$?
  python3 - "$OUT/$tag.json" "$OUT/$tag.err" "$label" "$rc" "$exp" <<'PY'
import json, sys
path, errp, label, rc, exp = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
txt = open(path, errors="replace").read()
try:
    r = json.loads(txt) if txt.strip() else None
except ValueError:
    r = None
if not isinstance(r, dict):
    err = open(errp, errors="replace").read().strip().splitlines()
    why = ("timed out (rc 124)" if rc == 124 else
           "no result (rc %d): %s" % (rc, err[-1] if err else "no stderr"))
    print("%-34s %-18s %-9s %s" % (label, "(none)", "-", why[:400]))
else:
    t = r.get("time_ns_median") or 0
    ref = r.get("ref_time_ns_median") or 0
    sp = "%.3fx" % (ref / t) if t and ref else "-"
    reason = (r.get("reason") or "").replace("\n", " ")
    print("%-34s %-18s %-9s %s: %s" % (label, r.get("outcome", "?"), sp,
                                       r.get("stage", ""), reason[:400]))
    if t and ref:
        print("%-34s   cand %.1f us, ref %.1f us, reps %s" % (
            "", t / 1e3, ref / 1e3, r.get("repetitions")))
print("%-34s   expected: %s" % ("", exp[:300]))
PY
done < "$OUT/jobs.txt"
echo "raw results: $OUT"
