# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_torch_problems.py -- problems written outside the
repository (KernelBench files given to `kf import`), each breaking one
property of the import or of the torch backend, as a red team found them
on 2026-12-01 (docs/redteam/2026-12-01-s3c):

1. A side's weights follow the seeds the harness sets, whatever they are
   drawn from: a Model whose constructor draws from numpy's global
   generator, from Python's random (which a fork reseeds), and creates
   its parameters in the iteration order of a set of strings (the string
   hash) gets the same weights in the reference's process and in a
   candidate's: the import's own eager.py is ok (before: wrong_answer
   with 16,000 of 16,384 elements differing).  A constructor that reads
   the clock is refused by the import, named.
2. No timed input set is one a candidate can know before its call: a
   get_inputs() that pins its own seed gives the same draw under every
   key.  The import says so and describes the inputs instead, so a
   candidate that computed the answer for the pinned draw in its
   constructor is wrong_answer (before: ok at 89-118x); a spec that asks
   for distribution `sample` from it anyway is a spec_error naming it.
3. The problem's values reach the harness unchanged: an integer beyond
   2^53 among get_init_inputs() and get_inputs() is kept exactly
   ({"int": "digits"}; before: rounded to a float, so the problem was
   another one), and a hand-written spec that holds one as a plain JSON
   number is refused, named; a 0-d tensor input is passed 0-d (before:
   [1], and a reference that cats it failed in every evaluation).
4. Time spent in the problem's own get_inputs() is the problem's: past
   the deadline, a slow get_inputs() is a spec_error naming it (before:
   an honest candidate's timeout).
5. The import imports what it was given: a path longer than it takes is
   refused (before: cut short to another file, which was imported), and
   a GPU MODE case.json it cannot use is an error naming the file
   (before: the default case was used, unsaid).
6. A GPU MODE problem's inputs are drawn by its own generate_input(),
   its seed argument from each draw's key (2026-12-02): a clamp at 6 of
   `rand * 10`, whose inputs the import described as U(0, 1) before, so
   that relu (the identity there) was ok, is wrong_answer; the honest
   clamp ok; a generate_input() that ignores its seed is named, and its
   inputs described; the data's form is kept (a 1-tuple was passed as its
   bare tensor, and `x, = data` failed in every evaluation).
7. A GPU MODE problem directory as GPU MODE's repository lays it out:
   reference.py imports utils.py and task.py beside it (`from utils
   import make_match_reference`, `from task import input_t`; utils
   imports task).  The import puts them in the written reference.py
   (task first), and a submission that starts `from task import input_t,
   output_t`, as GPU MODE's do, gets them too: the honest one is ok, a
   wrong one wrong_answer (before: the import failed naming utils, and
   every such submission was a sandbox_violation).  Its generate_input()
   makes its tensors on device='cuda' with a CUDA generator, as GPU
   MODE's do: the import and the draws run it on the host (before: the
   import failed, "Device type CUDA is not supported").  A module of the
   directory named like one the runner has loaded (math.py) is refused:
   it would replace that module, under a candidate too; so is a module
   that is a symbolic link (red team 2026-12-02-gm: one to a file of
   credentials went into the written reference), and one that does not
   parse is named with its line (it was a sandbox kill).
8. A GPU MODE problem is verified as GPU MODE checks it (2026-12-02,
   second session): the benchmark's arguments come from its task.yml
   (before: {"size": 4096}, which a generate_input(batch, n, k, seed)
   refused), each of task.yml's tests is a size of its own drawn by its
   own arguments (a CASE param tells apart two of one shape), so a
   kernel right at the benchmark's shape alone is wrong_answer; the
   tolerance is check_implementation's (make_match_reference's default
   reached through **kwargs, 1e-5/1e-8; before: 1e-3, and an answer 5e-4
   off was ok).  task.yml's faults are named (an index past its list, a
   line that does not parse, aliases that expand past a bound), and a
   check_implementation of its own is said to leave the tolerance to
   --rtol/--atol.  Its generate_input() checks `isinstance(gen,
   torch.Generator)` and calls torch.cuda.synchronize() (on a CPU both
   failed under the host mapping, red team 2026-12-02-gm L4), and a
   ref_kernel that allocates on 'cuda' imports with --device cuda (the
   import runs it on the host) and is refused, named, with --device cpu.
   Every benchmark of task.yml is timed too (the time their medians'
   geometric mean, as GPU MODE ranks) and verified: a kernel wrong only
   at the second benchmark is wrong_answer (before: only the largest was
   timed, and that kernel ok).
