# A hashing-style model: init takes a Mersenne-prime modulus 2**61 - 1.
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
    def forward(self, x):
        # x: int64 keys; (x * 31 + 7) mod p, then mod 1000 -> bucket
        return ((x * 31 + 7) % self.p) % 1000
def get_inputs(): return [torch.randint(0, 1 << 40, (4096,), dtype=torch.int64)]
def get_init_inputs(): return [2**61 - 1]
