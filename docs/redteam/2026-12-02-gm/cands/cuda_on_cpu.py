# an honest-looking submission written for a GPU, on a cpu spec: the
# candidate runs outside _OnHost, so .cuda() must fail, not be mapped
import torch
from task import input_t, output_t
import task


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    g = torch.Generator(device='cuda')
    return (a * task.SCALE + b).cuda()
