# Makes a directory path whose UTF-8 bytes put a 2-byte character across
# byte 899 of kf import's 900-byte description buffer, and copies a
# plain relu reference into it.  Prints the file's path.
import os, shutil, sys
pre = "Imported by `kf import kernelbench` from "
base = "/tmp/rt3c/lp/"
comps = []
path = base
# components of 'é' x 100 (200 bytes), then pad with ASCII to shift parity
while len((pre + path).encode()) < 899:
    path += "é" * 100 + "/"
# make sure a 2-byte char straddles byte 899 (index 898..899)
b = (pre + path).encode()
cut = 899
# if byte 898 is a lead byte (0xC3), the cut splits the char
if b[cut - 1] != 0xC3:
    path = base + "x" + path[len(base):]
b = (pre + path).encode()
assert b[cut - 1] == 0xC3, b[cut-3:cut+2]
os.makedirs(path, exist_ok=True)
dst = os.path.join(path, "relu.py")
shutil.copy(sys.argv[1], dst)
print(dst)