9. A KernelBench problem is what KernelBench runs (red team
   2026-12-02-s3-prob): its Model in training mode, so a BatchNorm is
   the batch's statistics -- a copy of the input is wrong_answer, the
   batch's own mean and variance ok (before: eval mode, and the reverse);
   a number get_inputs() draws at random is refused, named (before:
   frozen at the import's value, and `x * 73` ok); a reference's error
   reaches the terminal without its escapes; a strided input is said.

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
from test_torch import PY, evaluate, have_torch, import_kb, write  # noqa: E402

# 1. weights from numpy's and Python's generators, and in set order
WEIGHTS = '''import random

import numpy as np
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.from_numpy(
            np.random.randn(256).astype(np.float32)))
        self.scale = random.uniform(0.5, 2.0)
        for name in {"alpha", "beta", "gamma", "delta", "eps", "zeta"}:
            setattr(self, name, nn.Parameter(torch.randn(256)))

    def forward(self, x):
        return (x * self.w + self.alpha - self.beta * self.gamma +
                self.delta * self.eps - self.zeta) * self.scale


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []
'''
CLOCK_WEIGHTS = '''import time

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.full((16,), float(time.time_ns() % 977)))

    def forward(self, x):
        return x * self.w


def get_inputs():
    return [torch.randn(16)]


def get_init_inputs():
    return []
'''

# 2. get_inputs() pins its seed: one input set, whatever the key
PINNED = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    torch.manual_seed(42)  # "for reproducibility"
    return [torch.randn(48, 48), torch.randn(48, 48)]


def get_init_inputs():
    return []
'''
# the answer for the pinned draw, computed untimed; no matmul in forward
PRECOMPUTED = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(42)
        a = torch.randn(48, 48, generator=g)
        b = torch.randn(48, 48, generator=g)
        self.answer = a @ b

    def forward(self, a, b):
        return self.answer.clone()
'''

# 3. an integer beyond 2^53 in init and among the inputs; a 0-d input
BIGINT = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x, s, m):
        # 2**61 - 1 and 2**61, the float it became, differ here
        y = x * float(self.k % 1000) + float(m % 1000)
        return torch.cat([y.flatten(), s.unsqueeze(0)])


def get_inputs():
    return [torch.randn(8, 32), torch.rand(()), 2 ** 62 - 57]


def get_init_inputs():
    return [2 ** 61 - 1]
'''
# the file's own constants, not the spec's: ok only where the harness
# passed the reference the file's integers
BIGINT_FILE = BIGINT.replace("class Model(", "class ModelNew(").replace(
    "self.k = k", "self.k = 2 ** 61 - 1").replace(
    "float(m % 1000)", "float((2 ** 62 - 57) % 1000)")

# 4. a get_inputs() that takes its time (a Python loop standing in for a
# slow input build; a sleep, which no load on the machine shortens)
SLOW_INPUTS = '''import time

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 3


def get_inputs():
    time.sleep(5)
    return [torch.randn(1024)]


def get_init_inputs():
    return []
'''
SLOW_HONEST = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.mul(x, 3)
'''

RELU = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
'''
GM_REF = '''import torch


