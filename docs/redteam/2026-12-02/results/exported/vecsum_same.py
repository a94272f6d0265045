"""kf_vecsum: the best kernel KernelFleet found for problem "vecsum" (campaign 1, candidate 1, 1.10x over the reference).

Written by `kf campaign export 1 --format kernelbench`: the kernel as it was
measured (knobs defined), the kernel ABI header and a binding that checks
the inputs against the problem's spec, allocates the outputs and calls
kf_launch on the calling thread.  Built at import by
torch.utils.cpp_extension.load_inline (the kernel is C11: compiled by cc first, then linked in).

Entry points: custom_kernel(data) (GPU MODE) and ModelNew (KernelBench;
its constructor takes and ignores the problem's init arguments).
"""
import hashlib
import os
import subprocess
import tempfile

import torch
from torch.utils.cpp_extension import load_inline

_KF_ABI = (
    "/* SPDX-License-Identifier: Apache-2.0 */\n"
    "/*\n"
    " * harness/core/kf_candidate.h -- the ABI every candidate and reference kernel\n"
    " * implements.  Shipped with KernelFleet; a candidate includes it and\n"
    " * defines exactly one function:\n"
    " *\n"
    " *   int kf_launch(const kf_args *a);\n"
    " *\n"
    " * CPU candidates are C sources compiled to a shared object; CUDA\n"
    " * candidates are .cu sources whose kf_launch is `extern \"C\"` and launches\n"
    " * its kernels on a->stream.  Knobs arrive as -DNAME=value.  kf_launch\n"
    " * returns 0 on success; any other value is reported as a crash.\n"
    " *\n"
    " * What a candidate may rely on: inputs hold the values the harness drew\n"
    " * (never the same twice), outputs are poisoned before each call and must be\n"
    " * written completely, workspace holds workspace_bytes of scratch with\n"
    " * undefined contents.  What it must not do: keep state between calls, read\n"
    " * or write outside these buffers, start threads, processes or streams, or\n"
    " * touch files or the network.  The harness checks all of this.\n"
    " */\n"
    "#ifndef KF_CANDIDATE_H\n"
    "#define KF_CANDIDATE_H\n"
    "\n"
    "#include <stddef.h>\n"
    "#include <stdint.h>\n"
    "\n"
    "#ifdef __cplusplus\n"
    "extern \"C\" {\n"
    "#endif\n"
    "\n"
    "#define KF_ABI_VERSION 1\n"
    "#define KF_MAX_DIMS 4\n"
    "\n"
    "typedef struct {\n"
    "  void *data;               /* host memory (cpu) or device memory (cuda) */\n"
    "  int32_t dtype;            /* kf_dtype order: f32 f64 bf16 f16 i32 i64 bool */\n"
    "  int32_t ndim;\n"
    "  int64_t dims[KF_MAX_DIMS];\n"
    "  int64_t numel;\n"
    "} kf_tensor;\n"
    "\n"
    "typedef struct {\n"
    "  int32_t abi_version;      /* KF_ABI_VERSION */\n"
    "  int32_t n_inputs;\n"
    "  int32_t n_outputs;\n"
    "  int32_t n_params;\n"
    "  const kf_tensor *inputs;\n"
    "  kf_tensor *outputs;\n"
    "  const int64_t *params;    /* size parameters, in spec order */\n"
    "  void *workspace;\n"
    "  size_t workspace_bytes;\n"
    "  void *stream;             /* cudaStream_t for cuda; NULL for cpu */\n"
    "} kf_args;\n"
    "\n"
    "typedef int (*kf_launch_fn)(const kf_args *a);\n"
    "\n"
    "#ifdef __cplusplus\n"
    "}\n"
    "#endif\n"
    "\n"
    "#endif\n"
    ""
)
_KF_KERNEL = (
    "/*\n"
    " * Best kernel found by KernelFleet for problem \"vecsum\".\n"
    " *\n"
    " *   campaign    1 (vecsum)\n"
    " *   candidate   1, template \"accum\", proposer evolution\n"
    " *   device      cpu AMD EPYC (x86-64-v4)\n"
    " *   time        2.94 ms median (spread 32.0%, 59 repetitions), reference 3.24 ms\n"
    " *   timed in    the final showdown (re-verified and re-timed together with the reference)\n"
    " *   speedup     1.104x over the reference, 4.7% of roofline\n"
    " *   verified    outcome ok, task 1\n"
    " *   written     2026-12-02 03:36:59Z\n"
    " *\n"
    " * The knobs it was measured with are defined below, so the file builds\n"
    " * on its own (kf_candidate.h is in KernelFleet's harness/ directory):\n"
    " *   cc -O3 -shared -fPIC -I<kernelfleet>/harness FILE.c\n"
    " */\n"
    "#ifndef UNROLL\n"
    "#define UNROLL 4\n"
    "#endif\n"
    "\n"
    "/* SPDX-License-Identifier: Apache-2.0 */\n"
    "/*\n"
    " * problems/cpu/vecsum/accum.c -- sum with UNROLL independent f32\n"
    " * accumulators.\n"
    " *\n"
    " * One accumulator makes every add wait for the previous one (about 4\n"
    " * cycles each); UNROLL of them let the adds overlap.  It also splits the\n"
    " * sum into UNROLL shorter partial sums, which is more accurate, not less.\n"
    " * N % UNROLL leftover elements go through a scalar tail.\n"
    " *\n"
    " * spec.json offers UNROLL >= 4 only: at N = 2^20 'offset' values (~1000)\n"
    " * one or two f32 partial sums pass 2^28, where the f32 spacing (32, 64,\n"
    " * 128) rounds every add of ~1000 the same way and the sum drifts by 0.4%\n"
    " * to 1%, far outside the tolerance.  Four or more keep each partial sum\n"
    " * below 2^28.\n"
    " */\n"
    "#include \"kf_candidate.h\"\n"
    "\n"
    "#ifndef UNROLL\n"
    "#error \"knob UNROLL must be given as -DUNROLL=value\"\n"
    "#endif\n"
    "_Static_assert(UNROLL >= 1 && UNROLL <= 32, \"UNROLL must be 1..32\");\n"
    "\n"
    "int kf_launch(const kf_args *a) {\n"
    "  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||\n"
    "      a->n_outputs != 1 || a->n_params != 1)\n"
    "    return 1;\n"
    "  const int64_t N = a->params[0];\n"
    "  const float *x = a->inputs[0].data;\n"
    "  float acc[UNROLL];\n"
    "  for (int u = 0; u < UNROLL; u++) acc[u] = 0.0f;\n"
    "  int64_t i = 0;\n"
    "  for (; i + UNROLL <= N; i += UNROLL)\n"
    "    for (int u = 0; u < UNROLL; u++) acc[u] += x[i + u];\n"
    "  for (; i < N; i++) acc[0] += x[i];\n"
    "  float s = 0.0f;\n"
    "  for (int u = 0; u < UNROLL; u++) s += acc[u];\n"
    "  ((float *)a->outputs[0].data)[0] = s;\n"
    "  return 0;\n"
    "}\n"
    ""
)
_KF_BINDING = (
    "// kf_vecsum: the best kernel KernelFleet found for problem \"vecsum\" (campaign 1, candidate 1, 1.10x over the reference)\n"
    "// Generated by `kf campaign export --format gpumode|kernelbench` or `kf wrap`; the shapes\n"
    "// are the problem's spec.json, the kernel _KF_KERNEL beside it.\n"
    "#include <torch/extension.h>\n"
    "#include <vector>\n"
    "\n"
    "#include \"kf_candidate.h\"\n"
    "\n"
    "extern \"C\" int kf_launch(const kf_args *a);\n"
    "\n"
    "static kf_tensor kf_view(const torch::Tensor &t, int32_t dtype) {\n"
    "  kf_tensor k = {};\n"
    "  k.data = t.data_ptr();\n"
    "  k.dtype = dtype;\n"
    "  k.ndim = (int32_t)t.dim();\n"
    "  for (int64_t d = 0; d < t.dim() && d < KF_MAX_DIMS; d++)\n"
    "    k.dims[d] = t.size(d);\n"
    "  k.numel = t.numel();\n"
    "  return k;\n"
    "}\n"
    "\n"
    "static void kf_check(const torch::Tensor &t, const char *name,\n"
    "                     torch::ScalarType dt,\n"
    "                     const std::vector<int64_t> &shape) {\n"
    "  TORCH_CHECK(t.scalar_type() == dt, \"input '\", name, \"': dtype \",\n"
    "              t.scalar_type(), \", expected \", dt);\n"
    "  TORCH_CHECK(t.sizes().vec() == shape, \"input '\", name, \"': shape \",\n"
    "              t.sizes(), \", expected \", c10::IntArrayRef(shape));\n"
    "  TORCH_CHECK(t.is_contiguous(), \"input '\", name,\n"
    "              \"' must be contiguous\");\n"
    "  TORCH_CHECK(t.is_cpu(), \"input '\", name, \"' must be on the CPU\");\n"
    "}\n"
    "\n"
    "// forward(inputs, params): params in spec order, -1 where the\n"
    "// value is to be taken from the inputs' shapes.  A CUDA kernel runs\n"
    "// on torch's current stream of the inputs' device, that device\n"
    "// current: looked up here, since the same lookup in Python (a\n"
    "// device guard and the current stream) took 29 us of each call.\n"
    "static std::vector<torch::Tensor> forward(\n"
    "    std::vector<torch::Tensor> inputs, std::vector<int64_t> params) {\n"
    "  TORCH_CHECK(inputs.size() == 1, \"vecsum takes 1 input(s), got \",\n"
    "              inputs.size());\n"
    "  TORCH_CHECK(params.size() == 1, \"vecsum has 1 size param(s), got \",\n"
    "              params.size());\n"
    "  int64_t p_N = params[0];\n"
    "  if (p_N < 0 && inputs[0].dim() == 1) p_N = inputs[0].size(0);\n"
    "  TORCH_CHECK(p_N >= 0, \"size param N: pass N=VALUE (or inputs of the expected rank)\");\n"
    "  kf_check(inputs[0], \"x\", torch::kFloat, {(p_N)});\n"
    "  for (size_t i = 1; i < inputs.size(); i++)\n"
    "    TORCH_CHECK(inputs[i].device() == inputs[0].device(),\n"
    "                \"all inputs must be on one device\");\n"
    "  auto opts = inputs[0].options();\n"
    "  std::vector<torch::Tensor> outs;\n"
    "  outs.push_back(torch::empty({(1)}, opts.dtype(torch::kFloat)));  // sum\n"
    "  const int64_t ws_bytes = 0;\n"
    "  torch::Tensor ws = ws_bytes ? torch::empty({ws_bytes}, opts.dtype(torch::kByte)) : torch::Tensor();\n"
    "  kf_tensor in[1], out[1];\n"
    "  in[0] = kf_view(inputs[0], 0);\n"
    "  out[0] = kf_view(outs[0], 0);\n"
    "  const int64_t sizes[1] = {p_N};\n"
    "  kf_args a = {};\n"
    "  a.abi_version = KF_ABI_VERSION;\n"
    "  a.n_inputs = 1;\n"
    "  a.n_outputs = 1;\n"
    "  a.n_params = 1;\n"
    "  a.inputs = in;\n"
    "  a.outputs = out;\n"
    "  a.params = sizes;\n"
    "  a.workspace = ws_bytes ? ws.data_ptr() : nullptr;\n"
    "  a.workspace_bytes = (size_t)ws_bytes;\n"
    "  a.stream = nullptr;\n"
    "  const int rc = kf_launch(&a);\n"
    "  TORCH_CHECK(rc == 0, \"kf_launch returned \", rc);\n"
    "  return outs;\n"
    "}\n"
    "\n"
    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
    "  m.def(\"forward\", &forward, \"vecsum: the kernel KernelFleet verified\");\n"
    "}\n"
    ""
)


