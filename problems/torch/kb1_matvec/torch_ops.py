import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        if OP == "mv":
            return torch.mv(A, B[:, 0])[:, None]
        if OP == "mul_sum":
            return (A * B[:, 0]).sum(dim=1, keepdim=True)
        return A @ B
