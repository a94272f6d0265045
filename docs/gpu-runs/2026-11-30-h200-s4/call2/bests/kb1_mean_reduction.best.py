#
# Best kernel found by KernelFleet for problem "kb1_mean_reduction".
#
#   campaign    3 (sweep torch: kb1_mean_reduction on h200)
#   candidate   15, template "torch_ops", proposer evolution
#   device      cuda NVIDIA H200 (sm_90, sm_90a)
#   time        41.81 us median (spread 13.6%, 30 repetitions), reference 42.99 us
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     1.028x over the reference, 76.4% of roofline
#   verified    outcome ok, task 15
#   written     2026-11-30 10:41:58Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
OP = "mean"

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        if OP == "sum":
            return x.sum(dim=self.dim) / x.shape[self.dim]
        return x.mean(dim=self.dim)
