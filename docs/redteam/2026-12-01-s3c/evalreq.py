#!/usr/bin/env python3
"""evalreq.py SPEC_DIR FILE [K=V...] -- [kf-harness eval options]: runs
`kf-harness eval` (the worker's entry, which takes options eval-files does
not pass, such as --deadline-ms) on a hand-encoded EvalRequest and prints
the outcome and every stage.  Run from the repository root."""
import json, os, struct, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbwire import fld, s, varint, dec, OUT

args = sys.argv[1:]
extra = []
if "--" in args:
    i = args.index("--"); extra = args[i + 1:]; args = args[:i]
spec_dir, src, knobs = args[0], args[1], args[2:]
spec = open(os.path.join(spec_dir, "spec.json"), "rb").read()
js = json.loads(spec)
ref = open(os.path.join(spec_dir, js["reference"]), "rb").read()
req = s(1, js["name"]) + s(2, spec) + s(3, open(src, "rb").read())
for kv in knobs:
    k, v = kv.split("=", 1)
    req += s(4, s(1, k) + s(2, v))
req += s(5, ref) + fld(6, 0, varint(int.from_bytes(os.urandom(8), "little") >> 1))
req += fld(7, 0, varint(1)) + s(8, {"cpu": "c", "torch": "python"}.get(js["backend"], js["backend"]))
p = subprocess.run(["build/kf-harness", "eval"] + extra,
                   input=struct.pack("<I", len(req)) + req, capture_output=True)
out = p.stdout
if len(out) < 4:
    print("no result; stderr tail:", p.stderr.decode(errors="replace")[-600:])
    sys.exit(1)
n = struct.unpack("<I", out[:4])[0]
top = dec(out[4:4 + n])
for num, v in top:
    if num == 1: print("outcome:", OUT[v])
    if num == 2:
        d = dict(dec(v))
        print("  stage", d.get(1, b"").decode(), OUT[d.get(2, 0)], "|",
              d.get(3, b"").decode(errors="replace")[:400], "|", d.get(4), "us")
    if num in (3, 5): print("  %s:" % ("time_ns_median" if num == 3 else "ref_time_ns_median"), v)
