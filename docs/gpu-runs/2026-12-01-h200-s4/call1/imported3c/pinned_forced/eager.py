# A KernelBench-style file whose get_inputs() pins its own seed "for
# reproducibility": every draw is the same pair of matrices.
import torch, torch.nn as nn
N = 384
class Model(nn.Module):
    def __init__(self): super().__init__()
    def forward(self, a, b): return a @ b
def get_inputs():
    torch.manual_seed(42)
    return [torch.randn(N, N), torch.randn(N, N)]
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
