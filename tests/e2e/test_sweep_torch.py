# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_sweep_torch.py -- `kf sweep` of a PyTorch problem beside
a C problem: the torch columns of a PyTorch problem come from its best's
own evaluation (its reference is torch eager, timed with the candidate by
the same timer), with no baselines file and no twin; the C problem in the
same sweep and class still has none without --baselines.

Real processes, on CPU with Debian's python3-torch: `kf sweep
problems/torch/kb1_relu problems/cpu/vecsum --class cpu-t` starts its own
PostgreSQL, kf-coordinator and a kf-worker; then `kf sweep report --json`
and report.md are checked against `kf campaign best ID --class MODEL
--json` and the evaluations table:

- kb1_relu: speedup_vs_eager equals the best's speedup (eager is the
  reference), eager_ms its reference time, torch_from "evaluation",
  and torch.compile/max-autotune are '-' with the reason (the torch
  backend times them on a GPU only); the Markdown row says "its
  evaluation" and no note says the class lacks baselines for it;
- vecsum: no torch figures, torch_from null, and the class's note that
  no baselines were given (it ran a C kernel: torch's times would need a
  twin).

Skipped (77) when /usr/bin/python3 (or $KF_PYTHON) has no torch.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
import test_torch as tt  # noqa: E402
from test_sweep import kf  # noqa: E402  (kf sweep, logged to kf-sweep.log)
from kfe2e import check  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def body(c):
    relu = os.path.join(ROOT, "problems", "torch", "kb1_relu")
    vecsum = kfcampaign.problem_dir("vecsum")
    data = c.dir
    rc, out, err = kf(c, ["sweep", relu, vecsum, "--data", data, "--name",
                          "t1", "--class", "cpu-t", "--evals", "3",
                          "--minutes", "4"], timeout=900)
    check(rc == 0, "kf sweep exited %d:\n%s" % (rc, err))
    sid = int(out.strip())

    rdir = os.path.join(c.dir, "report")
    rc, out, err = kf(c, ["sweep", "report", "t1", "--data", data, "--out",
                          rdir, "--json"])
    check(rc == 0, "report exited %d: %s" % (rc, err))
    rep = json.loads(out)
    check(rep["sweep_id"] == sid, "report of sweep %r" % rep["sweep_id"])
    cells = {x["problem"]: x for x in rep["cells"]}
    check(set(cells) == {"kb1_relu", "vecsum"}, "cells %r" % list(cells))
    with open(os.path.join(rdir, "report.md")) as f:
        md = f.read()

    c.start_pg()
    c.start_coordinator()
    x = cells["kb1_relu"]
    check(x["campaign_id"] is not None and x["best_candidate_id"] is not None,
          "kb1_relu has no best: %r" % x)
    b = json.loads(c.kf("campaign", "best", str(x["campaign_id"]), "--class",
                        "cpu-t", "--json", "--coordinator", c.target))["best"]
    check(b["candidate_id"] == x["best_candidate_id"] and
          abs(b["speedup"] - x["speedup"]) < 1e-9 * b["speedup"],
          "kb1_relu cell %r vs best %r" % (x, b))
    check(x["torch_from"] == "evaluation" and
          x["speedup_vs_eager"] == x["speedup"],
          "kb1_relu: vs eager %r, speedup %r, from %r"
          % (x["speedup_vs_eager"], x["speedup"], x["torch_from"]))
    # eager is the reference: its time is the best's reference time
    check(x["eager_ms"] is not None and
          abs(x["eager_ms"] * 1e6 - x["ref_time_ns"]) < 1e-6 * x["ref_time_ns"],
          "kb1_relu eager_ms %r vs ref_time_ns %r"
          % (x["eager_ms"], x["ref_time_ns"]))
    stored = c.psql("SELECT e.speedup, COALESCE(e.speedup_compile, 0)"
                    " FROM evaluations e WHERE e.campaign_id = %d AND"
                    " e.candidate_id = %d AND e.outcome = 'ok'"
                    % (x["campaign_id"], x["best_candidate_id"]))
    check(stored and float(stored[0][1]) == 0,
          "CPU evaluation with a torch.compile time: %r" % stored)
    check(x["speedup_vs_compile"] is None and x["compile_ms"] is None and
          "not timed in the best's evaluation" in x["missing"]["compile"] and
          x["speedup_vs_max_autotune"] is None and
          "max_autotune" in x["missing"],
          "kb1_relu compile columns: %r" % x)
    check("eager" not in x["missing"], "kb1_relu: eager missing: %r" % x)
    row = [ln for ln in md.splitlines() if ln.startswith("| kb1_relu |")]
    check(len(row) == 1 and "its evaluation" in row[0] and
          "%.2fx" % x["speedup_vs_eager"] in row[0],
          "report.md row of kb1_relu: %r" % row)
    check("kb1_relu on cpu-t, vs torch.compile: - because torch.compile "
          "was not timed" in md, "report.md lacks kb1_relu's compile note")

    v = cells["vecsum"]
    check(v["best_candidate_id"] is not None and v["torch_from"] is None and
          v["speedup_vs_eager"] is None and v["eager_ms"] is None,
          "vecsum torch columns: %r" % v)
    check("cpu-t, vs torch (eager, torch.compile, max-autotune): - because "
          "no torch baselines were given" in md,
          "report.md lacks the class's no-baselines note:\n%s" % md)
    c.log("kb1_relu %.2fx over eager (campaign %d); vecsum %.2fx" % (
        x["speedup_vs_eager"], x["campaign_id"], v["speedup"]))


if __name__ == "__main__":
    if not tt.have_torch():
        print("test_sweep_torch: SKIP: %s has no torch (Debian: "
              "python3-torch)" % tt.PY)
        sys.exit(77)
    kfe2e.run("sweep_torch", body, time_limit=840)
