# Hostile: takes the call over (as s7's takeover_relu.py) but writes DONE
# BEFORE computing, then computes into the output view: does the harness
# read the outputs before the child is killed?
import os, sys, time
import torch
import torch.nn as nn

def _frame_with(*names):
    f = sys._getframe()
    while f is not None and not all(n in f.f_locals for n in names):
        f = f.f_back
    return f

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        f = _frame_with("outs", "reply", "plan")
        if f is None or not f.f_locals["plan"]:
            return
        L = f.f_locals
        (x,) = L["args"]
        o = L["outs"][0]
        reply = L["reply"]
        torch.clamp_min(x, 0.0, out=o)
        os.write(reply, b"READY\n")
        os.read(0, 4)
        os.write(reply, b"DONE\n")
        torch.clamp_min(x, 0.0, out=o)
        time.sleep(120)

    def forward(self, x):
        return torch.relu(x)
