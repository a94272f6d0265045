#!/bin/bash
# ev.sh NAME ARGS... : kf-harness eval-files ARGS from the repo root,
# keeps results/NAME.{json,err}, prints outcome | stage | reason | speedup
D=$(cd "$(dirname "$0")" && pwd)
N=$1; shift
cd /work/main
export KF_PYTHON=${KF_PYTHON:-/usr/bin/python3}
timeout -s KILL ${EVT:-300} ./build/kf-harness eval-files "$@" >"$D/results/$N.json" 2>"$D/results/$N.err"
rc=$?
python3 - "$D/results/$N.json" $rc <<'PY'
import json,sys
try:
    j=json.load(open(sys.argv[1]))
except Exception as e:
    print("rc",sys.argv[2],"no json",e); sys.exit()
def g(k):
    return j.get(k)
sp=None
try:
    sp=j["reference_time_ns"]["median"]/j["time_ns"]["median"]
except Exception: pass
print("rc",sys.argv[2],"|",g("outcome"),"|",g("stage") or g("failed_stage"),"|",(g("reason") or "")[:400],"|",sp)
PY
