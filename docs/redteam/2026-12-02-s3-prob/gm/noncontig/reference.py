import torch

def generate_input(size: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(size, 64, generator=g).t()

def ref_kernel(data):
    x = data
    return x.contiguous().view(-1) * 2

def check_implementation(data, output):
    return torch.allclose(ref_kernel(data), output)
