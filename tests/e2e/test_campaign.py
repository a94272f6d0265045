# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_campaign.py -- one search campaign, end to end.

PostgreSQL + coordinator + 2 workers; `kf campaign submit` a CPU problem
with a small budget and wait until the campaign ends.  Then, through
psql: some evaluation is ok, faster than the reference and passed the
verify and time stages; the best candidate's source is stored; no task
and no (source hash, flags, device class) was evaluated twice; and the
CLI's views (`best --json`, `status --json`, `export`) agree with the
database.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

EVALS = 20


def body(c):
    c.start_pg()
    c.start_coordinator()
    workers = [c.start_worker(n, slots=1) for n in ("w-a", "w-b")]
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 2,
                     30, "2 workers registered")
    cid = kfcampaign.submit(c, kfcampaign.problem_dir(), evals=EVALS)
    st = kfcampaign.wait_done(c, cid, 150, watch=[c.coord] + workers)
    check(st == "done", "campaign %d ended %r, not done" % (cid, st))
    n = kfcampaign.n_evals(c, cid)
    check(0 < n <= EVALS, "%d evaluations for a budget of %d" % (n, EVALS))

    kfcampaign.check_verified_faster(c, cid)
    kfcampaign.check_no_repeats(c)
    kfcampaign.check_every_task_once(c, cid)
    kfcampaign.check_best(c, cid)

    remote = ["--coordinator", c.target]
    s = json.loads(c.kf("campaign", "status", str(cid), "--json", *remote))
    check(s["campaign_id"] == cid and s["state"] == "done",
          "kf campaign status: %r" % s)
    check(s["evals_done"] == n, "status says %d evaluations, database %d"
          % (s["evals_done"], n))
    check(s["found_faster"] and s["best_speedup"] > 1,
          "status: found_faster %r, best %r" % (s["found_faster"],
                                                s["best_speedup"]))
    check(s["top"] and s["top"][0]["outcome"] == "ok",
          "status top list: %r" % s["top"][:1])

    lines = c.kf("campaign", "export", str(cid), *remote).splitlines()
    rows = [json.loads(x) for x in lines]
    check(len(rows) == n, "export wrote %d lines for %d evaluations"
          % (len(rows), n))
    tasks = {r["task_id"] for r in rows}
    check(len(tasks) == n, "export repeats tasks")

    # watch on an ended campaign returns at once, exit 0 (found faster).
    w = json.loads(c.kf("campaign", "watch", str(cid), "--json", *remote))
    check(w["state"] == "done", "watch --json: %r" % w["state"])

    # Unknown campaign: exit 2, not a crash.
    r = subprocess.run([c.path("kf"), "campaign", "status", "999999"] +
                       remote, env=c.env, capture_output=True, timeout=60)
    check(r.returncode == 2, "status of an unknown campaign exited %d: %s"
          % (r.returncode, r.stderr.decode(errors="replace")))
    # A roofline target past 2 is a usage error naming the flag and its
    # range (1 < F <= 2 is allowed: a read-mostly problem passes a copy).
    r = subprocess.run([c.path("kf"), "campaign", "submit",
                        kfcampaign.problem_dir(), "--target-roofline", "2.5"]
                       + remote, env=c.env, capture_output=True, timeout=60)
    check(r.returncode == 2 and
          b"--target-roofline '2.5': expected 0 < F <= 2" in r.stderr,
          "submit --target-roofline 2.5 exited %d: %s"
          % (r.returncode, r.stderr.decode(errors="replace")))
    for p in workers + [c.coord]:
        check(p.alive(), "%s died" % p.name)


if __name__ == "__main__":
    kfe2e.run("campaign", body, time_limit=240)
