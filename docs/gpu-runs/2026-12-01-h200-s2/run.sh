#!/bin/bash
# Device calls of 2026-12-01, second session (H200), from the repository
# root on the GPU machine with bundle/ carried (bundle/kernelfleet.tar.xz
# of this tree):
#   run.sh cexploits  scripts/run-exploits --backend cuda --templates: the
#                     CUDA backend of this tree (honest templates ok, the
#                     corpus's attacks refused)
#   run.sh chonest    every CUDA template and reference of five problems,
#                     with the eval's clock figures (none may be charged)
#   run.sh tclock     the torch clock traced (KF_TORCH_TRACE_CLOCK): the
#                     reference beside forge_charge_twin.py, forge_charge.py
#                     and forge_lean.py on sinsum_torch_cuda, and the
#                     reference as its own candidate on kb1_relu; the
#                     median of each phase per side
#   run.sh tsample    the import red team's ten references imported with
#                     --device cuda (distribution `sample`), each with its
#                     candidate (docs/redteam/2026-12-01/import)
#   run.sh sopens     what the sampler's draw path imports or opens after
#                     the runner's pre-lockdown steps, with this machine's
#                     torch (sample_opens.py)
#   run.sh check      the final tree, briefly: the corpus's leftover-work
#                     and forged-time entries (CUDA and torch), two
#                     `sample` imports with a wrong and an honest
#                     candidate, and the forge's twin traced
#   run.sh MODE...    several, in order
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

one() { # one evaluation: label spec source [harness options...]
  local label=$1 spec=$2 src=$3; shift 3
  local tag; tag=$(printf '%s' "$label" | tr '/ =' '___')
  timeout 300 "$BIN/kf-harness" eval-files --spec "$spec" --source "$src" \
    "$@" > "$W/ab/$tag.json" 2> "$W/ab/$tag.err" < /dev/null
  python3 - "$W/ab/$tag.json" "$label" "$W/ab/$tag.err" <<'PY'
import json, re, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as ex:
    print("%-44s (no result: %s)" % (sys.argv[2], ex)); sys.exit()
t, ref = r.get("time_ns_median") or 0, r.get("ref_time_ns_median") or 0
why = (r.get("reason") or "")
mark = " CHARGED-BY-CLOCK" if "charged by that clock" in why else ""
clock = ""
for line in open(sys.argv[3], errors="replace"):
    m = re.search(r"less its claim is ([\d.]+) us a repetition, the "
                  r"reference's ([\d.]+) us \(the repetitions' differences "
                  r"deviate by ([\d.]+) us\); allowed ([\d.]+)", line)
    if m:
        clock = "  part %s ref %s mad %s slack %s" % m.groups()
print("%-44s %-14s cand %9.1f us  ref %9.1f us  %6.3fx  reps %s%s%s" % (
    sys.argv[2], r.get("outcome"), t / 1e3, ref / 1e3,
    ref / t if t else 0, r.get("repetitions"), mark, clock))
if r.get("outcome") != "ok":
    print("    reason:", why[:240])
PY
}

phases() { # the median of each traced phase, per side, of one .err
  python3 - "$@" <<'PY'
import re, statistics, sys
for f in sys.argv[1:]:
    rows = {}
    for line in open(f, errors="replace"):
        m = re.search(r"clock of (.+?) call \d+: draw (\d+) us, send to reply "
                      r"(\d+) us \(runner: args (\d+), timed call (\d+) of "
                      r"which events (\d+), outputs put (\d+); sleep (\d+) "
                      r"cycles\), reply to "
                      r"outputs fixed (\d+) us", line)
        if m:
            rows.setdefault(m.group(1), []).append([int(x) for x in m.groups()[1:]])
    for who, r in rows.items():
        med = [statistics.median(c) for c in zip(*r)]
        print("  %-40s n=%3d draw %6.0f send-reply %6.0f (args %5.0f timed "
              "%6.0f events %6.0f put %5.0f sleep %8.0f) reply-fixed %5.0f" % (
                  (f.split("/")[-1][:-4] + ":" + who)[-40:], len(r), *med))
PY
}

cexploits() {
  echo "== cexploits $(date -u +%T)"
  timeout "${KF_EXPLOITS_S:-300}" scripts/run-exploits --bin "$BIN" \
    --backend cuda --templates > "$W/cexploits.txt" 2>&1
  echo "run-exploits: exit $?"; tail -n 30 "$W/cexploits.txt"
}

chonest() {
  echo "== chonest $(date -u +%T)"
  for p in gelu_tanh rmsnorm softmax causal_softmax residual_rmsnorm; do
    spec=problems/cuda/$p
    for t in $(python3 -c "import json;print(' '.join(t['file'] for t in json.load(open('$spec/spec.json'))['templates']))") reference.cu; do
      (( SECONDS > ${KF_HONEST_DEADLINE_S:-900} )) && { echo "skipped $p/$t: deadline"; continue; }
      one "chonest/$p/$t" "$spec" "$spec/$t"
    done
  done 2>&1 | tee -a "$W/chonest.txt"
}

tclock() {
  echo "== tclock $(date -u +%T)"
  export KF_TORCH_TRACE_CLOCK=1
  local p=tests/exploits/problems/sinsum_torch_cuda
  for round in 1 2; do
    for f in tests/exploits/torch/forge_charge_twin.py \
             tests/exploits/torch/forge_charge.py \
             docs/redteam/2026-12-01/torch/forge_lean.py; do
      one "tclock/$(basename "$f" .py) $round" $p "$f"
      phases "$W/ab/tclock_$(basename "$f" .py)_$round.err"
    done
  done 2>&1 | tee -a "$W/tclock.txt"
  python3 scripts/torch_gpu_copies.py "$W/p" kb1_relu kb1_softmax > /dev/null || return
  for q in kb1_relu kb1_softmax; do
    { cat "$W/p/$q/reference.py"; printf '\nModelNew = Model\n'; } > "$W/$q.refcand.py"
    one "tclock/$q/reference" "$W/p/$q" "$W/$q.refcand.py"
    phases "$W/ab/tclock_${q}_reference.err"
  done 2>&1 | tee -a "$W/tclock.txt"
  unset KF_TORCH_TRACE_CLOCK
}

