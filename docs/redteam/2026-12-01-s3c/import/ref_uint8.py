import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self): super().__init__()
    def forward(self, x): return x.float() * 2
def get_inputs(): return [torch.randint(0, 255, (128, 64), dtype=torch.uint8)]
def get_init_inputs(): return []
