import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Softmax over dim 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


batch_size = 16
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

ModelNew = Model
