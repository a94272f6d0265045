# Triton template for kb1_softmax on a GPU copy of the problem
# (spec device "cuda"; not offered on CI's CPU-only torch): a row per
# program, the whole row in registers (D rounded up to a power of two):
# one read and one write per element, the minimum traffic; WARPS sets how
# many registers each thread holds.  Masked lanes load -inf, so they add
# exp(-inf) = 0 to the sum.  Rows longer than 65536 (more registers than a
# program has) are refused.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_one(x_ptr, y_ptr, n_cols, stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"),
                eviction_policy="evict_first")
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride + offs, y, mask=mask,
             eviction_policy="evict_first")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        if cols > 65536:
            raise ValueError("triton_one holds a row in registers: D <= "
                             "65536 (D = %d)" % cols)
        y = torch.empty_like(x)
        _softmax_one[(rows,)](x, y, cols, x.stride(0),
                              BLOCK_SIZE=triton.next_power_of_2(cols),
                              num_warps=WARPS)
        return y
