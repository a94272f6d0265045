#
# Best kernel found by KernelFleet for problem "rt_relu".
#
#   campaign    1 (rt_relu)
#   candidate   1, template "", proposer rt
#   device      cpu AMD EPYC (x86-64-v4)
#   time        1.95 ms median (spread 259.5%, 30 repetitions), reference 1.32 ms
#   timed in    the final showdown (re-verified and re-timed together with the reference)
#   speedup     0.675x over the reference, 1.0% of roofline
#   verified    outcome ok, task 1
#   written     2026-12-02 03:33:29Z
#
# The knobs it was measured with are set below, so the file runs on its own
# beside the problem's reference.py (a KernelBench ModelNew or a GPU MODE
# custom_kernel).
#
CHUNK = "1_6"

# An honest relu.  Proposed with --knob CHUNK=1_6: the harness hands the
# candidate int("1_6") == 16 (Python's int() takes digit separators), so
# the result is relu(x) * 1 (verified ok); the exported file sets
# CHUNK = "1_6" (a str).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x) * (CHUNK // 16)
