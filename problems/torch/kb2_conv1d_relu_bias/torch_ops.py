import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(out_channels, 1))

    def forward(self, x):
        y = F.conv1d(x, self.conv.weight, self.conv.bias)
        if OP == "inplace":
            return y.relu_().add_(self.bias)
        return torch.relu(y) + self.bias
