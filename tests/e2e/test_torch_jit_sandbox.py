#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
e2e: the torch backend's JIT sandbox -- what a persistent runner of device
cuda gets so that Triton, load_inline and torch.compile can compile at
run time (docs/torch.md, "The JIT sandbox") -- exercised on CPU, where the
harness never turns it on: harness/torch/runner.py is run directly as
`runner.py persist JAIL` with "jit": true in its torch.json, its memfd on
fd 3 and its command pipe on fd 0, as harness/torch/backend.c runs it.
(The CUDA part of that runner needs a GPU; scripts/gpu-torch-remote runs
it there.)

1. LOCKED names the JIT defenses: private-tmp, hidden-fs, uid-nobody,
   seccomp-jit.
2. A candidate's call sees /root, /work, /home, /var and /opt empty and a
   fresh /tmp holding only the cache directory, may write its cache
   (/tmp/kf-jit) but not /etc, may run a program (as compilers need), and
   runs as uid nobody, reads its own source with inspect.getsource (as
   @triton.jit does: the side's text is in linecache); setsid fails (EPERM: what it starts stays in the
   process group the harness stops between calls); posix_spawn into a
   group of its own (as ninja, which load_inline runs, starts every
   command) runs the program, but in the caller's group; ninja builds.
3. Still refused: a socket (sandbox_violation line from the audit hook)
   and ptrace through ctypes (killed by the seccomp filter, SIGSYS).
4. Nothing of it leaks to the host: the host's /root is as it was.

