# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_mcp.py -- `kf mcp` driven by the official MCP client SDK.

An agent made of @modelcontextprotocol/sdk (tests/mcp/client.mjs, the
version pinned in tests/mcp/package-lock.json and installed with `npm ci`
into the build directory) spawns `kf mcp` over stdio, the way an MCP host
does, against a real cluster: PostgreSQL, a coordinator and a CPU worker.
It lists the tools and the problems, describes one, creates a campaign,
proposes a good kernel and a broken one, waits for both verdicts, reads
the status and the best.  Then this side checks in the database that the
two proposals are the campaign's candidates, attributed to the agent, and
that their evaluations say what the agent was told.  Last, the same agent
with a worker's credential: the coordinator refuses it (permission
denied) for every tool that reaches it.

Skipped (77) only when npm cannot reach its registry to install the SDK;
a missing node or npm, or an install that fails with the registry
reachable, is a failure (scripts/setup installs node and npm).
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

PROBLEM = "cpu/vecsum"
SKIP = 77


def sdk_dir():
    """The SDK installed from the lock file, in the build directory: a
    stamp holding the lock's sha256 says an install is current, so a
    rerun needs no network."""
    src = os.path.join(kfcampaign.source_dir(), "tests", "mcp")
    bindir = os.environ.get("KF_BIN_DIR")
    check(bindir, "KF_BIN_DIR is not set")
    dest = os.path.join(bindir, "mcp-node")
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            raise kfe2e.TestFailure(
                "%s is not installed: run scripts/setup (it installs nodejs "
                "and npm)" % tool)
    with open(os.path.join(src, "package-lock.json"), "rb") as f:
        lock_sha = hashlib.sha256(f.read()).hexdigest()
    stamp = os.path.join(dest, "node_modules", ".kf-lock-sha256")
    try:
        with open(stamp) as f:
            current = f.read().strip() == lock_sha
    except FileNotFoundError:
        current = False
    os.makedirs(dest, exist_ok=True)
    for name in ("package.json", "package-lock.json", "client.mjs"):
        shutil.copy(os.path.join(src, name), os.path.join(dest, name))
    if current:
        return dest
    print("installing the MCP SDK: npm ci in %s" % dest, flush=True)
    r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund",
                        "--loglevel", "warn"], cwd=dest,
                       capture_output=True, timeout=600)
    if r.returncode != 0:
        ping = subprocess.run(["npm", "ping"], cwd=dest, capture_output=True,
                              timeout=120)
        if ping.returncode != 0:
            lines = [x.strip() for x in ping.stderr.decode(
                errors="replace").splitlines() if x.strip()]
            why = next((x for x in lines if "request to" in x or
                        "network" in x.lower()), lines[-1] if lines else "")
            print("SKIP: npm cannot reach its registry, so the MCP client "
                  "SDK cannot be installed (npm ping: %s)" % why[:300],
                  flush=True)
            sys.exit(SKIP)
        raise kfe2e.TestFailure("npm ci failed with the registry reachable:"
                                " %s" % r.stderr.decode(errors="replace")
                                [-2000:])
    with open(stamp, "w") as f:
        f.write(lock_sha + "\n")
    return dest


def run_client(c, node_dir, cfg, timeout):
    r = subprocess.run(["node", os.path.join(node_dir, "client.mjs"),
                        json.dumps(cfg)], cwd=node_dir, capture_output=True,
                       timeout=timeout, env=c.env)
    log = os.path.join(c.dir, "mcp-client-%s.log" % cfg["mode"])
    with open(log, "wb") as f:
        f.write(r.stderr)
    if r.returncode != 0:
        raise kfe2e.TestFailure("the MCP client (%s) failed, exit %d:\n%s"
                                % (cfg["mode"], r.returncode,
                                   r.stderr.decode(errors="replace")[-6000:]))
    err = r.stderr.decode(errors="replace")
    # kf mcp's stderr reaches us through the client: it ended cleanly
    # (stdin closed -> "done") and ASan/UBSan found nothing.
    check("kf mcp: done" in err, "kf mcp did not exit cleanly (%s)"
          % cfg["mode"])
    check("Sanitizer" not in err and "runtime error" not in err,
          "kf mcp under ASan/UBSan:\n%s" % err[-6000:])
    lines = r.stdout.decode().strip().splitlines()
    check(lines, "the MCP client printed nothing")
    return json.loads(lines[-1])


