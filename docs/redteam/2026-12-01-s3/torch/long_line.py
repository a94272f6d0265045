# RED TEAM 2026-12-01-s3: a reply line far longer than the harness's line
# buffer, without a newline, written from inside the timed call (not the warm
# call: the first call of forward is the warm one, so a counter in the
# instance skips it), then MODE 0 exits, MODE 1 spins, MODE 2 returns the
# right answer (the runner then writes its DONE after the junk).
import os
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls >= 2:
            os.write(2, b"A" * (1 << 17))
            if MODE == 0:
                os._exit(0)
            if MODE == 1:
                while True:
                    pass
        return torch.relu(x)
