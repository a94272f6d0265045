"""Writes hand-made C problems (variants of problems/cpu/vecsum) into this folder."""
import json, os, shutil, sys
H = os.path.dirname(os.path.abspath(__file__))
SRC = "/work/main/problems/cpu/vecsum"
base = json.load(open(os.path.join(SRC, "spec.json")))
base["description"] = "red team variant"
base["sizes"]["check"] = [{"N": 1}, {"N": 7}, {"N": 257}]
base["sizes"]["bench"] = {"N": 4097}
base["templates"] = [base["templates"][0]]

def mk(name, text=None, mut=None, ref=None):
    d = os.path.join(H, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copy(os.path.join(SRC, "accum.c"), d)
    if ref is None:
        shutil.copy(os.path.join(SRC, "reference.c"), d)
    else:
        open(os.path.join(d, "reference.c"), "w").write(ref)
    s = json.loads(json.dumps(base)); s["name"] = name
    if mut: mut(s)
    if text is None: text = json.dumps(s, indent=1)
    open(os.path.join(d, "spec.json"), "w").write(text)

def huge(s): s["sizes"]["bench"] = {"N": 2**38}; s["bytes"] = "4*N + 4"
mk("c_huge_tensor", mut=huge)
def huge8(s):
    s["sizes"]["bench"] = {"N": 2**38}
    s["inputs"] = [dict(s["inputs"][0], name="x%d" % i) for i in range(8)]
mk("c_huge_8inputs", mut=huge8)
mk("c_huge_ws", mut=lambda s: s.__setitem__("workspace_bytes", 2**40))
mk("c_mid_tensor", mut=lambda s: s["sizes"].__setitem__("bench", {"N": 3 * 2**30}))
t = json.dumps(dict(base, name="c_nan_tol"), indent=1).replace('"rtol": 0.0001', '"rtol": NaN')
mk("c_nan_tol", text=t)
t = json.dumps(dict(base, name="c_inf_tol"), indent=1).replace('"rtol": 0.0001', '"rtol": 1e400')
mk("c_inf_tol", text=t)
mk("c_desc_esc", mut=lambda s: s.__setitem__("description", "d \x1b]0;SPEC-TITLE\x07\x1b[2J\x1b[35mMAGENTA\x1b[0m"))
mk("c_tpl_desc_esc", mut=lambda s: s["templates"][0].__setitem__("description", "t \x1b]0;TPL-TITLE\x07\x1b[2J\x1b[36mCYAN\x1b[0m"))
mk("c_name_uni", mut=lambda s: s.__setitem__("name", "vec\u202esum"))
mk("c_neg_shape", mut=lambda s: s["inputs"][0].__setitem__("shape", ["N - 8"]))
mk("c_zero_int_shape", mut=lambda s: s["inputs"][0].__setitem__("shape", [0]))
mk("c_float_size", mut=lambda s: s["sizes"].__setitem__("bench", {"N": 4097.5}))
mk("c_bool_size", mut=lambda s: s["sizes"].__setitem__("bench", {"N": True}))
mk("c_bigfloat_size", mut=lambda s: s["sizes"].__setitem__("bench", {"N": 1e300}))
mk("c_empty_check", mut=lambda s: s["sizes"].__setitem__("check", []))
mk("c_empty_dists", mut=lambda s: s["inputs"][0].__setitem__("dists", []))
mk("c_flops_overflow", mut=lambda s: s.__setitem__("flops", "N*N*N*N*N*N"))
LOOP = '#include "kf_candidate.h"\nint kf_launch(const kf_args *a) { volatile int z = 1; while (z) {} return 0; }\n'
mk("c_ref_hang", ref=LOOP)
STATE = open(os.path.join(SRC, "reference.c")).read().replace("double s = 0.0;", "static int calls; calls++; double s = (calls > 3) ? 1.0 : 0.0;")
mk("c_ref_state", ref=STATE)
SEGV = '#include "kf_candidate.h"\nint kf_launch(const kf_args *a) { ((volatile float *)0)[0] = 1; return 0; }\n'
mk("c_ref_segv", ref=SEGV)
PART = open(os.path.join(SRC, "reference.c")).read().replace("for (int64_t i = 0; i < N; i++)", "for (int64_t i = 0; i < N && i < 1000; i++)")
mk("c_ref_partial", ref=PART)
mk("c_name_esc", mut=lambda s: s.__setitem__("name", "vec\x1b]0;NAME-TITLE\x07sum"))
