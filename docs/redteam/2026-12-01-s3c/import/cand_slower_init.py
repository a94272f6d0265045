# Honest candidate for slower_inputs: x * m, with a constructor that does
# ~30 ms of set-up (as a real candidate that precomputes or warms up would).
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        a = torch.randn(300, 300)
        for _ in range(5):
            a = torch.tanh(a @ a * 1e-3)
        self.register_buffer("unused", a[:1, :1].clone())
    def forward(self, x, m):
        return torch.mul(x, m)
