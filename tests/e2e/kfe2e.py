# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/kfe2e.py -- drive a real KernelFleet cluster from a test.

Stdlib only.  One Cluster per test: a short temp dir under /tmp (the unix
socket path of PostgreSQL must stay under ~100 bytes), a private
PostgreSQL started with `kf db start`, a kf-coordinator and N kf-worker
processes, each logging to its own file in the temp dir.

What it deliberately does not do: decide what a test checks.  It offers
the SQL and the expected checksums; the test asserts.

Cleanup (Cluster.close, run by `run()` whatever happens): SIGTERM every
process it started, SIGKILL whatever is left after a grace period, stop
PostgreSQL (immediate), and print the tail of every log if the test
failed.  Children also get PR_SET_PDEATHSIG, so they die with the test
even when ctest kills it on a timeout.
"""
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

TOKEN = "e2e-secret-token"
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3


def fnv1a64(data: bytes) -> int:
    h = FNV_OFFSET
    for b in data:
        h ^= b
        h = (h * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def expected_checksum_output(payload: str) -> str:
    """The exact output a correct checksum task writes for `payload`."""
    p = json.loads(payload)
    data = p["data"].encode()
    repeat = int(p.get("repeat", 1))
    return '{"fnv1a64": "%016x"}' % fnv1a64(data * repeat)


class TestFailure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


# Every bound a test writes is what an idle machine needs, with room; on a
# loaded one (CI beside other builds, `stress-ng --cpu 2`) everything runs
# several times slower.  Waits are on conditions and return as soon as
# they hold, so a generous bound costs nothing when things work: SLACK
# multiplies every wait_until/wait_progress bound and the hang guard of
# run().  KF_E2E_SLACK=1 gives the bounds as written.
SLACK = max(1.0, float(os.environ.get("KF_E2E_SLACK", "4")))
# run()'s hang guard stays under ctest's TIMEOUT (900 s for e2e tests), so
# a hung test still cleans up and prints its logs.
HANG_GUARD_MAX = 870


def wait_until(fn, timeout, what, interval=0.1):
    """Polls fn() until it returns a truthy value, which is returned.
    Raises TestFailure naming `what` after timeout * SLACK seconds."""
    bound = timeout * SLACK
    deadline = time.monotonic() + bound
    last = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise TestFailure("timed out after %.0fs waiting for %s (last: %r)"
                              % (bound, what, last))
        time.sleep(interval)


def wait_progress(fn, progress, stall, what, interval=0.5):
    """Polls fn() until it returns a truthy value, which is returned, for
    as long as progress() keeps changing: fails only after stall * SLACK
    seconds in which progress() (e.g. a count of finished tasks) stayed
    the same.  For long waits whose length depends on the machine's speed
    -- a campaign of N evaluations -- where a total bound would be sized
    for one machine's load, but no progress at all is a real hang."""
    bound = stall * SLACK
    seen = progress()
    deadline = time.monotonic() + bound
    while True:
        last = fn()
        if last:
            return last
        now = progress()
        if now != seen:
            seen = now
            deadline = time.monotonic() + bound
        elif time.monotonic() >= deadline:
            raise TestFailure("no progress in %.0fs waiting for %s (last: %r,"
                              " progress %r)" % (bound, what, last, seen))
        time.sleep(interval)


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now (the
    kernel's pick; a daemon that needs its port on its command line)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pdeathsig():
    # PR_SET_PDEATHSIG = 1: the child gets SIGKILL when this test dies.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    except OSError:
        pass


class Proc:
    """A started program: its Popen, its log file, a role name."""

    def __init__(self, name, argv, log_path, env=None):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                      stdout=self.log, stderr=subprocess.STDOUT,
                                      env=env, preexec_fn=_pdeathsig)
        self.pid = self.popen.pid

    def alive(self):
        return self.popen.poll() is None

    def kill9(self):
        """A crash: SIGKILL, then reap."""
        os.kill(self.pid, signal.SIGKILL)
        self.popen.wait(10)

    def terminate(self, grace=10.0):
        """SIGTERM, SIGKILL after `grace` seconds.  Returns the exit code
        (negative: killed by that signal)."""
        if self.popen.poll() is None:
            try:
                self.popen.send_signal(signal.SIGTERM)
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(10)
            except ProcessLookupError:
                pass
        self.log.close()
        return self.popen.returncode


