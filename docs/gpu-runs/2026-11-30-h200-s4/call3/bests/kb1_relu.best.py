#
# Best kernel found by KernelFleet for problem "kb1_relu".
#
#   campaign    2 (sweep torch: kb1_relu on h200)
#   candidate   10, template "triton_flat", proposer evolution
#   device      cuda NVIDIA H200 (sm_90, sm_90a)
#   time        65.63 us median (spread 19.4%, 30 repetitions), reference 67.68 us
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     1.031x over the reference, 97.8% of roofline
#   verified    outcome ok, task 10
#   written     2026-11-30 10:49:06Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
BLOCK = 1024
EVICT = "none"
WARPS = 8

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
