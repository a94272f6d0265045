# SPDX-License-Identifier: Apache-2.0
# The torch twin of problems/cuda/vecsum (written by scripts/make-torch-twins;
# edit that script, not this file): x.sum(), as the spec's f32 [1].
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum().reshape(1)


def get_inputs():
    return [torch.randn(268435456).to(torch.float32)]


def get_init_inputs():
    return []
