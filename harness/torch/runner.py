# SPDX-License-Identifier: Apache-2.0
#
# harness/torch/runner.py -- the torch backend's runner: one Python process
# per side (the reference, or one candidate) that runs PyTorch code on the
# buffers the harness drew, in the side's host image (a memfd), without a
# copy.  Embedded in kf-harness and kf at build time; written into the
# side's jail directory and run as `python3 -s -B runner.py serve JAIL`.
#
# It never draws inputs, compares outputs or keeps time: the eval process
# (harness/torch/backend.c) does all three, with the same seeds, layouts
# and timer as every other backend.
#
# A zygote, then one child per call, like the CPU runner:
#   zygote  imports torch and everything a candidate may import, warms the
#           ops up (so nothing opens a file later), reads side.py and
#           torch.json from the jail, compiles side.py (syntax only: the
#           zygote never runs side code), then locks itself down -- chroot
#           into the jail, uid/gid nobody, no_new_privs, a seccomp filter
#           (x86_64) that kills on open, socket, exec, ptrace, mount... --
#           and says READY on the status pipe (fd 1), which no child holds.
#   ARM     forks a child: it closes the status pipe, maps exactly this
#           call's buffers from the memfd (inputs read-only) and closes the
#           memfd, forbids new processes and threads (RLIMIT_NPROC 0, a
#           second seccomp filter on clone/fork), installs an audit hook
#           that reports and ends any open/socket/exec/ctypes use, then runs
#           the side's code (seeded), builds the model, says READY on the
#           reply pipe (fd 2) and waits for RUN on fd 0.
#   RUN     one forward (KernelBench) or kernel call (GPU MODE); the result
#           copied into the output buffers; DONE.  The harness then kills
#           the child; the zygote reports its exit (EXITED) on fd 1.
#
# `runner.py persist JAIL` is the other model: ONE process per side that
# serves every call (device "cuda", where CUDA cannot survive a fork; or
# `kf-harness --torch-persistent` on CPU, which runs the same code path
# for tests).  It imports torch, creates its CUDA context, locks itself
# down (as the zygote does; on the GPU with the JIT allowances below),
# says LOCKED with its defenses on fd 1 (on the GPU also timer=O/B: the
# null calls' median overhead and its median - minimum, ns; _Charge),
# then runs the side's code and
# builds the model once: READY, or ERR.  The harness keeps it stopped
# (SIGSTOP) whenever it is not in a call, so it never runs while another
# side's inputs are drawn (on the GPU it runs from its WARM, below, while
# its own are copied into its image on its clock).  Commands on fd 0, one
# JSON line each:
#   RUN {"in","out","seq","timed"}  copies the call's inputs from the
#           memfd (fd 3, mapped once, inputs read-only) to the device,
#           flushes L2 (timed calls), records a start event, calls the
#           side, records an event on its stream, synchronizes the whole
#           device (work on any stream of the process), records the end
#           event, copies the outputs back:
#           DONE SEQ EVENT_NS BASE_NS TUNED_NS FLAGS BUSY_NS SLOW RANOUT
#           (EVENT_NS: _Charge.charge_call's rule, for the reference
#           and a candidate alike; BASE_NS: the
#           reference's torch.compile'd model (default mode) timed the same
#           way on the same inputs; TUNED_NS: the same for its
#           torch.compile(mode="max-autotune-no-cudagraphs"); FLAGS, bits:
#           1 work on another stream ran past the call's own, 2 the call's
#           host dispatch outlasted its GPU work, 4 the same for the
#           default-mode model, 8 for the max-autotune one, 16 another
#           process's GPU work was found running before the call).  Before
#           anything else a GPU call waits until the GPU answers quick
#           probes again (_IdleGate): BUSY_NS how long, SLOW the probes
#           that found it held by another process, RANOUT 1 when it gave
#           up waiting.
#           On CPU the harness times RUN..DONE itself: DONE SEQ 0 0 0 0
#           0 0 0.
#   WARM {"in","out","seq","timed"}  (GPU, before a timed call's inputs
#           are drawn) the gate, a null sample and the warm-up on dummies,
#           all waited for: WARMED SEQ FLAGS BUSY_NS SLOW RANOUT (FLAGS 16:
#           the gate's verdict, as in DONE).  The timed RUN after it skips
#           them, and the reference then says DONE (FLAGS 32, BASE_NS and
#           TUNED_NS 0) before it times its compiled models:
#           BASED SEQ BASE_NS TUNED_NS FLAGS.  The harness's clock of the
#           call (backend.c p_call) ends at DONE and its copy of the
#           outputs, so that it holds only what every side does alike.
#   PREP {"in","out"}  (reference) compiles torch.compile(model) in both
#           modes for these shapes, untimed: PREPARED (both), PREPARED
#           NOTUNE REASON (max-autotune failed), or NOCOMPILE REASON (the
#           default mode failed; max-autotune is then not tried).
#   EXIT
#
# `runner.py inspect KIND FILE` (kf import) runs a reference once, locked
# down the same way, and prints what it takes and returns as JSON.
#
# Run as `python3 -s -B runner.py` with an environment the harness builds
# whole, PYTHONHASHSEED=0 in it: not `-I`, which ignores PYTHONHASHSEED,
# so each process hashed strings its own way, and a Model that builds its
# parameters in the order of a set of names gave the reference and a
# candidate different weights (red team 2026-12-01-s3c, H2).  What -I's
# -P did is done first thing here: the jail is not on the import path.
import sys

if sys.path and sys.path[0] and not getattr(sys.flags, "safe_path", 0):
    del sys.path[0]

import ast
import contextlib
import ctypes
import functools
import gc
import inspect
import io
import json
import linecache
import math
import mmap
import os
import random
import resource
import shutil
import signal
import stat
import struct
import time
import traceback
import warnings

warnings.filterwarnings("ignore")

EXIT_VIOL = 77
INIT_SEED = 0x6B66  # KernelBench's convention: one seed before each Model
# torch's generators are set to this before every call of a side, in both
# runner models: a reference drawing from them (F.dropout(training=True))
# then gives the same answer to the same inputs, whichever calls its
# process served before, and a candidate drawing alike matches it.  It
# was per-call only by accident (each forked child started from the same
# state), and the persistent runners' reference disagreed with itself
# (red team, 2026-11-30).
CALL_SEED = INIT_SEED + 3
NOBODY = 65534

DTYPES = {}  # "f32" -> torch dtype, filled after import
ELEM = {"f32": 4, "f64": 8, "bf16": 2, "f16": 2, "i32": 4, "i64": 8,
        "bool": 1}


class _NotUtf8(Exception):
    """A side's file that is not UTF-8 text."""


def _read_source(path):
    """The text of a side's file.  Sources are stored, hashed and shown as
    UTF-8 (a BOM is dropped); a file in another encoding is the author's
    to convert, and says where -- it was an infra_error, blaming the
    worker (red team, 2026-11-30)."""
    with open(path, "rb") as f:
        b = f.read()
    try:
        return b.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise _NotUtf8("line %d: byte 0x%02x is not UTF-8; sources are kept "
                       "as UTF-8 text and a coding declaration (latin-1, "
                       "...) is not honoured: convert the file (iconv -f "
                       "latin1 -t utf-8)" % (b[:e.start].count(b"\n") + 1,
                                            b[e.start]))


def _modules_in(text):
    """The top-level _kf_module("name", "text") calls of a source, taken
    by their literal arguments (nothing of it runs here), each module
    compiled: [(name, text, code)].  Compiled before the sandbox closes:
    a SyntaxError's line is read from its file by name, which the sandbox
    kills (red team 2026-12-02-gm, 7)."""
    if "\n_kf_module(" not in text:
        return []
    mods = []
    for node in ast.parse(text).body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not (isinstance(call, ast.Call) and
                isinstance(call.func, ast.Name) and
                call.func.id == "_kf_module" and len(call.args) == 2 and
                not call.keywords):
            continue
        try:
            name, body = (ast.literal_eval(a) for a in call.args)
        except ValueError:
            continue
        if isinstance(name, str) and name.isidentifier() and isinstance(
                body, str):
            mods.append((name, body, compile(body, name + ".py", "exec",
                                             dont_inherit=True)))
    return mods


def _read_modules(jail, cfg, src):
    """The modules kf import put in front of a GPU MODE reference
    (cli/cli_import.c bundle_siblings: task.py, utils.py of its
    directory): the reference's own, and for a candidate the reference's,
    which the harness writes beside its source as modules.py when it
    registers some -- a GPU MODE submission starts `from task import
    input_t, output_t`, and the sandbox loads no file."""
    if cfg.get("role") == "reference":
        return _modules_in(src)
    path = os.path.join(jail, "modules.py")
    if not os.path.exists(path):
        return []
    return _modules_in(_read_source(path))


def _register_modules(mods):
    """Each module of _modules_in run as module `name`, in order (a
    module's own imports of the others come after them), marked with its
    text: the reference's prologue (and a candidate holding the same, as
    the import's eager.py does) finds it registered and runs it no
    second time."""
    import types
    for name, text, code in mods:
        if name in sys.modules:
            # kf import's own prologue refuses it in the reference; a
            # hand-made one must not replace torch under a candidate
            raise _Refused("%s.py of the problem's directory has the "
                           "name of a module the runner has loaded: rename "
                           "it" % name)
        m = types.ModuleType(name)
        m.__kf_problem__ = True
        m.__kf_text__ = text
        m.__file__ = name + ".py"
        sys.modules[name] = m
        exec(code, m.__dict__)


def _syntax(e):
    """A SyntaxError's place: its line, and its file when a module's."""
    f = getattr(e, "filename", None) or ""
    where = "" if f in ("side.py", "reference.py", "<unknown>", "") else (
        f + " ")
    return "%sline %s: %s" % (where, e.lineno, e.msg)


def _importing():
    """The module an import in progress on this thread is looking for,
    or None."""
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name in ("_find_and_load", "_find_and_load_unlocked"):
            name = f.f_locals.get("name")
            if isinstance(name, str):
                return name
        f = f.f_back
    return None


def _violation(reply, event, hargs):
    """Reports a forbidden event and ends the side.  An import of a
    module not loaded before the lockdown looks for its file, which reads
    as leaving the sandbox (`import statistics`: "os.listdir
    /usr/lib/python3.11"); the module is named (red team, 2026-11-30)."""
    what = str(hargs[0])[:200] if hargs else ""
    mod = _importing()
    if mod:
        what += (" -- while importing %s: only modules already loaded "
                 "when the sandbox closed can be imported (torch, numpy, "
                 "math and what they load)" % mod[:80])
    _say(reply, "VIOL %s %s" % (event, what))
    os._exit(EXIT_VIOL)


def _one_thread(n):
    return None


class _T:
    """torch's own tensor methods the harness's checks call, bound when
    torch is imported, before any side's code runs.  A side can rebind
    torch.Tensor.data_ptr (or any method) for every tensor in its
    process; the red team of 2026-12-01 (third session) returned a view
    of the harness's own output buffer with a data_ptr that lied, and
    _put_one took it for the side's own tensor: ok at 4.6-5.2x for an
    honest 1.0x relu.  These are the C methods themselves, which no
    rebinding of the Python class reaches."""

    @classmethod
    def bind(cls, torch):
        tb = getattr(torch._C, "TensorBase", None) or torch._C._TensorBase
        cls.data_ptr = tb.data_ptr
        cls.numel = tb.numel
        cls.element_size = tb.element_size
        cls.size = tb.size
        cls.copy_ = tb.copy_
        cls.detach = tb.detach
        cls.reshape = tb.reshape
        cls.dtype = tb.__dict__["dtype"].__get__


def _import_torch():
    import numpy  # noqa: F401  (candidates may use it)
    try:
        import numpy.random  # noqa: F401  (numpy 2 loads it at first use)
    except ImportError:
        pass
    import torch
    import torch.nn  # noqa: F401
    import torch.nn.functional  # noqa: F401
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    # A side's own call (module level, a constructor) asked for threads
    # the sandbox does not give (RLIMIT_NPROC 0) and hung until the load
    # deadline (red team, 2026-11-30).  Every side runs on one thread: the
    # call is taken and ignored.
    torch.set_num_threads = _one_thread
    torch.set_num_interop_threads = _one_thread
    for name in ("triton", "triton.language", "torch.utils.cpp_extension"):
        try:
            __import__(name)
        except Exception:  # not installed here: candidates cannot use it
            pass
    _T.bind(torch)
    DTYPES.update({"f32": torch.float32, "f64": torch.float64,
                   "bf16": torch.bfloat16, "f16": torch.float16,
                   "i32": torch.int32, "i64": torch.int64,
                   "bool": torch.bool})
    return torch


def _warm(torch, device):
    """Runs the common ops once, so that whatever they initialize lazily
    (cpuinfo, oneDNN, ...) is done before the lockdown forbids files."""
    F = torch.nn.functional
    with torch.no_grad():
        for dt in (torch.float32, torch.float64, torch.float16,
                   torch.bfloat16):
            x = torch.randn(4, 8, device=device).to(dt)
            w = torch.randn(8, 8, device=device).to(dt)
            try:
                for f in (lambda: x @ w, lambda: torch.relu(x),
                          lambda: F.gelu(x), lambda: torch.softmax(x, -1),
                          lambda: torch.log_softmax(x, -1),
                          lambda: F.layer_norm(x, (8,)),
                          lambda: x.sum(-1), lambda: x.mean(0),
                          lambda: x.max(-1), lambda: x.argmax(-1),
                          lambda: torch.tanh(x), lambda: torch.sigmoid(x),
                          lambda: torch.exp(x), lambda: x.cumsum(-1),
                          lambda: torch.bmm(x[None], w[None]),
                          lambda: F.linear(x, w)):
                    f()
            except RuntimeError:
                pass  # an op this dtype lacks on CPU
        x = torch.randn(2, 4, 16, device=device)
        F.conv1d(x, torch.randn(4, 4, 3, device=device))
        F.conv2d(x[:, :, None], torch.randn(4, 4, 1, 3, device=device))
        F.max_pool1d(x, 2)
        F.avg_pool1d(x, 2)
        F.batch_norm(x, torch.zeros(4, device=device),
                     torch.ones(4, device=device))
        F.group_norm(x, 2)
        F.dropout(x, 0.5, training=False)
        F.cross_entropy(torch.randn(4, 5), torch.tensor([0, 1, 2, 3]))
        torch.nn.Linear(8, 4).to(device)(torch.randn(2, 8, device=device))
        torch.nn.Conv1d(4, 4, 3).to(device)(x)
        torch.manual_seed(0)


# ------------------------------------------------------------- lockdown --

AUDIT_ARCH_X86_64 = 0xC000003E
RET_KILL = 0x80000000
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
CLONE_THREAD = 0x00010000
# x86_64 numbers: what no kernel runner needs, and most of what an escape
# would.  Files: open/openat/openat2/creat.  Network: socket and friends
# (there is no network in the namespace either).  Processes: execve,
# ptrace, process_vm_*.  The machine: mount, chroot, unshare, setns, bpf,
# perf_event_open, keyrings, userfaultfd, io_uring.
KILL_NRS = [2, 257, 437, 85, 41, 42, 43, 49, 50, 288, 53, 59, 322, 101,
            310, 311, 165, 166, 161, 155, 272, 308, 321, 298, 248, 249,
            250, 323, 425, 426, 427, 133, 259, 246, 175, 176, 313,
            434, 438]  # pidfd_open, pidfd_getfd
# EPERM: signals to other processes (kill, tkill, rt_sigqueueinfo,
# rt_tgsigqueueinfo, pidfd_send_signal), and what would move or slow a
# process -- this one or another runner of the same uid, the reference's
# included: sched_setaffinity, setpriority, sched_setparam,
# sched_setscheduler, sched_setattr, ioprio_set
ERRNO_NRS = {62: 1, 200: 1, 129: 1, 297: 1, 424: 1, 203: 1, 141: 1, 142: 1,
             144: 1, 314: 1, 251: 1}
