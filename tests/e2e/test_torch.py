# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_torch.py -- a KernelBench file to a verified kernel in
two commands, on CPU, with Debian's python3-torch (harness/torch).

1. `kf import kernelbench model.py --out DIR` writes spec.json,
   reference.py and eager.py (a Linear + ReLU with init arguments, so the
   seeded weights must agree between the reference and a candidate).
   Unsupported constructs are refused with exit 2, the construct named: a
   string among get_inputs(), a tensor of an unsupported dtype, an output
   whose shape depends on the input values.
2. `kf run DIR` (its own PostgreSQL, coordinator and a CPU worker) ends
   with a verified best kernel, written as ./NAME.best.py, its speedup
   reported over torch eager.
3. The harness (kf-harness eval-files, what workers run) passes an honest
   hand-written ModelNew and refuses: a candidate that replays the
   reference on the inputs it can predict (KernelBench's seed) and ignores
   the real ones (wrong_answer); one that reads a file, one that opens a
   socket, one that reaches libc through ctypes (sandbox_violation); one
   that writes into its input (refused, never ok); one that renices every
   process of its uid (refused by seccomp: it then answers honestly, ok);
   one that answers wrongly unless it was stopped between loading and its
   call (a SIGCONT handler tells it); one that starts a thread (crash:
   RLIMIT_NPROC 0) and one that never returns (timeout).

Skipped (77) when /usr/bin/python3 (or $KF_PYTHON) has no torch.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

PY = os.environ.get("KF_PYTHON", "/usr/bin/python3")

MODEL = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer followed by ReLU (KernelBench level 2 style)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


batch_size = 8
in_features = 64
out_features = 48


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
'''

HONEST = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.linear(x, self.linear.weight, self.linear.bias).clamp_(min=0)
'''

# Predicts the inputs from KernelBench's convention (get_inputs under a
# fixed seed) and returns the reference's output on those.
REPLAY = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        torch.manual_seed(0x6B66)
        guess = torch.randn(8, in_features)
        with torch.no_grad():
            self.cached = torch.relu(self.linear(guess))

    def forward(self, x):
        return self.cached.clone()
'''

READS_FILE = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        with open("/etc/hostname") as f:
            f.read()
        return torch.relu(self.linear(x))
'''

SOCKET = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()''',
    '''        import socket
        socket.socket().connect(("127.0.0.1", 5432))''')

CTYPES = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()''',
    '''        import ctypes
        ctypes.CDLL(None).open(b"/etc/hostname", 0)''')

# Asking for threads at module level hung until the load deadline (the
# sandbox gives none); the call is taken and ignored.
THREADS = READS_FILE.replace(
    "import torch.nn as nn\n",
    "import torch.nn as nn\n\ntorch.set_num_threads(4)\n", 1).replace(
    '''        with open("/etc/hostname") as f:
            f.read()
''', "")

# A module the sandbox did not load before it closed: its import looks
# for files, which reads as leaving the sandbox; the module is named.
IMPORTS = READS_FILE.replace('''        with open("/etc/hostname") as f:
            f.read()''', '''        import colorsys
        colorsys.rgb_to_hsv(0.1, 0.2, 0.3)''')

# The right values in another dtype: copied into the output they were
# converted, and passed (red team, 2026-11-30: argmax indices as floats
# + 0.9 came back as the right integers).
WRONG_DTYPE = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()
        return torch.relu(self.linear(x))''',
    '''        return torch.relu(self.linear(x)).double()''')

WRITES_INPUT = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()''',
    '''        x.zero_()''')

CHECK_EXPORT = """
import importlib.util
import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ref = load(%r, "ref")
sub = load(%r, "sub")
kb = load(%r, "kb")
torch.manual_seed(0x6B66)
model = ref.Model(*ref.get_init_inputs())
torch.manual_seed(12345)
x = torch.randn(8, 64)
with torch.no_grad():
    want = model(x)
    got = sub.custom_kernel((x,))
    torch.manual_seed(0x6B66)
    got2 = kb.ModelNew(*ref.get_init_inputs())(x)
assert torch.allclose(got, want, rtol=1e-4, atol=1e-5), "gpumode differs"
assert torch.allclose(got2, want, rtol=1e-4, atol=1e-5), "kernelbench differs"
# GPU MODE hands inputs on the GPU: the submission's model goes where its
# inputs are (a fresh import, inputs on the shape-only "meta" device as a
# stand-in for a GPU)
sub2 = load(%r, "sub2")
xm = torch.randn(8, 64, device="meta")
with torch.no_grad():
    gm = sub2.custom_kernel((xm,))
dev = {p.device.type for p in sub2._kf_model.parameters()}
assert gm.device.type == "meta" and dev == {"meta"}, (gm.device, dev)
print("EXPORT OK")
"""

