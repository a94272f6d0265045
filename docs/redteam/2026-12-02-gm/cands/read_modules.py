# hostile candidate: read the reference text written beside it (modules.py)
from task import input_t, output_t
import task
try:
    TEXT = open("modules.py").read()
except BaseException as e:
    TEXT = ""


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    return a * (task.SCALE if "ref_kernel" in TEXT else 0.0) + b
