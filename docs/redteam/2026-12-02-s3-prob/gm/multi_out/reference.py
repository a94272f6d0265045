import torch

def generate_input(size: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(size, generator=g)

def ref_kernel(data):
    x = data
    return x.max(), x.argmax()

def check_implementation(data, output):
    return True
