#!/usr/bin/env python3
"""sybil_showdown.py -- one worker credential, two registrations: does the
final showdown (the "second worker" that re-times the best, integrity.md)
confirm a forged best on the same credential's second registration?

Cluster: private PostgreSQL + coordinator (tests/e2e/kfe2e.py), an honest
worker H (its own worker credential, the real harness), and two kf-worker
processes A and B sharing ONE hostile worker credential X, both running
forge_harness.py as their KF_HARNESS (every eval time / 3, every showdown
time / 3 and speedup x 3).  A softmax campaign; we then print who measured
what, who ran the showdown, and what the campaign reports as its best.

Usage: KF_BIN_DIR=/work/main/build python3 sybil_showdown.py [honest|class]
  honest: also start the honest worker H (default: only A and B)
  class:  H, and only A, which registers a device class of its own
"""
import json, os, sys, time
sys.path.insert(0, "/work/main/tests/e2e")
import kfe2e, kfcampaign
from kfe2e import check

HERE = os.path.dirname(os.path.abspath(__file__))
WITH_H = "honest" in sys.argv[1:] or "class" in sys.argv[1:]
# class: H honest, and ONE hostile worker A that registers a device class
# of its own (--device-class, a CPU model name of its choice); no B
OWN_CLASS = "class" in sys.argv[1:]
OUT = os.path.join(HERE, "results", "sybil_%s.txt" % (
    "class" if OWN_CLASS else "h" if WITH_H else "noh"))


def body(c):
    c.start_pg()
    c.start_coordinator()
    tf = {}
    for n in ("honest", "hostile"):
        tf[n] = os.path.join(c.dir, n + ".token")
        c.kf("token", "create", "--role", "worker", "--name", "rt-" + n,
             "--out", tf[n], "--db", c.conninfo)
    os.environ["RT_FORGE_LOG"] = os.path.join(c.dir, "forge.log")
    if WITH_H:
        c.start_worker("H", slots=1, extra=("--token-file", tf["honest"]),
                       env={"KF_TOKEN": ""})
    for n in (("A",) if OWN_CLASS else ("A", "B")):
        c.start_worker(n, slots=1, extra=("--token-file", tf["hostile"]) +
                       (("--device-class", "AMD EPYC 9999 (fast)")
                        if OWN_CLASS else ()),
                       env={"KF_TOKEN": "", "KF_HARNESS":
                            os.path.join(HERE, "forge_harness.py"),
                            "RT_FORGE_LOG": os.path.join(c.dir, "forge.log")})
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") ==
                     (2 if OWN_CLASS else 3 if WITH_H else 2), 60, "workers registered")
    cid = kfcampaign.submit(c, kfcampaign.problem_dir("softmax"), evals=8,
                            minutes=4, population=4)
    kfcampaign.wait_done(c, cid, 240)
    q = [
        ("workers (id, name, token)", "SELECT w.id, w.name, t.name FROM "
         "workers w LEFT JOIN api_tokens t ON t.id = w.token_id ORDER BY 1"),
        ("evaluations (cand, worker, outcome, speedup)",
         "SELECT candidate_id, worker_id, outcome, round(speedup::numeric,3)"
         " FROM evaluations WHERE campaign_id = %d ORDER BY speedup DESC "
         "NULLS LAST" % cid),
        ("showdown task avoid_worker", "SELECT t.id, t.avoid_worker, "
         "t.state FROM tasks t WHERE t.kind = 'showdown'"),
        ("showdowns (id, state, worker, reason)", "SELECT id, state, "
         "worker_id, reason FROM showdowns WHERE campaign_id = %d" % cid),
        ("showdown_entries (cand, outcome, speedup)", "SELECT candidate_id,"
         " outcome, round(speedup::numeric,3) FROM showdown_entries se JOIN "
         "showdowns s ON s.id = se.showdown_id WHERE s.campaign_id = %d" % cid),
        ("campaign (state, best, from_showdown, showdown)", "SELECT state, "
         "best_candidate_id, best_from_showdown, showdown FROM campaigns "
         "WHERE id = %d" % cid),
    ]
    lines = []
    for title, sql in q:
        lines.append("## " + title)
        for r in c.psql(sql):
            lines.append("  " + " | ".join(r))
    lines.append("## kf campaign status (best)")
    out = c.kf("campaign", "status", str(cid), "--coordinator",
               c.target, check_rc=False)
    try:
        j = {"best": out}
        lines.append("  " + json.dumps(j.get("best", j))[:1500])
    except Exception:
        lines.append("  " + out[:1500])
    with open(os.environ["RT_FORGE_LOG"]) as f:
        lines.append("## forge log")
        lines += ["  " + l.rstrip() for l in f]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


kfe2e.run("rt3bsy", body, time_limit=600)
