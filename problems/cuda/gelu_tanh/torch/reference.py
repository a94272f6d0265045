# SPDX-License-Identifier: Apache-2.0
# The torch twin of problems/cuda/gelu_tanh (written by scripts/make-torch-twins;
# edit that script, not this file): F.gelu(x, approximate="tanh").
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(8192, 8192).to(torch.bfloat16)]


def get_init_inputs():
    return []