class Cluster:
    def __init__(self, tag):
        self.bin = os.environ.get("KF_BIN_DIR")
        if not self.bin:
            raise TestFailure("KF_BIN_DIR is not set (the build directory "
                              "holding kf, kf-coordinator, kf-worker)")
        self.dir = tempfile.mkdtemp(prefix="kf%s." % tag[:6], dir="/tmp")
        # PostgreSQL runs as another user when we are root; it must be able
        # to enter this directory (kf db start checks that).
        os.chmod(self.dir, 0o755)
        self.procs = []
        self.coord = None
        self.port = None
        self.conninfo = None
        self.pgdir = os.path.join(self.dir, "pg")
        self.env = dict(os.environ)
        # Leak reports are for unit tests; a killed process has "leaks".
        self.env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0"
        # The credential travels in the environment, never in argv
        # (anyone can read /proc/PID/cmdline).
        self.env["KF_TOKEN"] = TOKEN
        self.env.pop("KF_TOKEN_FILE", None)
        self.t0 = time.monotonic()

    def log(self, msg):
        print("[%6.2fs] %s" % (time.monotonic() - self.t0, msg), flush=True)

    def path(self, name):
        return os.path.join(self.bin, name)

    # ------------------------------------------------------ PostgreSQL --

    def kf(self, *args, timeout=120, check_rc=True):
        """Runs the kf CLI; returns stdout.  Fails the test on a non-zero
        exit when check_rc."""
        r = subprocess.run([self.path("kf")] + list(args), env=self.env,
                           stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout, preexec_fn=_pdeathsig)
        with open(os.path.join(self.dir, "kf-cli.log"), "ab") as f:
            f.write(b"$ kf %s -> %d\n" % (" ".join(args).encode(),
                                          r.returncode))
            f.write(r.stdout[-4000:] + r.stderr[-4000:])
        if check_rc and r.returncode != 0:
            raise TestFailure("kf %s exited %d: %s" % (
                " ".join(args), r.returncode, r.stderr.decode(errors="replace")))
        return r.stdout.decode()

    def kf_run(self, args, cwd=None, timeout=120):
        """Runs the kf CLI in cwd; returns (exit code, stdout, stderr),
        the command logged here and in kf-cli.log."""
        self.log("$ kf %s" % " ".join(args))
        r = subprocess.run([self.path("kf")] + list(args), cwd=cwd,
                           env=self.env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=timeout,
                           preexec_fn=_pdeathsig)
        out, err = r.stdout.decode(errors="replace"), r.stderr.decode(
            errors="replace")
        with open(os.path.join(self.dir, "kf-cli.log"), "a") as f:
            f.write("$ kf %s -> %d\n%s%s\n" % (" ".join(args), r.returncode,
                                              out, err))
        return r.returncode, out, err

    def start_pg(self):
        out = self.kf("db", "start", self.pgdir).strip()
        check(out.startswith("host="), "kf db start printed %r" % out)
        self.conninfo = out
        self.log("postgres up: %s" % out)
        return out

    def stop_pg(self, mode="fast"):
        self.kf("db", "stop", self.pgdir, mode)
        self.log("postgres stopped (%s)" % mode)

    def psql(self, sql, timeout=30):
        """Runs sql; returns rows as lists of strings (-At output)."""
        r = subprocess.run(["psql", self.conninfo, "-X", "-At", "-F", "\t",
                            "-v", "ON_ERROR_STOP=1", "-c", sql],
                           stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout, env=self.env)
        if r.returncode != 0:
            raise TestFailure("psql %r: %s" % (sql, r.stderr.decode()))
        out = r.stdout.decode()
        return [line.split("\t") for line in out.splitlines()]

    def scalar(self, sql):
        rows = self.psql(sql)
        check(len(rows) == 1 and len(rows[0]) == 1,
              "expected one value from %r, got %r" % (sql, rows))
        return rows[0][0]

    def count(self, sql):
        return int(self.scalar(sql))

    # ---------------------------------------------------- coordinator --

    def start_coordinator(self, port=0, lease_ttl_ms=15000, heartbeat_ms=3000,
                          reap_ms=1000, extra=()):
        """Starts kf-coordinator and waits for its port file.  port 0 picks
        a free port; pass the old one to restart on the same address."""
        check(self.conninfo, "start PostgreSQL first")
        n = sum(1 for p in self.procs if p.name.startswith("coordinator"))
        pf = os.path.join(self.dir, "coord.port")
        if os.path.exists(pf):
            os.unlink(pf)
        argv = [self.path("kf-coordinator"), "--db", self.conninfo,
                "--listen", "127.0.0.1:%d" % port,
                "--port-file", pf, "--lease-ttl-ms", str(lease_ttl_ms),
                "--heartbeat-ms", str(heartbeat_ms), "--reap-ms", str(reap_ms)]
        argv += list(extra)
        p = Proc("coordinator-%d" % n, argv,
                 os.path.join(self.dir, "coordinator-%d.log" % n), self.env)
        self.procs.append(p)

        def ready():
            check(p.alive(), "kf-coordinator exited with %s before listening"
                  % p.popen.returncode)
            try:
                with open(pf) as f:
                    return int(f.read().strip() or 0)
            except (FileNotFoundError, ValueError):
                return 0
        self.port = wait_until(ready, 60, "the coordinator's port file")
        if port:
            check(self.port == port, "asked for port %d, bound %d"
                  % (port, self.port))
        self.coord = p
        self.log("coordinator pid %d on port %d" % (p.pid, self.port))
        return p

    @property
    def target(self):
        return "127.0.0.1:%d" % self.port

    # -------------------------------------------------------- workers --

    def start_worker(self, name, slots=2, extra=(), env=None):
        """env: extra environment variables for this worker only."""
        argv = [self.path("kf-worker"), "--coordinator", self.target,
                "--name", name, "--slots", str(slots),
                "--lease-wait-ms", "2000"] + list(extra)
        wenv = dict(self.env, **(env or {}))
        p = Proc(name, argv, os.path.join(self.dir, name + ".log"), wenv)
        self.procs.append(p)
        self.log("worker %s pid %d" % (name, p.pid))
        return p

    def worker_ids(self, name):
        """Every id this worker name registered under."""
        return [int(r[0]) for r in self.psql(
            "SELECT id FROM workers WHERE name = '%s' ORDER BY id" % name)]

    # ---------------------------------------------------------- tasks --

    def submit(self, count, sleep_ms=20, repeat=100, prefix="t"):
        payload = ('{"data": "%s-{i}", "repeat": %d, "sleep_ms": %d}'
                   % (prefix, repeat, sleep_ms))
        out = self.kf("submit", "--kind", "checksum", "--payload", payload,
                      "--count", str(count), "--coordinator", self.target)
        ids = [int(x) for x in out.split()]
        check(len(ids) == count and len(set(ids)) == count,
              "kf submit --count %d printed %d ids (%d distinct)"
              % (count, len(ids), len(set(ids))))
        self.log("submitted %d tasks" % count)
        return ids

    def state_counts(self):
        rows = self.psql("SELECT state, count(*) FROM tasks GROUP BY state")
        return {r[0]: int(r[1]) for r in rows}

    def wait_all_done(self, n, timeout, watch=()):
        """Waits until n tasks are done.  Fails early if a task failed or a
        process in `watch` died."""
        def done():
            for p in watch:
                check(p.alive(), "%s (pid %d) died: exit %s"
                      % (p.name, p.pid, p.popen.returncode))
            c = self.state_counts()
            check(c.get("failed", 0) == 0, "tasks failed: %r" % c)
            return c.get("done", 0) >= n and c
        c = wait_until(done, timeout, "%d tasks done" % n, interval=0.25)
        self.log("all %d done: %r" % (n, c))

    def check_exactly_once(self, ids):
        """The run's end state: every task in ids done, exactly one final
        result each, that result 'ok' with the right checksum, and no
        second 'ok' row for any task.  Returns {task_id: (worker_id,
        attempt, result_attempt)}."""
        idlist = ",".join(str(i) for i in ids)
        states = self.psql("SELECT id, state, attempt FROM tasks WHERE id IN "
                           "(%s)" % idlist)
        check(len(states) == len(ids), "%d of %d tasks exist"
              % (len(states), len(ids)))
        notdone = [r for r in states if r[1] != "done"]
        check(not notdone, "%d tasks not done, e.g. %r"
              % (len(notdone), notdone[:5]))
        attempts = {int(r[0]): int(r[2]) for r in states}

        finals = self.psql("SELECT task_id, count(*) FILTER (WHERE final), "
                           "count(*) FILTER (WHERE outcome = 'ok') FROM "
                           "results WHERE task_id IN (%s) GROUP BY task_id"
                           % idlist)
        per = {int(r[0]): (int(r[1]), int(r[2])) for r in finals}
        missing = [i for i in ids if i not in per]
        check(not missing, "%d tasks have no result, e.g. %r"
              % (len(missing), missing[:5]))
        bad = {i: v for i, v in per.items() if v != (1, 1)}
        check(not bad, "tasks whose (final results, ok results) is not "
              "(1, 1): %r" % dict(list(bad.items())[:10]))

        rows = self.psql(
            "SELECT t.id, convert_from(t.payload, 'UTF8'), "
            "convert_from(r.output, 'UTF8'), r.outcome, r.worker_id, "
            "r.attempt FROM tasks t JOIN results r ON r.task_id = t.id "
            "AND r.final WHERE t.id IN (%s)" % idlist)
        check(len(rows) == len(ids), "%d final rows for %d tasks"
              % (len(rows), len(ids)))
        out = {}
        wrong = []
        for tid, payload, output, outcome, wid, ratt in rows:
            tid = int(tid)
            if outcome != "ok" or output != expected_checksum_output(payload):
                wrong.append((tid, payload, outcome, output))
            out[tid] = (int(wid), attempts[tid], int(ratt))
        check(not wrong, "%d wrong results, e.g. %r" % (len(wrong), wrong[:5]))
        self.log("exactly-once check passed for %d tasks" % len(ids))
        return out

    # -------------------------------------------------------- cleanup --

    def close(self, failed):
        for p in reversed(self.procs):
            try:
                p.terminate(grace=8)
            except Exception as e:  # keep cleaning up
                print("cleanup %s: %s" % (p.name, e), file=sys.stderr)
        if self.conninfo or os.path.exists(self.pgdir):
            r = subprocess.run([self.path("kf"), "db", "stop", self.pgdir,
                                "immediate"], capture_output=True,
                               timeout=120, env=self.env)
            if r.returncode != 0:
                print("kf db stop: %s" % r.stderr.decode(), file=sys.stderr)
        if failed:
            self.dump_logs()
        keep = os.environ.get("KF_E2E_KEEP", "")
        if keep == "always" or (failed and keep):
            print("kept %s" % self.dir, file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def dump_logs(self, lines=40):
        names = sorted(os.listdir(self.dir))
        extra = [os.path.join("pg", "log")]
        for n in names + extra:
            p = os.path.join(self.dir, n)
            if not os.path.isfile(p) or not (n.endswith(".log") or
                                              n == extra[0]):
                continue
            with open(p, "rb") as f:
                tail = f.read().decode(errors="replace").splitlines()[-lines:]
            print("----- %s (last %d lines) -----" % (n, len(tail)),
                  file=sys.stderr)
            for line in tail:
                print("  " + line, file=sys.stderr)


def run(tag, body, time_limit=240):
    """Runs body(cluster) with a fresh Cluster; exits 0 on success, 1 on
    failure (with the logs printed).  A SIGALRM after time_limit (times
    SLACK, up to HANG_GUARD_MAX) turns a hang into a failure that still
    cleans up."""
    limit = max(time_limit, min(int(time_limit * SLACK), HANG_GUARD_MAX))

    def on_alarm(signum, frame):
        raise TestFailure("test exceeded its %ds time limit" % limit)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(1))
    signal.alarm(limit)
    c = None
    failed = True
    try:
        c = Cluster(tag)
        body(c)
        failed = False
    except Exception:
        traceback.print_exc()
    finally:
        signal.alarm(0)
        if c is not None:
            c.close(failed)
    print("%s: %s" % (tag, "FAIL" if failed else "PASS"), flush=True)
    sys.exit(1 if failed else 0)
