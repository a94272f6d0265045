import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Matrix-vector multiplication."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


M = 256
K = 4096


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
