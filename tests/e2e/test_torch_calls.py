# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_torch_calls.py -- the torch backend's call processes on
CPU (harness/torch/runner.py `_child`, one fresh process per call), with
kf-harness eval-files on problems/torch/kb1_relu and candidates written to
break one property each (found by a red team on 2026-11-30):

1. Every call is warmed alike before READY: the runner calls the side's
   own function once on its buffers before the timed call, for the
   reference as for a candidate, so a candidate gains nothing by warming
   itself in its constructor.  Shown by a candidate that answers right
   only when its forward has already run once in its process: ok (before
   the change: wrong_answer).
2. Nothing outlives a call: SysV shared memory, reached through the
   runner's own libc handle with the audit hook's list replaced, is
   killed by the per-call seccomp filter (sandbox_violation naming
   seccomp; before: a counter there told each call its place).
3. The side's memfd is closed in the call process, duplicates included
   (Python's mmap keeps one per mapping): a candidate that finds any
   descriptor of a regular file or memfd beyond 0-2 raises; ok.
4. An infrastructure failure claimed by a candidate's own process (an
   "ERR infra" line on its reply pipe) is its crash, not infra_error (a
   showdown entry keeps its place on an infra_error); so is an armed
   process that a timer of its own kills while it is stopped before its
   call (it was "SIGCONT: No such process", infra_error).
5. A call process sees nothing of the previous one: when it is armed its
   outputs already hold the poison (0xFF bytes), not the previous call's
   results; mprotect cannot make an input view writable (it is mapped
   from a read-only descriptor); mremap, which grew a view past the last
   buffer's canary, fails (EPERM).  The candidate answers wrongly if any
   of these holds, so ok means none does (before: it carried a counter).
6. A problem from outside: a spec whose bytes claim a million times what
   its tensors hold makes the reference itself beat the roofline floor:
   spec_error naming the reference, not too_fast for an honest
   candidate.  And `kf import` of a model that prints a JSON object of
   its own while it runs writes the spec from what the reference really
   takes and returns (before: it took the printed object for the
   inspector's report).
7. No descriptor can be made to signal a process, or to carry a mark
   from one call to the next: a call process shares its command and
   reply pipes with its zygote and the eval, and F_SETOWN with O_ASYNC on
   them made the eval's next write SIGKILL or SIGSTOP another side's
   runner (a showdown won by stopping its rivals), F_SETSIG kept a key
   between the determinism check's two runs (red team 2026-12-02-s3-cand).
   A candidate that tries every such fcntl and ioctl on its descriptors,
   and answers wrongly if one is taken: ok (before: wrong_answer).

Skipped (77) when /usr/bin/python3 (or $KF_PYTHON) has no torch.
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402
from test_torch import PY, evaluate, have_torch  # noqa: E402

SRC = os.environ.get("KF_SOURCE_DIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WARMED = '''import torch
import torch.nn as nn

CALLS = [0]


class ModelNew(nn.Module):
    def forward(self, x):
        CALLS[0] += 1
        # right only when this process has called forward before
        return torch.relu(x) if CALLS[0] >= 2 else x
'''

SYSV = '''import ctypes
import sys
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        runner = sys.modules["__main__"]
        runner.AUDIT_BAD = ("\\x00never",)
        libc = runner._libc
        libc.shmget.restype = ctypes.c_int
        self.sid = libc.shmget(0x4B46, 4096, 0o1000 | 0o600)

    def forward(self, x):
        return torch.relu(x)
'''

IMAGE = '''import os
import stat
import torch
import torch.nn as nn


def _files():
    found = []
    for fd in range(3, 1024):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found.append("fd %d (%d bytes)" % (fd, st.st_size))
    return found


class ModelNew(nn.Module):
    def forward(self, x):
        found = _files()
        if found:
            raise RuntimeError("the side's image is reachable: %s"
                               % ", ".join(found))
        return torch.relu(x)
'''

CLAIMS_INFRA = '''import os
import sys
import time
import torch
import torch.nn as nn


def _claim():
    # the runner's reply pipe, from its frame; the runner's own words for
    # a failure before the side's code runs
    f = sys._getframe()
    while "reply" not in f.f_locals:
        f = f.f_back
    os.write(f.f_locals["reply"], b"ERR infra mapping the buffers: ENOMEM\\n")
    time.sleep(60)  # the line is read before any exit status


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _claim()

    def forward(self, x):
        return torch.relu(x)
'''

CLAIMS_INFRA_CALL = CLAIMS_INFRA.replace('''    def __init__(self):
        super().__init__()
        _claim()

    def forward(self, x):
        return torch.relu(x)''', '''    def forward(self, x):
        _claim()''')


KILLS_ITSELF = '''import ctypes
import sys
import torch
import torch.nn as nn

runner = sys.modules["__main__"]
runner.AUDIT_BAD = ("\\x00never",)
syscall = runner._libc.syscall
syscall.restype = ctypes.c_long
say = runner._say


class Sigevent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int),
                ("notify", ctypes.c_int), ("pad", ctypes.c_byte * 48)]


