# RED TEAM 2026-12-01-s3: the torch analogue of cpu/torn_reply_hang.c.  In its
# first call the candidate writes a reply line without its newline ("DON")
# on the child's reply pipe (fd 2) and then exits (MODE 0) or spins (MODE 1).
import os
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        os.write(2, b"DON")
        if MODE == 1:
            while True:
                pass
        os._exit(0)
        return torch.relu(x)
