import torch
import torch.nn as nn

class Model(nn.Module):
    """Un-shuffle rows: out[perm[i]] = x[i] (perm is a permutation)."""
    def __init__(self):
        super().__init__()
    def forward(self, x, perm):
        out = torch.zeros_like(x)
        out[perm] = x
        return out

N, D = 4096, 256

def get_inputs():
    return [torch.randn(N, D), torch.randperm(N)]

def get_init_inputs():
    return []
