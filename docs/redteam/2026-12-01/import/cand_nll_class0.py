import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """WRONG: ignores the labels, always scores class 0."""
    def __init__(self):
        super().__init__()
    def forward(self, logits, labels):
        return -torch.log_softmax(logits, dim=1)[:, 0].contiguous()
