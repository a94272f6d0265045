#!/bin/bash
# Device calls of 2026-12-02, third session (H200), from the repository
# root on the GPU machine with bundle/ carried (bundle/kernelfleet.tar.xz
# of this tree; helpers in scripts/gpu-run-lib):
#   run.sh ccheck     the CUDA runner under its new filter (fcntl/ioctl
#                     commands that signal a process refused:
#                     kf_sandbox_fd_ops): gelu_tanh and softmax references
#                     as candidates, and four exploits of the corpus
#   run.sh gmtask     scripts/gpu-gm-task-remote: a GPU MODE problem whose
#                     task.yml has four benchmarks, every one timed now
#                     (sizes.bench a list; the time their geometric mean)
#   run.sh kbbn       KernelBench's BatchNorm (level 1 #33, smaller) run
#                     in training mode, as KernelBench runs it: a copy of
#                     the input wrong_answer, the batch's statistics ok
#   run.sh texploits  scripts/run-exploits --backend torch-cuda
#   run.sh MODE...    several, in order
# Everything comes back in $OUT/all.tar.gz.
source scripts/gpu-run-lib
RT=docs/redteam/2026-12-02-s3-prob

ccheck() {
  echo "== ccheck $(date -u +%T)"
  {
  one "ccheck/gelu_tanh/reference" problems/cuda/gelu_tanh problems/cuda/gelu_tanh/reference.cu
  one "ccheck/softmax/reference" problems/cuda/softmax problems/cuda/softmax/reference.cu
  timeout 240 scripts/run-exploits --bin "$BIN" --backend cuda --no-templates \
    forge_reply hidden_stream keep_allocation bench_dist_branch > "$W/ccheck-exploits.txt" 2>&1
  echo "run-exploits: exit $?"; grep -v SKIPPED "$W/ccheck-exploits.txt" | tail -8
  } 2>&1 | tee -a "$W/ccheck.txt"
}

gmtask() {
  echo "== gmtask $(date -u +%T)"
  OUT=$W/gmtask timeout 420 scripts/gpu-gm-task-remote 2>&1 | tee -a "$W/gmtask.txt"
}

kbbn() {
  echo "== kbbn $(date -u +%T)"
  {
  "$BIN/kf" import kernelbench $RT/kb/ref_batchnorm.py --device cuda \
    --out "$W/bn" > "$W/imp_bn.txt" 2>&1 || { echo "import failed:"; tail -3 "$W/imp_bn.txt"; }
  one "kbbn/copy" "$W/bn" $RT/cands/bn_identity.py --stop-after verify
  one "kbbn/batchstats" "$W/bn" $RT/cands/bn_batchstats.py
  one "kbbn/eager" "$W/bn" "$W/bn/eager.py" --knob MODE=no_grad
  } 2>&1 | tee -a "$W/kbbn.txt"
}

texploits() {
  echo "== texploits $(date -u +%T)"
  timeout "${KF_EXPLOITS_S:-300}" scripts/run-exploits --bin "$BIN" \
    --backend torch-cuda > "$W/texploits.txt" 2>&1
  echo "run-exploits: exit $?"; tail -n 12 "$W/texploits.txt"
}

[ $# -gt 0 ] || { echo "usage: run.sh ccheck|gmtask|kbbn|texploits..." >&2; exit 2; }
for mode in "$@"; do
  case $mode in
  ccheck) ccheck ;; gmtask) gmtask ;; kbbn) kbbn ;; texploits) texploits ;;
  *) echo "unknown mode $mode" >&2 ;;
  esac
done
kf_gpu_pack
