import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Sum reduction over dim 1."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 16
dim1 = 16384


def get_inputs():
    return [torch.randn(batch_size, dim1)]


def get_init_inputs():
    return [1]
