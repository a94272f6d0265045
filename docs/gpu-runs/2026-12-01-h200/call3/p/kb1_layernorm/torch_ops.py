import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        if OP == "manual":
            mu = x.mean(dim=-1, keepdim=True)
            var = (x - mu).pow(2).mean(dim=-1, keepdim=True)
            return (x - mu) * torch.rsqrt(var + self.ln.eps) * self.ln.weight + self.ln.bias
        return F.layer_norm(x, self.ln.normalized_shape, self.ln.weight,
                            self.ln.bias, self.ln.eps)
