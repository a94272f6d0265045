#!/bin/bash
# five siblings of 250 KiB each: each under bundle_siblings' 256 KiB, the
# written reference over the harness's 1 MiB (backend.c torch_compile)
export KF_PYTHON=/usr/bin/python3
KF=/work/main/build/kf; H=/work/main/build/kf-harness; R=/tmp/rt-gm
rm -rf $R/z_size $R/z_size_out; mkdir -p $R/z_size
cp $R/GM_TASK.txt $R/z_size/task.py; cp $R/GM_UTILS.txt $R/z_size/utils.py
for i in 1 2 3 4 5; do /usr/bin/python3 -c "
for j in range(2500): print('# ' + 'x' * 98)" > $R/z_size/pad$i.py; echo "import pad$i"; done > $R/z_size/hdr
cat $R/z_size/hdr $R/GM_LAYOUT.txt > $R/z_size/reference.py; rm $R/z_size/hdr
$KF import gpumode $R/z_size --out $R/z_size_out --case '{"size": 64, "seed": 3}' 2>&1 | grep -v '^next:'
ls -l $R/z_size_out/reference.py
$H eval-files --spec $R/z_size_out --source $R/sub.py --stop-after verify 2>/dev/null |
  /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print("eval:", r["outcome"], "|", r.get("reason","")[:300])'
