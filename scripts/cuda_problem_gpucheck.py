#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/cuda_problem_gpucheck.py -- check and time problems/cuda/* on a GPU.

A developer's tool for a machine with a GPU, nvcc and PyTorch (the lent
H100): it is not the harness and trusts the kernels it runs.  For each
problem it compiles the reference and every template (file defaults, plus
each knob value once with the other knobs at their defaults), then

  check   every check size x every input distribution for the default
          build, one distribution per size for each knob variant; outputs
          poisoned with NaN first; |got - want| <= atol + rtol*|want|
          against the reference's output; one unaligned run (every pointer
          moved by one element) and one determinism run (two calls, same
          bits); with --bench-check also the bench size x every
          distribution for the default builds (the harness checks timed
          outputs too)
  bench   the bench size: median of --reps calls timed with CUDA events, L2
          flushed (a 2 x L2 write, then a read of it, so L2 holds no dirty
          lines) and inputs redrawn between calls; GB/s
          from the spec's bytes formula

Prints one line per (template, knobs) and a summary table; exits 1 if any
check failed.  Usage:
  scripts/cuda_problem_gpucheck.py [--problems a,b] [--no-variants]
                                   [--no-bench] [--reps N] [--jobs N]
                                   [--grid TEMPLATE,...]  (every knob
                                   combination of those templates)
