# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_fault_coordinator_kill.py -- kill -9 the coordinator.

Mid-run the coordinator is SIGKILLed and, a second later, started again on
the same port.  The workers are not touched: they must reconnect by
themselves, deliver the results they held, and finish the run.  Nothing
may be lost (every task done) or duplicated (one final, one ok result per
task), and every worker must have reported after the restart.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

N_TASKS = 300
WORKERS = ("w-a", "w-b", "w-c")
COORD = dict(lease_ttl_ms=4000, heartbeat_ms=1000, reap_ms=500)


def body(c):
    c.start_pg()
    first = c.start_coordinator(**COORD)
    port = c.port
    workers = [c.start_worker(n, slots=2) for n in WORKERS]
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 3,
                     30, "3 workers registered")
    ids = c.submit(N_TASKS, sleep_ms=60)

    kfe2e.wait_until(lambda: c.state_counts().get("done", 0) >= 60, 60,
                     "60 tasks done before the kill")
    first.kill9()
    before = c.state_counts()
    c.log("coordinator killed; tasks: %r" % before)
    check(before.get("done", 0) < N_TASKS, "the run ended before the kill; "
          "nothing was tested")
    time.sleep(1.0)  # the workers' calls fail meanwhile
    restart_at = c.scalar("SELECT now()")
    c.start_coordinator(port=port, **COORD)

    c.wait_all_done(N_TASKS, 90, watch=[c.coord] + workers)
    c.check_exactly_once(ids)
    for n in WORKERS:
        got = c.count("SELECT count(*) FROM results r JOIN workers w ON "
                      "w.id = r.worker_id WHERE w.name = '%s' AND "
                      "r.reported_at > '%s'" % (n, restart_at))
        check(got > 0, "%s reported nothing after the restart" % n)
    for p in workers:
        check(p.alive(), "%s died" % p.name)
    check(c.count("SELECT count(*) FROM workers") == 3,
          "a worker registered again although the new coordinator could "
          "look it up")


if __name__ == "__main__":
    kfe2e.run("ckill", body)
