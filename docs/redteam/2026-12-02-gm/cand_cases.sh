#!/bin/bash
# candidates against the test's GM layout (imported to /tmp/rt-gm/base_out)
export KF_PYTHON=/usr/bin/python3
H=/work/main/build/kf-harness; D=$(dirname $0)
for c in read_modules patch_task own_kfmodule gc_modules; do
  for m in "" --torch-persistent; do
    printf '%-14s %-20s ' $c "$m"
    $H eval-files --spec /tmp/rt-gm/base_out --source $D/cands/$c.py --stop-after verify $m 2>/dev/null |
      /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["outcome"], "|", r.get("reason","")[:200])'
  done
done
# the import's own eager.py, and a candidate made from the written reference.py
for m in "" --torch-persistent; do
  printf '%-14s %-20s ' eager.py "$m"
  $H eval-files --spec /tmp/rt-gm/base_out --source /tmp/rt-gm/base_out/eager.py --knob MODE=inference --stop-after verify $m 2>/dev/null |
    /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["outcome"], "|", r.get("reason","")[:200])'
done
