#
# Best kernel found by KernelFleet for problem "kb1_argmax".
#
#   campaign    4 (sweep torch: kb1_argmax on h200)
#   candidate   23, template "triton_rows", proposer evolution
#   device      cuda NVIDIA H200 (sm_90, sm_90a)
#   time        38.09 us median (spread 51.8%, 30 repetitions), reference 53.28 us
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     1.399x over the reference, 83.8% of roofline
#   verified    outcome ok, task 23
#   written     2026-11-30 10:43:30Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
BLOCK = 512
WARPS = 4

# Triton template for kb1_argmax on a GPU copy of the problem
# (spec device "cuda"; not offered on CI's CPU-only torch):
# torch.argmax(x, dim=1) of a 2-D f32 tensor, the index of the first
# maximum as torch returns it.  A row per program, BLOCK columns at a time:
# each lane keeps the largest value it has seen and its column, replacing
# them only on a strictly larger value (columns arrive in increasing order,
# so a lane keeps its first maximum); at the end the smallest column among
# the lanes holding the row's maximum.  WARPS warps per program.  A NaN is
# not taken (torch's argmax would return it; this problem's inputs have
# none).  Any other dim or rank is left to torch (this problem times 2-D
# tensors over dim 1).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _argmax_rows(x_ptr, y_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    lane = tl.arange(0, BLOCK_SIZE)
    best = tl.full([BLOCK_SIZE], -float("inf"), tl.float32)
    col = tl.zeros([BLOCK_SIZE], tl.int64)
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + lane
        x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols,
                    other=-float("inf"), eviction_policy="evict_first")
        take = x > best
        best = tl.where(take, x, best)
        col = tl.where(take, offs.to(tl.int64), col)
    top = tl.max(best, axis=0)
    # a row of -inf only: every lane still holds column 0, as torch answers
    tl.store(y_ptr + row, tl.min(tl.where(best == top, col, n_cols), axis=0))


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        if x.dim() != 2 or self.dim not in (1, -1):
            return torch.argmax(x, dim=self.dim)
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty((rows,), dtype=torch.int64, device=x.device)
        _argmax_rows[(rows,)](x, y, cols, BLOCK_SIZE=BLOCK, num_warps=WARPS)
        return y
