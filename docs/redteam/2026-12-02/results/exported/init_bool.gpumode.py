#
# Best kernel found by KernelFleet for problem "rt_init_bool".
#
#   campaign    3 (rt_init_bool)
#   candidate   8, template "new", proposer evolution
#   device      cpu AMD EPYC (x86-64-v4)
#   time        1.23 ms median (spread 180.7%, 30 repetitions), reference 1.66 ms
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     1.347x over the reference, 1.4% of roofline
#   verified    outcome ok, task 6
#   written     2026-12-02 03:35:57Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """relu, or -relu(-x) when negate: a KernelBench-style bool init."""

    def __init__(self, negate):
        super().__init__()
        self.negate = negate

    def forward(self, x):
        return -torch.relu(-x) if self.negate else torch.relu(x)



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


_KF_INIT = _kf_typed([false])
if 'get_init_inputs' in globals() and not _KF_INIT:
    _KF_INIT = list(get_init_inputs())
