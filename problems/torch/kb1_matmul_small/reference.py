import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Single matrix multiplication."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


M = 128
K = 256
N = 128


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
