#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
e2e: the torch backend's persistent runners -- one sandboxed Python
process per side serving every call, the GPU path's model (device cuda
always runs so; a CUDA context cannot survive fork) -- run for real on CPU
with `kf-harness eval-files --torch-persistent`, through the whole
pipeline (verify at every check size x distribution, time with fresh
inputs per repetition):

1. `kf import kernelbench` of test_torch's Linear+ReLU model.
2. An honest ModelNew: ok, speedup over eager reported, the load stage
   naming the per-side process and its defenses, torch.compile reported as
   not timed (Debian's torch 1.13 has none) rather than failing.
3. Refused: a wrong answer, replayed outputs from predicted inputs and a
   first answer cached in the process and returned again (wrong_answer);
   reading a file, a socket, ctypes into libc (sandbox_violation); a
   thread (crash: RLIMIT_NPROC 0); a process that exits in its third call
   (crash, "exited with status 0"); a call that sleeps past its limit
   (timeout, the process killed, the harness not hung); writing into its
   input (never ok).  One that prints in its forward (a "DONE" line among
   it) is ok: what a side prints never reads as a reply.  One that
   rewrites its replies to name another call is sandbox_violation, and so
   is one that opens /proc/PID/mem of every process (the reference's).
4. What the stop between calls guarantees: a candidate that renices every
   process of its uid (EPERM; answers honestly), one that answers wrongly
   unless its SIGCONT handler saw it continued before its call, and one
   that replaces the runner's command reader with a loop watching its
   input buffer for the next draw and answers wrongly if it ever sees it
   change before its command arrives -- all ok, i.e. refused.
   On a copy of the problem whose spec asks for bit-for-bit determinism:
   the honest model ok, and one whose answer drifts with every call of
   its process, hidden behind a cache of its first answer per input,
   nondeterministic (the check's second run is a new process).
5. Workers advertise torch at registration (worker/torch_caps.c): one
   whose Python has no torch (KF_PYTHON=/bin/false) registers without the
   "torch" kind, one with Debian's torch registers "torch" and
   "torch:1.13..." (no "torch.cuda": a CPU worker); a campaign on the
   torch problem runs to its end on the second, and the first -- polling
   for work all along, same device class -- never leases one of its
   tasks.

6. The verdict of the GPU idle gate (runner.py _IdleGate; on the GPU the
   reference's runner waits, before each call, until no other process's
   work runs on the GPU, and says so in DONE's FLAGS bit 16): the
   harness's half, run on CPU with a reference whose runner says it
   waited (its _say rewritten, as only a reference's own code can) --
   the candidate called before it ends sandbox_violation naming the
   work it left running; a candidate whose runner says the same about
   the reference names no one (only the reference's word counts): ok.

7. A reference that draws from torch's generator (F.dropout in training
   mode), with itself as candidate: ok per call and persistent.  A file
   in latin-1: kf import refuses it, a candidate is compile_error.  A
   model whose forward hook completes its answer: ok in both (the runner
   calls forward directly only when no hook would run).  One that
   returns the harness's own output view: wrong_answer, named.

Skipped (77) when /usr/bin/python3 (or $KF_PYTHON) has no torch.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402
import test_torch as tt  # noqa: E402


def kinds_of(c, name):
    rows = c.psql("SELECT array_to_string(task_kinds, ' ') FROM workers "
                  "WHERE name = '%s'" % name)
    return rows[0][0].split() if rows else None


def leases(c, prob):
    c.start_pg()
    c.start_coordinator()
    tw = c.start_worker("torchw", slots=1)
    nt = c.start_worker("notorch", slots=2, env={"KF_PYTHON": "/bin/false"})
    for name in ("torchw", "notorch"):
        kfe2e.wait_until(lambda: kinds_of(c, name), 120,
                       "worker %s to register" % name)
    kt, kn = kinds_of(c, "torchw"), kinds_of(c, "notorch")
    check("torch" in kt and any(k.startswith("torch:1.13") for k in kt) and
          "torch.cuda" not in kt and "eval" in kt,
          "torch worker registered %r" % kt)
    check("eval" in kn and not any(k.startswith("torch") for k in kn),
          "worker without torch registered %r" % kn)
    cid = kfcampaign.submit(c, prob, evals=3, minutes=5, population=3)
    kfcampaign.wait_done(c, cid, 300, watch=(tw, nt))
    done = c.count("SELECT count(*) FROM tasks WHERE campaign_id = %d AND "
                   "state = 'done'" % cid)
    mine = c.count("SELECT count(*) FROM evaluations e JOIN workers w ON "
                   "w.id = e.worker_id WHERE e.campaign_id = %d AND w.name "
                   "= 'notorch'" % cid)
    # every task a worker ran, failed ones included, is in its last line
    nt.terminate()
    with open(os.path.join(c.dir, "notorch.log")) as f:
        ran = "stopped after 0 tasks" in f.read()
    check(done > 0 and mine == 0 and ran,
          "campaign %d: %d tasks done, %d evaluations by the worker without "
          "torch, which %s" % (cid, done, mine, "ran none" if ran else
                               "ran tasks (notorch.log)"))
    c.log("leases: %d tasks done by the torch worker, none by the worker "
          "without torch (kinds %r / %r)" % (done, kt, kn))


# DONE's FLAGS bit 16, with a wait of 7 ms found in 5 probes: what the
# GPU gate of a runner says when another process's work held the GPU
SAYS_BUSY = '''
import sys as _kf_sys
_kf_runner = _kf_sys.modules["__main__"]
_kf_say = _kf_runner._say


def _kf_busy(fd, text):
    if text.startswith("DONE "):
        w = text.split()
        w[5] = str(int(w[5]) | 16)
        w[6:9] = ["7000000", "5", "0"]
        text = " ".join(w)
    _kf_say(fd, text)


_kf_runner._say = _kf_busy
'''


def gate_verdicts(c, prob):
    pers = ["--torch-persistent"]
    busy = prob + "_busy_ref"
    if not os.path.isdir(busy):
        shutil.copytree(prob, busy)
        with open(os.path.join(busy, "spec.json")) as f:
            ref = json.load(f).get("reference", "reference.py")
        with open(os.path.join(busy, ref), "a") as f:
            f.write(SAYS_BUSY)
    r = tt.evaluate(c, busy, tt.HONEST, "p_gate_convicted", pers)
    check(r["outcome"] == "sandbox_violation" and
          "left GPU work running after its call returned" in
          r.get("reason", "") and "waited 7000 us" in r.get("reason", "") and
          "5 probes" in r.get("reason", ""),
          "the reference's gate waited after the candidate's call: %s (%s)"
          % (r["outcome"], r.get("reason")))
    r = tt.evaluate(c, prob, tt.HONEST + SAYS_BUSY, "p_gate_own_word", pers)
    check(r["outcome"] == "ok", "a candidate's runner saying the GPU was "
          "busy before its calls names no one: %s (%s)" % (r["outcome"],
                                                          r.get("reason")))


DROPOUT = """
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x):
        return F.dropout(x, p=0.5, training=True)


def get_inputs():
    return [torch.randn(16, 64)]


def get_init_inputs():
    return []
"""


RAW_REPLY = """
import os
import sys
import torch
import torch.nn.functional as F


class ModelNew(torch.nn.Module):
    def forward(self, x):
        f = sys._getframe()
        while f is not None and "reply" not in f.f_locals:
            f = f.f_back
        if f is None:
            return F.dropout(x, p=0.5, training=True)
        os.write(f.f_locals["reply"], b'ERR run \\xff\\xfe\\x1b[31m"}\\n')
        os._exit(5)
"""


ALIAS_OUT = """
import sys
import torch
import torch.nn.functional as F


def _find(shape):
    f = sys._getframe(1)
    while f is not None:
        outs = f.f_locals.get("outs")
        if (isinstance(outs, list) and len(outs) == 1 and
                isinstance(outs[0], torch.Tensor) and
                outs[0].shape == shape):
            return outs[0]
        f = f.f_back
    return None


class ModelNew(torch.nn.Module):
    def forward(self, x):
        torch.manual_seed(0x6B66 + 3)  # the runner's CALL_SEED
        r = F.dropout(x, p=0.5, training=True)
        o = _find(x.shape)
        if o is None:
            return r
        o.copy_(r)
        return o
"""


# ALIAS_OUT behind a lie: torch.Tensor.data_ptr rebound to name another
# address for the view it returns (red team 2026-12-01-s3: ok at 4.6-5.2x
# on a 256x16384 relu); the harness's checks call torch's own C methods
# (runner.py _T)
ALIAS_LIE = ALIAS_OUT.replace("""class ModelNew(""", """_real_dp = torch.Tensor.data_ptr


def _lie(self):
    if getattr(self, "_kf_alias", False):
        return 64
    return _real_dp(self)


torch.Tensor.data_ptr = _lie
torch.Tensor.numel = lambda self: 0 if getattr(self, "_kf_alias",
                                               False) else self.nelement()


class ModelNew(""").replace("""        o.copy_(r)
        return o""", """        o.copy_(r)
        v = o.view(o.shape)
        v._kf_alias = True
        return v""")


HOOKED = """
import torch
import torch.nn.functional as F


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # forward returns half the answer; the hook doubles it
        self.register_forward_hook(lambda m, args, out: out * 2.0)

    def forward(self, x):
        return F.dropout(x, p=0.5, training=True) * 0.5
"""


def random_reference(c):
    """A reference that draws from torch's generator (dropout in training
    mode) answers the same inputs alike in both runner models: each call
    of a side starts from one seed (runner.py CALL_SEED), so the same
    model as candidate is ok, where the persistent reference once
    disagreed with itself (its generator ran on between calls)."""
    work = os.path.join(c.dir, "work")
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "dropout.py")
    tt.write(model, DROPOUT)
    prob = os.path.join(work, "dropout")
    rc, out, err = c.kf_run(["import", "kernelbench", model, "--out", prob],
                            work, 600)
    check(rc == 0, "kf import of the dropout model exited %d: %s%s" % (
        rc, out, err))
    cand = DROPOUT.replace("class Model(", "class ModelNew(")
    for tag, extra in (("drop_percall", []),
                       ("drop_persist", ["--torch-persistent"])):
        r = tt.evaluate(c, prob, cand, tag, extra)
        check(r["outcome"] == "ok", "dropout reference as candidate, %s: "
              "%s (%s)" % (tag, r["outcome"], r.get("reason")))
    not_utf8(c, work, prob)
    # a result written into the harness's own output view (found through
    # the caller's frames) and returned skipped the allocation and copy
    # the reference pays (red team, 2026-11-30: +15%): refused
    for tag, src, extra in (("alias_percall", ALIAS_OUT, []),
                            ("alias_persist", ALIAS_OUT,
                             ["--torch-persistent"]),
                            ("alias_lie", ALIAS_LIE, []),
                            ("alias_lie_persist", ALIAS_LIE,
                             ["--torch-persistent"])):
        r = tt.evaluate(c, prob, src, tag, extra)
        check(r["outcome"] == "wrong_answer" and "the harness's own output "
              "buffer" in r.get("reason", ""), "a result that is the "
              "harness's output view, %s: %s (%s)" % (tag, r["outcome"],
                                                     r.get("reason")))
    # the runner calls a module's forward itself when nothing else would
    # run (runner.py _direct): one whose forward hook is part of its answer
    # must still get the hook
    for tag, extra in (("hook_percall", []),
                       ("hook_persist", ["--torch-persistent"])):
        r = tt.evaluate(c, prob, HOOKED, tag, extra)
        check(r["outcome"] == "ok", "a model whose forward hook completes "
              "its answer, %s: %s (%s)" % (tag, r["outcome"],
                                          r.get("reason")))


def not_utf8(c, work, prob):
    """A file in latin-1 (with its coding declaration) is the author's to
    convert: kf import refuses it naming the line, and a candidate is
    compile_error in both runner models -- it was infra_error."""
    lat = ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + DROPOUT).encode(
        "latin-1")
    model = os.path.join(work, "latin1.py")
    with open(model, "wb") as f:
        f.write(lat)
    rc, out, err = c.kf_run(["import", "kernelbench", model, "--out",
                             os.path.join(work, "latin1")], work, 600)
    check(rc == 2 and "line 2: byte 0xe9 is not UTF-8" in err and
          not os.path.exists(os.path.join(work, "latin1")),
          "kf import of a latin-1 file: %d %s%s" % (rc, out, err))
    cand = lat.replace(b"class Model(", b"class ModelNew(")
    for tag, extra in (("latin1_percall", []),
                       ("latin1_persist", ["--torch-persistent"])):
        path = os.path.join(c.dir, "%s.py" % tag)
        with open(path, "wb") as f:
            f.write(cand)
        r = subprocess.run([c.path("kf-harness"), "eval-files", "--spec",
                            prob, "--source", path] + extra, env=c.env,
                           stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=600, preexec_fn=kfe2e._pdeathsig)
        res = json.loads(r.stdout)
        check(res["outcome"] == "compile_error" and
              "line 2: byte 0xe9 is not UTF-8" in res.get("reason", ""),
              "a latin-1 candidate, %s: %s (%s)" % (
                  tag, res["outcome"], res.get("reason")))
    # raw bytes a candidate writes on its reply pipe reach the reason as
    # \xNN escapes: eval-files' output stays JSON (it was not UTF-8)
    r = tt.evaluate(c, prob, RAW_REPLY, "raw_reply")
    check(r["outcome"] == "crash" and "\\xff\\xfe" in r.get("reason", ""),
          "raw bytes on the reply pipe: %s (%r)" % (r["outcome"],
                                                   r.get("reason")))


def body(c):
    random_reference(c)
    prob = tt.import_model(c)
    with open(os.path.join(prob, "spec.json")) as f:
        check(json.load(f)["torch"]["device"] == "cpu", "device not cpu")
    tt.persistent(c, prob)
    gate_verdicts(c, prob)
    leases(c, prob)


if __name__ == "__main__":
    if not tt.have_torch():
        print("test_torch_persistent: SKIP: %s has no torch (Debian: "
              "python3-torch)" % tt.PY)
        sys.exit(77)
    kfe2e.run("torch_persistent", body, time_limit=900)
