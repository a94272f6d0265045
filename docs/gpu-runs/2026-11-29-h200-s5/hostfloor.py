# SPDX-License-Identifier: Apache-2.0
"""hostfloor.py -- where does a load_inline kernel's ~117 us come from?

The twins bench of 2026-11-29 (H200) timed four wrapped kernels (kf wrap,
load_inline) at 117-121 us by the torch backend, each "host dispatch
outlasted its GPU work in 12 of 12 timed calls", while the CUDA harness
timed the same kernels at 69-71 us.  This separates, outside any sandbox,
in one process, by one clock:

  gpu      the kernel's GPU time (CUDA events, hot, back to back);
  hot      the call's host time (perf_counter_ns around it) when the host
           has just made the same call;
  cold     the same after 50 ms asleep and 256 MiB of host memory
           touched (the runner is stopped and draws inputs on the host
           between calls);
for: the exported entry point (ModelNew.forward), the binding alone
(_KF_MOD.forward, no Python wrapper), eager F.rms_norm, and, for each, with
every output kept (as the runner keeps a repetition's outputs until it
fetches them) or dropped.

Run on the GPU machine with torch's Python:
  /opt/torch/.venv/bin/python hostfloor.py
  KB_MODULE=kb_rmsnorm_lean /opt/torch/.venv/bin/python hostfloor.py
(kb_rmsnorm.py: the file kf wrap wrote for the bench; kb_rmsnorm_lean.py:
the same kernel wrapped after the binding took over the stream lookup.)
"""
import os
import statistics
import sys
import time

os.environ.setdefault("TORCH_EXTENSIONS_DIR", "/tmp/kf-ext")
os.environ["PATH"] = os.path.dirname(sys.executable) + ":" + os.environ["PATH"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

t0 = time.time()
kb = __import__(os.environ.get("KB_MODULE", "kb_rmsnorm"))  # builds it
print("built in %.0f s" % (time.time() - t0), flush=True)

M = N = 8192
x = torch.randn(M, N, device="cuda").to(torch.bfloat16)
w = torch.randn(N, device="cuda").to(torch.bfloat16)
junk = bytearray(256 << 20)
model = kb.ModelNew()
s = torch.cuda.current_stream().cuda_stream


def binding(x, w):
    if hasattr(kb, "_NO_SIZES"):  # kf wrap after 2026-11-29 21:20: no stream
        return kb._KF_MOD.forward((x, w), kb._NO_SIZES)[0]
    return kb._KF_MOD.forward([x, w], [-1, -1], s)[0]


def eager(x, w):
    return F.rms_norm(x, (N,), w, eps=1e-6)


def gpu_us(fn, n=50):
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    out = []
    for _ in range(n):
        fn(x, w)
        torch.cuda.synchronize()
        ev[0].record()
        fn(x, w)
        ev[1].record()
        ev[1].synchronize()
        out.append(ev[0].elapsed_time(ev[1]) * 1e3)
    return statistics.median(out)


def host_us(fn, cold, keep, n=40):
    kept, out = [], []
    for i in range(n):
        if i % 12 == 0:
            kept = []  # a repetition's outputs fetched and dropped
        torch.cuda.synchronize()
        if cold:
            time.sleep(0.05)
            for j in range(0, len(junk), 4096):
                junk[j] = i & 0xFF
        else:
            fn(x, w)
            torch.cuda.synchronize()
        torch.cuda._sleep(2000000)  # the GPU busy, as the runner's spin
        h0 = time.perf_counter_ns()
        y = fn(x, w)
        h1 = time.perf_counter_ns()
        if keep:
            kept.append(y)
        del y
        out.append((h1 - h0) / 1e3)
    torch.cuda.synchronize()
    return statistics.median(out), min(out)


for name, fn in (("ModelNew.forward", model.forward), ("binding only", binding),
                 ("eager F.rms_norm", eager)):
    fn(x, w)
    torch.cuda.synchronize()
    print("%-17s gpu %7.1f us" % (name, gpu_us(fn)), flush=True)
    for cold in (False, True):
        for keep in (False, True):
            med, lo = host_us(fn, cold, keep)
            print("%-17s host %-4s outputs %-7s median %7.1f us  min %7.1f us"
                  % (name, "cold" if cold else "hot",
                     "kept" if keep else "dropped", med, lo), flush=True)
