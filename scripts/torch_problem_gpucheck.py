#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/torch_problem_gpucheck.py -- check (and time) the templates of
PyTorch problems (problems/torch/P) on a GPU copy of each, before a search
spends its evaluations on them.

A developer's tool, not the harness: it trusts the templates it runs (no
sandbox, no timing protocol).  Each problem is copied as
scripts/torch_gpu_copies.py does (KF_TORCH_DEVICE=cpu: a CPU copy at the
shipped size, so the tool runs in CI too); for every template the copy
offers (a template's "devices" list), the knobs are walked so that each
value of each knob is used at least once (variant k takes value k mod n of
every knob), and each variant is

  check   run on every check size and the bench size x every
          distribution of the spec (the harness checks its timed outputs
          too), against the reference: |got - want| <= atol + rtol *
          |want| (the spec's tolerance), outputs of the same shape and
          dtype; a template that raises fails
  timed   (GPU, unless --no-bench) at the bench size: median of --reps
          calls with CUDA events, the reference beside it in the same loop,
          L2 flushed between calls; the speedup over the reference

Prints one line per variant and exits 1 if any check failed, 2 on bad
usage.  Usage:
  scripts/torch_problem_gpucheck.py [--no-bench] [--reps N] PROBLEM...
"""
import argparse
import json
import math
import os
import re
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "harness", "torch"))
import torch_gpu_copies  # noqa: E402
import runner  # noqa: E402  (the harness's own knob conversion)
DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
          "bf16": torch.bfloat16, "i32": torch.int32, "i64": torch.int64}
SEED = 1234


def dim_value(expr, size):
    """A shape expression of the spec at one size: params and integers
    with + - * / ( ) only (our own specs; not a general evaluator)."""
    if not re.fullmatch(r"[A-Za-z0-9_+\-*/() ]+", str(expr)):
        raise ValueError("shape expression %r" % expr)
    return int(eval(str(expr), {"__builtins__": {}}, dict(size)))


def draw(dist, shape, dtype, gen):
    """The spec's distributions (common/spec.h KF_DIST_MAP)."""
    n = torch.randn(shape, generator=gen, dtype=torch.float64)
    u = torch.rand(shape, generator=gen, dtype=torch.float64)
    if dist == "normal":
        x = n
    elif dist == "uniform":
        x = 2 * u - 1
    elif dist == "unit":
        x = u
    elif dist == "wide":
        x = 200 * u - 100
    elif dist == "offset":
        x = 1000 + n
    elif dist == "tiny":
        x = 1e-3 * n
    elif dist == "mixed":
        pick = torch.randint(0, 8, shape, generator=gen)
        parts = [n, 2 * u - 1, 200 * u - 100, 1000 + n, 1e-3 * n,
                 torch.zeros(shape, dtype=torch.float64),
                 torch.ones(shape, dtype=torch.float64),
                 -torch.ones(shape, dtype=torch.float64)]
        x = torch.zeros(shape, dtype=torch.float64)
        for k, p in enumerate(parts):
            x = torch.where(pick == k, p, x)
    else:
        raise ValueError("distribution %r" % dist)
    return x.to(dtype)


def inputs(spec, size, dist, device, seed):
    gen = torch.Generator().manual_seed(seed)
    out = []
    for t in spec["inputs"]:
        shape = [dim_value(d, size) for d in t["shape"]]
        d = dist if dist in t["dists"] else t["dists"][0]
        out.append(draw(d, shape, DTYPES[t["dtype"]], gen).to(device))
    return out


def load(path, knobs, cls_name, spec, device):
    """The module's class or custom_kernel, as the harness builds it: knobs
    as module globals, the model from the spec's init, moved to device."""
    ns = {"__name__": "__kf_check__", "__file__": path}
    ns.update({k: runner._knob_value(str(v)) for k, v in knobs.items()})
    with open(path) as f:
        code = compile(f.read(), path, "exec")
    torch.manual_seed(SEED)
    exec(code, ns)
    init = runner._typed(spec["torch"].get("init", []))
    if spec["torch"]["kind"] == "kernelbench":
        torch.manual_seed(SEED)
        model = ns[cls_name](*init)  # training mode, as KernelBench
        return model.to(device) if hasattr(model, "to") else model
    fn = ns["ref_kernel" if cls_name == "Model" else "custom_kernel"]
    return lambda *a: fn(a[0] if len(a) == 1 else tuple(a))


def as_list(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


def compare(spec, got, want):
    """None when every output is within the spec's tolerance, else why."""
    got, want = as_list(got), as_list(want)
    if len(got) != len(want):
        return "%d outputs, the reference %d" % (len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        name = spec["outputs"][i]["name"] if i < len(spec["outputs"]) else i
        if not torch.is_tensor(g) or g.shape != w.shape or g.dtype != w.dtype:
            return "output %s: %s, the reference %s %s" % (
                name, (tuple(g.shape), g.dtype) if torch.is_tensor(g) else
                type(g).__name__, tuple(w.shape), w.dtype)
        tol = spec["tolerance"][spec["outputs"][i]["dtype"]]
        g64, w64 = g.double().cpu(), w.double().cpu()
        bad = ~((g64 - w64).abs() <= tol["atol"] + tol["rtol"] * w64.abs())
        if not spec.get("allow_nan"):
            bad |= ~torch.isfinite(g64)
        if bool(bad.any()):
            k = int(bad.flatten().nonzero()[0])
            return "output %s: %d of %d outside rtol %g atol %g (first at " \
                   "flat %d: got %r, want %r)" % (
                       name, int(bad.sum()), bad.numel(), tol["rtol"],
                       tol["atol"], k, float(g64.flatten()[k]),
                       float(w64.flatten()[k]))
    return None


def variants(template):
    knobs = template.get("knobs", [])
    n = max([len(k["values"]) for k in knobs] + [1])
    seen, out = set(), []
    for v in range(n):
        kv = {k["name"]: k["values"][v % len(k["values"])] for k in knobs}
        key = tuple(sorted(kv.items()))
        if key not in seen:
            seen.add(key)
            out.append(kv)
    return out


def timed(ref, cand, args, reps):
    """Medians (us) of ref and cand, alternated, L2 flushed before each."""
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    t = {"ref": [], "cand": []}
    for _ in range(3):
        ref(*args)
        cand(*args)
    for _ in range(reps):
        for side, fn in (("ref", ref), ("cand", cand)):
            flush.fill_(1)      # 4x an H200's L2, then read back, so
            flush.sum()         # L2 holds no dirty lines to write back
            a, b = torch.cuda.Event(True), torch.cuda.Event(True)
            a.record()
            fn(*args)
            b.record()
            b.synchronize()
            t[side].append(a.elapsed_time(b) * 1e3)
    med = {k: sorted(v)[len(v) // 2] for k, v in t.items()}
    return med["ref"], med["cand"]


def check_problem(root, name, device, bench, reps):
    spec = torch_gpu_copies.copy(ROOT, root, name, device)
    d = os.path.join(root, name)
    ref = load(os.path.join(d, spec["reference"]), {}, "Model", spec, device)
    failed = 0
    sizes = [(s, dist) for s in spec["sizes"]["check"]
             for dist in spec["inputs"][0]["dists"]]
    benches = spec["sizes"]["bench"]  # a size, or a list of them
    benches = benches if isinstance(benches, list) else [benches]
    sizes += [(b, dist) for b in benches
              for dist in spec["inputs"][0]["dists"]]
    for t in spec["templates"]:
        offered = t.get("devices")
        if offered and device not in offered:
            continue
        for kv in variants(t):
            label = "%s %s %s" % (name, t["name"], " ".join(
                "%s=%s" % x for x in kv.items()) or "-")
            why = None
            try:
                cand = load(os.path.join(d, t["file"]), kv, "ModelNew", spec,
                            device)
                with torch.no_grad():
                    for k, (size, dist) in enumerate(sizes):
                        args = inputs(spec, size, dist, device, SEED + k)
                        # the reference first, the candidate on copies:
                        # one that writes its inputs cannot change the
                        # answer it is compared with (the harness's
                        # inputs are read-only)
                        want = ref(*args)
                        got = cand(*[a.clone() for a in args])
                        why = compare(spec, got, want)
                        if why:
                            why = "%s at %s, %s" % (why, json.dumps(size),
                                                    dist)
                            break
            except Exception as e:  # a template that raises fails
                why = "raised %s: %s" % (type(e).__name__,
                                         str(e).splitlines()[0][:300]
                                         if str(e) else "")
            if why:
                failed += 1
                print("FAIL %s: %s" % (label, why), flush=True)
                continue
            line = "ok   %s" % label
            if bench and device == "cuda":
                args = inputs(spec, benches[0],
                              spec["inputs"][0]["dists"][0], device, SEED)
                with torch.no_grad():
                    r, c = timed(ref, cand, args, reps)
                line += "  ref %.2f us  cand %.2f us  %.3fx" % (r, c, r / c)
            print(line, flush=True)
    return failed


def main(argv):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("problems", nargs="+", metavar="PROBLEM",
                    help="names under problems/torch")
    ap.add_argument("--no-bench", action="store_true",
                    help="check only, no timing")
    ap.add_argument("--reps", type=int, default=20,
                    help="timed calls per side (default 20)")
    a = ap.parse_args(argv[1:])
    if a.reps < 1:
        ap.error("--reps must be at least 1")
    device = os.environ.get("KF_TORCH_DEVICE", "cuda")
    if device not in ("cuda", "cpu"):
        ap.error("KF_TORCH_DEVICE=%r: cuda or cpu" % device)
    if device == "cuda" and not torch.cuda.is_available():
        print("torch_problem_gpucheck: no CUDA device (KF_TORCH_DEVICE=cpu "
              "checks the CPU templates)", file=sys.stderr)
        return 2
    failed = 0
    with tempfile.TemporaryDirectory(prefix="kf-tcheck-") as root:
        for p in a.problems:
            try:
                failed += check_problem(root, p, device, not a.no_bench,
                                        a.reps)
            except (ValueError, OSError, KeyError) as e:
                print("torch_problem_gpucheck: %s: %s" % (p, e),
                      file=sys.stderr)
                return 2
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
