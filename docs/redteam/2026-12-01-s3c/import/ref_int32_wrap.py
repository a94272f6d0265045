# int32 arithmetic that wraps: x*x for x up to 2^20
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self): super().__init__()
    def forward(self, x): return x * x
def get_inputs(): return [torch.randint(0, 1 << 20, (128, 64), dtype=torch.int32)]
def get_init_inputs(): return []
