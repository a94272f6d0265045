# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_report_refused.py -- a result the coordinator refuses
for good is recorded as failed and dropped by the worker, and costs
nobody else's results.

The worker's side of poison isolation (worker/worker.c on_reported ->
drop_failed): a result the store judges permanently invalid gets
REPORT_INVALID; the worker must log it as failed with the coordinator's
reason, drop it from its outbox and go on leasing.  Resending it could
never succeed, and keeping it would hold the outbox (and, once the outbox
bound is reached, the worker's leasing) forever.

Making a real worker send such a result.  On a CPU worker no input a
submitter or a candidate controls does: the worker sanitizes every text to
the store's bounds and the harness keeps its numbers believable (an
absurd `bytes` in the spec still gives achieved_gbps ~1e14 at most, as a
call through the runner takes tens of microseconds; the store's bound is
1e15).  What remains are environment texts the harness passes on: its
`toolchain` is the system compiler's --version line cut at 255 bytes,
possibly in the middle of a character, which the worker's sanitizer then
escapes to more than the store's 256 bytes.  This test stands in for
that compiler with the smallest change that needs no test hook in the
product: kf-worker runs the real kf-harness through KF_HARNESS (a
documented setting, also used by test_worker_hygiene), via a wrapper that
lets every mode through unchanged and, for `eval`, appends to the real
EvalResult one protobuf field, a 300-byte toolchain (protobuf: the last
value of a field wins).  The coordinator then refuses each eval result
alone: "toolchain ... longer than 256 bytes" (db/store_tasks.c
kf_store__report_bad).

Checked, while 300 checksum tasks run on the same worker (2 slots,
checksum and eval), so the refused results share report batches with
accepted ones:
  - every eval task that ended holds state failed, after one attempt,
    with no result row and a last_error saying the result was refused and
    naming the toolchain; at least two such tasks exist; no evaluation was
    stored;
  - the worker's log records each of them exactly once as "result refused
    for good ... recorded as failed, dropped" with that reason (nothing
    was resent), and its /metrics outbox is back to 0;
  - every checksum task ends done with exactly one correct result, and a
    second wave submitted after the refusals ends done too: the worker
    kept leasing;
  - every process stays up.
"""
import os
import re
import socket
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

WRAPPER = r"""#!%(python)s
# The real kf-harness; for `eval`, its EvalResult gets a 300-byte toolchain
# appended (a field's last value wins), as a compiler whose --version line
# is longer than the store takes would give.
import os
import subprocess
import sys

REAL = %(real)r
TOOLCHAIN = %(toolchain)r
if sys.argv[1:2] != ["eval"]:
    os.execv(REAL, [REAL] + sys.argv[1:])


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


out = os.dup(3)          # the worker's result pipe (not inherited)
r, w = os.pipe()
os.dup2(w, 3)            # the real harness writes its result here
os.close(w)
p = subprocess.Popen([REAL] + sys.argv[1:], close_fds=False)
os.close(3)
data = bytearray()
while True:
    chunk = os.read(r, 65536)
    if not chunk:
        break
    data += chunk
rc = p.wait()
if len(data) >= 4:
    n = int.from_bytes(data[:4], "little")
    msg = bytes(data[4:4 + n])
    tc = TOOLCHAIN.encode()
    msg += varint(16 << 3 | 2) + varint(len(tc)) + tc  # toolchain = 16
    data = len(msg).to_bytes(4, "little") + msg
