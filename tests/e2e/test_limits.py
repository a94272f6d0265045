# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_limits.py -- bounded resources against a real
coordinator on a private PostgreSQL (issue 10, item 3).

1. Heartbeat: a list over the cap (4097 leases) is INVALID_ARGUMENT naming
   `running`; a list of 1.5M entries (12 MB, under --max-msg-bytes; the
   issue's 2.7M took 375 MB unpacked) is refused by the method's byte
   limit (RESOURCE_EXHAUSTED) before it is unpacked.
2. Queue cap: with --max-queued-ops 4, eight parked long polls at once --
   four wait, the rest are RESOURCE_EXHAUSTED saying the queue is full
   (read as KF_EBUSY: retry later).
3. lock_timeout: while another session holds an exclusive lock on tasks,
   GetStatus fails UNAVAILABLE naming the lock timeout, instead of
   waiting for the lock.
4. Deadlines with PostgreSQL stopped (SIGSTOP on the postmaster and every
   backend, as the issue did): floods of LeaseTasks with 300 ms and
   1500 ms deadlines, and a GetStatus with a long deadline, which must
   come back UNAVAILABLE (the client-side wait) rather than hang.  After
   SIGCONT, once a later batch has answered, no task was leased to
   anyone: every task is still queued at attempt 0.

kf-bench-flood (tests/bench/bench_flood.c) makes the calls.  Waits are on
conditions; the only bounds are generous ones.
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

N_TASKS = 40


def flood(c, mode, timeout=180, **kw):
    argv = [c.path("kf-bench-flood"), mode, "--target", c.target]
    for k, v in kw.items():
        argv += ["--" + k.replace("_", "-"), str(v)]
    r = subprocess.run(argv, capture_output=True, timeout=timeout,
                       env=c.env)
    check(r.returncode == 0, "kf-bench-flood %s exited %d: %s"
          % (mode, r.returncode, r.stderr.decode(errors="replace")))
    out = json.loads(r.stdout.decode().strip().splitlines()[-1])
    c.log("flood %s %r -> %r" % (mode, kw, out))
    return out


def pg_pids(c):
    with open(os.path.join(c.pgdir, "data", "postmaster.pid")) as f:
        pm = int(f.readline().strip())
    pids = [pm]
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split
        # after its closing parenthesis.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pm:
            pids.append(int(d))
    return pids


def signal_pg(pids, sig):
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


def body(c):
    c.start_pg()
    c.start_coordinator(extra=("--max-queued-ops", "4",
                               "--db-statement-timeout-ms", "1500",
                               "--db-lock-timeout-ms", "1000",
                               "--log-level", "debug"))
    idle = flood(c, "register", name="idle", kind="nothing")["worker_id"]
    busy = flood(c, "register", name="busy", kind="checksum")["worker_id"]
    c.submit(N_TASKS, sleep_ms=0)

    # 1. Heartbeat list caps.
    ok = flood(c, "heartbeat", worker=idle, entries=100, count=1, conc=1,
               deadline_ms=30000)
    check(ok["ok"] == 1, "a heartbeat of 100 leases failed: %r" % ok)
    over = flood(c, "heartbeat", worker=idle, entries=4097, count=1, conc=1,
                 deadline_ms=30000)
    check(over["codes"] == {"INVALID_ARGUMENT": 1},
          "a heartbeat of 4097 leases: %r" % over)
    check("running" in over["messages"]["INVALID_ARGUMENT"],
          "the refusal does not name `running`: %r" % over)
    huge = flood(c, "heartbeat", worker=idle, entries=1500000, count=1,
                 conc=1, deadline_ms=60000)
    check(huge["codes"] == {"RESOURCE_EXHAUSTED": 1},
          "a heartbeat of 1.5M leases: %r" % huge)
    check("limit of /kernelfleet.Coordinator/Heartbeat"
          in huge["messages"]["RESOURCE_EXHAUSTED"], "%r" % huge)

    # 2. The queue cap: long polls of a worker no task matches park.
    q = flood(c, "lease", worker=idle, count=8, conc=8, wait_ms=4000,
              deadline_ms=30000)
    busy_code = "RESOURCE_EXHAUSTED(busy)"  # retry later, not "too large"
    check(q["ok"] >= 4 and q["codes"].get(busy_code, 0) >= 1,
          "8 long polls with --max-queued-ops 4: %r" % q)
    check("queue full" in q["messages"][busy_code], "%r" % q)
    check(q["tasks"] == 0, "the idle worker got tasks: %r" % q)

    # 3. lock_timeout: a session holding ACCESS EXCLUSIVE on tasks.
    locker = subprocess.Popen(
        ["psql", c.conninfo + " application_name=kflocker", "-X", "-q",
         "-c",
         "BEGIN; LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE;"
         " SELECT pg_sleep(60); COMMIT;"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        kfe2e.wait_until(lambda: c.count(
            "SELECT count(*) FROM pg_locks l JOIN pg_class r"
            " ON r.oid = l.relation WHERE r.relname = 'tasks'"
            " AND l.mode = 'AccessExclusiveLock' AND l.granted") == 1,
            30, "the lock on tasks")
        st = flood(c, "status", count=1, conc=1, deadline_ms=50000)
        check(st["codes"] == {"UNAVAILABLE": 1},
              "GetStatus behind a held lock: %r" % st)
        check("lock timeout" in st["messages"]["UNAVAILABLE"], "%r" % st)
    finally:
        # Killing psql would leave its backend asleep, holding the lock.
        c.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
               " WHERE application_name = 'kflocker'")
        locker.wait()

    # 4. PostgreSQL stopped: floods with short deadlines.  A coordinator
    # with the default queue cap, so the floods reach the queue.
    c.coord.terminate()
    c.start_coordinator(extra=("--db-statement-timeout-ms", "1500",
                               "--log-level", "debug"))
    check(c.count("SELECT count(*) FROM tasks WHERE state = 'queued'"
                  " AND attempt = 0") == N_TASKS, "tasks moved before the "
          "flood")
    pids = pg_pids(c)
    c.log("SIGSTOP postgres %r" % pids)
    signal_pg(pids, signal.SIGSTOP)
    try:
        # The client side gives up on a silent server after 1.5 + 2 s and
        # reconnecting after connect_timeout: UNAVAILABLE, not a hang.
        status = subprocess.Popen(
            [c.path("kf-bench-flood"), "status", "--target", c.target,
             "--count", "1", "--conc", "1",
             "--deadline-ms", "90000"], stdout=subprocess.PIPE, env=c.env)
        short = flood(c, "lease", worker=busy, count=400, conc=32,
                      deadline_ms=300)
        longer = flood(c, "lease", worker=busy, count=64, conc=32,
                       deadline_ms=1500)
        check(short["tasks"] == 0 and longer["tasks"] == 0,
              "tasks leased while PostgreSQL was stopped")
        st = json.loads(status.communicate(timeout=120)[0].decode())
        c.log("status while stopped -> %r" % st)
        check(st["codes"] == {"UNAVAILABLE": 1},
              "GetStatus while PostgreSQL is stopped: %r" % st)
        check("did not answer within" in st["messages"]["UNAVAILABLE"] or
              "timeout" in st["messages"]["UNAVAILABLE"], "%r" % st)
    finally:
        signal_pg(pids, signal.SIGCONT)
        c.log("SIGCONT postgres")
    # A batch that answers after the resume ran after every earlier one
    # (one batch at a time): a lease of the idle worker is one.
    kfe2e.wait_until(lambda: flood(c, "lease", worker=idle, count=1, conc=1,
                                   deadline_ms=20000)["ok"] == 1, 120,
                     "a lease answered after the resume")
    moved = c.psql("SELECT id, state, attempt, lease_owner FROM tasks"
                   " WHERE state <> 'queued' OR attempt <> 0")
    check(not moved, "tasks leased to callers that gave up: %r" % moved)
    check(c.count("SELECT count(*) FROM results") == 0, "results written")
    check(c.coord.alive(), "the coordinator died")


if __name__ == "__main__":
    kfe2e.run("limits", body, time_limit=400)
