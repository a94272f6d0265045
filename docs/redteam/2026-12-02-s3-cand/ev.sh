#!/bin/sh
# ev.sh SPEC SOURCE [extra eval-files args]: one evaluation, summary line.
# Uses the copied binaries (/tmp/rt-s3c/bin) and Debian's torch python.
spec=$1; src=$2; shift 2
out=$(KF_PYTHON=/usr/bin/python3 /tmp/rt-s3c/bin/kf-harness eval-files --spec "$spec" --source "$src" "$@" 2>/tmp/rt-s3c/last.err)
echo "$out" > /tmp/rt-s3c/last.json
echo "$out" | /usr/bin/python3 -c '
import json,sys
r=json.load(sys.stdin)
sp = (r.get("ref_time_ns_median") or 0)/(r.get("time_ns_median") or 1) if r.get("time_ns_median") else None
print("outcome=%s stage=%s speedup=%s cand=%s ref=%s\n  reason: %s" % (r.get("outcome"), r.get("stage"), ("%.2f"%sp) if sp else None, r.get("time_ns_median"), r.get("ref_time_ns_median"), (r.get("reason") or "")[:1500]))'
