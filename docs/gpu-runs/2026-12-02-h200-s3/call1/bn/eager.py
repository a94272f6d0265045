import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs Batch Normalization (KernelBench level 1, 33_BatchNorm.py, smaller sizes).
    """
    def __init__(self, num_features: int):
        super(Model, self).__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)

batch_size = 8
features = 16
dim1 = 32
dim2 = 32

def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]

def get_init_inputs():
    return [features]


# --- KernelFleet starter (kf import): the reference's Model as
# ModelNew.  Replace forward with faster code; MODE is a knob.
import torch as _kf_torch


class ModelNew(Model):
    def forward(self, *args):
        if MODE == "inference":
            with _kf_torch.inference_mode():
                return super().forward(*args)
        return super().forward(*args)
