#!/usr/bin/env python3
"""cross_submitter.py -- two submitter credentials; can B stop, or propose
into, A's campaign?  Also: a proposer label "llm:<anything>" from a plain
submitter.
Usage: KF_BIN_DIR=/work/main/build python3 cross_submitter.py
"""
import os, subprocess, sys
sys.path.insert(0, "/work/main/tests/e2e")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e, kfcampaign
from hostile_worker import HERE

R = []


def body(c):
    c.start_pg()
    c.start_coordinator()
    toks = {}
    for n in ("alice", "mallory"):
        toks[n] = c.kf("token", "create", "--role", "submitter", "--name", n,
                       "--db", c.conninfo).split()[1]
    c.start_worker("W", slots=1)

    def kf(who, *args):
        r = subprocess.run([c.path("kf")] + list(args) + ["--coordinator",
                           c.target], capture_output=True, timeout=60,
                           env=dict(c.env, KF_TOKEN=toks[who]))
        R.append("%s: kf %s -> rc %d %s %s" % (
            who, " ".join(args), r.returncode, r.stdout.decode().strip()[:300],
            r.stderr.decode().strip()[:300]))
        print(R[-1], flush=True)
        return r
    r = kf("alice", "campaign", "submit", kfcampaign.problem_dir("softmax"),
           "--evals", "40", "--minutes", "5")
    cid = r.stdout.decode().strip()
    src = os.path.join(c.dir, "p.c")
    with open(kfcampaign.problem_dir("softmax") + "/three_pass.c") as f:
        open(src, "w").write(f.read())
    kf("mallory", "campaign", "propose", cid, src, "--knob", "UNROLL=2",
       "--proposer", "llm:gpt-5 (official)")
    kf("mallory", "campaign", "stop", cid)
    R.append("campaign %s after mallory's stop: %r" % (cid, c.psql(
        "SELECT state, stop_reason FROM campaigns WHERE id = %s" % cid)))
    R.append("candidates by proposer: %r" % c.psql(
        "SELECT proposer, count(*) FROM candidates GROUP BY 1"))
    print("\n".join(R[-2:]))
    with open(os.path.join(HERE, "results", "cross_submitter.txt"), "w") as f:
        f.write("\n".join(R) + "\n")


kfe2e.run("rt3bxs", body, time_limit=200)
