# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_llm_replay.py -- scripts/llm-replay-server on its own, as
a program, over HTTP (urllib: the chat-completions wire format a client
sends; the proposer's side is test_llm_context.py).

 - kind matching: a request's operation comes from X-KernelFleet-Operation,
   else from the task prompt; it gets the next unused file declaring that
   operation (a file without kf-op answers any); the reply holds the
   source in a fenced block of the file's language and the kf-knob /
   kf-name lines as the ```json knob block; *.md files are sent verbatim;
 - usage: prompt and completion tokens estimated at 4 characters each;
 - exhausted: HTTP 404 replay_exhausted; --loop starts over; --match order
   ignores the operations;
 - the JSON-lines log holds each request body, its operation, the file
   answered and the usage, and whether a key was sent, never the key;
   --prompts writes each request's messages as a readable file;
 - bad requests (not JSON, no messages, stream, another path) are 400/404
   with an OpenAI-style error; GET /v1/models lists "replay";
 - bad folders and bad directives stop the server at start (exit 2)
   naming the file and line.
"""
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

SCRIPT = os.path.join(kfcampaign.source_dir(), "scripts", "llm-replay-server")
KEY = "sk-replay-test-0123"


def start(c, name, folder, extra=()):
    port_file = os.path.join(c.dir, name + ".port")
    log = os.path.join(c.dir, name + ".jsonl")
    p = kfe2e.Proc(name, [SCRIPT, "--dir", folder, "--port", "0",
                          "--port-file", port_file, "--log", log] +
                   list(extra), os.path.join(c.dir, name + ".log"), c.env)
    c.procs.append(p)
    kfe2e.wait_until(lambda: os.path.exists(port_file) or not p.alive(), 30,
                     "the replay server's port file")
    check(p.alive(), "llm-replay-server exited %r" % p.popen.poll())
    return p, "http://127.0.0.1:%d" % int(open(port_file).read()), log


def post(base, body, op=None, path="/v1/chat/completions", raw=None):
    data = raw if raw is not None else json.dumps(body).encode()
    rq = urllib.request.Request(base + path, data=data, method="POST",
                                headers={"Content-Type": "application/json",
                                         "Authorization": "Bearer " + KEY})
    if op:
        rq.add_header("X-KernelFleet-Operation", op)
    try:
        with urllib.request.urlopen(rq, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def chat(task):
    return {"model": "replay", "messages": [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "# Problem\n\n## Your task\n\n" + task}]}


def write(folder, name, text):
    with open(os.path.join(folder, name), "w") as f:
        f.write(text)


def body(c):
    d = os.path.join(c.dir, "props")
    os.makedirs(d)
    src_port = ("// kf-op: port\n// kf-name: tiled-port\n"
                "// kf-knob: BLOCK=128,256\n/* kf-knob: VEC=2,4 */\n"
                "__global__ void k() {}\n")
    write(d, "01-port.cu", src_port)
    write(d, "02-any.c", "int kf_launch(void) { return 0; }\n")
    write(d, "03-raw.md", "I have nothing to say.\n")
    write(d, "04-prescribe.cpp", "// kf-op: prescribe, combine\nint x;\n")
    write(d, "README.md", "ignored\n")
    write(d, ".hidden.c", "ignored\n")
    write(d, "notes.json", "{}")
    prompts = os.path.join(c.dir, "prompts")
    p, base, log = start(c, "replay", d, ("--prompts", prompts))

    # GET /v1/models
    with urllib.request.urlopen(base + "/v1/models", timeout=30) as r:
        m = json.loads(r.read())
    check([x["id"] for x in m["data"]] == ["replay"], "models %r" % m)

    # port by header: 01-port.cu, knobs as the json block
    st, r = post(base, chat("Port this kernel to this device class."),
                 op="port")
    check(st == 200, "port: HTTP %d %r" % (st, r))
    content = r["choices"][0]["message"]["content"]
    check(content.startswith("```cuda\n" + src_port + "```\n"),
          "port reply %r" % content)
    j = json.loads(content.split("```json\n", 1)[1].split("```", 1)[0])
    check(j == {"name": "tiled-port", "knobs": {"BLOCK": ["128", "256"],
                                                 "VEC": ["2", "4"]}},
          "port knobs %r" % j)
    u = r["usage"]
    prompt_chars = len("rules") + len(chat("Port this kernel to this device"
                                           " class.")["messages"][1]
                                      ["content"])
    check(u["prompt_tokens"] == -(-prompt_chars // 4) and
          u["completion_tokens"] == -(-len(content) // 4) and
          u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"],
          "usage %r for %d prompt characters" % (u, prompt_chars))
    check(r["object"] == "chat.completion" and r["model"] == "replay" and
          r["choices"][0]["finish_reason"] == "stop", "reply %r" % r)

    # prescribe, read from the prompt (no header): 04 (declared), not 02
    st, r = post(base, chat("Apply this prescription to this kernel (c)"))
    check(st == 200 and r["choices"][0]["message"]["content"] ==
          "```cpp\n// kf-op: prescribe, combine\nint x;\n```\n",
          "prescribe: %d %r" % (st, r))
    # improve: the next file that answers any operation, in name order
    st, r = post(base, chat("Write a faster kernel"), op="improve")
    check(st == 200 and r["choices"][0]["message"]["content"] ==
          "```c\nint kf_launch(void) { return 0; }\n```\n",
          "improve: %d %r" % (st, r))
    st, r = post(base, chat("Write a faster kernel"), op="improve")
    check(st == 200 and r["choices"][0]["message"]["content"] ==
          "I have nothing to say.\n", "verbatim .md: %d %r" % (st, r))
    # exhausted
    st, r = post(base, chat("Combine the two kernels"), op="combine")
    check(st == 404 and r["error"]["type"] == "replay_exhausted" and
          "no proposal left for a 'combine' request" in r["error"]["message"],
          "exhausted: %d %r" % (st, r))
    # bad requests
    st, r = post(base, None, raw=b"not json")
    check(st == 400 and "chat-completions request" in r["error"]["message"],
          "not JSON: %d %r" % (st, r))
    st, r = post(base, {"model": "replay"})
    check(st == 400, "no messages: %d %r" % (st, r))
    st, r = post(base, dict(chat("x"), stream=True))
    check(st == 400 and "stream" in r["error"]["message"],
          "stream: %d %r" % (st, r))
    st, r = post(base, chat("x"), path="/v1/completions")
    check(st == 404, "another path: %d %r" % (st, r))

    lines = [json.loads(x) for x in open(log)]
    check([(q.get("operation"), q.get("operation_from"), q.get("reply_file"),
            q["status"]) for q in lines[:5]] ==
          [("port", "header", "01-port.cu", 200),
           ("prescribe", "prompt", "04-prescribe.cpp", 200),
           ("improve", "header", "02-any.c", 200),
           ("improve", "header", "03-raw.md", 200),
           ("combine", "header", None, 404)],
          "log %r" % [(q.get("operation"), q.get("reply_file"))
                      for q in lines])
    check(len(lines) == 9 and [q["n"] for q in lines] == list(range(1, 10)),
          "%d log lines" % len(lines))
    check(lines[0]["request"]["messages"][1]["content"].endswith(
        "Port this kernel to this device class.") and
          lines[0]["authorization"] is True and lines[0]["usage"] == u,
          "log line 1 %r" % lines[0])
    check(KEY not in open(log).read(), "the key is in the log")
    # --prompts: one readable file per chat request
    names = sorted(os.listdir(prompts))
    check(names[:5] == ["001-port.md", "002-prescribe.md", "003-improve.md",
                        "004-improve.md", "005-combine.md"],
          "--prompts files %r" % names)
    text = open(os.path.join(prompts, "001-port.md")).read()
    check(text == "<!-- system -->\n\nrules\n\n<!-- user -->\n\n"
          "# Problem\n\n## Your task\n\nPort this kernel to this device"
          " class.\n", "001-port.md %r" % text)
    p.terminate()
    check(p.popen.returncode == 0, "SIGTERM: exit %r" % p.popen.returncode)

    # --match order --loop: files in order whatever the operation, again
    p, base, log = start(c, "replay-order", d, ("--match", "order", "--loop"))
    got = []
    for i in range(5):
        st, r = post(base, chat("x"), op="port")
        check(st == 200, "order %d: %d %r" % (i, st, r))
    got = [json.loads(x)["reply_file"] for x in open(log)]
    check(got == ["01-port.cu", "02-any.c", "03-raw.md", "04-prescribe.cpp",
                  "01-port.cu"], "--match order --loop: %r" % got)
    p.terminate()

    # bad folders and directives: exit 2, naming what is wrong
    def refused(files, want):
        b = os.path.join(c.dir, "bad-%d" % len(os.listdir(c.dir)))
        os.makedirs(b)
        for n, t in files.items():
            write(b, n, t)
        r = subprocess.run([SCRIPT, "--dir", b, "--port", "0"],
                           capture_output=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        err = r.stderr.decode(errors="replace")
        check(r.returncode == 2 and want in err, "%r: exit %d: %s"
              % (files, r.returncode, err))
    refused({"README.md": "x"}, "holds no proposal")
    refused({"a.c": "// kf-op: mutate\nint x;\n"},
            "a.c:1: kf-op: 'mutate': expected operations of improve,")
    refused({"a.c": "int x;\n// kf-knob: B=1,1\n"}, "a.c:2: kf-knob: 'B=1,1':"
            " a value repeats")
    refused({"a.c": "// kf-knob: B=\n"}, "a.c:1: kf-knob: 'B=': expected"
            " 1..16 values")
    refused({"a.c": "// kf-knob: B=1\n// kf-knob: B=2\n"},
            "a.c:2: kf-knob: knob B declared twice")
    refused({"a.c": "// kf-name: two words\n"}, "a.c:1: kf-name:")
    refused({"a.c": ""}, "a.c: the file is empty")
    r = subprocess.run([SCRIPT, "--dir", os.path.join(c.dir, "nope"),
                        "--port", "0"], capture_output=True, timeout=60)
    check(r.returncode == 2 and b"No such file or directory" in r.stderr,
          "missing --dir: %d %r" % (r.returncode, r.stderr))
    r = subprocess.run([SCRIPT, "--dir", d, "--port", "70000"],
                       capture_output=True, timeout=60)
    check(r.returncode == 2 and b"expected 0..65535" in r.stderr,
          "bad --port: %d %r" % (r.returncode, r.stderr))


if __name__ == "__main__":
    kfe2e.run("llmrep", body, time_limit=120)
