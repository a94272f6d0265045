# Honest candidate: the reference file's own Model, built from the file's
# own get_init_inputs() (what the KernelBench problem says), ignoring the
# arguments the harness passes.
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def __init__(self, *a):
        super().__init__()
        self.p = 2**61 - 1
    def forward(self, x):
        return ((x * 31 + 7) % self.p) % 1000
