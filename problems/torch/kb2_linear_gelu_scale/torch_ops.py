import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        w, b = self.gemm.weight, self.gemm.bias
        if OP == "fold":
            # scale folded into the weights: gelu(z) * s != gelu(z * s)
            # in general, so this one is wrong and must be refused
            return F.gelu(F.linear(x, w * self.scale, b * self.scale))
        if OP == "addmm":
            return F.gelu(torch.addmm(b, x, w.t())).mul_(self.scale)
        return F.gelu(F.linear(x, w, b)) * self.scale
