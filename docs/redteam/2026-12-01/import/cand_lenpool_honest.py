import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """Honest: cumulative-sum gather, same math."""
    def __init__(self):
        super().__init__()
    def forward(self, x, lengths):
        S = x.size(1)
        mask = (torch.arange(S)[None, :] < lengths[:, None]).to(x.dtype)
        return torch.einsum('bsd,bs->bd', x, mask) / lengths[:, None].to(x.dtype)
