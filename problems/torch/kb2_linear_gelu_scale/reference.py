import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Gemm, GELU, scaling."""

    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return F.gelu(self.gemm(x)) * self.scale


batch_size = 64
in_features = 256
out_features = 256
scale = 0.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
