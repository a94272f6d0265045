# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_llm_proposer.py -- the built-in llm proposer, end to end.

A small real HTTP server inside the test speaks the OpenAI chat-completions
protocol (POST /v1/chat/completions, JSON in and out, usage counts) and
answers from a script: good kernels (one declaring a knob space), a broken
one (compile error), hostile ones (reads a file; a wrong answer), a slow
reply (past the client's timeout: retried), 429 and 500 (retried, then
given up), 400 (not retried), and malformed replies (no code block, bad
knob JSON, a body that is not JSON).  `kf propose llm` runs against a real
coordinator, PostgreSQL and worker, so every proposal goes through
ProposeCandidate and the sandboxed harness.

Checked through psql (never through the code under test alone): each
request's outcome, reason, attempts, tokens and cost in proposer_calls
(0008), and `kf propose usage --json` agrees; the harness refused the
broken and hostile kernels and verified the good ones; the knob space the
good kernel declared became a template (origin "proposer") whose knob
values the search evaluated; later rounds use the other evolution
operators (combine, prescribe) with the measured kernels in the prompt;
at most --llm-parallel requests were in flight; the key travelled only as
the bearer token.  Then `kf run DIR --llm-url ...` runs the proposer
beside a local campaign of its own, whose proposal is evaluated.
"""
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

KEY = "sk-test-e2e-0123456789"
MODEL = "fake-coder-1"
PRICE_IN, PRICE_OUT = 0.5, 1.5

HEAD = '#include "kf_candidate.h"\n'
SUM_BODY = """
int kf_launch(const kf_args *a) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 1)
    return 1;
  const int64_t N = a->params[0];
  const float *x = a->inputs[0].data;
  float acc[LANES];
  for (int u = 0; u < LANES; u++) acc[u] = 0.0f;
  int64_t i = 0;
  for (; i + LANES <= N; i += LANES)
    for (int u = 0; u < LANES; u++) acc[u] += x[i + u];
  for (; i < N; i++) acc[0] += x[i];
  float s = 0.0f;
  for (int u = 0; u < LANES; u++) s += acc[u];
  ((float *)a->outputs[0].data)[0] = SCALE s;
  return 0;
}
"""


def kernel(tag, lanes=None, scale=""):
    """A vecsum kernel; LANES a knob (lanes None) or fixed."""
    pre = "/* %s */\n" % tag + HEAD
    if lanes is None:
        pre += "#ifndef LANES\n#define LANES 4\n#endif\n"
    else:
        pre += "#define LANES %d\n" % lanes
    return pre + SUM_BODY.replace("SCALE", scale)


GOOD_KNOBS = kernel("llm: lanes as a knob")
GOOD2 = kernel("llm: eight lanes", lanes=8)
BROKEN = HEAD + "int kf_launch(const kf_args *a) { return a->nope +; }\n"
HOSTILE = (HEAD + "#include <stdio.h>\n"
           "int kf_launch(const kf_args *a) {\n"
           "  FILE *f = fopen(\"/etc/passwd\", \"r\");\n"
           "  char b[8] = {0};\n"
           "  if (f) { fread(b, 1, 7, f); fclose(f); }\n"
           "  ((float *)a->outputs[0].data)[0] = (float)b[0];\n"
           "  return 0;\n}\n")
WRONG = kernel("llm: off by half", lanes=4, scale="0.5f *")


def reply(content, pt, ct):
    return {"id": "chatcmpl-test", "object": "chat.completion",
            "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant",
                                     "content": content}}],
            "usage": {"prompt_tokens": pt, "completion_tokens": ct,
                      "total_tokens": pt + ct}}


def fenced(src, knobs=None):
    t = "Here is the kernel.\n\n```c\n%s```\n" % src
    if knobs is not None:
        t += "\nTuning knobs:\n```json\n%s\n```\n" % json.dumps(knobs)
    return t


class Script:
    """The server's answers, consumed one per HTTP request in arrival
    order.  An item: {"status", "body" (dict or str), "delay", "headers"}.
    `usage` of an item counts only when the client got it (not delayed
    past its timeout)."""

    def __init__(self):
        self.items = []
        self.lock = threading.Lock()
        self.requests = []          # (headers dict, parsed body)
        self.inflight = 0
        self.max_inflight = 0

    def push(self, **item):
        with self.lock:
            self.items.append(item)

    def take(self):
        with self.lock:
            check(self.items, "the proposer sent more requests than scripted")
            return self.items.pop(0)


def make_server(script):
    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            pass

        def do_POST(self):
            with script.lock:
                script.inflight += 1
                script.max_inflight = max(script.max_inflight,
                                          script.inflight)
            counted = [True]

            def done():
                # Before a byte of the answer leaves: the client may send
                # its next request as soon as it has this one.
                with script.lock:
                    if counted[0]:
                        script.inflight -= 1
                        counted[0] = False
            try:
                n = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with script.lock:
                    script.requests.append((dict(self.headers), body))
                if self.path != "/v1/chat/completions":
                    self.send_response(404)
                    self.end_headers()
                    return
                item = script.take()
                time.sleep(item.get("delay", 0))
                done()
                out = item.get("body", "")
                data = (json.dumps(out) if isinstance(out, dict)
                        else out).encode()
                self.send_response(item.get("status", 200))
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in item.get("headers", {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the slow reply)
            finally:
                done()

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def propose(c, url, cid, requests, parallel, extra=(), check_rc=False):
    env = dict(c.env, KF_LLM_KEY=KEY)
    env.pop("OPENAI_API_KEY", None)
    argv = [c.path("kf"), "propose", "llm", "--campaign", str(cid),
            "--coordinator", c.target, "--llm-url", url,
            "--llm-model", MODEL, "--rounds", "1",
            "--llm-requests", str(requests), "--llm-parallel", str(parallel),
            "--llm-price-in", str(PRICE_IN), "--llm-price-out",
            str(PRICE_OUT)] + list(extra)
    r = subprocess.run(argv, env=env, capture_output=True, timeout=600,
                       stdin=subprocess.DEVNULL)
    c.log("kf propose llm -> %d\n%s" % (r.returncode,
                                         r.stderr.decode(errors="replace")))
    check(KEY not in " ".join(argv), "the key is on the command line")
    return r


def calls(c, cid):
    return c.psql(
        "SELECT id, operation, outcome, reason, attempts, http_status,"
        " prompt_tokens, completion_tokens, cost, COALESCE(candidate_id, 0),"
        " prompt_version, proposer, model FROM proposer_calls"
        " WHERE campaign_id = %d ORDER BY id" % cid)


def body(c):
    c.start_pg()
    c.start_coordinator()
    script = Script()
    srv = make_server(script)
    url = "http://127.0.0.1:%d/v1" % srv.server_address[1]
    # Far from its roofline: no stop rule may end the campaign between
    # the rounds.
    problem = kfcampaign.far_from_roofline(c, "vecsum")
    # No worker yet: every proposal of the first round waits for one, and
    # the search cannot end before they are in.
    cid = kfcampaign.submit(c, problem, evals=60, minutes=30, population=6,
                            extra=("--plateau", "1000"))

    # ---- round 1: every kind of reply, one request at a time ----------
    knobs = {"name": "llm-lanes", "knobs": {"LANES": [4, 8, 16]}}
    usage = []  # (pt, ct) the client receives

    def ok(content, pt, ct, **kw):
        usage.append((pt, ct))
        script.push(body=reply(content, pt, ct), **kw)

    ok(fenced(GOOD_KNOBS, knobs), 1000, 400)          # 1 ok, knobs
    ok(fenced(BROKEN), 1001, 41)                      # 2 compile error
    ok(fenced(HOSTILE), 1002, 42)                     # 3 link rejected
    ok(fenced(WRONG), 1003, 43)                       # 4 wrong answer
    script.push(body=reply(fenced(GOOD2), 5, 5), delay=8)  # 5: timeout,
    ok(fenced(GOOD2), 1005, 45)                       #    then ok
    for _ in range(3):                                # 6: three timeouts
        script.push(body=reply(fenced(GOOD2), 6, 6), delay=8)
    script.push(status=429, body={"error": {"message": "slow down"}},
                headers={"Retry-After": "0"})         # 7: 429,
    script.push(status=500, body="upstream exploded")  #    500,
    script.push(status=503, body="still down")         #    503: gave up
    ok("I would rather not write code today.", 1007, 7)  # 8 malformed
    ok(fenced(GOOD2, None) + "```json\n{\"knobs\": {\"LANES\": [4,\n```\n",
       1008, 8)                                        # 9 bad knob JSON
    script.push(body="<html>not json</html>")         # 10 body not JSON
    script.push(status=400, body={"error": {"message": "bad model"}})  # 11
    r = propose(c, url, cid, 11, 1,
                extra=("--llm-timeout", "3", "--llm-retries", "2"))
    check(r.returncode == 0, "kf propose llm exited %d" % r.returncode)
    check(not script.items, "unused scripted replies: %d"
          % len(script.items))

    rows = calls(c, cid)
    check(len(rows) == 11, "%d proposer_calls rows, expected 11: %r"
          % (len(rows), rows))
    want = [("ok", 1, 200), ("ok", 1, 200), ("ok", 1, 200), ("ok", 1, 200),
            ("ok", 2, 200), ("timeout", 3, 0), ("http_error", 3, 503),
            ("malformed", 1, 200),
            ("malformed", 1, 200), ("malformed", 1, 200),
            ("http_error", 1, 400)]
    for i, (row, (outcome, attempts, status)) in enumerate(zip(rows, want)):
        got = (row[2], int(row[4]), int(row[5]))
        check(got == (outcome, attempts, status),
              "call %d: (outcome, attempts, http status) %r, expected %r;"
              " reason %r" % (i + 1, got, (outcome, attempts, status),
                              row[3]))
        check(row[1] == "improve", "call %d: operation %r with nothing"
              " measured yet" % (i + 1, row[1]))
        check(row[11] == "llm:" + MODEL and row[12] == MODEL,
              "call %d: proposer %r model %r" % (i + 1, row[11], row[12]))
        check(re.fullmatch(r"system\.md@[0-9a-f]{12}\+task\.md@[0-9a-f]{12}"
                           r"\+improve\.md@[0-9a-f]{12}", row[10]),
              "call %d: prompt_version %r" % (i + 1, row[10]))
        check((int(row[9]) > 0) == (outcome == "ok"),
              "call %d: candidate %s for outcome %s" % (i + 1, row[9],
                                                        outcome))
    reasons = [r[3] for r in rows]
    for i, frag in ((5, "attempt 3: "), (5, "timed out"), (6, "HTTP 503"),
                    (7, "no fenced code block"),
                    (8, "knobs JSON: not valid JSON"),
                    (9, "not JSON"), (10, "HTTP 400")):
        check(frag in reasons[i], "call %d reason %r lacks %r"
              % (i + 1, reasons[i], frag))
    # Tokens and cost: what the client received, summed per call.
    pt = sum(u[0] for u in usage)
    ct = sum(u[1] for u in usage)
    got_pt = sum(int(r[6]) for r in rows)
    got_ct = sum(int(r[7]) for r in rows)
    check((got_pt, got_ct) == (pt, ct), "tokens stored %r, sent %r"
          % ((got_pt, got_ct), (pt, ct)))
    cost = pt / 1000 * PRICE_IN + ct / 1000 * PRICE_OUT
    check(abs(sum(float(r[8]) for r in rows) - cost) < 1e-9,
          "cost stored %r, expected %r" % ([r[8] for r in rows], cost))
    # the timed-out and the 429/500/503 calls: no usage (no reply body)
    check(rows[5][6] == rows[6][6] == rows[10][6] == "0",
          "failed calls have tokens")

    # The requests: the model, both messages, the context, the key.
    check(len(script.requests) == 16, "%d HTTP requests, expected 16"
          % len(script.requests))
    ref = open(os.path.join(problem, "reference.c")).read()
    for h, b in script.requests:
        check(h.get("Authorization") == "Bearer " + KEY,
              "Authorization header %r" % h.get("Authorization"))
        check(b and b["model"] == MODEL and len(b["messages"]) == 2,
              "request body %r" % (b and {k: b[k] for k in b
                                          if k != "messages"}))
        user = b["messages"][1]["content"]
        for frag in ("# Problem: vecsum", "kf_args", ref.strip()[-60:],
                     '"name": "vecsum"', "None measured yet",
                     "No worker that can run this campaign"):
            check(frag in user, "the prompt lacks %r" % frag)
    dump = c.scalar("SELECT count(*) FROM proposer_calls WHERE reason LIKE"
                    " '%%%s%%'" % KEY)
    check(dump == "0", "the key was stored in a reason")

    # The knob space became a template of the campaign.
    tj = json.loads(c.scalar("SELECT templates::text FROM campaigns WHERE"
                             " id = %d" % cid))
    mine = [t for t in tj if t["name"] == "llm-lanes"]
    check(len(mine) == 1 and mine[0].get("origin") == "proposer" and
          mine[0]["knobs"] == [{"name": "LANES",
                                "values": ["4", "8", "16"]}] and
          mine[0]["source"] == GOOD_KNOBS and
          mine[0].get("proposer") == "llm:" + MODEL,
          "proposer template: %r" % mine)
    cand = c.psql("SELECT template_name, knobs::text, flags FROM candidates"
                  " WHERE id = %s" % rows[0][9])[0]
    check(cand == ["llm-lanes", '{"LANES": "4"}', "-DLANES=4"],
          "the proposal's candidate: %r" % cand)

    # A person declares knobs the same way (`kf campaign propose
    # --knob-space`): a bad declaration is refused naming the field, the
    # same source finds its template (and its first point is the llm's
    # proposal again: no new key).
    path = os.path.join(c.dir, "mine.c")
    with open(path, "w") as f:
        f.write(GOOD_KNOBS)
    r = subprocess.run([c.path("kf"), "campaign", "propose", str(cid), path,
                        "--knob-space", "DEPTH=1,2", "--coordinator",
                        c.target], env=c.env, capture_output=True,
                       timeout=60)
    err = r.stderr.decode(errors="replace")
    check(r.returncode == 2 and "knob_space[0].name 'DEPTH' does not appear"
          " in the source" in err, "bad --knob-space: exit %d: %s"
          % (r.returncode, err))
    j = json.loads(c.kf("campaign", "propose", str(cid), path, "--knob-space",
                        "LANES=4,8,16", "--json",
                        "--coordinator", c.target))
    check(j.get("template") == "llm-lanes" and j["candidate_id"] > 0,
          "kf campaign propose --knob-space: %r" % j)

    # ---- the worker evaluates; the search tunes the proposal's knobs ----
    worker = c.start_worker("w-llm", slots=2)

    def evaluated(tmpl):
        return c.psql("SELECT k.flags, e.outcome FROM evaluations e JOIN"
                      " candidates k ON k.id = e.candidate_id WHERE"
                      " e.campaign_id = %d AND k.template_name = '%s'"
                      % (cid, tmpl))

    def progress():
        return c.count("SELECT count(*) FROM evaluations WHERE"
                       " campaign_id = %d" % cid)
    kfe2e.wait_progress(lambda: any(o == "ok" for _, o in
                                    evaluated("llm-lanes")),
                        progress, 150, "the llm kernel's first evaluation")

    # ---- round 2: the other operators, two requests at a time ---------
    for i in range(4):
        ok(fenced(kernel("round 2 kernel %d" % i, lanes=16 + i)),
           2000 + i, 200 + i, delay=1.5)
    nreq = len(script.requests)
    # The handlers of round 1's abandoned (timed-out) requests are gone by
    # now; count from here.
    kfe2e.wait_until(lambda: script.inflight == 0, 30,
                     "round 1's abandoned requests to end")
    with script.lock:
        script.max_inflight = 0
    r = propose(c, url, cid, 4, 2)
    check(r.returncode == 0, "round 2: kf propose llm exited %d"
          % r.returncode)
    check(script.max_inflight <= 2, "%d requests in flight at once with"
          " --llm-parallel 2" % script.max_inflight)
    ops = [r[1] for r in calls(c, cid)[11:]]
    # One device class: nothing to port to.
    check(len(ops) == 4 and ("combine" in ops or "prescribe" in ops) and
          "port" not in ops, "round 2 operations: %r" % ops)
    prompts = [b["messages"][1]["content"] for _, b in
               script.requests[nreq:]]
    check(any("Combine the two kernels" in p or
              "Apply this prescription" in p for p in prompts),
          "no combine/prescribe prompt in round 2")
    def section(p, title):
        return p.split("## %s\n" % title, 1)[-1].split("\n## ", 1)[0]
    check(all("\n- candidate " in section(p, "Best kernels so far") and
              "\n  Diagnosis: " in section(p, "Best kernels so far")
              for p in prompts),
          "round 2 prompts lack the measured kernels and their diagnoses")
    check(all("\n- cpu " in section(p, "Devices running this campaign") and
              "measured copy bandwidth" in p and "1 worker alive" in p
              for p in prompts), "round 2 prompts lack the device facts")

    # The harness's verdicts on what the model wrote, and the knob values
    # of its structure the search measured: waited for (no need to run
    # the campaign to its end), then the campaign is stopped.
    by_cand = {int(r[9]): i for i, r in enumerate(rows[:5])}

    def verdicts():
        v = {}
        for cand_id, outcome in c.psql(
                "SELECT candidate_id, outcome FROM evaluations WHERE"
                " campaign_id = %d AND candidate_id IN (%s)"
                % (cid, ",".join(str(k) for k in by_cand))):
            v[by_cand[int(cand_id)]] = outcome
        return v

    def measured():
        check(worker.alive() and c.coord.alive(), "a process died")
        ev = evaluated("llm-lanes")
        return len(verdicts()) == 5 and len({f for f, o in ev}) >= 3
    kfe2e.wait_progress(measured, progress, 200,
                        "the llm kernels' evaluations")
    c.kf("campaign", "stop", str(cid), "--coordinator", c.target)
    kfe2e.wait_until(lambda: kfcampaign.state(c, cid) not in
                     ("running", "showdown"), 60, "the campaign to stop")
    verdict = verdicts()
    check(verdict == {0: "ok", 1: "compile_error", 2: "link_rejected",
                      3: "wrong_answer", 4: "ok"},
          "verdicts on the llm's kernels: %r" % verdict)
    # Several knob values of the llm's structure were measured.
    ev = evaluated("llm-lanes")
    flags = {f for f, o in ev}
    check(len(flags) >= 3 and sum(o == "ok" for _, o in ev) >= 2,
          "the search evaluated the llm template at %r" % ev)
    bred = c.count("SELECT count(*) FROM candidates WHERE campaign_id = %d"
                   " AND template_name = 'llm-lanes' AND proposer ="
                   " 'evolution'" % cid)
    check(bred >= 2, "%d search candidates of the llm template" % bred)

    # kf propose usage agrees with the table.
    u = json.loads(c.kf("propose", "usage", "--campaign", str(cid),
                        "--json", "--limit", "50", "--coordinator",
                        c.target))
    rows = calls(c, cid)
    check(u["calls"] == len(rows) == 15, "usage calls %r, rows %d"
          % (u["calls"], len(rows)))
    check(u["failures"] == sum(r[2] not in ("ok", "duplicate")
                               for r in rows), "usage failures %r"
          % u["failures"])
    check(u["prompt_tokens"] == sum(int(r[6]) for r in rows) and
          u["completion_tokens"] == sum(int(r[7]) for r in rows),
          "usage tokens %r" % u)
    check(abs(u["cost"] - sum(float(r[8]) for r in rows)) < 1e-9,
          "usage cost %r" % u["cost"])
    check(len(u["recent"]) == 15 and u["recent"][0]["outcome"] in
          ("ok", "duplicate"), "usage recent: %r" % u["recent"][:1])
    check(worker.alive() and c.coord.alive(), "a process died")
    worker.terminate()
    run_phase(c, script, url, problem)
    srv.shutdown()


def run_phase(c, script, url, problem):
    """`kf run DIR --llm-url ...`: the proposer beside a local campaign,
    in a cluster of kf run's own (its data directory under the test's)."""
    data = os.path.join(c.dir, "run")
    os.makedirs(data)
    os.chmod(data, 0o755)
    ok_src = kernel("kf run proposal", lanes=12)
    script.push(body=reply(fenced(ok_src), 3000, 300))
    nreq = len(script.requests)
    env = dict(c.env, KF_LLM_KEY=KEY)
    env.pop("KF_TOKEN", None)
    argv = [c.path("kf"), "run", problem, "--data", data, "--evals", "3",
            "--minutes", "10", "--seed", "3", "--showdown", "1",
            "--llm-url", url,
            "--llm-model", MODEL, "--rounds", "1", "--llm-requests", "1",
            "--json"]
    try:
        r = subprocess.run(argv, env=env, capture_output=True, timeout=800,
                           stdin=subprocess.DEVNULL, cwd=data)
        c.log("kf run -> %d\n%s" % (r.returncode,
                                     r.stderr.decode(errors="replace")[-3000:]))
        check(r.returncode in (0, 1), "kf run exited %d" % r.returncode)
        check(len(script.requests) == nreq + 1 and not script.items,
              "kf run's proposer sent %d requests, expected 1"
              % (len(script.requests) - nreq))
        # Its PostgreSQL again, to read what the proposer left there.
        conn = c.kf("db", "start", os.path.join(data, "pg")).strip()
        saved = c.conninfo
        c.conninfo = conn
        try:
            rows = c.psql("SELECT p.outcome, p.prompt_tokens, e.outcome FROM"
                          " proposer_calls p JOIN evaluations e ON"
                          " e.candidate_id = p.candidate_id")
        finally:
            c.conninfo = saved
        check(rows == [["ok", "3000", "ok"]],
              "kf run: proposer calls with their evaluations %r" % rows)
    finally:
        subprocess.run([c.path("kf"), "db", "stop", os.path.join(data, "pg"),
                        "immediate"], env=c.env, capture_output=True,
                       timeout=120)


if __name__ == "__main__":
    kfe2e.run("llmprop", body, time_limit=420)