# A per-call child's: shmget, shmat, shmctl, shmdt, semget, semop, semctl,
# semtimedop, msgget, msgsnd, msgrcv, msgctl, mq_open .. mq_getsetattr
IPC_NRS = (29, 30, 31, 67, 64, 65, 66, 220, 68, 69, 70, 71,
           240, 241, 242, 243, 244, 245)


def _bpf(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k & 0xFFFFFFFF)


# What the JIT path (device cuda: Triton, load_inline, torch.compile) lets
# a side do that the zygote's filter kills: open files (its private cache,
# the toolchain) and exec (ptxas, nvcc, a C++ compiler, ninja).  Starting
# processes (fork, clone) is then allowed too.  Everything else of
# KILL_NRS and ERRNO_NRS stays.
JIT_ALLOWED = {2, 257, 437, 85, 59, 322}


# fcntl commands by which a descriptor signals a process, or leaves a
# mark on a file description others share (F_SETOWN, F_SETSIG,
# F_SETOWN_EX, F_SETLEASE, F_NOTIFY, F_SETPIPE_SZ), and the ioctls that
# do the same (FIOASYNC, FIOSETOWN, SIOCSPGRP).  A call process shares
# its command and reply pipes with its zygote and the eval: with F_SETOWN
# and O_ASYNC on them, the eval's next write signalled another side's
# runner -- SIGKILL or SIGSTOP, no kill(2) made -- and a candidate won a
# showdown by stopping its rivals; F_SETSIG values left on them carried
# a key from one call to the next (red team 2026-12-02-s3-cand).
FD_SIGNAL_FCNTL = (8, 10, 15, 1024, 1026, 1031)
FD_SIGNAL_IOCTL = (0x5452, 0x8901, 0x8902)
O_ASYNC_FLAG = 0o20000


def _fd_rules(strict):
    """fcntl (72) and ioctl (16) with the commands above refused (EPERM);
    strict (a call process): F_SETFL and FIONBIO too, which change a
    description the zygote shares (O_NONBLOCK, O_DIRECT: a bit carried).
    Each block returns for its syscall, so A still holds the number for
    the rules after it."""
    ld_w, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    deny = _bpf(ret, 0, 0, RET_ERRNO | 1)
    allow = _bpf(ret, 0, 0, RET_ALLOW)
    out = []
    for nr, cmds in ((72, FD_SIGNAL_FCNTL),
                     (16, FD_SIGNAL_IOCTL + ((0x5421,) if strict else ()))):
        body = [_bpf(ld_w, 0, 0, 24)]  # args[1], low half: the command
        n = len(cmds)
        tail = 1 if nr == 16 or strict else 4
        if nr == 72 and strict:
            cmds = cmds + (4,)  # F_SETFL
            n += 1
        for i, c in enumerate(cmds):
            body.append(_bpf(jeq, n - i + tail - 1, 0, c))
        if nr == 72 and not strict:
            # F_SETFL with O_ASYNC
            body += [_bpf(jeq, 0, 2, 4), _bpf(ld_w, 0, 0, 32),
                     _bpf(jset, 1, 0, O_ASYNC_FLAG)]
        body += [allow, deny]
        out.append(_bpf(jeq, 0, len(body), nr))
        out += body
    return out


def _filter(child, jit=False):
    ld_w = 0x20
    jeq = 0x15
    jge = 0x35
    jset = 0x45
    ret = 0x06
    p = [_bpf(ld_w, 0, 0, 4),
         _bpf(jeq, 1, 0, AUDIT_ARCH_X86_64),
         _bpf(ret, 0, 0, RET_KILL),
         _bpf(ld_w, 0, 0, 0),
         _bpf(jge, 0, 1, 0x40000000),
         _bpf(ret, 0, 0, RET_KILL)]
    p += _fd_rules(child)
    for nr in KILL_NRS:
        if jit and nr in JIT_ALLOWED:
            continue
        p += [_bpf(jeq, 0, 1, nr), _bpf(ret, 0, 0, RET_KILL)]
    for nr, e in ERRNO_NRS.items():
        p += [_bpf(jeq, 0, 1, nr), _bpf(ret, 0, 0, RET_ERRNO | e)]
    if jit:
        # the processes a JIT side starts (compilers) stay in its process
        # group, which the harness stops between calls as a whole: setsid
        # fails (EPERM), setpgid does nothing and returns 0.  Not EPERM:
        # ninja starts every command by posix_spawn with a group of its
        # own (POSIX_SPAWN_SETPGROUP), which fails as a whole on EPERM, so
        # load_inline could not build (H200, 2026-11-29).
        p += [_bpf(jeq, 0, 1, 112), _bpf(ret, 0, 0, RET_ERRNO | 1)]
        p += [_bpf(jeq, 0, 1, 109), _bpf(ret, 0, 0, RET_ERRNO | 0)]
    if child:
        # prlimit64 (302) on another process of the uid, or to undo
        # RLIMIT_NPROC: EPERM (set before this filter); tgkill (234) only
        # to this process (abort() raises SIGABRT that way)
        p += [_bpf(jeq, 0, 1, 302), _bpf(ret, 0, 0, RET_ERRNO | 1)]
        p += [_bpf(jeq, 0, 4, 234),
              _bpf(ld_w, 0, 0, 16),
              _bpf(jeq, 1, 0, os.getpid()),
              _bpf(ret, 0, 0, RET_ERRNO | 1),
              _bpf(ret, 0, 0, RET_ALLOW)]
        # nothing that outlives the call: SysV shared memory, semaphores
        # and message queues, POSIX message queues -- all of them live in
        # the side's IPC namespace, which the zygote and every later call
        # process share, so a counter kept there would tell a call its
        # place (red team, 2026-11-30: shmget/shmat through the runner's
        # own libc handle)
        for nr in IPC_NRS:
            p += [_bpf(jeq, 0, 1, nr), _bpf(ret, 0, 0, RET_KILL)]
        # mremap: EPERM (glibc's realloc then copies).  Growing a view of
        # the image reached past the last buffer, where no canary is, and
        # a counter kept there survived the call (red team, 2026-11-30)
        p += [_bpf(jeq, 0, 1, 25), _bpf(ret, 0, 0, RET_ERRNO | 1)]
        # no new processes: fork, vfork, clone3 (glibc falls back to
        # clone), clone without CLONE_THREAD
        for nr in (57, 58):
            p += [_bpf(jeq, 0, 1, nr), _bpf(ret, 0, 0, RET_KILL)]
        p += [_bpf(jeq, 0, 1, 435), _bpf(ret, 0, 0, RET_ERRNO | 38)]
        p += [_bpf(jeq, 0, 4, 56),
              _bpf(ld_w, 0, 0, 16),
              _bpf(jset, 1, 0, CLONE_THREAD),
              _bpf(ret, 0, 0, RET_KILL),
              _bpf(ret, 0, 0, RET_ALLOW)]
    p.append(_bpf(ret, 0, 0, RET_ALLOW))
    return b"".join(p)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc = None


def _seccomp(child, jit=False):
    """Installs the filter; False where it cannot (another architecture,
    a kernel without seccomp)."""
    if os.uname().machine != "x86_64" or _libc is None:
        return False
    prog = _filter(child, jit)
    buf = ctypes.create_string_buffer(prog, len(prog))
    fp = _SockFprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if _libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return False
    return _libc.prctl(22, 2, ctypes.byref(fp), 0, 0) == 0  # SECCOMP filter


def _lockdown(jail):
    """chroot into jail, uid nobody, seccomp: the defenses applied."""
    defs = []
    if os.geteuid() == 0 and jail:
        os.chroot(jail)
        os.chdir("/")
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        defs += ["chroot", "uid-nobody"]
    if _seccomp(False):
        defs += ["no-new-privs", "seccomp"]
    # tracebacks must not read source files: nothing is there to read
    linecache.getline = lambda *a, **k: ""
    linecache.updatecache = lambda *a, **k: []
    return defs


# ---------------------------------------------------------------- lines --

def _readline(fd):
    """One line from fd, read a byte at a time: the zygote and its child
    share fd 0, so neither may read ahead of its own line."""
    out = bytearray()
    while True:
        b = os.read(fd, 1)
        if not b:
            return None
        if b == b"\n":
            return out.decode("utf-8", "replace")
        out += b
        if len(out) > 1 << 20:
            return None


class _Lines:
    """Lines from fd, read in chunks: a persistent runner is its command
    pipe's only reader (no zygote shares it), and on CPU its command is
    read inside the timed window -- a byte a read was ~200 reads for a
    call's plan, which a candidate that reads its own commands skipped
    (red team, 2026-11-30)."""

    def __init__(self, fd):
        self.fd = fd
        self.buf = b""

    def next(self):
        while b"\n" not in self.buf:
            b = os.read(self.fd, 65536)
            if not b or len(self.buf) > 1 << 20:
                return None
            self.buf += b
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode("utf-8", "replace")


