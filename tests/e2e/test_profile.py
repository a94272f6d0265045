# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_profile.py -- diagnoses and profiles, end to end.

PostgreSQL + coordinator + a CPU worker; `kf campaign submit --profile all`
a CPU problem with a small budget and wait until the campaign ends.  Then:
- every verified, timed evaluation measured for it has an eval_profiles
  row (migration 0007) with a bottleneck class and its numbers: the
  bandwidth fraction is the achieved bandwidth the harness reported over
  the ceiling it measured, the detail names the class and the percentage;
- every one carries the profile status the CPU harness reports (no
  hardware profiler on this backend: "unavailable", with its reason), so
  the report's profile went harness -> worker -> coordinator -> store;
- no failed evaluation has a diagnosis;
- `kf campaign profile ID CANDIDATE` prints the diagnosis and profile of
  the best, `--json` gives the stored numbers, status shows the best's
  diagnosis, export carries a diagnosis on every ok row;
- bad input is refused with exit 2 (a candidate that is not a number, a
  bad --profile policy), an unknown candidate exits 1.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

EVALS = 10
BOUNDS = ("memory", "compute", "latency", "launch")


def run_kf(c, *args):
    r = subprocess.run([c.path("kf")] + list(args), env=c.env,
                       stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=120)
    return r.returncode, r.stdout.decode(), r.stderr.decode(errors="replace")


