# Triton template for kb1_layernorm on a GPU copy of the problem
# (spec device "cuda"; not offered on CI's CPU-only torch).  ROWS rows of
# D = 512 per program, held in registers: the mean, then the variance of
# x - mean (two passes over registers, not E[x^2] - mean^2, which cancels
# on the 'offset' inputs, 1000 + N(0, 1)), both of the row shifted by its
# first element, then (x - mean) * rstd * weight + bias.
# One read and one write of each element; the weight and bias are read
# once per program.  The model keeps nn.LayerNorm's parameters, so its
# weight and bias are the reference's (the same init and seed).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layernorm_rows(x_ptr, w_ptr, b_ptr, y_ptr, n_rows, n_cols, eps,
                    ROWS_PER: tl.constexpr, BLOCK_D: tl.constexpr):
    rows = (tl.program_id(0).to(tl.int64) * ROWS_PER +
            tl.arange(0, ROWS_PER))[:, None]
    cols = tl.arange(0, BLOCK_D)[None, :]
    cmask = cols < n_cols
    mask = (rows < n_rows) & cmask
    x = tl.load(x_ptr + rows * n_cols + cols, mask=mask, other=0.0,
                eviction_policy="evict_first")
    # Shifted by the row's first element: x - x0 is exact for the 'offset'
    # rows (Sterbenz), so neither the sum nor x - mean loses the ~1e-4
    # that a mean of ~1000 rounded to f32, or a f32 sum of 512 values of
    # ~1000, would (the harness's bench-size check caught that at 1e-4).
    x0 = tl.load(x_ptr + rows * n_cols, mask=rows < n_rows, other=0.0)
    xs = tl.where(mask, x - x0, 0.0)
    d = tl.where(cmask, xs - (tl.sum(xs, axis=1) / n_cols)[:, None], 0.0)
    var = tl.sum(d * d, axis=1) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0)
    b = tl.load(b_ptr + cols, mask=cmask, other=0.0)
    y = d * rstd[:, None] * w + b
    tl.store(y_ptr + rows * n_cols + cols, y, mask=mask,
             eviction_policy="evict_first")


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        x = x.contiguous()
        d = x.shape[-1]
        n = x.numel() // d
        y = torch.empty_like(x)
        _layernorm_rows[(triton.cdiv(n, ROWS),)](
            x, self.ln.weight, self.ln.bias, y, n, d, self.ln.eps,
            ROWS_PER=ROWS, BLOCK_D=triton.next_power_of_2(d),
            num_warps=WARPS)
        return y
