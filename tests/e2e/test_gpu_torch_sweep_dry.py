# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_gpu_torch_sweep_dry.py -- scripts/gpu-torch-sweep-remote,
the script that produces issue 12's table on a GPU machine, run here as
its documented CPU dry run (KF_TORCH_DEVICE=cpu: CPU copies of the
problems at their shipped sizes; KF_SWEEP_BIN: this build's binaries
instead of the bundle), so that the device's scarce minutes are not the
first place it runs:

- it exits 0, having run `kf sweep` on a copy of problems/torch/kb1_relu
  (its own PostgreSQL, coordinator and a CPU worker, through
  scripts/gpu-sweep-remote) and packed the state;
- the report it wrote has kb1_relu's cell with a best, torch's figures
  from the best's own evaluation ("torch_from": "evaluation");
- the best, exported by `kf campaign export --format gpumode` through a
  coordinator it starts on the sweep's database (an ephemeral port), ran
  in a fresh Python against the reference: check.txt says it matches;
- its temporary copies of the problems are gone afterwards, and no
  coordinator or PostgreSQL of it is left running.

Skipped (77) when /usr/bin/python3 (or $KF_PYTHON) has no torch.
"""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
import test_torch as tt  # noqa: E402
from kfe2e import check  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "gpu-torch-sweep-remote")


def body(c):
    out = os.path.join(c.dir, "out")
    before = set(glob.glob("/tmp/kf-torch-problems-*"))
    env = dict(c.env, OUT=out, KF_PYTHON=tt.PY, KF_TORCH_DEVICE="cpu",
               KF_SWEEP_BIN=os.path.dirname(c.path("kf")),
               KF_BENCH_NO_TORCH="1", KF_SWEEP_EVALS="2",
               KF_BENCH_MINUTES="1", KF_SWEEP_NAME="dry")
    c.log("$ %s cpu-d - state.tar.xz kb1_relu" % SCRIPT)
    r = subprocess.run([SCRIPT, "cpu-d", "-", "state.tar.xz", "kb1_relu"],
                       env=env, stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=800, preexec_fn=kfe2e._pdeathsig)
    err = r.stderr.decode(errors="replace")
    with open(os.path.join(c.dir, "script.log"), "w") as f:
        f.write(r.stdout.decode(errors="replace") + err)
    check(r.returncode == 0, "gpu-torch-sweep-remote exited %d:\n%s"
          % (r.returncode, err[-3000:]))
    check(os.path.isfile(os.path.join(out, "state.tar.xz")),
          "no state.tar.xz packed")
    with open(os.path.join(out, "report", "report.json")) as f:
        rep = json.load(f)
    cells = {x["problem"]: x for x in rep["cells"]}
    x = cells.get("kb1_relu")
    check(x is not None and x["best_candidate_id"] is not None and
          x["torch_from"] == "evaluation" and
          x["speedup_vs_eager"] == x["speedup"],
          "report cell of kb1_relu: %r" % x)
    with open(os.path.join(out, "exports", "check.txt")) as f:
        lines = f.read().splitlines()
    check(len(lines) == 1 and lines[0].startswith(
        "kb1_relu: submission kb1_relu.submission.py: matches the reference")
          and "not timed (device cpu)" in lines[0],
          "check.txt: %r" % lines)
    sub = os.path.join(out, "exports", "kb1_relu.submission.py")
    with open(sub) as f:
        text = f.read()
    check("def custom_kernel(data):" in text, "the export lacks custom_kernel")
    left = set(glob.glob("/tmp/kf-torch-problems-*")) - before
    check(not left, "the script left its copies: %r" % sorted(left))
    pid = os.path.join("/tmp/kfsweep", "pg", "data", "postmaster.pid")
    check(not os.path.exists(pid), "the script left PostgreSQL running")
    with open(os.path.join(out, "exports", "coordinator.log")) as f:
        clog = f.read()
    check("stopped" in clog, "the export's coordinator did not stop:\n%s"
          % clog[-1000:])
    c.log("dry run: kb1_relu %.2fx over eager, submission matches"
          % x["speedup_vs_eager"])


if __name__ == "__main__":
    if not tt.have_torch():
        print("test_gpu_torch_sweep_dry: SKIP: %s has no torch (Debian: "
              "python3-torch)" % tt.PY)
        sys.exit(77)
    kfe2e.run("gpu_torch_sweep_dry", body, time_limit=840)
