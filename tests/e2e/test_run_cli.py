# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_run_cli.py -- `kf run` as a user runs it.

1. A malformed problem directory (a copy with a broken spec.json) exits 2
   with a message naming the file and the field, and starts nothing;
   so does a data directory whose path holds a comma.
2. `kf run PROBLEM --data DIR --evals 8` brings up its own PostgreSQL,
   coordinator and worker, exits 0, writes ./<problem>.best.c, which
   builds with `cc -shared`, and stops everything it started.
3. ^C (SIGINT) in the middle of a second run exits 4, stops the cluster
   and says how to resume; `kf run --resume ID` on the same data
   directory finishes that campaign, which is still in PostgreSQL.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402


def kf_run(c, args, cwd, timeout):
    argv = [c.path("kf"), "run"] + list(args)
    c.log("$ kf run %s" % " ".join(args))
    r = subprocess.run(argv, cwd=cwd, env=c.env, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=timeout,
                       preexec_fn=kfe2e._pdeathsig)
    out, err = r.stdout.decode(errors="replace"), r.stderr.decode(
        errors="replace")
    with open(os.path.join(c.dir, "kf-run.log"), "a") as f:
        f.write("$ kf run %s -> %d\n%s%s\n" % (" ".join(args), r.returncode,
                                              out, err))
    return r.returncode, out, err


def pg_running(pgdir):
    return os.path.exists(os.path.join(pgdir, "data", "postmaster.pid"))


def body(c):
    prob = kfcampaign.problem_dir()
    with open(os.path.join(prob, "spec.json")) as f:
        spec = json.load(f)
    name = spec["name"]
    work = os.path.join(c.dir, "work")
    os.makedirs(work)

    # 1. A broken spec: exit 2, file and field named, nothing started.
    bad = os.path.join(c.dir, "bad")
    shutil.copytree(prob, bad)
    spec_bad = json.loads(json.dumps(spec))
    spec_bad["inputs"][0]["dtype"] = "f33"
    with open(os.path.join(bad, "spec.json"), "w") as f:
        json.dump(spec_bad, f)
    baddata = os.path.join(c.dir, "baddata")
    rc, out, err = kf_run(c, [bad, "--data", baddata], work, 60)
    check(rc == 2, "broken spec: exit %d, want 2 (%s)" % (rc, err))
    check("spec.json" in err and "inputs[0].dtype" in err,
          "broken spec: message does not name file and field: %r" % err)
    check(not os.path.exists(os.path.join(baddata, "pg")),
          "broken spec: kf run started PostgreSQL anyway")
    c.log("broken spec refused: %s" % err.strip())

    # 1a. No templates (a spec may have none): refused before anything
    # starts, naming the field, not by CreateCampaign after PostgreSQL,
    # the coordinator and a worker were up (red team, 2026-11-30).
    bare = os.path.join(c.dir, "bare")
    shutil.copytree(prob, bare)
    spec_bare = json.loads(json.dumps(spec))
    spec_bare["templates"] = []
    with open(os.path.join(bare, "spec.json"), "w") as f:
        json.dump(spec_bare, f)
    baredata = os.path.join(c.dir, "baredata")
    rc, out, err = kf_run(c, [bare, "--data", baredata], work, 60)
    check(rc == 2 and "templates: none" in err,
          "no templates: exit %d, want 2 naming the field (%s)" % (rc, err))
    check(not os.path.exists(os.path.join(baredata, "pg")),
          "no templates: kf run started PostgreSQL anyway")

    # 1b. A data directory whose path PostgreSQL's socket settings cannot
    # take (a comma splits unix_socket_directories; seen on a GPU machine
    # with --data /tmp/d0,1): refused by name before initdb runs.
    commadata = os.path.join(c.dir, "d0,1")
    rc, out, err = kf_run(c, [prob, "--data", commadata], work, 60)
    check(rc != 0, "data dir with a comma: exit 0")
    check("','" in err and "d0,1" in err,
          "data dir with a comma: the message does not name it: %r" % err)
    check(not os.path.exists(os.path.join(commadata, "pg", "data",
                                          "PG_VERSION")),
          "data dir with a comma: initdb ran anyway")
    c.log("data dir with a comma refused: %s" % err.strip())

    # 2. The happy path.  --data is the cluster dir, so Cluster.close
    # stops a PostgreSQL that kf run might leave behind.
    rc, out, err = kf_run(c, [prob, "--data", c.dir, "--evals", "8",
                              "--minutes", "2"], work, 170)
    check(rc == 0, "kf run exited %d, want 0\nstdout:\n%s\nstderr:\n%s"
          % (rc, out, err))
    best = os.path.join(work, "%s.best.c" % name)
    check(os.path.isfile(best), "kf run did not write %s; stdout: %s"
          % (best, out))
    check("best kernel: ./%s.best.c" % name in out,
          "kf run did not report the best file: %r" % out)
    with open(best) as f:
        text = f.read()
    check("campaign" in text and "kf_launch" in text,
          "%s lacks the header or the kernel" % best)
    so = os.path.join(work, "best.so")
    cc = subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-I",
                         os.path.join(kfcampaign.source_dir(), "harness", "core"),
                         "-o", so, best], capture_output=True, timeout=60)
    check(cc.returncode == 0, "the best file does not build standalone:\n%s"
          % cc.stderr.decode(errors="replace"))
    check(not pg_running(c.pgdir), "kf run left PostgreSQL running")
    c.log("kf run: exit 0, %s builds" % best)

    # 3. ^C mid-run, then --resume.
    argv = [c.path("kf"), "run", prob, "--data", c.dir, "--evals", "12",
            "--minutes", "3"]
    p = subprocess.Popen(argv, cwd=work, env=c.env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=kfe2e._pdeathsig)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(
        x.decode(errors="replace") for x in p.stderr), daemon=True)
    reader.start()

    def created():
        check(p.poll() is None, "kf run ended early: %s" % "".join(lines))
        for x in lines:
            m = re.search(r"campaign (\d+):", x)
            if m:
                return int(m.group(1))
        return None
    cid = kfe2e.wait_until(created, 90, "kf run to create its campaign")
    time.sleep(3.0)
    p.send_signal(signal.SIGINT)
    rc = p.wait(60)
    reader.join(10)
    err = "".join(lines)
    with open(os.path.join(c.dir, "kf-run.log"), "a") as f:
        f.write("$ kf run (interrupted) -> %d\n%s\n" % (rc, err))
    check(rc == 4, "interrupted kf run exited %d, want 4: %s" % (rc, err))
    check("--resume %d" % cid in err, "no resume hint after ^C: %r" % err)
    check(not pg_running(c.pgdir), "^C left PostgreSQL running")
    c.log("^C: exit 4, campaign %d saved" % cid)

    rc, out, err = kf_run(c, ["--data", c.dir, "--resume", str(cid)], work,
                          170)
    check(rc in (0, 1), "kf run --resume exited %d\n%s\n%s" % (rc, out, err))
    check("campaign %d" % cid in out, "resume did not report campaign %d: %r"
          % (cid, out))
    # The state persisted across all three runs.
    c.start_pg()
    n = c.count("SELECT count(*) FROM campaigns")
    check(n == 2, "%d campaigns in the data directory, want 2" % n)
    st = c.scalar("SELECT state FROM campaigns WHERE id = %d" % cid)
    check(st != "running", "resumed campaign is still %r" % st)
    c.log("resume: exit %d, campaign %d %s" % (rc, cid, st))


if __name__ == "__main__":
    kfe2e.run("runcli", body, time_limit=420)