def _say(fd, text):
    text = text.replace("\n", " ")[:1800]
    try:
        os.write(fd, (text + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def _short_exc(e):
    tb = traceback.extract_tb(e.__traceback__)
    where = ""
    for fr in reversed(tb):
        if fr.filename in ("side.py", "reference.py", "<side>"):
            where = " (line %d)" % fr.lineno
            break
        # a module of the problem's directory (kf import put it in the
        # reference as NAME.py): its own file and line, not the bundle's
        if ("/" not in fr.filename and fr.filename.endswith(".py") and
                fr.filename[:-3].isidentifier()):
            where = " (%s line %d)" % (fr.filename, fr.lineno)
            break
    return "%s: %s%s" % (type(e).__name__, e, where)


# ---------------------------------------------------------------- sides --

def _load(torch, src_code, cfg, reply, source=None):
    """Runs the side's code (the reference, or a candidate) seeded, and
    returns the callable that takes the inputs.  With source (the
    persistent runners), the code runs as a module `__kf_side__` whose
    text is in linecache under side.py: @triton.jit reads its kernels'
    source with inspect.getsource, and there is no file to read it from
    (the jail is gone, or hidden, by then)."""
    ns = {"__name__": "__kf_side__", "__builtins__": __builtins__}
    if source is not None:
        import types
        mod = types.ModuleType("__kf_side__")
        mod.__file__ = "side.py"
        mod.__dict__["__builtins__"] = __builtins__
        ns = mod.__dict__
        sys.modules["__kf_side__"] = mod
        linecache.cache["side.py"] = (len(source), None,
                                      source.splitlines(True), "side.py")
    for k, v in cfg.get("knobs", {}).items():
        ns[k] = _knob_value(v)
    # every generator a side may build its weights from, not only
    # torch's: a Model drawing them from numpy's global generator (or
    # Python's random, which a fork reseeds) got other weights in every
    # process, and the import's own template was wrong_answer (red team
    # 2026-12-01-s3c, H1)
    _seed_init(torch)
    # the problem's modules after the seeds, as the reference runs them
    # (at the top of its file): a draw at their top level draws alike
    _register_modules(cfg.get("_modules", ()))
    exec(src_code, ns)
    kind = cfg["kind"]
    ref = cfg["role"] == "reference"
    init = _typed(cfg.get("init", []))
    if kind == "kernelbench":
        name = "Model" if ref else "ModelNew"
        cls = ns.get(name)
        if cls is None and not ref and callable(ns.get("custom_kernel")):
            fn = ns["custom_kernel"]
            return lambda *a: fn(*a)
        if cls is None:
            raise _Refused("defines no class %s%s" % (
                name, "" if ref else " (a KernelBench candidate is a "
                "ModelNew built like Model, or a custom_kernel(*inputs))"))
        _seed_init(torch)
        # left in training mode, as KernelBench runs it (its eval builds
        # Model(*init) and calls it under no_grad, never .eval()): in eval
        # mode BatchNorm used its running statistics (the identity at
        # construction) and Dropout nothing, so a copy of the input was
        # "verified" for a BatchNorm problem and the batch's own
        # statistics were wrong_answer (red team 2026-12-02-s3-prob, H1)
        model = cls(*init)
        dev = cfg.get("device", "cpu")
        if dev != "cpu" and hasattr(model, "to"):
            model = model.to(dev)
        return model
    name = "ref_kernel" if ref else "custom_kernel"
    fn = ns.get(name)
    if not callable(fn):
        raise _Refused("defines no function %s (GPU MODE: %s(data))" %
                       (name, name))
    # data as generate_input() gave it (the spec's torch.data): a 1-tuple
    # passed as its bare tensor failed `x, = data` in every call
    pack = cfg.get("data")
    if pack == "tuple":
        return lambda *a: fn(tuple(a))
    if pack == "list":
        return lambda *a: fn(list(a))
    return lambda *a: fn(a[0] if len(a) == 1 else tuple(a))


def _call_args(cfg, ins):
    """The call's arguments: the spec's torch.args where it has them
    (numbers among the tensors; a 0-d tensor, held as shape [1], viewed
    0-d again: a reference that cats s.unsqueeze(0) to a flat tensor
    failed in every evaluation (red team 2026-12-01-s3c, H4)), else the
    inputs in order."""
    if not cfg.get("args"):
        return list(ins)
    return [(ins[a["t"]].reshape(()) if a.get("0d") else ins[a["t"]])
            if "t" in a else _typed(a["v"]) for a in cfg["args"]]


def _seed_init(torch):
    """The seeds a side's code and its Model's constructor run under."""
    torch.manual_seed(INIT_SEED)
    _seed_all(INIT_SEED)


def _typed(v):
    """A value of a spec's torch init or args as Python had it: JSON
    printers on the way (cJSON) write the float 2.0 as 2, and an int
    where the model said 2.0 built an integer tensor (nn.Parameter of it
    failed in every evaluation: red team, 2026-11-30); so kf import writes
    such floats, and the non-finite ones JSON cannot hold, as {"float":
    x}, x a number or "inf", "-inf", "nan"."""
    if isinstance(v, dict) and set(v) == {"float"}:
        return float(v["float"])
    if isinstance(v, dict) and set(v) == {"int"}:
        return int(v["int"])
    if isinstance(v, list):
        return [_typed(x) for x in v]
    return v


def _untyped(v):
    """The inverse of _typed, for the inspector's report: a float that a
    JSON number would not keep a float (integral, or not finite)."""
    if isinstance(v, float) and (not math.isfinite(v) or v == int(v)):
        return {"float": repr(v) if not math.isfinite(v) else v}
    # an integer a JSON number (a double, to cJSON) would not keep: 2**61-1
    # became 2**61, and a float (red team 2026-12-01-s3c, H3)
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2 ** 53:
        return {"int": str(v)}
    if isinstance(v, (list, tuple)):
        return [_untyped(x) for x in v]
    return v


def _knob_value(v):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


class _Refused(Exception):
    pass


def _views(torch, fd, plan, device, ro_fd=None):
    """Maps each buffer of the call (inputs read-only: from ro_fd, a
    read-only descriptor of the same image, where there is one, so that
    mprotect cannot make them writable) and wraps it as a tensor without
    a copy."""
    ins, outs, keep = [], [], []
    for t, writable in ([(t, False) for t in plan["in"]] +
                        [(t, True) for t in plan["out"]]):
        off, dt, dims = t
        src = fd if writable or ro_fd is None else ro_fd
        n = 1
        for d in dims:
            n *= d
        nbytes = max(n * ELEM[dt], 1)
        page = mmap.PAGESIZE
        length = (nbytes + page - 1) // page * page
        # populated now (arm), so page faults are not timed
        mm = mmap.mmap(src, length, flags=mmap.MAP_SHARED |
                       getattr(mmap, "MAP_POPULATE", 0),
                       prot=mmap.PROT_READ | (mmap.PROT_WRITE if writable
                                              else 0),
                       offset=off)
        keep.append(mm)
        ten = torch.frombuffer(mm, dtype=DTYPES[dt], count=n).view(dims)
        (outs if writable else ins).append(ten)
    if device != "cpu":
        # device runs: inputs copied to the device before RUN (untimed),
        # outputs copied back after the synchronize that ends the call
        ins = [t.to(device) for t in ins]
    return ins, outs, keep


def _put(torch, res, outs, names):
    if isinstance(res, torch.Tensor):
        res = (res,)
    if not isinstance(res, (tuple, list)) or len(res) != len(outs):
        raise _Shape("returned %s; the problem has %d output(s) (%s)" % (
            type(res).__name__ if not isinstance(res, (tuple, list))
            else "%d values" % len(res), len(outs), ", ".join(names)))
    for i, (r, o) in enumerate(zip(res, outs)):
        if type(r) not in (torch.Tensor, torch.nn.Parameter):
            raise _Shape("output '%s' is a %s, not a plain tensor" %
                         (names[i], type(r).__name__))
        # every look at r through _T: the side may have rebound any method
        rn, rs, os_ = _T.numel(r), tuple(_T.size(r)), tuple(_T.size(o))
        if rn and _in_outputs(r, outs):
            raise _Shape("output '%s' is a view of the harness's own output "
                         "buffer: a result must be a tensor of the side's "
                         "own" % names[i])
        if rn != _T.numel(o) or (len(rs) > 0 and rs != os_):
            raise _Shape("output '%s' has shape %s, expected %s" % (
                names[i], list(rs), list(os_)))
        # copy_ converts: argmax indices returned as floats + 0.9, or f32
        # where the problem says f16, came back truncated or rounded to
        # the right answer (red team, 2026-11-30)
        if _T.dtype(r) != _T.dtype(o):
            raise _Shape("output '%s' is %s, expected %s" % (
                names[i], str(_T.dtype(r)).replace("torch.", ""),
                str(_T.dtype(o)).replace("torch.", "")))
        _T.copy_(o, _T.reshape(_T.detach(r), os_))


class _Shape(Exception):
    pass


def _direct(torch, fn):
    """What to call for fn: a module's forward itself when calling the
    module would only reach it (no hooks, Module's own __call__) -- the
    same function, without _call_impl's cold lines in the timed window."""
    m = torch.nn.modules.module
    if (isinstance(fn, torch.nn.Module) and
            type(fn).__call__ is torch.nn.Module.__call__ and
            getattr(fn, "_compiled_call_impl", None) is None and
            not fn._forward_hooks and not fn._forward_pre_hooks and
            not getattr(fn, "_backward_hooks", None) and
            not getattr(m, "_global_forward_hooks", None) and
            not getattr(m, "_global_forward_pre_hooks", None) and
            not getattr(m, "_global_backward_hooks", None)):
        return fn.forward
    return fn


def _put_one(torch, outs):
    """The common case of _put, its checks settled before the call: one
    output, a plain tensor of its shape and dtype, copied.  Returns
    put(res) -> True when it copied; False leaves the case to _put (which
    names what is wrong)."""
    if len(outs) != 1:
        return lambda res: False
    o = outs[0]
    shape, dtype, plain = tuple(_T.size(o)), _T.dtype(o), torch.Tensor
    copy, dp, size, dt = _T.copy_, _T.data_ptr, _T.size, _T.dtype
    lo = dp(o)
    hi = lo + _T.numel(o) * _T.element_size(o)

    def put(res):
        if (type(res) is plain and dt(res) is dtype and
                tuple(size(res)) == shape and not lo <= dp(res) < hi):
            copy(o, res)
            return True
        return False
    return put


def _in_outputs(r, outs):
    """Whether tensor r lies in one of the harness's output buffers: a
    side that found them (its caller's frame) and returned one, written
    in place, skipped the allocation and the copy the reference pays
    (red team, 2026-11-30: +15% on a relu)."""
    p = _T.data_ptr(r)
    for o in outs:
        lo = _T.data_ptr(o)
        if lo <= p < lo + _T.numel(o) * _T.element_size(o):
            return True
    return False


AUDIT_BAD = ("open", "socket.", "subprocess.", "os.system", "os.exec",
             "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
             "os.kill", "os.killpg", "ctypes.dlopen", "ctypes.dlsym",
             "ctypes.cdata", "mmap.__new__", "os.chmod", "os.remove",
             "os.rename", "os.mkdir", "shutil.", "os.listdir",
             "os.scandir", "glob.glob", "sys.settrace",
             "sys.setprofile", "gc.get_referrers", "gc.get_objects")


def _close_image(fd):
    """Closes the side's memfd and every duplicate of it: Python's mmap
    keeps a dup of the descriptor it mapped, read-write, through which the
    call process could read or write the whole image (other buffers, the
    guards' canaries) past its views' protections (red team, 2026-11-30:
    fds 6 and 7 still open in the child)."""
    st = os.fstat(fd)
    top = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    top = 4096 if top == resource.RLIM_INFINITY else min(top, 65536)
    for other in range(3, top):
        try:
            o = os.fstat(other)
        except OSError:
            continue
        if (o.st_dev, o.st_ino) == (st.st_dev, st.st_ino):
            os.close(other)


def _warm_call(torch, fn, args, outs, cfg):
    """Both sides of a call warmed alike before READY: one call of the
    side's own function on its buffers as they are (the previous draw, or
    nothing yet: the harness draws after every side is armed), the result
    put into the outputs, which the harness poisons again before RUN.
    Without it the reference paid its process's first call (allocator,
    dispatch caches, page faults of the copy-out: ~1 ms on CPU, where the
    op itself is ~50 us) inside its timed window, while a candidate could
    pay it in its constructor, untimed: 2-6x over eager for torch's own
    relu (red team, 2026-11-30).  Its failure is not reported: the timed
    call that follows says what the side does."""
    try:
        with torch.no_grad():
            _put(torch, fn(*args), outs, cfg.get("outputs", []))
    except BaseException:
        pass


def _child(torch, code, cfg, plan, devnull, reply, ro_fd=None):
    """One call: runs with the candidate's code; never returns."""
    os.close(1)           # the zygote's status pipe: not the child's
    os.dup2(devnull, 1)   # prints go nowhere
    ctypes_ok = _libc is not None
    if ctypes_ok:
        _libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    device = cfg.get("device", "cpu")
    try:
        ins, outs, keep = _views(torch, 3, plan, device, ro_fd) if plan \
            else ([], [], [])
    except Exception as e:
        _say(reply, "ERR infra mapping the buffers: %s" % e)
        os._exit(3)
    _close_image(3)
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    except (ValueError, OSError):
        pass
    _seccomp(True)
    args = _call_args(cfg, ins) if plan else list(ins)

    def hook(event, hargs):
        if event.startswith(AUDIT_BAD) or event == "open":
            _violation(reply, event, hargs)
    sys.addaudithook(hook)
    try:
        fn = _load(torch, code, cfg, reply)
    except _Refused as e:
        _say(reply, "ERR load %s" % e)
        os._exit(4)
    except SyntaxError as e:
        _say(reply, "ERR syntax %s" % e)
        os._exit(4)
    except BaseException as e:
        _say(reply, "ERR init %s" % _short_exc(e))
        os._exit(4)
    if plan:
        _warm_call(torch, fn, args, outs, cfg)
    # outside the timed window: before READY
    torch.manual_seed(CALL_SEED)
    _seed_all(CALL_SEED)
    # What runs between RUN and DONE is timed on a cold cache (the
    # harness flushes it before a timed call): every line of the runner's
    # own there is charged, and only to a side that lets the runner do the
    # work.  A candidate that took the loop over from its constructor
    # (READY and DONE written itself, the result computed into the output
    # view) skipped it and was timed 2.1x faster than the same op
    # (red team, 2026-11-30).  So all that can be is settled before READY:
    # gradients off for the process, the function to call, the outputs'
    # checks; the call itself reads 4 bytes, calls, copies, writes.
    names = cfg.get("outputs", [])
    torch.set_grad_enabled(False)
    call = _direct(torch, fn)
    put1 = _put_one(torch, outs)
    run = b"RUN\n"
    done = b"DONE\n"
    read, write = os.read, os.write
    _say(reply, "READY")
    if not plan:
        _readline(0)
        os._exit(0)
    if read(0, 4) != run:
        os._exit(0)
    try:
        res = call(*args)
        if device != "cpu":
            torch.cuda.synchronize()
        # the copy into the outputs is part of the call: a tensor that
        # computes lazily (a subclass) cannot hide work after DONE
        if not put1(res):
            _put(torch, res, outs, names)
    except _Shape as e:
        _say(reply, "ERR shape %s" % e)
        os._exit(6)
    except BaseException as e:
        _say(reply, "ERR run %s" % _short_exc(e))
        os._exit(5)
    write(reply, done)
    _readline(0)
    os._exit(0)


def serve(jail):
    global _libc
    status = 1
    # fd 2 is the children's reply pipe: the zygote's own stderr (torch's
    # import chatter, say) must not land there
    reply = os.dup(2)
    nul = os.open("/dev/null", os.O_RDWR)
    os.dup2(nul, 2)
    os.close(nul)
    try:
        torch = _import_torch()
        with open(os.path.join(jail, "torch.json")) as f:
            cfg = json.load(f)
        src = _read_source(os.path.join(jail, "side.py"))
        device = cfg.get("device", "cpu")
        _warm(torch, device)
        devnull = os.open("/dev/null", os.O_RDWR)
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _libc = None
    except _NotUtf8 as e:
        _say(status, "FAIL syntax %s" % e)
        return 4
    except Exception as e:
        _say(status, "FAIL infra %s" % _short_exc(e))
        return 3
    try:
        code = compile(src, "side.py", "exec", dont_inherit=True)
        cfg["_modules"] = _read_modules(jail, cfg, src)
    except SyntaxError as e:
        _say(status, "FAIL syntax %s" % _syntax(e))
        return 4
    except Exception as e:
        _say(status, "FAIL syntax %s" % e)
        return 4
    try:
        import socket
        # a fresh network namespace has nothing but loopback
        if [n for _, n in socket.if_nameindex()] == ["lo"]:
            netns = ["netns"]
        else:
            netns = []
    except OSError:
        netns = []
    # a read-only descriptor of the image for the children's input views
    # (opened while /proc is still reachable): mapped from the memfd's
    # read-write one, PROT_READ is only a default that mprotect undoes
    # (red team, 2026-11-30: an input made writable carried a counter
    # from one call process to the next)
    try:
        ro_fd = os.open("/proc/self/fd/3", os.O_RDONLY)
    except OSError:
        ro_fd = None
    try:
        defs = _lockdown(jail) + netns
    except OSError as e:
        _say(status, "FAIL infra lockdown: %s" % e)
        return 3
    if ro_fd is not None:
        defs.append("ro-inputs")
    _say(status, "READY %s torch=%s compile=%s" % (
        " ".join(defs), torch.__version__,
        "yes" if hasattr(torch, "compile") else "no"))
    # the zygote's objects out of the collector's reach, so no call
    # process pays copy-on-write faults for a collection of them in its
    # timed call (every side alike; a candidate could do it for itself)
    gc.freeze()
    while True:
        line = _readline(0)
        if line is None or line == "EXIT":
            return 0
        if line in ("RUN", "UN", "N", ""):
            # what a call process left of its own RUN line (fd 0 is
            # shared; a side that replaced the runner's reader may take
            # less than its line): not a command, and no reason to die
            # (red team, 2026-11-30: the zygote's exit made a candidate's
            # call an infra_error)
            continue
        if not line.startswith("ARM "):
            _say(status, "FAIL infra unknown command")
            return 3
        plan = json.loads(line[4:])
        pid = os.fork()
        if pid == 0:
            try:
                _child(torch, code, cfg, plan, devnull, reply, ro_fd)
            finally:
                os._exit(9)
        _say(status, "FORKED %d" % pid)
        _, st = os.waitpid(pid, 0)
        if os.WIFSIGNALED(st):
            _say(status, "EXITED -%d" % os.WTERMSIG(st))
        else:
            _say(status, "EXITED %d" % os.WEXITSTATUS(st))


# ----------------------------------------------------------- persistent --

MS_RDONLY, MS_NOSUID, MS_NODEV = 1, 2, 4
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
CLONE_NEWNS = 0x20000
# Hidden from a JIT side (an empty read-only tmpfs over each) unless a
# path the side needs lies inside: where hosts keep homes, service state,
# sockets, credentials and checkouts.  /tmp becomes a fresh tmpfs.
JIT_HIDE = ("/root", "/home", "/work", "/var", "/run", "/srv", "/mnt",
            "/media", "/opt", "/boot")
JIT_CACHE = "/tmp/kf-jit"
# The JIT path's audit hook names only sockets: subprocess timeouts
# (os.kill), torch.compile's tracing and allocator tools (settrace, gc) are
# what compilers and torch use there; seccomp is the wall either way.
JIT_AUDIT_BAD = ("socket.",)


def _jit_env():
    """The compile caches of Triton, Inductor and cpp_extension, all in
    the side's private directory; set before torch and triton read them."""
    env = {"TMPDIR": JIT_CACHE, "HOME": JIT_CACHE,
           "XDG_CACHE_HOME": JIT_CACHE,
           "TRITON_CACHE_DIR": JIT_CACHE + "/triton",
           "TORCHINDUCTOR_CACHE_DIR": JIT_CACHE + "/inductor",
           "TORCH_EXTENSIONS_DIR": JIT_CACHE + "/extensions",
           "TORCHINDUCTOR_COMPILE_THREADS": "1",
           "USER": "nobody"}
    os.environ.update(env)


def _mount(src, dst, fstype, flags, data):
    return _libc.mount(src.encode() if src else None, dst.encode(),
                       fstype.encode() if fstype else None, flags,
                       data.encode() if data else None) == 0


def _seed_open(seed, torch):
    """The tree of the harness's snapshot of this side's load (jitcache.h),
    opened before /tmp and the rest are hidden; None when there is none, or
    it was made under another torch (its builds would load, then crash)."""
    if not seed:
        return None
    try:
        d = os.open(seed, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        with open(os.open("meta", os.O_RDONLY | os.O_NOFOLLOW,
                          dir_fd=d)) as f:
            meta = dict(line.strip().split("=", 1) for line in f
                        if "=" in line)
        if meta.get("torch") != torch.__version__:
            return None
        return os.open("tree", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                       dir_fd=d)
    except (OSError, ValueError):
        return None
    finally:
        os.close(d)


def _seed_copy(tfd):
    """The snapshot's tree into the fresh cache directory, owned by nobody:
    links copied as links, files with their times and without set-id
    bits, nothing else.
    Best effort: what fails to copy is compiled again."""
    n = 0
    top = "/proc/self/fd/%d" % tfd
    for root, dirs, files in os.walk(top, followlinks=False):
        rel = os.path.relpath(root, top)
        dst = JIT_CACHE if rel == "." else os.path.join(JIT_CACHE, rel)
        for name in dirs + files:
            src, out = os.path.join(root, name), os.path.join(dst, name)
            try:
                st = os.lstat(src)
                if stat.S_ISLNK(st.st_mode):
                    os.symlink(os.readlink(src), out)
                elif stat.S_ISDIR(st.st_mode):
                    os.mkdir(out, 0o700)
                elif stat.S_ISREG(st.st_mode):
                    shutil.copyfile(src, out, follow_symlinks=False)
                    os.chmod(out, (st.st_mode & 0o755) | 0o600)
                    # ninja's "up to date" compares these, to the ns
                    os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
                else:
                    continue
                os.lchown(out, NOBODY, NOBODY)
                n += 1
            except OSError:
                continue
    os.close(tfd)
    return n


def _jit_view(torch, seed=None):
    """A private mount namespace (as root): JIT_HIDE hidden, /tmp fresh,
    the cache directory owned by nobody, holding the snapshot of this
    side's load when the harness gave one (seed).  Returns the defense
    words."""
    needed = [os.path.realpath(p) for p in (
        sys.prefix, sys.base_prefix, os.path.dirname(torch.__file__),
        os.path.dirname(os.__file__))]
    for name in ("triton", "numpy"):
        m = sys.modules.get(name)
        if m is not None and getattr(m, "__file__", None):
            needed.append(os.path.realpath(os.path.dirname(m.__file__)))
    for d in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if d and os.path.isdir(d):
            needed.append(os.path.realpath(d))
    needed += [os.path.realpath(p) for p in sys.path if p]
    words = []
    if _libc is None or os.geteuid() != 0:
        os.makedirs(JIT_CACHE, 0o700, exist_ok=True)
        return words
    tfd = _seed_open(seed, torch)
    if _libc.unshare(CLONE_NEWNS) != 0 or not _mount(
            None, "/", None, MS_REC | MS_PRIVATE, None):
        os.makedirs(JIT_CACHE, 0o700, exist_ok=True)
        if tfd is not None:
            os.close(tfd)
        return words

    def inside(d):
        return any(n == d or n.startswith(d + "/") for n in needed)
    hid = 0
    for d in JIT_HIDE:
        if os.path.isdir(d) and not os.path.islink(d) and not inside(d):
            hid += _mount("tmpfs", d, "tmpfs", MS_RDONLY | MS_NOSUID |
                          MS_NODEV, "size=4k,mode=755")
    if not inside("/tmp") and _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID |
                                     MS_NODEV, "size=4g,mode=1777"):
        words.append("private-tmp")
    if hid:
        words.append("hidden-fs")
    os.makedirs(JIT_CACHE, 0o700, exist_ok=True)
    os.chown(JIT_CACHE, NOBODY, NOBODY)
    if tfd is not None and "private-tmp" in words:
        words.append("jit-seed=%d" % _seed_copy(tfd))
    elif tfd is not None:
        os.close(tfd)
    return words


def _no_autotune():
    """triton.autotune keeps its first config: knobs come from the search,
    and a candidate's call does not benchmark configurations inside the
    timed window."""
    tr = sys.modules.get("triton")
    if tr is None or not hasattr(tr, "autotune"):
        return
    orig = tr.autotune

    def first_only(configs, key, *a, **k):
        return orig(list(configs)[:1], key, *a, **k)
    tr.autotune = first_only
    for name in ("triton.runtime", "triton.runtime.autotuner"):
        m = sys.modules.get(name)
        if m is not None and hasattr(m, "autotune"):
            m.autotune = first_only


def _pviews(torch, ro, rw, plan):
    """The call's buffers as tensors over the side's one mapping of the
    memfd: inputs from the read-only one, outputs from the writable one."""
    ins, outs = [], []
    for t, w in ([(t, False) for t in plan["in"]] +
                 [(t, True) for t in plan["out"]]):
        off, dt, dims = t
        n = 1
        for d in dims:
            n *= d
        if n == 0:
            ten = torch.empty(dims, dtype=DTYPES[dt])
        else:
            ten = torch.frombuffer(rw if w else ro, dtype=DTYPES[dt],
                                   count=n, offset=off).view(dims)
        (outs if w else ins).append(ten)
    return ins, outs


class _Charge:
    """What a GPU call is charged, from its two event times (pure
    arithmetic: no torch, tested on CPU by tests/unit/test_torch_timer.py).

    Each timed call gives t_stream, start event -> an event recorded on the
    call's stream right after the side returned (exactly the device time
    of that stream's work), and t_all, start event -> an event recorded
    after a device-wide synchronize (it covers work the call queued on any
    stream, plus o: the host's wake-up from the synchronize and one event
    launch on an idle GPU).  o is measured by null calls (nothing queued)
    under the same flush/sleep/event protocol, one before every timed call
    of the side's process and CALIBRATE at its start; the last WINDOW are
    kept.  Charged: max(t_stream, t_all - o), o the window's median.

    Why the median: subtracting a low quantile would charge every honest
    call the jitter above it (a bias that pulls every ratio toward 1);
    with the median an honest single-stream call is charged exactly
    t_stream in at least half the calls, so its median charge is
    t_stream's.  The price: work left on another stream past the end of
    the call's stream hides only where this call's o' was below the
    median, by at most o_median - o' <= o_median - o_min per call (the
    window's median less its minimum: `bound()`)."""

    WINDOW = 64
    CALIBRATE = 32
    SIDE_MIN_NS = 1000

    def __init__(self):
        self.null = []

    def add_null(self, t_all_ns):
        self.null.append(max(0, int(t_all_ns)))
        del self.null[:-self.WINDOW]

    def _q(self, q):
        if not self.null:
            return 0
        v = sorted(self.null)
        return v[min(len(v) - 1, int(q * (len(v) - 1)))]

    def overhead(self):
        """o: the null calls' median (the lower one of an even count)."""
        return self._q(0.5)

    def bound(self):
        """At most this much of a call's work on other streams can go
        uncharged: o's median less its minimum."""
        return self._q(0.5) - self._q(0.0)

    def threshold(self):
        """An excess above this is side-stream work, not o's jitter: the
        window's 90th percentile less its median (an honest call passes
        it in about one call in ten), at least SIDE_MIN_NS."""
        return max(self.SIDE_MIN_NS, self._q(0.9) - self._q(0.5))

    def charge(self, t_stream, t_all):
        """(ns charged, whether work on other streams ran past the end of
        the call's stream's work by more than o's jitter)."""
        rest = int(t_all) - self.overhead()
        ns = max(int(t_stream), rest)
        return ns, rest - int(t_stream) > self.threshold()

    SIDE = 1        # DONE's flags: work on other streams ran past the call's
    HOST = 2        # the call's host dispatch outlasted its GPU time
    BASE_HOST = 4   # the same, for the reference's torch.compile'd model
    TUNED_HOST = 8  # the same, for its max-autotune-no-cudagraphs model
    GATE = 16       # before the call, _IdleGate waited out another
                    # process's GPU work (its convicts())
    BASED_NEXT = 32  # the baselines follow on a line of their own (BASED)

    GATED_SIDE_NS = 100000

    def gated_t_all(self, t_stream, t_all, t_seen):
        """t_all for charge_call, for a call queued behind the go word
        (_GoGate): t_seen is the start event to an event recorded on the
        call's stream as soon as its end was seen, t_all to one after the
        device-wide synchronize that followed.

        After the GPU was held at the go word, new work on it started
        30-150 us late for a while (H200, 2026-12-01: 128 MiB each way,
        an event recorded right after the call's stream was seen done
        was stamped 30-150 us after its end; 20-30 us on a call of a few
        KiB), though an idle GPU's synchronize costs 8-16 us: t_all less
        o charged such an honest call 2-3x its kernel.  What the
        synchronize adds after t_seen is what other streams still had
        to do (and the synchronize's own cost, as in o); charged when it
        is more than GATED_SIDE_NS past o, the eval's clock's least
        slack (pipeline.c kf_harness__wall_bound), which holds what is
        left below it."""
        side = int(t_all) - int(t_seen) - self.overhead()
        if side <= self.GATED_SIDE_NS:
            return int(t_stream) + self.overhead()
        return int(t_stream) + side + self.overhead()

    def charge_call(self, t_stream, t_all, t_host):
        """(ns charged, flags): charge()'s rule, then the host's side.  A
        call whose host dispatch (t_host: the side's function from call to
        return, on this process's clock) took longer than the GPU time
        charged is charged t_host instead.  Two reasons.  Honesty: called
        back to back, such a function runs at its host's pace, not its
        GPU's (a compiled graph's guards, many tiny launches).  And
        defence: the sleep queued before the start event covers up to
        ~0.3 ms of host work; without this rule a side could compute its
        answer on the CPU there and only copy it to the GPU inside the
        timed span."""
        ns, side = self.charge(t_stream, t_all)
        flags = self.SIDE if side else 0
        if int(t_host) > ns:
            ns = int(t_host)
            flags |= self.HOST
        return ns, flags

    def charge_trusted(self, t_stream, t_all, t_host):
        """(ns charged, flags) for the reference's torch.compile'd models
        (the baselines beside it): charge()'s rule alone; a host dispatch
        that outlasted it is flagged (HOST), not charged.  They are
        trusted, so there is no answer computed on the CPU to guard
        against, and their dispatch (a compiled graph's guards) outlasted
        their GPU work here in 8-12 of 12 timed calls and moved their
        charged time 1.7-3.1x between runs of one kernel (H200,
        2026-11-30): charged their GPU time, a baseline is never slower
        than its kernels, which leans against the candidate.  The
        reference itself (eager) is not charged so: the speedup is its
        time over the candidate's, so both get one rule (charge_call)
        and one warm-up (_HostWarm.own)."""
        ns, side = self.charge(t_stream, t_all)
        flags = self.SIDE if side else 0
        if int(t_host) > ns:
            flags |= self.HOST
        return ns, flags

    TRUSTED_HOST = "not charged (trusted: its GPU time)"

    @staticmethod
    def host_note(n_host, n_timed, what="the call", trusted=False):
        """The time stage's remark when most timed calls were host-bound
        (harness/torch/backend.c prints the same words)."""
        if n_timed <= 0 or 2 * n_host <= n_timed:
            return ""
        return ("%s's host dispatch outlasted its GPU work in %d of %d timed "
                "calls: %s" % (what, n_host, n_timed,
                               _Charge.TRUSTED_HOST if trusted
                               else "host time charged"))

    @staticmethod
    def note(n_side, n_timed):
        """The time stage's remark on a side, "" when most of its timed
        calls had no side-stream excess (harness/torch/backend.c prints
        the same words)."""
        if n_timed <= 0 or 2 * n_side <= n_timed:
            return ""
        return ("work on streams other than the current one in %d of %d "
                "timed calls: charged" % (n_side, n_timed))


class _IdleGate:
    """Waits, before each call of a GPU side, until the GPU answers QUIET
    quick probes in a row, and says how long it waited and how many
    probes found it held by another process (pure logic over a probe;
    tested on CPU by tests/unit/test_torch_timer.py).

    Why: each side is a process of its own and is stopped between calls,
    but stopping a process does not stop the GPU work it queued.  A
    candidate that leaves work running past its DONE (its runner patched
    so that the device-wide synchronize does not wait for it) is not
    charged for it, and that work competes with whatever runs next -- the
    reference's timed call.  Contexts of different processes share the GPU
    by time slices: a probe (a one-element kernel, then a synchronize
    whose wait alone is the probe's figure, so that a host cold from its
    stop does not count) waits while the other context holds the GPU.
    The gate probes until QUIET probes in a row are quick.

    What it does and does not do, measured on an H200 (2026-11-30,
    docs/gpu-runs/2026-11-30-h200): a stopped process's sleep kernel of
    0.05-20 ms made the next process's first probe wait 0.2-1.4 ms (its
    context switched in), and a relu timed right after it took its idle
    time -- the newcomer kept the GPU; work of 100 ms got time slices of
    ~2.3 ms back between probes.  So the wait does not guarantee that
    the other process's work has ended, only that the GPU answered
    QUIET probes in a row.  It names the work when the GPU was held from
    it for long: CONVICT slow probes over at least CONVICT_NS, or a wait
    that reached DEADLINE_NS (harness/torch/backend.c turns a reference's
    report into the verdict of the side called before it).  Shorter
    bursts are waited for and not named: on the same H200 an honest
    candidate's call was followed by 6 slow probes over 1.2 ms (host
    and all, before the probe timed the synchronize alone)."""

    CALIBRATE = 32
    WINDOW = 64
    QUIET = 3
    SLOW_MIN_NS = 50000       # a probe this much above the idle median
    SLOW_MAX_NS = 500000      # ... never more (a calibration under load)
    CONVICT = 3
    CONVICT_NS = 10000000
    DEADLINE_NS = 5000000000

    def __init__(self, probe, clock):
        self.probe = probe
        self.clock = clock
        self.quick = []

    def _q(self, q):
        v = sorted(self.quick)
        return v[min(len(v) - 1, int(q * (len(v) - 1)))] if v else 0

    def _add(self, ns):
        self.quick.append(int(ns))
        del self.quick[:-self.WINDOW]

    def calibrate(self):
        for _ in range(self.CALIBRATE):
            self._add(self.probe())

    def limit(self):
        """The slowest probe that still says idle, ns."""
        med = self._q(0.5)
        return med + min(self.SLOW_MAX_NS,
                         max(self.SLOW_MIN_NS, 3 * (self._q(0.9) - med)))

    def wait(self):
        """(ns from the first probe to the end of the last slow one --
        0 when none was slow --, slow probes, whether DEADLINE_NS ran
        out with the GPU still busy)."""
        lim = self.limit()
        t0 = self.clock()
        busy_end = t0
        quick = slow = 0
        while quick < self.QUIET:
            d = self.probe()
            if d <= lim:
                quick += 1
                self._add(d)
                continue
            quick = 0
            slow += 1
            busy_end = self.clock()
            if busy_end - t0 > self.DEADLINE_NS:
                return busy_end - t0, slow, True
        return (busy_end - t0 if slow else 0), slow, False

    def convicts(self, busy, slow, ran_out):
        """Whether a wait (busy ns, slow probes, ran out) names the work."""
        return ran_out or (slow >= self.CONVICT and busy >= self.CONVICT_NS)


def _gpu_probe(torch, dev):
    """The gate's probe: one tiny kernel, then a device-wide synchronize;
    the synchronize's ns (the launch returns at once, busy GPU or not;
    the wait for the GPU is in the synchronize, and a cold host's slow
    launch is not).  Bound before the side's code loads."""
    buf = torch.zeros(1, device=dev)
    add_ = buf.add_
    sync = torch.cuda.synchronize
    clock = time.perf_counter_ns

    def probe():
        add_(1)
        t0 = clock()
        sync()
        return clock() - t0
    return probe


def _nothing():
    """The null call that calibrates o (_Charge)."""
    return None


def _timed_gpu(torch, fn, args, flush, ev, seq, spin=0):
    """One call timed by CUDA events: (result, t_stream ns, t_all ns,
    t_host ns -- the side's function from call to return on the host's
    clock; _Charge.charge_call).
    L2 flushed first, then a sleep kernel of `spin` cycles, so that the
    host's dispatch of the call (a compiled graph's guards and launch take
    far longer than the flush) happens while the GPU is still busy and is
    not charged -- the CUDA backend's --cuda-warm-us, for this path (on
    the H100, 2026-11-26, without it torch.compile of a relu was timed at
    0.42 ms against 0.09 ms eager).  ev[1] on the call's stream as soon as
    the side returns: t_stream.  ev[2] after a device-wide synchronize:
    t_all, which also covers work the call queued on other streams
    (torch's stream pool makes non-blocking streams that ev[1] does not
    wait for), plus the synchronize's overhead; _Charge turns the two
    into the time charged.  All three events go on the stream current
    when the call starts, whatever the side does to the current stream."""
    torch.manual_seed(CALL_SEED)
    st = torch.cuda.current_stream()
    flush.fill_(seq & 0xFF)
    # The fill leaves L2 full of dirty lines whose write-back the call
    # would pay (6 us of a 74 us norm on an H200,
    # docs/gpu-runs/2026-11-26-l2-dirty): a read sweep writes them back
    # first and leaves L2 clean.
    flush.view(torch.int32).amax()
    if spin:
        torch.cuda._sleep(spin)
    ev[0].record(st)
    h0 = time.perf_counter_ns()
    res = fn(*args)
    h1 = time.perf_counter_ns()
    ev[1].record(st)
    torch.cuda.synchronize()
    ev[2].record(st)
    ev[2].synchronize()
    return (res, int(round(ev[0].elapsed_time(ev[1]) * 1e6)),
            int(round(ev[0].elapsed_time(ev[2]) * 1e6)), h1 - h0)


def _null_sample(torch, acct, flush, ev, seq, spin):
    """One null call under the timed protocol, into acct."""
    acct.add_null(_timed_gpu(torch, _nothing, (), flush, ev, seq, spin)[2])


def _spin_cycles(torch, ev, target_ms=0.3):
    """GPU cycles of torch.cuda._sleep that last about target_ms on this
    device (measured once per process: clocks differ between GPUs); 0 when
    the sleep kernel is missing or cannot be timed.  The shortest of
    several tries, i.e. at the clock the GPU reaches once busy, so that
    every side's process sleeps alike: the sleep is in the harness's part
    of each side's clock (backend.c p_call), which the time stage takes
    as the same for both.  (One try could meet an idle GPU's lower clock,
    or another process's start-up on the GPU.)"""
    try:
        # ~10 ms busy first: an idle GPU's clock is still rising during
        # the first milliseconds, and a process that measured there would
        # sleep less at the busy clock than one that did not
        torch.cuda._sleep(20000000)
        best = 0
        for _ in range(6):
            ev[0].record()
            torch.cuda._sleep(1000000)
            ev[1].record()
            ev[1].synchronize()
            ms = ev[0].elapsed_time(ev[1])
            if ms > 0 and (not best or ms < best):
                best = ms
        return int(1000000 * target_ms / best) if best else 0
    except Exception:
        return 0


def _pin(torch, ro, rw, size, dev):
    """Page-locks the side's image (both mappings of the memfd) for the
    GPU's copy engines: the copies of a call's inputs to the device and of
    its outputs back are on the harness's clock of the call (backend.c
    p_call), whose noise widens the clock's slack: at 128 MiB each way
    the clock's part was 45-51 ms a call with pageable copies, 28-30 ms
    page-locked (H200, 2026-12-01).  False when the driver refuses: the
    copies then stay pageable, nothing stays registered, and the
    refusal, which the CUDA runtime keeps as its last error, is taken
    out of the way of torch's next launch check by a launch of its
    own."""
    done = []
    rt = None
    try:
        import warnings
        rt = torch.cuda.cudart()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for m, flags in ((rw, 0), (ro, 8)):  # 8: cudaHostRegisterReadOnly
                ptr = torch.frombuffer(m, dtype=torch.uint8,
                                       count=size).data_ptr()
                if int(rt.cudaHostRegister(ptr, size, flags)) != 0:
                    break
                done.append(ptr)
    except Exception:
        pass
    if len(done) == 2:
        return True
    for ptr in done:
        try:
            rt.cudaHostUnregister(ptr)
        except Exception:
            pass
    for _ in range(2):
        try:
            torch.zeros(1, device=dev).add_(1)
            torch.cuda.synchronize()
            break
        except Exception:
            pass
    return False


class _GoGate:
    """The eval's go word for a timed call on the GPU: the last page of
    the side's image (backend.c start_one), a word the stream of the call
    waits on (cuStreamWaitValue32) until the eval writes the call's number
    there, right after it copied the call's inputs into the image.

    Why: the eval's clock of a timed call runs from that copy to its copy
    of the outputs (backend.c p_call), and holds the time this process
    claims to it.  Whatever harness work lies inside it, this process can
    skip, and so claim that much less: the red team's forge_lean.py
    skipped the L2 flush, the 0.3 ms sleep that hid the host's dispatch
    and two synchronizes, ~0.9 ms of a 2.7 ms part (H200, 2026-12-01),
    ok at 3.8x where honest is 1.0x.  With the gate, the whole call --
    the wait, the copies of the inputs to the device, the flush, the
    events and the side's own dispatch -- is queued before the inputs
    exist (WARM, _gated_begin), with the GPU held at the wait: no sleep is
    needed to keep the host's dispatch out of the GPU's time, and what
    lies inside the clock is the copies, the flush and the reply.

    None (the sleep's protocol) where the image is not page-locked, the
    driver has no such wait, or the wait does not hold and release as it
    must (checked here, before any of the side's code)."""

    EQ = 1  # CU_STREAM_WAIT_VALUE_EQ
    TRY_S = 2.0

    def __init__(self, torch, rw, size):
        lib = ctypes.CDLL("libcuda.so.1")
        fn = getattr(lib, "cuStreamWaitValue32_v2", None)
        if fn is None:
            fn = lib.cuStreamWaitValue32
        fn.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32,
                       ctypes.c_uint]
        fn.restype = ctypes.c_int
        dp = getattr(lib, "cuMemHostGetDevicePointer_v2", None)
        if dp is None:
            dp = lib.cuMemHostGetDevicePointer
        dp.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_void_p,
                       ctypes.c_uint]
        dp.restype = ctypes.c_int
        page = mmap.PAGESIZE
        host = torch.frombuffer(rw, dtype=torch.uint8,
                                count=size).data_ptr() + size - page
        d = ctypes.c_uint64(0)
        if dp(ctypes.byref(d), ctypes.c_void_p(host), 0) != 0:
            raise OSError("cuMemHostGetDevicePointer refused the go page")
        self._fn, self.dev = fn, d.value
        self._word = memoryview(rw)[size - page:size - page + 4].cast("I")
        # the wait holds, then lets go when the word is written
        st = torch.cuda.current_stream()
        self._word[0] = 0
        e = torch.cuda.Event()
        self.wait(st, 0xFFFFFFFE)
        e.record(st)
        time.sleep(0.002)
        held = not e.query()
        self._word[0] = 0xFFFFFFFE
        t_end = time.monotonic() + self.TRY_S
        while not e.query():
            if time.monotonic() > t_end:
                # a stream that never lets go: this process is no use
                raise OSError("the GPU never saw the go word")
            time.sleep(0.0005)
        self._word[0] = 0
        if not held:
            raise OSError("the wait on the go word did not hold")

    def passed(self, value):
        """Whether the eval has written value: its draw is in the image."""
        return self._word[0] == value

    def wait(self, stream, value):
        rc = self._fn(ctypes.c_void_p(stream.cuda_stream),
                      ctypes.c_uint64(self.dev), ctypes.c_uint32(value),
                      self.EQ)
        if rc != 0:
            raise RuntimeError("cuStreamWaitValue32: error %d" % rc)


