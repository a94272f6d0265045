#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
e2e: the torch twins of the CUDA problems (problems/cuda/P/torch/, written
by scripts/make-torch-twins), the problems on which the GPU bench times a
CUDA campaign's best beside torch eager and torch.compile in one
evaluation.  On CPU, with Debian's python3-torch:

1. The twins in git are what the script writes (`--check`), and a CUDA
   problem without a torch expression is named.
2. Every twin's reference, at each of its check sizes and a drawn input
   per tensor, returns outputs of exactly the dtypes and shapes its spec
   declares (what the harness's comparison reads).
3. Through the harness (kf-harness eval-files, persistent runners, device
   cpu, bench size = a check size): the cross-entropy twin -- an int64
   input with a range, a [1] output, its own tolerance -- with its own
   expression as the candidate ModelNew is ok, and a candidate off by 5%
   is wrong_answer: the twin's spec and reference fit the torch backend.

Skipped (77) when /usr/bin/python3 (or $KF_PYTHON) has no torch.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402
import test_torch as tt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "make-torch-twins")

SHAPES = r"""
import importlib.util, json, os, sys, torch
DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
      "i64": torch.int64, "i32": torch.int32, "f64": torch.float64}
root = sys.argv[1]
torch.manual_seed(5)
n = 0
for p in sorted(os.listdir(root)):
    d = os.path.join(root, p)
    s = json.load(open(os.path.join(d, "spec.json")))
    spec = importlib.util.spec_from_file_location("ref_" + p,
                                                  os.path.join(d, "reference.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    model = m.Model(*m.get_init_inputs())
    for sz in s["sizes"]["check"]:
        ev = lambda e: eval(e, {}, dict(sz))
        ins = []
        for t in s["inputs"]:
            shape = [ev(e) for e in t["shape"]]
            if t["dtype"] in ("i64", "i32"):
                ins.append(torch.randint(0, ev(t["range"]), shape,
                                         dtype=DT[t["dtype"]]))
            else:
                ins.append(torch.randn(shape).to(DT[t["dtype"]]))
        out = model(*ins)
        outs = out if isinstance(out, tuple) else (out,)
        assert len(outs) == len(s["outputs"]), (p, len(outs))
        for o, t in zip(outs, s["outputs"]):
            want = [ev(e) for e in t["shape"]]
            assert list(o.shape) == want and o.dtype == DT[t["dtype"]], (
                p, sz, t["name"], tuple(o.shape), o.dtype, want, t["dtype"])
        n += 1
print("SHAPES OK %d" % n)
"""


def body(c):
    r = subprocess.run([sys.executable, SCRIPT, "--check"],
                       capture_output=True, timeout=120)
    check(r.returncode == 0, "the twins in git are out of date: %s"
          % r.stderr.decode(errors="replace"))
    twins = os.path.join(c.dir, "twins")
    r = subprocess.run([sys.executable, SCRIPT, "--out", twins, "--device",
                        "cpu", "--bench-from-check"], capture_output=True,
                       timeout=120)
    check(r.returncode == 0, "make-torch-twins --out: %s"
          % r.stderr.decode(errors="replace"))
    cuda = sorted(d for d in os.listdir(os.path.join(ROOT, "problems",
                                                     "cuda"))
                  if os.path.isfile(os.path.join(ROOT, "problems", "cuda", d,
                                                 "spec.json")))
    check(sorted(os.listdir(twins)) == cuda, "twins %r for CUDA problems %r"
          % (sorted(os.listdir(twins)), cuda))
    c.log("twins up to date: %s" % ", ".join(cuda))

    checker = os.path.join(c.dir, "shapes.py")
    with open(checker, "w") as f:
        f.write(SHAPES)
    r = subprocess.run([tt.PY, checker, twins], capture_output=True,
                       timeout=600 * kfe2e.SLACK)
    check(r.returncode == 0 and b"SHAPES OK" in r.stdout,
          "a twin's reference disagrees with its spec:\n%s%s" % (
              r.stdout.decode(errors="replace"),
              r.stderr.decode(errors="replace")[-3000:]))
    c.log(r.stdout.decode().strip() + " (twin x check size)")

    prob = os.path.join(twins, "cross_entropy")
    with open(os.path.join(prob, "reference.py")) as f:
        ref = f.read()
    same = ref + "\n\nclass ModelNew(Model):\n    pass\n"
    off = ref + ("\n\nclass ModelNew(Model):\n"
                 "    def forward(self, logits, targets):\n"
                 "        return super().forward(logits, targets) * 1.05\n")
    pers = ["--torch-persistent"]
    res = tt.evaluate(c, prob, same, "twin_same", pers)
    check(res["outcome"] == "ok", "the cross-entropy twin with its own "
          "expression: %s (%s)" % (res["outcome"], res.get("reason")))
    res = tt.evaluate(c, prob, off, "twin_off", pers)
    check(res["outcome"] == "wrong_answer", "the cross-entropy twin, 5%% "
          "off: %s (%s)" % (res["outcome"], res.get("reason")))
    c.log("cross_entropy twin through the harness: its expression ok, 5% "
          "off wrong_answer")


if __name__ == "__main__":
    if not tt.have_torch():
        print("test_torch_twins: SKIP: %s has no torch (Debian: "
              "python3-torch)" % tt.PY)
        sys.exit(77)
    kfe2e.run("torch_twins", body, time_limit=900)
