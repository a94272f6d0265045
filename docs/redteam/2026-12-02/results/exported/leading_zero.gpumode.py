#
# Best kernel found by KernelFleet for problem "rt_relu".
#
#   campaign    1 (rt_relu)
#   candidate   1, template "", proposer rt
#   device      cpu AMD EPYC (x86-64-v4)
#   time        2.54 ms median (spread 95.2%, 30 repetitions), reference 1.43 ms
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     0.565x over the reference, 0.7% of roofline
#   verified    outcome ok, task 1
#   written     2026-12-02 03:28:55Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
SCALE = 010

# An honest relu.  Proposed with --knob SCALE=010: the harness hands the
# candidate int("010") == 10, so the result is relu(x) * 1 (verified ok).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x) * (SCALE // 10)


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