# Tries to slow down every other process of its uid (the reference's
# runner among them): if the sandbox let it, it answers wrongly, so the
# refusal is visible as ok.
RENICE = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()
        return torch.relu(self.linear(x))''',
    '''        import os
        try:
            os.setpriority(os.PRIO_USER, 0, 19)
            return x[:, :48] * 0 + 1
        except OSError:
            return torch.relu(self.linear(x))''')

# Knows whether it was stopped between loading and its call (the harness
# stops every armed process, so that code that ran at load cannot watch
# for the input draw and compute before the timer starts): a SIGCONT
# handler sees the continue.  Never continued, it answers wrongly.
STOPPED = READS_FILE.replace(
    '''        super().__init__()
        self.linear = nn.Linear(in_features, out_features)''',
    '''        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        import signal
        self.continued = []
        signal.signal(signal.SIGCONT, lambda s, f: self.continued.append(1))''').replace(
    '''        with open("/etc/hostname") as f:
            f.read()
        return torch.relu(self.linear(x))''',
    '''        if not self.continued:
            return x[:, :48] * 0 + 1
        return torch.relu(self.linear(x))''')

THREAD = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()''',
    '''        import threading
        threading.Thread(target=lambda: None).start()''')

SPIN = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()''',
    '''        while True:
            pass''')

# Persistent runners (--torch-persistent; device cuda always): one process
# per side serves every call.
WRONG = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()
        return torch.relu(self.linear(x))''',
    '''        return torch.relu(self.linear(x)) * 1.01 + 0.01''')

# Keeps its first answer and returns it on every later call: a process
# that lives across calls still gets fresh inputs every call.
CACHES = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()
        return torch.relu(self.linear(x))''',
    '''        if not hasattr(self, "first"):
            self.first = torch.relu(self.linear(x))
        return self.first.clone()''')

# Drifts a little with every call its process makes (as a kernel whose
# atomics race drifts from run to run), within tolerance, and hides the
# drift from a second run on the same inputs behind a cache of its first
# answer per input.  In one process both runs of the determinism check
# agree; in the fresh process the check's second run gets, they do not.
DRIFT_CACHED = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()
        return torch.relu(self.linear(x))''',
    '''        self.calls = getattr(self, "calls", 0) + 1
        seen = self.__dict__.setdefault("seen", {})
        key = (tuple(x.shape), float(x.sum()), float(x.flatten()[-1]))
        if key not in seen:
            y = torch.relu(self.linear(x))
            seen[key] = y * (1 + self.calls * 1e-6)
        return seen[key].clone()''')

# Prints, as people debugging do: nothing of it may read as a reply.
PRINTS = HONEST.replace(
    '''    def forward(self, x):
''',
    '''    def forward(self, x):
        print("DONE 1 1 1")
        print("forward of", tuple(x.shape))
''')

# Answers for the wrong call: it rewrites the runner's replies (its process
# is its own) so that DONE names the next call's number -- a reply the
# harness did not ask for.
FORGED = HONEST.replace(
    '''        super().__init__()
''',
    '''        super().__init__()
        import sys
        runner = sys.modules["__main__"]
        orig = runner._say

        def forged(fd, text):
            if text.startswith("DONE "):
                w = text.split()
                w[1] = str(int(w[1]) + 1)
                text = " ".join(w)
            orig(fd, text)
        runner._say = forged
''', 1)

# Goes for the other side: the memory of every process of its uid (the
# reference's runner is one), through /proc.
OTHER_SIDE = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()''',
    '''        for pid in range(2, 1 << 16):
            try:
                with open("/proc/%d/mem" % pid, "rb") as f:
                    f.read(1)
            except OSError:
                pass''')

SLEEPS = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()''',
    '''        import time
        time.sleep(3600)''')

# Ends its own process in the middle of the evaluation (its third call).
EXITS = READS_FILE.replace(
    '''        with open("/etc/hostname") as f:
            f.read()''',
    '''        import os
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls == 3:
            os._exit(0)''')

# Watches its input for the next draw between calls: it replaces the
# runner's command reader (its process is its own) with one that, while
# no command has arrived, spins comparing the input it was last given
# with what the buffer holds now.  A process that ran while the harness
# drew the next inputs would see them change before its call's command
# arrived (on the GPU, where its own events time it, it could compute
# then, untimed); it then answers wrongly, so the harness's stop between
# calls, and its command written before the continue, show as ok.
WATCHER = READS_FILE.replace(
    '''        super().__init__()
        self.linear = nn.Linear(in_features, out_features)''',
    '''        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        import select
        import sys
        runner = sys.modules["__main__"]
        orig = runner._readline
        self.leaked = False
        self.last = None

        def watching(fd):
            while True:
                r, _, _ = select.select([fd], [], [], 0)
                if r:
                    return orig(fd)
                if self.last is not None and not torch.equal(
                        self.last[0], self.last[1]):
                    # stopped mid-comparison, it may finish it after
                    # being continued for its call (timed by then): a
                    # leak only if no command is waiting yet
                    r, _, _ = select.select([fd], [], [], 0)
                    if not r:
                        self.leaked = True
        runner._readline = watching''').replace(
    '''        with open("/etc/hostname") as f:
            f.read()
        return torch.relu(self.linear(x))''',
    '''        self.last = (x, x.clone())
        if self.leaked:
            return x[:, :48] * 0 + 1
        return torch.relu(self.linear(x))''')

