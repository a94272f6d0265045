import math
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """WRONG: ignores the padding mask entirely."""
    def __init__(self):
        super().__init__()
    def forward(self, q, k, v, mask):
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        return torch.softmax(s, dim=-1) @ v
