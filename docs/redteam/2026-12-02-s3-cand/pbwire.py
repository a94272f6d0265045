"""Protobuf wire-format helpers for showdown.py and evalreq.py."""
import struct


def varint(n):
    out = b""
    while True:
        b = n & 0x7F; n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n: return out


def fld(num, wt, payload):
    key = varint(num << 3 | wt)
    if wt == 2: return key + varint(len(payload)) + payload
    return key + payload


def s(num, text):
    return fld(num, 2, text if isinstance(text, bytes) else text.encode())


def dec(b):
    """A minimal protobuf decoder: [(field, value)]."""
    i, res = 0, []
    def vi():
        nonlocal i
        v = 0; sh = 0
        while True:
            c = b[i]; i += 1; v |= (c & 0x7F) << sh; sh += 7
            if not c & 0x80: return v
    while i < len(b):
        k = vi(); num, wt = k >> 3, k & 7
        if wt == 0: v = vi()
        elif wt == 1: v = struct.unpack("<d", b[i:i+8])[0]; i += 8
        elif wt == 5: v = b[i:i+4]; i += 4
        elif wt == 2:
            l = vi(); v = b[i:i+l]; i += l
        else: raise ValueError("wire type %d" % wt)
        res.append((num, v))
    return res


OUT = ["?", "ok", "compile_error", "compile_timeout", "link_rejected", "crash", "timeout",
       "wrong_answer", "unwritten_output", "out_of_bounds", "nondeterministic", "too_fast",
       "sandbox_violation", "resource_limit", "spec_error", "infra_error"]
