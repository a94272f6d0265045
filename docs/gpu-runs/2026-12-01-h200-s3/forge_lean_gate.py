# forge_lean.py (docs/redteam/2026-12-01/torch) aimed at the go word's
# protocol (runner.py _GoGate, _gated_begin): it claims a quarter of its
# time (SCALE_PCT) and skips the harness's own work that is still inside
# the eval's clock of the call -- the L2 flush and its read sweep --
# keeping only what it cannot skip (the wait on the go word: without it
# the copies would read the image before the draw is there).  Where the
# gate is off it skips as forge_lean.py did (the sleep's protocol).
import sys
import time

import torch
import torch.nn as nn

SCALE_PCT = 25

_runner = sys.modules.get("__main__")
_charge = getattr(_runner, "_Charge", None)
if _charge is not None:
    _orig = _charge.charge_call

    def _forged(self, t_stream, t_all, t_host):
        ns, flags = _orig(self, t_stream, t_all, t_host)
        return ns * SCALE_PCT // 100, flags

    _charge.charge_call = _forged

if getattr(_runner, "_gated_begin", None) is not None:
    def _lean_begin(torch, fn, plan, ro, rw, cfg, dev, flush, ev, seq, gate):
        ins, outs = _runner._pviews(torch, ro, rw, plan)
        st = torch.cuda.current_stream()
        dins = [torch.empty(t.shape, dtype=t.dtype, device=dev) for t in ins]
        gate.wait(st, seq)
        for d, h in zip(dins, ins):
            d.copy_(h, non_blocking=True)
        put1 = _runner._put_one(torch, outs)
        ev[0].record(st)
        res = fn(*dins)
        ev[1].record(st)
        return res, dins, outs, list(dins), put1, 0

    _runner._gated_begin = _lean_begin

if getattr(_runner, "_timed_gpu", None) is not None:
    def _lean(torch, fn, args, flush, ev, seq, spin=0):
        st = torch.cuda.current_stream()
        ev[0].record(st)
        res = fn(*args)
        ev[1].record(st)
        ev[1].synchronize()
        t = int(round(ev[0].elapsed_time(ev[1]) * 1e6))
        return res, t, t, 0

    _runner._timed_gpu = _lean


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return torch.sin(x[:, None] * w[None, :]).sum(dim=1)
