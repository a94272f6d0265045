# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_identity.py -- a stored measurement is reused only under
its exact identity, with real processes: PostgreSQL, a coordinator and a
worker that registered its `kf-harness identity`.

Campaigns of two evaluations each (the two templates' defaults) of vecsum,
one after another on the same cluster, as a user re-running `kf run` on one
data directory would:

 1. vecsum: both measured (2 tasks).
 2. vecsum again: both reused, no task -- same problem, same environment.
 3. vecsum with bench.N edited (1,048,576 -> 65,536), same name and
    files: both measured again, nothing reused.
 4. a different problem with the same template files (a copy whose
    reference returns 2 x sum): nothing reused; both templates are wrong
    for it (wrong_answer), and the campaign has no best.
 5. vecsum --fresh: both measured again.
 6. vecsum: both reused, each the median of the two measurements of its
    key (campaigns 1 and 5), "measurements": 2, repetitions summed.

Every evaluation carries the environment of the worker, whose harness
build is the one `kf-harness identity` prints.
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402


def copy_problem(c, src, name, edit_spec=None, edit_ref=None):
    d = os.path.join(c.dir, name)
    shutil.copytree(src, d)
    if edit_spec:
        p = os.path.join(d, "spec.json")
        with open(p) as f:
            spec = json.load(f)
        edit_spec(spec)
        with open(p, "w") as f:
            json.dump(spec, f, indent=1)
    if edit_ref:
        p = os.path.join(d, "reference.c")
        with open(p) as f:
            text = f.read()
        new = edit_ref(text)
        check(new != text, "the reference edit changed nothing")
        with open(p, "w") as f:
            f.write(new)
    return d


def run_campaign(c, problem, workers, extra=()):
    # One candidate in each showdown: this test is about the search's
    # measurements, and a short showdown keeps it quick.
    cid = kfcampaign.submit(c, problem, evals=2, population=2, seed=3,
                            extra=("--showdown", "1") + tuple(extra))
    st = kfcampaign.wait_done(c, cid, 240, watch=[c.coord] + workers)
    check(st == "done", "campaign %d ended %r" % (cid, st))
    return cid


def tasks(c, cid):
    return c.count("SELECT count(*) FROM tasks WHERE kind = 'eval' AND "
                   "campaign_id = %d" % cid)


def reused(c, cid):
    return c.count("SELECT count(*) FROM evaluations WHERE campaign_id = %d"
                   " AND reused_from IS NOT NULL" % cid)


def body(c):
    c.start_pg()
    c.start_coordinator()
    workers = [c.start_worker("w", slots=2)]
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 1,
                     60, "the worker registered")
    # The worker registered the identity its harness prints.
    ident = json.loads(subprocess.run(
        [c.path("kf-harness"), "identity"], capture_output=True, check=True,
        timeout=60).stdout)
    env = c.psql("SELECT e.harness_build, e.toolchain FROM workers w JOIN "
                 "environments e ON e.id = w.environment_id")
    check(env and env[0][0] == ident["harness_build"],
          "worker environment %r, kf-harness identity %r" % (env, ident))
    check(env[0][1] == ident["cc"], "worker toolchain %r, identity cc %r"
          % (env[0][1], ident["cc"]))

    vecsum = kfcampaign.problem_dir("vecsum")

    c1 = run_campaign(c, vecsum, workers)
    check(tasks(c, c1) == 2 and reused(c, c1) == 0,
          "campaign 1: %d tasks, %d reused" % (tasks(c, c1), reused(c, c1)))
    check(c.count("SELECT count(*) FROM evaluations e JOIN environments v ON"
                  " v.id = e.environment_id WHERE e.campaign_id = %d AND"
                  " v.harness_build = '%s'" % (c1, ident["harness_build"]))
          == 2, "campaign 1's evaluations lack the worker's environment")

    c2 = run_campaign(c, vecsum, workers)
    check(tasks(c, c2) == 0 and reused(c, c2) == 2,
          "the same problem again: %d tasks, %d reused (want 0, 2)"
          % (tasks(c, c2), reused(c, c2)))

    def smaller_bench(spec):
        spec["sizes"]["bench"]["N"] = 65536
    edited = copy_problem(c, vecsum, "vecsum-edited", edit_spec=smaller_bench)
    c3 = run_campaign(c, edited, workers)
    check(tasks(c, c3) == 2 and reused(c, c3) == 0,
          "after editing bench.N: %d tasks, %d reused (want 2, 0)"
          % (tasks(c, c3), reused(c, c3)))

    def twice(text):
        return re.sub(r"\(float\)s;", "(float)(2.0 * s);", text)
    other = copy_problem(c, vecsum, "vecsum-2x", edit_ref=twice)
    c4 = run_campaign(c, other, workers)
    check(tasks(c, c4) == 2 and reused(c, c4) == 0,
          "another problem, same templates: %d tasks, %d reused (want 2, 0)"
          % (tasks(c, c4), reused(c, c4)))
    outcomes = c.psql("SELECT outcome, count(*) FROM evaluations WHERE "
                      "campaign_id = %d GROUP BY 1" % c4)
    check(outcomes == [["wrong_answer", "2"]],
          "the 2x problem's evaluations: %r (want 2 wrong_answer)" % outcomes)
    r = c.kf("campaign", "best", str(c4), "--coordinator", c.target, check_rc=False)
    check(not r.strip(), "kf campaign best wrote a kernel for the 2x problem")

    c5 = run_campaign(c, vecsum, workers, extra=("--fresh",))
    check(tasks(c, c5) == 2 and reused(c, c5) == 0,
          "--fresh: %d tasks, %d reused (want 2, 0)"
          % (tasks(c, c5), reused(c, c5)))
    same_keys = c.count(
        "SELECT count(*) FROM eval_keys x JOIN eval_keys y ON"
        " x.source_sha256 = y.source_sha256 AND x.flags = y.flags WHERE"
        " x.campaign_id = %d AND y.campaign_id = %d AND x.task_id IS NOT NULL"
        " AND y.task_id IS NOT NULL" % (c1, c5))
    check(same_keys == 2, "--fresh measured %d of campaign 1's keys again"
          % same_keys)

    c6 = run_campaign(c, vecsum, workers)
    check(tasks(c, c6) == 0 and reused(c, c6) == 2,
          "after --fresh: %d tasks, %d reused (want 0, 2)"
          % (tasks(c, c6), reused(c, c6)))
    rows = c.psql(
        "SELECT e.measurements, e.time_ns_median, e.repetitions,"
        " (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY m.time_ns_median)"
        "  FROM evaluations m JOIN candidates mk ON mk.id = m.candidate_id"
        "  WHERE m.campaign_id IN (%d, %d) AND mk.source_sha256 ="
        "  k.source_sha256 AND mk.flags = k.flags),"
        " (SELECT sum(m.repetitions) FROM evaluations m JOIN candidates mk"
        "  ON mk.id = m.candidate_id WHERE m.campaign_id IN (%d, %d) AND"
        "  mk.source_sha256 = k.source_sha256 AND mk.flags = k.flags)"
        " FROM evaluations e JOIN candidates k ON k.id = e.candidate_id"
        " WHERE e.campaign_id = %d AND e.outcome = 'ok'"
        % (c1, c5, c1, c5, c6))
    check(len(rows) == 2, "campaign 6: ok rows %r; evaluations of"
          " campaigns 1, 5, 6: %r" % (rows, c.psql(
              "SELECT campaign_id, candidate_id, outcome, stage,"
              " left(reason, 200), measurements, reused_from IS NOT NULL"
              " FROM evaluations WHERE campaign_id IN (%d, %d, %d)"
              " ORDER BY id" % (c1, c5, c6))))
    for n, med, reps, want_med, want_reps in rows:
        check(n == "2", "campaign 6 reused %s measurements, want 2" % n)
        check(abs(float(med) - float(want_med)) <= 1e-6 * float(want_med),
              "aggregated median %s, want %s" % (med, want_med))
        check(reps == want_reps, "repetitions %s, want %s" % (reps,
                                                             want_reps))
    st = json.loads(c.kf("campaign", "status", str(c6), "--json", "--top",
                         "5", "--coordinator", c.target))
    check(all(t["measurements"] == 2 and t["reused"] for t in st["top"]),
          "kf campaign status of campaign 6: %r" % st["top"])
    c.log("identity: reuse exact, edits and other problems re-measured,"
          " --fresh aggregated")
    kfcampaign.check_no_repeats(c)
    for p in workers + [c.coord]:
        check(p.alive(), "%s died" % p.name)


if __name__ == "__main__":
    kfe2e.run("identity", body, time_limit=600)
