# Honest candidate: the file's Model with the file's own init (2**70 + 3).
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def __init__(self, *a):
        super().__init__()
        self.k = 2**70 + 3
    def forward(self, x): return x * (self.k % 7)