def _say(fd, text):
    if text == "READY":
        # a POSIX timer whose signal is SIGKILL, 100 us after READY: it
        # fires while the harness stops the process, or has stopped it
        ev = Sigevent(None, 9, 0)  # SIGKILL, SIGEV_SIGNAL
        tid = ctypes.c_int(0)
        if syscall(222, 1, ctypes.byref(ev), ctypes.byref(tid)) == 0:
            spec = (ctypes.c_long * 4)(0, 0, 0, 100000)
            syscall(223, tid, 0, spec, None)  # timer_settime
    say(fd, text)


runner._say = _say


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


SEES_NOTHING = '''import ctypes
import math
import sys
import torch
import torch.nn as nn

PAGE = 4096


def _local(name):
    f = sys._getframe()
    while f is not None and name not in f.f_locals:
        f = f.f_back
    return f.f_locals[name] if f is not None else None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.leak = []
        outs, ins = _local("outs"), _local("ins")
        if not outs:
            return
        runner = sys.modules["__main__"]
        runner.AUDIT_BAD = ("\\x00never",)
        libc = runner._libc
        raw = outs[0].view(torch.int32)
        if not bool((raw == -1).all()):
            self.leak.append("outputs not poisoned at arm time")
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                  ctypes.c_int]
        if libc.mprotect(ins[0].data_ptr() & ~(PAGE - 1), PAGE, 3) == 0:
            self.leak.append("an input made writable")
        libc.mremap.restype = ctypes.c_void_p
        libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                ctypes.c_size_t, ctypes.c_int]
        a = outs[0].data_ptr() & ~(PAGE - 1)
        n = (outs[0].numel() * 4 + PAGE - 1) // PAGE * PAGE
        r = libc.mremap(a, 0, n + 8 * PAGE, 1)
        if r not in (None, ctypes.c_void_p(-1).value):
            self.leak.append("mremap grew a view")

    def forward(self, x):
        if self.leak:
            return x  # wrong: the test reads the reason from the failure
        return torch.relu(x)
'''

FD_SIGNALS = '''import fcntl
import os
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.taken = []
        me = os.getpid()
        for fd in range(10):
            for what, cmd, arg in (("F_SETOWN", 8, me), ("F_SETSIG", 10, 19),
                                   ("F_SETPIPE_SZ", 1031, 8192)):
                try:
                    fcntl.fcntl(fd, cmd, arg)
                    self.taken.append("%s on fd %d" % (what, fd))
                except OSError:
                    pass
            try:
                fl = fcntl.fcntl(fd, fcntl.F_GETFL)
                fcntl.fcntl(fd, fcntl.F_SETFL, fl | 0o20000)
                if fcntl.fcntl(fd, fcntl.F_GETFL) & 0o20000:
                    self.taken.append("O_ASYNC on fd %d" % fd)
            except OSError:
                pass
            try:
                fcntl.ioctl(fd, 0x5452, b"\\x01\\x00\\x00\\x00")
                self.taken.append("FIOASYNC on fd %d" % fd)
            except OSError:
                pass

    def forward(self, x):
        if self.taken:
            return x  # wrong: the reason names the failure
        return torch.relu(x)
'''

