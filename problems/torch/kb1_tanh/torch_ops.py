import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if OP == "sigmoid":
            return 2.0 * torch.sigmoid(2.0 * x) - 1.0
        return torch.tanh(x)
