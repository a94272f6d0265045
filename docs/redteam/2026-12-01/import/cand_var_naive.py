import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """WRONG (numerically): one-pass E[x^2] - E[x]^2 in float32."""
    def __init__(self):
        super().__init__()
    def forward(self, x):
        m = x.mean(1)
        return (x * x).mean(1) - m * m
