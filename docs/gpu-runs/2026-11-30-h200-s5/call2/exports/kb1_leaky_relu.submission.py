#
# Best kernel found by KernelFleet for problem "kb1_leaky_relu".
#
#   campaign    6 (sweep torch: kb1_leaky_relu on h200)
#   candidate   36, template "torch_ops", proposer evolution
#   device      cuda NVIDIA H200 (sm_90, sm_90a)
#   time        65.90 us median (spread 9.7%, 30 repetitions), reference 65.50 us
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     0.994x over the reference, 97.7% of roofline
#   verified    outcome ok, task 36
#   written     2026-11-30 13:44:42Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
OP = "functional"

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        if OP == "where":
            return torch.where(x > 0, x, x * self.negative_slope)
        return F.leaky_relu(x, negative_slope=self.negative_slope)


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

_KF_INIT = [0.01]
if 'get_init_inputs' in globals() and not _KF_INIT:
    _KF_INIT = list(get_init_inputs())
