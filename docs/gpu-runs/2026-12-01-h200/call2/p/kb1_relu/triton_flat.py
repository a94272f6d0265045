# Triton template for kb1_relu on a GPU copy of the problem
# (spec device "cuda"; not offered on CI's CPU-only torch): one flat
# elementwise pass, BLOCK elements per program over WARPS warps, loads
# and stores with the EVICT cache hint ("first": streamed, kept out of
# L2's way).
# where(x < 0, 0, x) keeps a NaN a NaN, as torch.relu does (a max with 0
# would not).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_flat(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr,
               EVICTION: tl.constexpr):
    offs = (tl.program_id(0).to(tl.int64) * BLOCK_SIZE +
            tl.arange(0, BLOCK_SIZE))
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, eviction_policy=EVICTION)
    y = tl.where(x < 0, 0.0, x)
    tl.store(y_ptr + offs, y, mask=mask, eviction_policy=EVICTION)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _relu_flat[(triton.cdiv(n, BLOCK),)](
            x, y, n, BLOCK_SIZE=BLOCK,
            EVICTION="evict_first" if EVICT == "first" else "",
            num_warps=WARPS)
        return y
