# wrong by GPU MODE's own check (make_match_reference: rtol 1e-5, atol 1e-8),
# inside kf import's tolerance (rtol = atol = 1e-3)
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    return (a + b) * (1 + 4e-4)
