# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_worker_hygiene.py -- nothing a worker started outlives it.

What once happened: kill -9 of a worker left its kf-harness running,
re-parented to init, and left /tmp/kf-eval-* behind.

Here one worker runs with its own TMPDIR (so leftovers are easy to see
and nobody else's files are looked at) and a KF_HARNESS wrapper that
gives kf_launch calls a 600 s watchdog, so an evaluation of an infinite
loop runs for ten minutes unless someone kills it.  Before the worker
starts, TMPDIR holds a work directory of a dead worker (its lock file held
by nobody).  Then:
  - the starting worker removes that stale directory;
  - a campaign gets the infinite loop as a proposal (proposals go first),
    and once the harness is in the loop the worker is SIGKILLed;
  - every process the worker had started (the harness, its runners, the
    watchdog) must be gone, and TMPDIR must hold no work or evaluation
    directory -- within bounds far longer than the cleanup needs, far
    shorter than the ten minutes the loop would run.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

WRAPPER = """#!/bin/sh
# kf-harness with a 600 s kf_launch watchdog for evaluations
if [ "$1" = eval ]; then exec '%s' "$@" --call-timeout-ms=600000; fi
exec '%s' "$@"
"""

LEFTOVER = ("kf-worker-", "kf-eval-", "kf-harness-")


def descendants(root):
    """Pids of every live process below root (by /proc ppid), with their
    names."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        # comm may hold spaces and parentheses: split after the last ')'
        comm = st[st.index("(") + 1:st.rindex(")")]
        rest = st[st.rindex(")") + 2:].split()
        kids.setdefault(int(rest[1]), []).append((int(d), comm))
    out, todo = {}, [root]
    while todo:
        for pid, comm in kids.get(todo.pop(), []):
            out[pid] = comm
            todo.append(pid)
    return out


def alive(pid):
    """True unless pid is gone or a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return False
    return st[st.rindex(")") + 2:].split()[0] != "Z"


def body(c):
    tmp = os.path.join(c.dir, "tmp")
    os.mkdir(tmp)
    os.chmod(tmp, 0o755)
    # A dead worker's work directory: its lock file, nobody holding it.
    stale = os.path.join(tmp, "kf-worker-stale1")
    os.makedirs(os.path.join(stale, "eval-abc123", "kf-harness-def456"))
    open(os.path.join(stale, "lock"), "w").close()
    open(os.path.join(stale, "eval-abc123", "kf-harness-def456", "x.c"),
         "w").close()
    wrapper = os.path.join(c.dir, "kf-harness-wrapper")
    with open(wrapper, "w") as f:
        f.write(WRAPPER % (c.path("kf-harness"), c.path("kf-harness")))
    os.chmod(wrapper, 0o755)

    c.start_pg()
    c.start_coordinator()
    cid = kfcampaign.submit(c, kfcampaign.problem_dir("softmax"), evals=2,
                            minutes=10, population=2, seed=5)
    src = os.path.join(kfcampaign.source_dir(), "tests", "exploits",
                       "infinite_loop.c")
    out = c.kf("campaign", "propose", str(cid), src, "--proposer",
               "e2e.loop", "--coordinator", c.target)
    cand = int(out.strip())
    # The worker starts after the proposal, so the first task it leases is
    # the proposal's (priority).
    w = c.start_worker("w-hyg", slots=1,
                       env={"TMPDIR": tmp, "KF_HARNESS": wrapper})
    kfe2e.wait_until(lambda: not os.path.exists(stale), 60,
                     "the stale work directory removed by the new worker")
    c.log("stale work directory removed")

    def in_the_loop():
        check(w.alive(), "the worker died: exit %s" % w.popen.returncode)
        st = c.psql("SELECT t.id, t.state FROM eval_keys k JOIN tasks t ON"
                    " t.id = k.task_id WHERE k.candidate_id = %d" % cand)
        if not st or st[0][1] != "leased":
            return False
        with open(w.log_path, "rb") as f:
            log = f.read()
        # The harness logged its load stage for that task: verify, the
        # stage that calls the loop, runs now.
        tag = b"task=%s " % st[0][0].encode()
        return any(tag in line and b"stage load: ok" in line
                   for line in log.splitlines()) and st[0][0]
    tid = kfe2e.wait_until(in_the_loop, 300, "the infinite loop under "
                           "evaluation", interval=0.25)
    procs = descendants(w.pid)
    names = sorted(set(procs.values()))
    c.log("task %s in the loop; the worker's processes: %r" % (tid, names))
    check(any(n.startswith("kf-harness") for n in names),
          "no kf-harness below the worker: %r" % procs)
    check(any(n.startswith("kf-worker") for n in names),
          "no watchdog below the worker: %r" % procs)
    w.kill9()
    c.log("worker killed with SIGKILL")

    def all_gone():
        left = {p: n for p, n in procs.items() if alive(p)}
        return not left or None
    try:
        kfe2e.wait_until(all_gone, 120, "the worker's processes to die")
    except kfe2e.TestFailure:
        left = {p: n for p, n in procs.items() if alive(p)}
        raise kfe2e.TestFailure("processes the killed worker started are "
                                "still running: %r" % left)
    c.log("every process the worker started is gone")

    def clean():
        return not [e for e in os.listdir(tmp) if e.startswith(LEFTOVER)]
    try:
        kfe2e.wait_until(clean, 120, "the work directory removed")
    except kfe2e.TestFailure:
        raise kfe2e.TestFailure("left behind in TMPDIR: %r"
                                % os.listdir(tmp))
    c.log("TMPDIR is clean: %r" % os.listdir(tmp))
    check(c.coord.alive(), "the coordinator died")


if __name__ == "__main__":
    kfe2e.run("hygiene", body, time_limit=600)
