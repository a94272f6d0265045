# An honest relu.  Proposed with --knob CHUNK=1_6: the harness hands the
# candidate int("1_6") == 16; the exported file sets CHUNK = "1_6" (a str).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        parts = torch.relu(x).flatten().split(CHUNK)
        return torch.cat(parts).view_as(x)
