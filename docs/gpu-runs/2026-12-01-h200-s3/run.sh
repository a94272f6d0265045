#!/bin/bash
# Device calls of 2026-12-01, third session (H200), from the repository
# root on the GPU machine with bundle/ carried (bundle/kernelfleet.tar.xz
# of this tree; helpers in scripts/gpu-run-lib):
#   run.sh gate       the torch clock with the go word (runner.py _GoGate)
#                     and without it (KF_TORCH_GATE=0), side by side on
#                     sinsum_torch_cuda: the honest twin, forge_charge.py,
#                     forge_lean.py (the sleep protocol's forger),
#                     forge_lean_gate.py (the go word's), sync_inside.py (a
#                     call that waits on the GPU from the host); then the
#                     reference as its own candidate on kb1_relu and
#                     kb1_softmax, gate on and off
#   run.sh gatedbg    the gated call's wait at WARM traced (g=: polling its
#                     stream, the synchronize, ev[2], t_all)
#   run.sh gcheck     the final gated protocol, briefly (gate on only)
#   run.sh ccheck     the CUDA runner after its LOADING reply, briefly
#   run.sh texploits  scripts/run-exploits --backend torch-cuda
#   run.sh tsample    two `sample` imports (a wrong and an honest
#                     candidate) and a bool input drawn by get_inputs()
#   run.sh MODE...    several, in order
# Everything comes back in $OUT/all.tar.gz.
source scripts/gpu-run-lib
H=docs/gpu-runs/2026-12-01-h200-s3

gate() {
  echo "== gate $(date -u +%T)"
  export KF_TORCH_TRACE_CLOCK=1
  local p=tests/exploits/problems/sinsum_torch_cuda
  for round in $(seq 1 "${KF_ROUNDS:-1}"); do
    for g in 1 0; do
      for f in tests/exploits/torch/forge_charge_twin.py \
               tests/exploits/torch/forge_charge.py \
               docs/redteam/2026-12-01/torch/forge_lean.py \
               $H/forge_lean_gate.py $H/sync_inside.py; do
        local n; n=$(basename "$f" .py)
        KF_TORCH_GATE=$g one "gate/g$g/$n $round" $p "$f"
        phases "$W/ab/gate_g${g}_${n}_$round.err"
      done
    done
  done 2>&1 | tee -a "$W/gate.txt"
  python3 scripts/torch_gpu_copies.py "$W/p" kb1_relu kb1_softmax > /dev/null || return
  for q in kb1_relu kb1_softmax; do
    { cat "$W/p/$q/reference.py"; printf '\nModelNew = Model\n'; } > "$W/$q.refcand.py"
    for g in 1 0; do
      KF_TORCH_GATE=$g one "gate/g$g/$q/reference" "$W/p/$q" "$W/$q.refcand.py"
      phases "$W/ab/gate_g${g}_${q}_reference.err"
    done
  done 2>&1 | tee -a "$W/gate.txt"
  unset KF_TORCH_TRACE_CLOCK
}

gatedbg() { # the gated call's wait at WARM traced (g=: poll, synchronize,
            # ev[2], t_all), on kb1_relu (128 MiB each way) and sinsum
  echo "== gatedbg $(date -u +%T)"
  export KF_TORCH_TRACE_CLOCK=1
  {
  python3 scripts/torch_gpu_copies.py "$W/p" kb1_relu > /dev/null || return
  { cat "$W/p/kb1_relu/reference.py"; printf '\nModelNew = Model\n'; } > "$W/kb1_relu.refcand.py"
  one "gatedbg/kb1_relu/reference" "$W/p/kb1_relu" "$W/kb1_relu.refcand.py"
  one "gatedbg/sinsum/twin" tests/exploits/problems/sinsum_torch_cuda \
    tests/exploits/torch/forge_charge_twin.py
  grep -h "clock of" "$W"/ab/gatedbg_*.err | sed 's/.*msg="//' | cut -c1-330 | head -40
  } 2>&1 | tee -a "$W/gatedbg.txt"
  unset KF_TORCH_TRACE_CLOCK
}

gcheck() { # the final gated protocol, briefly: sinsum's twin, the two
           # forgers and sync_inside; kb1_relu and kb1_softmax's reference
           # as its own candidate (gate on only)
  echo "== gcheck $(date -u +%T)"
  export KF_TORCH_TRACE_CLOCK=1
  {
  local p=tests/exploits/problems/sinsum_torch_cuda
  for f in tests/exploits/torch/forge_charge_twin.py \
           tests/exploits/torch/forge_charge.py \
           $H/forge_lean_gate.py $H/sync_inside.py; do
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

ccheck() { # the CUDA runner after LOADING (a setup failure after the load is
           # the candidate's): two honest evaluations and four exploits
  echo "== ccheck $(date -u +%T)"
  {
  one "ccheck/gelu_tanh/reference" problems/cuda/gelu_tanh problems/cuda/gelu_tanh/reference.cu
  one "ccheck/softmax/reference" problems/cuda/softmax problems/cuda/softmax/reference.cu
  timeout 200 scripts/run-exploits --bin "$BIN" --backend cuda --no-templates \
    forge_reply hidden_stream keep_allocation bench_dist_branch > "$W/ccheck-exploits.txt" 2>&1
  echo "run-exploits: exit $?"; grep -v SKIPPED "$W/ccheck-exploits.txt" | tail -8
  } 2>&1 | tee -a "$W/ccheck.txt"
}

texploits() {
  echo "== texploits $(date -u +%T)"
  timeout "${KF_EXPLOITS_S:-400}" scripts/run-exploits --bin "$BIN" \
    --backend torch-cuda > "$W/texploits.txt" 2>&1
  echo "run-exploits: exit $?"; tail -n 25 "$W/texploits.txt"
}

tsample() {
  echo "== tsample $(date -u +%T)"
  local D=docs/redteam/2026-12-01/import P=$W/imp
  mkdir -p "$P"
  for r in relu6_pos smoothl1_pos; do
    "$BIN/kf" import kernelbench "$D/ref_$r.py" --device cuda --out "$P/p_$r" \
      > "$W/imp_$r.txt" 2>&1 || { echo "import $r failed:"; tail -3 "$W/imp_$r.txt"; }
  done
  "$BIN/kf" import kernelbench $H/ref_boolmask.py --device cuda \
    --out "$P/p_boolmask" > "$W/imp_boolmask.txt" 2>&1 ||
    { echo "import boolmask failed:"; tail -3 "$W/imp_boolmask.txt"; }
  {
  one "tsample/relu6_identity" "$P/p_relu6_pos" "$D/cand_relu6_identity.py" --stop-after verify
  one "tsample/smoothl1_honest_full" "$P/p_smoothl1_pos" "$D/cand_smoothl1_honest.py"
  one "tsample/boolmask_honest" "$P/p_boolmask" $H/cand_boolmask_honest.py
  one "tsample/boolmask_inverted" "$P/p_boolmask" $H/cand_boolmask_inverted.py --stop-after verify
  } 2>&1 | tee -a "$W/tsample.txt"
  cp -r "$P" "$W/imported"
}

[ $# -gt 0 ] || { echo "usage: run.sh gate|texploits|tsample..." >&2; exit 2; }
for mode in "$@"; do
  case $mode in
  gate) gate ;; gatedbg) gatedbg ;; gcheck) gcheck ;; texploits) texploits ;;
  ccheck) ccheck ;;
  tsample) tsample ;;
  *) echo "unknown mode $mode" >&2 ;;
  esac
done
kf_gpu_pack
