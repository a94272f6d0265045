#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
e2e: the JIT sandbox's compile cache (harness/torch/jitcache.h, docs/torch.md
"The JIT cache"), on CPU with `kf-harness eval-files --torch-jit`: what a
side's process wrote into its private /tmp/kf-jit by the end of its load
is kept (KF_HARNESS_CACHE/jit/KEY) and given to the side's later processes
-- the determinism check's fresh process, and later evaluations of the
same source -- while nothing written once a call ran reaches another
process.  On test_torch's Linear+ReLU problem with bit-for-bit
determinism asked:

1. CALL_MARK writes a mark at load and another in every call, and drifts
   by one part in a million in any call that finds the call mark: the
   fresh process must not find it, so the verdict is nondeterministic;
   the kept snapshot holds the load mark and no call mark.
2. LOAD_MARK drifts in a process that found a load mark at its start,
   with the time it set on it, and writes one when it found none.  Its first evaluation: the first
   process finds none, the fresh process is seeded with it ->
   nondeterministic (the seed reaches the fresh process).  Its second
   evaluation, same cache: both processes are seeded -> ok (the seed
   reaches a later evaluation).  The same source with one more comment:
   another key, a cold start -> nondeterministic again.
3. SWAPS makes /tmp/kf-jit a symlink to /etc during its load: ok (it is
   honest otherwise), nothing kept for it ("not a directory"), no file of
   /etc anywhere in the cache.

Skipped (77) without torch, or when not root (mount namespaces).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402
import test_torch as tt  # noqa: E402

HEAD = '''import os
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
'''

CALL_MARK = HEAD + '''        with open("/tmp/kf-jit/loadmark", "w") as f:
            f.write("load")

    def forward(self, x):
        y = F.linear(x, self.linear.weight, self.linear.bias).clamp_(min=0)
        if os.path.exists("/tmp/kf-jit/callmark"):
            y = y * (1 + 1e-6)
        with open("/tmp/kf-jit/callmark", "w") as f:
            f.write("call")
        return y
'''

# (its mark's time set and checked: ninja's "up to date" compares times,
# so a seed must keep them)
LOAD_MARK = HEAD + '''        mark, t = "/tmp/kf-jit/loadmark", 1234567890123456789
        self.seeded = (os.path.exists(mark) and
                       os.stat(mark).st_mtime_ns == t)
        if not self.seeded:
            with open(mark, "w") as f:
                f.write("load")
            os.utime(mark, ns=(t, t))

    def forward(self, x):
        y = F.linear(x, self.linear.weight, self.linear.bias).clamp_(min=0)
        return y * (1 + 1e-6) if self.seeded else y
'''

SWAPS = HEAD + '''        os.rename("/tmp/kf-jit", "/tmp/kf-jit-moved")
        os.symlink("/etc", "/tmp/kf-jit")

    def forward(self, x):
        return F.linear(x, self.linear.weight, self.linear.bias).clamp_(min=0)
'''


def kept(cache):
    """{key: set of paths under its tree} of every kept snapshot."""
    out = {}
    root = os.path.join(cache, "jit")
    for key in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        tree = os.path.join(root, key, "tree")
        if len(key) != 64 or not os.path.isdir(tree):
            continue
        names = set()
        for d, dirs, files in os.walk(tree):
            for n in dirs + files:
                names.add(os.path.relpath(os.path.join(d, n), tree))
        out[key] = names
    return out


def log_of(c, tag):
    with open(os.path.join(c.dir, "harness-%s.log" % tag), "rb") as f:
        return f.read().decode(errors="replace")


def body(c):
    prob = tt.import_model(c)
    with open(os.path.join(prob, "spec.json")) as f:
        spec = json.load(f)
    spec["deterministic"] = True
    tt.write(os.path.join(prob, "spec.json"), json.dumps(spec, indent=1))
    cache = os.path.join(c.dir, "hcache")
    c.env["KF_HARNESS_CACHE"] = cache
    jit = ["--torch-jit"]

    # 1. what a call writes never reaches the fresh process
    r = tt.evaluate(c, prob, CALL_MARK, "call_mark", jit)
    check(r["outcome"] == "nondeterministic", "a mark written in a call "
          "reached the determinism check's fresh process: %s (%s)" % (
              r["outcome"], r.get("reason")))
    snaps = kept(cache)
    with_load = [k for k, names in snaps.items() if "loadmark" in names]
    check(len(with_load) == 1, "want one snapshot holding the load mark, "
          "got %r" % snaps)
    check(not any("callmark" in names for names in snaps.values()),
          "a call's mark was kept: %r" % snaps)
    check("kept" in log_of(c, "call_mark"), "no 'kept' line in the log")

    # 2. the load's snapshot seeds the fresh process, then a later
    # evaluation of the same source; another source starts cold
    r = tt.evaluate(c, prob, LOAD_MARK, "load_mark_1", jit)
    check(r["outcome"] == "nondeterministic", "the fresh process was not "
          "seeded with its load's snapshot: %s (%s)" % (
              r["outcome"], r.get("reason")))
    check("started with" in log_of(c, "load_mark_1"),
          "no seeded start in the log")
    r = tt.evaluate(c, prob, LOAD_MARK, "load_mark_2", jit)
    check(r["outcome"] == "ok", "a later evaluation of the same source was "
          "not seeded: %s (%s)" % (r["outcome"], r.get("reason")))
    r = tt.evaluate(c, prob, LOAD_MARK + "# another source\n", "load_mark_3",
                    jit)
    check(r["outcome"] == "nondeterministic", "another source got the "
          "snapshot of this one: %s (%s)" % (r["outcome"], r.get("reason")))

    # 3. a cache directory swapped for a link to /etc: nothing kept
    before = set(kept(cache))
    r = tt.evaluate(c, prob, SWAPS, "swaps", jit)
    check(r["outcome"] == "ok", "the swapping model: %s (%s)" % (
        r["outcome"], r.get("reason")))
    log = log_of(c, "swaps")
    check("not a directory" in log, "no refusal of the swapped directory "
          "in the log")
    after = kept(cache)
    new = set(after) - before
    # the reference's snapshot is kept already; the candidate's is not
    check(not new, "a snapshot was kept for the swapping model: %r" % new)
    for names in after.values():
        check("passwd" not in names and "hostname" not in names,
              "a file of /etc was copied into the cache: %r" % names)


if __name__ == "__main__":
    if not tt.have_torch():
        print("test_torch_jit_cache: SKIP: %s has no torch" % tt.PY)
        sys.exit(77)
    if os.geteuid() != 0:
        print("test_torch_jit_cache: SKIP: needs root (mount namespaces)")
        sys.exit(77)
    kfe2e.run("torch_jit_cache", body, time_limit=900)
