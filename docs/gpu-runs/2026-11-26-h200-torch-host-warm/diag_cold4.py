# Where to put an untimed warm call so that the timed call's host dispatch
# is not a cold cache's: before or after the timed inputs reach the GPU.
import statistics, time, torch, triton, triton.language as tl

@triton.jit
def relu_flat(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x < 0, 0.0, x), mask=mask)

def tri(x):
    y = torch.empty_like(x)
    n = x.numel()
    relu_flat[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096, num_warps=8)
    return y

comp = torch.compile(torch.relu)

@triton.jit
def harness_k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

hbuf = torch.zeros(4096, device="cuda")
def harness_warm():
    # harness-owned: no candidate code; the libraries' hot paths
    for _ in range(3):
        harness_k[(1,)](hbuf, 4096, BLOCK=4096)
        torch.relu(hbuf)
        torch.empty_like(hbuf)
xh = torch.randn(2048, 16384)
dummy = torch.randn(2048, 16384, device="cuda")
flush = torch.empty(100 << 20, dtype=torch.uint8, device="cuda")
ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
ev[0].record(); torch.cuda._sleep(1000000); ev[1].record(); torch.cuda.synchronize()
spin = int(1000000 * 0.3 / ev[0].elapsed_time(ev[1]))
def null():
    flush.fill_(2); torch.cuda._sleep(spin); ev[0].record(); ev[1].record(); torch.cuda.synchronize()
def one(fn, variant):
    time.sleep(0.05)
    if variant == "warm-first":
        fn(dummy); torch.cuda.synchronize()
    x = xh.to("cuda"); torch.cuda.synchronize()
    if variant == "warm-after-inputs":
        fn(dummy); torch.cuda.synchronize()
    if variant == "harness-warm":
        null()
        harness_warm()
    if variant != "harness-warm":
        null()
    flush.fill_(1)
    torch.cuda._sleep(spin)
    ev[0].record()
    h0 = time.perf_counter_ns(); y = fn(x); h1 = time.perf_counter_ns()
    ev[1].record()
    torch.cuda.synchronize()
    return (h1 - h0) / 1000, ev[0].elapsed_time(ev[1]) * 1000
with torch.no_grad():
    for name, fn in [("eager", torch.relu), ("triton", tri), ("compile", comp)]:
        for _ in range(5): fn(dummy)
        torch.cuda.synchronize()
        for variant in ["none", "warm-after-inputs", "harness-warm"]:
            r = [one(fn, variant) for _ in range(12)]
            hs = [a for a, b in r]; gs = [b for a, b in r]
            print("%-8s %-18s host us: median %.1f min %.1f max %.1f; gpu us median %.1f" % (name, variant, statistics.median(hs), min(hs), max(hs), statistics.median(gs)), flush=True)