def body(c):
    c.start_pg()
    c.start_coordinator()
    w = c.start_worker("w-a", slots=1)
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 1,
                     30, "the worker registered")
    remote = ["--coordinator", c.target]

    # a bad policy never reaches the coordinator; the coordinator refuses
    # one too (checked by sending it past the CLI is not possible: the
    # CLI is the client) -- exit 2 names the option
    rc, _, err = run_kf(c, "campaign", "submit", kfcampaign.problem_dir(
        "vecsum"), "--profile", "top:0", *remote)
    check(rc == 2 and "--profile" in err, "bad policy: exit %d: %s"
          % (rc, err))

    cid = kfcampaign.submit(c, kfcampaign.problem_dir("vecsum"),
                            evals=EVALS, minutes=10,
                            extra=("--profile", "all"))
    check(c.scalar("SELECT profile FROM campaigns WHERE id = %d" % cid)
          == "all", "the campaign's policy was not stored")
    st = kfcampaign.wait_done(c, cid, 150, watch=[c.coord, w])
    check(st == "done", "campaign %d ended %r, not done" % (cid, st))

    ok = c.psql(
        "SELECT e.id, e.candidate_id, e.achieved_gbps,"
        " (e.result IS NOT NULL) FROM evaluations e WHERE e.campaign_id = %d"
        " AND e.outcome = 'ok' AND e.task_id IS NOT NULL ORDER BY e.id" % cid)
    check(ok, "no ok evaluation measured for campaign %d" % cid)
    for eid, cand, gbps, _ in ok:
        rows = c.psql(
            "SELECT bound, bandwidth_fraction, compute_fraction, detail,"
            " profiled, status, reason FROM eval_profiles WHERE"
            " evaluation_id = %s" % eid)
        check(len(rows) == 1, "evaluation %s (candidate %s) has %d"
              " eval_profiles rows" % (eid, cand, len(rows)))
        bound, bw, fl, detail, profiled, status, reason = rows[0]
        check(bound in BOUNDS, "evaluation %s: bound %r" % (eid, bound))
        check(float(bw) > 0 and float(fl) >= 0,
              "evaluation %s: fractions %r %r" % (eid, bw, fl))
        check(bound in detail and "%" in detail,
              "evaluation %s: detail %r" % (eid, detail))
        check(profiled == "f", "a CPU diagnosis used counters: %s" % eid)
        check(status == "unavailable" and "cpu backend" in reason,
              "evaluation %s: profile status %r (%r)" % (eid, status, reason))
        # the fraction is the harness's achieved bandwidth over its ceiling
        ceil = float(c.scalar(
            "SELECT (w.device->>'copy_gbps')::float8 FROM workers w JOIN"
            " evaluations e ON e.worker_id = w.id WHERE e.id = %s" % eid))
        check(float(bw) * ceil <= float(gbps) * 1.0001,
              "evaluation %s: fraction %s of a ceiling >= copy %s is more"
              " than the achieved %s GB/s" % (eid, bw, ceil, gbps))
    failed_diag = c.count(
        "SELECT count(*) FROM evaluations e JOIN eval_profiles p ON"
        " p.evaluation_id = e.id WHERE e.campaign_id = %d AND e.outcome <>"
        " 'ok' AND p.bound IS NOT NULL" % cid)
    check(failed_diag == 0, "%d failed evaluations have a diagnosis"
          % failed_diag)

    best = json.loads(c.kf("campaign", "best", str(cid), "--json", *remote))
    bc = best["best"]["candidate_id"]
    db_bound, db_bw = c.psql(
        "SELECT p.bound, p.bandwidth_fraction FROM evaluations e JOIN"
        " eval_profiles p ON p.evaluation_id = COALESCE(e.reused_from, e.id)"
        " WHERE e.campaign_id = %d AND e.candidate_id = %d" % (cid, bc))[0]

    out = c.kf("campaign", "profile", str(cid), str(bc), *remote)
    c.log("kf campaign profile %d %d:\n%s" % (cid, bc, out))
    check("candidate %d" % bc in out and "diagnosis: %s-bound" % db_bound
          in out, "profile output lacks the diagnosis: %r" % out)
    check("profile: unavailable" in out and "cpu backend" in out,
          "profile output lacks the profile status: %r" % out)
    j = json.loads(c.kf("campaign", "profile", str(cid), str(bc), "--json",
                        *remote))
    check(j["candidate_id"] == bc and len(j["evaluations"]) == 1,
          "profile --json: %r" % j)
    d = j["evaluations"][0]["diagnosis"]
    check(d["bound"] == db_bound and
          abs(d["bandwidth_fraction"] - float(db_bw)) < 1e-9,
          "profile --json diagnosis %r, database %s %s" % (d, db_bound, db_bw))
    p = j["evaluations"][0]["profile"]
    check(p["status"] == "unavailable" and p["dram_pct"] is None,
          "profile --json profile %r" % p)

    status = c.kf("campaign", "status", str(cid), *remote)
    check("diagnosis of the best" in status and "-bound" in status,
          "status shows no diagnosis:\n%s" % status)
    s = json.loads(c.kf("campaign", "status", str(cid), "--json", *remote))
    check(s["top"][0]["diagnosis"]["bound"] in BOUNDS,
          "status --json top[0]: %r" % s["top"][0])

    rows = [json.loads(x) for x in
            c.kf("campaign", "export", str(cid), *remote).splitlines()]
    for r in rows:
        if r["outcome"] == "ok":
            check(r["diagnosis"] and r["diagnosis"]["bound"] in BOUNDS,
                  "export: ok row without a diagnosis: %r" % r)
        else:
            check(r["diagnosis"] is None, "export: a failed row with a"
                  " diagnosis: %r" % r)

    rc, _, err = run_kf(c, "campaign", "profile", str(cid), "abc", *remote)
    check(rc == 2 and "not a candidate id" in err,
          "profile of 'abc': exit %d: %s" % (rc, err))
    rc, _, err = run_kf(c, "campaign", "profile", str(cid), "999999", *remote)
    check(rc == 1 and "no evaluation of candidate 999999" in err,
          "profile of an unknown candidate: exit %d: %s" % (rc, err))
    rc, _, err = run_kf(c, "campaign", "profile", str(cid), *remote)
    check(rc == 2, "profile without a candidate: exit %d: %s" % (rc, err))
    rc, out, _ = run_kf(c, "campaign", "--help")
    check(rc == 0 and "profile ID CANDIDATE" in out, "--help lacks profile")
    for p in (w, c.coord):
        check(p.alive(), "%s died" % p.name)


if __name__ == "__main__":
    kfe2e.run("profile", body, time_limit=300)
