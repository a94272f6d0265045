# Weights drawn in the constructor with numpy's global generator (a
# common way to write a fixed random weight); honest as a candidate.
import numpy as np
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.from_numpy(np.random.randn(256).astype(np.float32)))
    def forward(self, x): return x * self.w
def get_inputs(): return [torch.randn(64, 256)]
def get_init_inputs(): return []


# --- KernelFleet starter (kf import): the reference's Model as
# ModelNew.  Replace forward with faster code; MODE is a knob.
import torch as _kf_torch


class ModelNew(Model):
    def forward(self, *args):
        if MODE == "inference":
            with _kf_torch.inference_mode():
                return super().forward(*args)
        return super().forward(*args)
