import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.ln = nn.LayerNorm(features)

    def forward(self, x):
        y = F.layer_norm(x, self.ln.normalized_shape, self.ln.weight,
                         self.ln.bias, self.ln.eps)
        if OP == "inplace":
            return F.gelu(y, approximate="none")
        return F.gelu(y)
