import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self, k): super().__init__(); self.k = k
    def forward(self, x): return x * (self.k % 7)
def get_inputs(): return [torch.randn(128, 64)]
def get_init_inputs(): return [2**70 + 3]
