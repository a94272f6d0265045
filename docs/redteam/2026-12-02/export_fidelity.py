#!/usr/bin/env python3
"""Red team 2026-12-02: a verified PyTorch best whose exported file is not
what was verified.  One private PostgreSQL, one coordinator, one worker
(torch on CPU); one small campaign per case, run one after another.

  KF_BIN_DIR=/work/main/build python3 export_fidelity.py [CASE...]

Cases: leading_zero underscore inf future init_bool init_bigint.
For each: the campaign's best is read back (`kf campaign best --out`) and
exported (`kf campaign export --format gpumode|kernelbench`), then each
file is imported by Debian's torch and called on a tensor.
"""
import json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "e2e"))
import kfe2e  # noqa: E402
import tempfile  # noqa: E402

# scratch (PostgreSQL, logs) under /tmp/rt-0202, not /tmp
os.makedirs("/tmp/rt-0202", exist_ok=True)
_mkdtemp = tempfile.mkdtemp
tempfile.mkdtemp = lambda prefix="", dir=None: _mkdtemp(prefix=prefix, dir="/tmp/rt-0202")

PY = os.environ.get("KF_PYTHON", "/usr/bin/python3")
OUT = os.environ.get("RT_OUT", "/tmp/rt-0202/export")
P = lambda *a: os.path.join(HERE, *a)

# name: (problem dir, proposal source or None, knobs)
CASES = {
    "leading_zero": ("problems/rt_relu", "cands/knob_leading_zero.py", ["SCALE=010"]),
    "underscore": ("problems/rt_relu", "cands/knob_underscore.py", ["CHUNK=1_6"]),
    "inf": ("problems/rt_relu", "cands/knob_inf.py", ["HI=inf"]),
    "future": ("problems/rt_relu", "cands/future_knob.py", ["OP=relu"]),
    "init_bool": ("problems/rt_init_bool", None, []),
    "init_bigint": ("problems/rt_init_bigint", None, []),
}

CHECK = r'''
import importlib.util, sys, traceback, torch
path, fmt = sys.argv[1], sys.argv[2]
try:
    spec = importlib.util.spec_from_file_location("sub", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    x = torch.randn(3, 129)
    if fmt == "gpumode":
        y = m.custom_kernel(x)
    else:
        y = m.ModelNew()(x)
    print("IMPORT+CALL OK", tuple(y.shape))
except BaseException as e:
    print("FAILED:", type(e).__name__ + ":", str(e).splitlines()[0] if str(e) else "")
'''


def main(c):
    names = sys.argv[1:] or list(CASES)
    os.makedirs(OUT, exist_ok=True)
    c.start_pg()
    c.start_coordinator()
    c.env["KF_PYTHON"] = PY
    w = c.start_worker("w-torch", slots=1)
    chk = os.path.join(OUT, "check.py")
    open(chk, "w").write(CHECK)
    for name in names:
        prob, cand, knobs = CASES[name]
        prob = P(prob)
        cid = int(c.kf("campaign", "submit", prob, "--evals", "1",
                       "--minutes", "8", "--population", "1", "--showdown",
                       "1", "--coordinator", c.target).strip())
        c.log("%s: campaign %d" % (name, cid))
        if cand:
            args = ["campaign", "propose", str(cid), P(cand), "--coordinator",
                    c.target, "--proposer", "rt"]
            for k in knobs:
                args += ["--knob", k]
            c.log("  propose: %s" % c.kf(*args).strip())
        def done():
            kfe2e.check(w.alive(), "worker died")
            st = json.loads(c.kf("campaign", "status", str(cid), "--json",
                                 "--coordinator", c.target))
            return st["state"] in ("done", "stopped", "failed") and st
        st = kfe2e.wait_until(done, 600, "campaign %d" % cid, interval=2)
        ev = c.kf("campaign", "export", str(cid), "--coordinator", c.target)
        for line in ev.splitlines():
            e = json.loads(line)
            c.log("  eval cand %s template %s proposer %s knobs %s: %s %s %s" % (
                e["candidate_id"], e["template"], e["proposer"], e["knobs"],
                e["outcome"], e.get("speedup"), (e.get("reason") or "")[:120]))
        c.log("  state %s, best candidate %s" % (st["state"], st.get("best_candidate_id")))
        files = []
        bf = os.path.join(OUT, "%s.best.py" % name)
        rc, o, e = c.kf_run(["campaign", "best", str(cid), "--out", bf,
                             "--coordinator", c.target])
        c.log("  kf campaign best: rc %d %s%s" % (rc, o.strip(), e.strip()))
        files.append((bf, "kernelbench"))
        for fmt in ("gpumode", "kernelbench"):
            f = os.path.join(OUT, "%s.%s.py" % (name, fmt))
            rc, o, e = c.kf_run(["campaign", "export", str(cid), "--format",
                                 fmt, "--problem", prob, "--out", f,
                                 "--coordinator", c.target])
            c.log("  export %s: rc %d %s%s" % (fmt, rc, o.strip(), e.strip()))
            files.append((f, fmt))
        for f, fmt in files:
            if not os.path.exists(f):
                continue
            r = subprocess.run([PY, "-I", chk, f, fmt], capture_output=True,
                               timeout=300)
            c.log("  import %s: %s" % (os.path.basename(f),
                  (r.stdout.decode() + r.stderr.decode()[-300:]).strip()))


kfe2e.run("rtexport", main, time_limit=3000)
