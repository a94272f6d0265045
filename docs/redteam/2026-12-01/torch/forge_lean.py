# Red team of 2026-12-01 (torch on the GPU): forge_charge.py made lean.
# Besides claiming a quarter of its time (SCALE_PCT), it replaces the
# runner's _timed_gpu with one that skips the harness's own work inside
# the eval's clock of the call -- the L2 flush, its read sweep, the sleep
# kernel that hides host dispatch, the device-wide synchronize -- so that
# its clock is shorter than the reference's by that much, and its forged
# claim can be shorter by as much before the clock charges it.  What it
# measures: how much of the eval's clock a candidate's process can skip
# (docs/integrity.md, "What is not defended").
import sys
import time

import torch
import torch.nn as nn

SCALE_PCT = 25

_runner = sys.modules.get("__main__")
if getattr(_runner, "_timed_gpu", None) is not None:
    def _lean(torch, fn, args, flush, ev, seq, spin=0):
        st = torch.cuda.current_stream()
        ev[0].record(st)
        res = fn(*args)
        ev[1].record(st)
        ev[1].synchronize()
        t = int(round(ev[0].elapsed_time(ev[1]) * 1e6)) * SCALE_PCT // 100
        return res, t, t, 0

    _runner._timed_gpu = _lean


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return torch.sin(x[:, None] * w[None, :]).sum(dim=1)
