import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        if OP == "mm":
            return torch.mm(A, B)
        if OP == "einsum":
            return torch.einsum("mk,kn->mn", A, B)
        if OP == "bt":
            return A @ B.t().contiguous().t()
        return A @ B