def _gated_begin(torch, fn, plan, ro, rw, cfg, dev, flush, ev, seq, gate):
    """The timed call queued behind the eval's go word (_GoGate), all of
    it before the inputs exist: (res, ins, outs, args, put1, t_host ns).
    In order on the call's stream: the wait, the inputs' copies from the
    image (page-locked: the copies are asynchronous and read the image
    only once the GPU passes the wait), the L2 flush and its read sweep,
    ev[0], the side's function, ev[1].  The function's host dispatch
    happens here with the GPU held, so ev[0]..ev[1] is GPU time alone.
    A function that waits on the GPU from the host (.item(), a
    synchronize) waits here until the eval, after GO_WAIT_MS without
    QUEUED, writes the go word anyway; its host time after that is then
    its own, on the clock and in its events."""
    torch.manual_seed(CALL_SEED)
    ins, outs = _pviews(torch, ro, rw, plan)
    st = torch.cuda.current_stream()
    dins = [torch.empty(t.shape, dtype=t.dtype, device=dev) for t in ins]
    gate.wait(st, seq)
    for d, h in zip(dins, ins):
        d.copy_(h, non_blocking=True)
    args = _call_args(cfg, dins)
    put1 = _put_one(torch, outs)
    flush.fill_(seq & 0xFF)
    flush.view(torch.int32).amax()
    ev[0].record(st)
    h0 = time.perf_counter_ns()
    res = fn(*args)
    h1 = time.perf_counter_ns()
    ev[1].record(st)
    # a function that returned after the go word waited on the GPU from
    # the host: its host time after the go word is in its events already
    # (ev[1] follows its return), and what came before is no dispatch
    # time (_Charge.charge_call's host rule) but the wait for the draw
    if gate.passed(seq):
        return res, dins, outs, args, put1, 0
    return res, dins, outs, args, put1, h1 - h0


