# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/kfcampaign.py -- campaign helpers on top of kfe2e.Cluster.

Stdlib only.  What the campaign tests share: which problem to run, how to
submit and wait for a campaign, a minimal protobuf reader for the packed
EvalResult stored in evaluations.result, and the invariants every finished
campaign must satisfy (checked through psql, never through the code under
test).

KF_E2E_PROBLEM picks the problem under problems/cpu (default: softmax).
"""
import json
import os
import struct

import kfe2e
from kfe2e import check

# proto enum Outcome
OUTCOME_OK = 1


def problem_dir(name=None):
    src = os.environ.get("KF_SOURCE_DIR") or os.path.abspath(
        os.path.join(os.path.dirname(__file__), "..", ".."))
    name = name or os.environ.get("KF_E2E_PROBLEM", "softmax")
    d = os.path.join(src, "problems", "cpu", name)
    check(os.path.isfile(os.path.join(d, "spec.json")),
          "problem %s has no spec.json" % d)
    return d


def far_from_roofline(c, name):
    """A copy of problem `name` (in the test's directory) whose spec counts
    a quarter of the bytes its kernels move.  A test that needs a campaign
    to end on its budget, or to stay running, uses it: a CPU vecsum of
    4 MB sits in cache and an honest kernel reached 95-100% of the
    measured bandwidth on some draws, which ends the class on its
    target roofline (or its diagnosis: memory-bound at >= 97%) first."""
    import shutil
    d = os.path.join(c.dir, name + "-quarter-bytes")
    shutil.copytree(problem_dir(name), d)
    path = os.path.join(d, "spec.json")
    with open(path) as f:
        spec = json.load(f)
    spec["bytes"] = "(%s) / 4" % spec["bytes"]
    with open(path, "w") as f:
        json.dump(spec, f, indent=2)
    return d


def source_dir():
    return os.environ.get("KF_SOURCE_DIR") or os.path.abspath(
        os.path.join(os.path.dirname(__file__), "..", ".."))


# ------------------------------------------------------------ protobuf --

def _varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def pb_fields(buf):
    """{field number: [values]}: varints as int, fixed64 as float,
    length-delimited as bytes, fixed32 as float."""
    out = {}
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            v = struct.unpack_from("<d", buf, i)[0]
            i += 8
        elif wt == 2:
            n, i = _varint(buf, i)
            v = bytes(buf[i:i + n])
            i += n
        elif wt == 5:
            v = struct.unpack_from("<f", buf, i)[0]
            i += 4
        else:
            raise kfe2e.TestFailure("protobuf wire type %d at %d" % (wt, i))
        out.setdefault(num, []).append(v)
    return out


def eval_result_stages(hexbytes):
    """Stages of a packed EvalResult: [(stage, outcome, reason)]."""
    f = pb_fields(bytes.fromhex(hexbytes))
    stages = []
    for raw in f.get(2, []):
        s = pb_fields(raw)
        stages.append((s.get(1, [b""])[0].decode(), s.get(2, [0])[0],
                       s.get(3, [b""])[0].decode(errors="replace")))
    return stages


# ------------------------------------------------------------ campaigns --

def submit(c, problem, evals=20, minutes=3, population=8, seed=7,
           extra=()):
    out = c.kf("campaign", "submit", problem, "--evals", str(evals),
               "--minutes", str(minutes), "--population", str(population),
               "--seed", str(seed), "--coordinator", c.target, *extra)
    cid = int(out.strip())
    c.log("campaign %d submitted (%s, %d evals)" % (cid, problem, evals))
    return cid


def state(c, cid):
    return c.scalar("SELECT state FROM campaigns WHERE id = %d" % cid)


def n_evals(c, cid):
    return c.count("SELECT count(*) FROM evaluations WHERE campaign_id = %d"
                   % cid)


def wait_done(c, cid, stall, watch=()):
    """Waits until the campaign ended: its search and its final showdown
    (state neither "running" nor "showdown").  How long a campaign takes
    depends on the machine and its load, so there is no total bound: it
    fails when `stall` seconds (times kfe2e.SLACK) pass without any task
    of the campaign finishing or its state changing."""
    def ended():
        for p in watch:
            check(p.alive(), "%s (pid %d) died: exit %s"
                  % (p.name, p.pid, p.popen.returncode))
        s = state(c, cid)
        return s not in ("running", "showdown") and s

    def progress():
        return (state(c, cid), c.count(
            "SELECT count(*) FROM tasks WHERE campaign_id = %d AND state IN"
            " ('done', 'failed')" % cid))
    s = kfe2e.wait_progress(ended, progress, stall,
                            "campaign %d to end" % cid)
    c.log("campaign %d ended: %s, %d evaluations" % (cid, s, n_evals(c, cid)))
    return s


def check_no_repeats(c):
    """No evaluation repeated within a campaign: one per task, one per
    (campaign, source hash, flags, device class).  (Across campaigns a key
    may be measured again: another problem, another environment, --fresh,
    a timing-dependent verdict.)"""
    dup_task = c.psql("SELECT task_id, count(*) FROM evaluations "
                      "WHERE task_id IS NOT NULL "
                      "GROUP BY task_id HAVING count(*) > 1")
    check(not dup_task, "evaluations sharing a task: %r" % dup_task[:5])
    dup_key = c.psql(
        "SELECT e.campaign_id, k.source_sha256, k.flags, e.device_class_id,"
        " count(*) FROM evaluations e JOIN candidates k ON k.id ="
        " e.candidate_id GROUP BY 1, 2, 3, 4 HAVING count(*) > 1")
    check(not dup_key, "evaluations of the same (campaign, source, flags, "
          "device class): %r" % dup_key[:5])


def check_every_task_once(c, cid):
    """Every done eval task of the campaign has exactly one evaluation, and
    every evaluation belongs to a done task of the campaign."""
    bad = c.psql(
        "SELECT t.id, t.state, (SELECT count(*) FROM evaluations e "
        "WHERE e.task_id = t.id) AS n FROM tasks t WHERE t.campaign_id = %d "
        "AND t.kind = 'eval' AND t.state = 'done' AND (SELECT count(*) "
        "FROM evaluations e WHERE e.task_id = t.id) <> 1" % cid)
    check(not bad, "done eval tasks without exactly one evaluation: %r"
          % bad[:5])
    orphans = c.psql(
        "SELECT e.id, e.task_id, t.state, t.campaign_id FROM evaluations e "
        "JOIN tasks t ON t.id = e.task_id WHERE e.campaign_id = %d AND "
        "(t.state <> 'done' OR t.campaign_id IS DISTINCT FROM e.campaign_id)"
        % cid)
    check(not orphans, "evaluations of unfinished or foreign tasks: %r"
          % orphans[:5])


def check_verified_faster(c, cid):
    """At least one ok evaluation faster than the reference whose stored
    stages passed verify and time.  Returns the number of such rows."""
    rows = c.psql(
        "SELECT id, candidate_id, speedup, encode(result, 'hex') FROM "
        "evaluations WHERE campaign_id = %d AND outcome = 'ok' AND "
        "speedup > 1 ORDER BY speedup DESC" % cid)
    check(rows, "no ok evaluation with speedup > 1 in campaign %d; "
          "outcomes: %r" % (cid, c.psql(
              "SELECT outcome, count(*), max(reason) FROM evaluations WHERE "
              "campaign_id = %d GROUP BY 1" % cid)))
    verified = 0
    for eid, cand, speedup, hexres in rows:
        check(hexres, "evaluation %s has no stored EvalResult" % eid)
        stages = eval_result_stages(hexres)
        got = {s: o for s, o, _ in stages}
        check(got.get("verify") == OUTCOME_OK and
              got.get("time") == OUTCOME_OK,
              "ok evaluation %s (speedup %s) lacks verify+time ok stages: %r"
              % (eid, speedup, stages))
        verified += 1
    c.log("%d verified evaluations faster than the reference (best %.2fx)"
          % (verified, float(rows[0][2])))
    return verified


def check_best(c, cid):
    """The campaign's best candidate has its source stored, is an ok
    evaluation, and `kf campaign best --json` agrees with the database.
    Returns the JSON."""
    best_id = c.scalar("SELECT coalesce(best_candidate_id, 0) FROM campaigns "
                       "WHERE id = %d" % cid)
    check(int(best_id) > 0, "campaign %d has no best candidate" % cid)
    row = c.psql("SELECT k.source, k.source_sha256, e.speedup, e.outcome "
                 "FROM candidates k JOIN evaluations e ON e.candidate_id = "
                 "k.id WHERE k.id = %s" % best_id)
    check(row, "best candidate %s has no evaluation" % best_id)
    # psql -At prints newlines inside values verbatim: ask for the hash
    # and length separately.
    src_len = c.count("SELECT length(source) FROM candidates WHERE id = %s"
                      % best_id)
    check(src_len > 0, "best candidate %s has no source stored" % best_id)
    sha_ok = c.scalar(
        "SELECT encode(sha256(convert_to(source, 'UTF8')), 'hex') = "
        "source_sha256 FROM candidates WHERE id = %s" % best_id)
    check(sha_ok == "t", "best candidate's source_sha256 does not match "
          "its source")
    outcome, speedup = c.psql(
        "SELECT e.outcome, e.speedup FROM evaluations e WHERE "
        "e.candidate_id = %s ORDER BY e.speedup DESC NULLS LAST LIMIT 1"
        % best_id)[0]
    check(outcome == "ok", "best candidate's evaluation is %s" % outcome)
    # Once the final showdown decided, its numbers are the campaign's.
    sd = c.psql("SELECT se.speedup FROM showdown_entries se JOIN showdowns"
                " s ON s.id = se.showdown_id JOIN campaigns k ON k.id ="
                " s.campaign_id WHERE k.id = %d AND k.best_from_showdown"
                " AND s.state = 'done' AND se.outcome = 'ok' AND"
                " se.candidate_id = %s" % (cid, best_id))
    if sd:
        speedup = sd[0][0]
    check(float(speedup) > 1, "best candidate's speedup is %s" % speedup)

    j = json.loads(c.kf("campaign", "best", str(cid), "--json",
                        "--coordinator", c.target))
    check(j["best"]["candidate_id"] == int(best_id),
          "kf campaign best says candidate %r, the database %s"
          % (j["best"]["candidate_id"], best_id))
    check(j["best"]["outcome"] == "ok", "kf campaign best: outcome %r"
          % j["best"]["outcome"])
    check(abs(j["best"]["speedup"] - float(speedup)) <= 1e-6 * float(speedup),
          "kf campaign best speedup %r, database %s" % (j["best"]["speedup"],
                                                        speedup))
    src = c.scalar("SELECT encode(convert_to(source, 'UTF8'), 'hex') FROM "
                   "candidates WHERE id = %s" % best_id)
    check(j["source"] == bytes.fromhex(src).decode(),
          "kf campaign best --json source differs from the stored source")
    c.log("best: candidate %s, %.3fx, agrees with kf campaign best"
          % (best_id, float(speedup)))
    return j
