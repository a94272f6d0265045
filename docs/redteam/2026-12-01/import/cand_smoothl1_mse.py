import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """WRONG: only the quadratic branch of smooth L1 (0.5*d^2 everywhere)."""
    def __init__(self):
        super().__init__()
    def forward(self, p, t):
        d = p - t
        return 0.5 * (d * d).mean()
