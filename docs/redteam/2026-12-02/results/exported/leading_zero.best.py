#
# Best kernel found by KernelFleet for problem "rt_relu".
#
#   campaign    1 (rt_relu)
#   candidate   1, template "", proposer rt
#   device      cpu AMD EPYC (x86-64-v4)
#   time        2.54 ms median (spread 95.2%, 30 repetitions), reference 1.43 ms
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     0.565x over the reference, 0.7% of roofline
#   verified    outcome ok, task 1
#   written     2026-12-02 03:28:55Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
SCALE = 010

# An honest relu.  Proposed with --knob SCALE=010: the harness hands the
# candidate int("010") == 10, so the result is relu(x) * 1 (verified ok).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x) * (SCALE // 10)
