# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_mcp_restart.py -- a wait_evaluation outlives a
coordinator crash.

An agent (raw JSON-RPC on `kf mcp`'s stdin, with a submitter's token)
creates a campaign and proposes a kernel while the only worker is stopped
(SIGSTOP), so the proposal cannot be evaluated yet.  It then blocks in
wait_evaluation (with a progress token: the first progress notification
proves the wait has taken its first look).  The coordinator is killed
with -9 and restarted on the same port, and the worker is resumed.  The
same wait must end with the proposal's verdict (ok) -- the server waited
out the outage instead of failing the call -- and kf mcp must have seen
the outage (its log says "unreachable").  Meanwhile a ping is answered
at once, a cancellation of another request changes nothing, and a
tools/list waits its turn.  Then a second agent with a
worker's token proposes to the same campaign and is refused.
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402
from test_mcp_protocol import Server, call, init  # noqa: E402


def body(c):
    c.start_pg()
    c.start_coordinator()
    w = c.start_worker("mcp-rw", slots=1)
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 1,
                     30, "the worker registered")
    sfile = os.path.join(c.dir, "agent.token")
    c.kf("token", "create", "--role", "submitter", "--name", "agent",
         "--out", sfile, "--db", c.conninfo)
    s = Server(c, extra=("--token-file", sfile), target=c.target, token="")
    init(s)

    r = call(s, "create_campaign", {"problem": "cpu/vecsum", "evals": 200,
                                    "minutes": 30})["result"]
    check(not r["isError"], "create_campaign: %r" % r)
    cid = r["structuredContent"]["campaign_id"]

    # Nothing is evaluated while the worker is stopped.
    os.kill(w.pid, signal.SIGSTOP)
    src = open(os.path.join(kfcampaign.source_dir(), "problems", "cpu",
                            "vecsum", "accum.c")).read()
    r = call(s, "propose_candidate", {
        "campaign_id": cid, "source": "/* test_mcp_restart */\n" + src,
        "knobs": {"UNROLL": 8}, "template": "accum"})["result"]
    check(not r["isError"], "propose_candidate: %r" % r)
    cand = r["structuredContent"]["candidate_id"]

    s.send({"jsonrpc": "2.0", "id": "wait-1", "method": "tools/call",
            "params": {"name": "wait_evaluation",
                       "arguments": {"campaign_id": cid,
                                     "candidate_id": cand,
                                     "timeout_seconds": 3600},
                       "_meta": {"progressToken": "p-1"}}})
    note = s.line(timeout=60)
    check(note.get("method") == "notifications/progress" and
          note["params"]["progressToken"] == "p-1",
          "expected a progress notification, got %r" % note)

    # While it waits: a ping is answered at once, a cancellation of some
    # other request changes nothing, and a tools/list is queued and
    # answered after the wait.
    s.send({"jsonrpc": "2.0", "id": "tl", "method": "tools/list"})
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "not-the-wait"}})
    s.send({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"})
    while True:
        r = s.line(timeout=60)
        if r.get("method") == "notifications/progress":
            continue
        check(r.get("id") == "ping-1" and r.get("result") == {},
              "during the wait, expected the ping's answer first: %r" % r)
        break

    # The outage: the coordinator dies and comes back on the same port.
    port = c.port
    c.coord.kill9()
    c.log("coordinator killed")
    kfe2e.wait_until(lambda: b"unreachable" in open(s.log_path, "rb").read(),
                     60, "kf mcp to notice the outage")
    c.start_coordinator(port=port)
    os.kill(w.pid, signal.SIGCONT)
    c.log("coordinator back on %d, worker resumed" % port)

    # The same call ends with the verdict (progress notes may come first).
    deadline = time.monotonic() + 600 * kfe2e.SLACK
    while True:
        check(time.monotonic() < deadline, "the wait never ended")
        r = s.line(timeout=600)
        if r.get("method") == "notifications/progress":
            continue
        break
    check(r.get("id") == "wait-1", "expected the wait's answer, got %r" % r)
    res = r["result"]
    check(not res["isError"], "the wait failed: %r" % res)
    out = res["structuredContent"]
    check(out["final"] is True and len(out["evaluations"]) == 1 and
          out["evaluations"][0]["outcome"] == "ok",
          "after the restart: %r" % out)
    check(c.scalar("SELECT outcome FROM evaluations WHERE candidate_id = %d"
                   % cand) == "ok", "the database disagrees")
    r = s.line(timeout=60)
    check(r.get("id") == "tl" and len(r["result"]["tools"]) == 7,
          "the queued tools/list, answered after the wait: %r" % r)
    s.close()

    # A worker's credential on the restarted coordinator: refused.
    wfile = os.path.join(c.dir, "worker.token")
    c.kf("token", "create", "--role", "worker", "--name", "not-an-agent",
         "--out", wfile, "--db", c.conninfo)
    s = Server(c, extra=("--token-file", wfile), target=c.target, token="")
    init(s)
    r = call(s, "propose_candidate", {"campaign_id": cid,
                                      "source": "int x;"})["result"]
    check(r["isError"] and "permission denied" in r["content"][0]["text"],
          "a worker's proposal: %r" % r)
    s.close()
    check(w.alive() and c.coord.alive(), "a process died")


if __name__ == "__main__":
    kfe2e.run("mcprestart", body, time_limit=600)
