# Triton template for kb1_softmax on a GPU copy of the problem
# (spec device "cuda"; not offered on CI's CPU-only torch): a row per
# program, CHUNK columns at a time: a running max and a rescaled sum in
# one read, then a second read to write exp(x - max) / sum.  Any D; the
# second read is mostly served by L2 while the row is fresh.  WARPS warps
# per program.  Masked lanes load -inf, so they add exp(-inf) = 0 to the
# sum.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_online(x_ptr, y_ptr, n_cols, stride, CHUNK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride
    m = tl.full([CHUNK_SIZE], -float("inf"), tl.float32)
    s = tl.zeros([CHUNK_SIZE], tl.float32)
    for start in range(0, n_cols, CHUNK_SIZE):
        offs = start + tl.arange(0, CHUNK_SIZE)
        x = tl.load(base + offs, mask=offs < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, x)
        # a lane that has seen only -inf keeps s = 0 (no inf - inf)
        scale = tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new))
        s = s * scale + tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    mx = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - mx)),
                   axis=0)
    inv = 1.0 / total
    for start in range(0, n_cols, CHUNK_SIZE):
        offs = start + tl.arange(0, CHUNK_SIZE)
        mask = offs < n_cols
        x = tl.load(base + offs, mask=mask, other=-float("inf"),
                    eviction_policy="evict_first")
        tl.store(y_ptr + row * stride + offs, tl.exp(x - mx) * inv,
                 mask=mask, eviction_policy="evict_first")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        _softmax_online[(rows,)](x, y, cols, x.stride(0),
                                 CHUNK_SIZE=CHUNK, num_warps=WARPS)
        return y