def _kf_put(path, text):
    # written only when it differs: a file rewritten with a new time
    # makes ninja build again what depends on it
    try:
        with open(path) as f:
            if f.read() == text:
                return False
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)
    return True


def _kf_build():
    # one directory per content: the same sources reuse torch's build
    h = hashlib.sha256((_KF_ABI + _KF_KERNEL + _KF_BINDING).encode()).hexdigest()[:16]
    name = "kf_vecsum_" + h
    inc = os.path.join(tempfile.gettempdir(), name)
    os.makedirs(inc, exist_ok=True)
    _kf_put(os.path.join(inc, "kf_candidate.h"), _KF_ABI)
    src = os.path.join(inc, "kernel.c")
    obj = os.path.join(inc, "kernel.o")
    if _kf_put(src, _KF_KERNEL) or not os.path.exists(obj):
        # into place whole: a compile cut short leaves no kernel.o
        subprocess.check_call([os.environ.get("CC", "cc"), "-O3",
                               "-std=c11", "-fPIC", "-I", inc, "-c",
                               src, "-o", obj + ".part"])
        os.replace(obj + ".part", obj)
    return load_inline(name, cpp_sources=[_KF_BINDING],
                       extra_include_paths=[inc],
                       extra_cflags=["-O3"], extra_ldflags=[obj])


_KF_MOD = _kf_build()
PARAMS = ("N", )
_NO_SIZES = [-1] * len(PARAMS)


def _kf_forward(*inputs, **sizes):
    p = _NO_SIZES
    if sizes:
        unknown = sorted(set(sizes) - set(PARAMS))
        if unknown:
            raise TypeError("unknown size param(s) %s; the params are %s"
                            % (", ".join(unknown), ", ".join(PARAMS)))
        p = [int(sizes[n]) if sizes.get(n) is not None else -1
             for n in PARAMS]
    outs = _KF_MOD.forward(inputs, p)
    return outs[0] if len(outs) == 1 else tuple(outs)


def custom_kernel(data):
    """GPU MODE's entry point: data is the input tensor, or a tuple of them
    in the spec's order (x)."""
    args = tuple(data) if isinstance(data, (tuple, list)) else (data,)
    return _kf_forward(*args)


class ModelNew(torch.nn.Module):
    """KernelBench's entry point: forward(x)."""

    def __init__(self, *init_inputs, **init_kwargs):
        super().__init__()

    def forward(self, *inputs):
        return _kf_forward(*inputs)
