# SPDX-License-Identifier: Apache-2.0
# The torch twin of problems/cuda/softmax (written by scripts/make-torch-twins;
# edit that script, not this file): torch.softmax(x, dim=-1).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(8192, 8192).to(torch.bfloat16)]


def get_init_inputs():
    return []