def generate_input(size, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(size, generator=g)


def ref_kernel(data):
    return data * 2
'''


# 6. a clamp at 6 of rand * 10, data a 1-tuple
GM_CLAMP = '''import torch


def generate_input(size, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(size, generator=g) * 10,)


def ref_kernel(data):
    x, = data
    return torch.clamp(x, 0, 6)
'''
GM_CLAMP_RELU = '''import torch


def custom_kernel(data):
    x, = data
    return torch.relu(x)
'''
GM_CLAMP_HONEST = '''import torch


def custom_kernel(data):
    x, = data
    return x.clamp(0, 6)
'''
GM_PINNED = GM_CLAMP.replace("manual_seed(seed)", "manual_seed(1234)")

# 7. GPU MODE's layout: reference.py with task.py and utils.py beside it
GM_TASK = '''import torch
from typing import TypeVar

input_t = TypeVar("input_t", bound=tuple[torch.Tensor, torch.Tensor])
output_t = TypeVar("output_t", bound=torch.Tensor)
SCALE = 3.0
'''
GM_UTILS = '''import torch
from task import output_t


def make_match_reference(reference, rtol=1e-05, atol=1e-08):
    def wrapped(data, output: output_t):
        return torch.allclose(output, reference(data), rtol=rtol, atol=atol)
    return wrapped
'''
GM_LAYOUT = '''import torch; from utils import make_match_reference  # after a ;
from task import input_t, output_t, SCALE


def ref_kernel(data: input_t) -> output_t:
    a, b = data
    return a * SCALE + b


def generate_input(size: int, seed: int) -> input_t:
    gen = torch.Generator(device='cuda')
    gen.manual_seed(seed)
    a = torch.randn(size, size, device='cuda', generator=gen).contiguous()
    b = torch.empty(size, size, device='cuda')
    b.uniform_(-1, 1, generator=gen)
    return (a, b.cuda().to('cuda'))


check_implementation = make_match_reference(ref_kernel)
'''
GM_LAYOUT_SUB = '''#!POPCORN leaderboard scaled_add
from task import input_t, output_t
import task


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    return a * task.SCALE + b
'''

# 8. GPU MODE's task.yml and check_implementation: k reaches the data as a
# tensor, so two tests of one shape differ only by it (top_k's k=50, k=1)
GM_KUTILS = '''import torch


def match_reference(data, output, reference, rtol=1e-05, atol=1e-08):
    return torch.allclose(output, reference(data), rtol=rtol, atol=atol)


def make_match_reference(reference, **kwargs):
    def wrapped(data, output):
        return match_reference(data, output, reference, **kwargs)
    return wrapped
'''
GM_KREF = '''from utils import make_match_reference
import torch


def generate_input(batch: int, n: int, k: int, seed: int):
    gen = torch.Generator(device="cuda")
    assert isinstance(gen, torch.Generator)
    gen.manual_seed(seed)
    x = torch.randn(batch, n, device="cuda", generator=gen)
    torch.cuda.synchronize()
    return x, torch.full((batch,), k, dtype=torch.int32, device="cuda")


def ref_kernel(data):
    x, k = data
    return x * k[:, None]


check_implementation = make_match_reference(ref_kernel)
'''
GM_KTASK = '''files:
  - {"name": "submission.py", "source": "@SUBMISSION@"}
description: |
  x times k, k per row
tests:
  - {"batch": 2, "n": 64, "k": 3, "seed": 1}
  - {"batch": 2, "n": 64, "k": 1, "seed": 2}
  - {"batch": 4, "n": 96, "k": 3, "seed": 3}
benchmarks:
  - {"batch": 2, "n": 64, "k": 2, "seed": 8}
  - {"batch": 4, "n": 96, "k": 3, "seed": 9}
  - {"batch": 3, "n": 32, "k": 2, "seed": 10}
'''
GM_K_HONEST = '''import torch


def custom_kernel(data):
    x, k = data
    return x * k[:, None].to(x.dtype)
'''

KB_BN = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(4, 8, 16, 16)]


def get_init_inputs():
    return [8]
'''
KB_BN_STATS = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x):
        mean = x.mean(dim=(0, 2, 3), keepdim=True)
        var = x.var(dim=(0, 2, 3), unbiased=False, keepdim=True)
        w = self.bn.weight.view(1, -1, 1, 1)
        b = self.bn.bias.view(1, -1, 1, 1)
        return (x - mean) / torch.sqrt(var + self.bn.eps) * w + b
'''
KB_RANDINT = '''import random
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, k):
        return x * k


def get_inputs():
    return [torch.randn(16, 16), random.randint(1, 100)]


def get_init_inputs():
    return []
'''
KB_ESC = KB_RANDINT.replace(
    "return x * k", "raise ValueError('boom \\x1b]0;TITLE\\x07\\x1b[2J\\r"
    "fake')").replace("random.randint(1, 100)", "3")
GM_STRIDED = '''import torch


