# SPDX-License-Identifier: Apache-2.0
"""whoist.py SRC DST -- a pipe_rows template (persistent blocks walking
rows) with the weight vector w loaded into registers once per block,
before the row loop, instead of from L2/L1 for every row: 16 KB per row
at N = 8192, as many bytes as the row itself crossing L2.  Exit 1 if SRC
has no persistent kernel of that shape."""
import sys

src = open(sys.argv[1]).read()
anchor = "  if (row < M) LOAD_ROW(row);\n"
use = "unpack8(__ldg(reinterpret_cast<const uint4 *>(w + c)), wf);"
i = src.find(anchor)
if i < 0 or src.find(use, i) < 0:
    sys.stderr.write("%s: no persistent row loop with a per-row w load\n" % sys.argv[1])
    sys.exit(1)
hoist = ("  uint4 wr_[VPT_EFF];\n"
         "#pragma unroll\n"
         "  for (int k = 0; k < VPT_EFF; k++) {\n"
         "    const int64_t c = ((int64_t)k * THREADS + tid) * 8;\n"
         "    if (c < N) wr_[k] = __ldg(reinterpret_cast<const uint4 *>(w + c));\n"
         "  }\n")
j = i + len(anchor)
src = src[:j] + hoist + src[j:]
k = src.find(use, j + len(hoist))
src = src[:k] + "unpack8(wr_[k], wf);" + src[k + len(use):]
open(sys.argv[2], "w").write(src)