def _spin_until(ev):
    """Waits for event ev by polling it.  A synchronize that blocks from
    QUEUED through the eval's draw to the end of the call woke 50-140 us
    after the GPU was done (H200, 2026-12-01: the longer the block, the
    later), which t_all then counted as work on other streams; polled,
    the synchronize after it finds the call's stream done and waits only
    for other streams' work, as the null calls' does."""
    while not ev.query():
        pass


class _HostWarm:
    """Warms the host right before a timed call on the GPU.

    A runner is stopped between calls and copies its inputs to the GPU
    (through the CPU) just before the timed call, so its host starts that
    call with cold caches: measured by hand on an H100 and an H200
    (2026-11-26, docs/torch.md), one Triton launch took 19-39 us of host
    dispatch hot and 150-230 us after a 50 ms pause, a torch.compile'd
    call 44-74 us hot and 250-310 us cold.  _Charge.charge_call charges
    host dispatch that outlasts the GPU work, so a cold host made honest
    calls look slower than their kernels.  What is warmed:

    - every side's own function, on dummy inputs of the call's shapes
      and dtypes that the harness drew once per plan (own): the
      reference, its torch.compile'd models before theirs, and a
      candidate -- so that both sides of the speedup start their timed
      call equally warm;
    - for a candidate first, harness-owned work that walks the library
      paths (torch's dispatcher and allocator, the CUDA launch, and
      Triton's launcher when the source names Triton): bound here,
      before the side's code loads, so a side that rebinds torch.relu
      later does not get called.

    Until 2026-11-30 a candidate got only the second, "never the
    candidate's code while its timed inputs are on the device": the
    reference's own function as a candidate was then host-bound in 18
    of 18 timed calls and charged its host time, while the reference,
    warmed by that function, was not host-bound -- 0.69x and 0.79x of
    itself (kb1_sum_reduction, H200; 0.99x and 1.03x warmed by its own
    call, docs/gpu-runs/2026-11-30-h200-s3).  That rule bought nothing
    on this path: the
    candidate's process holds its timed inputs from the call's start,
    runs the timer itself, and may start threads (the JIT sandbox), so
    its time is its own claim, held to the harness's wall time, the
    outputs checked on every timed call and the roofline floor
    (docs/integrity.md, "PyTorch candidates").  A warm call that
    looked for the timed inputs and stashed an answer could claim no
    less than such a process can already; the outputs and the floor
    still decide.  The CPU path (no warm-up, a fresh child per call, one
    thread) keeps the property.

    The GPU work it queues is not waited for: it runs ahead of the L2
    flush and the sleep, outside the timed span."""

    def __init__(self, torch, dev, src):
        self.buf = torch.zeros(4096, device=dev)
        self.relu = torch.relu
        self.empty_like = torch.empty_like
        self.dummies = {}
        self.kernel = None
        if "triton" in src:
            try:
                self.kernel = _harness_triton_kernel()
            except Exception:
                self.kernel = None

    def candidate(self, torch):
        for _ in range(3):
            self.relu(self.buf)
            self.empty_like(self.buf)
            if self.kernel is not None:
                try:
                    self.kernel[(1,)](self.buf, 4096, BLOCK=4096)
                except Exception:
                    self.kernel = None  # e.g. no compiler: warm without it

    def own(self, torch, fn, plan, key, cfg, dev, trusted=True):
        """fn (the side's function) on dummy inputs of the plan's shapes,
        made once per plan by the harness; its result is dropped.  A
        candidate's failure here is not its verdict (the timed call
        right after decides), so it is swallowed."""
        d = self.dummies.get(key)
        if d is None:
            d = self.dummies[key] = _prep_args(torch, plan, cfg, dev)
        if trusted:
            fn(*d)
            return
        try:
            fn(*d)
        except Exception:
            pass


def _harness_triton_kernel():
    """A Triton kernel of the harness's own, defined before the lockdown
    (Triton reads a kernel's source when it is decorated; the runner's
    file is out of sight after _jit_view) and compiled at its first
    launch."""
    import triton
    import triton.language as tl

    @triton.jit
    def _kf_host_warm(p, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(p + offs, tl.load(p + offs, mask=m) * 0.0, mask=m)
    return _kf_host_warm


def _dummies(torch, plan, dev):
    """Inputs of the plan's shapes for torch.compile's warm-up: normal
    floats, zero integers (index inputs stay in range)."""
    out = []
    for off, dt, dims in plan["in"]:
        if dt in ("i32", "i64", "bool"):
            out.append(torch.zeros(dims, dtype=DTYPES[dt], device=dev))
        else:
            out.append(torch.randn(dims, device=dev).to(DTYPES[dt]))
    return out


# max-autotune-no-cudagraphs benchmarks its candidate configurations at
# each new shape, which for a matmul takes minutes; past this budget only
# that baseline is out.  It is small because the whole evaluation has a
# deadline of its own (the coordinator's eval timeout, 120 s by default),
# which the reference's import, both compiles and the timing share (each
# evaluation compiles afresh: its caches are private); the torch
# evaluations measured on an H200 took ~30 s with both modes.
# harness/torch/backend.c waits PREP_MS, which covers both compiles.
TUNE_BUDGET_S = 30


class _OverBudget(BaseException):
    """BaseException: no `except Exception` inside a compiler may swallow
    it."""


class _Budget:
    """Raises _OverBudget in the main thread after `seconds` (SIGALRM),
    and again every few seconds until the block ends (one a library
    swallowed does not unbound it): what was being compiled is abandoned,
    the runner goes on."""

    def __init__(self, seconds):
        self.seconds = seconds

    def _fire(self, signum, frame):
        raise _OverBudget("max-autotune took more than %g s at this shape"
                          % self.seconds)

    def __enter__(self):
        self.old = signal.signal(signal.SIGALRM, self._fire)
        signal.setitimer(signal.ITIMER_REAL, self.seconds, 2.0)
        return self

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.old)
        return False


def _prep_args(torch, plan, cfg, dev):
    """The call's arguments for PREP: dummies of the plan's shapes, in the
    order the reference takes them."""
    return _call_args(cfg, _dummies(torch, plan, dev))


def _prep_runs(torch, model, args, cuda):
    """A compiled model run twice on PREP's dummies: compiled (and, in
    max-autotune, tuned) for these shapes before any timed call."""
    with torch.no_grad():
        for _ in range(2):
            model(*args)
    if cuda:
        torch.cuda.synchronize()


def _reply_fd():
    """The replies' descriptor: a copy of fd 1, which then goes to
    /dev/null, so that what the side prints never reads as a reply."""
    reply = os.dup(1)
    nul = os.open("/dev/null", os.O_WRONLY)
    os.dup2(nul, 1)
    os.close(nul)
    return reply


