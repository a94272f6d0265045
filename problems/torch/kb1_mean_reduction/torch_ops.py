import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        if OP == "sum":
            return x.sum(dim=self.dim) / x.shape[self.dim]
        return x.mean(dim=self.dim)
