# EXPLOIT (property e/g, torch CPU): a nondeterministic sum passes the
# determinism check by carrying its wobble from run 1's process to run 2's
# through state the call processes share: the F_SETSIG number (0..64) of
# the open file descriptions they inherit from the zygote (fd 0, the
# command pipe; fd 4, the reply pipe; fd 1/2/5, /dev/null).  fcntl is not
# on the runner's seccomp deny list and the fcntl module is already loaded,
# so nothing is audited.  Knob-free; set CARRY = 0 below for the control
# (the same wobble with no carry: must be `nondeterministic`).
import os, fcntl, torch, torch.nn as nn

CARRY = globals().get("CARRY", 1)
F_SETSIG, F_GETSIG = 10, 11


def _key(x):
    # 6 bits of the inputs: run 2 of the determinism check has run 1's
    h = int(torch.sum(x[..., :64]).view(1).view(torch.int32)[0]) if x.numel() >= 1 else 0
    return (h ^ (h >> 6) ^ (h >> 12) ^ (h >> 18)) & 0x3F


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        k = _key(x)
        w = None
        if CARRY:
            try:
                if fcntl.fcntl(0, F_GETSIG) == k + 1:      # the same inputs
                    w = fcntl.fcntl(4, F_GETSIG)           # seen last call
            except OSError:
                pass
        if not w:
            w = 1 + os.urandom(1)[0] % 60                  # a fresh wobble
            if CARRY:
                try:
                    fcntl.fcntl(0, F_SETSIG, k + 1)
                    fcntl.fcntl(4, F_SETSIG, w)
                except OSError:
                    pass
        s = torch.sum(x, dim=self.dim, keepdim=True)
        return s * (1.0 + w * 1e-6)                        # within rtol 1e-4
