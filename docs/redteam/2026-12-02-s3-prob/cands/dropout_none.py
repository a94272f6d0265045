import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """No dropout at all."""
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
    def forward(self, x):
        return self.lin(x)
