#!/bin/bash
# Extracts GM_TASK/GM_UTILS/GM_LAYOUT/GM_LAYOUT_SUB from tests/e2e/test_torch_problems.py
# into /tmp/rt-gm, builds /tmp/rt-gm/base (the test's layout) and imports it
# to /tmp/rt-gm/base_out. Run first; the other scripts use these files.
set -e
mkdir -p /tmp/rt-gm
/usr/bin/python3 - <<'PY'
import os, re
src = open("/work/main/tests/e2e/test_torch_problems.py").read()
for name in ("GM_TASK", "GM_UTILS", "GM_LAYOUT", "GM_LAYOUT_SUB"):
    m = re.search(r"^%s = '''(.*?)'''" % name, src, re.S | re.M)
    open("/tmp/rt-gm/%s.txt" % name, "w").write(m.group(1))
d = "/tmp/rt-gm/base"
os.makedirs(d, exist_ok=True)
for f, n in (("reference.py", "GM_LAYOUT"), ("task.py", "GM_TASK"), ("utils.py", "GM_UTILS")):
    open(os.path.join(d, f), "w").write(open("/tmp/rt-gm/%s.txt" % n).read())
open("/tmp/rt-gm/sub.py", "w").write(open("/tmp/rt-gm/GM_LAYOUT_SUB.txt").read())
PY
rm -rf /tmp/rt-gm/base_out
KF_PYTHON=/usr/bin/python3 /work/main/build/kf import gpumode /tmp/rt-gm/base --out /tmp/rt-gm/base_out --case '{"size": 64, "seed": 3}'
