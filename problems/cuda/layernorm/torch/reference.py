# SPDX-License-Identifier: Apache-2.0
# The torch twin of problems/cuda/layernorm (written by scripts/make-torch-twins;
# edit that script, not this file): F.layer_norm(x, (N,), w, b, eps=1e-5).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w, b):
        return F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)


def get_inputs():
    return [torch.randn(8192, 8192).to(torch.bfloat16),
            torch.randn(8192).to(torch.bfloat16),
            torch.randn(8192).to(torch.bfloat16)]


def get_init_inputs():
    return []