BAD_STRING = MODEL.replace("return [torch.randn(batch_size, in_features)]",
                           "return [torch.randn(batch_size, in_features), 'mean']")
# a dtype no spec holds (bool is one since 2026-12-01: MASKED below)
BAD_DTYPE = MODEL.replace("return [torch.randn(batch_size, in_features)]",
                          "return [torch.randn(batch_size, in_features, "
                          "dtype=torch.complex64)]")
# writes into its input: the harness maps a reference's inputs read-only,
# so every evaluation of such a problem crashed (red team, 2026-11-30)
BAD_INPLACE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        x.relu_()
        return x * 2


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
'''
# Floats that JSON printers turn into ints on the way (2.0 -> 2) and one
# JSON has no number for (-inf): an int alpha made torch.tensor(alpha) an
# integer tensor and nn.Parameter of it failed in every evaluation; -inf
# stopped the import (red team, 2026-11-30).
FLOATS = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, alpha, floor):
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor(alpha))
        self.floor = floor

    def forward(self, x, beta):
        return torch.clamp(x * self.alpha * beta, min=self.floor)


def get_inputs():
    return [torch.randn(256), 3.0]


def get_init_inputs():
    return [2.0, float("-inf")]
'''
FLOATS_NEW = FLOATS.replace("class Model(", "class ModelNew(").replace(
    "torch.clamp(x * self.alpha * beta, min=self.floor)",
    "torch.clamp(beta * (self.alpha * x), min=self.floor)")

# get_inputs() keeps x in [0, 1) (torch.rand) and the output holds -inf
# by design: drawn from N(0, 1), log(x) was NaN, and without allow_nan
# the -inf was the problem's fault -- a spec_error in every evaluation
# (red team, 2026-11-30).
LOGS = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.log(x).masked_fill(x > 0.9, float("-inf"))


def get_inputs():
    return [torch.rand(512)]


def get_init_inputs():
    return []
'''
LOGS_NEW = LOGS.replace("class Model(", "class ModelNew(").replace(
    'torch.log(x).masked_fill(x > 0.9, float("-inf"))',
    'torch.where(x > 0.9, torch.full_like(x, -float("inf")), x.log())')

# get_inputs() spans [-10, 10]: drawn only within [-1, 1], a ReLU6 never
# reached its clamp and plain ReLU passed (red team, 2026-11-30); the
# import adds `wide` where the reference stays finite on it.
RELU6 = LOGS.replace(
    'torch.log(x).masked_fill(x > 0.9, float("-inf"))',
    'torch.nn.functional.relu6(x)').replace(
    "torch.rand(512)", "torch.rand(512) * 20 - 10")
RELU6_AS_RELU = RELU6.replace("class Model(", "class ModelNew(").replace(
    "torch.nn.functional.relu6(x)", "torch.relu(x)")
# Wider than N(0, 1) with no |x| past 8 (torch.randn(64) * 2.5): a clamp
# at 4, which N(0, 1) reaches about once in 16,000 elements, was never
# reached while the import drew N(0, 1) and U(-1, 1), and the identity
# passed; drawn by get_inputs() itself (distribution `sample`) it is
# reached in every draw.
CLAMP4 = LOGS.replace(
    'torch.log(x).masked_fill(x > 0.9, float("-inf"))',
    'torch.clamp(x, -4.0, 4.0)').replace("torch.rand(512)",
                                          "torch.randn(64) * 2.5")
CLAMP4_AS_ID = CLAMP4.replace("class Model(", "class ModelNew(").replace(
    "torch.clamp(x, -4.0, 4.0)", "x.clone()")
# An index into 1,000 rows, 8 a call: one call of get_inputs() reached 780
# under the import's seed, and rows 781-999 were never looked up while
# the range was the largest value seen + 1; drawn by get_inputs() every
# row can be.  Wrong from row 900 on: 8 rows a draw, one draw in two
# has one.
LOOKUP = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(1000, 4))

    def forward(self, idx):
        return self.table[idx]


def get_inputs():
    return [torch.randint(0, 1000, (8,))]


def get_init_inputs():
    return []
'''
LOOKUP_HIGH_WRONG = LOOKUP.replace("class Model(", "class ModelNew(").replace(
    "        return self.table[idx]",
    "        return self.table[idx] * (idx < 900).unsqueeze(1)")