tsample() {
  echo "== tsample $(date -u +%T)"
  local D=docs/redteam/2026-12-01/import P=$W/imp
  mkdir -p "$P"
  for r in relu6_pos smoothl1_pos masked_attn lenpool var_offset softplus_naive hardtanh55_145 unpermute nll_floatlabels addmask; do
    "$BIN/kf" import kernelbench "$D/ref_$r.py" --device cuda --out "$P/p_$r" \
      > "$W/imp_$r.txt" 2>&1 || { echo "import $r failed:"; tail -3 "$W/imp_$r.txt"; }
  done
  {
  one "tsample/relu6_identity" "$P/p_relu6_pos" "$D/cand_relu6_identity.py" --stop-after verify
  one "tsample/smoothl1_mse" "$P/p_smoothl1_pos" "$D/cand_smoothl1_mse.py" --stop-after verify
  one "tsample/attn_nomask" "$P/p_masked_attn" "$D/cand_attn_nomask.py" --stop-after verify
  one "tsample/nll_class0" "$P/p_nll_floatlabels" "$D/cand_nll_class0.py" --stop-after verify
  one "tsample/var_naive" "$P/p_var_offset" "$D/cand_var_naive.py" --stop-after verify
  one "tsample/softplus_clamp8" "$P/p_softplus_naive" "$D/cand_softplus_clamp8.py" --stop-after verify
  one "tsample/ht55_identity" "$P/p_hardtanh55_145" "$D/cand_identity.py" --stop-after verify
  one "tsample/lenpool_honest" "$P/p_lenpool" "$D/cand_lenpool_honest.py" --stop-after verify
  one "tsample/unpermute_gather" "$P/p_unpermute" "$D/cand_unpermute_gather.py" --stop-after verify
  one "tsample/addmask_causal" "$P/p_addmask" "$D/cand_addmask_causal.py" --stop-after verify
  one "tsample/smoothl1_sub4_full" "$P/p_smoothl1_pos" "$D/cand_smoothl1_sub4.py"
  one "tsample/smoothl1_honest_full" "$P/p_smoothl1_pos" "$D/cand_smoothl1_honest.py"
  } 2>&1 | tee -a "$W/tsample.txt"
  cp -r "$P" "$W/imported"
}

sopens() {
  echo "== sopens $(date -u +%T)"
  local D=docs/redteam/2026-12-01/import
  python3 docs/gpu-runs/2026-12-01-h200-s2/sample_opens.py \
    harness/torch/runner.py "$D"/ref_*.py 2>&1 | tee "$W/sopens.txt" | tail -40
}

check() {
  echo "== check $(date -u +%T)"
  timeout 240 scripts/run-exploits --bin "$BIN" --backend all --no-templates \
    rival_hog forge_reply leftover_work leftover_short forge_charge \
    > "$W/check-exploits.txt" 2>&1
  echo "run-exploits: exit $?"; grep -E "^(cuda|torch)/|FAIL" "$W/check-exploits.txt"
  local D=docs/redteam/2026-12-01/import P=$W/imp
  mkdir -p "$P"
  for r in relu6_pos smoothl1_pos; do
    "$BIN/kf" import kernelbench "$D/ref_$r.py" --device cuda --out "$P/p_$r" \
      > "$W/imp_$r.txt" 2>&1 || { echo "import $r failed:"; tail -3 "$W/imp_$r.txt"; }
  done
  # a get_inputs() with a generator of its own: inferred, with a warning
  printf '%s\n' 'import torch' 'import torch.nn as nn' 'G = torch.Generator()' \
    'G.manual_seed(5)' 'class Model(nn.Module):' '    def forward(self, x):' \
    '        return x * 2' 'def get_inputs():' \
    '    return [torch.randn(64, generator=G)]' 'def get_init_inputs():' \
    '    return []' > "$W/unseeded.py"
  "$BIN/kf" import kernelbench "$W/unseeded.py" --device cuda --out "$P/p_unseeded" \
    > "$W/imp_unseeded.txt" 2>&1; echo "import unseeded: exit $?"
  grep -h "warning\|dists" "$W/imp_unseeded.txt" "$P/p_unseeded/spec.json" | cut -c1-200
  {
  one "check/relu6_identity" "$P/p_relu6_pos" "$D/cand_relu6_identity.py" --stop-after verify
  one "check/smoothl1_honest_full" "$P/p_smoothl1_pos" "$D/cand_smoothl1_honest.py"
  KF_TORCH_TRACE_CLOCK=1 one "check/forge_charge_twin" \
    tests/exploits/problems/sinsum_torch_cuda tests/exploits/torch/forge_charge_twin.py
  phases "$W/ab/check_forge_charge_twin.err"
  } 2>&1 | tee -a "$W/check.txt"
}

[ $# -gt 0 ] || { echo "usage: run.sh cexploits|chonest|tclock|tsample|sopens..." >&2; exit 2; }
for mode in "$@"; do
  case $mode in
  cexploits) cexploits ;; chonest) chonest ;; tclock) tclock ;;
  tsample) tsample ;; sopens) sopens ;; check) check ;;
  *) echo "unknown mode $mode" >&2 ;;
  esac
done
tar -czf "$OUT/all.tar.gz" -C "$W" .
