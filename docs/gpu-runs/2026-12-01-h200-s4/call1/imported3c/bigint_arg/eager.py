# forward takes a modulus among its inputs (an int constant: torch.args)
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self): super().__init__()
    def forward(self, x, p): return (x * 31 + 7) % p
def get_inputs(): return [torch.randint(0, 1 << 40, (4096,), dtype=torch.int64), 2**61 - 1]
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
