#
# Best kernel found by KernelFleet for problem "rt_init_bool".
#
#   campaign    3 (rt_init_bool)
#   candidate   8, template "new", proposer evolution
#   device      cpu AMD EPYC (x86-64-v4)
#   time        1.23 ms median (spread 180.7%, 30 repetitions), reference 1.66 ms
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     1.347x over the reference, 1.4% of roofline
#   verified    outcome ok, task 6
#   written     2026-12-02 03:35:57Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """relu, or -relu(-x) when negate: a KernelBench-style bool init."""

    def __init__(self, negate):
        super().__init__()
        self.negate = negate

    def forward(self, x):
        return -torch.relu(-x) if self.negate else torch.relu(x)

