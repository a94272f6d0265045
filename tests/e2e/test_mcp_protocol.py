# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_mcp_protocol.py -- `kf mcp`'s JSON-RPC 2.0 and MCP
lifecycle, byte by byte.

Raw lines go to `kf mcp`'s stdin and every line of its stdout is read
back: malformed JSON, batches, wrong "jsonrpc", bad ids, unknown methods,
requests before initialize, a second initialize, protocol version
negotiation, notifications (never answered), unknown tools, arguments that
break a tool's inputSchema, a message over the size cap, and a tool error
(isError) from an unreachable coordinator.  Each answer must carry the
right JSON-RPC code and the request's id, stdout must hold nothing but
JSON-RPC messages, and the server must exit 0 (no leak under ASan) when
stdin closes.  The SDK test (test_mcp.py) covers the happy path against a
real cluster; this one needs no cluster and no network.
"""
import json
import os
import select
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

PARSE, INVALID, NOMETHOD, PARAMS = -32700, -32600, -32601, -32602


class Server:
    """One `kf mcp` child with pipes; replies read line by line."""

    def __init__(self, c, extra=(), target="127.0.0.1:1",
                 token="not-checked-until-a-call"):
        env = dict(c.env, KF_TOKEN=token)
        env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
        self.log_path = os.path.join(c.dir, "kf-mcp.log")
        self.err = open(self.log_path, "ab")
        # By default port 1 on loopback: nothing listens, so rpcs fail fast.
        self.p = subprocess.Popen(
            [c.path("kf"), "mcp", "--coordinator", target,
             "--problems", os.path.join(kfcampaign.source_dir(), "problems")]
            + list(extra), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.err, env=env, preexec_fn=kfe2e._pdeathsig)
        self.buf = b""
        self.next_id = 100

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def line(self, timeout=60):
        """The next stdout line as JSON (every line must be JSON-RPC)."""
        deadline = time.monotonic() + timeout * kfe2e.SLACK
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            check(left > 0, "no reply from kf mcp within %.0fs (have %r)"
                  % (timeout * kfe2e.SLACK, self.buf[:200]))
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 1 << 20)
                check(chunk, "kf mcp closed stdout (exit %s)" % self.p.poll())
                self.buf += chunk
        raw, self.buf = self.buf.split(b"\n", 1)
        try:
            msg = json.loads(raw)
        except ValueError:
            raise kfe2e.TestFailure("stdout holds a line that is not JSON: %r"
                                    % raw[:300])
        check(isinstance(msg, dict) and msg.get("jsonrpc") == "2.0",
              "not a JSON-RPC 2.0 message: %r" % msg)
        return msg

    def request(self, method, params=None, id=None):
        if id is None:
            id = self.next_id
            self.next_id += 1
        m = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            m["params"] = params
        self.send(m)
        r = self.line()
        check(r.get("id") == id, "reply to %s has id %r, sent %r: %r"
              % (method, r.get("id"), id, r))
        return r

    def close(self):
        """Closes stdin: the server must exit 0."""
        self.p.stdin.close()
        rc = self.p.wait(60 * kfe2e.SLACK)
        rest = self.p.stdout.read()
        self.err.close()
        check(rest == b"" and self.buf == b"",
              "unanswered bytes on stdout: %r" % (self.buf + rest)[:300])
        check(rc == 0, "kf mcp exited %d when stdin closed" % rc)


def error_of(r, code, pattern=""):
    e = r.get("error")
    check(e and e.get("code") == code and "result" not in r,
          "wanted error %d, got %r" % (code, r))
    check(pattern.lower() in e.get("message", "").lower(),
          "error message %r lacks %r" % (e.get("message"), pattern))
    return e["message"]


def no_reply(s):
    """Nothing was answered: the next line is the answer to a ping."""
    r = s.request("ping")
    check(r.get("result") == {}, "ping: %r" % r)


def init(s, version="2025-06-18"):
    r = s.request("initialize", {"protocolVersion": version,
                                 "capabilities": {},
                                 "clientInfo": {"name": "raw", "version": "1"}})
    check("result" in r, "initialize: %r" % r)
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return r["result"]


def call(s, name, args):
    return s.request("tools/call", {"name": name, "arguments": args})


SEEDS = [
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "describe_problem",
                "arguments": {"problem": "cpu/vecsum"}}},
    {"jsonrpc": "2.0", "id": "x", "method": "tools/call",
     "params": {"name": "propose_candidate",
                "arguments": {"campaign_id": 1, "source": "int x;",
                              "knobs": {"UNROLL": 4}}}},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "wait_evaluation",
                "arguments": {"campaign_id": 1, "candidate_id": 2,
                              "timeout_seconds": 0}}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled",
     "params": {"requestId": 2}},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
]


def mutate(s, rounds=400):
    """Seeded byte-level mutations of valid messages (flips, cuts,
    duplications, inserted quotes and braces).  After each, a ping with a
    fresh id: every line before its answer must be a JSON-RPC message (an
    error or a result), and the answer must come."""
    import random
    rnd = random.Random(20261126)
    for i in range(rounds):
        b = bytearray(json.dumps(rnd.choice(SEEDS)).encode())
        for _ in range(rnd.randint(1, 4)):
            op = rnd.randrange(4)
            at = rnd.randrange(len(b))
            if op == 0:
                b[at] = rnd.randrange(256)
            elif op == 1:
                del b[at:at + rnd.randint(1, 8)]
            elif op == 2:
                b[at:at] = b[rnd.randrange(len(b)):][:rnd.randint(1, 16)]
            else:
                b[at:at] = rnd.choice([b'"', b'{', b'}', b'[', b'\\', b'\\u0000',
                                       b'1e999', b'null', b','])
        b = bytes(b).replace(b"\n", b" ")
        s.send_raw(b + b"\n")
        pid = "fuzz-%d" % i
        s.send({"jsonrpc": "2.0", "id": pid, "method": "ping"})
        while True:
            r = s.line()
            check("result" in r or ("error" in r and
                                    isinstance(r["error"].get("code"), int)),
                  "mutation %d %r: answer %r" % (i, b[:200], r))
            if r.get("id") == pid:
                break
    check(s.p.poll() is None, "kf mcp died during the mutations")


def body(c):
    s = Server(c)
    # --- before initialize ---------------------------------------------
    s.send_raw(b"this is not json\n")
    r = s.line()
    check(r["id"] is None, "parse error id %r" % r["id"])
    error_of(r, PARSE, "not valid JSON")
    s.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"} {"x": 1}\n')
    error_of(s.line(), PARSE, "bytes after the message")
    s.send_raw(b"\0\0\n")  # NUL bytes are not blank: not JSON
    error_of(s.line(), PARSE, "not valid JSON")
    s.send_raw(b"\xff\xfe{}\n")
    error_of(s.line(), PARSE, "not valid JSON")
    s.send_raw(b"\n   \n")  # blank lines are not messages
    error_of(s.request("tools/list"), INVALID, "initialize first")
    error_of(s.request("tools/call", {"name": "list_problems"}), INVALID,
             "initialize first")
    no_reply(s)  # ping is allowed at any time

    # --- initialize: version negotiation ---------------------------------
    res = init(s, "2025-06-18")
    check(res["protocolVersion"] == "2025-06-18", "negotiated %r"
          % res["protocolVersion"])
    check(res["capabilities"].get("tools") is not None,
          "no tools capability: %r" % res)
    check(res["serverInfo"]["name"] == "kernelfleet", "serverInfo %r" % res)
    error_of(s.request("initialize", {"protocolVersion": "2025-06-18",
                                      "capabilities": {},
                                      "clientInfo": {"name": "x",
                                                     "version": "1"}}),
             INVALID, "already")

    # --- JSON-RPC envelope errors ----------------------------------------
    s.send_raw(b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]\n')
    r = s.line()
    check(r["id"] is None, "batch reply id %r" % r["id"])
    error_of(r, INVALID, "batch")
    s.send({"jsonrpc": "1.0", "id": 7, "method": "ping"})
    r = s.line()
    check(r["id"] == 7, "wrong jsonrpc: reply id %r" % r["id"])
    error_of(r, INVALID, '"jsonrpc" must be "2.0"')
    s.send({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"})
    r = s.line()
    check(r["id"] is None, "object id echoed: %r" % r)
    error_of(r, INVALID, "id")
    s.send({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})
    error_of(s.line(), INVALID, "id")
    s.send({"jsonrpc": "2.0", "id": 8})
    error_of(s.line(), INVALID, "method")
    s.send({"jsonrpc": "2.0", "id": 9, "method": 12})
    error_of(s.line(), INVALID, "method")
    error_of(s.request("tools/list", [1, 2]), PARAMS, "object")
    r = s.request("ping", id="string-id-\u00e9")  # string ids round-trip
    check(r.get("result") == {}, "ping with a string id: %r" % r)

    # --- methods and notifications ---------------------------------------
    error_of(s.request("resources/list"), NOMETHOD, "resources/list")
    error_of(s.request("no/such\u0007method"), NOMETHOD, "method not found")
    s.send({"jsonrpc": "2.0", "method": "notifications/whatever"})
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 12345}})
    s.send({"jsonrpc": "2.0", "method": "notifications/x", "params": 3})
    # a response to a request we never sent is ignored too
    s.send({"jsonrpc": "2.0", "id": 77, "result": {}})
    no_reply(s)

    # --- tools ------------------------------------------------------------
    tl = s.request("tools/list")["result"]["tools"]
    names = sorted(t["name"] for t in tl)
    check(names == ["best", "campaign_status", "create_campaign",
                    "describe_problem", "list_problems",
                    "propose_candidate", "wait_evaluation"],
          "tools: %r" % names)
    for t in tl:
        sch = t["inputSchema"]
        check(sch["type"] == "object" and
              sch.get("additionalProperties") is False,
              "%s: schema %r" % (t["name"], sch))
    error_of(s.request("tools/call", {"arguments": {}}), PARAMS, "name")
    error_of(s.request("tools/call"), PARAMS, "params")
    error_of(call(s, "no_such_tool", {}), PARAMS, "unknown tool 'no_such_tool'")
    error_of(call(s, "describe_problem", {}), PARAMS,
             'missing required field "problem"')
    error_of(call(s, "describe_problem", {"problem": 3}), PARAMS,
             "arguments.problem: expected a string, got a number")
    error_of(call(s, "describe_problem", []), PARAMS, "expected an object")
    error_of(call(s, "wait_evaluation", {"campaign_id": 1, "candidate_id": 0}),
             PARAMS, "candidate_id: 0 is out of range")
    error_of(call(s, "wait_evaluation", {"campaign_id": 1, "candidate_id": 2,
                                         "timeout_seconds": 1.5}),
             PARAMS, "expected an integer, got a fraction")
    error_of(call(s, "create_campaign", {"problem": "cpu/vecsum",
                                         "evals": 5, "evalz": 1}),
             PARAMS, "arguments.evalz: unknown field")
    error_of(call(s, "create_campaign", {"problem": "cpu/vecsum",
                                         "target_roofline": 0}),
             PARAMS, "target_roofline")
    error_of(call(s, "propose_candidate", {"campaign_id": 1, "source": "x",
                                           "knobs": {"A": [1]}}),
             PARAMS, "arguments.knobs.A: expected string or integer")

    # A field name of invalid UTF-8 and a terminal escape is quoted back
    # as valid, printable text (the reply must stay valid JSON text).
    s.send_raw(b'{"jsonrpc": "2.0", "id": 31, "method": "tools/call", '
               b'"params": {"name": "best", "arguments": {"campaign_id": 1, '
               b'"\xff\x1b[31m": 1}}}\n')
    r = s.line()
    msg = error_of(r, PARAMS, "unknown field")
    check("\x1b" not in msg and "\\xff" in msg, "quoted name: %r" % msg)

    # Tool errors: an answer with isError, not a protocol error.
    for bad in ("../../etc", "/etc", "cpu/../cpu/vecsum", ".hidden",
                "cpu/vecsum/extra", "cpu/nope"):
        r = call(s, "describe_problem", {"problem": bad})["result"]
        check(r["isError"] is True and "problem" in r["content"][0]["text"],
              "describe_problem %r: %r" % (bad, r))
    # A NUL would cut a source short: refused, naming it.
    error_of(call(s, "propose_candidate", {"campaign_id": 1,
                                           "source": "int x;\u0000int y;"}),
             PARAMS, "U+0000")
    r = call(s, "propose_candidate", {"campaign_id": 1, "source": "int x;",
                                      "proposer": "evolution!"})["result"]
    check(r["isError"] and "proposer" in r["content"][0]["text"],
          "a bad proposer label: %r" % r)
    r = call(s, "propose_candidate", {"campaign_id": 1, "source": "int x;",
                                      "knobs": {"BLOCK": 64}})["result"]
    check(r["isError"] and "unreachable" in r["content"][0]["text"],
          "an unreachable coordinator is a tool error: %r" % r)

    # Local tools work without a coordinator.
    r = call(s, "list_problems", {})["result"]
    check(not r["isError"], "list_problems: %r" % r)
    probs = r["structuredContent"]["problems"]
    check(any(p["problem"] == "cpu/vecsum" for p in probs),
          "list_problems: %r" % [p["problem"] for p in probs])
    check(json.loads(r["content"][0]["text"]) == r["structuredContent"],
          "text content and structuredContent differ")
    r = call(s, "describe_problem", {"problem": "cpu/vecsum"})["result"]
    d = r["structuredContent"]
    check("kf_launch" in d["abi"]["source"] and d["spec"]["name"] == "vecsum"
          and d["reference"]["source"], "describe_problem: %r" % list(d))

    # --- mutated messages: every answer is JSON-RPC, the server lives ---
    mutate(s)

    # --- size cap: a message over 8 MiB is refused, the next one works ---
    big = b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": "' \
        + b"a" * (9 << 20) + b'"}}\n'
    s.send_raw(big)
    r = s.line()
    check(r["id"] is None, "too-large reply id %r" % r)
    error_of(r, INVALID, "longer than")
    no_reply(s)
    s.close()

    # --- an old client and an unknown version -----------------------------
    s = Server(c)
    res = init(s, "2024-11-05")
    check(res["protocolVersion"] == "2024-11-05", "negotiated %r" % res)
    r = call(s, "list_problems", {})["result"]
    check("structuredContent" not in r and r["content"][0]["text"],
          "2024-11-05 has no structuredContent: %r" % list(r))
    s.close()
    s = Server(c)
    res = init(s, "1999-01-01")
    check(res["protocolVersion"] == "2025-11-25",
          "an unknown version is answered with the newest: %r" % res)
    s.close()

    # --- command line -------------------------------------------------------
    r = subprocess.run([c.path("kf"), "mcp", "--help"], capture_output=True,
                       timeout=60, env=c.env)
    check(r.returncode == 0 and b"Model Context Protocol" in r.stdout,
          "kf mcp --help: %r" % r)
    env = {k: v for k, v in c.env.items() if k != "KF_TOKEN"}
    r = subprocess.run([c.path("kf"), "mcp"], capture_output=True,
                       timeout=60, env=env, stdin=subprocess.DEVNULL)
    check(r.returncode == 2 and b"no token" in r.stderr and r.stdout == b"",
          "kf mcp without a token: %r" % r)
    r = subprocess.run([c.path("kf"), "mcp", "--problems", "/nonexistent"],
                       capture_output=True, timeout=60, env=c.env,
                       stdin=subprocess.DEVNULL)
    check(r.returncode == 2 and b"/nonexistent" in r.stderr,
          "kf mcp --problems /nonexistent: %r" % r)


if __name__ == "__main__":
    kfe2e.run("mcpproto", body, time_limit=300)