# get_inputs() from a generator of its own, whose state advances from
# call to call: no seed of the sampler's repeats a draw.
UNSEEDED = '''import torch
import torch.nn as nn

G = torch.Generator()
G.manual_seed(5)


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(64, generator=G)]


def get_init_inputs():
    return []
'''

# KernelBench level 1's masked_cumsum, smaller: a torch.bool mask among
# the inputs (kf import refused the dtype), and a bool output.
MASKED = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim), mask & (x > 0.5)


def get_inputs():
    x = torch.rand(16, 256)
    return [x, torch.randint(0, 2, x.shape).bool()]


def get_init_inputs():
    return [1]
'''
MASKED_NEW = MASKED.replace("class Model(", "class ModelNew(")
# the mask dropped from the sum
MASKED_UNMASKED = MASKED_NEW.replace("torch.cumsum(x * mask,",
                                     "torch.cumsum(x,")
# the bool output's mask dropped
MASKED_ALL = MASKED_NEW.replace("mask & (x > 0.5)", "x > 0.5")

# In place, and every byte as it was (inputs in [0, 1): a ReLU changes
# none): the byte test passed it, and every evaluation crashed.
BAD_INPLACE_SAME = BAD_INPLACE.replace(
    "        x.relu_()\n        return x * 2",
    "        return nn.ReLU(inplace=True)(x) * 2").replace(
    "torch.randn(64)", "torch.rand(64)")
# A None among the outputs is named as an output (it was described as an
# input problem), and a file that starts with a UTF-8 BOM and names its
# forward argument `out` (the outputs' own name) imports.
BAD_NONE_OUT = BAD_INPLACE.replace("        x.relu_()\n        return x * 2",
                                   "        return x * 2, None")
BOM_OUT = "\ufeff" + BAD_INPLACE.replace(
    "    def forward(self, x):\n        x.relu_()\n        return x * 2",
    "    def forward(self, out):\n        return out * 2")
# An import the sandbox cannot serve, named at kf import.
BAD_IMPORT = BAD_INPLACE.replace("        x.relu_()\n",
                                 "        import colorsys\n")
BAD_SHAPE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x[x > 0]


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
'''


def have_torch():
    try:
        r = subprocess.run([PY, "-I", "-c", "import torch"],
                           capture_output=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def import_model(c):
    """`kf import kernelbench` of MODEL (work/linear_relu.py) into the
    test's work directory: the problem directory, work/linear_relu."""
    work = os.path.join(c.dir, "work")
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "linear_relu.py")
    write(model, MODEL)
    prob = os.path.join(work, "linear_relu")
    rc, out, err = c.kf_run(["import", "kernelbench", model, "--out", prob],
                            work, 600)
    check(rc == 0, "kf import exited %d: %s%s" % (rc, out, err))
    return prob


def import_kb(c, work, name, text, what):
    """`kf import kernelbench` of text, written as WORK/NAME.py, into
    WORK/NAME, which must succeed: the problem directory, its spec and
    the import's stderr."""
    f = os.path.join(work, name + ".py")
    write(f, text)
    prob = os.path.join(work, name)
    rc, out, err = c.kf_run(["import", "kernelbench", f, "--out", prob],
                            work, 600)
    check(rc == 0, "import of %s: exit %d: %s" % (what, rc, err))
    with open(os.path.join(prob, "spec.json")) as fh:
        return prob, json.load(fh), err


