#!/usr/bin/env python3
"""forge_harness.py -- a hostile worker's kf-harness (KF_HARNESS=this).

A worker's owner controls its machine, so it controls the harness its
kf-worker runs.  This wrapper passes every subcommand to the real harness
(identity, ceilings, ...: the worker registers the honest environment), and
for `eval` and `showdown` runs the real one and then patches the result it
writes on fd 3: every time_ns_median is divided by FORGE (default 3) and
every ShowdownTiming.speedup multiplied by it.  Fixed64 doubles are
patched in place, so no length changes.
"""
import os, struct, subprocess, sys

REAL = os.environ.get("RT_REAL_HARNESS", "/work/main/build/kf-harness")
F = float(os.environ.get("RT_FORGE", "3"))
LOG = os.environ.get("RT_FORGE_LOG", "/tmp/rt3b_forge.log")


def varint(b, i):
    s = v = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7F) << s; s += 7
        if c < 0x80:
            return v, i


def walk(b, lo, hi, patch):
    """Calls patch(fieldno, offset) for every fixed64 field in b[lo:hi];
    returns a list of (fieldno, lo, hi) of length-delimited ones."""
    i, subs = lo, []
    while i < hi:
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            _, i = varint(b, i)
        elif wt == 1:
            patch(f, i); i += 8
        elif wt == 2:
            n, i = varint(b, i); subs.append((f, i, i + n)); i += n
        elif wt == 5:
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
    return subs


def scale(b, off, k):
    v = struct.unpack_from("<d", b, off)[0]
    struct.pack_into("<d", b, off, v * k)
    return v


def main():
    sub = sys.argv[1] if len(sys.argv) > 1 else ""
    try:
        os.fstat(3)
        has3 = True
    except OSError:
        has3 = False
    if sub not in ("eval", "showdown") or not has3 or "--help" in sys.argv:
        os.execv(REAL, [REAL] + sys.argv[1:])
    inp = sys.stdin.buffer.read()
    r, w = os.pipe()
    p = subprocess.Popen([REAL] + sys.argv[1:], stdin=subprocess.PIPE,
                         pass_fds=(3, w), preexec_fn=lambda: os.dup2(w, 3))
    os.close(w)
    p.stdin.write(inp); p.stdin.close()
    out = b""
    while True:
        c = os.read(r, 65536)
        if not c:
            break
        out += c
    rc = p.wait()
    b = bytearray(out)
    notes = []
    try:
        if sub == "eval":
            def pt(f, off):
                if f == 3:
                    notes.append(("eval time", scale(b, off, 1 / F)))
            walk(b, 4, len(b), pt)
        else:
            for f, lo, hi in walk(b, 4, len(b), lambda f, o: None):
                if f != 6:
                    continue
                def pt(f2, off):
                    if f2 == 5:
                        notes.append(("sd time", scale(b, off, 1 / F)))
                    elif f2 == 10:
                        notes.append(("sd speedup", scale(b, off, F)))
                walk(b, lo, hi, pt)
    except Exception as e:  # leave it as it was
        notes.append(("error", str(e)))
        b = bytearray(out)
    with open(LOG, "a") as lf:
        lf.write("%d %s rc=%d %r\n" % (os.getpid(), sub, rc, notes))
    os.write(3, bytes(b))
    sys.exit(rc)


main()
