# get_inputs() draws from a torch.Generator of its own with a fixed seed
import torch, torch.nn as nn
N = 384
class Model(nn.Module):
    def __init__(self): super().__init__()
    def forward(self, a, b): return a @ b
def get_inputs():
    g = torch.Generator().manual_seed(42)
    return [torch.randn(N, N, generator=g), torch.randn(N, N, generator=g)]
def get_init_inputs(): return []