def generate_input(size: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(size, 8, generator=g).t()


def ref_kernel(data):
    return data * 2
'''


def eager(prob):
    with open(os.path.join(prob, "eager.py")) as f:
        return f.read()


def body(c):
    work = os.path.join(c.dir, "work")
    os.makedirs(work)
    no_grad = ("--knob", "MODE=no_grad")

    # 1.
    prob, _, err = import_kb(c, work, "weights", WEIGHTS, "weights drawn "
                             "from numpy, random and in set order")
    r = evaluate(c, prob, eager(prob), "weights_eager",
                 no_grad + ("--stop-after", "verify"))
    check(r["outcome"] == "ok", "the import's own eager.py of a Model "
          "whose weights come from numpy, random and set order: %s (%s)"
          % (r["outcome"], r.get("reason")))
    r = evaluate(c, prob, eager(prob), "weights_persist",
                 no_grad + ("--stop-after", "verify", "--torch-persistent"))
    check(r["outcome"] == "ok", "the same in persistent runners: %s (%s)"
          % (r["outcome"], r.get("reason")))
    f = os.path.join(work, "clock.py")
    write(f, CLOCK_WEIGHTS)
    rc, _, err = c.kf_run(["import", "kernelbench", f, "--out",
                           os.path.join(work, "clock")], work, 600)
    check(rc == 2 and "differs between two builds" in err and
          not os.path.exists(os.path.join(work, "clock")),
          "a Model whose weights read the clock: exit %d: %s" % (rc, err))
    c.log("weights from numpy, random and set order agree across "
          "processes; a clock-drawn Model is refused at import")

    # 2.
    prob, spec, err = import_kb(c, work, "pinned", PINNED,
                                "a get_inputs() that pins its seed")
    check("whatever the seed" in err, "kf import did not say that "
          "get_inputs() pins its seed: %s" % err)
    check(all(i["dists"] != ["sample"] for i in spec["inputs"]),
          "a pinned get_inputs() still draws the timed inputs: %r"
          % spec["inputs"])
    r = evaluate(c, prob, PRECOMPUTED, "pinned_precomputed")
    check(r["outcome"] == "wrong_answer", "the pinned draw's answer, "
          "computed in the constructor: %s (%s)" % (r["outcome"],
                                                  r.get("reason")))
    r = evaluate(c, prob, eager(prob), "pinned_eager",
                 no_grad + ("--stop-after", "verify"))
    check(r["outcome"] == "ok", "the pinned problem's own eager.py: %s (%s)"
          % (r["outcome"], r.get("reason")))
    for i in spec["inputs"]:
        i["dists"] = ["sample"]
        i.pop("range", None)
    write(os.path.join(prob, "spec.json"), json.dumps(spec))
    r = evaluate(c, prob, PRECOMPUTED, "pinned_forced")
    check(r["outcome"] == "spec_error" and "whatever the seed" in
          r.get("reason", ""), "distribution sample by a pinned "
          "get_inputs(): %s (%s)" % (r["outcome"], r.get("reason")))
    c.log("a pinned get_inputs(): described, not drawn by; the "
          "precomputed answer wrong_answer; forced sample spec_error")

    # 3.
    prob, spec, err = import_kb(c, work, "bigint", BIGINT,
                                "integers beyond 2^53 and a 0-d input")
    t = spec["torch"]
    check(t["init"] == [{"int": str(2 ** 61 - 1)}] and
          {"v": {"int": str(2 ** 62 - 57)}} in t["args"] and
          {"t": 1, "0d": True} in t["args"],
          "init and args as written: %r" % t)
    for tag in ("bigint_eager", "bigint_file"):
        src = eager(prob) if tag == "bigint_eager" else BIGINT_FILE
        extra = no_grad if tag == "bigint_eager" else ()
        r = evaluate(c, prob, src, tag, extra + ("--stop-after", "verify"))
        check(r["outcome"] == "ok", "%s: %s (%s)" % (tag, r["outcome"],
                                                   r.get("reason")))
    t["init"] = [2 ** 61 - 1]  # a plain JSON number: 2^61 to a double
    write(os.path.join(prob, "spec.json"), json.dumps(spec))
    r = subprocess.run(
        [c.path("kf-harness"), "eval-files", "--spec", prob, "--source",
         os.path.join(prob, "eager.py")], env=c.env, capture_output=True,
        timeout=600, stdin=subprocess.DEVNULL)
    why = r.stderr.decode(errors="replace")
    check(r.returncode != 0 and "torch.init" in why and "2^53" in why and
          '{"int"' in why, "a spec with 2^61 - 1 as a JSON number: exit "
          "%d: %s" % (r.returncode, why[-1500:]))
    c.log("ints beyond 2^53 kept exactly, or refused; a 0-d input 0-d")

    # 4.
    prob, _, err = import_kb(c, work, "slow_inputs", SLOW_INPUTS,
                             "a slow get_inputs()")
    # the deadline well past the sides' start on a loaded machine (10-20
    # s; one that passes before the first draw is the candidate's, as
    # before any call), and the draws outlast it: the first draw alone
    # calls get_inputs() four times (its seed checks), 20 s, each later
    # one 5 s, against the sides' calls of well under a second
    r = evaluate(c, prob, SLOW_HONEST, "slow_inputs",
                 ("--deadline-ms", "60000"))
    why = r.get("reason", "")
    check(r["outcome"] == "spec_error" and "get_inputs()" in why and
          "deadline" in why, "an honest candidate on a problem whose "
          "get_inputs() outlasts the deadline: %s (%s)" % (r["outcome"],
                                                         why))
    c.log("a slow get_inputs() at the deadline: the problem's spec_error")

    # 5.
    f = os.path.join(work, "relu.py")
    write(f, RELU)
    deep = os.path.join(work, *(["d" * 200] * 25))
    long_path = os.path.join(deep, "relu")
    rc, _, err = c.kf_run(["import", "kernelbench", f + "/" * 4200, "--out",
                           os.path.join(work, "long")], work, 600)
    check(rc == 2 and "bytes long" in err and
          not os.path.exists(os.path.join(work, "long")),
          "a 4,200-byte path: exit %d: %s" % (rc, err))
    rc, _, err = c.kf_run(["import", "kernelbench", f, "--out",
                           long_path], work, 600)
    check(rc == 2 and "--out" in err and not os.path.exists(deep),
          "a 5,000-byte --out: exit %d: %s" % (rc, err))
    gm = os.path.join(work, "gm")
    os.makedirs(gm)
    write(os.path.join(gm, "reference.py"), GM_REF)
    write(os.path.join(gm, "case.json"),
          '{"size": 256, "seed": 1}' + " " * 5000 + "\n")
    rc, _, err = c.kf_run(["import", "gpumode", gm, "--out",
                           os.path.join(work, "gm_big")], work, 600)
    check(rc == 0, "a padded 5 KB case.json: exit %d: %s" % (rc, err))
    with open(os.path.join(work, "gm_big", "spec.json")) as fh:
        got = json.load(fh)
    check(got["sizes"]["bench"].get("D0") == 256, "the padded case.json's "
          "size 256 is not the spec's: %r" % got["sizes"])
    write(os.path.join(gm, "case.json"), '{"size": 256, "seed": 1,}')
    rc, _, err = c.kf_run(["import", "gpumode", gm, "--out",
                           os.path.join(work, "gm_bad")], work, 600)
    check(rc == 2 and "case.json" in err and "--case" not in err,
          "a malformed case.json: exit %d: %s" % (rc, err))
    shutil.rmtree(gm)
    c.log("over-long paths refused; case.json read whole, or named")

    # 6.
    for name, ref in (("gm_clamp", GM_CLAMP), ("gm_pinned", GM_PINNED)):
        d = os.path.join(work, name + "_src")
        os.makedirs(d)
        write(os.path.join(d, "reference.py"), ref)
        write(os.path.join(d, "case.json"), '{"size": 4096, "seed": 7}')
        rc, _, err = c.kf_run(["import", "gpumode", d, "--out",
                               os.path.join(work, name)], work, 600)
        check(rc == 0, "import of %s: exit %d: %s" % (name, rc, err))
        check(("whatever the seed" in err) == (name == "gm_pinned"),
              "import of %s: %s" % (name, err))
    prob = os.path.join(work, "gm_clamp")
    with open(os.path.join(prob, "spec.json")) as fh:
        spec = json.load(fh)
    check(spec["inputs"][0]["dists"] == ["sample"] and
          spec["torch"].get("case") == {"size": 4096, "seed": 7} and
          spec["torch"].get("data") == "tuple",
          "the GPU MODE import: %r, %r" % (spec["inputs"], spec["torch"]))
    r = evaluate(c, prob, GM_CLAMP_RELU, "gm_clamp_relu",
                 ("--stop-after", "verify"))
    check(r["outcome"] == "wrong_answer", "relu for a clamp at 6 of rand * "
          "10, drawn by generate_input(): %s (%s)" % (r["outcome"],
                                                     r.get("reason")))
    r = evaluate(c, prob, GM_CLAMP_HONEST, "gm_clamp_honest",
                 ("--stop-after", "verify"))
    check(r["outcome"] == "ok", "the honest clamp: %s (%s)" % (
        r["outcome"], r.get("reason")))
    prob = os.path.join(work, "gm_pinned")
    with open(os.path.join(prob, "spec.json")) as fh:
        spec = json.load(fh)
    check(spec["inputs"][0]["dists"] != ["sample"],
          "a generate_input() that ignores its seed still draws: %r"
          % spec["inputs"])
    spec["inputs"][0]["dists"] = ["sample"]
    write(os.path.join(prob, "spec.json"), json.dumps(spec))
    r = evaluate(c, prob, GM_CLAMP_HONEST, "gm_pinned_forced",
                 ("--stop-after", "verify"))
    check(r["outcome"] == "spec_error" and "whatever the seed" in
          r.get("reason", ""), "distribution sample by a generate_input() "
          "that ignores its seed: %s (%s)" % (r["outcome"], r.get("reason")))
    c.log("GPU MODE inputs drawn by generate_input() under the draw's "
          "seed; a pinned one described, forced sample spec_error")

    # 7.
    d = os.path.join(work, "scaled_add")
    os.makedirs(d)
    for f, text in (("reference.py", GM_LAYOUT), ("task.py", GM_TASK),
                    ("utils.py", GM_UTILS), ("case.json",
                                             '{"size": 64, "seed": 3}')):
        write(os.path.join(d, f), text)
    prob = os.path.join(work, "gm_layout")
    rc, out, err = c.kf_run(["import", "gpumode", d, "--out", prob], work,
                            600)
    check(rc == 0 and "holds task, utils of" in out, "import of GPU MODE's "
          "layout: exit %d: %s%s" % (rc, out, err))
    with open(os.path.join(prob, "reference.py")) as fh:
        ref = fh.read()
    check(ref.index('_kf_module("task"') < ref.index('_kf_module("utils"')
          < ref.index(GM_LAYOUT), "reference.py does not register task, "
          "then utils, then run the file: %s" % ref[:1500])
    for src, tag, want in ((eager(prob), "gm_layout_eager", "ok"),
                           (GM_LAYOUT_SUB, "gm_layout_sub", "ok"),
                           (GM_LAYOUT_SUB.replace("task.SCALE", "2.0"),
                            "gm_layout_wrong", "wrong_answer")):
        r = evaluate(c, prob, src, tag, ("--stop-after", "verify", "--knob",
                                         "MODE=inference"))
        check(r["outcome"] == want, "%s: %s (%s), want %s" % (
            tag, r["outcome"], r.get("reason"), want))
    # a module of the directory named like one the runner has loaded
    # would replace it (torch, under a candidate too): refused, named
    write(os.path.join(d, "math.py"), GM_TASK)
    write(os.path.join(d, "reference.py"), "import math\n" + GM_LAYOUT)
    rc, out, err = c.kf_run(["import", "gpumode", d, "--out",
                             os.path.join(work, "gm_shadow")], work, 600)
    check(rc == 2 and "math.py of the problem's directory has the name of "
          "a module" in err and not os.path.exists(os.path.join(
              work, "gm_shadow")), "a math.py beside the reference: exit "
          "%d: %s%s" % (rc, out, err))
    # a module by a symbolic link (it may lead to any file the user can
    # read: it would go into the reference, and to the coordinator), and
    # one that does not parse: refused, each named
    os.remove(os.path.join(d, "math.py"))
    write(os.path.join(d, "reference.py"), GM_LAYOUT)
    os.rename(os.path.join(d, "task.py"), os.path.join(work, "task_elsewhere.py"))
    os.symlink(os.path.join(work, "task_elsewhere.py"),
               os.path.join(d, "task.py"))
    for tag, words in (("gm_link", "task.py, imported by"),
                       ("gm_syntax", "task.py line 7: invalid syntax")):
        if tag == "gm_syntax":
            os.remove(os.path.join(d, "task.py"))
            write(os.path.join(d, "task.py"), GM_TASK + "def broken(:\n")
        rc, out, err = c.kf_run(["import", "gpumode", d, "--out",
                                 os.path.join(work, tag)], work, 600)
        check(rc == 2 and words in err and ("symbolic link" in err) == (
            tag == "gm_link") and not os.path.exists(os.path.join(work, tag)),
            "%s: exit %d: %s%s" % (tag, rc, out, err))
    c.log("GPU MODE's layout: task.py and utils.py in reference.py; a "
          "submission importing task ok, a wrong one wrong_answer; a "
          "math.py, a linked task.py and one that does not parse refused")

    # 8.
    root = os.path.join(work, "gm_k")
    d = os.path.join(root, "times_k")
    os.makedirs(d)
    write(os.path.join(root, "utils.py"), GM_KUTILS)
    write(os.path.join(d, "reference.py"), GM_KREF)
    write(os.path.join(d, "task.yml"), GM_KTASK)
    prob = os.path.join(work, "gm_k_prob")
    rc, out, err = c.kf_run(["import", "gpumode", d, "--out", prob], work,
                            600)
    check(rc == 0 and "from task.yml benchmarks:1 (of 3)" in out and
          "verified at 2 of task.yml's tests" in out and
          "timed at 3 of task.yml's benchmarks" in out,
          "import with task.yml: exit %d: %s%s" % (rc, out, err))
    with open(os.path.join(prob, "spec.json")) as fh:
        spec = json.load(fh)
    cases = spec["torch"].get("cases", [])
    # every benchmark timed, the largest first (GPU MODE ranks by their
    # geometric mean); the others (k=2) sizes of their own, not checks
    bench = spec["sizes"]["bench"]
    check(spec["torch"]["case"] == {"batch": 4, "n": 96, "k": 3, "seed": 9}
          and "CASE" in spec["params"] and len(spec["sizes"]["check"]) == 3
          and isinstance(bench, list) and len(bench) == 3 and
          bench[0] in spec["sizes"]["check"] and
          bench[1] not in spec["sizes"]["check"] and
          bench[2] not in spec["sizes"]["check"] and
          [c_["case"]["k"] for c_ in cases] == [2, 2, 3, 1, 3] and
          spec["tolerance"]["f32"] == {"rtol": 1e-05, "atol": 1e-08},
          "the spec of a task.yml problem: %r" % spec)
    # timed at both benchmarks: the time is their medians' geometric mean
    r = evaluate(c, prob, GM_K_HONEST, "gm_k_timed", ())
    why = r["stages"][-1].get("reason", "") if r.get("stages") else ""
    check(r["outcome"] == "ok" and why.count("size D0=") == 3 and
          "over the 3 bench sizes, their medians' geometric mean" in why,
          "the honest kernel timed at every benchmark: %s (%s)" % (
              r["outcome"], why or r.get("reason")))
    for src, tag, want, words in (
            (GM_K_HONEST, "gm_k_honest", "ok", "5 sizes"),
            # right at every size but the second benchmark (k=2)
            (GM_K_HONEST.replace("k[:, None].to(x.dtype)",
                                 "torch.where(k == 2, 1, k)[:, None]"),
             "gm_k_bench2", "wrong_answer", "CASE=2"),
            # right at the benchmark and the test of k=3, not at k=1
            (GM_K_HONEST.replace("k[:, None].to(x.dtype)", "3"),
             "gm_k_three", "wrong_answer", "CASE="),
            # within kf import's old default (1e-3), not the problem's
            (GM_K_HONEST.replace("x.dtype)", "x.dtype) + 5e-4"),
             "gm_k_near", "wrong_answer", "1e-08")):
        r = evaluate(c, prob, src, tag, ("--stop-after", "verify"))
        check(r["outcome"] == want and words in r.get("reason", ""),
              "%s: %s (%s), want %s with %r" % (tag, r["outcome"],
                                                r.get("reason"), want, words))
    # what task.yml cannot give is named; and a check_implementation of
    # its own leaves the tolerance to --rtol/--atol, said
    for tag, text, args, words in (
            ("gm_k_index", GM_KTASK, ["--case", "tests:7"],
             "lists 3 tests (0 to 2)"),
            ("gm_k_yaml", GM_KTASK + "  - {\"batch\": 2\n", [],
             "task.yml: line"),
            ("gm_k_alias", "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
                "%s: &%s [%s]\n" % (n, n, ", ".join(["*" + p] * 10))
                for p, n in zip("abcdef", "bcdefg")) +
             "benchmarks:\n  - {\"batch\": 2, \"n\": 8, \"k\": 1, \"pad\": *g}\n",
             [], "over 100000 nodes")):
        write(os.path.join(d, "task.yml"), text)
        rc, out, err = c.kf_run(["import", "gpumode", d, "--out",
                                 os.path.join(work, tag)] + args, work, 600)
        check(rc == 2 and words in err and not os.path.exists(
            os.path.join(work, tag)), "%s: exit %d: %s%s" % (tag, rc, out,
                                                            err))
    write(os.path.join(d, "task.yml"), GM_KTASK)
    write(os.path.join(d, "reference.py"), GM_KREF.replace(
        "check_implementation = make_match_reference(ref_kernel)",
        "def check_implementation(data, output):\n"
        "    return bool((output - ref_kernel(data)).abs().max() < 0.1)"))
    rc, out, err = c.kf_run(["import", "gpumode", d, "--out",
                             os.path.join(work, "gm_k_own")], work, 600)
    check(rc == 0 and "check_implementation is a function of its own" in err
          and "--rtol and --atol" in err, "a check_implementation of its "
          "own: exit %d: %s%s" % (rc, out, err))
    # utils.py of the other form (make_match_reference(reference,
    # **kwargs) passing them to verbose_allclose, no match_reference):
    # the default its functions agree on
    write(os.path.join(d, "reference.py"), GM_KREF)
    write(os.path.join(root, "utils.py"), GM_KUTILS.replace(
        "match_reference(data, output, reference, rtol=1e-05, atol=1e-08)",
        "verbose_allclose(data, output, reference, rtol=1e-05, "
        "atol=1e-08)").replace("return match_reference(",
                               "return verbose_allclose("))
    rc, out, err = c.kf_run(["import", "gpumode", d, "--out",
                             os.path.join(work, "gm_k_verbose")], work, 600)
    with open(os.path.join(work, "gm_k_verbose", "spec.json")) as fh:
        tol = json.load(fh)["tolerance"]
    check(rc == 0 and tol["f32"] == {"rtol": 1e-05, "atol": 1e-08} and
          "warning" not in err, "utils.py with verbose_allclose: exit %d: "
          "%r %s%s" % (rc, tol, out, err))
    # a ref_kernel that allocates on 'cuda' imports for a GPU spec (kf
    # import runs it on the host), and is refused for a CPU one, named
    write(os.path.join(d, "reference.py"), GM_KREF.replace(
        "    return x * k[:, None]",
        "    out = torch.empty(x.shape, device='cuda')\n"
        "    return out.copy_(x * k[:, None])"))
    for dev, want in (("cuda", 0), ("cpu", 2)):
        rc, out, err = c.kf_run(["import", "gpumode", d, "--device", dev,
                                 "--out", os.path.join(work, "gm_k_" + dev)],
                                work, 600)
        check(rc == want and (want == 0 or "ref_kernel" in err or "CUDA" in
                              err), "ref_kernel on 'cuda', --device %s: "
              "exit %d: %s%s" % (dev, rc, out, err))
    c.log("GPU MODE's task.yml: the largest benchmark, each test a size of its "
          "own (a CASE param where shapes agree), the problem's tolerance; "
          "x*3 wrong at k=1, 5e-4 off wrong at atol 1e-8")

    # 9.
    prob, _, _ = import_kb(c, work, "kb_bn", KB_BN, "a BatchNorm model")
    for src, tag, want in (("import torch\nimport torch.nn as nn\n\n\n"
                            "class ModelNew(nn.Module):\n"
                            "    def __init__(self, n):\n"
                            "        super().__init__()\n\n"
                            "    def forward(self, x):\n"
                            "        return x.clone()\n", "bn_copy",
                            "wrong_answer"),
                           (KB_BN_STATS, "bn_stats", "ok"),
                           (eager(prob), "bn_eager", "ok")):
        r = evaluate(c, prob, src, tag, no_grad + ("--stop-after", "verify"))
        check(r["outcome"] == want, "BatchNorm as KernelBench runs it "
              "(training mode), %s: %s (%s), want %s" % (
                  tag, r["outcome"], r.get("reason"), want))
    for name, text, words in (
            ("kb_randint", KB_RANDINT, "input 1 is a number that "
             "get_inputs() draws at random"),
            ("kb_esc", KB_ESC, "ValueError: boom")):
        write(os.path.join(work, name + ".py"), text)
        rc, out, err = c.kf_run(["import", "kernelbench",
                                 os.path.join(work, name + ".py"), "--out",
                                 os.path.join(work, name)], work, 600)
        check(rc == 2 and words in err and "\x1b" not in err and "\r" not
              in err and not os.path.exists(os.path.join(work, name)),
              "%s: exit %d: %r" % (name, rc, out + err))
    d = os.path.join(work, "gm_strided")
    os.makedirs(d)
    write(os.path.join(d, "reference.py"), GM_STRIDED)
    write(os.path.join(d, "case.json"), '{"size": 16, "seed": 1}')
    rc, out, err = c.kf_run(["import", "gpumode", d, "--out",
                             os.path.join(work, "gm_strided_prob")], work,
                            600)
    check(rc == 0 and "input 0 of generate_input() is not contiguous" in err,
          "a strided input: exit %d: %s%s" % (rc, out, err))
    c.log("KernelBench as it runs: BatchNorm in training mode (a copy "
          "wrong, batch statistics ok); a random number refused; escapes "
          "dropped; a strided input said")


if __name__ == "__main__":
    if not have_torch():
        print("test_torch_problems: SKIP: %s has no torch (Debian: "
              "python3-torch)" % PY)
        sys.exit(77)
    kfe2e.run("torchproblems", body, time_limit=1200)
