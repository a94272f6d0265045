import torch
import torch.nn as nn


class Model(nn.Module):
    """x * (k % 7) with k = 2**53 + 1 (an integer JSON numbers cannot
    hold: the spec writes it {"int": "9007199254740993"})."""

    def __init__(self, k):
        super().__init__()
        self.m = k % 7

    def forward(self, x):
        return x * self.m


def get_inputs():
    return [torch.randn(16, 4096)]


def get_init_inputs():
    return [2**53 + 1]
