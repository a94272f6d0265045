import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        if OP == "matmul":
            return x @ torch.ones(x.shape[1], 1, dtype=x.dtype,
                                  device=x.device)
        if OP == "double":
            return x.double().sum(dim=self.dim, keepdim=True).float()
        return x.sum(dim=self.dim, keepdim=True)
