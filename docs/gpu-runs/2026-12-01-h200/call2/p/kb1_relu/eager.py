import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if OP == "clamp":
            return torch.clamp(x, min=0.0)
        if OP == "maximum":
            return torch.maximum(x, torch.zeros((), dtype=x.dtype))
        return torch.relu(x)
