#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/gpu-runs/2026-11-29-h200-kernels/run.sh OUTDIR [PROBLEM:GRID...]
# -- one device call (repository root on the GPU machine, no bundle): for
# each PROBLEM, scripts/cuda_problem_gpucheck.py with every knob
# combination of the GRID templates (the others one knob at a time): each
# build checked on every check size and timed at the bench size; then the
# fastest passing build of each template re-timed by torch_baselines.py's
# loop beside torch eager and torch.compile (the same timer), and a copy.
set -uo pipefail
out=${1:?usage: run.sh OUTDIR [PROBLEM:GRID...]}; shift
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
PY=${PY:-/opt/torch/.venv/bin/python3}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv > "$out/gpu.txt" 2>&1
$PY scripts/torch_baselines.py --copy > "$out/copy.jsonl" 2>> "$out/stderr.txt"
for pg in "$@"; do
  p=${pg%%:*}; g=${pg#*:}
  $PY scripts/cuda_problem_gpucheck.py --problems "$p" --grid "$g" --reps 30 \
     --json "$out/check-$p.json" > "$out/check-$p.txt" 2>> "$out/stderr.txt"
  echo "$p gpucheck rc $?" >> "$out/status.txt"
  # the fastest passing build of each template, as a file with its knobs
  $PY - "$out/check-$p.json" "$p" "$out" <<'PYEOF' >> "$out/picked.txt"
import json, sys, os
rows, p, out = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
spec = json.load(open("problems/cuda/%s/spec.json" % p))
files = {t["name"]: t["file"] for t in spec["templates"]}
best = {}
for r in rows:
    if r["ok"] and r["ms"] and r["template"] in files:
        if r["template"] not in best or r["ms"] < best[r["template"]]["ms"]:
            best[r["template"]] = r
for tn, r in sorted(best.items()):
    src = open("problems/cuda/%s/%s" % (p, files[tn])).read()
    defs = "".join("#define %s %s\n" % kv for kv in r["knobs"].items())
    f = os.path.join(out, "best-%s-%s.cu" % (p, tn))
    open(f, "w").write("/* %s %s, %.4f ms in gpucheck */\n%s%s" % (p, tn, r["ms"], defs, src))
    print(p, tn, r["knobs"], r["ms"], f)
PYEOF
done
args=()
for f in "$out"/best-*.cu; do
  [ -e "$f" ] || continue
  b=$(basename "$f" .cu); b=${b#best-}
  for pg in "$@"; do p=${pg%%:*}; case $b in "$p"-*) args+=(--kernel "$p=$f");; esac; done
done
probs=$(for pg in "$@"; do echo -n "${pg%%:*},"; done)
# one line per --kernel: torch_baselines times eager and compile once per
# problem and each kernel beside them
$PY scripts/torch_baselines.py --problems "${probs%,}" --reps 50 "${args[@]}" \
   > "$out/sametimer.jsonl" 2>> "$out/stderr.txt"
echo "sametimer rc $?" >> "$out/status.txt"
# the device tool returns a handful of files: the whole folder as one too
tar -C "$out" -czf "$out/all.tgz" --exclude all.tgz .
