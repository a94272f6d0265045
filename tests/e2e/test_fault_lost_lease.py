# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_fault_lost_lease.py -- a lease that never reached its
worker must not strand its task.

A lease can commit in PostgreSQL and still never reach the worker: the
coordinator is killed between the commit and the reply, or PostgreSQL
dies after committing but before answering.  The worker is alive and
heartbeating, so a heartbeat that extended every lease it "holds" would
keep such a task leased for ever (seen in test_fault_pg_restart before
the fix).  Here the database is made to say so directly: tasks marked
leased, for an hour, to live idle workers that never heard of them.  They
must be requeued and finish exactly once, with attempt 2.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

WORKERS = ("w-a", "w-b")


def body(c):
    c.start_pg()
    c.start_coordinator(lease_ttl_ms=2000, heartbeat_ms=500, reap_ms=200)
    workers = [c.start_worker(n, slots=2) for n in WORKERS]
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 2,
                     30, "2 workers registered")
    ids = c.submit(20, sleep_ms=10)
    c.wait_all_done(20, 60, watch=[c.coord] + workers)

    # Both workers idle now.  Strand one task on each.
    lost = []
    for i, n in enumerate(WORKERS):
        wid = c.worker_ids(n)[0]
        lost.append(int(c.scalar(
            "WITH ins AS (INSERT INTO tasks (kind, payload, state, "
            "lease_owner, lease_expires, attempt) VALUES ('checksum', "
            "convert_to('{\"data\": \"lost-%d\", \"repeat\": 7}', 'UTF8'), "
            "'leased', %d, now() + interval '1 hour', 1) RETURNING id) "
            "SELECT id FROM ins" % (i, wid))))
    c.log("stranded tasks %r" % lost)

    # Several heartbeat periods; without the fix this times out with the
    # tasks still leased and their expiry pushed forward.
    c.wait_all_done(22, 30, watch=[c.coord] + workers)
    finals = c.check_exactly_once(ids + lost)
    for tid in lost:
        _, attempt, ratt = finals[tid]
        check(attempt == 2 and ratt == 2, "stranded task %d finished at "
              "attempt %d (result attempt %d), want 2" % (tid, attempt, ratt))
    # And no live lease was taken from a busy worker on the way: the run
    # before the stranding needed one attempt per task.
    check(all(finals[t][1] == 1 for t in ids), "a task of the normal run "
          "needed a second attempt: %r" % {t: finals[t] for t in ids
                                           if finals[t][1] != 1})


if __name__ == "__main__":
    kfe2e.run("lost", body)
