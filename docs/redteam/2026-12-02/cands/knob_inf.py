# An honest relu.  Proposed with --knob HI=inf: the harness hands the
# candidate float("inf"); the exported file sets HI = "inf" (a str).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=0.0, max=HI)
