# A 0-d tensor input (a learned-style scalar), appended to a flattened output.
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self): super().__init__()
    def forward(self, x, s): return torch.cat([x.flatten(), s.unsqueeze(0)])
def get_inputs(): return [torch.randn(128, 64), torch.rand(())]
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
