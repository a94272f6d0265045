#
# Best kernel found by KernelFleet for problem "rt_relu".
#
#   campaign    1 (rt_relu)
#   candidate   1, template "", proposer rt
#   device      cpu AMD EPYC (x86-64-v4)
#   time        1.25 ms median (spread 168.1%, 30 repetitions), reference 1.50 ms
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     1.204x over the reference, 1.4% of roofline
#   verified    outcome ok, task 1
#   written     2026-12-02 03:34:41Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
HI = "inf"

# An honest relu.  Proposed with --knob HI=inf: the harness hands the
# candidate float("inf"); the exported file sets HI = "inf" (a str).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=0.0, max=HI)
