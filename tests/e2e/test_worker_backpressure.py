# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_worker_backpressure.py -- a worker that cannot deliver a
result stops taking new work until it can.

What once happened: a worker whose reports kept failing kept its results
in the outbox, kept renewing their leases and kept leasing, until 256-323
results were stuck on it.

Here the reports fail for real: a trigger on `results` makes every report
transaction raise (not a data error, so the coordinator answers
UNAVAILABLE and the worker retries), while leasing still works.  One
worker with one slot and 40 checksum tasks queued (10 ms each): between
its second and its fifth failed report attempt (seconds of backoff) it
leases nothing, and it holds only the few tasks it finished before the
first report failed -- not the whole queue.  Then the trigger goes, the
reports get through, and every task ends done with the right checksum.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

N_TASKS = 40


def body(c):
    c.start_pg()
    c.start_coordinator()
    c.psql("CREATE FUNCTION test_no_results() RETURNS trigger"
           " LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION"
           " 'results refused by the test'; END $$")
    c.psql("CREATE TRIGGER test_no_results BEFORE INSERT ON results"
           " FOR EACH ROW EXECUTE FUNCTION test_no_results()")
    ids = c.submit(N_TASKS, sleep_ms=10, prefix="bp")
    w = c.start_worker("w-bp", slots=1)
    kfe2e.wait_until(lambda: c.worker_ids("w-bp"), 60, "w-bp registered")
    wid = c.worker_ids("w-bp")[0]

    def retried(n):
        def f():
            check(w.alive(), "the worker died: exit %s" % w.popen.returncode)
            with open(w.log_path, "rb") as fh:
                return fh.read().count(b"will retry") >= n
        return f

    def leased():
        return (c.count("SELECT count(*) FROM tasks WHERE state = 'leased'"
                        " AND lease_owner = %d" % wid),
                c.count("SELECT count(*) FROM tasks WHERE attempt > 0"))
    kfe2e.wait_until(retried(2), 120, "two failed report attempts")
    first = leased()
    kfe2e.wait_until(retried(5), 120, "five failed report attempts")
    held, started = leased()
    c.log("leases held / tasks ever leased: %r after two failed reports,"
          " %r after five" % (first, (held, started)))
    # Tasks that finished while the first report was still in flight may
    # have been leased (one slot, so a few at most); none after that.
    check(started <= 3 and held == started and (held, started) == first,
          "a worker with an undeliverable result kept leasing: %r leases"
          " held / tasks leased after two failed reports, %r after five"
          % (first, (held, started)))

    c.psql("DROP TRIGGER test_no_results ON results")
    c.wait_all_done(N_TASKS, 180, watch=[c.coord, w])
    c.check_exactly_once(ids)
    rc = w.terminate()
    check(rc == 0, "w-bp exited %s on SIGTERM" % rc)


if __name__ == "__main__":
    kfe2e.run("backpr", body)
