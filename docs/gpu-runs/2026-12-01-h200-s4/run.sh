#!/bin/bash
# Device calls of 2026-12-01, fourth session (H200), from the repository
# root on the GPU machine with bundle/ carried (bundle/kernelfleet.tar.xz
# of this tree; helpers in scripts/gpu-run-lib):
#   run.sh s3c        the s3c red team's problems (docs/redteam/2026-12-01-s3c)
#                     imported with --device cuda: weights from numpy,
#                     random and set order (eager.py must be ok), a pinned
#                     get_inputs() (warned, described; the precomputed
#                     answer must not be ok; a forced `sample` spec_error),
#                     integers beyond 2^53 and a 0-d input (eager ok)
#   run.sh gcheck     the gated torch clock, briefly (as in -s3): the
#                     runners now start `python3 -s -B` with PYTHONHASHSEED
#   run.sh tsample    -s3's `sample` imports and candidates again
#   run.sh texploits  scripts/run-exploits --backend torch-cuda
#   run.sh MODE...    several, in order
# Everything comes back in $OUT/all.tar.gz.
source scripts/gpu-run-lib
H=docs/gpu-runs/2026-12-01-h200-s4
H3=docs/gpu-runs/2026-12-01-h200-s3

s3c() {
  echo "== s3c $(date -u +%T)"
  local D=docs/redteam/2026-12-01-s3c/import P=$W/imp3c
  mkdir -p "$P"
  {
  for r in np_init set_order_init pyrandom_init pinned_seed scalar_in_cat \
           mersenne_init bigint_arg bigint_init; do
    "$BIN/kf" import kernelbench "$D/ref_$r.py" --device cuda --out "$P/$r" \
      > "$W/imp_$r.txt" 2>&1
    echo "import $r: exit $? $(grep -o 'warning: [^:(]*' "$W/imp_$r.txt" | head -1)"
  done
  for r in np_init set_order_init pyrandom_init pinned_seed scalar_in_cat \
           mersenne_init bigint_arg; do
    [ -f "$P/$r/eager.py" ] &&
      one "s3c/$r/eager" "$P/$r" "$P/$r/eager.py" --knob MODE=no_grad --stop-after verify
  done
  one "s3c/pinned_seed/precompute" "$P/pinned_seed" $H/cand_precompute_dev.py
  one "s3c/bigint_init/file_faithful" "$P/bigint_init" "$D/cand_bigint_file.py" --stop-after verify
  cp -r "$P/pinned_seed" "$P/pinned_forced"
  python3 - "$P/pinned_forced/spec.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for i in s["inputs"]:
    i["dists"] = ["sample"]; i.pop("range", None)
json.dump(s, open(sys.argv[1], "w"))
PY
  one "s3c/pinned_forced/precompute" "$P/pinned_forced" $H/cand_precompute_dev.py
  } 2>&1 | tee -a "$W/s3c.txt"
  cp -r "$P" "$W/imported3c"
}

gcheck() {
  echo "== gcheck $(date -u +%T)"
  export KF_TORCH_TRACE_CLOCK=1
  {
  local p=tests/exploits/problems/sinsum_torch_cuda
  for f in tests/exploits/torch/forge_charge_twin.py \
           tests/exploits/torch/forge_charge.py \
           $H3/forge_lean_gate.py $H3/sync_inside.py; do
    one "gcheck/$(basename "$f" .py)" $p "$f"
  done
  python3 scripts/torch_gpu_copies.py "$W/p" kb1_relu kb1_softmax > /dev/null || return
  for q in kb1_relu kb1_softmax; do
    { cat "$W/p/$q/reference.py"; printf '\nModelNew = Model\n'; } > "$W/$q.refcand.py"
    one "gcheck/$q/reference" "$W/p/$q" "$W/$q.refcand.py"
  done
  } 2>&1 | tee -a "$W/gcheck.txt"
  unset KF_TORCH_TRACE_CLOCK
}

tsample() {
  echo "== tsample $(date -u +%T)"
  local D=docs/redteam/2026-12-01/import P=$W/imp
  mkdir -p "$P"
  for r in relu6_pos smoothl1_pos; do
    "$BIN/kf" import kernelbench "$D/ref_$r.py" --device cuda --out "$P/p_$r" \
      > "$W/imp_$r.txt" 2>&1 || { echo "import $r failed:"; tail -3 "$W/imp_$r.txt"; }
  done
  "$BIN/kf" import kernelbench $H3/ref_boolmask.py --device cuda \
    --out "$P/p_boolmask" > "$W/imp_boolmask.txt" 2>&1 ||
    { echo "import boolmask failed:"; tail -3 "$W/imp_boolmask.txt"; }
  {
  one "tsample/relu6_identity" "$P/p_relu6_pos" "$D/cand_relu6_identity.py" --stop-after verify
  one "tsample/smoothl1_honest_full" "$P/p_smoothl1_pos" "$D/cand_smoothl1_honest.py"
  one "tsample/boolmask_honest" "$P/p_boolmask" $H3/cand_boolmask_honest.py
  one "tsample/boolmask_inverted" "$P/p_boolmask" $H3/cand_boolmask_inverted.py --stop-after verify
  } 2>&1 | tee -a "$W/tsample.txt"
}

texploits() {
  echo "== texploits $(date -u +%T)"
  timeout "${KF_EXPLOITS_S:-400}" scripts/run-exploits --bin "$BIN" \
    --backend torch-cuda > "$W/texploits.txt" 2>&1
  echo "run-exploits: exit $?"; tail -n 25 "$W/texploits.txt"
}

[ $# -gt 0 ] || { echo "usage: run.sh s3c|gcheck|tsample|texploits..." >&2; exit 2; }
for mode in "$@"; do
  case $mode in
  s3c) s3c ;; gcheck) gcheck ;; tsample) tsample ;; texploits) texploits ;;
  *) echo "unknown mode $mode" >&2 ;;
  esac
done
kf_gpu_pack
