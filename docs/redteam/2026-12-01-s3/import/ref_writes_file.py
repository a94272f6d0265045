# RED TEAM 2026-12-01-s3: a KernelBench reference whose module-level code
# writes a file outside, reads /etc/hostname, and starts a thread that keeps
# writing: kf import must run it sandboxed (no files) and refuse or ignore.
import threading
import torch
import torch.nn as nn

try:
    with open("/tmp/rt3_import_pwned", "w") as f:
        f.write("module level ran unsandboxed\n")
except Exception:
    pass


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        try:
            with open("/tmp/rt3_import_pwned_fwd", "w") as f:
                f.write("forward ran unsandboxed\n")
        except Exception:
            pass
        return torch.relu(x)


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return []
