#!/usr/bin/env python3
"""Red team 2026-12-02: `kf campaign export --format kernelbench|gpumode|
torch-ext --problem DIR` builds the binding from DIR's spec.json and checks
only that its *name* is the campaign's problem.  A spec of the same name
with other shapes gets a binding the kernel was never verified under.

  KF_BIN_DIR=/work/main/build python3 c_export_spec.py
"""
import os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "e2e"))
import kfe2e  # noqa: E402
import tempfile  # noqa: E402
os.makedirs("/tmp/rt-0202", exist_ok=True)
_mk = tempfile.mkdtemp
tempfile.mkdtemp = lambda prefix="", dir=None: _mk(prefix=prefix, dir="/tmp/rt-0202")
OUT = "/tmp/rt-0202/cexport"
PY = os.environ.get("KF_PYTHON", "/usr/bin/python3")
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

CHECK = r'''
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("sub", sys.argv[1])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
x = torch.ones(1000, 4)
print("ModelNew()(ones(1000, 4)) =", m.ModelNew()(x).item(), "(true sum 4000)")
'''


def main(c):
    os.makedirs(OUT, exist_ok=True)
    c.start_pg()
    c.start_coordinator()
    w = c.start_worker("w-cpu", slots=1)
    prob = os.path.join(ROOT, "problems", "cpu", "vecsum")
    cid = int(c.kf("campaign", "submit", prob, "--evals", "2", "--minutes", "5",
                   "--population", "2", "--showdown", "1", "--coordinator",
                   c.target).strip())
    import json
    def done():
        kfe2e.check(w.alive(), "worker died")
        st = json.loads(c.kf("campaign", "status", str(cid), "--json",
                             "--coordinator", c.target))
        return st["state"] in ("done", "stopped", "failed") and st
    st = kfe2e.wait_until(done, 600, "campaign", interval=2)
    c.log("campaign %d %s best %s %.2fx" % (cid, st["state"], st.get("best_candidate_id"), st.get("best_speedup") or 0))
    for tag, pdir in (("same", prob), ("other", os.path.join(HERE, "problems", "vecsum_other"))):
        f = os.path.join(OUT, "vecsum_%s.py" % tag)
        if os.path.exists(f):
            os.unlink(f)
        rc, o, e = c.kf_run(["campaign", "export", str(cid), "--format", "kernelbench",
                             "--problem", pdir, "--out", f, "--coordinator", c.target])
        c.log("export --problem %s: rc %d %s%s" % (os.path.relpath(pdir, ROOT), rc, o.strip(), e.strip()))
        txt = open(f).read() if rc == 0 else ""
        for line in txt.splitlines():
            if "shape" in line and ("p_N" in line or "size(" in line) and "x" in line:
                c.log("   binding: " + line.strip().strip('"'))
        if rc == 0 and os.environ.get("RT_BUILD", "1") == "1":
            r = subprocess.run([PY, "-I", os.path.join(OUT, "check.py"), f],
                               capture_output=True, timeout=900) if open(os.path.join(OUT, "check.py"), "w").write(CHECK) else None
            c.log("   import+call: " + (r.stdout.decode() + r.stderr.decode()[-400:]).strip())


kfe2e.run("rtcexp", main, time_limit=2400)
