import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.drop = nn.Dropout(0.5)
    def forward(self, x):
        return self.drop(self.lin(x))
