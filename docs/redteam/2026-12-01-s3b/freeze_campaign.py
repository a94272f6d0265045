#!/usr/bin/env python3
"""freeze_campaign.py -- one poisoned showdown report freezes the whole
campaign, honest device classes included.

An honest kf-worker H (its own credential, the real harness) and a hostile
worker (bin/rt_client, credential rt-hostile) that registers a device class
of its own ("AMD EPYC rt").  One softmax campaign, 8 evals per class, 1
minute wall-clock budget.  The hostile class's evals are answered at once
(ok EvalResults), so it reaches budget_evals and its showdown first; the
hostile answers its showdown with a ShowdownResult whose entry reasons are
"\\xff\\xfe" (accepted: verdict 1).  Then we watch the honest class for
110 s: its evaluations, queued tasks, the campaign's state; then try
`kf campaign stop`.
Usage: KF_BIN_DIR=/work/main/build python3 freeze_campaign.py [control]
  control: the hostile's showdown entries have a plain reason
"""
import os, subprocess, sys, time
sys.path.insert(0, "/work/main/tests/e2e")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e, kfcampaign
from hostile_worker import rt, eval_result, showdown_result, HERE

MODE = "sd_honest" if "control" in sys.argv[1:] else "sd_badutf8_entry"


def body(c):
    c.start_pg()
    c.start_coordinator()
    tf = {}
    for n in ("honest", "hostile"):
        tf[n] = os.path.join(c.dir, n + ".token")
        c.kf("token", "create", "--role", "worker", "--name", "rt-" + n,
             "--out", tf[n], "--db", c.conninfo)
    c.start_worker("H", slots=1, extra=("--token-file", tf["honest"]),
                   env={"KF_TOKEN": ""})
    admin = c.env
    wenv = dict(c.env, KF_TOKEN=open(tf["hostile"]).read().strip())
    c.env = wenv
    wid = int(rt(c, "register", "evil", "AMD EPYC rt", 2, "eval",
                 "showdown")[0])
    c.env = admin
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 2,
                     60, "H registered")
    cid = kfcampaign.submit(c, kfcampaign.problem_dir("softmax"), evals=8,
                            minutes=1, population=4)
    tdir = os.path.join(c.dir, "tasks")
    os.makedirs(tdir)
    t0 = time.monotonic()
    samples = []
    last = None
    while time.monotonic() - t0 < 110:
        c.env = wenv
        out, _ = rt(c, "lease", wid, 4, 1000, tdir)
        rt(c, "heartbeat", wid, 0, 0, check_rc=False)
        for line in out.splitlines():
            tid, att, kind, camp, tmo = line.split()
            payload = open(os.path.join(tdir, "task_%s.bin" % tid), "rb").read()
            o = os.path.join(tdir, "out_%s.bin" % tid)
            if kind == "eval":
                open(o, "wb").write(eval_result(2e5, 1e6))
                rt(c, "report", wid, tid, att, 1, "time", "ok", o)
            else:
                open(o, "wb").write(showdown_result(payload, MODE))
                v, _ = rt(c, "report", wid, tid, att, 1, "showdown", "done", o)
                c.env = admin
                c.log("hostile showdown task %s reported (%s): %s"
                      % (tid, MODE, v.strip()))
        c.env = admin
        row = c.psql(
            "SELECT c.state, (SELECT string_agg(dc.model || '=' || cc.state ||"
            " ':' || (SELECT count(*) FROM evaluations e WHERE e.campaign_id ="
            " c.id AND e.device_class_id = cc.device_class_id), ', ' ORDER BY"
            " dc.model) FROM campaign_classes cc JOIN device_classes dc ON"
            " dc.id = cc.device_class_id WHERE cc.campaign_id = c.id), (SELECT"
            " count(*) FROM tasks t WHERE t.campaign_id = c.id AND t.state IN"
            " ('queued', 'leased')) FROM campaigns c WHERE c.id = %d" % cid)[0]
        if row != last:
            c.log("t=%5.1fs campaign %s | classes %s | queued+leased %s"
                  % (time.monotonic() - t0, row[0], row[1], row[2]))
            samples.append((round(time.monotonic() - t0, 1), row))
            last = row
        time.sleep(1.0)
    lines = ["mode %s" % MODE, "final: %r" % (last,)]
    lines += ["  change at t=%ss: %r" % s for s in samples]
    r = subprocess.run([c.path("kf"), "campaign", "stop", str(cid),
                        "--coordinator", c.target], capture_output=True,
                       env=c.env, timeout=60)
    lines.append("kf campaign stop -> %d %s %s" % (
        r.returncode, r.stdout.decode().strip(), r.stderr.decode().strip()))
    time.sleep(3)
    lines.append("after stop: %r" % c.psql(
        "SELECT state, stop_reason FROM campaigns WHERE id = %d" % cid))
    log = open(c.coord.log_path, "rb").read().decode(errors="replace")
    bad = [l for l in log.splitlines() if "search step" in l]
    lines.append("coordinator 'search step' warnings: %d; first: %s"
                 % (len(bad), bad[0][:300] if bad else "-"))
    with open(os.path.join(HERE, "results", "freeze_%s.txt" % MODE), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


kfe2e.run("rt3bfz", body, time_limit=400)
