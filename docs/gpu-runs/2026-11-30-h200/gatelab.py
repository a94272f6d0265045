#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
The GPU idle gate's premise, measured (runner.py _IdleGate): a process's
GPU work goes on after the process is stopped (SIGSTOP), and a probe of
another process -- one tiny kernel and a synchronize, timed on the host
-- finds it: the probe waits for the GPU while the other context has
work.  Run from the repository root on the GPU machine:

    python3 docs/gpu-runs/2026-11-30-h200/gatelab.py

Prints, for the probe of runner._gpu_probe: its latency on an idle GPU
(another process holding an idle context beside it), after 50 ms asleep
(a stopped runner's cold host), and while another process, stopped right
after queueing a sleep kernel of L ms, still has it running -- every
probe over the first L+10 ms, and the gate's wait() for the same.
"""
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "harness", "torch"))
import runner  # noqa: E402
import torch  # noqa: E402


def busy_child():
    torch.zeros(1, device="cuda")
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    torch.cuda._sleep(1000000)
    b.record()
    b.synchronize()
    per_ms = 1000000 / a.elapsed_time(b)
    print("READY %.0f" % per_ms, flush=True)
    side = torch.cuda.Stream()
    for line in sys.stdin:
        ms, on_side = line.split()
        if on_side == "1":
            with torch.cuda.stream(side):
                torch.cuda._sleep(int(float(ms) * per_ms))
        else:
            torch.cuda._sleep(int(float(ms) * per_ms))
        print("QUEUED", flush=True)
        os.kill(os.getpid(), signal.SIGSTOP)
        torch.cuda.synchronize()
        print("DRAINED", flush=True)


def q(v, f):
    v = sorted(v)
    return v[min(len(v) - 1, int(f * (len(v) - 1)))]


def us(ns):
    return "%.1f" % (ns / 1000.0)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        busy_child()
        return
    dev = torch.device("cuda")
    probe = runner._gpu_probe(torch, dev)
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                              "child"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, bufsize=1)
    print("child:", child.stdout.readline().strip(), "cycles/ms")
    print("device:", torch.cuda.get_device_name(0), "torch", torch.__version__)
    for _ in range(50):
        probe()
    idle = [probe() for _ in range(400)]
    print("idle probe us: min %s p10 %s p50 %s p90 %s p99 %s max %s" % tuple(
        us(q(idle, f)) for f in (0, .1, .5, .9, .99, 1)))
    cold = []
    for _ in range(20):
        time.sleep(0.05)
        cold.append(probe())
    print("probe after 50 ms asleep us: p10 %s p50 %s p90 %s max %s" % tuple(
        us(q(cold, f)) for f in (.1, .5, .9, 1)))
    gate = runner._IdleGate(probe, time.perf_counter_ns)
    gate.calibrate()
    print("gate limit us %s (median %s)" % (us(gate.limit()),
                                            us(q(gate.quick, .5))))
    for ms in (0.05, 0.2, 0.5, 1, 2, 5, 20, 100):
        for what in ("probes", "gate"):
            child.stdin.write("%g 0\n" % ms)
            child.stdin.flush()
            assert child.stdout.readline().strip() == "QUEUED"
            t0 = time.perf_counter_ns()
            if what == "probes":
                seen = []
                while time.perf_counter_ns() - t0 < (ms + 10) * 1e6:
                    s = time.perf_counter_ns()
                    d = probe()
                    seen.append((s - t0, d))
                slow = [x for x in seen if x[1] > gate.limit()]
                last = max((x[0] + x[1] for x in slow), default=0)
                print("left %g ms: %d probes, %d slow (> limit), slow "
                      "latencies us %s, last slow ends at %s us" % (
                          ms, len(seen), len(slow),
                          " ".join(us(x[1]) for x in slow[:40]), us(last)))
            else:
                busy, nslow, out = gate.wait()
                print("left %g ms: gate.wait() busy %s us, %d slow, ran out "
                      "%s, convicts %s, returned after %s us" % (
                          ms, us(busy), nslow, out, gate.convicts(busy, nslow, out),
                          us(time.perf_counter_ns() - t0)))
            os.kill(child.pid, signal.SIGCONT)
            assert child.stdout.readline().strip() == "DRAINED"
    timed(child, gate)
    child.stdin.close()
    child.wait()


def timed(child, gate):
    """What the leftover work does to the next process's timed call, with
    and without the gate before it: a relu of 2048 x 16384 floats (the
    relu exploits' bench size) timed by CUDA events, as a runner times
    its side, right after the other process queued L ms and stopped."""
    x = torch.randn(2048, 16384, device="cuda")
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)

    # a sleep kernel before the start event, as the runner queues one: the
    # host's launch of the relu then happens while the GPU is busy, and is
    # not in the span (the first two runs of this lab had none, and timed
    # the launch gap on an idle GPU: 88-92 us against 66-67 us)
    spin = runner._spin_cycles(torch, [a, b])

    def relu_us():
        torch.cuda._sleep(spin)
        a.record()
        torch.relu(x)
        b.record()
        b.synchronize()
        return a.elapsed_time(b) * 1000

    for _ in range(20):
        relu_us()
    idle = [relu_us() for _ in range(40)]
    print("timed relu, idle GPU: median %.1f us (min %.1f max %.1f)" % (
        q(idle, .5), min(idle), max(idle)))
    for on_side in ("0", "1"):
        for ms in (0.2, 1, 2, 5, 20):
            for use in (False, True):
                got, gates = [], []
                for _ in range(5):
                    child.stdin.write("%g %s\n" % (ms, on_side))
                    child.stdin.flush()
                    assert child.stdout.readline().strip() == "QUEUED"
                    if use:
                        gates.append(gate.wait())
                    got.append(relu_us())
                    os.kill(child.pid, signal.SIGCONT)
                    assert child.stdout.readline().strip() == "DRAINED"
                print("left %g ms on its %s stream, %s: timed relu median "
                      "%.1f us (min %.1f max %.1f)%s" % (
                          ms, "own" if on_side == "1" else "default",
                          "gate first" if use else "no gate", q(got, .5),
                          min(got), max(got),
                          "; gate waits (us, slow, convicts): " + " ".join(
                              "%.0f/%d/%s" % (g[0] / 1000, g[1],
                                              "y" if gate.convicts(*g)
                                              else "n") for g in gates)
                          if use else ""))


if __name__ == "__main__":
    main()
