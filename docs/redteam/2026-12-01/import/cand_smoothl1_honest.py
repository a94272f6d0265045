import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, p, t):
        return torch.nn.functional.smooth_l1_loss(p, t)