def persist(jail):
    global _libc
    reply = _reply_fd()
    try:
        with open(os.path.join(jail, "torch.json")) as f:
            cfg = json.load(f)
        src = _read_source(os.path.join(jail, "side.py"))
        device = cfg.get("device", "cpu")
        jit = bool(cfg.get("jit"))
        if jit:
            _jit_env()
        torch = _import_torch()
        _libc = ctypes.CDLL(None, use_errno=True)
        dev = "cpu"
        flush = ev = gate = None
        spin = 0
        acct = _Charge()
        if device == "cuda":
            idx = int(cfg.get("cuda_index", 0))
            torch.cuda.set_device(idx)
            dev = torch.device("cuda", idx)
            l2 = torch.cuda.get_device_properties(idx).L2_cache_size
            flush = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8,
                                device=dev)
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
            spin = _spin_cycles(torch, ev)
        _warm(torch, dev)
        if device == "cuda":
            torch.cuda.synchronize()
            # o's first estimate, before any of the side's code runs
            for i in range(_Charge.CALIBRATE):
                _null_sample(torch, acct, flush, ev, i, spin)
            gate = _IdleGate(_gpu_probe(torch, dev), time.perf_counter_ns)
            gate.calibrate()
        hwarm = _HostWarm(torch, dev, src) if device == "cuda" else None
        size = os.fstat(3).st_size
        ro = mmap.mmap(3, size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
        rw = mmap.mmap(3, size, flags=mmap.MAP_SHARED,
                       prot=mmap.PROT_READ | mmap.PROT_WRITE)
        os.close(3)
        pinned = device == "cuda" and _pin(torch, ro, rw, size, dev)
        gogate = None
        if pinned and cfg.get("go_page"):
            try:
                gogate = _GoGate(torch, rw, size)
            except (OSError, AttributeError, RuntimeError):
                gogate = None
    except _NotUtf8 as e:
        _say(reply, "FAIL syntax %s" % e)
        return 4
    except Exception as e:
        _say(reply, "FAIL infra %s" % _short_exc(e))
        return 3
    try:
        code = compile(src, "side.py", "exec", dont_inherit=True)
        cfg["_modules"] = _read_modules(jail, cfg, src)
    except SyntaxError as e:
        _say(reply, "FAIL syntax %s" % _syntax(e))
        return 4
    except Exception as e:
        _say(reply, "FAIL syntax %s" % e)
        return 4
    try:
        import socket
        netns = (["netns"] if [n for _, n in socket.if_nameindex()] ==
                 ["lo"] else [])
    except OSError:
        netns = []
    try:
        if jit:
            # no chroot: compilers need the toolchain; instead a private
            # mount namespace hides what no compile needs, then uid nobody
            defs = _jit_view(torch, cfg.get("jit_seed"))
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
                defs.append("uid-nobody")
            if _seccomp(False, True):
                defs += ["no-new-privs", "seccomp-jit"]
            _no_autotune()
        else:
            defs = _lockdown(jail)
            try:
                resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
            except (ValueError, OSError):
                pass
            _seccomp(True)
        defs += netns
    except OSError as e:
        _say(reply, "FAIL infra lockdown: %s" % e)
        return 3
    has_compile = hasattr(torch, "compile")
    # the timer's first calibration (before any of the side's code ran):
    # o's median and median - minimum, ns, for the load stage's reason
    timer = (" timer=%d/%d pinned=%s gate=%s" % (
        acct.overhead(), acct.bound(), "yes" if pinned else "no",
        "yes" if gogate is not None else "no") if device == "cuda" else "")
    _say(reply, "LOCKED %s torch=%s compile=%s%s" % (
        " ".join(defs), torch.__version__, "yes" if has_compile else "no",
        timer))
    bad = JIT_AUDIT_BAD if jit else AUDIT_BAD

    def hook(event, hargs):
        if event.startswith(bad) or (event == "open" and not jit):
            _violation(reply, event, hargs)
    # the reference is trusted: on the JIT path torch.compile runs in its
    # process, and no hook may end it for what Dynamo or Inductor do
    if not (jit and cfg.get("role") == "reference"):
        sys.addaudithook(hook)
    try:
        fn = _load(torch, code, cfg, reply, src)
    except _Refused as e:
        _say(reply, "ERR load %s" % e)
        os._exit(4)
    except SyntaxError as e:
        _say(reply, "ERR syntax %s" % e)
        os._exit(4)
    except BaseException as e:
        _say(reply, "ERR init %s" % _short_exc(e))
        os._exit(4)
    _say(reply, "READY")
    names = cfg.get("outputs", [])
    ref = cfg.get("role") == "reference"
    cuda = device == "cuda"
    # the reference's torch.compile(model), default mode and
    # max-autotune-no-cudagraphs (issue 12's two compile baselines), after
    # PREP; a mode that failed once is not tried again
    compiled = tuned = None
    tuned_err = None
    prepared, tuned_ok = set(), set()
    lines = _Lines(0)
    plans = {}
    call = _direct(torch, fn)
    warmed = False
    pending = None  # a timed call queued at WARM (_gated_begin)
    gtrace = (0, 0)

    def baselines(plan, key, args, seq):
        """The reference's torch.compile'd models timed on its call's
        inputs, each warmed by its own call first: (BASE_NS, TUNED_NS,
        FLAGS)."""
        ns, flags = [0, 0], 0
        for i, (model, host) in enumerate(((compiled, _Charge.BASE_HOST),
                                           (tuned, _Charge.TUNED_HOST))):
            if i and key not in tuned_ok:
                break
            hwarm.own(torch, model, plan, key, cfg, dev)
            r, ts, ta, th = _timed_gpu(torch, model, args, flush, ev,
                                       seq + 1 + i, spin)
            del r
            ns[i], f = acct.charge_trusted(ts, ta, th)
            if f & _Charge.HOST:
                flags |= host
        return ns[0], ns[1], flags

    while True:
        # between calls, outside any timed window; a timed GPU call is
        # seeded again after its warm-ups (_timed_gpu)
        torch.manual_seed(CALL_SEED)
        _seed_all(CALL_SEED)
        line = lines.next()
        r0 = time.perf_counter_ns()
        if line is None or line == "EXIT":
            os._exit(0)
        cmd, _, arg = line.partition(" ")
        # A call's plan (its buffers) is the same for every call at a
        # size: parsed once, and on CPU the tensors over its buffers made
        # once too -- on CPU this line is read and handled
        # inside the timed window, and a candidate that took the loop
        # over skipped it all (red team, 2026-11-30: 2.6x for torch's own
        # relu).  Only the call's own words (seq, timed) are read each
        # time.
        cut = arg.rfind(',"seq":')
        body, tail = (arg[:cut] + "}", arg[cut + 1:]) if cut > 0 else (arg,
                                                                       "")
        ent = plans.get(body)
        try:
            if ent is None:
                plan = json.loads(body)
                ent = [plan, json.dumps([[t[1], t[2]] for t in plan["in"]]),
                       None]
                if len(plans) < 64:
                    plans[body] = ent
            meta = json.loads("{" + tail) if tail else {}
        except (ValueError, KeyError, TypeError, IndexError):
            _say(reply, "ERR infra bad command")
            os._exit(3)
        plan, key = ent[0], ent[1]
        if cmd == "PREP":
            if not (ref and has_compile):
                _say(reply, "NOCOMPILE this runner does not compile")
                continue
            try:
                if compiled is None:
                    compiled = torch.compile(fn)
                a = _prep_args(torch, plan, cfg, dev)
                _prep_runs(torch, compiled, a, cuda)
                prepared.add(key)
            except BaseException as e:
                _say(reply, "NOCOMPILE %s" % _short_exc(e))
                continue
            try:
                if tuned_err is None:
                    if tuned is None:
                        tuned = torch.compile(
                            fn, mode="max-autotune-no-cudagraphs")
                    with _Budget(TUNE_BUDGET_S):
                        _prep_runs(torch, tuned, a, cuda)
                    tuned_ok.add(key)
            except BaseException as e:
                # out for the rest of the evaluation: a baseline timed at
                # some shapes only would not be reported anyway
                tuned_err = _short_exc(e)
                tuned_ok.clear()
            if key in tuned_ok:
                _say(reply, "PREPARED")
            else:
                _say(reply, "PREPARED NOTUNE %s" % tuned_err)
            continue
        if cmd == "WARM" and cuda:
            # A timed GPU call's first half, before its inputs are drawn.
            # The harness's clock of a timed call runs from the draw into
            # this side's image to its copy of the outputs (backend.c
            # p_call), and holds the time this process claims to it; what
            # else it covers must be alike for every side.  So what needs
            # no inputs is done here, all its GPU work waited for: the
            # gate, the null sample, and the warm-up on dummies, whose GPU
            # work is as long as the side's own call.
            seq = int(meta.get("seq", 0))
            busy, nslow, ranout = gate.wait()
            try:
                with torch.no_grad():
                    _null_sample(torch, acct, flush, ev, seq, spin)
                    # the reference too: what the clock covers is warmed
                    # alike in both sides' processes
                    hwarm.candidate(torch)
                    hwarm.own(torch, fn, plan, key, cfg, dev, trusted=ref)
                torch.cuda.synchronize()
            except BaseException as e:
                _say(reply, "ERR run %s" % _short_exc(e))
                os._exit(5)
            warmed = True
            gflags = _Charge.GATE if gate.convicts(busy, nslow,
                                                   ranout) else 0
            _say(reply, "WARMED %d %d %d %d %d" % (
                seq, gflags, busy, nslow, 1 if ranout else 0))
            if gogate is None:
                continue
            # the call itself, queued behind the eval's go word
            # (_GoGate); QUEUED once it is, then waited for: the eval
            # writes the go word after its draw, and this process's
            # synchronize ends with the call's GPU work on every stream
            try:
                with torch.no_grad():
                    pending = _gated_begin(torch, fn, plan, ro, rw, cfg,
                                           dev, flush, ev, seq, gogate)
                _say(reply, "QUEUED %d" % seq)
                q0 = time.perf_counter_ns()
                _spin_until(ev[1])
                q1 = time.perf_counter_ns()
                # ev[3] right after the call's stream is seen done, ev[2]
                # after a device-wide synchronize (_Charge.gated_t_all)
                cs = torch.cuda.current_stream()
                ev[3].record(cs)
                ev[3].synchronize()
                torch.cuda.synchronize()
                ev[2].record(cs)
                ev[2].synchronize()
                gtrace = (q1 - q0, time.perf_counter_ns() - q1)
            except _Shape as e:
                _say(reply, "ERR shape %s" % e)
                os._exit(6)
            except BaseException as e:
                _say(reply, "ERR run %s" % _short_exc(e))
                os._exit(5)
            continue
        if cmd != "RUN":
            _say(reply, "ERR infra unknown command")
            os._exit(3)
        seq = int(meta.get("seq", 0))
        timed = bool(meta.get("timed"))
        # a timed GPU call after WARM: the gate and the warm-ups are done
        pre = cuda and timed and warmed
        warmed = False
        held, pending = pending, None
        gated = held is not None
        if gated and not pre:
            _say(reply, "ERR infra a call queued at WARM, then an untimed "
                 "RUN")
            os._exit(3)
        # first of all: wait out GPU work another process left running
        busy = nslow = ranout = 0
        if cuda and not pre:
            busy, nslow, ranout = gate.wait()
        try:
            if gated:
                # nothing of this call kept past it (its device inputs
                # would stay beside the next call's)
                res, ins, outs, args, put1, th = held
                held = None
            elif cuda or ent[2] is None:
                ins, outs = _pviews(torch, ro, rw, plan)
                if not cuda:
                    ent[2] = (ins, outs)
            # fresh tensor objects over the cached ones' memory, and fresh
            # arguments, every call: a side that reshapes an input in place
            # (x.unsqueeze_(1)) or edits a list argument changes nothing
            # for its next call
            ins = [t.view(t.shape) for t in ent[2][0]] if not cuda else ins
            outs = [t.view(t.shape) for t in ent[2][1]] if not cuda else outs
            if not gated and cuda:
                ins = [t.to(dev) for t in ins]
                torch.cuda.synchronize()
            if not gated:
                args = _call_args(cfg, ins)
                put1 = _put_one(torch, outs)
        except Exception as e:
            _say(reply, "ERR infra the call's buffers: %s" % e)
            os._exit(3)
        ns = base = tuned_ns = flags = 0
        trace = ""
        try:
            with torch.no_grad():
                if cuda and timed:
                    # o measured again before every timed call: it follows
                    # the host's state (clocks, load) through the run;
                    # each side warmed by its own function on dummies,
                    # and charged by one rule: the reference (eager) and
                    # a candidate as a caller running them back to back
                    # pays (_HostWarm, _Charge.charge_call).  After WARM
                    # both are done.
                    if not pre:
                        _null_sample(torch, acct, flush, ev, seq, spin)
                        if not ref:
                            hwarm.candidate(torch)
                        hwarm.own(torch, fn, plan, key, cfg, dev,
                                  trusted=ref)
                    r1 = time.perf_counter_ns()
                    if gated:
                        # queued and waited for at WARM (_gated_begin)
                        ts = int(round(ev[0].elapsed_time(ev[1]) * 1e6))
                        ta = int(round(ev[0].elapsed_time(ev[2]) * 1e6))
                        tq = int(round(ev[0].elapsed_time(ev[3]) * 1e6))
                        tr_all = ta
                        ta = acct.gated_t_all(ts, ta, tq)
                    else:
                        res, ts, ta, th = _timed_gpu(torch, fn, args, flush,
                                                     ev, seq, spin)
                    r2 = time.perf_counter_ns()
                    ns, flags = acct.charge_call(ts, ta, th)
                else:
                    res = call(*args)
                    if cuda:
                        torch.cuda.synchronize()
                # on CPU the copy into the outputs is inside the harness's
                # timed window, as in the zygote's children
                if not put1(res):
                    _put(torch, res, outs, names)
                del res
                if cuda and timed:
                    # where this process's share of the clock went (after
                    # the reply's eight numbers, which are all backend.c
                    # reads; it logs these with KF_TORCH_TRACE_CLOCK)
                    trace = " t=%d,%d,%d,%d,%d" % (
                        (r1 - r0) // 1000, (r2 - r1) // 1000,
                        (time.perf_counter_ns() - r2) // 1000, ts // 1000,
                        spin)
                    if gated:
                        # the gated call's wait at WARM: polling its
                        # stream, the events after it; ev[3] and ev[2]
                        trace += " g=%d,%d,%d,%d" % (
                            gtrace[0] // 1000, gtrace[1] // 1000,
                            tq // 1000, tr_all // 1000)
                based = cuda and timed and ref and key in prepared
                if based and pre:
                    # after DONE: the harness's clock of this call ends at
                    # its copy of the outputs, and the candidate's holds
                    # no such work
                    _say(reply, "DONE %d %d 0 0 %d 0 0 0%s" % (
                        seq, ns, flags | _Charge.BASED_NEXT, trace))
                    # and only once the harness has copied the outputs
                    # (BASE): that copy is on the clock, and the
                    # candidate's has nothing of its process running
                    # beside it (a busy core, its memory traffic)
                    go = lines.next()
                    if go != "BASE":
                        os._exit(0 if go in (None, "EXIT") else 3)
                    try:
                        b, tn, bf = baselines(plan, key, args, seq)
                    except Exception:
                        # the reference's call stands; a baseline not
                        # timed in this repetition is not an outcome
                        b = tn = bf = 0
                    del ins, outs, args, put1
                    _say(reply, "BASED %d %d %d %d" % (seq, b, tn, bf))
                    continue
                if based:
                    base, tuned_ns, bf = baselines(plan, key, args, seq)
                    flags |= bf
        except _Shape as e:
            _say(reply, "ERR shape %s" % e)
            os._exit(6)
        except BaseException as e:
            _say(reply, "ERR run %s" % _short_exc(e))
            os._exit(5)
        del ins, outs, args, put1
        if cuda and gate.convicts(busy, nslow, ranout):
            flags |= _Charge.GATE
        _say(reply, "DONE %d %d %d %d %d %d %d %d%s" % (
            seq, ns, base, tuned_ns, flags, busy, nslow, 1 if ranout else 0,
            trace))


# --------------------------------------------------------------- sample --

def _seed_all(key):
    """Every generator a get_inputs() may draw from, seeded from the
    draw's key."""
    random.seed(key)
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed(key % (1 << 32))
        except Exception:
            pass


def _warm_draw(torch):
    """A draw's every step once, before the lockdown, with what it
    imports (after it, an import or a file read is SIGSYS): the seeding of
    torch, Python's random and numpy's, and CPU ops -- get_inputs() makes
    its tensors on the CPU, and an op's first call initializes what it
    needs from files.  The H200's torch and numpy (newer than Debian's:
    numpy.random is imported at first use) killed every first draw
    without it (2026-12-01)."""
    try:
        import numpy.random  # noqa: F401
    except ImportError:
        pass
    torch.manual_seed(INIT_SEED)
    _seed_all(INIT_SEED)
    _warm(torch, "cpu")
    for f in (torch.rand, torch.randn):
        f(4, 8).abs().sum()
    torch.randint(0, 8, (4,)).float()
    torch.randperm(8)
    torch.frombuffer(bytearray(8), dtype=torch.uint8).clone()
    _same_bits(torch, [torch.zeros(2)], [torch.zeros(2)])


def _same_bits(torch, xs, ys):
    """The index of the first element of get_inputs()'s two lists that
    differs, bit for bit (NaN equal to itself), or None."""
    for i, (a, b) in enumerate(zip(xs, ys)):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            if a.dtype != b.dtype or a.shape != b.shape:
                return i
            a = a.detach().cpu().contiguous().reshape(-1).view(torch.uint8)
            b = b.detach().cpu().contiguous().reshape(-1).view(torch.uint8)
            if not torch.equal(a, b):
                return i
        elif isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            return i
        else:
            try:
                if a != b:
                    return i
            except Exception:
                return i
    return None if len(xs) == len(ys) else min(len(xs), len(ys))


# the keys a draw is compared under, besides its own: get_inputs() must
# give other inputs under other seeds
OTHER_KEYS = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9)

PINNED = ("get_inputs() gives the same inputs whatever the seed (it seeds "
          "a generator itself: torch.manual_seed, or a torch.Generator "
          "with a fixed seed, inside get_inputs()): every timed call would "
          "see one input set, whose answer a candidate can compute ahead, "
          "in its constructor (distribution 'sample' draws by it); leave "
          "the seeding to the harness")


PINNED_GM = ("generate_input() gives the same inputs whatever the seed it "
             "is passed (it ignores its seed argument, or seeds a "
             "generator with a fixed value): every timed call would see "
             "one input set, whose answer a candidate can compute ahead "
             "(distribution 'sample' draws by it); draw from the seed "
             "argument")


def _case_seed(key):
    """The seed argument a GPU MODE generate_input() gets for a draw's
    key: 31 bits, which every generator it may seed with it takes
    (numpy's legacy seed stops at 2^32, a C int at 2^31)."""
    return key & 0x7FFFFFFF


def _takes_seed(fn):
    try:
        return "seed" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class _OnHost:
    """The problem's input function run on the host, whatever device it
    names: GPU MODE's generate_input() makes its tensors with
    device='cuda' and a torch.Generator(device='cuda'), and kf import and
    the sampler run on the CPU (the harness draws every input set on the
    host and copies it into each side's image).  While active, a
    factory's device='cuda', .cuda() and .to('cuda') give CPU tensors
    (a TorchFunctionMode), and torch.Generator(device='cuda') a CPU
    generator: the draws are the same function of the key, by the CPU's
    generator.  Only the input function runs under it; the sides run on
    their spec's device untouched."""

    def __init__(self, torch):
        self.torch = torch
        self.mode = None
        try:
            from torch.overrides import TorchFunctionMode
        except ImportError:
            return
        cudaish = self._cudaish

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = dict(kwargs or {})
                if cudaish(kwargs.get("device")):
                    kwargs["device"] = "cpu"
                if func is torch.Tensor.cuda:
                    return args[0]
                if func is torch.Tensor.to:
                    args = tuple("cpu" if isinstance(a, (str, torch.device))
                                 and cudaish(a) else a for a in args)
                return func(*args, **kwargs)
        self.mode = Mode

    def _cudaish(self, d):
        if d is None or isinstance(d, bool):
            return False
        try:
            return self.torch.device(d).type == "cuda"
        except (RuntimeError, TypeError, ValueError):
            return False

    def __enter__(self):
        torch = self.torch
        self.gen = torch.Generator
        orig, cudaish = self.gen, self._cudaish

        # a class whose calls make CPU generators and whose isinstance()
        # is torch.Generator's: a plain function made `isinstance(g,
        # torch.Generator)` a TypeError (red team 2026-12-02-gm, L4)
        class _Meta(type):
            def __call__(cls, device="cpu"):
                return orig(device="cpu" if cudaish(device) else device)

            def __instancecheck__(cls, obj):
                return isinstance(obj, orig)

            def __subclasscheck__(cls, sub):
                return issubclass(sub, orig)

        torch.Generator = _Meta("Generator", (), {})
        # the host has nothing to wait for: a CPU torch raised "not
        # compiled with CUDA", a CUDA one would open the device from a
        # sandboxed process
        cuda = getattr(torch, "cuda", None)
        self.sync = getattr(cuda, "synchronize", None)
        if self.sync is not None:
            cuda.synchronize = lambda device=None: None
        self.active = self.mode() if self.mode else None
        if self.active:
            self.active.__enter__()
        return self

    def __exit__(self, *exc):
        if self.active:
            self.active.__exit__(*exc)
        self.torch.Generator = self.gen
        if self.sync is not None:
            self.torch.cuda.synchronize = self.sync
        return False


def _host_if_cuda(torch):
    """kf import runs the reference on the CPU whatever --device says: for
    a GPU spec, its code (module level and ref_kernel, which may allocate
    on device='cuda' or make a CUDA generator at module level, as GPU
    MODE's do) runs under _OnHost; for a CPU spec as it is, so that what
    would fail on the CPU sides fails here first, named."""
    if os.environ.get("KF_INSPECT_DEVICE", "cpu") == "cuda":
        return _OnHost(torch)
    return contextlib.nullcontext()


def _drawer(torch, ns, kind, case):
    """The problem's own input function as a draw under a key: torch's,
    Python's and numpy's generators seeded from the key, then
    KernelBench's get_inputs(), or GPU MODE's generate_input(**case)
    with the case's seed replaced by one from the key (_case_seed) where
    it takes one -- the seed a GPU MODE problem draws by is its argument,
    and a case's fixed seed would be one input set for every timed call.
    Returns draw(key) -> the inputs as a list."""
    if kind == "kernelbench":
        fn = ns.get("get_inputs")
        if not callable(fn):
            raise _Refused("defines no get_inputs(): distribution 'sample' "
                           "draws through it")

        def call(key):
            return list(fn())
    else:
        fn = ns.get("generate_input")
        if not callable(fn):
            raise _Refused("defines no generate_input(): distribution "
                           "'sample' draws through it")
        kw = dict(case or {})
        seeded = "seed" in kw or _takes_seed(fn)

        def call(key):
            a = dict(kw)
            if seeded:
                a["seed"] = _case_seed(key)
            d = fn(**a)
            return list(d) if isinstance(d, (tuple, list)) else [d]

    def draw(key):
        torch.manual_seed(key & ((1 << 63) - 1))
        _seed_all(key)
        with torch.no_grad(), _OnHost(torch):
            return call(key)
    return draw


def _pinned(torch, draw, first, key):
    """True when the problem's input function (draw, _drawer) draws the
    same tensors under three more keys as under key (first): a seed it
    sets itself.  Three, so that a problem whose inputs hold a few bits
    (one coin) is not taken for one (1 in 8 for a single coin; 2^-60 for
    20 bits)."""
    if not any(isinstance(x, torch.Tensor) for x in first):
        return False
    for k in OTHER_KEYS:
        if _same_bits(torch, first, draw(k ^ key)) is not None:
            return False
    return True


UNSEEDED = ("get_inputs() gave other inputs under the same seeds (torch's, "
            "Python's random and numpy's legacy one), in input %d: it draws "
            "from a generator of its own (a torch.Generator, numpy's "
            "default_rng(), a module-level state), so a draw cannot be "
            "repeated (distribution 'sample' draws by it; the determinism "
            "check's second run draws again)")


def sample(jail):
    """`runner.py sample JAIL`: the draws of distribution `sample` -- the
    reference's own get_inputs() (KernelBench) or generate_input() (GPU
    MODE, the case's arguments with a seed from the key), run under each
    draw's key (_drawer), so that an input keeps whatever structure its author gave it (a
    scale, an offset, 0/1 masks, integral labels, a permutation, a
    minimum), which a spec's fixed distributions lose (red team of
    2026-12-01, docs/redteam/2026-12-01/import).  The reference is
    trusted, and locked down as the zygote's children are.  Protocol as
    `persist` (LOCKED, READY on fd 1; the memfd on fd 3, the harness's
    image of this process), then on fd 0:
      SAMPLE {"in","out","key","which","size"}  torch (and Python's
          random, numpy's) seeded from KEY, the input function (GPU MODE:
          with the case of torch.json's cases whose size is SIZE, the
          params' values in order) called once, and each
          tensor input listed in WHICH written into the image at its
          plan's offset: SAMPLED, or ERR spec REASON (a tensor of another
          dtype or shape than the spec's).
      EXIT"""
    global _libc
    reply = _reply_fd()
    try:
        with open(os.path.join(jail, "torch.json")) as f:
            cfg = json.load(f)
        src = _read_source(os.path.join(jail, "side.py"))
        torch = _import_torch()
        _libc = ctypes.CDLL(None, use_errno=True)
        size = os.fstat(3).st_size
        rw = mmap.mmap(3, size, flags=mmap.MAP_SHARED,
                       prot=mmap.PROT_READ | mmap.PROT_WRITE)
        os.close(3)
        code = compile(src, "side.py", "exec", dont_inherit=True)
        mods = _modules_in(src)
        _warm_draw(torch)
    except Exception as e:
        _say(reply, "FAIL infra %s" % _short_exc(e))
        return 3
    try:
        defs = _lockdown(jail)
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        except (ValueError, OSError):
            pass
        _seccomp(True)
    except OSError as e:
        _say(reply, "FAIL infra lockdown: %s" % e)
        return 3
    _say(reply, "LOCKED %s torch=%s compile=no" % (" ".join(defs),
                                                   torch.__version__))
    ns = {"__name__": "__kf_side__", "__builtins__": __builtins__}
    kind = cfg.get("kind", "kernelbench")
    fname = "get_inputs()" if kind == "kernelbench" else "generate_input()"
    try:
        torch.manual_seed(INIT_SEED)
        # the sampler is the host: a CUDA generator made at the module's
        # top level is a CPU one here (_OnHost), as in the draws
        with _OnHost(torch):
            _register_modules(mods)
            exec(code, ns)
        draw = _drawer(torch, ns, kind, cfg.get("case"))
        # GPU MODE: each size drawn by its own case (task.yml's tests and
        # the benchmark: kf import gpumode), matched by the size's values
        sized = [(list(c["size"]), _drawer(torch, ns, kind, c["case"]))
                 for c in cfg.get("cases") or []]
    except BaseException as e:
        _say(reply, "ERR load %s" % _short_exc(e))
        os._exit(4)
    _say(reply, "READY")
    # which element of get_inputs() each tensor input is: the spec's
    # forward arguments (torch.args), tensors in order otherwise
    pos = [p for p, a in enumerate(cfg.get("args") or []) if "t" in a]
    checked = False
    lines = _Lines(0)
    while True:
        line = lines.next()
        if line is None or line == "EXIT":
            os._exit(0)
        cmd, _, arg = line.partition(" ")
        try:
            m = json.loads(arg) if cmd == "SAMPLE" else None
            key, which, plan = int(m["key"]), list(m["which"]), m["in"]
            size = list(m.get("size") or [])
        except (ValueError, KeyError, TypeError):
            _say(reply, "ERR infra bad command")
            os._exit(3)
        fn = draw
        if sized:
            fn = next((d for z, d in sized if z == size), None)
            if fn is None:
                _say(reply, "ERR spec torch.cases has no case for the size "
                     "%s (params in order): the spec was edited" % size)
                continue
        try:
            xs = fn(key)
            # once per process (an evaluation): the same key draws the
            # same bits, or nothing drawn by it can be drawn again
            if not checked:
                checked = True
                differs = _same_bits(torch, xs, fn(key))
                if differs is not None:
                    _say(reply, "ERR spec " + UNSEEDED.replace(
                        "get_inputs()", fname) % differs)
                    continue
                # and other keys other bits: a get_inputs() that pins
                # its own seed passed a wrong kernel that answered its
                # one input set from its constructor, at 89-118x (red
                # team 2026-12-01-s3c, H8)
                if _pinned(torch, fn, xs, key):
                    _say(reply, "ERR spec " + (
                        PINNED if kind == "kernelbench" else PINNED_GM))
                    continue
        except Exception as e:
            _say(reply, "ERR spec %s failed: %s" % (fname, _short_exc(e)))
            continue
        bad = None
        for i in which:
            p = pos[i] if pos and i < len(pos) else i
            off, dt, dims = plan[i]
            x = xs[p] if p < len(xs) else None
            if not isinstance(x, torch.Tensor):
                bad = "%s[%d] is a %s, not a tensor" % (
                    fname, p, type(x).__name__)
                break
            # a 0-dim tensor is a spec's shape ["1"] (cli_import.c
            # tensor_json)
            shape = list(x.shape) if x.dim() else [1]
            if x.dtype != DTYPES[dt] or shape != list(dims):
                bad = ("%s[%d] is %s of shape %s where the spec's "
                       "size has %s of shape %s: distribution 'sample' "
                       "draws the file's own sizes only" % (
                           fname, p, str(x.dtype).replace("torch.", ""),
                           list(x.shape), dt, list(dims)))
                break
            n = x.numel()
            if n:
                torch.frombuffer(rw, dtype=DTYPES[dt], count=n,
                                 offset=off).view(dims).copy_(
                                     x.detach().cpu())
        if bad:
            _say(reply, "ERR spec %s" % bad)
            continue
        _say(reply, "SAMPLED")


# -------------------------------------------------------------- inspect --

def _reproducible(torch, draw, out, unseeded, pinned):
    """out["reproducible"]: the problem's input function (draw, _drawer)
    draws the same bits twice under one key and other bits under other
    keys -- what distribution `sample` needs; out["unseeded"] says why
    not (kf import then describes the inputs instead, and warns)."""
    key = INIT_SEED + 7
    first = draw(key)
    differs = _same_bits(torch, first, draw(key))
    out["reproducible"] = differs is None
    if differs is not None:
        out["unseeded"] = unseeded % differs
    elif _pinned(torch, draw, first, key):
        out["reproducible"] = False
        out["unseeded"] = pinned


def _numbers_fixed(torch, draw, inputs):
    """Refuses a problem whose get_inputs() gives a number (not a tensor)
    that changes with the seeds: a spec passes each number to every side
    as the one value seen here, so `x * k` with k = random.randint(1, 100)
    was verified and timed at k = 73 only, and a candidate computing
    `x * 73` was ok (red team 2026-12-02-s3-prob, H2); KernelBench draws
    it again in every trial."""
    for k in (INIT_SEED + 7,) + OTHER_KEYS:
        other = draw(k)
        for i, (a, b) in enumerate(zip(inputs, other)):
            if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
                continue
            if a != b and a == a:  # NaN is a constant too
                raise _Refused(
                    "input %d is a number that get_inputs() draws at "
                    "random (%r under one seed, %r under another): a spec "
                    "passes a number to every side as one fixed value, so "
                    "a kernel could hard-code it; make it a constant, or "
                    "a tensor (a 0-d one is passed as such)" % (i, a, b))


TORCH_DT = {}


def _describe(torch, x, where):
    if isinstance(x, torch.Tensor):
        dt = {torch.float32: "f32", torch.float64: "f64",
              torch.bfloat16: "bf16", torch.float16: "f16",
              torch.int32: "i32", torch.int64: "i64",
              torch.bool: "bool"}.get(x.dtype)
        if dt is None:
            raise _Refused("%s is a tensor of dtype %s; specs hold f32, f64,"
                           " bf16, f16, i32, i64, bool" % (where, x.dtype))
        if x.dim() > 4:
            raise _Refused("%s has %d dimensions; specs hold at most 4" %
                           (where, x.dim()))
        d = {"tensor": True, "dtype": dt, "shape": list(x.shape)}
        if not x.is_contiguous():
            # every side gets its inputs row-major (the image's layout):
            # kf import says so (red team 2026-12-02-s3-prob, M2)
            d["strides"] = list(x.stride())
        if dt == "bool":
            pass  # drawn as 0/1 (cli_import.c), whatever was seen
        elif dt in ("i32", "i64") and x.numel():
            d["min"] = int(x.min())
            d["max"] = int(x.max())
        elif x.numel():
            # what kf import draws GPU MODE inputs from (KernelBench ones
            # are drawn by get_inputs() itself: distribution `sample`):
            # an input kept non-negative (probabilities, logs) from
            # U(0, 1), not N(0, 1) (a KLDiv problem was NaN in every
            # evaluation: red team, 2026-11-30); outputs that are not
            # finite make the spec allow NaN/Inf
            f = x.detach().float()
            fin = torch.isfinite(f)
            d["finite"] = bool(fin.all())
            if fin.any():
                d["min"] = float(f[fin].min())
                d["max"] = float(f[fin].max())
        return d
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise _Refused("%s is a %s: %s" % (
            where, type(x).__name__,
            "outputs must be tensors" if where.startswith("output")
            else "inputs must be tensors, ints or floats"))
    return {"tensor": False, "value": _untyped(x)}


def _snapshot(torch, xs):
    """The bytes and the version counter of each tensor input, to tell
    whether the reference wrote into it.  The counter counts in-place
    operations whatever they wrote: nn.ReLU(inplace=True) on inputs drawn
    from torch.rand leaves every byte as it was, and passed the byte test
    (red team, 2026-11-30), then crashed every evaluation."""
    return [(_bytes_of(torch, x).clone(), _version_of(x))
            if isinstance(x, torch.Tensor) else None for x in xs]


def _version_of(x):
    try:
        return x._version
    except (AttributeError, RuntimeError):  # an inference tensor has none
        return None


def _bytes_of(torch, x):
    return x.detach().contiguous().reshape(-1).view(torch.uint8)


def _check_inputs_kept(torch, xs, snaps, entry):
    """On the CPU the harness maps a reference's inputs read-only: one
    that writes into an input (in place, or GPU MODE's output buffer
    passed in as an input) crashes in every evaluation there, so it is
    refused here, named (red team of problems from outside, 2026-11-30).
    On a GPU every call gets writable device copies: allowed."""
    if os.environ.get("KF_INSPECT_DEVICE", "cpu") != "cpu":
        return
    for i, (x, s) in enumerate(zip(xs, snaps)):
        if s is not None and (not torch.equal(_bytes_of(torch, x), s[0]) or
                              _version_of(x) != s[1]):
            raise _Refused(
                "%s writes into input %d (in place): on the CPU the "
                "harness hands a reference its inputs read-only, so every "
                "evaluation would fail; write the result into a new tensor "
                "(an output buffer passed in as an input: allocate it in "
                "the reference instead), or import with --device cuda"
                % (entry, i))


def _report(fd, text):
    """The inspector's one line, then the process ends: nothing the
    reference registered (atexit, finalizers) runs after it."""
    os.write(fd, (text + "\n").encode("utf-8", "replace"))
    os._exit(0 if '"error"' not in text[:12] else 2)


def _build_twice(torch, cls, init):
    """The Model, built twice the way the runners build it (_load): the
    second build, or _Refused naming the first parameter or buffer that
    differs between the two."""
    _seed_init(torch)
    a = cls(*init)
    _seed_init(torch)
    b = cls(*init)
    if hasattr(a, "state_dict"):
        sa, sb = a.state_dict(), b.state_dict()
        for name in sa:
            x, y = sa[name], sb.get(name)
            if (isinstance(x, torch.Tensor) and (
                    not isinstance(y, torch.Tensor) or
                    _same_bits(torch, [x], [y]) is not None)):
                raise _Refused(
                    "the Model's %s differs between two builds under the "
                    "same seeds (torch's, Python's random and numpy's "
                    "legacy one): its constructor draws from something "
                    "else (a generator of its own, the clock) or leaves "
                    "memory uninitialized (torch.empty), so the "
                    "reference and a candidate built alike would not get "
                    "the same weights; draw them from torch's, numpy's or "
                    "Python's default generator" % name)
    return b


def _param_default(fn, name):
    """The default of fn's parameter name, or None."""
    try:
        p = inspect.signature(fn).parameters.get(name)
    except (TypeError, ValueError):
        return None
    if p is None or p.default is inspect.Parameter.empty:
        return None
    return p.default


def _gm_tolerance(src, ns):
    """GPU MODE's tolerance as the problem states it, for kf import:
    `check_implementation = make_match_reference(ref_kernel, rtol=R,
    atol=A)`, an argument left out taken from the default of the function
    called (or of its module's match_reference, to which GPU MODE's
    make_match_reference(reference, **kwargs) passes them, else the one
    default its module's functions agree on: verbose_allclose's).  The harness
    compares like torch.allclose (|got - want| <= atol + rtol * |want|),
    as GPU MODE's verbose_allclose does, so the numbers carry over.  A
    tolerance looser than the problem's passed outputs GPU MODE would
    reject (top_k: atol 1e-5 against kf import's 1e-3).  Returns
    ({"rtol", "atol"}, None), or (None, why) where check_implementation
    says it some other way (a function of its own: a statistical test,
    a check of properties) and the caller's defaults stand."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None, "the reference does not parse"
    node = None
    for n in tree.body:  # the last binding is the one that holds
        if isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "check_implementation"
                for t in n.targets):
            node = n.value
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                n.name == "check_implementation":
            node = n
    if node is None:
        return None, "the reference defines no check_implementation"
    if not isinstance(node, ast.Call):
        return None, ("check_implementation is a function of its own, not "
                      "make_match_reference(...)")
    f = node.func
    fname = (f.id if isinstance(f, ast.Name) else
             f.attr if isinstance(f, ast.Attribute) else None)
    if fname != "make_match_reference":
        return None, ("check_implementation is %s(...), not "
                      "make_match_reference(...)" % (fname or "a call"))
    if len(node.args) != 1 or any(k.arg is None for k in node.keywords):
        return None, ("check_implementation's make_match_reference(...) "
                      "passes its tolerance other than by rtol=, atol=")
    tol = {}
    for k in node.keywords:
        if k.arg in ("rtol", "atol"):
            try:
                tol[k.arg] = float(ast.literal_eval(k.value))
            except (ValueError, TypeError, SyntaxError):
                return None, ("check_implementation's %s is not a number "
                              "as written" % k.arg)
    fn = None
    try:
        fn = (ns.get(f.id) if isinstance(f, ast.Name) else
              getattr(ns.get(f.value.id), f.attr, None)
              if isinstance(f.value, ast.Name) else None)
    except Exception:
        fn = None
    for want in ("rtol", "atol"):
        if want in tol:
            continue
        d = _param_default(fn, want)
        if d is None:
            # make_match_reference(reference, **kwargs) passes them on:
            # to match_reference in GPU MODE's utils.py, to
            # verbose_allclose in others; the module's match_reference
            # first, else the one default its functions agree on
            g = getattr(fn, "__globals__", {})
            d = _param_default(g.get("match_reference"), want)
            if d is None:
                seen = set()
                for v in list(g.values()):
                    if inspect.isfunction(v):
                        x = _param_default(v, want)
                        if isinstance(x, (int, float)):
                            seen.add(float(x))
                d = seen.pop() if len(seen) == 1 else None
        if not isinstance(d, (int, float)) or isinstance(d, bool):
            return None, ("the %s of check_implementation's "
                          "make_match_reference(...) is neither given nor "
                          "a default found in its module" % want)
        tol[want] = float(d)
    for k, v in tol.items():
        if not (0 <= v <= 1):
            return None, ("check_implementation's %s is %g: the harness "
                          "takes tolerances in [0, 1]" % (k, v))
    return tol, None


def _gm_case_shapes(torch, ns, case, ins, outs):
    """One more case of a GPU MODE problem (task.yml's tests) run as the
    benchmark's was, for kf import: {"inputs", "outputs"}, the shapes of
    each, or {"skip": why} where it cannot be another size of the same
    spec (other dtypes, another number of tensors, a failure)."""
    try:
        with _OnHost(torch):
            data = ns["generate_input"](**case)
        xs = list(data) if isinstance(data, (tuple, list)) else [data]
        with torch.no_grad(), _host_if_cuda(torch):
            res = ns["ref_kernel"](data)
        if isinstance(res, torch.Tensor):
            res = (res,)
    except Exception as e:
        return {"skip": "running it: %s" % _short_exc(e)}
    if not isinstance(res, (tuple, list)) or len(xs) != len(ins) or \
            len(res) != len(outs):
        return {"skip": "it gives %d inputs and %s outputs where the "
                "benchmark gives %d and %d" % (
                    len(xs), len(res) if isinstance(res, (tuple, list))
                    else "no tuple of", len(ins), len(outs))}
    got = {"inputs": [], "outputs": []}
    for what, have, want in (("inputs", xs, ins), ("outputs", res, outs)):
        for i, (x, w) in enumerate(zip(have, want)):
            try:
                d = _describe(torch, x, "%s %d" % (what[:-1], i))
            except _Refused as e:
                return {"skip": str(e)}
            if not d["tensor"] or d["dtype"] != w.get("dtype") or \
                    len(d["shape"]) != len(w.get("shape", [])):
                return {"skip": "its %s %d is %s where the benchmark's is "
                        "%s of %d dimensions" % (
                            what[:-1], i, "%s of %d dimensions" % (
                                d["dtype"], len(d["shape"]))
                            if d["tensor"] else "no tensor",
                            w.get("dtype"), len(w.get("shape", [])))}
            got[what].append(d["shape"])
            if what == "outputs" and d.get("finite") is False:
                got["finite"] = False
    return got


def inspect_ref(kind, path):
    """Runs the reference at path once, locked down, and prints its inputs,
    init arguments and outputs as JSON."""
    global _libc
    try:
        torch = _import_torch()
        src = _read_source(path)
        _warm_draw(torch)
        _libc = ctypes.CDLL(None, use_errno=True)
        code = compile(src, os.path.basename(path), "exec",
                       dont_inherit=True)
        mods = _modules_in(src)
    except SyntaxError as e:
        # a module's (task.py) is named by itself, not by the path of the
        # bundle kf import wrote to a temporary folder
        own = e.filename == os.path.basename(path)
        print(json.dumps({"error": "%s%s" % (path + " " if own else "",
                                             _syntax(e))}))
        return 2
    except _NotUtf8 as e:
        print(json.dumps({"error": "%s %s" % (path, e)}))
        return 2
    except Exception as e:
        print(json.dumps({"error": "%s: %s" % (path, _short_exc(e))}))
        return 2
    jail = os.environ.get("KF_INSPECT_JAIL", "")
    # the report goes to a copy of stdout, and the reference's own prints
    # to /dev/null: a reference that printed JSON first had kf import take
    # its text for the inspector's (red team, 2026-11-30)
    sys.stdout.flush()
    report = os.dup(1)
    nul = os.open("/dev/null", os.O_WRONLY)
    os.dup2(nul, 1)
    os.close(nul)
    emit = functools.partial(_report, report)
    ppid = os.getppid()
    _lockdown(jail)
    # the parent-death signal kf import set is cleared by the change of
    # uid: set again, so that an import stopped by ^C leaves no inspector
    # running as nobody (red team 2026-12-02-s3-prob, M1); a parent gone
    # before that is seen here
    if _libc is not None:
        _libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != ppid:
        os._exit(1)

    def hook(event, hargs):
        # an import the jail cannot serve reads as a forbidden file call
        # and was killed unnamed; name the module first
        if event in ("open", "os.listdir", "os.scandir") and _importing():
            emit(json.dumps({"error": "the reference imports %s, a module "
                             "not loaded when the sandbox closed (only "
                             "torch, numpy, math and what they load can "
                             "be imported)" % _importing()[:80]}))
    sys.addaudithook(hook)
    try:
        ns = {"__name__": "__kf_side__"}
        _seed_init(torch)
        with _host_if_cuda(torch):
            _register_modules(mods)
            exec(code, ns)
        out = {"kind": kind}
        if kind == "kernelbench":
            for n in ("Model", "get_inputs"):
                if n not in ns:
                    raise _Refused("no %s: a KernelBench problem defines "
                                   "Model, get_inputs and get_init_inputs"
                                   % n)
            init = ns["get_init_inputs"]() if "get_init_inputs" in ns else []
            init = list(init)
            for i, v in enumerate(init):
                if isinstance(v, torch.Tensor) or not isinstance(
                        v, (int, float, bool, list, tuple, str)):
                    raise _Refused("get_init_inputs()[%d] is a %s: init "
                                   "arguments must be numbers, strings or "
                                   "lists of them" % (i, type(v).__name__))
            json.dumps(_untyped(init))
            torch.manual_seed(INIT_SEED)
            _seed_all(INIT_SEED)
            t0 = time.monotonic()
            with _OnHost(torch):
                inputs = list(ns["get_inputs"]())
            out["inputs_s"] = time.monotonic() - t0
            # what a spec cannot hold is named before anything runs on it
            out["inputs"] = [_describe(torch, x, "input %d" % i)
                             for i, x in enumerate(inputs)]
            # distribution `sample` draws by get_inputs() under a key: its
            # draws must be a function of the seeds the sampler sets
            # (sample(), UNSEEDED); kf import infers them otherwise
            draw = _drawer(torch, ns, kind, None)
            _reproducible(torch, draw, out, UNSEEDED, PINNED)
            _numbers_fixed(torch, draw, inputs)
            # the Model built twice under the runners' seeds has the same
            # parameters: a constructor that draws from elsewhere (the
            # clock) gives every process other weights, and each
            # evaluation fails with the blame on the candidate
            model = _build_twice(torch, ns["Model"], init)
            snaps = _snapshot(torch, inputs)
            t0 = time.monotonic()
            with torch.no_grad():
                res = model(*inputs)
            out["ref_s"] = time.monotonic() - t0
            _check_inputs_kept(torch, inputs, snaps, "Model.forward")
            out["init"] = _untyped(init)
            try:
                names = [n for n in inspect.signature(
                    ns["Model"].forward).parameters if n != "self"]
                if len(names) == len(inputs):
                    out["names"] = names
            except (TypeError, ValueError):
                pass
        else:
            for n in ("generate_input", "ref_kernel"):
                if n not in ns:
                    raise _Refused("no %s: a GPU MODE reference defines "
                                   "generate_input and ref_kernel" % n)
            case = json.loads(os.environ.get("KF_GPUMODE_CASE", "{}"))
            t0 = time.monotonic()
            with _OnHost(torch):
                data = ns["generate_input"](**case)
            out["inputs_s"] = time.monotonic() - t0
            inputs = list(data) if isinstance(data, (tuple, list)) else [
                data]
            out["data"] = ("tuple" if isinstance(data, tuple) else
                           "list" if isinstance(data, list) else "one")
            out["inputs"] = [_describe(torch, x, "input %d" % i)
                             for i, x in enumerate(inputs)]
            # the same for generate_input(), its seed argument from the
            # key: a case's fixed seed is one input set (PINNED_GM)
            _reproducible(torch, _drawer(torch, ns, kind, case), out,
                          UNSEEDED.replace("get_inputs()",
                                           "generate_input()"), PINNED_GM)
            snaps = _snapshot(torch, inputs)
            t0 = time.monotonic()
            with torch.no_grad(), _host_if_cuda(torch):
                res = ns["ref_kernel"](data)
            out["ref_s"] = time.monotonic() - t0
            _check_inputs_kept(torch, inputs, snaps, "ref_kernel")
            out["case"] = case
            tol, why = _gm_tolerance(src, ns)
            if tol:
                out["tolerance"] = tol
            else:
                out["tolerance_why"] = why
        if isinstance(res, torch.Tensor):
            res = (res,)
        if not isinstance(res, (tuple, list)):
            raise _Refused("the reference returns a %s, not a tensor or a "
                           "tuple of tensors" % type(res).__name__)
        outs = []
        for i, r in enumerate(res):
            d = _describe(torch, r, "output %d" % i)
            if not d["tensor"]:
                raise _Refused("output %d is a %s, not a tensor" %
                               (i, type(r).__name__))
            outs.append(d)
        # a second run on other inputs of the same shapes: an output whose
        # shape depends on the values is not something a spec can hold
        if kind == "kernelbench":
            torch.manual_seed(INIT_SEED + 1)
            again = list(ns["get_inputs"]())
            with torch.no_grad():
                r2 = model(*again)
            r2 = (r2,) if isinstance(r2, torch.Tensor) else r2
            for i, (a, b) in enumerate(zip(res, r2)):
                if tuple(a.shape) != tuple(b.shape):
                    raise _Refused("output %d's shape depends on the input "
                                   "values (%s, then %s): data-dependent "
                                   "output shapes are not supported" %
                                   (i, list(a.shape), list(b.shape)))
        out["outputs"] = outs
        if kind == "gpumode":
            tests = json.loads(os.environ.get("KF_GPUMODE_TESTS", "[]"))
            # the inspector's CPU time is bounded (kf import: 240 s): the
            # tests get what the benchmark left, up to 120 s, and the
            # ones past it are said to be left out, not the import failed
            t0, out["tests"] = time.monotonic(), []
            for t in tests:
                if time.monotonic() - t0 > 120:
                    out["tests"].append({"skip": "not run: the import's "
                                         "120 s for the tests were spent"})
                    continue
                out["tests"].append(_gm_case_shapes(torch, ns, t,
                                                    out["inputs"], outs))
        out["torch"] = torch.__version__
        emit(json.dumps(out))
        return 0
    except _Refused as e:
        emit(json.dumps({"error": str(e)}))
        return 2
    except BaseException as e:
        emit(json.dumps({"error": "running the reference: %s" %
                          _short_exc(e)}))
        return 2


def main(argv):
    if len(argv) == 3 and argv[1] == "serve":
        return serve(argv[2])
    if len(argv) == 3 and argv[1] == "persist":
        return persist(argv[2])
    if len(argv) == 3 and argv[1] == "sample":
        return sample(argv[2])
    if len(argv) == 4 and argv[1] == "inspect" and argv[2] in (
            "kernelbench", "gpumode"):
        return inspect_ref(argv[2], argv[3])
    sys.stderr.write("usage: runner.py serve|persist|sample JAIL | inspect "
                     "kernelbench|gpumode FILE\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
