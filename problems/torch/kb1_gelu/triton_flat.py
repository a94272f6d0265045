# Triton template for kb1_gelu on a GPU copy of the problem
# (spec device "cuda"; not offered on CI's CPU-only torch): one flat
# elementwise pass, BLOCK elements per program over WARPS warps, loads
# and stores with the EVICT cache hint ("first": streamed, kept out of
# L2's way).
# The exact (erf) GELU of F.gelu's default; the tanh approximation is
# outside the tolerance.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_flat(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr,
               EVICTION: tl.constexpr):
    offs = (tl.program_id(0).to(tl.int64) * BLOCK_SIZE +
            tl.arange(0, BLOCK_SIZE))
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, eviction_policy=EVICTION)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y, mask=mask, eviction_policy=EVICTION)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _gelu_flat[(triton.cdiv(n, BLOCK),)](
            x, y, n, BLOCK_SIZE=BLOCK,
            EVICTION="evict_first" if EVICT == "first" else "",
            num_warps=WARPS)
        return y
