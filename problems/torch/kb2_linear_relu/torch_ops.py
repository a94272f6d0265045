import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        w, b = self.gemm.weight, self.gemm.bias
        if OP == "addmm":
            return torch.addmm(b, x, w.t()).clamp_(min=0)
        if OP == "inplace":
            return F.linear(x, w, b).relu_()
        return torch.relu(F.linear(x, w, b))
