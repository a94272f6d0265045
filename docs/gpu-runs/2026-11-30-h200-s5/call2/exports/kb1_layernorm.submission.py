#
# Best kernel found by KernelFleet for problem "kb1_layernorm".
#
#   campaign    1 (sweep torch: kb1_layernorm on h200)
#   candidate   1, template "torch_ops", proposer evolution
#   device      cuda NVIDIA H200 (sm_90, sm_90a)
#   time        151.60 us median (spread 2.6%, 30 repetitions), reference 151.18 us
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     0.997x over the reference, 42.3% of roofline
#   verified    outcome ok, task 1
#   written     2026-11-30 13:44:27Z
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
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        if OP == "manual":
            mu = x.mean(dim=-1, keepdim=True)
            var = (x - mu).pow(2).mean(dim=-1, keepdim=True)
            return (x - mu) * torch.rsqrt(var + self.ln.eps) * self.ln.weight + self.ln.bias
        return F.layer_norm(x, self.ln.normalized_shape, self.ln.weight,
                            self.ln.bias, self.ln.eps)


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

_KF_INIT = [[512]]
if 'get_init_inputs' in globals() and not _KF_INIT:
    _KF_INIT = list(get_init_inputs())
