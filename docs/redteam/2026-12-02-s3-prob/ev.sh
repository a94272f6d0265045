#!/bin/sh
# ev.sh NAME ARGS...: kf-harness eval-files ARGS, keeps results/NAME.{json,err}, prints a summary
D=$(cd "$(dirname "$0")" && pwd)
N=$1; shift
KF_PYTHON=${KF_PYTHON:-/usr/bin/python3} timeout 600 /tmp/rt-s3p/bin/kf-harness eval-files "$@" > $D/results/$N.json 2> $D/results/$N.err
rc=$?
python3 - "$D/results/$N.json" "$rc" <<'PY'
import json,sys
try:
    j=json.load(open(sys.argv[1]))
    r=j.get("result",j)
    print("rc",sys.argv[2],"|",r.get("outcome"),"|",r.get("stage"),"|",(r.get("reason") or "")[:400],"|",r.get("speedup"))
except Exception as e:
    print("rc",sys.argv[2],"| no json:",e, open(sys.argv[1]).read()[:300])
PY
