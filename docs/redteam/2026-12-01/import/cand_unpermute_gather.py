import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """Honest for a permutation: out = x[inverse(perm)], a gather instead of a scatter."""
    def __init__(self):
        super().__init__()
    def forward(self, x, perm):
        inv = torch.empty_like(perm)
        inv[perm] = torch.arange(perm.numel())
        return x.index_select(0, inv)
