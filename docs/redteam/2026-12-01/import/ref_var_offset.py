import torch
import torch.nn as nn

class Model(nn.Module):
    """Per-row variance of sensor readings (positive, offset ~100, small spread)."""
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.var(x, dim=1, unbiased=False)

batch_size = 64
dim = 8192

def get_inputs():
    return [100.0 + 0.1 * torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
