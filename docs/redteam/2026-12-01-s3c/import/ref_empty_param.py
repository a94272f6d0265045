# A parameter left uninitialised (torch.empty, init forgotten)
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.empty(64, 256))
    def forward(self, x): return x + self.w
def get_inputs(): return [torch.randn(64, 256)]
def get_init_inputs(): return []
