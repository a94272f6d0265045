#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/torch_baselines.py -- PyTorch eager and torch.compile times for
the CUDA problems, the baselines KernelFleet's kernels are compared with.

For each problem in problems/cuda (same bench shape and dtypes as its
spec.json) it times the PyTorch expression a user would write:

  softmax        torch.softmax(x, dim=-1)                         bf16
  rmsnorm        F.rms_norm(x, (N,), w, eps=1e-6)                 bf16
  layernorm      F.layer_norm(x, (N,), w, b, eps=1e-5)            bf16
  cross_entropy  F.cross_entropy(logits, targets)  (mean)         bf16, i64
  vecsum         x.sum()                                          f32
  gelu_tanh      F.gelu(x, approximate="tanh")                    bf16
  residual_rmsnorm  h = x + r; (h, F.rms_norm(h, (N,), w, eps=1e-6)) bf16
  causal_softmax torch.softmax((x / 8).masked_fill(mask, -inf), -1) bf16
                 (mask: the upper triangle, built once outside the timing)

once eagerly and once through torch.compile (default mode: no CUDA graphs).
Each repetition draws fresh inputs in place, flushes L2 by writing a
buffer of twice its size and reading it back (L2 left clean, so no
write-back of the flush is timed), then times the call alone between two CUDA events
and synchronizes; the median over --reps repetitions after --warmup calls
(compilation happens in the warm-up) is reported.  bytes is the spec's
minimum-traffic formula at the bench size, so GB/s are comparable with the
harness's.  One JSON line per problem on stdout:

  {"problem", "eager_ms", "compile_ms", "bytes", "eager_gbps", "compile_gbps"}

(compile_ms and compile_gbps are null when torch.compile fails; the error
goes to stderr).  --copy instead measures a device-to-device copy of 4 GiB
(bytes = read + written) and prints {"problem": "copy", "ms", "bytes",
"gbps"}.

--kernel P=FILE.cu (repeatable, several per problem too) also times a KernelFleet kernel for problem
P (a best kernel written by `kf run --out`, knobs as #defines) by the SAME
loop -- same refill, same L2 flush, same CUDA events on torch's current
stream -- so "kernel vs torch.compile" is one timer in one run, not the
harness's timer against this script's.  The kernel is built with nvcc
(-O3, sm_XY of the device, -cudart shared) and called through ctypes with
the kf_args ABI of harness/core/kf_candidate.h; its line gains kernel_ms,
kernel_gbps and kernel_file (of the first --kernel for P; with several,
"kernels" lists each).  It is NOT verified here (the harness did
that); this only times it.

Usage: scripts/torch_baselines.py [--problems softmax,vecsum] [--reps 50]
                                  [--warmup 5] [--copy] [--copy-gib 4]
                                  [--kernel P=FILE.cu]...
Needs a CUDA GPU, PyTorch >= 2.4 (F.rms_norm) and, for torch.compile,
Triton.
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBLEMS = os.path.join(ROOT, "problems", "cuda")


def ev(expr, size):
    return int(eval(expr.replace("/", "//"), {"__builtins__": {}}, dict(size)))


def load_spec(name):
    with open(os.path.join(PROBLEMS, name, "spec.json")) as f:
        return json.load(f)


# Each entry: (make inputs at a size -> list of tensors, refill them in
# place, the function of those tensors).
def _refill_float(ts):
    for t in ts:
        if t.dtype.is_floating_point:
            t.normal_()


def case_softmax(sz):
    x = torch.empty(sz["M"], sz["N"], device="cuda", dtype=torch.bfloat16)
    return [x], lambda x: torch.softmax(x, dim=-1)


def case_rmsnorm(sz):
    x = torch.empty(sz["M"], sz["N"], device="cuda", dtype=torch.bfloat16)
    w = torch.empty(sz["N"], device="cuda", dtype=torch.bfloat16)
    n = sz["N"]
    return [x, w], lambda x, w: F.rms_norm(x, (n,), w, eps=1e-6)


def case_layernorm(sz):
    x = torch.empty(sz["M"], sz["N"], device="cuda", dtype=torch.bfloat16)
    w = torch.empty(sz["N"], device="cuda", dtype=torch.bfloat16)
    b = torch.empty(sz["N"], device="cuda", dtype=torch.bfloat16)
    n = sz["N"]
    return [x, w, b], lambda x, w, b: F.layer_norm(x, (n,), w, b, eps=1e-5)


def case_cross_entropy(sz):
    x = torch.empty(sz["M"], sz["V"], device="cuda", dtype=torch.bfloat16)
    t = torch.zeros(sz["M"], device="cuda", dtype=torch.int64)
    return [x, t], lambda x, t: F.cross_entropy(x, t)


def case_vecsum(sz):
    x = torch.empty(sz["N"], device="cuda", dtype=torch.float32)
    return [x], lambda x: x.sum()


def case_gelu_tanh(sz):
    x = torch.empty(sz["M"], sz["N"], device="cuda", dtype=torch.bfloat16)
    return [x], lambda x: F.gelu(x, approximate="tanh")


def case_residual_rmsnorm(sz):
    x = torch.empty(sz["M"], sz["N"], device="cuda", dtype=torch.bfloat16)
    r = torch.empty(sz["M"], sz["N"], device="cuda", dtype=torch.bfloat16)
    w = torch.empty(sz["N"], device="cuda", dtype=torch.bfloat16)
    n = sz["N"]

    def fn(x, r, w):
        h = x + r
        return h, F.rms_norm(h, (n,), w, eps=1e-6)
    return [x, r, w], fn


def case_causal_softmax(sz):
    s = sz["S"]
    x = torch.empty(sz["H"], s, s, device="cuda", dtype=torch.bfloat16)
    mask = torch.ones(s, s, device="cuda", dtype=torch.bool).triu(1)
    return [x], lambda x: torch.softmax((x * 0.125).masked_fill(mask, float("-inf")), dim=-1)


CASES = {
    "softmax": case_softmax,
    "rmsnorm": case_rmsnorm,
    "layernorm": case_layernorm,
    "cross_entropy": case_cross_entropy,
    "vecsum": case_vecsum,
    "gelu_tanh": case_gelu_tanh,
    "residual_rmsnorm": case_residual_rmsnorm,
    "causal_softmax": case_causal_softmax,
}


# ---- a KernelFleet kernel through the kf_args ABI (harness/core/kf_candidate.h)
class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dims", ctypes.c_int64 * 4),
                ("numel", ctypes.c_int64)]


