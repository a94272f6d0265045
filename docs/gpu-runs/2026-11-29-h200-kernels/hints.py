#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""docs/gpu-runs/2026-11-29-h200-kernels/hints.py SRC DST MODE -- an
experiment's variant of a row template's multi-sweep (loop) path, where
each sweep reads the row x again (rmsnorm and softmax: two sweeps;
layernorm: three); exits 1 for a file without such a path:
  u   both sweeps unrolled by 4 (four 16-byte loads in flight per thread;
      today one, where causal_softmax's loop path found four needed on an
      H200)
  uh  u, and every sweep but the last keeps its lines in L2
      (createpolicy evict_last, as Triton's evict_last) for the next;
      the last reads them evict-first (__ldcs)
Not a template of the repository: an input of hints.sh."""
import sys

src, dst, mode = sys.argv[1:4]
s = open(src).read()
loop = "    for (int64_t c = (int64_t)tid * 8; c < N; c += (int64_t)THREADS * 8) {\n"
ld = "unpack8(__ldg(reinterpret_cast<const uint4 *>(xr + c)), f);"
n = s.count(ld)
if s.count(loop) < 2 or n < 2:
    sys.exit("%s: no two-sweep path of this shape (%d loops, %d row loads)"
             % (src, s.count(loop), n))
s = s.replace(loop, "#pragma unroll 4\n" + loop)
if mode == "uh":
    # every sweep but the last keeps its lines; the last reads them
    # evict-first (layernorm has three sweeps, rmsnorm and softmax two)
    s = s.replace(ld, "unpack8(ld_evict_last(xr + c), f);", n - 1)
    s = s.replace(ld, "unpack8(__ldcs(reinterpret_cast<const uint4 *>(xr + c)), f);", 1)
    helper = '''
__device__ __forceinline__ uint4 ld_evict_last(const uint16_t *p) {
  uint4 r;
  uint64_t pol;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  asm("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p), "l"(pol));
  return r;
}
'''
    inc = '#include "kf_candidate.h"\n'
    assert inc in s
    s = s.replace(inc, inc + helper, 1)
open(dst, "w").write(s)
