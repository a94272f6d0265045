# Weights drawn in the constructor with numpy's global generator (a
# common way to write a fixed random weight); honest as a candidate.
import numpy as np
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.from_numpy(np.random.randn(256).astype(np.float32)))
    def forward(self, x): return x * self.w
def get_inputs(): return [torch.randn(64, 256)]
def get_init_inputs(): return []
