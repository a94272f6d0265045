import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """WRONG: clamps the input at 8 (output saturates at ~8 for x > 8)."""
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.nn.functional.softplus(torch.clamp(x, max=8.0))
