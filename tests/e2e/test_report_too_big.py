# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_report_too_big.py -- a single result too large for the
coordinator is stored as a small infra_error record that says so, not
dropped.

worker/worker.c on_reported -> replace_refused: a report call refused as a
whole (larger than the coordinator's --max-msg-bytes, or malformed) is
split one result per call; a single result still refused can never be
delivered as it is.  It used to be dropped, and its task then sat leased
until the lease expired and failed as "lease expired", with nothing
stored about why.  Now the worker sends, once, a stand-in in its place:
outcome infra_error at stage "report", no output, a reason naming the
refused result and the coordinator's error.  The task's failure is
stored with its reason, and the coordinator's retry policy applies.

How it happens here, with real processes only: kf-worker runs the real
kf-harness through KF_HARNESS (a documented setting) via a wrapper that
appends 48 KiB of a protobuf field this version does not know to every
EvalResult (as a newer harness might send; the worker passes unknown
fields on), and the coordinator takes at most 32 KiB per message
(--max-msg-bytes).  Leases last ten minutes, so a dropped result would
keep its task leased far beyond this test's limits.

Checked, while checksum tasks run on the same worker:
  - every eval task of the campaign ends failed after its two attempts
    (--eval-attempts 2), each attempt's result replaced: last_error says
    the result was refused by the coordinator as a whole, and why
    ("large"); each attempt's stand-in stored as its result (infra_error
    at stage "report", no output); never "lease expired";
  - the worker logged one replacement per attempt and dropped nothing
    ("refused for good" never appears); its outbox is back to 0;
  - every checksum task ends done with exactly one correct result;
  - every process stays up.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # importing a test module: no .pyc beside it
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402
from test_report_refused import (EVAL_EDIT, eval_tasks,  # noqa: E402
                                 outbox, wait_done)

MAX_MSG = 32768
PAD = 48 * 1024

WRAPPER = r"""#!%(python)s
# The real kf-harness; for `eval`, PAD bytes of field 999 (unknown to this
# version) appended to its EvalResult.
import os
import subprocess
import sys

REAL = %(real)r
PAD = %(pad)d
if sys.argv[1:2] != ["eval"]:
    os.execv(REAL, [REAL] + sys.argv[1:])
""" + EVAL_EDIT + r"""

run_editing(lambda msg: msg + field(999, b"z" * PAD))
"""


def body(c):
    path = os.path.join(c.dir, "kf-harness-padded")
    with open(path, "w") as f:
        f.write(WRAPPER % {"python": sys.executable,
                           "real": c.path("kf-harness"), "pad": PAD})
    os.chmod(path, 0o755)

    c.start_pg()
    c.start_coordinator(lease_ttl_ms=600000,
                        extra=("--max-msg-bytes", str(MAX_MSG),
                               "--eval-attempts", "2"))
    mport = kfe2e.free_port()
    w = c.start_worker("w-big", slots=2,
                       extra=("--metrics-listen", "127.0.0.1:%d" % mport),
                       env={"KF_HARNESS": path})
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 1,
                     60, "the worker registered")
    cid = kfcampaign.submit(c, kfcampaign.problem_dir("vecsum"), evals=2,
                            minutes=10, population=2, seed=3)
    ids = c.submit(40, sleep_ms=20, prefix="beside")
    watch = [c.coord, w]

    def judged():
        for p in watch:
            check(p.alive(), "%s died: exit %s" % (p.name,
                                                   p.popen.returncode))
        rows = eval_tasks(c, cid)
        return len(rows) >= 2 and all(r[1] == "failed" for r in rows) and rows
    # A dropped result would leave its task leased for the 600 s lease,
    # then failed as "lease expired", which the checks below refuse.
    rows = kfe2e.wait_until(judged, 500, "every eval task failed with its "
                            "reason", interval=0.5)
    c.log("eval tasks: %r" % rows)
    wait_done(c, ids, watch)
    c.check_exactly_once(ids)
    out = c.kf("campaign", "stop", str(cid), "--coordinator", c.target)
    c.log("campaign stopped: %s" % out.strip())
    kfe2e.wait_until(lambda: outbox(mport) == 0, 60,
                     "the worker's outbox empty")

    rows = eval_tasks(c, cid)
    for tid, state, attempt, err, nres in rows:
        check(state == "failed" and attempt == "2",
              "eval task %s: %s after %s attempts" % (tid, state, attempt))
        # each attempt's stand-in is stored: infra_error at "report", no
        # output
        res = c.psql("SELECT attempt, outcome, stage, length(output)"
                     " FROM results WHERE task_id = %s ORDER BY attempt"
                     % tid)
        check(res == [["1", "infra_error", "report", "0"],
                      ["2", "infra_error", "report", "0"]],
              "eval task %s: stored results %r" % (tid, res))
        check("refused by the coordinator as a whole" in err and
              "large" in err.lower() and "lease expired" not in err,
              "eval task %s: last_error does not say why: %r" % (tid, err))
    with open(w.log_path, "rb") as f:
        log = f.read().decode("utf-8", "replace")
    for tid, *_ in rows:
        for att in (1, 2):
            n = log.count("task %s attempt %d: result refused as a whole"
                          % (tid, att))
            check(n == 1, "worker log: task %s attempt %d replaced %d times"
                  % (tid, att, n))
    check("refused for good" not in log, "the worker dropped a result")
    for p in watch:
        check(p.alive(), "%s died" % p.name)
    c.log("%d eval tasks failed with the stand-in's reason after 2 attempts "
          "each; %d checksum tasks done beside them" % (len(rows), len(ids)))


if __name__ == "__main__":
    kfe2e.run("report_too_big", body, time_limit=900)
