# get_inputs() builds a banded mask in a Python loop: slow (about 1-2 s)
import torch, torch.nn as nn
N = 256
class Model(nn.Module):
    def __init__(self): super().__init__()
    def forward(self, x, m): return x * m
def get_inputs():
    x = torch.randn(N, N)
    m = torch.zeros(N, N)
    for i in range(N):
        for j in range(N):
            if abs(i - j) <= 3 + (i * j) % 5:
                m[i, j] = 1.0
    s = 0
    for k in range(100_000_000): s += k  # a slow Python build: ~2 s
    return [x, m]
def get_init_inputs(): return []
