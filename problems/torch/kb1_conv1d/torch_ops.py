import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        w, b = self.conv1d.weight, self.conv1d.bias
        if OP == "unfold":
            k = w.shape[2]
            cols = x.unfold(2, k, 1)                  # B, C, L-k+1, k
            y = torch.einsum("bclk,ock->bol", cols, w)
            return y + b[None, :, None]
        return F.conv1d(x, w, b)
