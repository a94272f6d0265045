#
# Best kernel found by KernelFleet for problem "kb1_softmax".
#
#   campaign    1 (sweep torch: kb1_softmax on h200)
#   candidate   5, template "triton_rows", proposer evolution
#   device      cuda NVIDIA H200 (sm_90, sm_90a)
#   time        77.30 us median (spread 55.8%, 30 repetitions), reference 103.04 us
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     1.333x over the reference, 83.8% of roofline
#   verified    outcome ok, task 5
#   written     2026-11-30 10:29:57Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
CHUNK = 1024
WARPS = 8
PASSES = "one"

# Triton template for kb1_softmax on a GPU copy of the problem
# (spec device "cuda"; not offered on CI's CPU-only torch).  A row per
# program.  PASSES picks the shape of the kernel:
#   "one"     the whole row in registers (D rounded up to a power of two):
#             one read and one write per element, the minimum traffic;
#             WARPS sets how many registers each thread holds.
#   "online"  CHUNK columns at a time: a running max and a rescaled sum in
#             one read, then a second read to write exp(x - max) / sum; any
#             D, and the second read is mostly served by L2 while the row
#             is fresh.
# Masked lanes load -inf, so they add exp(-inf) = 0 to the sum.
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
        if PASSES == "one" and cols <= 65536:
            _softmax_one[(rows,)](x, y, cols, x.stride(0),
                                  BLOCK_SIZE=triton.next_power_of_2(cols),
                                  num_warps=WARPS)
        else:
            _softmax_online[(rows,)](x, y, cols, x.stride(0),
                                     CHUNK_SIZE=CHUNK, num_warps=WARPS)
        return y
