import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        raise ValueError("boom \x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[31mRED\x1b[0m \r\x1b[Afake: kf import: wrote ok")

def get_inputs():
    return [torch.randn(8, 8)]

def get_init_inputs():
    return []
