import torch


def custom_kernel(data):
    A, B = data
    if OP == "add_out":
        out = torch.empty_like(A)
        return torch.add(A, B, out=out)
    if OP == "inplace":
        return A.clone().add_(B)
    return A + B
