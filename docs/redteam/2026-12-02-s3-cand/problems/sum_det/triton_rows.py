# Triton template for kb1_sum_reduction on a GPU copy of the problem
# (spec device "cuda"; not offered on CI's CPU-only torch):
# torch.sum(x, dim=1, keepdim=True) of a 2-D f32 tensor.  ROWS rows per
# program, BLOCK columns at a time added into a vector of BLOCK partial
# sums (one f32 add per element), the vector reduced once at the end;
# WARPS warps per program.  Any other dim or rank is left to torch (this
# problem times 2-D tensors over dim 1).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sum_rows(x_ptr, y_ptr, n_rows, n_cols, scale,
              ROWS_PER: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    rows = (tl.program_id(0).to(tl.int64) * ROWS_PER +
            tl.arange(0, ROWS_PER))[:, None]
    rmask = rows < n_rows
    acc = tl.zeros([ROWS_PER, BLOCK_SIZE], tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)[None, :]
        acc += tl.load(x_ptr + rows * n_cols + cols,
                       mask=rmask & (cols < n_cols), other=0.0,
                       eviction_policy="evict_first")
    total = tl.sum(acc, axis=1) * scale
    r = tl.program_id(0).to(tl.int64) * ROWS_PER + tl.arange(0, ROWS_PER)
    tl.store(y_ptr + r, total, mask=r < n_rows)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        if x.dim() != 2 or self.dim not in (1, -1):
            return torch.sum(x, dim=self.dim, keepdim=True)
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty((rows, 1), dtype=x.dtype, device=x.device)
        _sum_rows[(triton.cdiv(rows, ROWS),)](
            x, y, rows, cols, 1.0, ROWS_PER=ROWS, BLOCK_SIZE=BLOCK,
            num_warps=WARPS)
        return y