class _Args(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_int32), ("n_inputs", ctypes.c_int32),
                ("n_outputs", ctypes.c_int32), ("n_params", ctypes.c_int32),
                ("inputs", ctypes.POINTER(_Tensor)), ("outputs", ctypes.POINTER(_Tensor)),
                ("params", ctypes.POINTER(ctypes.c_int64)), ("workspace", ctypes.c_void_p),
                ("workspace_bytes", ctypes.c_size_t), ("stream", ctypes.c_void_p)]


_DT = {"f32": (0, torch.float32), "f64": (1, torch.float64), "bf16": (2, torch.bfloat16),
       "f16": (3, torch.float16), "i32": (4, torch.int32), "i64": (5, torch.int64)}


def _abi_version():
    with open(os.path.join(ROOT, "harness", "core", "kf_candidate.h")) as f:
        for line in f:
            if line.startswith("#define KF_ABI_VERSION"):
                return int(line.split()[2])
    raise RuntimeError("KF_ABI_VERSION not found in harness/core/kf_candidate.h")


def kernel_fn(spec, sz, src, ins, workdir):
    """Builds SRC and returns fn(*ins) that calls its kf_launch on torch's
    current stream, writing outputs allocated here once."""
    cap = torch.cuda.get_device_capability()
    arch = "sm_%d%d%s" % (cap[0], cap[1], "a" if cap[0] >= 9 else "")
    so = os.path.join(workdir, os.path.basename(src) + ".so")
    nvcc = os.environ.get("NVCC", "nvcc")
    cmd = [nvcc, "-O3", "-gencode=arch=compute_%s,code=%s" % (arch[3:], arch),
           "-cudart", "shared", "-Xcompiler", "-fPIC", "-shared",
           "-I" + os.path.join(ROOT, "harness", "core"), src, "-o", so]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("nvcc failed: " + r.stderr.strip()[-500:])
    lib = ctypes.CDLL(so)
    lib.kf_launch.restype = ctypes.c_int
    lib.kf_launch.argtypes = [ctypes.POINTER(_Args)]
    outs = []
    for t in spec["outputs"]:
        shape = [ev(e, sz) for e in t["shape"]]
        outs.append(torch.empty(shape, device="cuda", dtype=_DT[t["dtype"]][1]))
    params = (ctypes.c_int64 * len(spec["params"]))(*[sz[p] for p in spec["params"]])

    def desc(ts, specs):
        arr = (_Tensor * max(1, len(ts)))()
        for i, (t, sp) in enumerate(zip(ts, specs)):
            arr[i].data = t.data_ptr()
            arr[i].dtype = _DT[sp["dtype"]][0]
            arr[i].ndim = t.dim()
            for d in range(t.dim()):
                arr[i].dims[d] = t.shape[d]
            arr[i].numel = t.numel()
        return arr
    if spec.get("workspace_bytes") not in (None, 0, "0"):
        wsb = ev(str(spec["workspace_bytes"]), sz)
    else:
        wsb = 0
    ws = torch.empty(max(1, wsb), device="cuda", dtype=torch.uint8)
    a = _Args()
    a.abi_version = _abi_version()
    a.n_inputs, a.n_outputs, a.n_params = len(ins), len(outs), len(spec["params"])
    keep = [desc(ins, spec["inputs"]), desc(outs, spec["outputs"])]
    a.inputs, a.outputs = keep[0], keep[1]
    a.params = params
    a.workspace, a.workspace_bytes = ws.data_ptr(), wsb

    def fn(*_ts):
        a.stream = torch.cuda.current_stream().cuda_stream
        if lib.kf_launch(ctypes.byref(a)) != 0:
            raise RuntimeError("kf_launch returned non-zero")
        return outs
    fn.keep = (keep, params, ws, outs, lib)  # alive as long as fn
    return fn



