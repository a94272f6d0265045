# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_campaign_restart.py -- kill -9 the coordinator mid-campaign.

A campaign runs on PostgreSQL + coordinator + 2 workers.  Once a few
evaluations are stored, the coordinator gets SIGKILL and a new one starts
on the same port.  The campaign must resume (new evaluations after the
restart) and finish, every done eval task must have exactly one
evaluation, and nothing may be evaluated twice.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

EVALS = 24


def body(c):
    c.start_pg()
    # A short lease TTL so tasks leased to the dead coordinator's workers
    # are handed on quickly if a report is lost.
    c.start_coordinator(lease_ttl_ms=6000, heartbeat_ms=1000)
    port = c.port
    workers = [c.start_worker(n, slots=1) for n in ("w-a", "w-b")]
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 2,
                     30, "2 workers registered")
    cid = kfcampaign.submit(c, kfcampaign.problem_dir(), evals=EVALS)

    def some_done():
        check(kfcampaign.state(c, cid) == "running",
              "campaign ended before the kill; raise EVALS")
        return kfcampaign.n_evals(c, cid) >= 4
    kfe2e.wait_until(some_done, 120, "4 evaluations before the kill",
                     interval=0.2)
    before = kfcampaign.n_evals(c, cid)
    c.coord.kill9()
    killed_at = c.scalar("SELECT now()")
    c.log("coordinator killed with %d evaluations stored" % before)
    time.sleep(1.0)
    c.start_coordinator(port=port, lease_ttl_ms=6000, heartbeat_ms=1000)

    st = kfcampaign.wait_done(c, cid, 170, watch=[c.coord] + workers)
    check(st == "done", "campaign %d ended %r after the restart" % (cid, st))
    after = c.count("SELECT count(*) FROM evaluations WHERE campaign_id = %d "
                    "AND created_at > '%s'" % (cid, killed_at))
    check(after > 0, "no evaluation stored after the restart: the campaign "
          "did not resume")
    n = kfcampaign.n_evals(c, cid)
    c.log("%d evaluations before the kill, %d after, %d in all"
          % (before, after, n))
    check(n <= EVALS, "%d evaluations for a budget of %d" % (n, EVALS))

    kfcampaign.check_every_task_once(c, cid)
    kfcampaign.check_no_repeats(c)
    failed = c.psql("SELECT id, last_error FROM tasks WHERE campaign_id = %d "
                    "AND state = 'failed'" % cid)
    check(not failed, "eval tasks failed outright: %r" % failed[:5])


if __name__ == "__main__":
    kfe2e.run("camprestart", body, time_limit=300)
