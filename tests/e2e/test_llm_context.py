# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_llm_context.py -- profile -> diagnose -> propose: what the
llm proposer tells its model, each evolution operator as its own request
kind, and scripts/llm-replay-server as the model.

A real coordinator, PostgreSQL and two CPU workers of two device classes
(`kf-worker --device-class cpu-a / cpu-b`) run a vecsum campaign until each
class has diagnosed ok evaluations (every ok evaluation gets a diagnosis,
CPU ones too).  scripts/llm-replay-server (started as a program, the way
a person starts it) answers from a folder of kernel files, one per
operation, and logs every request body as a JSON line.  `kf propose llm
--llm-ops OP` then sends one request of each kind.  Checked from the
replay's log and PostgreSQL (never from the code under test alone):

 - every request carries its operation (X-KernelFleet-Operation), and the
   replay answered it with the file declared for that operation;
 - the context: each best kernel's diagnosis line is the detail stored in
   eval_profiles for an evaluation of that candidate on that class, with
   its bandwidth fraction's number; each device class's facts carry the
   copy bandwidth its worker registered;
 - improve / prescribe / port carry the source of the kernel they name
   (the candidate's stored source), combine the sources of two kernels of
   one class; prescribe carries the kernel's diagnosis and a prescription
   for its stored bound; port names a target class other than the
   kernel's;
 - each reply became a candidate (proposer_calls ok, candidate_id), the
   declared knob space a template (origin proposer) that the workers
   evaluate; a request after the files ran out is a failed call whose
   reason says so (HTTP 404 replay_exhausted);
 - `kf propose usage --json` reports the round-trip latency median / p90
   / max as PostgreSQL computes them over proposer_calls.latency_ms, the
   calls that became candidates, and the profiling pass's cost (none on
   CPU workers: 0 profiled of the evaluations the campaign ran);
 - bad input: an unknown --llm-ops operator, a proposal file with a bad
   kf-knob line (the replay refuses to start, naming file and line);
 - `kf run DIR --llm-url http://127.0.0.1:PORT/v1 --llm-model replay`
   runs a short campaign whose proposal came from the replay server, and
   its --json carries the proposer's usage (calls, latency, profiling).
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

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
  ((float *)a->outputs[0].data)[0] = s;
  return 0;
}
"""
OPS = ("improve", "combine", "prescribe", "port")


def proposal(directives, lanes=None):
    """A vecsum kernel file with kf-* directive lines; LANES a knob
    (lanes None) or fixed."""
    pre = "".join("// %s\n" % d for d in directives) + HEAD
    if lanes is None:
        pre += "#ifndef LANES\n#define LANES 4\n#endif\n"
    else:
        pre += "#define LANES %d\n" % lanes
    return pre + SUM_BODY


def replay_server(c, name, folder, extra=()):
    """Starts scripts/llm-replay-server on a free port; (proc, url, log)."""
    script = os.path.join(kfcampaign.source_dir(), "scripts",
                          "llm-replay-server")
    port_file = os.path.join(c.dir, name + ".port")
    log = os.path.join(c.dir, name + ".jsonl")
    p = kfe2e.Proc(name, [script, "--dir", folder, "--port", "0",
                          "--port-file", port_file, "--log", log] +
                   list(extra), os.path.join(c.dir, name + ".log"), c.env)
    c.procs.append(p)
    kfe2e.wait_until(lambda: os.path.exists(port_file) or not p.alive(), 30,
                     "the replay server's port file")
    check(p.alive(), "llm-replay-server exited %r" % p.popen.poll())
    port = int(open(port_file).read())
    return p, "http://127.0.0.1:%d/v1" % port, log


def log_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def section(text, title):
    """The text of a '## title' section of the task prompt."""
    part = text.split("## %s\n" % title, 1)
    check(len(part) == 2, "the prompt has no '## %s' section" % title)
    return part[1].split("\n## ", 1)[0]


def fenced_after(text, marker):
    """The first fenced block after marker."""
    i = text.index(marker)
    m = re.search(r"```[a-z+]*\n(.*?)```", text[i:], re.S)
    check(m, "no fenced block after %r" % marker)
    return m.group(1)


def class_ok_diagnosed(c, cid):
    return dict((r[0], int(r[1])) for r in c.psql(
        "SELECT d.model, count(*) FROM evaluations e JOIN device_classes d"
        " ON d.id = e.device_class_id JOIN eval_profiles pf"
        " ON pf.evaluation_id = COALESCE(e.reused_from, e.id)"
        " WHERE e.campaign_id = %d AND e.outcome = 'ok' AND pf.bound IS NOT"
        " NULL GROUP BY d.model" % cid))


def propose(c, url, cid, ops, requests=1, check_rc=True):
    argv = [c.path("kf"), "propose", "llm", "--campaign", str(cid),
            "--coordinator", c.target, "--llm-url", url,
            "--llm-model", "replay", "--rounds", "1", "--llm-requests",
            str(requests), "--llm-parallel", "1", "--llm-ops", ops]
    r = subprocess.run(argv, env=c.env, capture_output=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    c.log("kf propose llm --llm-ops %s -> %d\n%s" % (
        ops, r.returncode, r.stderr.decode(errors="replace")))
    if check_rc:
        check(r.returncode == 0, "kf propose llm --llm-ops %s exited %d"
              % (ops, r.returncode))
    return r


def kernel_lines(best):
    """(candidate id, class model, diagnosis line) of each best kernel."""
    out = []
    lines = best.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"- candidate (\d+), .* on cpu (\S+) \(", line)
        if m:
            check(i + 1 < len(lines) and
                  lines[i + 1].startswith("  Diagnosis: "),
                  "kernel line without a diagnosis line: %r" % lines[i:i + 2])
            out.append((int(m.group(1)), m.group(2),
                        lines[i + 1][len("  Diagnosis: "):]))
    return out


def body(c):
    c.start_pg()
    c.start_coordinator()
    problem = kfcampaign.far_from_roofline(c, "vecsum")
    cid = kfcampaign.submit(c, problem, evals=80, minutes=30, population=6,
                            extra=("--plateau", "1000"))
    wa = c.start_worker("wa", slots=1, extra=["--device-class", "cpu-a"])
    wb = c.start_worker("wb", slots=1, extra=["--device-class", "cpu-b"])

    def progress():
        return kfcampaign.n_evals(c, cid)

    # Both classes diagnosed, and enough kernels that one class has two in
    # the top 8 (combine's pair).
    kfe2e.wait_progress(
        lambda: (lambda d: d.get("cpu-a", 0) >= 3 and
                 d.get("cpu-b", 0) >= 3)(class_ok_diagnosed(c, cid)),
        progress, 200, "diagnosed ok evaluations on both classes")

    # ---- the proposals, one file per operation ------------------------
    folder = os.path.join(c.dir, "proposals")
    os.makedirs(folder)
    files = {
        "improve": ("01-improve.c", proposal(["kf-op: improve"], 12)),
        "combine": ("02-combine.c", proposal(
            ["kf-op: combine", "kf-name: replay-comb",
             "kf-knob: LANES=4,8,16"])),
        "prescribe": ("03-prescribe.c", proposal(["kf-op: prescribe"], 20)),
        "port": ("04-port.c", proposal(["kf-op: port"], 24)),
    }
    for name, text in files.values():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)

    # A bad declaration: the replay refuses to start, naming file and line.
    bad = os.path.join(c.dir, "bad-proposals")
    os.makedirs(bad)
    with open(os.path.join(bad, "01-bad.c"), "w") as f:
        f.write(proposal(["kf-op: improve", "kf-knob: KF_X=1"], 4))
    r = subprocess.run([os.path.join(kfcampaign.source_dir(), "scripts",
                                     "llm-replay-server"), "--dir", bad,
                        "--port", "0"], capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    err = r.stderr.decode(errors="replace")
    check(r.returncode == 2 and "01-bad.c:2: kf-knob: 'KF_X=1'" in err,
          "replay server with a bad kf-knob: exit %d: %s"
          % (r.returncode, err))

    srv, url, log = replay_server(c, "replay", folder)

    # An unknown operator is a usage error naming it.
    r = propose(c, url, cid, "improve,mutate", check_rc=False)
    err = r.stderr.decode(errors="replace")
    check(r.returncode == 2 and "unknown operator 'mutate'" in err,
          "--llm-ops improve,mutate: exit %d: %s" % (r.returncode, err))

    for op in OPS:
        propose(c, url, cid, op)
    reqs = log_lines(log)
    check(len(reqs) == 4, "the replay logged %d requests, expected 4"
          % len(reqs))
    for op, q in zip(OPS, reqs):
        check(q["operation"] == op and q["operation_from"] == "header",
              "request %d: operation %r from %r, expected %r from the"
              " header" % (q["n"], q["operation"], q["operation_from"], op))
        check(q["reply_file"] == files[op][0] and q["status"] == 200,
              "request %s answered with %r (%r)" % (op, q["reply_file"],
                                                    q["status"]))
        check(q["authorization"] is False, "a key was sent, none was set")

    # ---- the context: diagnoses and device facts as stored -------------
    sources = {}

    def source_of(cand):
        if cand not in sources:
            # hex: psql prints a multi-line text as several rows
            sources[cand] = bytes.fromhex(c.scalar(
                "SELECT encode(convert_to(source, 'UTF8'), 'hex') FROM"
                " candidates WHERE id = %d" % cand)).decode()
        return sources[cand]

    workers = {r[0]: json.loads(r[1]) for r in c.psql(
        "SELECT d.model, w.device::text FROM workers w JOIN device_classes d"
        " ON d.id = w.device_class_id WHERE w.name IN ('wa', 'wb')")}
    for q in reqs:
        user = q["request"]["messages"][1]["content"]
        devs = section(user, "Devices running this campaign")
        for model, dev in workers.items():
            m = re.search(r"- cpu %s \([^)]*\): .*measured copy bandwidth"
                          r" ([0-9.]+) GB/s" % re.escape(model), devs)
            check(m and abs(float(m.group(1)) - dev["copy_gbps"]) < 0.051,
                  "%s request: class %s facts %r, registered copy_gbps %r"
                  % (q["operation"], model, devs, dev.get("copy_gbps")))
        best = section(user, "Best kernels so far")
        # CPU workers have no profiler: no line says so on every kernel
        check("\n  no profile (" not in best and
              "\n  profile (" not in best,
              "%s request: profile lines for CPU kernels: %r"
              % (q["operation"], best[:1500]))
        kl = kernel_lines(best)
        check(len(kl) >= 3 and {k[1] for k in kl} == {"cpu-a", "cpu-b"},
              "%s request: best kernels %r" % (q["operation"], kl))
        for cand, model, diag in kl:
            rows = c.psql(
                "SELECT pf.detail, pf.bound, pf.bandwidth_fraction,"
                " pf.compute_fraction FROM"
                " evaluations e JOIN device_classes d ON d.id ="
                " e.device_class_id JOIN eval_profiles pf ON"
                " pf.evaluation_id = COALESCE(e.reused_from, e.id) WHERE"
                " e.candidate_id = %d AND d.model = '%s' AND e.outcome ="
                " 'ok'" % (cand, model))
            match = [r for r in rows if diag == r[0] + "."]
            check(match, "%s request: candidate %d on %s: diagnosis %r is"
                  " none of the stored %r" % (q["operation"], cand, model,
                                              diag, rows))
            # the number of its bound: the FLOP rate's fraction for
            # compute, the bandwidth's for the others
            frac = match[0][3] if match[0][1] == "compute" else match[0][2]
            pct = "%.1f%%" % (100 * float(frac))
            check(match[0][1] + "-bound" in diag.replace("occupancy/", "") and
                  pct in diag, "diagnosis %r lacks its bound %r or its"
                  " number %s" % (diag, match[0][1], pct))

    # ---- each operator with its sources --------------------------------
    prompts = {q["operation"]: q["request"]["messages"][1]["content"]
               for q in reqs}

    def task_kernel(op, marker):
        task = section(prompts[op], "Your task")
        m = re.search(marker + r"\(candidate (\d+), [^\n]* on cpu (\S+) \(",
                      task)
        check(m, "%s task names no kernel: %r" % (op, task[:400]))
        cand = int(m.group(1))
        src = fenced_after(task, m.group(0))
        check(src.strip() == source_of(cand).strip(),
              "%s task: the source after candidate %d is not its stored"
              " source" % (op, cand))
        return task, cand, m.group(2)

    task, cand, _ = task_kernel("improve", r"Write a faster kernel than the"
                                r" one below ")
    check("Diagnosis: " in task, "improve task without the diagnosis")

    task, a, cls_a = task_kernel("combine", r"Kernel A ")
    m = re.search(r"Kernel B \(candidate (\d+), [^\n]* on cpu (\S+) \(", task)
    check(m, "combine task names no kernel B")
    b, cls_b = int(m.group(1)), m.group(2)
    check(a != b and cls_a == cls_b, "combine of candidates %d (%s) and %d"
          " (%s): two kernels of one class expected" % (a, cls_a, b, cls_b))
    check(fenced_after(task, m.group(0)).strip() == source_of(b).strip(),
          "combine task: kernel B's source is not candidate %d's" % b)
    check(task.count("Diagnosis: ") == 2, "combine task: two diagnoses"
          " expected")

    task, cand, cls = task_kernel("prescribe", r"Apply this prescription to"
                                  r" this kernel ")
    bound = c.psql(
        "SELECT pf.bound, pf.detail FROM evaluations e JOIN device_classes d"
        " ON d.id = e.device_class_id JOIN eval_profiles pf ON"
        " pf.evaluation_id = COALESCE(e.reused_from, e.id) WHERE"
        " e.candidate_id = %d AND d.model = '%s' AND e.outcome = 'ok'"
        % (cand, cls))
    check(any(("The prescription for its %s bound:" % r[0]) in task and
              ("Diagnosis: %s." % r[1]) in task for r in bound),
          "prescribe task lacks the stored bound and diagnosis %r: %r"
          % (bound, task[:1500]))
    words = {"memory": "bandwidth", "compute": "FLOP rate",
             "latency": "Expose more parallelism", "launch": "one launch"}
    pres = task.split("The prescription for its", 1)[1]
    check(any(words[r[0]] in pres for r in bound),
          "the prescription does not fit the bound %r: %r" % (bound, pres))

    task, cand, cls = task_kernel("port", r"Port this kernel to this device"
                                  r" class\.  The kernel below\n")
    m = re.search(r"Port it to cpu (\S+) \(", task)
    check(m and m.group(1) in ("cpu-a", "cpu-b") and m.group(1) != cls,
          "port of a kernel of %s targets %r" % (cls, m and m.group(1)))

    # ---- what became of the replies ------------------------------------
    rows = c.psql("SELECT operation, outcome, COALESCE(candidate_id, 0),"
                  " prompt_version, latency_ms, prompt_tokens FROM"
                  " proposer_calls WHERE campaign_id = %d ORDER BY id" % cid)
    check([(r[0], r[1]) for r in rows] == [(op, "ok") for op in OPS] and
          all(int(r[2]) > 0 for r in rows),
          "proposer_calls %r" % rows)
    for r in rows:
        check("+%s.md@" % r[0] in r[3], "prompt_version %r of %s"
              % (r[3], r[0]))
        check(int(r[5]) > 0, "no prompt tokens reported for %s" % r[0])
    for (op, (name, text)), r in zip(files.items(), rows):
        check(source_of(int(r[2])) == text, "the %s candidate's source is"
              " not %s" % (op, name))
    tj = json.loads(c.scalar("SELECT templates::text FROM campaigns WHERE"
                             " id = %d" % cid))
    mine = [t for t in tj if t["name"] == "replay-comb"]
    check(len(mine) == 1 and mine[0].get("origin") == "proposer" and
          mine[0]["knobs"] == [{"name": "LANES",
                                "values": ["4", "8", "16"]}],
          "the replay's knob space as a template: %r" % mine)
    # The workers evaluate what the replay wrote.
    kfe2e.wait_progress(
        lambda: c.count("SELECT count(DISTINCT e.candidate_id) FROM"
                        " evaluations e WHERE e.outcome = 'ok' AND"
                        " e.candidate_id IN (%s)"
                        % ",".join(r[2] for r in rows)) == 4,
        progress, 200, "the replay's kernels evaluated ok")

    # Every improve file is used: the replay answers 404 replay_exhausted,
    # which the proposer records as a failed call with that reason.
    propose(c, url, cid, "improve", check_rc=False)
    last = c.psql("SELECT operation, outcome, http_status, reason,"
                  " candidate_id IS NULL FROM proposer_calls WHERE"
                  " campaign_id = %d ORDER BY id DESC LIMIT 1" % cid)[0]
    check(last[:3] == ["improve", "http_error", "404"] and
          "no proposal left for a 'improve' request" in last[3] and
          last[4] == "t", "the exhausted replay's call: %r" % last)

    # ---- kf propose usage: latency and profiling cost ------------------
    u = json.loads(c.kf("propose", "usage", "--campaign", str(cid), "--json",
                        "--coordinator", c.target))
    want = c.psql(
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms),"
        " percentile_cont(0.9) WITHIN GROUP (ORDER BY latency_ms),"
        " max(latency_ms), count(candidate_id) FROM proposer_calls WHERE"
        " campaign_id = %d" % cid)[0]
    check(abs(u["latency_ms_median"] - float(want[0])) < 1e-6 and
          abs(u["latency_ms_p90"] - float(want[1])) < 1e-6 and
          u["latency_ms_max"] == int(want[2]) and u["proposed"] == 4 ==
          int(want[3]), "usage latency %r, PostgreSQL %r" % (u, want))
    c.kf("campaign", "stop", str(cid), "--coordinator", c.target)
    kfe2e.wait_until(lambda: kfcampaign.state(c, cid) not in
                     ("running", "showdown"), 60, "the campaign to stop")
    # The stop fails the queued tasks; leased ones still report.  The
    # counts below are compared across several reads, so only once the
    # last evaluation has landed (on a loaded machine one landed between
    # two reads).
    kfe2e.wait_until(lambda: c.count(
        "SELECT count(*) FROM tasks WHERE campaign_id = %d AND state IN"
        " ('queued', 'leased')" % cid) == 0, 300,
        "the stopped campaign's leased tasks to report")
    u = json.loads(c.kf("propose", "usage", "--campaign", str(cid), "--json",
                        "--coordinator", c.target))
    ran = c.count("SELECT count(*) FROM evaluations WHERE campaign_id = %d"
                  " AND reused_from IS NULL" % cid)
    # CPU workers run no profiler: their rows hold diagnoses, and a
    # status that says so (none, unavailable or skipped)
    passes = c.count("SELECT count(*) FROM eval_profiles pf JOIN evaluations"
                     " e ON e.id = pf.evaluation_id WHERE e.campaign_id = %d"
                     " AND pf.status IN ('ok', 'restricted', 'failed')" % cid)
    diagnosed = c.count("SELECT count(*) FROM eval_profiles pf JOIN"
                        " evaluations e ON e.id = pf.evaluation_id WHERE"
                        " e.campaign_id = %d AND pf.status IN ('none',"
                        " 'unavailable', 'skipped') AND"
                        " pf.bound IS NOT NULL" % cid)
    check(u["evaluations"] == ran > 0 and u["profiled"] == passes == 0 and
          diagnosed > 0 and u["profile_ms_total"] == 0,
          "usage profiling %r, %d evaluations ran, %d profiled, %d"
          " diagnosed" % ({k: v for k, v in u.items() if k != "recent"},
                          ran, passes, diagnosed))
    text = c.kf("propose", "usage", "--campaign", str(cid), "--coordinator",
                c.target)
    check("round trip per request: median" in text and
          "profiling pass: none of %d evaluations profiled" % ran in text,
          "kf propose usage: %s" % text)
    check(wa.alive() and wb.alive() and c.coord.alive(), "a process died")
    wa.terminate()
    wb.terminate()
    srv.terminate()
    run_phase(c, problem)


def run_phase(c, problem):
    """`kf run DIR --llm-url ... --llm-model replay`: a short local
    campaign whose proposal the replay server wrote."""
    folder = os.path.join(c.dir, "run-proposals")
    os.makedirs(folder)
    text = proposal(["kf-name: run-replay"], 10)
    with open(os.path.join(folder, "01-any.c"), "w") as f:
        f.write(text)
    srv, url, log = replay_server(c, "replay-run", folder)
    data = os.path.join(c.dir, "run")
    os.makedirs(data)
    os.chmod(data, 0o755)
    env = dict(c.env)
    env.pop("KF_TOKEN", None)
    argv = [c.path("kf"), "run", problem, "--data", data, "--evals", "3",
            "--minutes", "10", "--seed", "3", "--showdown", "1",
            "--llm-url", url, "--llm-model", "replay", "--rounds", "1",
            "--llm-requests", "1", "--json"]
    try:
        r = subprocess.run(argv, env=env, capture_output=True, timeout=800,
                           stdin=subprocess.DEVNULL, cwd=data)
        c.log("kf run -> %d\n%s" % (r.returncode,
                                     r.stderr.decode(errors="replace")[-3000:]))
        check(r.returncode in (0, 1), "kf run exited %d" % r.returncode)
        out = json.loads(r.stdout)
        pu = out.get("proposer_usage") or {}
        check(pu.get("calls") == 1 and pu.get("proposed") == 1 and
              pu.get("latency_ms_max", -1) >= pu.get("latency_ms_median", -2)
              >= 0 and pu.get("evaluations", 0) >= 1 and
              pu.get("profiled") == 0,
              "kf run --json proposer_usage %r" % pu)
        reqs = log_lines(log)
        check(len(reqs) == 1 and reqs[0]["reply_file"] == "01-any.c" and
              reqs[0]["operation"] == "improve",
              "kf run's requests to the replay: %r"
              % [(q.get("operation"), q.get("reply_file")) for q in reqs])
        conn = c.kf("db", "start", os.path.join(data, "pg")).strip()
        saved = c.conninfo
        c.conninfo = conn
        try:
            rows = c.psql("SELECT p.outcome, p.model, e.outcome,"
                          " encode(convert_to(k.source, 'UTF8'), 'hex')"
                          " FROM proposer_calls p JOIN candidates k ON"
                          " k.id = p.candidate_id JOIN evaluations e ON"
                          " e.candidate_id = p.candidate_id")
        finally:
            c.conninfo = saved
        check(len(rows) == 1 and rows[0][:3] == ["ok", "replay", "ok"] and
              bytes.fromhex(rows[0][3]).decode() == text, "kf run: the replay's proposal and its"
              " evaluation %r" % [r[:3] for r in rows])
    finally:
        srv.terminate()
        subprocess.run([c.path("kf"), "db", "stop", os.path.join(data, "pg"),
                        "immediate"], env=c.env, capture_output=True,
                       timeout=120)


if __name__ == "__main__":
    kfe2e.run("llmctx", body, time_limit=480)
