import torch
import torch.nn as nn
import torch.nn.functional as F


import math


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if OP == "erf":
            return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
        if OP == "tanh":  # the approximation: wrong at this tolerance
            return F.gelu(x, approximate="tanh")
        return F.gelu(x)
