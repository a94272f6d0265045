#!/usr/bin/env bash
# ev.sh OUTNAME kf-harness-args... : runs eval-files from the repo root, keeps the JSON, prints a summary
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=$(dirname "$0")/results; mkdir -p "$out"
name=$1; shift
(cd "$root" && ./build/kf-harness eval-files "$@") > "$out/$name.json" 2> "$out/$name.err"
python3 - "$out/$name.json" <<'PY'
import json,sys
try: r=json.load(open(sys.argv[1]))
except Exception as e: print("NO JSON:", e); sys.exit()
sp = (r.get('ref_time_ns_median',0)/r['time_ns_median']) if r.get('time_ns_median') else None
print(r.get('outcome'), '|', r.get('stage'), '|', (r.get('reason') or '')[:400], '| speedup', None if sp is None else round(sp,2))
PY
