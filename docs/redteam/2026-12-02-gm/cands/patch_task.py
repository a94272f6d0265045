# hostile candidate: change the problem's module in its own process, hoping
# the reference (or the check) sees it; then a wrong answer
import sys, task
task.SCALE = 2.0
sys.modules["utils"].make_match_reference = lambda r, **k: (lambda d, o: True)
import torch
torch.allclose = lambda *a, **k: True


def custom_kernel(data):
    a, b = data
    return a * task.SCALE + b
