# A 0-d tensor input (a learned-style scalar), appended to a flattened output.
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self): super().__init__()
    def forward(self, x, s): return torch.cat([x.flatten(), s.unsqueeze(0)])
def get_inputs(): return [torch.randn(128, 64), torch.rand(())]
def get_init_inputs(): return []
