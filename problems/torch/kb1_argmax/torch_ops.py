import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        if OP == "max":
            return x.max(dim=self.dim).indices
        return torch.argmax(x, dim=self.dim)
