import random
import torch
import torch.nn as nn

class Model(nn.Module):
    """x * k, where k is a per-call integer chosen by get_inputs."""
    def __init__(self):
        super().__init__()
    def forward(self, x, k):
        return x * k

def get_inputs():
    return [torch.randn(256, 256), random.randint(1, 100)]

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
