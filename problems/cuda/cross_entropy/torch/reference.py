# SPDX-License-Identifier: Apache-2.0
# The torch twin of problems/cuda/cross_entropy (written by scripts/make-torch-twins;
# edit that script, not this file): F.cross_entropy(logits, targets), mean, as the spec's f32 [1].
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets).float().reshape(1)


def get_inputs():
    return [torch.randn(8192, 32000).to(torch.bfloat16),
            torch.randint(0, 32000, (8192,), dtype=torch.int64)]


def get_init_inputs():
    return []
