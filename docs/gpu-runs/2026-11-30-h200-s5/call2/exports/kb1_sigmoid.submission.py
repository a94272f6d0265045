#
# Best kernel found by KernelFleet for problem "kb1_sigmoid".
#
#   campaign    4 (sweep torch: kb1_sigmoid on h200)
#   candidate   27, template "triton_flat", proposer evolution
#   device      cuda NVIDIA H200 (sm_90, sm_90a)
#   time        68.29 us median (spread 10.4%, 30 repetitions), reference 65.62 us
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     0.961x over the reference, 94.3% of roofline
#   verified    outcome ok, task 27
#   written     2026-11-30 13:44:32Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
BLOCK = 1024
EVICT = "first"
WARPS = 8

# Triton template for kb1_sigmoid on a GPU copy of the problem
# (spec device "cuda"; not offered on CI's CPU-only torch): one flat
# elementwise pass, BLOCK elements per program over WARPS warps, loads
# and stores with the EVICT cache hint ("first": streamed, kept out of
# L2's way).
# libdevice's expf: Triton's tl.exp is ex2.approx, off by up to ~1e-5
# relative at |x| = 100 (the 'wide' inputs; rtol is 1e-5).
import torch
import torch.nn as nn
import triton
import triton.language as tl
try:  # Triton >= 3.2 dispatches by target; earlier ones name CUDA's
    from triton.language.extra import libdevice
except ImportError:
    from triton.language.extra.cuda import libdevice


@triton.jit
def _sigmoid_flat(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr,
                  EVICTION: tl.constexpr):
    offs = (tl.program_id(0).to(tl.int64) * BLOCK_SIZE +
            tl.arange(0, BLOCK_SIZE))
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, eviction_policy=EVICTION)
    y = 1.0 / (1.0 + libdevice.exp(-x))
    tl.store(y_ptr + offs, y, mask=mask, eviction_policy=EVICTION)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _sigmoid_flat[(triton.cdiv(n, BLOCK),)](
            x, y, n, BLOCK_SIZE=BLOCK,
            EVICTION="evict_first" if EVICT == "first" else "",
            num_warps=WARPS)
        return y


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
