#!/bin/bash
# imp.sh NAME : kf import kernelbench import/ref_NAME.py --out /tmp/rt3c/NAME
D=$(cd "$(dirname "$0")" && pwd)
N=$1; shift
mkdir -p /tmp/rt3c; rm -rf /tmp/rt3c/$N
cd /tmp/rt3c
KF_PYTHON=/usr/bin/python3 timeout -s KILL 300 /work/main/build/kf import kernelbench "$D/import/ref_$N.py" --out /tmp/rt3c/$N "$@" >"$D/results/import_$N.out" 2>&1
echo "rc=$? $(tail -c 600 $D/results/import_$N.out)"
