#!/usr/bin/env python3
"""hostile_worker.py -- a hostile worker that speaks the wire protocol
itself (bin/rt_client, built by build_client.sh), against a private
PostgreSQL + coordinator (tests/e2e/kfe2e.py).

It registers as the only CPU worker (kinds eval, showdown), reports a
plausible ok EvalResult for every eval task, and then answers the campaign's
showdown task with MODE:

  sd_badutf8_entry   ShowdownResult ok, each entry ok, entry reason "\\xff\\xfe"
  sd_badutf8_reason  ShowdownResult SPEC_ERROR, reason "\\xff\\xfe"
  sd_honest          ShowdownResult ok, plain entries (control)

then watches the campaign (does it end?), submits a second campaign and
checks it still runs to its showdown, and prints the coordinator's log
lines about it.
Usage: KF_BIN_DIR=/work/main/build python3 hostile_worker.py MODE
"""
import os, struct, subprocess, sys, time
sys.path.insert(0, "/work/main/tests/e2e")
import kfe2e, kfcampaign
from kfe2e import check

HERE = os.path.dirname(os.path.abspath(__file__))
RT = os.path.join(HERE, "bin", "rt_client")
MODE = sys.argv[1] if len(sys.argv) > 1 and __name__ == "__main__" else "sd_badutf8_entry"


def vint(n):
    out = b""
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def f_v(f, v): return vint(f << 3) + vint(v)
def f_d(f, v): return vint(f << 3 | 1) + struct.pack("<d", v)
def f_b(f, b): return vint(f << 3 | 2) + vint(len(b)) + b


def fields(b):
    i, out = 0, []
    while i < len(b):
        k = 0; s = 0
        while True:
            c = b[i]; i += 1; k |= (c & 0x7F) << s; s += 7
            if c < 0x80: break
        f, wt = k >> 3, k & 7
        if wt == 0:
            v = 0; s = 0
            while True:
                c = b[i]; i += 1; v |= (c & 0x7F) << s; s += 7
                if c < 0x80: break
            out.append((f, v))
        elif wt == 1:
            out.append((f, b[i:i + 8])); i += 8
        elif wt == 2:
            n = 0; s = 0
            while True:
                c = b[i]; i += 1; n |= (c & 0x7F) << s; s += 7
                if c < 0x80: break
            out.append((f, b[i:i + n])); i += n
        elif wt == 5:
            out.append((f, b[i:i + 4])); i += 4
    return out


def eval_result(tm, ref):
    return f_v(1, 1) + f_d(3, tm) + f_d(4, 0.01) + f_d(5, ref) + \
        f_d(6, 0.01) + f_v(7, 30)


def showdown_result(req, mode):
    cands = [dict(fields(e)).get(1) for f, e in fields(req) if f == 6]
    if mode == "sd_badutf8_reason":
        return f_v(1, 14) + f_b(2, b"\xff\xfe reference broke")
    body = f_v(1, 1) + f_d(3, 1e6) + f_v(5, 30)
    for k, cid in enumerate(cands):
        reason = b"\xff\xfe" if mode == "sd_badutf8_entry" else b"fine"
        t = f_v(1, cid) + f_v(2, 1) + f_b(3, b"time") + f_b(4, reason) + \
            f_d(5, 1e5 * (k + 1)) + f_v(7, 30) + f_d(10, 10.0 / (k + 1))
        body += f_b(6, t)
    return body


def rt(c, *args, check_rc=True):
    r = subprocess.run([RT, c.target] + [str(a) for a in args],
                       capture_output=True, env=c.env, timeout=60)
    if check_rc and r.returncode:
        raise kfe2e.TestFailure("rt_client %r: %s" % (args, r.stderr.decode()))
    return r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def body(c):
    c.start_pg()
    c.start_coordinator()
    tf = os.path.join(c.dir, "hostile.token")
    c.kf("token", "create", "--role", "worker", "--name", "rt-hostile",
         "--out", tf, "--db", c.conninfo)
    wenv = dict(c.env, KF_TOKEN=open(tf).read().strip())
    admin_env = c.env
    c.env = wenv  # rt() uses c.env
    wid = int(rt(c, "register", "evil", "AMD EPYC rt", 2, "eval",
                 "showdown")[0])
    c.env = admin_env
    c.log("hostile worker id %d" % wid)
    cids = [kfcampaign.submit(c, kfcampaign.problem_dir("softmax"), evals=4,
                              minutes=3, population=4)]
    tdir = os.path.join(c.dir, "tasks")
    os.makedirs(tdir)
    seen_sd = 0
    t_end = time.monotonic() + 150
    second = False
    while time.monotonic() < t_end:
        c.env = wenv
        out, _ = rt(c, "lease", wid, 4, 1000, tdir)
        for line in out.splitlines():
            tid, att, kind, camp, tmo = line.split()
            payload = open(os.path.join(tdir, "task_%s.bin" % tid), "rb").read()
            if kind == "eval":
                o = os.path.join(tdir, "out_%s.bin" % tid)
                open(o, "wb").write(eval_result(2e5, 1e6))
                v, _ = rt(c, "report", wid, tid, att, 1, "time", "ok", o)
            elif kind == "showdown":
                seen_sd += 1
                o = os.path.join(tdir, "sd_%s.bin" % tid)
                sd = showdown_result(payload, MODE)
                open(o, "wb").write(sd)
                v, _ = rt(c, "report", wid, tid, att, 1, "showdown",
                          "re-timed", o)
                c.env = admin_env
                c.log("showdown task %s of campaign %s reported (%s): %s"
                      % (tid, camp, MODE, v.strip()))
            c.env = wenv
        c.env = admin_env
        st = {cid: c.scalar("SELECT state || ' / ' || COALESCE(showdown, '')"
                            " FROM campaigns WHERE id = %d" % cid)
              for cid in cids}
        if seen_sd and not second:
            # a second campaign: does it still get scheduled and end?
            cids.append(kfcampaign.submit(c, kfcampaign.problem_dir("softmax"),
                                          evals=4, minutes=3, population=4))
            second = True
            t_sd = time.monotonic()
        if second and time.monotonic() - t_sd > 40:
            break
        time.sleep(0.3)
    c.env = admin_env
    lines = ["mode %s" % MODE]
    for cid in cids:
        lines.append("campaign %d: %s" % (cid, c.psql(
            "SELECT state, showdown, best_candidate_id FROM campaigns WHERE id"
            " = %d" % cid)))
        lines.append("  showdowns: %s" % c.psql(
            "SELECT id, state, reason FROM showdowns WHERE campaign_id = %d"
            % cid))
        lines.append("  showdown tasks: %s" % c.psql(
            "SELECT id, state, attempt, last_error FROM tasks WHERE kind ="
            " 'showdown' AND campaign_id = %d" % cid))
    log = open(c.coord.log_path, "rb").read().decode(errors="replace")
    bad = [l for l in log.splitlines() if "showdown" in l.lower() or
           "UTF8" in l or "error" in l.lower()]
    lines.append("coordinator log lines (%d matching, first 8, last 3):"
                 % len(bad))
    lines += ["  " + l[:400] for l in bad[:8] + ["..."] + bad[-3:]]
    st, _ = subprocess.run([c.path("kf"), "campaign", "status", str(cids[0]),
                            "--coordinator", c.target], capture_output=True,
                           env=c.env, timeout=60).stdout, None
    lines.append("kf campaign status %d:" % cids[0])
    lines += ["  " + l for l in st.decode(errors="replace").splitlines()[:8]]
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "hostile_%s.txt" % MODE), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    kfe2e.run("rt3bhw", body, time_limit=400)
