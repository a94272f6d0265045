#!/usr/bin/env python3
"""reuse_poison.py -- a hostile worker's forged wrong_answer outlives it:
later campaigns (other submitters, only honest workers alive) reuse the
stored verdict and never measure the kernel again.

Campaign 1: honest kf-worker H and a hostile worker (bin/rt_client, its own
worker credential) that registers H's exact device class and environment
(read from the database: model, isa, harness build, toolchain, driver,
runtime) and answers every eval it leases with wrong_answer.  The hostile
then stops (no more calls).  Campaign 2, same problem, H alone: which of
its evaluations are reused, and with which outcome?
Usage: KF_BIN_DIR=/work/main/build python3 reuse_poison.py
"""
import json, os, subprocess, sys, time
sys.path.insert(0, "/work/main/tests/e2e")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e, kfcampaign
from hostile_worker import rt, f_v, f_b, f_d, HERE


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
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers WHERE "
                                     "environment_id IS NOT NULL") == 1, 60,
                     "H registered")
    model, isa, hb, tc, drv, rtm, cores = c.psql(
        "SELECT dc.model, dc.isa, e.harness_build, e.toolchain, e.driver, "
        "e.runtime, w.device->>'cores' FROM workers w JOIN device_classes dc "
        "ON dc.id = w.device_class_id JOIN environments e ON e.id = "
        "w.environment_id")[0]
    admin = c.env
    wenv = dict(c.env, KF_TOKEN=open(tf["hostile"]).read().strip(),
                RT_ISA=isa, RT_BUILD=hb, RT_CC=tc, RT_DRIVER=drv,
                RT_RUNTIME=rtm, RT_CORES=cores or "2")
    c.env = wenv
    wid = int(rt(c, "register", "evil", model, 2, "eval")[0])
    c.env = admin
    same = c.scalar("SELECT count(DISTINCT environment_id) FROM workers")
    c.log("hostile worker %d registered; distinct environments: %s"
          % (wid, same))
    c1 = kfcampaign.submit(c, kfcampaign.problem_dir("softmax"), evals=8,
                           minutes=3, population=4)
    tdir = os.path.join(c.dir, "tasks")
    os.makedirs(tdir)
    poisoned = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < 200:
        if kfcampaign.state(c, c1) not in ("running", "showdown"):
            break
        c.env = wenv
        out, _ = rt(c, "lease", wid, 2, 1000, tdir)
        for line in out.splitlines():
            tid, att, kind, camp, tmo = line.split()
            o = os.path.join(tdir, "out_%s.bin" % tid)
            reason = b"size M=1 N=7, distribution normal: got 0.25, expected 0.5"
            ev = f_v(1, 7) + f_b(2, f_b(1, b"verify") + f_v(2, 7) +
                                 f_b(3, reason))
            open(o, "wb").write(ev)
            rt(c, "report", wid, tid, att, 7, "verify", reason.decode(), o)
            poisoned.append(int(tid))
        c.env = admin
        time.sleep(0.2)
    c.log("campaign 1: %s; hostile answered tasks %r"
          % (kfcampaign.state(c, c1), poisoned))
    # the hostile is gone; wait until it is no longer alive
    time.sleep(1)
    c2 = kfcampaign.submit(c, kfcampaign.problem_dir("softmax"), evals=8,
                           minutes=3, population=4, seed=7)
    kfcampaign.wait_done(c, c2, 240)
    lines = []
    for cid in (c1, c2):
        ex = c.kf("campaign", "export", str(cid), "--coordinator", c.target)
        lines.append("## campaign %d export (candidate template knobs outcome"
                     " reused reused_from speedup)" % cid)
        for l in ex.splitlines():
            j = json.loads(l)
            lines.append("  %s %s %s %s reused=%s from=%s speedup=%s" % (
                j.get("candidate_id"), j.get("template"),
                json.dumps(j.get("knobs")), j.get("outcome"), j.get("reused"),
                j.get("reused_from"), j.get("speedup")))
    lines.append("## evaluations by worker (campaign, worker, outcome, count)")
    for r in c.psql("SELECT campaign_id, worker_id, outcome, count(*) FROM "
                    "evaluations GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"):
        lines.append("  " + " | ".join(r))
    lines.append("## workers: %r" % c.psql(
        "SELECT id, name, environment_id, now() - last_seen FROM workers"))
    with open(os.path.join(HERE, "results", "reuse_poison.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


kfe2e.run("rt3brp", body, time_limit=600)
