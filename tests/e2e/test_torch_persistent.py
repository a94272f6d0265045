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
   input (never ok).
4. What the stop between calls guarantees: a candidate that renices every
   process of its uid (EPERM; answers honestly), one that answers wrongly
   unless its SIGCONT handler saw it continued before its call, and one
   that replaces the runner's command reader with a loop watching its
   input buffer for the next draw and answers wrongly if it ever sees it
   change before its command arrives -- all ok, i.e. refused.

Skipped (77) when /usr/bin/python3 (or $KF_PYTHON) has no torch.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402
import test_torch as tt  # noqa: E402


def body(c):
    work = os.path.join(c.dir, "work")
    os.makedirs(work)
    model = os.path.join(work, "linear_relu.py")
    tt.write(model, tt.MODEL)
    prob = os.path.join(work, "linear_relu")
    rc, out, err = tt.kf(c, ["import", "kernelbench", model, "--out", prob],
                         work, 600)
    check(rc == 0, "kf import exited %d: %s%s" % (rc, out, err))
    with open(os.path.join(prob, "spec.json")) as f:
        check(json.load(f)["torch"]["device"] == "cpu", "device not cpu")
    tt.persistent(c, prob)


if __name__ == "__main__":
    if not tt.have_torch():
        print("test_torch_persistent: SKIP: %s has no torch (Debian: "
              "python3-torch)" % tt.PY)
        sys.exit(77)
    kfe2e.run("torch_persistent", body, time_limit=900)
