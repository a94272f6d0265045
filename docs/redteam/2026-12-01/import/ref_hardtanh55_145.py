import torch
import torch.nn as nn

class Model(nn.Module):
    """HardTanh(-5.5, 5.5) on activations of std 1.45."""
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.nn.functional.hardtanh(x, min_val=-5.5, max_val=5.5)

batch_size = 16
dim = 4096

def get_inputs():
    return [torch.randn(batch_size, dim) * 1.45]

def get_init_inputs():
    return []
