# A Triton candidate for kb1_relu on the GPU (spec device "cuda"): one
# flat elementwise pass, 4096 elements per program.  where(x < 0, 0, x)
# keeps a NaN a NaN, as torch.relu does (a max with 0 would not).
# Not a template of spec.json (this CPU-only problem has no Triton):
# scripts/gpu-torch-remote evaluates it on a GPU copy of the problem.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_flat(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x < 0, 0.0, x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        block = 4096
        relu_flat[(triton.cdiv(n, block),)](x, y, n, BLOCK=block,
                                            num_warps=8)
        return y
