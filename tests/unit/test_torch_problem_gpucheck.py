#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
unit: scripts/torch_problem_gpucheck.py, the developer's check of PyTorch
problems' templates, as its CPU run (KF_TORCH_DEVICE=cpu: CPU copies at
the shipped sizes, the templates offered on cpu only, no timing).

1. It finds the wrong template: kb1_gelu's torch_ops OP=tanh (the tanh
   approximation of GELU, outside the spec's rtol 1e-5) fails, named with
   the size and distribution, and the exit status is 1; OP=gelu and
   OP=erf pass.
2. A GPU-only template is not run on a CPU copy: kb1_relu's triton_flat
   (devices ["cuda"]) has no line, its eager variants all pass, exit 0.
3. Each knob value is used: the three OP values of kb1_relu's eager.
4. A problem that does not exist is a usage error (exit 2) naming it.

Runs under /usr/bin/python3 (or $KF_PYTHON), the Python with torch;
skipped (77) when it has none.
"""
import os
import subprocess
import sys

SRC = os.environ.get("KF_SOURCE_DIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = os.environ.get("KF_PYTHON", "/usr/bin/python3")
TOOL = os.path.join(SRC, "scripts", "torch_problem_gpucheck.py")


def run(*problems):
    env = dict(os.environ, KF_TORCH_DEVICE="cpu")
    r = subprocess.run([PY, TOOL, "--no-bench"] + list(problems), env=env,
                       capture_output=True, text=True, timeout=100)
    return r.returncode, r.stdout, r.stderr


def main():
    probe = subprocess.run([PY, "-c", "import torch"], capture_output=True)
    if probe.returncode != 0:
        print("test_torch_problem_gpucheck: %s has no torch: skipped" % PY)
        return 77
    fails = []

    def check(ok, msg):
        if not ok:
            fails.append(msg)

    rc, out, err = run("kb1_gelu")
    lines = out.splitlines()
    check(rc == 1, "kb1_gelu: exit %d, want 1\n%s%s" % (rc, out, err))
    bad = [x for x in lines if x.startswith("FAIL")]
    check(len(bad) == 1 and "torch_ops OP=tanh" in bad[0] and
          "outside rtol 1e-05" in bad[0] and '{"B": 1, "D": 7}' in bad[0],
          "kb1_gelu failures: %r" % bad)
    for op in ("gelu", "erf"):
        check("ok   kb1_gelu torch_ops OP=%s" % op in lines,
              "kb1_gelu OP=%s not ok:\n%s" % (op, out))

    rc, out, err = run("kb1_relu")
    lines = out.splitlines()
    check(rc == 0, "kb1_relu: exit %d\n%s%s" % (rc, out, err))
    check(not any("triton" in x for x in lines),
          "a GPU-only template ran on a CPU copy:\n%s" % out)
    for op in ("relu", "clamp", "maximum"):
        check("ok   kb1_relu eager OP=%s" % op in lines,
              "kb1_relu OP=%s missing:\n%s" % (op, out))

    rc, out, err = run("kb1_nosuch")
    check(rc == 2 and "kb1_nosuch" in err, "a missing problem: exit %d, %r"
          % (rc, err))

    for f in fails:
        print("FAIL:", f)
    if not fails:
        print("test_torch_problem_gpucheck: all checks passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
