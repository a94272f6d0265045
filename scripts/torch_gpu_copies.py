#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/torch_gpu_copies.py OUTDIR PROBLEM... -- GPU copies of PyTorch
problems (problems/torch/P): each copied to OUTDIR/P with the spec's
torch device set to "cuda" and its bench size set to a GPU size, its check
sizes kept.  Used by scripts/gpu-torch-remote and gpu-torch-sweep-remote,
on the GPU machine; the shipped specs stay CPU problems (CI's torch has
no GPU).

Why these sizes: the shipped bench sizes (B=16, a few MiB) are a few
microseconds of GPU work, so a GPU evaluation would time the launch and
the timer, not the kernel (every time 25-40 us with spreads of 18-64% on
the H100, 2026-11-26).  Each size below moves 128-384 MiB, far past an
H100's 50 MiB or an H200's 60 MiB L2, so every side streams from HBM for
tens of microseconds; matmul_small is compute-bound instead (2 GFLOP).
A problem not in the table keeps its shipped size (the copy says so on
stderr).  Exit status 0, or 2 with the problem named."""
import json
import os
import shutil
import sys

GPU = {
    "kb1_softmax": {"B": 2048, "D": 16384},
    "kb1_relu": {"B": 2048, "D": 16384},
    "kb1_gelu": {"B": 2048, "D": 16384},
    "kb1_sigmoid": {"B": 2048, "D": 16384},
    "kb1_tanh": {"B": 2048, "D": 16384},
    "kb1_leaky_relu": {"B": 2048, "D": 16384},
    "kb1_argmax": {"B": 2048, "D": 16384},
    "kb1_mean_reduction": {"B": 2048, "D": 16384},
    "kb1_sum_reduction": {"B": 2048, "D": 16384},
    "kb1_layernorm": {"B": 65536},
    "kb1_conv1d": {"B": 128, "L": 16384},
    "kb1_matvec": {"M": 8192, "K": 8192},
    "kb1_matmul_small": {"M": 1024, "K": 1024, "N": 1024},
    "gm_vectoradd": {"N": 4096},
}


def copy(root, out, name, device="cuda"):
    """Writes OUT/NAME from ROOT/problems/torch/NAME; returns its spec."""
    src = os.path.join(root, "problems", "torch", name)
    if not os.path.isfile(os.path.join(src, "spec.json")):
        raise ValueError("no problem problems/torch/%s (spec.json)" % name)
    dst = os.path.join(out, name)
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    with open(os.path.join(dst, "spec.json")) as f:
        spec = json.load(f)
    spec["torch"]["device"] = device
    bench = GPU.get(name)
    if device == "cuda" and bench and set(bench) == set(spec["params"]):
        spec["sizes"]["bench"] = bench
    elif device == "cuda":
        print("torch_gpu_copies: %s keeps its bench size %s (no GPU size "
              "for it)" % (name, spec["sizes"]["bench"]), file=sys.stderr)
    with open(os.path.join(dst, "spec.json"), "w") as f:
        json.dump(spec, f, indent=1)
    return spec


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) > 1 else 2
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    os.makedirs(argv[1], exist_ok=True)
    # KF_TORCH_DEVICE=cpu: CPU copies at the shipped sizes (a dry run of
    # the GPU scripts on a machine without a GPU)
    device = os.environ.get("KF_TORCH_DEVICE", "cuda")
    if device not in ("cuda", "cpu"):
        print("torch_gpu_copies: KF_TORCH_DEVICE='%s': cuda or cpu" % device,
              file=sys.stderr)
        return 2
    for p in argv[2:]:
        try:
            copy(root, argv[1], p, device)
        except (ValueError, OSError, KeyError) as e:
            print("torch_gpu_copies: %s: %s" % (p, e), file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
