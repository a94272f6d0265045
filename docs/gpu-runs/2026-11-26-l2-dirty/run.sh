#!/bin/bash
# Builds l2dirty.cu for a set of templates and runs each; on the GPU machine:
#   bash docs/gpu-runs/2026-11-26-l2-dirty/run.sh OUTDIR
set -u
D=$(dirname "$0"); O=${1:-/tmp/l2dirty}; mkdir -p "$O/bin"
P=problems/cuda
# name | template | -D knobs | M N INS OUTS
cat > "$O/cases" <<'C'
rms_br_256_4|rmsnorm/block_regs.cu|-DTHREADS=256 -DVPT=4|8192 8192 FV F
rms_br_512_2|rmsnorm/block_regs.cu|-DTHREADS=512 -DVPT=2|8192 8192 FV F
rms_br_128_8|rmsnorm/block_regs.cu|-DTHREADS=128 -DVPT=8|8192 8192 FV F
rms_br_256_2|rmsnorm/block_regs.cu|-DTHREADS=256 -DVPT=2|8192 8192 FV F
rms_pipe|rmsnorm/pipe_rows.cu||8192 8192 FV F
softmax_br|softmax/block_regs.cu||8192 8192 F F
layernorm_br|layernorm/block_regs.cu||8192 8192 FVV F
gelu_tile|gelu_tanh/tile_blocks.cu||8192 8192 F F
resrms_br|residual_rmsnorm/block_regs.cu||8192 8192 FFV FF
C
arch=${KF_ARCH:-sm_90}
while IFS='|' read -r n t k a; do
  nvcc -O3 -arch=$arch -I . -I harness/core $k -DCAND="\"$P/$t\"" -o "$O/bin/$n" "$D/l2dirty.cu" > "$O/bin/$n.log" 2>&1 &
done < "$O/cases"
wait
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv > "$O/smi.txt" 2>&1
while IFS='|' read -r n t k a; do
  echo "=== $n ($t $k)"
  "$O/bin/$n" $a 30 || cat "$O/bin/$n.log"
done < "$O/cases" 2>&1 | tee "$O/results.txt"
