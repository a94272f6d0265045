# A reference with a bool input drawn by its own get_inputs() (dtype
# bool, distribution `sample`, first run on a GPU in this session).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, m):
        return torch.where(m, x * 2.0, x - 1.0)


def get_inputs():
    return [torch.randn(4096, 4096), torch.rand(4096, 4096) > 0.5]


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
