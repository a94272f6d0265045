import torch
import torch.nn as nn

class Model(nn.Module):
    """linear then dropout(0.5); Model() is in training mode as constructed."""
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.drop = nn.Dropout(0.5)
    def forward(self, x):
        return self.drop(self.lin(x))

def get_inputs():
    return [torch.randn(64, 128)]

def get_init_inputs():
    return [128]