def body(c):
    node_dir = sdk_dir()
    c.start_pg()
    c.start_coordinator()
    w = c.start_worker("mcp-w", slots=2)
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 1,
                     30, "the worker registered")

    # The agent's credential: a submitter's, in a mode-600 file.
    sfile = os.path.join(c.dir, "agent.token")
    c.kf("token", "create", "--role", "submitter", "--name", "mcp-agent",
         "--out", sfile, "--db", c.conninfo)
    wfile = os.path.join(c.dir, "worker.token")
    c.kf("token", "create", "--role", "worker", "--name", "mcp-as-worker",
         "--out", wfile, "--db", c.conninfo)

    problems = os.path.join(kfcampaign.source_dir(), "problems")
    # Only the credential file: KF_TOKEN (the coordinator's admin secret
    # in these tests) must not leak into the agent's server.
    env = {k: v for k, v in c.env.items() if k != "KF_TOKEN"}
    # kf mcp's own leaks count: it exits when the client closes stdin.
    env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
    base = {"kf": c.path("kf"), "env": env, "problem": PROBLEM,
            # A budget the test never exhausts: the campaign is still
            # running when the agent cancels a wait on it (proposals are
            # evaluated first, so this costs no time).
            "wait_s": int(300 * kfe2e.SLACK), "evals": 200}

    cfg = dict(base, mode="agent",
               args=["--coordinator", c.target, "--token-file", sfile,
                     "--problems", problems])
    out = run_client(c, node_dir, cfg, timeout=kfe2e.HANG_GUARD_MAX - 60)
    c.log("agent: %r" % out)
    cid = out["campaign_id"]

    # The database agrees with what the agent was told.
    rows = c.psql("SELECT id, proposer FROM candidates WHERE campaign_id = %d"
                  " AND proposer LIKE 'mcp%%' ORDER BY id" % cid)
    check([(int(r[0]), r[1]) for r in rows] ==
          [(out["good"], "mcp-e2e"), (out["broken"], "mcp-e2e")],
          "the agent's candidates in the database: %r" % rows)
    for cand, want in ((out["good"], "ok"), (out["broken"], "wrong_answer")):
        got = c.psql("SELECT outcome, task_id IS NOT NULL FROM evaluations"
                     " WHERE candidate_id = %d" % cand)
        check(got == [[want, "t"]], "candidate %d: evaluations %r, want one"
              " %s measured by a task" % (cand, got, want))
    # The broken one went through the pipeline: compiled and linked, then
    # verification refused it.
    st = c.scalar("SELECT stage FROM evaluations WHERE candidate_id = %d"
                  % out["broken"])
    check(st == "verify", "broken candidate stopped at %r" % st)
    # A proposal took the same road as the search's own candidates: an eval
    # task the worker ran.
    check(c.count("SELECT count(*) FROM tasks t JOIN evaluations e ON "
                  "e.task_id = t.id WHERE e.candidate_id IN (%d, %d) AND "
                  "t.kind = 'eval' AND t.state = 'done'"
                  % (out["good"], out["broken"])) == 2,
          "the proposals' eval tasks are not both done")

    # A worker's credential: refused by the coordinator.
    cfg = dict(base, mode="worker", campaign_id=cid,
               args=["--coordinator", c.target, "--token-file", wfile,
                     "--problems", problems])
    out2 = run_client(c, node_dir, cfg, timeout=300)
    c.log("worker credential refused: %r" % out2["refused"][0])
    check(c.count("SELECT count(*) FROM candidates WHERE campaign_id = %d"
                  " AND proposer LIKE 'mcp%%'" % cid) == 2,
          "a worker's proposal was stored")
    for p in (w, c.coord):
        check(p.alive(), "%s died" % p.name)


if __name__ == "__main__":
    kfe2e.run("mcp", body, time_limit=600)
