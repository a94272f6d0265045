import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if OP == "manual":
            e = torch.exp(x - x.amax(dim=1, keepdim=True))
            return e / e.sum(dim=1, keepdim=True)
        if OP == "logexp":
            return torch.exp(torch.log_softmax(x, dim=1))
        return F.softmax(x, dim=1)
