#
# Best kernel found by KernelFleet for problem "rt_init_bigint".
#
#   campaign    4 (rt_init_bigint)
#   candidate   10, template "new", proposer evolution
#   device      cpu AMD EPYC (x86-64-v4)
#   time        1.11 ms median (spread 104.7%, 30 repetitions), reference 1.23 ms
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     1.113x over the reference, 1.6% of roofline
#   verified    outcome ok, task 8
#   written     2026-12-02 03:36:30Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """x * (k % 7) with k = 2**53 + 1 (an integer JSON numbers cannot
    hold: the spec writes it {"int": "9007199254740993"})."""

    def __init__(self, k):
        super().__init__()
        self.m = k % 7

    def forward(self, x):
        return x * self.m