def evaluate(c, prob, source, tag, extra=()):
    path = os.path.join(c.dir, "%s.py" % tag)
    write(path, source)
    r = subprocess.run([c.path("kf-harness"), "eval-files", "--spec", prob,
                        "--source", path] + list(extra), env=c.env,
                       stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=600, preexec_fn=kfe2e._pdeathsig)
    with open(os.path.join(c.dir, "harness-%s.log" % tag), "wb") as f:
        f.write(r.stdout + r.stderr)
    check(r.returncode == 0, "%s: kf-harness eval-files exited %d: %s" % (
        tag, r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    res = json.loads(r.stdout)
    c.log("%s: %s in %s: %s" % (tag, res["outcome"], res.get("stage"),
                                res.get("reason", "")[:300]))
    return res


def body(c):
    # 1. Import, and the refusals.
    prob = import_model(c)
    work = os.path.dirname(prob)
    model = os.path.join(work, "linear_relu.py")
    for f in ("spec.json", "reference.py", "eager.py"):
        check(os.path.isfile(os.path.join(prob, f)), "kf import wrote no %s"
              % f)
    with open(os.path.join(prob, "spec.json")) as f:
        spec = json.load(f)
    check(spec["backend"] == "torch" and spec["torch"]["kind"] ==
          "kernelbench" and spec["torch"]["init"] == [64, 48],
          "spec.json: backend/torch section wrong: %r" % spec.get("torch"))
    check([i["dtype"] for i in spec["inputs"]] == ["f32"] and
          spec["inputs"][0]["name"] == "x" and len(spec["outputs"]) == 1,
          "spec.json: inputs/outputs wrong: %r %r" % (spec["inputs"],
                                                      spec["outputs"]))
    rc, out, err = c.kf_run(["import", "kernelbench", model, "--out", prob],
                      work, 60)
    check(rc == 2 and "exists" in err, "import over an existing directory: "
          "exit %d, %r" % (rc, err))
    for tag, text, words in (("str", BAD_STRING, "input 1 is a str"),
                             ("complex", BAD_DTYPE,
                              "dtype torch.complex64"),
                             ("shape", BAD_SHAPE, "depends on the input"),
                             ("inplace", BAD_INPLACE,
                              "writes into input 0"),
                             ("inplace_same", BAD_INPLACE_SAME,
                              "writes into input 0"),
                             ("import", BAD_IMPORT, "imports colorsys"),
                             ("none_out", BAD_NONE_OUT,
                              "output 1 is a NoneType: outputs must be "
                              "tensors")):
        f = os.path.join(work, "bad_%s.py" % tag)
        write(f, text)
        rc, out, err = c.kf_run(["import", "kernelbench", f, "--out",
                              os.path.join(work, "bad_%s" % tag)], work, 600)
        check(rc == 2 and words in err, "import of %s: exit %d, want 2 "
              "naming %r: %s" % (tag, rc, words, err))
        check(not os.path.exists(os.path.join(work, "bad_%s" % tag)),
              "a refused import left a directory behind")
    # on a GPU every call gets writable device copies: a write into an
    # input is allowed there
    rc, out, err = c.kf_run(["import", "kernelbench",
                             os.path.join(work, "bad_inplace.py"), "--device",
                             "cuda", "--out", os.path.join(work, "inplace_gpu")],
                            work, 600)
    check(rc == 0 and os.path.isfile(os.path.join(work, "inplace_gpu",
                                                  "spec.json")),
          "import of the in-place model for cuda: exit %d: %s" % (rc, err))
    c.log("kf import: written; str input, bool tensor, data-dependent "
          "shape and a write into an input refused by name (the last "
          "allowed for --device cuda)")
    f = os.path.join(work, "bom_out.py")
    write(f, BOM_OUT)
    rc, out, err = c.kf_run(["import", "kernelbench", f, "--out",
                             os.path.join(work, "bom_out")], work, 600)
    check(rc == 0, "import of a BOM file with forward(self, out): exit %d: "
          "%s" % (rc, err))
    fprob, _, _ = import_kb(c, work, "floats", FLOATS,
                            "integral and infinite float arguments")
    r = evaluate(c, fprob, FLOATS_NEW, "floats", ("--stop-after", "verify"))
    check(r["outcome"] == "ok", "float arguments 2.0, -inf and 3.0: %s (%s)"
          % (r["outcome"], r.get("reason")))
    lprob, ls, _ = import_kb(c, work, "logs", LOGS, "the log model")
    check(ls["inputs"][0]["dists"] == ["sample"] and ls["allow_nan"] is True,
          "a torch.rand input drawn by get_inputs() and -inf output: dists "
          "%r, allow_nan %r" % (ls["inputs"][0]["dists"], ls["allow_nan"]))
    r = evaluate(c, lprob, LOGS_NEW, "logs", ("--stop-after", "verify"))
    check(r["outcome"] == "ok", "log of U(0, 1) with -inf: %s (%s)" % (
        r["outcome"], r.get("reason")))
    rprob, _, _ = import_kb(c, work, "relu6", RELU6, "the ReLU6 model")
    r = evaluate(c, rprob, RELU6_AS_RELU, "relu6", ("--stop-after", "verify"))
    check(r["outcome"] == "wrong_answer", "plain ReLU for a ReLU6 whose "
          "inputs span [-10, 10]: %s (%s)" % (r["outcome"], r.get("reason")))
    cprob, cs, _ = import_kb(c, work, "clamp4", CLAMP4, "the clamp model")
    check(cs["inputs"][0]["dists"] == ["sample"], "inputs of randn * 2.5: "
          "dists %r, not get_inputs()'s own" % cs["inputs"][0]["dists"])
    r = evaluate(c, cprob, CLAMP4_AS_ID, "clamp4", ("--stop-after", "verify"))
    check(r["outcome"] == "wrong_answer", "the identity for a clamp at 4 "
          "whose inputs are randn * 2.5: %s (%s)" % (r["outcome"],
                                                     r.get("reason")))
    kprob, ks, _ = import_kb(c, work, "lookup", LOOKUP, "the lookup model")
    check(ks["inputs"][0]["dists"] == ["sample"] and
          "range" not in ks["inputs"][0], "an index into 1,000 rows: %r, "
          "not drawn by get_inputs()" % ks["inputs"][0])
    r = evaluate(c, kprob, LOOKUP_HIGH_WRONG, "lookup", ("--seed", "7"))
    check(r["outcome"] == "wrong_answer", "a lookup wrong from row 900 on: "
          "%s (%s)" % (r["outcome"], r.get("reason")))
    r = evaluate(c, kprob, LOOKUP.replace("class Model(", "class ModelNew("),
                 "lookup_honest", ("--stop-after", "verify"))
    check(r["outcome"] == "ok", "the lookup itself: %s (%s)" % (
        r["outcome"], r.get("reason")))
    # a get_inputs() whose process dies in a draw (after the import, which
    # ran it once): the problem's error, its exit named -- not "its
    # process ended" (the H200's first draws, 2026-12-01)
    with open(os.path.join(kprob, "reference.py")) as fh:
        dying = fh.read().replace(
            "    return [torch.randint(0, 1000, (8,))]",
            "    import os\n    os._exit(7)")
    check("os._exit(7)" in dying, "the lookup's reference has no get_inputs")
    write(os.path.join(kprob, "reference.py"), dying)
    r = evaluate(c, kprob, LOOKUP.replace("class Model(", "class ModelNew("),
                 "lookup_dying", ("--stop-after", "verify"))
    why = r.get("reason") or ""
    check(r["outcome"] == "spec_error" and "distribution 'sample'" in why and
          "status 7" in why, "a get_inputs() that exits in its draw: %s (%s)"
          % (r["outcome"], why))
    # a get_inputs() whose draws the seeds do not decide: kf import says
    # so and describes its inputs instead; a spec that asks for `sample`
    # anyway is refused at the first draw (the determinism check's second
    # run would have drawn other inputs, and the candidate been called
    # nondeterministic)
    uprob, us, err = import_kb(c, work, "unseeded", UNSEEDED, "a "
                               "get_inputs() with its own generator")
    check("generator of its own" in err, "kf import did not say that "
          "get_inputs() keeps a generator of its own: %s" % err)
    check(us["inputs"][0]["dists"] != ["sample"], "its inputs are inferred, "
          "not drawn by it: %r" % us["inputs"][0]["dists"])
    us["inputs"][0]["dists"] = ["sample"]
    write(os.path.join(uprob, "spec.json"), json.dumps(us))
    r = evaluate(c, uprob, UNSEEDED.replace("class Model(", "class ModelNew("),
                 "unseeded", ("--stop-after", "verify"))
    why = r.get("reason") or ""
    check(r["outcome"] == "spec_error" and "generator of its own" in why,
          "distribution sample by an unseeded get_inputs(): %s (%s)" % (
              r["outcome"], why))
    c.log("kf import: inputs drawn by get_inputs() (distribution sample): "
          "a clamp at 4 and rows past 900 reached")
    # a bool mask in and a bool tensor out, compared exactly
    mprob, ms, _ = import_kb(c, work, "masked", MASKED,
                             "a masked cumsum (a bool input)")
    check(ms["inputs"][1]["dtype"] == "bool" and
          ms["outputs"][1]["dtype"] == "bool" and
          ms["tolerance"]["bool"] == {"rtol": 0, "atol": 0},
          "the mask and the bool output as dtype bool, exact: %r"
          % ms)
    r = evaluate(c, mprob, MASKED_NEW, "masked", ("--stop-after", "verify"))
    check(r["outcome"] == "ok", "the masked cumsum itself: %s (%s)" % (
        r["outcome"], r.get("reason")))
    for src, tag, what in ((MASKED_UNMASKED, "masked_sum", "'out0'"),
                           (MASKED_ALL, "masked_out", "'out1'")):
        r = evaluate(c, mprob, src, tag, ("--stop-after", "verify"))
        check(r["outcome"] == "wrong_answer" and
              what in (r.get("reason") or ""), "%s: %s (%s)" % (
                  tag, r["outcome"], r.get("reason")))
    c.log("kf import: a bool mask in and a bool output, exact")

    # 2. The second command: a verified kernel.
    rc, out, err = c.kf_run(["run", prob, "--data", c.dir, "--evals", "4",
                          "--minutes", "6", "--json"], work, 900)
    check(rc in (0, 1), "kf run exited %d\n%s\n%s" % (rc, out, err[-3000:]))
    res = json.loads(out)
    best = (res.get("best") or {}).get("best") or {}
    check(best.get("outcome") == "ok", "kf run: no verified best kernel: %s"
          % out[-3000:])
    # the torch.compile baseline: a number where this worker timed it (a
    # GPU), null where it did not (CPU: the harness times it on CUDA only)
    for k in ("speedup_compile", "speedup_max_autotune"):
        sc = best.get(k, "missing")
        check(sc is None or (isinstance(sc, (int, float)) and sc > 0),
              "kf run: %s %r in the best's JSON" % (k, sc))
    path = os.path.join(work, "linear_relu.best.py")
    check(os.path.isfile(path), "kf run wrote no %s" % path)
    with open(path) as f:
        text = f.read()
    check("class ModelNew" in text and "MODE = " in text,
          "the best file lacks ModelNew or its knob: %s" % text[:600])
    compile(text, path, "exec")  # the header is Python
    c.log("kf run: exit %d, best %s, speedup %.2fx over eager" % (
        rc, path, best.get("speedup", 0)))

    # 3. Export: the best kernel as a GPU MODE submission and as a
    # KernelBench ModelNew, each loaded by torch and compared with the
    # reference on inputs of its own.
    c.start_pg()
    c.start_coordinator()
    cid = str(res.get("campaign_id") or res.get("campaign", {}).get(
        "campaign_id") or 1)
    sub = os.path.join(work, "submission.py")
    kbf = os.path.join(work, "kernelbench_new.py")
    for fmt, out in (("gpumode", sub), ("kernelbench", kbf)):
        rc, o2, e2 = c.kf_run(["campaign", "export", cid, "--coordinator",
                            c.target, "--format", fmt, "--problem", prob,
                            "--out", out], work, 120)
        check(rc == 0 and os.path.isfile(out), "export --format %s: exit %d:"
              " %s%s" % (fmt, rc, o2, e2))
    # torch-ext packages a CUDA or C kernel (test_export_ext); a PyTorch
    # campaign's best is Python already
    rc, o2, e2 = c.kf_run(["campaign", "export", cid, "--coordinator", c.target,
                        "--format", "torch-ext", "--problem", prob, "--out",
                        os.path.join(work, "ext")], work, 120)
    check(rc == 2 and "gpumode or kernelbench" in e2 and not os.path.exists(
        os.path.join(work, "ext")), "torch-ext of a PyTorch campaign: exit "
        "%d %r" % (rc, e2))
    checker = os.path.join(work, "check_export.py")
    write(checker, CHECK_EXPORT % (model, sub, kbf, sub))
    r = subprocess.run([PY, "-I", checker], capture_output=True, timeout=300)
    check(r.returncode == 0 and b"EXPORT OK" in r.stdout,
          "exported files do not match the reference: %s%s" % (
              r.stdout.decode(errors="replace"),
              r.stderr.decode(errors="replace")[-3000:]))
    c.log("export: gpumode and kernelbench files match the reference")

    # 4. The harness on hand-written candidates.
    r = evaluate(c, prob, HONEST, "honest")
    check(r["outcome"] == "ok" and r.get("speedup_eager", 0) > 0 and
          "eager" in r.get("baselines", "") and
          r.get("toolchain", "").startswith("torch "),
          "honest candidate: %s (%s), speedup_eager %r baselines %r" % (
              r["outcome"], r.get("reason"), r.get("speedup_eager"),
              r.get("baselines")))
    r = evaluate(c, prob, REPLAY, "replay")
    check(r["outcome"] == "wrong_answer", "replayed outputs: %s (%s)" % (
        r["outcome"], r.get("reason")))
    r = evaluate(c, prob, THREADS, "threads", ("--stop-after", "verify"))
    check(r["outcome"] == "ok", "torch.set_num_threads at module level: %s "
          "(%s)" % (r["outcome"], r.get("reason")))
    r = evaluate(c, prob, IMPORTS, "imports", ("--stop-after", "verify"))
    check(r["outcome"] == "sandbox_violation" and "while importing "
          "colorsys" in r.get("reason", ""), "a module the sandbox did not "
          "load: %s (%s)" % (r["outcome"], r.get("reason")))
    r = evaluate(c, prob, WRONG_DTYPE, "dtype")
    check(r["outcome"] == "wrong_answer" and "is float64, expected float32"
          in r.get("reason", ""), "an output of another dtype: %s (%s)" % (
              r["outcome"], r.get("reason")))
    for tag, src, word in (("file", READS_FILE, "/etc/hostname"),
                           ("socket", SOCKET, "socket"),
                           ("ctypes", CTYPES, "ctypes")):
        r = evaluate(c, prob, src, tag)
        check(r["outcome"] == "sandbox_violation" and word in r["reason"],
              "%s: %s (%s), want sandbox_violation naming %r" % (
                  tag, r["outcome"], r.get("reason"), word))
    r = evaluate(c, prob, RENICE, "renice")
    check(r["outcome"] == "ok", "renicing the other runners was not refused:"
          " %s (%s)" % (r["outcome"], r.get("reason")))
    r = evaluate(c, prob, STOPPED, "stopped")
    check(r["outcome"] == "ok", "the armed process was not stopped before "
          "its call: %s (%s)" % (r["outcome"], r.get("reason")))
    r = evaluate(c, prob, THREAD, "thread")
    check(r["outcome"] == "crash" and "thread" in r["reason"],
          "a thread: %s (%s), want crash (RLIMIT_NPROC 0)" % (
              r["outcome"], r.get("reason")))
    r = evaluate(c, prob, SPIN, "spin")
    check(r["outcome"] == "timeout", "an endless forward: %s (%s)" % (
        r["outcome"], r.get("reason")))
    r = evaluate(c, prob, WRITES_INPUT, "writes_input")
    check(r["outcome"] not in ("ok", "infra_error", "spec_error"),
          "a candidate writing its input: %s (%s)" % (r["outcome"],
                                                     r.get("reason")))


def persistent(c, prob):
    pers = ["--torch-persistent"]
    r = evaluate(c, prob, HONEST, "p_honest", pers)
    load = [st for st in r.get("stages", []) if st["stage"] == "load"]
    check(r["outcome"] == "ok" and r.get("speedup_eager", 0) > 0 and
          load and "one process per side" in load[0]["reason"] and
          "seccomp" in load[0]["reason"] and
          "torch.compile: not timed" in r.get("baselines", ""),
          "persistent, honest: %s (%s) load %r baselines %r" % (
              r["outcome"], r.get("reason"), load, r.get("baselines")))
    for tag, src, want, word in (
            ("p_wrong", WRONG, "wrong_answer", ""),
            ("p_replay", REPLAY, "wrong_answer", ""),
            ("p_caches", CACHES, "wrong_answer", ""),
            ("p_file", READS_FILE, "sandbox_violation", "/etc/hostname"),
            ("p_socket", SOCKET, "sandbox_violation", "socket"),
            ("p_ctypes", CTYPES, "sandbox_violation", "ctypes"),
            ("p_thread", THREAD, "crash", "thread"),
            ("p_exits", EXITS, "crash", "exited with status 0"),
            ("p_renice", RENICE, "ok", ""),
            ("p_prints", PRINTS, "ok", ""),
            ("p_forged", FORGED, "sandbox_violation", "forged or stale"),
            ("p_other_side", OTHER_SIDE, "sandbox_violation", "/proc/2/mem"),
            ("p_stopped", STOPPED, "ok", ""),
            ("p_watcher", WATCHER, "ok", "")):
        r = evaluate(c, prob, src, tag, pers)
        check(r["outcome"] == want and word in r.get("reason", ""),
              "persistent, %s: %s (%s), want %s naming %r" % (
                  tag, r["outcome"], r.get("reason"), want, word))
    # The determinism check's second run goes to a new process of the side
    # (kf_call.fresh), so nothing the first left in its process reaches
    # it: on a spec that asks for bit-for-bit agreement the honest model
    # still passes, the drifting one with a cache is nondeterministic.
    det = prob + "_det"
    if not os.path.isdir(det):
        shutil.copytree(prob, det)
        with open(os.path.join(det, "spec.json")) as f:
            spec = json.load(f)
        spec["deterministic"] = True
        write(os.path.join(det, "spec.json"), json.dumps(spec, indent=1))
    r = evaluate(c, det, HONEST, "p_det_honest", pers)
    check(r["outcome"] == "ok", "persistent, deterministic spec, honest: "
          "%s (%s)" % (r["outcome"], r.get("reason")))
    r = evaluate(c, det, DRIFT_CACHED, "p_det_drift", pers)
    check(r["outcome"] == "nondeterministic", "persistent, a drift hidden "
          "by a cache in its process: %s (%s), want nondeterministic" % (
              r["outcome"], r.get("reason")))
    # a call that never returns: the process is killed at the call's
    # limit (2 s + 5 s), the evaluation ends, the harness does not hang
    r = evaluate(c, prob, SLEEPS, "p_sleeps", pers + ["--call-timeout-ms",
                                                     "2000"])
    check(r["outcome"] == "timeout" and "killed" in r.get("reason", ""),
          "persistent, a call that sleeps: %s (%s)" % (r["outcome"],
                                                      r.get("reason")))
    r = evaluate(c, prob, WRITES_INPUT, "p_writes_input", pers)
    check(r["outcome"] not in ("ok", "infra_error", "spec_error"),
          "persistent, writing its input: %s (%s)" % (r["outcome"],
                                                     r.get("reason")))
    c.log("persistent runners: honest ok; wrong, replayed and cached "
          "answers wrong_answer; file, socket, ctypes sandbox_violation; "
          "thread and exit crash; sleep timeout; renice, stop and input "
          "watching refused (ok)")


if __name__ == "__main__":
    if not have_torch():
        print("test_torch: SKIP: %s has no torch (Debian: python3-torch)"
              % PY)
        sys.exit(77)
    kfe2e.run("torch", body, time_limit=1500)
