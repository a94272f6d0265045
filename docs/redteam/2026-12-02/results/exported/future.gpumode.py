#
# Best kernel found by KernelFleet for problem "rt_relu".
#
#   campaign    2 (rt_relu)
#   candidate   5, template "", proposer rt
#   device      cpu AMD EPYC (x86-64-v4)
#   time        924.55 us median (spread 153.5%, 30 repetitions), reference 973.77 us
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     1.053x over the reference, 1.9% of roofline
#   verified    outcome ok, task 4
#   written     2026-12-02 03:35:24Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
OP = "relu"

from __future__ import annotations

# An honest relu with a knob and a __future__ import (legal as the
# first statement of the file the harness compiles).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if OP == "clamp":
            return torch.clamp(x, min=0.0)
        return torch.relu(x)


# --- GPU MODE entry point (kf campaign export --format gpumode) ---
import torch as _kf_torch
_kf_model = None


def custom_kernel(data):
    global _kf_model
    args = tuple(data) if isinstance(data, (tuple, list)) else (data,)
    if _kf_model is None:
        _kf_torch.manual_seed(0x6B66)  # the weights KernelFleet verified
        _kf_model = ModelNew(*_KF_INIT).eval()
        # GPU MODE hands its inputs on the GPU: the weights go there too
        dev = next((a.device for a in args
                    if isinstance(a, _kf_torch.Tensor)), None)
        if dev is not None:
            _kf_model = _kf_model.to(dev)
    with _kf_torch.no_grad():
        return _kf_model(*args)


def _kf_typed(v):
    if isinstance(v, dict) and set(v) == {'float'}:
        return float(v['float'])
    if isinstance(v, list):
        return [_kf_typed(x) for x in v]
    return v


_KF_INIT = _kf_typed([])
if 'get_init_inputs' in globals() and not _KF_INIT:
    _KF_INIT = list(get_init_inputs())
