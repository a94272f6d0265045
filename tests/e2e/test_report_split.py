# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_report_split.py -- a report call refused as a whole is
sent again one result per call, and the one bad result among them costs
the others nothing.

worker/worker.c on_reported: a ReportResult call refused as a whole
(INVALID_ARGUMENT, or larger than the coordinator takes) cannot succeed
as it is; the worker then sends its results one per call, so the good
ones get through and a bad one is judged alone.

How it happens here, with real processes only:
  - one worker (200 slots) runs 160 checksum tasks and a campaign's eval
    tasks whose results the store refuses for good (test_report_refused's
    KF_HARNESS wrapper: the real harness, a profile status this
    coordinator does not know appended to every EvalResult);
  - once everything is leased (checksum tasks sleeping 30 s, then the
    eval tasks) the coordinator is stopped (SIGTERM), so
    every result waits in the worker's outbox (its /metrics shows them
    all);
  - the coordinator comes back on the same port with --max-msg-bytes 8192:
    the worker's next report, every result in one call (~10 KB), is
    refused as a whole (RESOURCE_EXHAUSTED, "message too large"), and the
    worker sends them one by one.
Checked: the worker logged the whole-call refusal of all of them and
"sending them one by one"; every checksum task ends done with exactly one
correct result; every eval task ends failed after one attempt, with the
store's reason (profile.status 'throttled' ...), recorded once by
the worker as refused for good; the outbox empties; a later wave of
checksum tasks is leased and done (the worker went back to leasing).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # importing a test module: no .pyc beside it
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402
from test_report_refused import (eval_tasks,  # noqa: E402
                                 outbox, wait_done, write_wrapper)

N_TASKS = 160
MAX_MSG = 8192


def body(c):
    wrapper = write_wrapper(c, every=1)

    c.start_pg()
    # Leases outlive the coordinator's absence by far: nothing is reaped.
    c.start_coordinator(lease_ttl_ms=600000)
    port = c.port
    mport = kfe2e.free_port()
    w = c.start_worker("w-split", slots=200,
                       extra=("--metrics-listen", "127.0.0.1:%d" % mport),
                       env={"KF_HARNESS": wrapper})
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 1,
                     60, "the worker registered")
    # The checksum tasks first, long enough to outlast the campaign's
    # submission; then the eval tasks, which take seconds to evaluate:
    # the coordinator stops once all are leased, before any can end.
    ids = c.submit(N_TASKS, sleep_ms=30000, prefix="split")
    idlist = ",".join(map(str, ids))
    kfe2e.wait_until(lambda: c.count(
        "SELECT count(*) FROM tasks WHERE id IN (%s) AND state = 'leased'"
        % idlist) == N_TASKS, 120, "every checksum task leased")
    cid = kfcampaign.submit(c, kfcampaign.problem_dir("vecsum"), evals=2,
                            minutes=10, population=2, seed=3)
    def evals_leased():
        st = dict(c.psql("SELECT state, count(*) FROM tasks WHERE"
                         " campaign_id = %d GROUP BY 1" % cid))
        return list(st) == ["leased"]
    kfe2e.wait_until(evals_leased, 120, "the campaign's eval tasks leased",
                     interval=0.05)
    check(c.count("SELECT count(*) FROM tasks WHERE id IN (%s) AND state ="
                  " 'leased'" % idlist) == N_TASKS,
          "a checksum task ended before the coordinator stopped")
    n_eval = c.count("SELECT count(*) FROM tasks WHERE campaign_id = %d"
                     % cid)
    check(c.count("SELECT count(*) FROM tasks WHERE campaign_id = %d AND"
                  " state = 'leased'" % cid) == n_eval,
          "an eval task ended before the coordinator stopped")
    rc = c.coord.terminate()
    check(rc == 0, "the coordinator exited %s on SIGTERM" % rc)
    total = N_TASKS + n_eval
    c.log("coordinator stopped with %d tasks leased to the worker" % total)
    kfe2e.wait_until(lambda: w.alive() and outbox(mport) == total, 300,
                     "all %d results in the worker's outbox" % total,
                     interval=0.5)
    c.log("the worker holds all %d results" % total)

    c.start_coordinator(port=port, lease_ttl_ms=600000,
                        extra=("--max-msg-bytes", str(MAX_MSG)))
    watch = [c.coord, w]
    wait_done(c, ids, watch)
    c.check_exactly_once(ids)
    kfe2e.wait_until(lambda: all(r[1] == "failed" for r in
                                 eval_tasks(c, cid)), 120,
                     "every eval task failed", interval=0.5)
    kfe2e.wait_until(lambda: outbox(mport) == 0, 60,
                     "the worker's outbox empty")

    with open(w.log_path, "rb") as f:
        log = f.read().decode("utf-8", "replace")
    whole = re.findall(r"report of (\d+) results refused as a whole: "
                       r"(.*?); sending them one by one", log)
    c.log("whole-call refusals: %r" % whole)
    check(whole, "the worker never logged a report refused as a whole")
    check(int(whole[0][0]) == total, "the first refused call held %s "
          "results, not all %d" % (whole[0][0], total))
    check("large" in whole[0][1].lower(), "refused for another reason: %r"
          % whole[0][1])
    for tid, state, attempt, err, nres in eval_tasks(c, cid):
        check(state == "failed" and attempt == "1" and nres == "0",
              "eval task %s: %s, attempt %s, %s results"
              % (tid, state, attempt, nres))
        check("refused" in err and "profile.status" in err,
              "eval task %s: last_error %r" % (tid, err))
        lines = [ln for ln in log.splitlines()
                 if "task %s attempt 1: result refused for good" % tid in ln]
        check(len(lines) == 1, "worker log: task %s refused %d times"
              % (tid, len(lines)))

    # Back to leasing: a wave small enough for the coordinator's limit.
    ids2 = c.submit(20, sleep_ms=5, prefix="after")
    wait_done(c, ids2, watch)
    c.check_exactly_once(ids2)
    for p in watch:
        check(p.alive(), "%s died" % p.name)
    c.log("%d results sent one by one after a whole-call refusal; %d eval "
          "results refused alone" % (total, n_eval))


if __name__ == "__main__":
    kfe2e.run("report_split", body, time_limit=600)