def refill(name, ts, sz):
    _refill_float(ts)
    if name == "cross_entropy":
        ts[1].random_(0, sz["V"])


def l2_flush_buffer():
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2 = getattr(props, "L2_cache_size", 0) or 50 * 1024 * 1024
    return torch.empty(2 * l2, device="cuda", dtype=torch.uint8)


def time_fn(fn, ts, name, sz, reps, warmup, flush):
    for _ in range(warmup):
        refill(name, ts, sz)
        fn(*ts)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        refill(name, ts, sz)
        flush.fill_(1)
        flush.max()  # leaves L2 clean: no write-back of the fill is timed
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn(*ts)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def copy_mode(args, flush):
    n = int(args.copy_gib * (1 << 30))
    src = torch.empty(n, device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)
    src.fill_(7)
    for _ in range(args.warmup):
        dst.copy_(src)
    torch.cuda.synchronize()
    times = []
    for _ in range(args.reps):
        flush.fill_(1)
        flush.max()  # leaves L2 clean: no write-back of the fill is timed
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        dst.copy_(src)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    ms = statistics.median(times)
    print(json.dumps({"problem": "copy", "ms": round(ms, 4), "bytes": 2 * n,
                      "gbps": round(2 * n / (ms * 1e-3) / 1e9, 1)}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", default="", help="comma-separated; default all")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--copy", action="store_true", help="measure D2D copy bandwidth only")
    ap.add_argument("--copy-gib", type=float, default=4.0)
    ap.add_argument("--kernel", action="append", default=[], metavar="P=FILE.cu",
                    help="also time this KernelFleet kernel for problem P by the same loop")
    args = ap.parse_args()
    kernels = {}
    for k in args.kernel:
        p, sep, f = k.partition("=")
        if not sep or not p or not os.path.isfile(f):
            print("torch_baselines: --kernel %r: expected PROBLEM=FILE.cu of an existing file"
                  % k, file=sys.stderr)
            return 2
        kernels.setdefault(p, []).append(os.path.abspath(f))
    if not torch.cuda.is_available():
        print("torch_baselines: no CUDA device", file=sys.stderr)
        return 2
    print("# %s, torch %s, CUDA %s" % (torch.cuda.get_device_name(), torch.__version__,
                                       torch.version.cuda), file=sys.stderr)
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    flush = l2_flush_buffer()
    if args.copy:
        copy_mode(args, flush)
        return 0
    names = [p for p in args.problems.split(",") if p] or list(CASES)
    rc = 0
    for name in names:
        if name not in CASES:
            print("torch_baselines: unknown problem %r" % name, file=sys.stderr)
            rc = 2
            continue
        spec = load_spec(name)
        sz = spec["sizes"]["bench"]
        nbytes = ev(spec["bytes"], sz)
        ts, fn = CASES[name](sz)
        refill(name, ts, sz)
        eager = time_fn(fn, ts, name, sz, args.reps, args.warmup, flush)
        try:
            torch._dynamo.reset()
            cfn = torch.compile(fn)
            comp = time_fn(cfn, ts, name, sz, args.reps, args.warmup, flush)
        except Exception as e:  # noqa: BLE001 -- report and go on
            print("torch_baselines: %s: torch.compile failed: %s" % (name, e), file=sys.stderr)
            comp = None
        gb = lambda ms: None if ms is None else round(nbytes / (ms * 1e-3) / 1e9, 1)
        line = {"problem": name,
                "eager_ms": round(eager, 4),
                "compile_ms": None if comp is None else round(comp, 4),
                "bytes": nbytes,
                "eager_gbps": gb(eager),
                "compile_gbps": gb(comp)}
        timed = []
        for kf in kernels.get(name, []):
            try:
                with tempfile.TemporaryDirectory() as wd:
                    kfn = kernel_fn(spec, sz, kf, ts, wd)
                    kms = time_fn(kfn, ts, name, sz, args.reps, args.warmup, flush)
                timed.append(dict(kernel_ms=round(kms, 4), kernel_gbps=gb(kms),
                                  kernel_file=os.path.basename(kf)))
            except Exception as e:  # noqa: BLE001 -- report and go on
                print("torch_baselines: %s: kernel %s: %s" % (name, kf, e),
                      file=sys.stderr)
                timed.append(dict(kernel_ms=None, kernel_error=str(e)[:300],
                                  kernel_file=os.path.basename(kf)))
        if timed:
            line.update(timed[0])  # the first --kernel: kernel_ms, as before
        if len(timed) > 1:
            line["kernels"] = timed
        print(json.dumps(line), flush=True)
        del ts
        torch.cuda.empty_cache()
    return rc


if __name__ == "__main__":
    sys.exit(main())
