#!/bin/bash
# Device calls of the 2026-12-02 CUDA red team (H200), from the repository
# root on the GPU machine with bundle/ carried:
#   bash docs/redteam/2026-12-02-cuda/run.sh [MODE...]
# Modes: base (twin, ce_hog, ce_delay_hog on gelu_tanh; twin, ce_hog_forge,
# forge_reply at a quarter on gelu_big), more (RT_MORE=files, second call).
# Everything comes back in $OUT/all.tar.gz and $OUT/summary.txt.
source scripts/gpu-run-lib
D=docs/redteam/2026-12-02-cuda
G=problems/cuda/gelu_tanh
B=tests/exploits/problems/gelu_big
export KF_ONE_S=${KF_ONE_S:-100}

idle_lines() { # the idle gate's log lines of one evaluation
  local tag; tag=$(printf '%s' "$1" | tr '/ =' '___')
  grep -E "held|idle|slow probes|charged by|left GPU" "$W/ab/$tag.err" | \
    sed -E 's/^.*msg="//; s/" src=.*$//' | sort | uniq -c | sort -rn | head -6 | \
    sed 's/^/      /'
}
ev() { one "$@"; idle_lines "$1"; }

base() {
  echo "== base $(date -u +%T)"
  ev twin/gelu_tanh $G tests/exploits/cuda/forge_reply_twin.cu
  ev ce_hog/gelu_tanh $G $D/ce_hog.cu
  ev ce_delay_hog/gelu_tanh $G $D/ce_delay_hog.cu
  ev twin/gelu_big $B tests/exploits/cuda/forge_reply_twin.cu
  ev ce_hog_forge25/gelu_big $B $D/ce_hog_forge.cu
  ev forge_reply25/gelu_big $B tests/exploits/cuda/forge_reply.cu --knob SCALE_PCT=25
}

more() { # the second call: the hogs after the fix (no hog after GEN's reply)
  echo "== more $(date -u +%T)"
  ev fix/ce_hog/gelu_tanh $G $D/ce_hog.cu
  ev fix/twin/gelu_tanh $G tests/exploits/cuda/forge_reply_twin.cu
  ev fix/ce_delay_hog/gelu_tanh $G $D/ce_delay_hog.cu
  ev fix/ce_hog_forge25/gelu_big $B $D/ce_hog_forge.cu
}

{
  cat "$W/gpu.txt"
  [ $# -gt 0 ] || set -- base
  for mode in "$@"; do
    case $mode in base) base ;; more) more ;; *) echo "unknown mode $mode" ;; esac
  done
} 2>&1 | tee "$OUT/summary.txt"
cp "$OUT/summary.txt" "$W/summary.txt"
kf_gpu_pack
