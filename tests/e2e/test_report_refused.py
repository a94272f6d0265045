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
the store's bounds and the harness keeps its numbers believable (even an
absurd `bytes` in the spec gives achieved_gbps ~1e14 at most, as a call
through the runner takes tens of microseconds; the store's bound is 1e15).
What a worker passes on unjudged is what its own harness reports, so the
test stands in for a harness that differs from the coordinator's, with
the smallest change that needs no test hook in the product: kf-worker
runs the real kf-harness through KF_HARNESS (a documented setting, also
used by test_worker_hygiene), via a wrapper that lets every mode through
unchanged and, for `eval`, appends protobuf fields to the real
EvalResult (a field's last value wins):
  - `identity` names a C compiler whose version line fills the 255 bytes
    the harness passes on; the worker registers it as device.compiler,
    which the coordinator refused above 127 bytes (the worker could not
    join at all) until the worker cut it (worker/device_cuda.c);
  - every other evaluation: a profile whose status ("throttled") this
    coordinator does not know, as a newer harness would send.  The store
    refuses that result alone: "profile.status 'throttled' is not one
    of ..." (coordinator/coord_db.c decode_eval, kf_prof_from_pb);
  - every evaluation: a toolchain of 255 bytes cut inside a two-byte
    character, which is what the harness reports for a compiler whose
    --version line is longer (harness/core/identity.c).  The worker's
    sanitizer escapes the cut byte (4 bytes for 1): 258 bytes, which the
    store refused for good ("toolchain is longer than 256 bytes") until
    the worker cut names to the store's bounds (worker/task_eval.c
    cap_names).  Those evaluations must now be stored.

Checked, while 300 checksum tasks run on the same worker (2 slots,
checksum and eval), so the refused results share report batches with
accepted ones:
  - eval tasks with the unknown profile status end failed after one
    attempt, with no result row and a last_error that says the result was
    refused and why; at least two of them;
  - eval tasks with only the cut toolchain end done with their
    evaluation; at least one; the coordinator never refused a toolchain;
  - the worker's log records each refused one exactly once as "result
    refused for good ... recorded as failed, dropped" with the reason,
    the coordinator's log judges each exactly once (nothing was resent),
    and the worker's /metrics outbox is back to 0;
  - every checksum task ends done with exactly one correct result, and a
    second wave submitted after the refusals ends done too: the worker
    kept leasing;
  - every process stays up.
"""
import os
import re
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

# What every harness wrapper of these tests shares (a piece of their
# %-templates, so no percent sign in it): protobuf encoding, and running
# the real harness (REAL) with its result pipe (fd 3) taken over, so that
# edit(msg) may change the EvalResult it writes.
EVAL_EDIT = r"""
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


