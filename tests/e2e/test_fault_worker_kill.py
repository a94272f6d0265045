# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_fault_worker_kill.py -- kill -9 a worker holding leases.

Short leases (2 s TTL, 500 ms heartbeats, 200 ms reaper).  The victim runs
4 slots of slow tasks; once the database shows it holding leases it is
SIGKILLed.  The tasks it held must be requeued by the reaper and finish on
the other workers, each exactly once, with attempt > 1; all checksums
right; the coordinator and the survivors stay up.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

N_TASKS = 150


def body(c):
    c.start_pg()
    c.start_coordinator(lease_ttl_ms=2000, heartbeat_ms=500, reap_ms=200)
    victim = c.start_worker("w-victim", slots=4)
    kfe2e.wait_until(lambda: c.worker_ids("w-victim"), 30,
                     "w-victim registered")
    vid = c.worker_ids("w-victim")[0]
    ids = c.submit(N_TASKS, sleep_ms=150)
    survivors = [c.start_worker("w-s1", slots=4), c.start_worker("w-s2", slots=4)]

    # Kill it while it holds leases and after it has finished a few, so
    # we know its reports got through before the crash too.
    def holding():
        n = c.count("SELECT count(*) FROM tasks WHERE state = 'leased' AND "
                    "lease_owner = %d" % vid)
        d = c.count("SELECT count(*) FROM results WHERE worker_id = %d" % vid)
        return n > 0 and d >= 4 and n
    kfe2e.wait_until(holding, 30, "w-victim holding leases")
    victim.kill9()
    # Nothing else can change its leases until they expire (>= 1.5 s from
    # its last heartbeat), so this is the set it held when it died.
    held = [int(r[0]) for r in c.psql(
        "SELECT id FROM tasks WHERE state = 'leased' AND lease_owner = %d"
        % vid)]
    c.log("killed w-victim (id %d) holding tasks %r" % (vid, held))
    check(held, "w-victim held no lease after the kill")

    c.wait_all_done(N_TASKS, 90, watch=[c.coord] + survivors)
    finals = c.check_exactly_once(ids)

    for tid in held:
        wid, attempt, ratt = finals[tid]
        check(attempt >= 2, "task %d held by the dead worker has attempt %d"
              % (tid, attempt))
        check(ratt == attempt and wid != vid,
              "task %d: final result from worker %d attempt %d (task "
              "attempt %d)" % (tid, wid, ratt, attempt))
    # Others may have been retried too if a loaded machine delayed a
    # survivor's heartbeat past the TTL; that is allowed, just reported.
    retried = sorted(t for t, (_, a, _) in finals.items() if a > 1)
    c.log("tasks with attempt > 1: %r" % retried)
    check(c.count("SELECT count(*) FROM results WHERE worker_id = %d AND "
                  "task_id IN (%s)" % (vid, ",".join(map(str, held)))) == 0,
          "a result from the dead worker for a task it held")
    for p in survivors + [c.coord]:
        check(p.alive(), "%s died" % p.name)


if __name__ == "__main__":
    kfe2e.run("wkill", body)
