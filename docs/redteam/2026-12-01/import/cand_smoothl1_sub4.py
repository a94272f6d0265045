import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """WRONG: smooth L1 on every 4th row only (a 1/4 sample of the mean)."""
    def __init__(self):
        super().__init__()
    def forward(self, p, t):
        return torch.nn.functional.smooth_l1_loss(p[::4], t[::4])
