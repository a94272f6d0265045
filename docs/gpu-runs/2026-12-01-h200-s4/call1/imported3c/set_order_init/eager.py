# A reference whose constructor creates its parameters in the order of a
# set of strings: Python's hash seed (random per process) decides the
# order, and with it which torch.randn draw each parameter gets.
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        for name in {"alpha", "beta", "gamma", "delta"}:
            setattr(self, name, nn.Parameter(torch.randn(256)))
    def forward(self, x):
        return x * self.alpha + self.beta * self.gamma - self.delta * x

def get_inputs():
    return [torch.randn(64, 256)]

def get_init_inputs():
    return []


# --- KernelFleet starter (kf import): the reference's Model as
# ModelNew.  Replace forward with faster code; MODE is a knob.
import torch as _kf_torch


class ModelNew(Model):
    def forward(self, *args):
        if MODE == "inference":
            with _kf_torch.inference_mode():
                return super().forward(*args)
        return super().forward(*args)