os.write(out, bytes(data))
os.close(out)
sys.exit(rc if rc >= 0 else 128 - rc)
"""

TOOLCHAIN = ("cc (a toolchain line longer than the store's 256 bytes) "
             + "x" * 244)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def outbox(mport):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % mport,
                                timeout=10) as r:
        text = r.read().decode()
    m = re.search(r"^kf_worker_outbox(?:\{[^}]*\})? (\S+)$", text, re.M)
    check(m, "no kf_worker_outbox in the worker's /metrics")
    return float(m.group(1))


def wait_done(c, ids, watch):
    """Waits until every task in ids is done (the eval tasks fail, so
    Cluster.wait_all_done's 'no task failed' does not apply); fails at once
    when one of them failed or a watched process died."""
    idlist = ",".join(map(str, ids))

    def done():
        for p in watch:
            check(p.alive(), "%s died: exit %s" % (p.name,
                                                   p.popen.returncode))
        st = dict(c.psql("SELECT state, count(*) FROM tasks WHERE id IN"
                         " (%s) GROUP BY 1" % idlist))
        check("failed" not in st, "checksum tasks failed: %r" % st)
        return st.get("done") == str(len(ids))
    kfe2e.wait_until(done, 300, "%d checksum tasks done" % len(ids),
                     interval=0.5)


def eval_tasks(c, cid):
    return c.psql("SELECT t.id, t.state, t.attempt, coalesce(t.last_error,"
                  " ''), (SELECT count(*) FROM results r WHERE r.task_id ="
                  " t.id) FROM tasks t WHERE t.campaign_id = %d AND t.kind"
                  " = 'eval' ORDER BY t.id" % cid)


def body(c):
    wrapper = os.path.join(c.dir, "kf-harness-longtc")
    with open(wrapper, "w") as f:
        f.write(WRAPPER % {"python": sys.executable,
                           "real": c.path("kf-harness"),
                           "toolchain": TOOLCHAIN})
    os.chmod(wrapper, 0o755)

    c.start_pg()
    c.start_coordinator()
    mport = free_port()
    w = c.start_worker("w-ref", slots=2,
                       extra=("--metrics-listen", "127.0.0.1:%d" % mport),
                       env={"KF_HARNESS": wrapper})
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 1,
                     60, "the worker registered")
    cid = kfcampaign.submit(c, kfcampaign.problem_dir("vecsum"), evals=4,
                            minutes=10, population=2, seed=3)
    ids = c.submit(300, sleep_ms=20, prefix="innocent")
    watch = [c.coord, w]

    def refused():
        for p in watch:
            check(p.alive(), "%s died: exit %s" % (p.name,
                                                   p.popen.returncode))
        rows = eval_tasks(c, cid)
        failed = [r for r in rows if r[1] == "failed"]
        return len(failed) >= 2 and rows
    rows = kfe2e.wait_until(refused, 300, "two eval tasks refused and failed",
                            interval=0.5)
    c.log("eval tasks: %r" % rows)
    wait_done(c, ids, watch)
    c.check_exactly_once(ids)
    c.log("300 innocent checksum tasks done, each with its one result")

    # The worker still leases and finishes work after dropping them.
    ids2 = c.submit(50, sleep_ms=5, prefix="after")
    wait_done(c, ids2, watch)
    c.check_exactly_once(ids2)
    out = c.kf("campaign", "stop", str(cid), "--coordinator", c.target)
    c.log("campaign stopped: %s" % out.strip())
    kfe2e.wait_until(lambda: outbox(mport) == 0, 60,
                     "the worker's outbox empty")

    rows = eval_tasks(c, cid)
    failed = [r for r in rows if r[1] == "failed"]
    check(len(failed) >= 2, "eval tasks: %r" % rows)
    for tid, state, attempt, err, nres in rows:
        if state not in ("done", "failed"):
            continue  # the campaign was stopped with it queued or leased
        check(state == "failed", "eval task %s ended %s: the store took a"
              " result with a 300-byte toolchain" % (tid, state))
        check(attempt == "1", "eval task %s: %s attempts; a refused result"
              " is final, never retried" % (tid, attempt))
        check(nres == "0", "eval task %s has %s results" % (tid, nres))
        check("refused" in err and "toolchain" in err and
              "longer than" in err,
              "eval task %s: last_error does not say why: %r" % (tid, err))
    with open(w.log_path, "rb") as f:
        log = f.read().decode("utf-8", "replace")
    for tid, state, _, _, _ in failed:
        lines = [ln for ln in log.splitlines()
                 if "task %s attempt 1: result refused for good" % tid in ln]
        check(len(lines) == 1, "worker log: task %s refused %d times: %r"
              % (tid, len(lines), lines))
        check("toolchain" in lines[0] and "recorded as failed, dropped"
              in lines[0], "worker log line: %r" % lines[0])
    # and the coordinator judged each exactly once: nothing was resent
    with open(c.coord.log_path, "rb") as f:
        clog = f.read().decode("utf-8", "replace")
    for tid, _, _, _, _ in failed:
        n = clog.count("result of task %s attempt 1 refused: toolchain" % tid)
        check(n == 1, "coordinator log: task %s refused %d times" % (tid, n))
    check(c.count("SELECT count(*) FROM evaluations WHERE campaign_id = %d"
                  % cid) == 0, "an evaluation was stored")
    for p in watch:
        check(p.alive(), "%s died" % p.name)
    c.log("%d eval results refused for good: failed with the reason, "
          "dropped once by the worker" % len(failed))


if __name__ == "__main__":
    kfe2e.run("report_refused", body, time_limit=600)
