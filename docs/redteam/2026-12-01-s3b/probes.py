#!/usr/bin/env python3
"""probes.py -- wire-level probes of the report path, registration and
/metrics by a hostile worker (bin/rt_client), one cluster.
Usage: KF_BIN_DIR=/work/main/build python3 probes.py
"""
import os, subprocess, sys, time, urllib.request
sys.path.insert(0, "/work/main/tests/e2e")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e, kfcampaign
from hostile_worker import rt, f_v, f_b, f_d, HERE

R = []


def note(name, what):
    R.append("%-28s %s" % (name, what))
    print(R[-1], flush=True)


def body(c):
    c.start_pg()
    mport = kfe2e.free_port()
    c.start_coordinator(extra=("--metrics-listen", "127.0.0.1:%d" % mport))
    tf = {}
    for n in ("w1", "w2"):
        tf[n] = os.path.join(c.dir, n + ".token")
        c.kf("token", "create", "--role", "worker", "--name", "rt-" + n,
             "--out", tf[n], "--db", c.conninfo)
    sub = c.kf("token", "create", "--role", "submitter", "--name", "rt-sub",
               "--db", c.conninfo).split()[1]
    admin = c.env
    e1 = dict(admin, KF_TOKEN=open(tf["w1"]).read().strip())
    e2 = dict(admin, KF_TOKEN=open(tf["w2"]).read().strip())
    tdir = os.path.join(c.dir, "t")
    os.makedirs(tdir)

    def as_(env, *a, **k):
        c.env = env
        try:
            return rt(c, *a, check_rc=False)
        finally:
            c.env = admin

    w1 = int(as_(e1, "register", "w1", "AMD EPYC rt", 4, "checksum")[0])
    w2 = int(as_(e2, "register", "w2", "AMD EPYC rt", 4, "checksum")[0])
    ids = c.submit(6, sleep_ms=1)
    out = as_(e1, "lease", w1, 2, 2000, tdir)[0].split("\n")
    t1, a1 = out[0].split()[:2]
    t1b, a1b = out[1].split()[:2]
    # 1. w2 reports w1's lease
    note("not-holder", as_(e2, "report", w2, t1, a1, 1, "run", "x", "-"))
    # 2. w2 reports as w1 (its worker id) with its own credential
    note("as-other-worker", as_(e2, "report", w1, t1, a1, 1, "run", "x", "-"))
    # 3. unknown task
    note("unknown-task", as_(e1, "report", w1, 999999, 1, 1, "run", "x", "-"))
    # 4. wrong attempt of a held task
    note("wrong-attempt", as_(e1, "report", w1, t1, int(a1) + 5, 1, "run",
                              "x", "-"))
    # 5. invalid UTF-8 reason (live lease)
    note("bad-utf8-reason", as_(e1, "report", w1, t1b, a1b, 1, "run",
                                "\\xff\\xfe", "-"))
    # 6. accepted then duplicate
    o = os.path.join(tdir, "cs.out")
    open(o, "wb").write(b'{"fnv1a64": "0000000000000000"}')
    note("first-report", as_(e1, "report", w1, t1, a1, 1, "run", "ok", o))
    note("duplicate", as_(e1, "report", w1, t1, a1, 2, "run", "changed", "-"))
    note("result-after", c.psql("SELECT attempt, outcome, reason FROM results"
                                " WHERE task_id = %s" % t1))
    # 7. heartbeat another's lease
    out = as_(e1, "lease", w1, 1, 2000, tdir)[0].split()
    t3, a3 = out[0], out[1]
    note("heartbeat-other", as_(e2, "heartbeat", w2, t3, a3))
    note("heartbeat-as-other", as_(e2, "heartbeat", w1, t3, a3))
    # 8. submitter registers; no token registers
    note("submitter-register", as_(dict(admin, KF_TOKEN=sub), "register",
                                   "s", "m", 1, "checksum"))
    note("no-token-register", as_(dict(admin, KF_TOKEN=""), "register",
                                  "s", "m", 1, "checksum"))
    # 9. hostile names: metrics injection through the class model
    evil = 'x"} 99\nkf_injected_total 1\n#'
    note("register-evil-model", as_(e1, "register", "n", evil, 1, "checksum"))
    note("register-esc-name", as_(e1, "register", "\x1b[31mRED\x1b]0;t\x07",
                                  "AMD EPYC rt", 1, "checksum"))
    note("register-model-128B", as_(e1, "register", "n", "m" * 128, 1,
                                    "checksum"))
    note("register-kind-comma", as_(e1, "register", "n", "m", 1, "a,b"))
    time.sleep(2)
    body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % mport,
                                  timeout=10).read().decode()
    inj = [l for l in body.splitlines() if l.startswith("kf_injected")]
    evl = [l for l in body.splitlines() if 'x\\"' in l][:2]
    note("metrics-injection", "injected lines: %r; escaped label lines: %r"
         % (inj, evl))
    st = subprocess.run([c.path("kf"), "status", "--coordinator", c.target],
                        capture_output=True, env=admin, timeout=30).stdout
    note("kf-status-escape", "ESC bytes in kf status output: %d"
         % st.count(b"\x1b"))
    with open(os.path.join(HERE, "results", "probes.txt"), "w") as f:
        f.write("\n".join(R) + "\n")


kfe2e.run("rt3bpr", body, time_limit=300)
