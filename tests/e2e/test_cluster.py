# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_cluster.py -- the happy path, end to end.

PostgreSQL + coordinator + 3 workers run 500 checksum tasks.  Every task
must end done with exactly one final result, every output must be the
right FNV-1a checksum, and every worker must have done some of them.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

N_TASKS = 500
WORKERS = ("w-a", "w-b", "w-c")


def body(c):
    c.start_pg()
    c.start_coordinator()
    workers = [c.start_worker(n, slots=2) for n in WORKERS]
    # Each worker must be registered before the tasks exist, so the first
    # to poll cannot take everything.
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 3,
                     30, "3 workers registered")
    ids = c.submit(N_TASKS, sleep_ms=20)
    c.wait_all_done(N_TASKS, 90, watch=[c.coord] + workers)
    finals = c.check_exactly_once(ids)

    by_worker = {}
    for wid, _, _ in finals.values():
        by_worker[wid] = by_worker.get(wid, 0) + 1
    c.log("tasks per worker id: %r" % by_worker)
    for n in WORKERS:
        ids_n = c.worker_ids(n)
        check(len(ids_n) == 1, "%s registered %d times" % (n, len(ids_n)))
        check(by_worker.get(ids_n[0], 0) > 0, "%s did no task" % n)
    check(c.count("SELECT count(*) FROM results") == N_TASKS,
          "more result rows than tasks on a run without faults")

    # `kf status --json` agrees with the database.
    import json
    st = json.loads(c.kf("status", "--json", "--coordinator", c.target))
    check(st["done"] == N_TASKS and st["queued"] == 0 and st["leased"] == 0
          and st["failed"] == 0, "kf status: %r" % st)
    check(sorted(w["name"] for w in st["workers"]) == sorted(WORKERS),
          "kf status workers: %r" % st["workers"])

    # A clean stop: SIGTERM makes every process exit 0.
    for p in workers + [c.coord]:
        rc = p.terminate()
        check(rc == 0, "%s exited %s on SIGTERM" % (p.name, rc))


if __name__ == "__main__":
    kfe2e.run("cluster", body)
