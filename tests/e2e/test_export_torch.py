# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_export_torch.py -- a verified PyTorch best, written out
(`kf run`'s best file, `kf campaign best --out`, `kf campaign export
--format gpumode|kernelbench`), is the kernel that was verified: each file
imports in a fresh interpreter and computes what the reference computes,
with the init arguments and knob values the harness gave it.

The property: a file KernelFleet writes for a verified best reads every
value as the harness read it.  The problem is imported from PyTorch code
whose init arguments are a bool and an int past 2**53 (JSON: false and
{"int": "digits"}); the template starts with a docstring and a `from
__future__` import and has knobs whose text Python would read otherwise
as a literal (010, 1_6, inf).  Each is a way the written file differed
from the verified one (red team 2026-12-02: a SyntaxError, a NameError,
a dict where the model took an int, a future import after the knobs).
An edited spec of the same name is refused as --problem.

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
from test_torch import PY, have_torch, write  # noqa: E402

BIG = 9007199254740993  # 2**53 + 1: a float reads it as 2**53

REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """relu(x) scaled by big %% 7, negated when negate."""

    def __init__(self, negate, big):
        super().__init__()
        self.negate = negate
        self.k = big %% 7

    def forward(self, x):
        y = torch.relu(x) * self.k
        return -y if self.negate else y


def get_inputs():
    return [torch.randn(4, 96)]


def get_init_inputs():
    return [False, %d]
''' % BIG

# Correct only with SCALE == 10 (int("010")), CHUNK == 16 (int("1_6")),
# HI == inf (float("inf")) and big an int: 010 is a SyntaxError in
# Python 3, 1_6 reads as 16 either way, inf unquoted is a NameError, and
# 2**53 + 1 as a float is 2**53 (k 2 instead of 3).
TEMPLATE = '''"""A docstring first, as a module may have: the future import below
must stay the first statement after it."""
from __future__ import annotations

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, negate: bool, big: int):
        super().__init__()
        assert isinstance(big, int), type(big)
        self.negate = negate
        self.k = big % 7

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.clamp(torch.relu(x), max=HI) * (SCALE // 10)
        y = y * (CHUNK // 16) * self.k
        return -y if self.negate else y
'''

CHECK = '''
import importlib.util
import sys
import torch

ref_path, path, fmt = sys.argv[1:4]


def load(p, name):
    spec = importlib.util.spec_from_file_location(name, p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ref = load(ref_path, "ref")
sub = load(path, "sub")
init = ref.get_init_inputs()
torch.manual_seed(5)
x = torch.randn(4, 96) * 3
with torch.no_grad():
    want = ref.Model(*init)(x)
    if fmt == "gpumode":
        got = sub.custom_kernel((x,))
    else:
        got = sub.ModelNew(*init)(x)
assert torch.equal(got, want), (got - want).abs().max()
assert want.abs().max() > 0
print("FILE OK")
'''


def body(c):
    c.env["KF_PYTHON"] = PY
    work = os.path.join(c.dir, "work")
    os.makedirs(work)
    ref = os.path.join(work, "scaled_relu.py")
    write(ref, REFERENCE)
    prob = os.path.join(work, "scaled_relu")
    rc, out, err = c.kf_run(["import", "kernelbench", ref, "--out", prob],
                            work, 600)
    check(rc == 0, "kf import: exit %d: %s" % (rc, err))
    with open(os.path.join(prob, "spec.json")) as f:
        spec = json.load(f)
    init = spec.get("torch", {}).get("init")
    check(init == [False, {"int": str(BIG)}], "kf import wrote init %r" % init)
    write(os.path.join(prob, "new.py"), TEMPLATE)
    spec["templates"] = [{
        "name": "new", "file": "new.py",
        "description": "the reference, with knobs that are not literals",
        "knobs": [{"name": "SCALE", "values": ["010"]},
                  {"name": "CHUNK", "values": ["1_6"]},
                  {"name": "HI", "values": ["inf"]}]}]
    write(os.path.join(prob, "spec.json"), json.dumps(spec, indent=1))

    # 1. The campaign: the one genome of the template, verified.
    rc, out, err = c.kf_run(["run", prob, "--data", c.dir, "--evals", "2",
                             "--minutes", "6", "--json"], work, 900)
    check(rc in (0, 1), "kf run exited %d\n%s\n%s" % (rc, out, err[-3000:]))
    res = json.loads(out)
    best = (res.get("best") or {}).get("best") or {}
    check(best.get("outcome") == "ok", "kf run: no verified best: %s"
          % out[-3000:])
    cid = str(res.get("campaign_id") or 1)
    runfile = os.path.join(work, "scaled_relu.best.py")
    check(os.path.isfile(runfile), "kf run wrote no %s" % runfile)
    c.log("kf run: campaign %s, best %.2fx" % (cid, best.get("speedup", 0)))

    # 2. The other writers, from a coordinator on the same data.
    c.start_pg()
    c.start_coordinator()
    files = [(runfile, "kernelbench")]
    bestfile = os.path.join(c.dir, "best.py")
    rc, o, e = c.kf_run(["campaign", "best", cid, "--out", bestfile,
                         "--coordinator", c.target], work, 120)
    check(rc == 0, "kf campaign best: exit %d: %s%s" % (rc, o, e))
    files.append((bestfile, "kernelbench"))
    for fmt in ("gpumode", "kernelbench"):
        f = os.path.join(c.dir, "export.%s.py" % fmt)
        rc, o, e = c.kf_run(["campaign", "export", cid, "--format", fmt,
                             "--problem", prob, "--out", f, "--coordinator",
                             c.target], work, 120)
        check(rc == 0, "export --format %s: exit %d: %s%s" % (fmt, rc, o, e))
        files.append((f, fmt))

    # 3. Each imports and computes the reference's answer.
    checker = os.path.join(c.dir, "check.py")
    write(checker, CHECK)
    for f, fmt in files:
        with open(f) as fh:
            text = fh.read()
        first = [ln for ln in text.splitlines()
                 if ln.strip() and not ln.startswith("#")]
        r = subprocess.run([PY, "-I", checker, ref, f, fmt],
                           capture_output=True, timeout=300 * kfe2e.SLACK)
        check(r.returncode == 0 and b"FILE OK" in r.stdout,
              "%s (%s) is not the verified kernel:\n%s%s\n--- head:\n%s" % (
                  os.path.basename(f), fmt,
                  r.stdout.decode(errors="replace"),
                  r.stderr.decode(errors="replace")[-2000:],
                  "\n".join(first[:30])))
        c.log("%s: imports, matches the reference" % os.path.basename(f))

    # 4. The same problem's name over an edited spec (its tolerance): the
    # export would build the model from another problem's init; refused,
    # nothing written.
    edited = os.path.join(work, "scaled_relu_edited")
    shutil.copytree(prob, edited)
    spec["tolerance"] = {k: {"rtol": 0.5, "atol": 0.5}
                         for k in spec["tolerance"]}
    write(os.path.join(edited, "spec.json"), json.dumps(spec, indent=1))
    for fmt in ("gpumode", "kernelbench"):
        f = os.path.join(c.dir, "edited.%s.py" % fmt)
        rc, o, e = c.kf_run(["campaign", "export", cid, "--format", fmt,
                             "--problem", edited, "--out", f, "--coordinator",
                             c.target], work, 120)
        check(rc == 2 and "is not the problem campaign %s" % cid in e and
              not os.path.exists(f), "export --format %s of an edited spec: "
              "exit %d: %s%s" % (fmt, rc, o, e))
    c.log("an edited spec of the same name: refused")


if __name__ == "__main__":
    if not have_torch():
        print("test_export_torch: SKIP: %s has no torch (Debian: "
              "python3-torch)" % PY)
        sys.exit(77)
    kfe2e.run("exporttorch", body, time_limit=1200)