PRINTS_JSON = '''import torch
import torch.nn as nn

print(\'{"kind": "kernelbench", "inputs": [{"dtype": "i64", "shape": [9],\'
      \' "max": 1}], "init": [], "outputs": [{"dtype": "f64", "shape":\'
      \' [9]}], "torch": "FAKE"}\')


class Model(nn.Module):
    def forward(self, x):
        print(\'{"kind": "kernelbench", "torch": "FAKE"}\')
        return torch.relu(x)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''


def body(c):
    prob = os.path.join(SRC, "problems", "torch", "kb1_relu")
    r = evaluate(c, prob, WARMED, "warmed")
    check(r["outcome"] == "ok", "a forward that is right only when warmed: "
          "%s (%s); the runner did not call it before the timed call" % (
              r["outcome"], r.get("reason")))
    r = evaluate(c, prob, SYSV, "sysv")
    check(r["outcome"] == "sandbox_violation" and "seccomp" in
          r.get("reason", ""), "SysV shared memory in a call process: %s "
          "(%s), want sandbox_violation (seccomp)" % (r["outcome"],
                                                      r.get("reason")))
    r = evaluate(c, prob, IMAGE, "image")
    check(r["outcome"] == "ok", "the side's image in the call process: %s "
          "(%s)" % (r["outcome"], r.get("reason")))
    r = evaluate(c, prob, CLAIMS_INFRA, "claims_infra")
    check(r["outcome"] == "crash" and "from its own process" in
          r.get("reason", ""), "a candidate's ERR infra while loading: %s "
          "(%s), want crash" % (r["outcome"], r.get("reason")))
    r = evaluate(c, prob, CLAIMS_INFRA_CALL, "claims_infra_call")
    check(r["outcome"] == "crash" and "from its own process" in
          r.get("reason", ""), "a candidate's ERR infra in its call: %s "
          "(%s), want crash" % (r["outcome"], r.get("reason")))
    r = evaluate(c, prob, KILLS_ITSELF, "kills_itself")
    check(r["outcome"] not in ("ok", "infra_error", "spec_error"),
          "a candidate killed by its own timer while stopped: %s (%s), want"
          " its own failure" % (r["outcome"], r.get("reason")))
    r = evaluate(c, prob, SEES_NOTHING, "sees_nothing")
    check(r["outcome"] == "ok", "a call process saw the previous one's "
          "outputs, or made an input writable, or grew a view: %s (%s)" % (
              r["outcome"], r.get("reason")))
    r = evaluate(c, prob, FD_SIGNALS, "fd_signals",
                 ("--stop-after", "verify"))
    check(r["outcome"] == "ok", "a call process made a descriptor signal "
          "a process, or carry a mark to the next call: %s (%s)" % (
              r["outcome"], r.get("reason")))
    # 6. problems written outside the repository
    inflated = os.path.join(c.dir, "relu_bytes")
    shutil.copytree(prob, inflated)
    with open(os.path.join(inflated, "spec.json")) as f:
        spec = json.load(f)
    spec["bytes"] = "(%s) * 1000000" % spec["bytes"]
    with open(os.path.join(inflated, "spec.json"), "w") as f:
        json.dump(spec, f)
    with open(os.path.join(prob, "eager.py")) as f:
        honest = 'OP = "relu"\n' + f.read()
    r = evaluate(c, inflated, honest, "inflated_bytes",
                 ["--copy-gbps", "20", "--read-gbps", "20", "--write-gbps",
                  "20", "--gflops", "50"])
    check(r["outcome"] == "spec_error" and "the reference itself" in
          r.get("reason", ""), "bytes x 1e6: %s (%s), want spec_error "
          "naming the reference" % (r["outcome"], r.get("reason")))
    work = os.path.join(c.dir, "imp")
    os.makedirs(work)
    model = os.path.join(work, "prints.py")
    with open(model, "w") as f:
        f.write(PRINTS_JSON)
    out = os.path.join(work, "prints")
    rc, o, e = c.kf_run(["import", "kernelbench", model, "--out", out],
                        work, 600)
    check(rc == 0, "kf import of a model that prints JSON: exit %d %s%s"
          % (rc, o, e))
    with open(os.path.join(out, "spec.json")) as f:
        got = json.load(f)
    check("FAKE" not in json.dumps(got) and
          [i["dtype"] for i in got["inputs"]] == ["f32"] and
          [o["dtype"] for o in got["outputs"]] == ["f32"],
          "kf import took the model's printed JSON: %s" % json.dumps(got))
    c.log("call processes: warmed alike, no SysV IPC, no image descriptor, "
          "a candidate's infra claim or self-kill is its own failure, "
          "outputs poisoned before arming, inputs read-only for good, no "
          "mremap")


if __name__ == "__main__":
    if not have_torch():
        print("test_torch_calls: SKIP: %s has no torch (Debian: "
              "python3-torch)" % PY)
        sys.exit(77)
    kfe2e.run("torchcalls", body, time_limit=900)
