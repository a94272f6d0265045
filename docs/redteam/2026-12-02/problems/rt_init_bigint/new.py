import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """x * (k % 7) with k = 2**53 + 1 (an integer JSON numbers cannot
    hold: the spec writes it {"int": "9007199254740993"})."""

    def __init__(self, k):
        super().__init__()
        self.m = k % 7

    def forward(self, x):
        return x * self.m

