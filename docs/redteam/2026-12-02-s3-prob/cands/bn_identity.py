import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """Wrong: no normalization at all, returns a copy of the input."""
    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)
    def forward(self, x):
        return x.clone()
