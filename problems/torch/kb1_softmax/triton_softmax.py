# A Triton candidate for kb1_softmax on the GPU (spec device "cuda"):
# one program per row, the whole row in registers (D <= 65536), softmax
# as max, exp(x - max), sum, divide -- the Triton tutorial's kernel.
# Not a template of spec.json (this CPU-only problem has no Triton):
# scripts/gpu-torch-remote evaluates it on a GPU copy of the problem.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, y_ptr, n_cols, x_stride, y_stride,
                 BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * x_stride + offs, mask=mask,
                other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * y_stride + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        warps = 4 if block <= 2048 else 8 if block <= 8192 else 16
        softmax_rows[(rows,)](x, y, cols, x.stride(0), y.stride(0),
                              BLOCK=block, num_warps=warps)
        return y
