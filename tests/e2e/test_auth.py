# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_auth.py -- credentials as an operator uses them.

1. `kf token create --role worker --out FILE` stores a hashed credential
   and writes the secret to a mode-600 file; a kf-worker started with
   `--token-file FILE` (no KF_TOKEN in its environment) registers, is
   bound to that credential, and runs tasks.  Its /proc/PID/cmdline and
   the coordinator's hold no secret.
2. A submitter credential printed by `kf token create` submits and reads
   with `kf` ($KF_TOKEN), but `kf token list` shows only hashes' owners,
   never a secret.
3. `kf token revoke ID` on the running coordinator: the worker is refused
   from then on (UNAUTHENTICATED in its log) and tasks submitted after the
   revocation are not run by it.  No restart.
4. TLS: a coordinator with --tls-cert/--tls-key (a CA made with openssl
   here); a kf-worker with --tls-ca and its credential by file runs
   tasks, kf with $KF_TLS_CA reads status, plaintext kf is refused.
5. `kf cluster` (the local cluster `kf run` also uses: kf_cli__local_start)
   none of its children (coordinator, workers) has a token in its cmdline.
"""
import json
import os
import re
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:
        return ""


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        # pid (comm) state ppid ...: comm may hold spaces; split after ')'
        if int(st.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(d))
    return out


def body(c):
    c.start_pg()
    c.start_coordinator()
    check(kfe2e.TOKEN not in cmdline(c.coord.pid),
          "coordinator cmdline holds its token: %r" % cmdline(c.coord.pid))

    # 1. A worker credential, by file.
    wfile = os.path.join(c.dir, "worker.token")
    out = c.kf("token", "create", "--role", "worker", "--name", "e2e-w1",
               "--out", wfile, "--db", c.conninfo)
    wid = int(out.strip())
    mode = stat.S_IMODE(os.stat(wfile).st_mode)
    check(mode == 0o600, "token file mode %o, want 600" % mode)
    with open(wfile) as f:
        secret = f.read().strip()
    check(re.fullmatch(r"kft_[0-9a-f]{64}", secret),
          "unexpected secret form %r" % secret)
    check(c.count("SELECT count(*) FROM api_tokens WHERE hash = '%s'"
                  % secret) == 0 and
          c.count("SELECT count(*) FROM api_tokens WHERE id = %d AND "
                  "role = 'worker'" % wid) == 1,
          "the secret itself is stored, or the row is missing")
    env = {"KF_TOKEN": ""}  # nothing but the file
    w = c.start_worker("auth-w1", slots=2, extra=("--token-file", wfile),
                       env=env)
    kfe2e.wait_until(lambda: c.count(
        "SELECT count(*) FROM workers WHERE name = 'auth-w1' AND token_id = %d"
        % wid) == 1, 60, "auth-w1 registered with credential %d" % wid)
    check(secret not in cmdline(w.pid) and "kft_" not in cmdline(w.pid),
          "worker cmdline holds a token: %r" % cmdline(w.pid))
    ids = c.submit(30, sleep_ms=10)
    c.wait_all_done(30, 120, watch=[c.coord, w])
    c.check_exactly_once(ids)

    # 2. A submitter credential, printed once, used through $KF_TOKEN.
    out = c.kf("token", "create", "--role", "submitter", "--name", "e2e-sub",
               "--db", c.conninfo)
    sid, ssecret = out.split()
    env = dict(c.env, KF_TOKEN=ssecret)
    r = subprocess.run([c.path("kf"), "status", "--json", "--coordinator",
                        c.target], env=env, capture_output=True, timeout=60)
    check(r.returncode == 0, "submitter kf status: %d %s"
          % (r.returncode, r.stderr.decode(errors="replace")))
    check(json.loads(r.stdout)["done"] == 30, "kf status: %r" % r.stdout)
    listing = c.kf("token", "list", "--db", c.conninfo)
    check("e2e-w1" in listing and "e2e-sub" in listing and
          secret not in listing and ssecret not in listing,
          "kf token list: %r" % listing)
    js = json.loads(c.kf("token", "list", "--json", "--db", c.conninfo))
    check(sorted(t["role"] for t in js) == ["submitter", "worker"],
          "kf token list --json: %r" % js)

    # 3. Revoke the worker's credential on the running coordinator.
    c.kf("token", "revoke", str(wid), "--db", c.conninfo)
    check(c.count("SELECT count(*) FROM api_tokens WHERE id = %d AND "
                  "revoked_at IS NOT NULL" % wid) == 1, "not revoked")

    def refused():
        with open(w.log_path, "rb") as f:
            return b"unauthenticated" in f.read().lower()
    kfe2e.wait_until(refused, 60, "the worker to be refused after revoke")
    later = c.submit(5, sleep_ms=10, prefix="late")
    time.sleep(3)  # the worker keeps trying; nothing may reach it
    n = c.count("SELECT count(*) FROM tasks WHERE id IN (%s) AND state <> "
                "'queued'" % ",".join(str(i) for i in later))
    check(n == 0, "%d tasks ran after the worker's credential was revoked"
          % n)
    check(c.coord.alive(), "coordinator died")
    w.terminate()
    revoked = c.kf("token", "list", "--all", "--db", c.conninfo)
    check("e2e-w1" in revoked, "kf token list --all: %r" % revoked)
    check("e2e-w1" not in c.kf("token", "list", "--db", c.conninfo),
          "a revoked credential is listed as valid")

    # 4. TLS end to end: a coordinator serving TLS with a certificate from
    # a CA made here; a worker (--tls-ca, its own credential by file) and
    # kf ($KF_TLS_CA) run tasks through it; plaintext kf is refused.
    tls = os.path.join(c.dir, "tls")
    os.makedirs(tls)

    def sh(cmd):
        r = subprocess.run(cmd, shell=True, cwd=tls, capture_output=True,
                           timeout=120)
        check(r.returncode == 0, "%s: %s" % (cmd, r.stderr.decode()))
    sh("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=e2e CA'"
       " -keyout ca.key -out ca.pem")
    sh("openssl req -newkey rsa:2048 -nodes -subj '/CN=coordinator'"
       " -keyout srv.key -out srv.csr")
    with open(os.path.join(tls, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    sh("openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key"
       " -CAcreateserial -days 2 -extfile san.ext -out srv.pem")
    c.coord.terminate()
    c.start_coordinator(extra=("--tls-cert", os.path.join(tls, "srv.pem"),
                               "--tls-key", os.path.join(tls, "srv.key")))
    r = subprocess.run([c.path("kf"), "status", "--coordinator", c.target],
                       env=c.env, capture_output=True, timeout=60)
    check(r.returncode == 3, "plaintext kf status to a TLS port: exit %d"
          % r.returncode)
    w2file = os.path.join(c.dir, "worker2.token")
    c.kf("token", "create", "--role", "worker", "--name", "e2e-tls",
         "--out", w2file, "--db", c.conninfo)
    w2 = c.start_worker("auth-tls", slots=2, env={"KF_TOKEN": ""},
                        extra=("--token-file", w2file, "--tls-ca",
                               os.path.join(tls, "ca.pem")))
    c.env["KF_TLS_CA"] = os.path.join(tls, "ca.pem")
    ids = c.submit(10, sleep_ms=10, prefix="tls")
    kfe2e.wait_until(lambda: c.count(
        "SELECT count(*) FROM tasks WHERE id IN (%s) AND state = 'done'"
        % ",".join(str(i) for i in ids)) == 10, 120,
        "10 tasks done by the TLS worker", interval=0.25)
    st = json.loads(c.kf("status", "--json", "--coordinator", c.target))
    check("auth-tls" in [x["name"] for x in st["workers"]],
          "kf status over TLS: %r" % st)
    del c.env["KF_TLS_CA"]
    check(w2.terminate() == 0, "TLS worker did not stop cleanly")

    # 5. kf cluster's children get their credentials by environment.
    data = os.path.join(c.dir, "cl")
    os.makedirs(data)
    os.chmod(data, 0o755)
    p = subprocess.Popen([c.path("kf"), "cluster", "--tasks", "20000",
                          "--workers", "2", "--data", data], env=c.env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT,
                         preexec_fn=kfe2e._pdeathsig)
    try:
        kids = kfe2e.wait_until(
            lambda: (lambda k: len(k) >= 3 and k)(
                [k for k in children(p.pid)
                 if "kf-coordinator" in cmdline(k) or
                 "kf-worker" in cmdline(k)]),
            120, "kf cluster's coordinator and 2 workers")
        for k in kids:
            line = cmdline(k)
            check("kft_" not in line and "token" not in line,
                  "kf cluster child %d has a token in argv: %r" % (k, line))
        c.log("kf cluster children without tokens in argv: %r"
              % [cmdline(k).split()[0] for k in kids])
    finally:
        p.terminate()
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)
        subprocess.run([c.path("kf"), "db", "stop", os.path.join(data, "pg"),
                        "immediate"], env=c.env, capture_output=True,
                       timeout=60)


if __name__ == "__main__":
    kfe2e.run("auth", body)
