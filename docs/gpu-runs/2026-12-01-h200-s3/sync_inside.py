# An honest candidate of sinsum_torch_cuda that waits on the GPU from the
# host inside its call (a synchronize, then .item()): under the go word's
# protocol it cannot finish queuing before the eval's go word, so the
# eval writes it after GO_WAIT_MS and reads the late QUEUED before DONE
# (backend.c p_warm, p_call).  Expected: ok, a little slower than the
# reference (its host time after the go word is its own).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        y = torch.sin(x[:, None] * w[None, :]).sum(dim=1)
        torch.cuda.synchronize()
        if y.abs().max().item() < 0:
            y = -y
        return y
