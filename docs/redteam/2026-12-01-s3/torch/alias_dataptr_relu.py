# RED TEAM 2026-12-01-s3: the alias_out_relu attack of the second red team
# of 2026-11-30 (return the harness's own output view, written in place:
# no allocation, no copy) was closed by runner.py's address checks
# (_put_one: `not lo <= res.data_ptr() < hi`; _put: _in_outputs), which
# read Tensor.data_ptr -- a Python attribute the candidate's process can
# replace.  This candidate finds `outs` in its caller's frame, writes relu
# into the output view in place, returns a second view object of it, and
# makes data_ptr lie for that one object only.  The copy the runner then
# makes (o.copy_(view of o)) is a no-op in ATen (same data, same strides).
# MODE "honest": torch.relu(x), for the twin.  MODE "nolie": the same
# aliasing without the data_ptr lie (the control: must be refused).
import sys
import torch
import torch.nn as nn

_real_data_ptr = torch.Tensor.data_ptr


def _lying_data_ptr(self):
    if getattr(self, "_kf_alias", False):
        return 64  # anywhere but the output buffer
    return _real_data_ptr(self)


if MODE not in ("honest", "nolie"):
    torch.Tensor.data_ptr = _lying_data_ptr


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if MODE == "honest":
            return torch.relu(x)
        f = sys._getframe(1)
        outs = None
        while f is not None:
            o = f.f_locals.get("outs")
            if isinstance(o, (list, tuple)) and o and isinstance(o[0], torch.Tensor):
                outs = o
                break
            f = f.f_back
        if outs is None or outs[0].shape != x.shape:
            return torch.relu(x)
        out = outs[0]
        torch.clamp_min(x, 0.0, out=out)
        v = out.view(out.shape)
        v._kf_alias = True
        return v
