import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, m):
        return torch.where(m, x + x, x - 1.0)