def field(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def run_editing(edit):
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
        msg = edit(bytes(data[4:4 + n]))
        data = len(msg).to_bytes(4, "little") + msg
    os.write(out, bytes(data))
    os.close(out)
    sys.exit(rc if rc >= 0 else 128 - rc)
"""

WRAPPER = r"""#!%(python)s
# The real kf-harness.  `identity` names a C compiler whose version line
# fills the harness's 255 bytes.  For `eval`, its EvalResult gets fields
# appended (a field's last value wins; an embedded message is merged):
#  - always a toolchain cut in the middle of a character at 255 bytes, as
#    the harness reports a compiler whose --version line is longer;
#  - on every evaluation (every=1) or every other one (every=0, the first
#    included), a profile whose status this coordinator does not know, as
#    a newer harness would send.
import os
import subprocess
import sys

REAL = %(real)r
TOOLCHAIN = %(toolchain)r
EVERY = %(every)d
COUNT_DIR = %(count_dir)r
if sys.argv[1:2] == ["identity"]:
    # the real identity, with the C compiler's version line as long as a
    # compiler may print it (the harness passes 255 bytes of it, ASCII)
    import json
    ident = json.loads(subprocess.run([REAL, "identity"], check=True,
                                      stdout=subprocess.PIPE).stdout)
    ident["cc"] = TOOLCHAIN[:-1].decode() + "y"
    print(json.dumps(ident))
    sys.exit(0)
if sys.argv[1:2] != ["eval"]:
    os.execv(REAL, [REAL] + sys.argv[1:])
""" + EVAL_EDIT + r"""

k = 0  # this evaluation's number, race-free across concurrent harnesses
while True:
    try:
        os.close(os.open(os.path.join(COUNT_DIR, "eval-%%d" %% k),
                         os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        break
    except FileExistsError:
        k += 1


def edit(msg):
    msg += field(16, TOOLCHAIN)  # toolchain = 16
    if EVERY or k %% 2 == 0:
        msg += field(40, field(1, b"throttled"))  # profile.status
    return msg


run_editing(edit)
"""

# What the harness reports for a compiler whose version line is longer
# than its 255-byte buffer, cut inside a two-byte character.
TOOLCHAIN = b"cc (a version line longer than 255 bytes) " + b"x" * 212 + b"\xc3"


def write_wrapper(c, every):
    """The wrapper, in the test's directory; its path."""
    path = os.path.join(c.dir, "kf-harness-newer")
    count = os.path.join(c.dir, "eval-count")
    os.mkdir(count)
    with open(path, "w") as f:
        f.write(WRAPPER % {"python": sys.executable,
                           "real": c.path("kf-harness"),
                           "toolchain": TOOLCHAIN, "every": every,
                           "count_dir": count})
    os.chmod(path, 0o755)
    return path


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
    wrapper = write_wrapper(c, every=0)

    c.start_pg()
    c.start_coordinator()
    mport = kfe2e.free_port()
    w = c.start_worker("w-ref", slots=2,
                       extra=("--metrics-listen", "127.0.0.1:%d" % mport),
                       env={"KF_HARNESS": wrapper})
    # A 255-byte compiler line once kept a worker from registering at all
    # (device.compiler: 127 bytes at most): now it is cut.
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 1,
                     60, "the worker registered")
    comp = c.scalar("SELECT e.toolchain FROM workers w JOIN environments e"
                    " ON e.id = w.environment_id")
    check(comp.startswith("cc (a version line") and len(comp) <= 127,
          "registered compiler: %r" % comp)
    # no stop before the fourth evaluation: at the default target (0.95 of
    # the floor) a fast accepted vecsum ended the campaign and its pending
    # evaluation failed unattempted (a loaded CI run, 2026-12-01)
    cid = kfcampaign.submit(c, kfcampaign.problem_dir("vecsum"), evals=4,
                            minutes=10, population=2, seed=3,
                            extra=("--target-roofline", "2"))
    ids = c.submit(300, sleep_ms=20, prefix="innocent")
    watch = [c.coord, w]

    def judged():
        for p in watch:
            check(p.alive(), "%s died: exit %s" % (p.name,
                                                   p.popen.returncode))
        rows = eval_tasks(c, cid)
        for r in rows:
            check("toolchain" not in r[3], "eval task %s: the store refused"
                  " the toolchain the worker sent: %r" % (r[0], r[3]))
        n_refused = sum(1 for r in rows if r[1] == "failed" and
                        "refused" in r[3])
        n_done = sum(1 for r in rows if r[1] == "done")
        return n_refused >= 2 and n_done >= 1 and rows
    rows = kfe2e.wait_until(judged, 300, "two eval tasks refused and one "
                            "accepted", interval=0.5)
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
    # failed for another reason than a refusal: only a stop rule's, never
    # attempted (no result to refuse)
    for tid, state, attempt, err, nres in rows:
        if state == "failed" and "refused" not in err:
            check(attempt == "0" and nres == "0", "eval task %s failed "
                  "after %s attempts with %s results: %r" % (tid, attempt,
                                                            nres, err))
    failed = [r for r in rows if r[1] == "failed" and "refused" in r[3]]
    done = [r for r in rows if r[1] == "done"]
    check(len(failed) >= 2 and done, "eval tasks: %r" % rows)
    for tid, state, attempt, err, nres in failed:
        check(attempt == "1", "eval task %s: %s attempts; a refused result"
              " is final, never retried" % (tid, attempt))
        check(nres == "0", "eval task %s has %s results" % (tid, nres))
        check("refused" in err and "profile.status 'throttled'" in err,
              "eval task %s: last_error does not say why: %r" % (tid, err))
    # The cut toolchain alone is no reason to refuse: the worker cut it to
    # what the store takes, and those evaluations were stored.
    for tid, state, attempt, err, nres in done:
        check(c.count("SELECT count(*) FROM evaluations WHERE task_id = %s"
                      % tid) == 1, "eval task %s done without its "
              "evaluation" % tid)
    with open(w.log_path, "rb") as f:
        log = f.read().decode("utf-8", "replace")
    for tid, state, _, _, _ in failed:
        lines = [ln for ln in log.splitlines()
                 if "task %s attempt 1: result refused for good" % tid in ln]
        check(len(lines) == 1, "worker log: task %s refused %d times: %r"
              % (tid, len(lines), lines))
        check("profile.status" in lines[0] and "recorded as failed, "
              "dropped" in lines[0], "worker log line: %r" % lines[0])
    # and the coordinator judged each exactly once: nothing was resent
    with open(c.coord.log_path, "rb") as f:
        clog = f.read().decode("utf-8", "replace")
    check("toolchain is longer" not in clog,
          "the coordinator refused a toolchain the worker sent")
    for tid, _, _, _, _ in failed:
        n = clog.count("result of task %s attempt 1 refused: profile.status"
                       % tid)
        check(n == 1, "coordinator log: task %s refused %d times" % (tid, n))
    for p in watch:
        check(p.alive(), "%s died" % p.name)
    c.log("%d eval results refused for good: failed with the reason, "
          "dropped once by the worker; %d with a cut toolchain stored"
          % (len(failed), len(done)))


if __name__ == "__main__":
    kfe2e.run("report_refused", body, time_limit=600)
