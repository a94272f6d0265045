# candidate text carrying its own _kf_module lines: registers nothing for
# the harness; its own def runs in its own process only
import sys, types

def _kf_module(name, text):
    m = types.ModuleType(name); sys.modules[name] = m; exec(text, m.__dict__)

_kf_module("task2", "SCALE = 2.0\n")
import task2


def custom_kernel(data):
    a, b = data
    return a * task2.SCALE + b
