import math
import torch
import torch.nn as nn

class Model(nn.Module):
    """Masked scaled dot-product attention; mask is a 0/1 float padding mask."""
    def __init__(self):
        super().__init__()
    def forward(self, q, k, v, mask):
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        s = s.masked_fill(mask == 0, -1e9)
        return torch.softmax(s, dim=-1) @ v

B, H, S, D = 2, 4, 64, 32

def get_inputs():
    q = torch.randn(B, H, S, D)
    k = torch.randn(B, H, S, D)
    v = torch.randn(B, H, S, D)
    mask = (torch.rand(B, 1, S, S) > 0.3).float()
    return [q, k, v, mask]

def get_init_inputs():
    return []