Skipped (77) without torch or when not root (mount namespaces).
"""
import json
import os
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402
import test_torch as tt  # noqa: E402

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "..", "harness", "torch", "runner.py")

LOOKS = '''import os
import subprocess
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        notes = []
        for d in ("/root", "/work", "/home", "/var", "/opt", "/tmp"):
            try:
                notes.append("%s=%s" % (d, ",".join(sorted(os.listdir(d)))))
            except OSError as e:
                notes.append("%s=E%d" % (d, e.errno))
        with open("/tmp/kf-jit/cache-file", "w") as f:
            f.write("x")
        notes.append("cache=ok")
        try:
            open("/etc/kf-jit-test", "w")
            notes.append("etc=written")
        except OSError as e:
            notes.append("etc=E%d" % e.errno)
        r = subprocess.run(["/bin/echo", "ran"], capture_output=True)
        notes.append("exec=" + r.stdout.decode().strip())
        notes.append("uid=%d" % os.getuid())
        # what @triton.jit does with a kernel: read its source
        import inspect
        notes.append("source=" + inspect.getsource(
            ModelNew.forward).split("(")[0].strip())
        try:
            os.setsid()
            notes.append("setsid=ok")
        except OSError as e:
            notes.append("setsid=E%d" % e.errno)
        # as ninja starts a command: posix_spawn in a group of its own;
        # it runs, but in this process's group
        try:
            pid = os.posix_spawn("/bin/sleep", ["/bin/sleep", "30"],
                                 {}, setpgroup=0)
            same = os.getpgid(pid) == os.getpgid(0)
            notes.append("spawn-pgrp=" + ("same" if same else "own"))
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except OSError as e:
            notes.append("spawn=E%d" % e.errno)
        # ninja itself, as load_inline runs it
        os.mkdir("/tmp/kf-jit/b")
        with open("/tmp/kf-jit/b/build.ninja", "w") as f:
            f.write("rule w\\n  command = /bin/echo built > $out\\n"
                    "build out.txt: w\\n")
        r = subprocess.run(["ninja", "-C", "/tmp/kf-jit/b"],
                           capture_output=True)
        try:
            with open("/tmp/kf-jit/b/out.txt") as f:
                notes.append("ninja=" + f.read().strip())
        except OSError:
            notes.append("ninja=rc%d:%s" % (r.returncode, (
                r.stdout + r.stderr).decode()[-120:].replace(" ", "_")))
        raise RuntimeError(" ".join(notes))
'''

SOCKET = '''import socket
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        socket.socket().connect(("127.0.0.1", 5432))
        return x
'''

PTRACE = '''import ctypes
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        ctypes.CDLL(None).ptrace(16, 1, 0, 0)  # PTRACE_ATTACH to init
        return x
'''


def call(c, tag, source):
    """Starts the runner on source, sends one RUN; returns (lines, exit
    status)."""
    jail = tempfile.mkdtemp(prefix="jail-", dir=c.dir)
    os.chmod(jail, 0o755)
    with open(RUNNER) as f:
        tt.write(os.path.join(jail, "runner.py"), f.read())
    tt.write(os.path.join(jail, "side.py"), source)
    with open(os.path.join(jail, "torch.json"), "w") as f:
        json.dump({"kind": "kernelbench", "device": "cpu",
                   "role": "candidate", "jit": True, "outputs": ["y"]}, f)
    mem = os.memfd_create("image")
    os.ftruncate(mem, 1 << 16)
    cr, cw = os.pipe()
    rr, rw = os.pipe()

    # the memfd on fd 3, as the harness gives it
    sh = 'exec "$0" -I -B "$1" persist "$2" 3<&%d %d<&-' % (mem, mem)
    p = subprocess.Popen(["/bin/sh", "-c", sh, tt.PY,
                          os.path.join(jail, "runner.py"), jail],
                         stdin=cr, stdout=rw, stderr=subprocess.DEVNULL,
                         pass_fds=(mem,), preexec_fn=kfe2e._pdeathsig,
                         env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"})
    for fd in (cr, rw, mem):
        os.close(fd)
    out = os.fdopen(rr)
    lines = [out.readline().strip(), out.readline().strip()]
    if lines[1] != "READY":
        c.log("%s: %r" % (tag, lines))
        p.kill()
        return lines + [""], p.wait()
    run = {"in": [[0, "f32", [4, 4]]], "out": [[4096, "f32", [4, 4]]],
           "seq": 1, "timed": True}
    os.write(cw, ("RUN %s\n" % json.dumps(run)).encode())
    lines.append(out.readline().strip())
    os.close(cw)
    try:
        st = p.wait(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        st = p.wait()
    out.close()
    c.log("%s: %s (exit %s)" % (tag, " | ".join(lines)[:600], st))
    return lines, st


def body(c):
    before = sorted(os.listdir("/root"))
    lines, st = call(c, "looks", LOOKS)
    words = lines[0].split()
    check(lines[0].startswith("LOCKED") and all(
        w in words for w in ("private-tmp", "hidden-fs", "uid-nobody",
                             "seccomp-jit")),
          "JIT defenses: %r" % lines[0])
    check(lines[1] == "READY", "not loaded: %r" % lines[1])
    got = lines[2]
    for want in ("/root= ", "/work= ", "/home= ", "/var= ", "/opt= ",
                 "/tmp=kf-jit ", "cache=ok", "etc=E13", "exec=ran",
                 "uid=65534", "setsid=E1", "source=def forward",
                 "spawn-pgrp=same", "ninja=built"):
        check(want in got + " ", "JIT call: want %r in %r" % (want, got))
    lines, st = call(c, "socket", SOCKET)
    check(lines[2].startswith("VIOL socket"), "socket: %r" % lines[2])
    lines, st = call(c, "ptrace", PTRACE)
    check(st == -signal.SIGSYS, "ptrace: exit %s, lines %r" % (st, lines))
    check(sorted(os.listdir("/root")) == before, "the host's /root changed")


if __name__ == "__main__":
    if not tt.have_torch():
        print("test_torch_jit_sandbox: SKIP: %s has no torch" % tt.PY)
        sys.exit(77)
    if os.geteuid() != 0:
        print("test_torch_jit_sandbox: SKIP: needs root (mount namespaces)")
        sys.exit(77)
    kfe2e.run("torch_jit", body, time_limit=600)
