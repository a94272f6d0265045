# A KernelBench-style reference whose constructor draws a scale from
# Python's `random` (not torch's generator).  Honest: the same file as
# a candidate computes the same thing.
import random
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.s = random.uniform(0.5, 2.0)
    def forward(self, x):
        return x * self.s

def get_inputs():
    return [torch.randn(64, 256)]

def get_init_inputs():
    return []
