import torch
import torch.nn as nn


class Model(nn.Module):
    """relu, or -relu(-x) when negate: a KernelBench-style bool init."""

    def __init__(self, negate):
        super().__init__()
        self.negate = negate

    def forward(self, x):
        return -torch.relu(-x) if self.negate else torch.relu(x)


def get_inputs():
    return [torch.randn(16, 4096)]


def get_init_inputs():
    return [False]
