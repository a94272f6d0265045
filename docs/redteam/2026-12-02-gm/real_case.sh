#!/bin/bash
# GPU MODE's vectoradd as its repository lays it out (utils.py with numpy/os/
# random and DeterministicContext, task.py with TypedDict): import, then the
# submission and the import's own eager.py, plain and persistent
export KF_PYTHON=/usr/bin/python3
KF=/work/main/build/kf; H=/work/main/build/kf-harness; R=/tmp/rt-gm; D=$(cd $(dirname $0); pwd)
rm -rf $R/real2 $R/real2_out; mkdir -p $R/real2; cp $D/real/reference.py $D/real/task.py $D/real/utils.py $R/real2/
$KF import gpumode $R/real2 --out $R/real2_out --case '{"size": 64, "seed": 3}' 2>&1 | grep -v '^next:'
for src in $D/real/submission.py $R/real2_out/eager.py; do for m in "" --torch-persistent; do
  printf '%-40s %-20s ' $(basename $src) "$m"
  $H eval-files --spec $R/real2_out --source $src --knob MODE=inference --stop-after verify $m 2>/dev/null |
    /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["outcome"], "|", r.get("reason","")[:200])'
done; done
