import torch
import torch.nn as nn

class Model(nn.Module):
    """Smooth L1 (Huber) loss for non-negative regression targets (e.g. prices, distances)."""
    def __init__(self):
        super().__init__()
    def forward(self, predictions, targets):
        return torch.nn.functional.smooth_l1_loss(predictions, targets)

batch_size = 128
input_shape = (4096,)

def get_inputs():
    return [torch.rand(batch_size, *input_shape) * 10, torch.rand(batch_size, *input_shape) * 10]

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
