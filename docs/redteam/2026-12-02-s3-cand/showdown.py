#!/usr/bin/env python3
"""showdown.py SPEC_DIR ENTRY... : runs `kf-harness showdown` on a hand-encoded
ShowdownRequest (protobuf wire format, proto/kernelfleet.proto) and prints
each entry's outcome, reason and speedup.  ENTRY is FILE[:K=V[,K=V...]]; options after -- go to kf-harness showdown.
Run from the repository root with build/kf-harness."""
import json, os, struct, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbwire import fld, s, varint, dec, OUT

argv = sys.argv[1:]
extra = []
if "--" in argv:
    extra = argv[argv.index("--") + 1:]
    argv = argv[:argv.index("--")]
spec_dir = argv[0]
spec = open(os.path.join(spec_dir, "spec.json"), "rb").read()
ref = open(os.path.join(spec_dir, json.loads(spec)["reference"]), "rb").read()
req = s(1, json.loads(spec)["name"]) + s(2, spec) + s(3, ref) + s(4, os.environ.get("KF_LANG","c"))
req += fld(5, 0, varint(int.from_bytes(os.urandom(8), "little")))
for i, e in enumerate(argv[1:]):
    f, _, knobs = e.partition(":")
    ent = fld(1, 0, varint(100 + i)) + s(2, open(f, "rb").read())
    for kv in filter(None, knobs.split(",")):
        k, v = kv.split("=")
        ent += s(3, s(1, k) + s(2, v))
    req += s(6, ent)
p = subprocess.run([os.environ.get("KF_HARNESS","/tmp/rt-s3c/bin/kf-harness"), "showdown"] + extra, input=struct.pack("<I", len(req)) + req,
                   capture_output=True)
out = p.stdout
n = struct.unpack("<I", out[:4])[0]
msg = out[4:4 + n]
top = dec(msg)
for num, v in top:
    if num == 1: print("showdown outcome:", OUT[v])
    if num == 2: print("showdown reason:", v.decode(errors="replace")[:300])
    if num == 3: print("ref median ns:", v)
    if num == 6:
        d = dict(dec(v))
        print("entry", d.get(1), OUT[d.get(2, 0)], "|", d.get(4, b"").decode(errors="replace")[:250],
              "| median", d.get(5), "| speedup", d.get(10))
