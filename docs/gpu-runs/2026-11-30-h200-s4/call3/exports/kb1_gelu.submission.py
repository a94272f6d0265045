#
# Best kernel found by KernelFleet for problem "kb1_gelu".
#
#   campaign    3 (sweep torch: kb1_gelu on h200)
#   candidate   15, template "torch_ops", proposer evolution
#   device      cuda NVIDIA H200 (sm_90, sm_90a)
#   time        66.21 us median (spread 6.9%, 30 repetitions), reference 65.89 us
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     0.995x over the reference, 97.3% of roofline
#   verified    outcome ok, task 15
#   written     2026-11-30 10:51:02Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
OP = "gelu"

import torch
import torch.nn as nn
import torch.nn.functional as F


import math


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if OP == "erf":
            return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
        if OP == "tanh":  # the approximation: wrong at this tolerance
            return F.gelu(x, approximate="tanh")
        return F.gelu(x)


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

_KF_INIT = []
if 'get_init_inputs' in globals() and not _KF_INIT:
    _KF_INIT = list(get_init_inputs())
