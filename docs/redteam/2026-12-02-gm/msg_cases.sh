#!/bin/bash
# error messages: a runtime error in task.py; line numbers of a reference
# error after the prologue; a sibling named like a module only the
# harness's runners load (socket)
export KF_PYTHON=/usr/bin/python3
KF=/work/main/build/kf; H=/work/main/build/kf-harness
R=/tmp/rt-gm; L=$R/GM_LAYOUT.txt; T=$R/GM_TASK.txt; U=$R/GM_UTILS.txt
mk() { rm -rf $R/m_$1 $R/m_$1_out; mkdir -p $R/m_$1; cp $T $R/m_$1/task.py; cp $U $R/m_$1/utils.py; cp $L $R/m_$1/reference.py; }
imp() { echo "=== $1"; $KF import gpumode $R/m_$1 --out $R/m_$1_out --case '{"size": 64, "seed": 3}' 2>&1 | grep -v '^next:' | tail -2; echo "rc=${PIPESTATUS[0]}"; }
mk rt; printf 'raise ValueError("task.py line 7 says no")\n' >> $R/m_rt/task.py; imp rt
mk ln; sed -i 's/    return a \* SCALE + b/    return a * SCALE + b + undefined_name/' $R/m_ln/reference.py; imp ln
grep -n undefined_name $R/m_ln/reference.py
mk sock; printf 'X = 1\n' > $R/m_sock/socket.py; sed -i '1i import socket' $R/m_sock/reference.py; imp sock
[ -d $R/m_sock_out ] && $H eval-files --spec $R/m_sock_out --source $R/sub.py --stop-after verify 2>/dev/null |
  /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print("   eval:", r["outcome"], "|", r.get("reason","")[:300])'
