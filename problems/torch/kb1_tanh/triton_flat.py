# Triton template for kb1_tanh on a GPU copy of the problem
# (spec device "cuda"; not offered on CI's CPU-only torch): one flat
# elementwise pass, BLOCK elements per program over WARPS warps, loads
# and stores with the EVICT cache hint ("first": streamed, kept out of
# L2's way).
# libdevice's tanhf: a tanh through exp loses ~1e-3 relative near 0,
# far outside rtol 1e-5.
import torch
import torch.nn as nn
import triton
import triton.language as tl
try:  # Triton >= 3.2 dispatches by target; earlier ones name CUDA's
    from triton.language.extra import libdevice
except ImportError:
    from triton.language.extra.cuda import libdevice


@triton.jit
def _tanh_flat(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr,
               EVICTION: tl.constexpr):
    offs = (tl.program_id(0).to(tl.int64) * BLOCK_SIZE +
            tl.arange(0, BLOCK_SIZE))
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, eviction_policy=EVICTION)
    y = libdevice.tanh(x)
    tl.store(y_ptr + offs, y, mask=mask, eviction_policy=EVICTION)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _tanh_flat[(triton.cdiv(n, BLOCK),)](
            x, y, n, BLOCK_SIZE=BLOCK,
            EVICTION="evict_first" if EVICT == "first" else "",
            num_warps=WARPS)
        return y
