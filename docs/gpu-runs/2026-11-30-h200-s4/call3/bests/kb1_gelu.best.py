#
# Best kernel found by KernelFleet for problem "kb1_gelu".
#
#   campaign    3 (sweep torch: kb1_gelu on h200)
#   candidate   15, template "torch_ops", proposer evolution
#   device      cuda NVIDIA H200 (sm_90, sm_90a)
#   time        66.21 us median (spread 6.9%, 30 repetitions), reference 65.89 us
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     0.995x over the reference, 97.3% of roofline
#   verified    outcome ok, task 15
#   written     2026-11-30 10:50:31Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
OP = "gelu"

import torch
import torch.nn as nn
import torch.nn.functional as F


import math


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if OP == "erf":
            return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
        if OP == "tanh":  # the approximation: wrong at this tolerance
            return F.gelu(x, approximate="tanh")
        return F.gelu(x)