"""
import argparse
import concurrent.futures as cf
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBLEMS = os.path.join(ROOT, "problems", "cuda")
NVCC = os.environ.get("NVCC", "nvcc")
ARCH = os.environ.get("KF_CUDA_ARCH", "-gencode=arch=compute_90a,code=sm_90a")

DT = {"f32": (0, torch.float32), "f64": (1, torch.float64),
      "bf16": (2, torch.bfloat16), "f16": (3, torch.float16),
      "i32": (4, torch.int32), "i64": (5, torch.int64)}


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dims", ctypes.c_int64 * 4),
                ("numel", ctypes.c_int64)]


class Args(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_int32), ("n_inputs", ctypes.c_int32),
                ("n_outputs", ctypes.c_int32), ("n_params", ctypes.c_int32),
                ("inputs", ctypes.POINTER(Tensor)),
                ("outputs", ctypes.POINTER(Tensor)),
                ("params", ctypes.POINTER(ctypes.c_int64)),
                ("workspace", ctypes.c_void_p),
                ("workspace_bytes", ctypes.c_size_t),
                ("stream", ctypes.c_void_p)]


def ev(expr, size):
    return int(eval(expr.replace("/", "//"), {"__builtins__": {}}, dict(size)))


def compile_one(src, defs, out):
    cmd = [NVCC, "-O3", ARCH, "-cudart", "shared", "-Xcompiler", "-fPIC",
           "-shared", "-I" + os.path.join(ROOT, "harness", "core")]
    cmd += ["-D%s=%s" % kv for kv in defs] + [src, "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stderr


def draw(dist, shape, dtype, rng_range, gen):
    n = 1
    for d in shape:
        n *= d
    dev = "cuda"
    if dist == "index":
        return torch.randint(0, rng_range, shape, device=dev, dtype=dtype, generator=gen)
    f = torch.float32
    if dist == "normal":
        t = torch.randn(n, device=dev, dtype=f, generator=gen)
    elif dist == "uniform":
        t = torch.rand(n, device=dev, dtype=f, generator=gen) * 2 - 1
    elif dist == "unit":
        t = torch.rand(n, device=dev, dtype=f, generator=gen)
    elif dist == "wide":
        t = torch.rand(n, device=dev, dtype=f, generator=gen) * 200 - 100
    elif dist == "offset":
        t = torch.randn(n, device=dev, dtype=f, generator=gen) + 1000
    elif dist == "tiny":
        t = torch.randn(n, device=dev, dtype=f, generator=gen) * 1e-3
    elif dist == "mixed":
        parts = [torch.randn(n, device=dev, generator=gen),
                 torch.rand(n, device=dev, generator=gen) * 2 - 1,
                 torch.rand(n, device=dev, generator=gen) * 200 - 100,
                 torch.randn(n, device=dev, generator=gen) + 1000,
                 torch.randn(n, device=dev, generator=gen) * 1e-3,
                 torch.zeros(n, device=dev), torch.ones(n, device=dev),
                 -torch.ones(n, device=dev)]
        pick = torch.randint(0, len(parts), (n,), device=dev, generator=gen)
        t = torch.stack(parts).gather(0, pick.unsqueeze(0)).squeeze(0)
    else:
        raise ValueError(dist)
    return t.to(dtype).reshape(shape)


class Problem:
    def __init__(self, name):
        self.dir = os.path.join(PROBLEMS, name)
        with open(os.path.join(self.dir, "spec.json")) as f:
            self.spec = json.load(f)
        self.name = name

    def shape(self, t, size):
        return [ev(e, size) for e in t["shape"]]

    def alloc(self, size, dists, gen, shift=0):
        """Inputs (drawn), outputs (NaN/0xFF-poisoned), workspace; with shift,
        every tensor starts one element past a 256-byte boundary."""
        def place(shape, dtype):
            n = 1
            for d in shape:
                n *= d
            base = torch.empty(n + shift, device="cuda", dtype=dtype)
            return base, base[shift:].view(shape) if shape else base[shift:]
        ins, outs, keep = [], [], []
        for t, dist in zip(self.spec["inputs"], dists):
            shape = self.shape(t, size)
            dt = DT[t["dtype"]][1]
            base, view = place(shape, dt)
            rng = ev(t["range"], size) if "range" in t else 0
            view.copy_(draw(dist, shape, dt, rng, gen))
            ins.append(view)
            keep.append(base)
        for t in self.spec["outputs"]:
            shape = self.shape(t, size)
            dt = DT[t["dtype"]][1]
            base, view = place(shape, dt)
            if dt.is_floating_point:
                view.fill_(float("nan"))
            else:
                view.fill_(-1)
            outs.append(view)
            keep.append(base)
        wsb = int(self.spec.get("workspace_bytes", 0))
        ws = torch.randint(0, 255, (max(wsb, 1),), device="cuda",
                           dtype=torch.uint8, generator=gen)
        return ins, outs, ws, keep

    def call(self, lib, size, ins, outs, ws):
        def tens(ts, specs):
            arr = (Tensor * max(len(ts), 1))()
            for i, (t, s) in enumerate(zip(ts, specs)):
                arr[i].data = t.data_ptr()
                arr[i].dtype = DT[s["dtype"]][0]
                arr[i].ndim = t.dim()
                for d in range(t.dim()):
                    arr[i].dims[d] = t.shape[d]
                arr[i].numel = t.numel()
            return arr
        ti = tens(ins, self.spec["inputs"])
        to = tens(outs, self.spec["outputs"])
        params = (ctypes.c_int64 * 8)(*[size[p] for p in self.spec["params"]])
        a = Args(1, len(ins), len(outs), len(self.spec["params"]), ti, to,
                 params, ws.data_ptr(),
                 int(self.spec.get("workspace_bytes", 0)),
                 torch.cuda.current_stream().cuda_stream)
        return lib.kf_launch(ctypes.byref(a))


def compare(spec, outs, refs):
    worst = 0.0
    for t, got, want in zip(spec["outputs"], outs, refs):
        tol = spec["tolerance"][t["dtype"]]
        g = got.double().flatten()
        w = want.double().flatten()
        if not torch.isfinite(g).all() or not torch.isfinite(w).all():
            return False, float("inf")
        err = (g - w).abs()
        lim = tol["atol"] + tol["rtol"] * w.abs()
        ratio = (err / lim).max().item() if err.numel() else 0.0
        worst = max(worst, ratio)
    return worst <= 1.0, worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", default="")
    ap.add_argument("--no-variants", action="store_true")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--json", default="")
    ap.add_argument("--grid", default="",
                    help="comma-separated template names: every knob combination"
                         " of these (instead of one knob value at a time)")
    ap.add_argument("--bench-check", action="store_true",
                    help="also check the default builds at the bench size, every distribution")
    args = ap.parse_args()

    names = [p for p in args.problems.split(",") if p] or sorted(
        d for d in os.listdir(PROBLEMS)
        if os.path.exists(os.path.join(PROBLEMS, d, "spec.json")))
    grid = set(g for g in args.grid.split(",") if g)
    tmp = tempfile.mkdtemp(prefix="kfgpu")
    probs = [Problem(n) for n in names]

    # build list: (problem, template, defs)
    builds = []
    for p in probs:
        builds.append((p, "reference", p.spec["reference"], ()))
        for t in p.spec["templates"]:
            builds.append((p, t["name"], t["file"], ()))
            if args.no_variants:
                continue
            if t["name"] in grid:
                combos = [()]
                for k in t.get("knobs", []):
                    combos = [c + ((k["name"], str(v)),) for c in combos for v in k["values"]]
                for c in combos:
                    builds.append((p, t["name"], t["file"], c))
                continue
            for k in t.get("knobs", []):
                for v in k["values"]:
                    builds.append((p, t["name"], t["file"], ((k["name"], str(v)),)))
    libs = {}
    failures = []
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        futs = {}
        for i, (p, tn, f, defs) in enumerate(builds):
            out = os.path.join(tmp, "b%d.so" % i)
            futs[pool.submit(compile_one, os.path.join(p.dir, f), defs, out)] = (p, tn, defs, out)
        for fu in cf.as_completed(futs):
            p, tn, defs, out = futs[fu]
            rc, err = fu.result()
            if rc:
                failures.append("%s/%s %s: compile failed\n%s" % (p.name, tn, defs, err))
            else:
                libs[(p.name, tn, defs)] = out

    flush = torch.empty(2 * 50 * 1024 * 1024 // 4 * 2, device="cuda", dtype=torch.float32)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(int.from_bytes(os.urandom(4), "little"))
    rows = []
    for p in probs:
        spec = p.spec
        if (p.name, "reference", ()) not in libs:
            continue
        ref = ctypes.CDLL(libs[(p.name, "reference", ())])
        configs = [(b[1], b[3]) for b in builds if b[0] is p]  # reference too: its time
        for tn, defs in configs:
            key = (p.name, tn, defs)
            if key not in libs:
                continue
            lib = ctypes.CDLL(libs[key])
            label = "%s/%s%s" % (p.name, tn, "".join(" %s=%s" % kv for kv in defs) or " (defaults)")
            ok, worst, nrun, notes = True, 0.0, 0, []
            nd = max(len(t.get("dists", ["normal"])) for t in spec["inputs"])
            if not args.no_check:
                for si, size in enumerate(spec["sizes"]["check"]):
                    dist_ids = range(nd) if not defs else [si % nd]
                    for di in dist_ids:
                        dists = [t["dists"][di % len(t["dists"])] for t in spec["inputs"]]
                        for shift in ([0, 1] if (si == len(spec["sizes"]["check"]) // 2 and di == 0) else [0]):
                            ins, outs, ws, keep = p.alloc(size, dists, gen, shift)
                            rins, routs, rws, rkeep = p.alloc(size, dists, gen, shift)
                            for a, b in zip(rins, ins):
                                a.copy_(b)
                            rc1 = p.call(ref, size, rins, routs, rws)
                            rc2 = p.call(lib, size, ins, outs, ws)
                            torch.cuda.synchronize()
                            nrun += 1
                            if rc1 or rc2:
                                ok = False
                                notes.append("rc ref=%d cand=%d at %s %s" % (rc1, rc2, size, dists))
                                continue
                            good, w = compare(spec, outs, routs)
                            worst = max(worst, w)
                            if not good:
                                ok = False
                                if len(notes) < 4:
                                    notes.append("mismatch x%.3g at %s %s shift=%d" % (w, size, dists, shift))
                # the harness also checks every timed output at the bench size
                if args.bench_check and not defs:
                    size = spec["sizes"]["bench"]
                    size = size[0] if isinstance(size, list) else size
                    for di in range(nd):
                        dists = [t["dists"][di % len(t["dists"])] for t in spec["inputs"]]
                        ins, outs, ws, keep = p.alloc(size, dists, gen)
                        rins, routs, rws, rkeep = p.alloc(size, dists, gen)
                        for a_, b_ in zip(rins, ins):
                            a_.copy_(b_)
                        rc1 = p.call(ref, size, rins, routs, rws)
                        rc2 = p.call(lib, size, ins, outs, ws)
                        torch.cuda.synchronize()
                        nrun += 1
                        good, w = compare(spec, outs, routs) if not (rc1 or rc2) else (False, float("inf"))
                        notes.append("bench %s x%.3f" % (dists[0], w))
                        worst = max(worst, w)
                        if not good:
                            ok = False
                        del ins, outs, ws, keep, rins, routs, rws, rkeep
                    torch.cuda.empty_cache()
                # determinism at a mid size
                size = spec["sizes"]["check"][-1]
                dists = [t["dists"][0] for t in spec["inputs"]]
                ins, outs, ws, keep = p.alloc(size, dists, gen)
                p.call(lib, size, ins, outs, ws)
                first = [o.clone() for o in outs]
                p.call(lib, size, ins, outs, ws)
                torch.cuda.synchronize()
                if spec.get("deterministic", True):
                    for a, b in zip(first, outs):
                        if not torch.equal(a.view(torch.uint8) if a.dtype != torch.bool else a,
                                           b.view(torch.uint8) if b.dtype != torch.bool else b):
                            ok = False
                            notes.append("nondeterministic")
            ms = gbps = None
            if not args.no_bench:
                size = spec["sizes"]["bench"]
                size = size[0] if isinstance(size, list) else size
                dists = [t["dists"][0] for t in spec["inputs"]]
                ins, outs, ws, keep = p.alloc(size, dists, gen)
                for _ in range(3):
                    p.call(lib, size, ins, outs, ws)
                times = []
                for _ in range(args.reps):
                    for i, (t, x) in enumerate(zip(spec["inputs"], ins)):
                        if x.dtype.is_floating_point:
                            x.normal_(generator=gen)
                    flush.fill_(1.0)
                    flush.max()  # L2 left clean: no write-back of the fill is timed
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    rc = p.call(lib, size, ins, outs, ws)
                    e.record()
                    torch.cuda.synchronize()
                    if rc:
                        ok = False
                        notes.append("bench rc=%d" % rc)
                        break
                    times.append(s.elapsed_time(e))
                if times:
                    times.sort()
                    ms = times[len(times) // 2]
                    gbps = ev(spec["bytes"], size) / (ms * 1e-3) / 1e9
            line = "%-5s %-58s runs=%-4d worst=%6.3f  %s %s" % (
                "ok" if ok else "FAIL", label, nrun, worst,
                "%.4f ms %7.1f GB/s" % (ms, gbps) if ms else "", "; ".join(notes))
            print(line, flush=True)
            rows.append({"problem": p.name, "template": tn, "knobs": dict(defs),
                         "ok": ok, "worst": worst, "ms": ms, "gbps": gbps, "notes": notes})
            if not ok:
                failures.append(label)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
