import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if OP == "tanh":
            return 0.5 * torch.tanh(0.5 * x) + 0.5
        if OP == "exp":
            return 1.0 / (1.0 + torch.exp(-x))
        return torch.sigmoid(x)
