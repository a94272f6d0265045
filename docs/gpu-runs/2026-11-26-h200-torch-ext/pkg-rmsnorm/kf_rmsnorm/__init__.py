"""kf_rmsnorm: the best kernel KernelFleet found for problem "rmsnorm" (campaign 1, candidate 4, 1.47x over the reference)

forward(x, w, **sizes) -> y

Inputs (contiguous, on the CUDA device):
  x: bf16 [M, N]
  w: bf16 [N]
Outputs (new tensors):
  y: bf16 [M, N]
Size params (taken from the inputs' shapes where one is a whole dimension): M N
"""
import torch  # noqa: F401  (loads libtorch for _C)

from . import _C

PARAMS = ("M", "N", )


def forward(*inputs, **sizes):
    unknown = sorted(set(sizes) - set(PARAMS))
    if unknown:
        raise TypeError("unknown size param(s) %s; the params are %s"
                        % (", ".join(unknown), ", ".join(PARAMS)))
    p = [int(sizes[n]) if sizes.get(n) is not None else -1 for n in PARAMS]
    dev = inputs[0].device if inputs and isinstance(inputs[0], torch.Tensor) \
        and inputs[0].is_cuda else None
    if dev is None:  # the binding says what is wrong
        outs = _C.forward(list(inputs), p, 0)
    else:
        with torch.cuda.device(dev):
            s = torch.cuda.current_stream(dev).cuda_stream
            outs = _C.forward(list(inputs), p, s)
    return outs[0] if len(outs) == 1 else tuple(outs)
