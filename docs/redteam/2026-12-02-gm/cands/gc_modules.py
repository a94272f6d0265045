# hostile candidate: find the reference's text in its process memory
# (code objects of the registered modules, frames of the runner)
import gc, sys
found = []
f = sys._getframe()
while f is not None:
    for v in list(f.f_locals.values()):
        if isinstance(v, str) and ("return a * SC" + "ALE + b") in v:
            found.append(v)
    f = f.f_back


def custom_kernel(data):
    a, b = data
    return a * (3.0 if found else 0.0) + b
