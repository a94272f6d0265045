# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_sweep.py -- `kf sweep` over two CPU problems and two
device classes, run in two steps on one data directory the way a sweep
across two GPU machines lent one at a time runs (docs/sweep.md).

Real processes: each `kf sweep` starts its own PostgreSQL (in the data
directory), kf-coordinator and a kf-worker registering as the class named
by --class (cpu-a, then cpu-b: two CPU "fleets" on one machine).

1. Bad input exits 2 with the reason and starts nothing: an unknown
   problem directory, an empty --classes, a malformed baselines file
   (not JSON; a negative time), no --class among several classes.
2. Step one: `kf sweep vecsum softmax --classes cpu-a,cpu-b,cpu-c
   --class cpu-a --baselines A --bests DA` runs one campaign per problem,
   restricted to cpu-a, stores A's baselines for cpu-a (torch's times
   alone, as the retired scripts/torch_baselines.py wrote them) and writes
   each best to DA (PROBLEM.best.c and .json naming its candidate).
3. Step two, same data directory, --class cpu-b, interrupted (SIGINT)
   once its first campaign exists: exit 4, PostgreSQL stopped; run again,
   it picks that campaign up rather than making another, and adds the
   second: two campaigns on cpu-b; cpu-a's campaigns, their evaluations
   and end times are untouched.  A third run for cpu-b runs nothing and
   stores baselines in scripts/twin-eval's form: vecsum's line timed
   cpu-b's best (its candidate id from DB/vecsum.best.json) beside torch,
   softmax's line another candidate.
4. Bad input again, now with a sweep stored: the sweep's rows, campaigns
   and baselines are unchanged; a report of an unknown sweep exits 2
   naming the sweeps there are.
5. `kf sweep report s1 --out R --json`: a cell per (problem, class); the
   speedup, time, candidate and knobs of each cell that ran are the ones
   `kf campaign best ID --class MODEL --json` gives for its campaign (a
   coordinator on the same database), the roofline fraction that of
   `kf campaign status --json`, and the --bests files name that
   candidate; a speedup over torch exists only where one evaluation timed
   the class's best and torch (vecsum on cpu-b: torch's times over the
   line's kernel_ms, not the campaign's time); torch's times without the
   kernel's (cpu-a) and a line that timed another candidate (softmax on
   cpu-b) give '-' and say why; cpu-c, never run, is '-' with a reason.
   report.md has a row per cell with those numbers; the SVGs parse as XML
   and hold one bar per (problem, class) that has a number, the others
   drawn as '-'.
6. Remote mode: `kf sweep vecsum --coordinator H:P --db CONNINFO --class
   cpu-r` on a running coordinator with a cpu-r worker adds the class to
   the same sweep and runs its campaign there; an unknown class exits 2
   naming those there are, --db without --coordinator exits 2; the
   report read with --db has the new cell, equal to kf campaign best, and
   its baseline line (a twin evaluation that ended wrong_answer) gives no
   speedup over torch, naming that outcome.
"""
import json
import math
import os
import re
import signal
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

PROBLEMS = ("vecsum", "softmax")
BUDGET = ["--evals", "4", "--population", "4", "--minutes", "4",
          "--showdown", "2"]
SVG = "{http://www.w3.org/2000/svg}"


def kf(c, args, timeout=600):
    c.log("$ kf %s" % " ".join(args))
    r = subprocess.run([c.path("kf")] + list(args), env=c.env,
                       stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=timeout, preexec_fn=kfe2e._pdeathsig)
    out = r.stdout.decode(errors="replace")
    err = r.stderr.decode(errors="replace")
    with open(os.path.join(c.dir, "kf-sweep.log"), "a") as f:
        f.write("$ kf %s -> %d\n%s%s\n" % (" ".join(args), r.returncode,
                                          out, err))
    return r.returncode, out, err


def with_pg(c, fn):
    """fn() with the data directory's PostgreSQL up (kf db start), then
    stopped again so the next kf sweep starts it itself."""
    c.start_pg()
    try:
        return fn()
    finally:
        c.stop_pg()


def snapshot(c):
    def q():
        rows = {}
        for t, order in (("sweeps", "id"),
                         ("sweep_problems", "sweep_id, position"),
                         ("sweep_classes", "sweep_id, position"),
                         ("sweep_campaigns", "campaign_id"),
                         ("sweep_baselines", "label, problem")):
            rows[t] = c.psql("SELECT x::text FROM %s x ORDER BY %s"
                             % (t, order))
        rows["campaigns"] = c.psql(
            "SELECT id, state, finished_at::text FROM campaigns ORDER BY id")
        rows["evaluations"] = c.psql(
            "SELECT campaign_id, count(*) FROM evaluations GROUP BY 1"
            " ORDER BY 1")
        return rows
    return with_pg(c, q)


def write_baselines(c, name, scale):
    """A baselines file as scripts/torch_baselines.py prints it, times
    scaled per class (the test's own numbers: it checks they travel)."""
    path = os.path.join(c.dir, name)
    with open(path, "w") as f:
        f.write("# test baselines, torch 0.0\n")
        for i, p in enumerate(PROBLEMS):
            f.write(json.dumps({"problem": p, "eager_ms": 0.5 * scale * (i + 1),
                                "compile_ms": 0.25 * scale * (i + 1),
                                "bytes": 1000, "eager_gbps": 1.0,
                                "compile_gbps": 2.0}) + "\n")
        f.write(json.dumps({"problem": "copy", "ms": 1.0, "bytes": 10,
                            "gbps": 1.0}) + "\n")
    return path


def bad_inputs(c, data, probs, stored):
    """Each bad command exits 2 with its reason; nothing starts."""
    before = snapshot(c) if stored else None
    bad_base = os.path.join(c.dir, "bad.jsonl")
    neg_base = os.path.join(c.dir, "neg.jsonl")
    with open(bad_base, "w") as f:
        f.write('{"problem": "vecsum", "eager_ms": 1, "compile_ms": 1}\n'
                "this is not json\n")
    with open(neg_base, "w") as f:
        f.write('{"problem": "vecsum", "eager_ms": -3, "compile_ms": 1}\n')
    cand_base = os.path.join(c.dir, "cand.jsonl")
    with open(cand_base, "w") as f:
        f.write('{"problem": "vecsum", "eager_ms": 1, "compile_ms": 1,'
                ' "kernel_ms": 0.5, "candidate_id": 2.5}\n')
    untimed_base = os.path.join(c.dir, "untimed.jsonl")
    with open(untimed_base, "w") as f:
        f.write('{"problem": "vecsum", "eager_ms": 1, "compile_ms": 1,'
                ' "candidate_id": 7}\n')
    cases = [
        (["sweep", os.path.join(c.dir, "no-such-problem"), probs[0],
          "--data", data, "--name", "s1", "--class", "cpu-a"],
         "no-such-problem"),
        (["sweep"] + probs + ["--data", data, "--name", "s1",
                              "--classes", " , "], "names no class"),
        (["sweep"] + probs + ["--data", data, "--name", "s1", "--class",
                              "cpu-a", "--baselines", bad_base],
         "bad.jsonl:2: not a JSON object"),
        (["sweep"] + probs + ["--data", data, "--name", "s1", "--class",
                              "cpu-a", "--baselines", neg_base],
         "neg.jsonl:1: \"eager_ms\""),
        (["sweep"] + probs + ["--data", data, "--name", "s1", "--class",
                              "cpu-a", "--baselines", cand_base],
         "cand.jsonl:1: \"candidate_id\" is not a candidate id"),
        (["sweep"] + probs + ["--data", data, "--name", "s1", "--class",
                              "cpu-a", "--baselines", untimed_base],
         "untimed.jsonl:1: \"candidate_id\" names a kernel but"),
        (["sweep"] + probs + ["--data", data, "--name", "s1",
                              "--classes", "cpu-a,cpu-b"], "--class"),
        (["sweep", "report", "s1", "--data", os.path.join(c.dir, "nodata"),
          "--out", os.path.join(c.dir, "r0")], "holds no database"),
    ]
    for args, want in cases:
        rc, out, err = kf(c, args, timeout=120)
        check(rc == 2, "kf %s: exit %d, want 2: %s" % (" ".join(args), rc,
                                                       err))
        check(want in err, "kf %s: %r does not say %r" % (" ".join(args),
                                                           err, want))
        check("postgresql  up" not in err and "coordinator up" not in err,
              "kf %s started the cluster on bad input: %s"
              % (" ".join(args), err))
        c.log("refused: %s" % err.strip().splitlines()[0])
    check(not os.path.exists(os.path.join(c.dir, "nodata")),
          "report of a missing data dir created it")
    if stored:
        rc, out, err = kf(c, ["sweep", "report", "no-such-sweep", "--data",
                              data, "--json"], timeout=120)
        check(rc == 2 and "no sweep 'no-such-sweep'" in err and "s1" in err,
              "report of an unknown sweep: exit %d: %s" % (rc, err))
        rc, out, err = kf(c, ["sweep", "report", "99", "--data", data,
                              "--json"], timeout=120)
        check(rc == 2 and "no sweep '99'" in err,
              "report of an unknown sweep id: exit %d: %s" % (rc, err))
        after = snapshot(c)
        check(before == after, "bad input changed what is stored:\n%r\n%r"
              % (before, after))


def body(c):
    probs = [kfcampaign.problem_dir(p) for p in PROBLEMS]
    data = c.dir  # its pg/ is c.pgdir: Cluster.close stops it if left
    base_a = write_baselines(c, "base-a.jsonl", 1.0)
    base_b = write_baselines(c, "base-b.jsonl", 3.0)

    # 1. Bad input before anything exists.
    bad_inputs(c, data, probs, stored=False)
    check(not os.path.exists(os.path.join(data, "pg")),
          "bad input started PostgreSQL")

    # 2. Step one: class cpu-a.
    common = probs + ["--data", data, "--name", "s1"] + BUDGET
    bests = {k: os.path.join(c.dir, "bests-" + k) for k in ("cpu-a", "cpu-b")}
    rc, out, err = kf(c, ["sweep"] + common + [
        "--classes", "cpu-a,cpu-b,cpu-c", "--class", "cpu-a",
        "--baselines", base_a, "--bests", bests["cpu-a"]])
    check(rc == 0, "step one exited %d:\n%s" % (rc, err))
    sid = int(out.strip())
    check("created sweep %d" % sid in err, "step one: %r" % err)
    check("not a problem of this run" in err, "the copy line: %r" % err)
    first = snapshot(c)
    camps_a = [r for r in first["sweep_campaigns"]]
    check(len(camps_a) == 2 and all(",cpu-a," in r[0] for r in camps_a),
          "step one: campaigns %r" % camps_a)
    check(all(r[1] == "done" for r in first["campaigns"]),
          "step one: campaigns not done: %r" % first["campaigns"])

    # 3. Step two: class cpu-b on the same data directory -- interrupted
    # (^C) once its first campaign exists, then run again: the campaign
    # of the interrupted run is the one that finishes, none is made anew.
    argv = [c.path("kf"), "sweep"] + common + ["--class", "cpu-b",
                                               "--baselines", base_b,
                                               "--bests", bests["cpu-b"]]
    c.log("$ kf %s  (interrupted)" % " ".join(argv[1:]))
    p = subprocess.Popen(argv, env=c.env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=kfe2e._pdeathsig)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(
        x.decode(errors="replace") for x in p.stderr), daemon=True)
    reader.start()

    def created():
        for x in lines:
            m = re.search(r"vecsum on cpu-b: campaign (\d+),", x)
            if m:
                return int(m.group(1))
        check(p.poll() is None, "kf sweep ended early: %s" % "".join(lines))
        return None
    cut = kfe2e.wait_until(created, 300, "kf sweep to create cpu-b's campaign")
    p.send_signal(signal.SIGINT)
    rc = p.wait(120)
    reader.join(10)
    err = "".join(lines)
    with open(os.path.join(c.dir, "kf-sweep.log"), "a") as f:
        f.write("(interrupted) -> %d\n%s\n" % (rc, err))
    check(rc == 4 and "run the same command again" in err,
          "interrupted kf sweep: exit %d: %s" % (rc, err))
    check(not os.path.exists(os.path.join(c.pgdir, "data", "postmaster.pid")),
          "the interrupted kf sweep left PostgreSQL running")
    rc, out, err = kf(c, ["sweep"] + common + ["--class", "cpu-b",
                                               "--baselines", base_b,
                                               "--bests", bests["cpu-b"]])
    check(rc == 0, "step two exited %d:\n%s" % (rc, err))
    check("continuing sweep %d" % sid in err, "step two: %r" % err)
    check("resuming campaign %d" % cut in err or
          "campaign %d has ended" % cut in err,
          "step two did not pick up campaign %d: %s" % (cut, err))
    second = snapshot(c)
    check(len(second["sweep_campaigns"]) == 4,
          "step two: %r" % second["sweep_campaigns"])
    ids_a = {r[0] for r in first["campaigns"]}
    for row in first["campaigns"]:
        check(row in second["campaigns"],
              "step two changed cpu-a's campaign %r: %r"
              % (row, second["campaigns"]))
    for row in first["evaluations"]:
        check(row in second["evaluations"],
              "step two added evaluations to cpu-a's campaign %r: %r"
              % (row, second["evaluations"]))
    new = [r for r in second["campaigns"] if r[0] not in ids_a]
    check(len(new) == 2 and all(r[1] == "done" for r in new) and
          str(cut) in [r[0] for r in new],
          "step two: new campaigns %r (interrupted: %d)" % (new, cut))

    # A third run for cpu-b finds everything done: nothing new runs, and
    # it stores baselines as scripts/twin-eval writes them: vecsum's timed
    # cpu-b's best beside torch, softmax's another candidate.
    twin = {}
    for i, p in enumerate(PROBLEMS):
        with open(os.path.join(bests["cpu-b"], p + ".best.json")) as f:
            cand = json.load(f)["candidate_id"]
        twin[p] = {"problem": p, "candidate_id": cand + 1000 * i,
                   "kernel_ms": 0.125 * (i + 1), "eager_ms": 1.5 * (i + 1),
                   "compile_ms": 0.75 * (i + 1),
                   "max_autotune_ms": 0.5 * (i + 1), "outcome": "ok",
                   "timer": "kf-harness eval-files --spec %s/torch" % p}
    base_twin = os.path.join(c.dir, "twins-b.jsonl")
    with open(base_twin, "w") as f:
        for p in PROBLEMS:
            f.write(json.dumps(twin[p]) + "\n")
    rc, out, err = kf(c, ["sweep"] + common + ["--class", "cpu-b",
                                               "--baselines", base_twin])
    check(rc == 0 and err.count("not run again") == 2,
          "third run: exit %d: %s" % (rc, err))
    third = snapshot(c)
    check(third["campaigns"] == second["campaigns"] and
          third["evaluations"] == second["evaluations"],
          "the third run changed campaigns: %r" % third["campaigns"])

    # 4. Bad input with a sweep stored changes nothing.
    bad_inputs(c, data, probs, stored=True)

    # 5. The report.
    rdir = os.path.join(c.dir, "report")
    rc, out, err = kf(c, ["sweep", "report", "s1", "--data", data, "--out",
                          rdir, "--json"])
    check(rc == 0, "report exited %d: %s" % (rc, err))
    rep = json.loads(out)
    check(rep["sweep_id"] == sid and rep["problems"] == list(PROBLEMS) and
          [k["label"] for k in rep["classes"]] == ["cpu-a", "cpu-b", "cpu-c"],
          "report header: %r" % {k: rep[k] for k in ("sweep_id", "problems",
                                                     "classes")})
    cells = {(x["problem"], x["class"]): x for x in rep["cells"]}
    check(len(cells) == 6, "report cells: %r" % list(cells))
    with open(os.path.join(rdir, "report.md")) as f:
        md = f.read()

    c.start_pg()
    c.start_coordinator()
    for (p, cls), x in sorted(cells.items()):
        if cls == "cpu-c":
            check(x["campaign_id"] is None and x["speedup"] is None and
                  "not run" in x["missing"]["best"],
                  "cpu-c cell %s: %r" % (p, x))
            check(re.search(r"\| %s \| cpu-c \| - \|" % p, md),
                  "report.md has no '-' row for %s on cpu-c" % p)
            continue
        cid = x["campaign_id"]
        check(x["model"] == cls and x["state"] == "done", "cell %r" % x)
        b = json.loads(c.kf("campaign", "best", str(cid), "--class", cls,
                            "--json", "--coordinator", c.target))["best"]
        for k_rep, k_best in (("speedup", "speedup"),
                              ("best_time_ns", "time_ns_median"),
                              ("ref_time_ns", "ref_time_ns_median"),
                              ("best_candidate_id", "candidate_id")):
            check(math.isclose(x[k_rep], b[k_best], rel_tol=1e-12),
                  "%s on %s: report %s %r, kf campaign best %s %r"
                  % (p, cls, k_rep, x[k_rep], k_best, b[k_best]))
        check(x["template"] == b["template"] and x["knobs"] == " ".join(
            "%s=%s" % kv for kv in b["knobs"].items()),
            "%s on %s: winner %r %r vs %r %r" % (p, cls, x["template"],
                                                 x["knobs"], b["template"],
                                                 b["knobs"]))
        st = json.loads(c.kf("campaign", "status", str(cid), "--json",
                             "--coordinator", c.target))
        row = [k for k in st["classes"]
               if k["device_class"]["model"] == cls]
        check(len(row) == 1 and row[0]["evals_done"] == x["evals"],
              "%s on %s: status %r, report evals %r" % (p, cls, row,
                                                        x["evals"]))
        check(x["roofline_fraction"] and math.isclose(
            x["roofline_fraction"], row[0]["roofline_fraction"],
            rel_tol=1e-9), "%s on %s: roofline %r vs status %r"
            % (p, cls, x["roofline_fraction"], row[0]["roofline_fraction"]))
        with open(os.path.join(bests[cls], p + ".best.json")) as f:
            bj = json.load(f)
        with open(bj["best_file"]) as f:
            btext = f.read()
        check(bj["candidate_id"] == b["candidate_id"] and
              bj["campaign_id"] == cid and bj["class"] == cls and
              "candidate   %d," % b["candidate_id"] in btext and
              bj["best_file"] == os.path.join(bests[cls], p + ".best.c"),
              "%s on %s: --bests wrote %r, best is candidate %d"
              % (p, cls, bj, b["candidate_id"]))
        i = PROBLEMS.index(p)
        if cls == "cpu-a":
            # torch's times alone: no ratio across two timers
            check(x["eager_ms"] == 0.5 * (i + 1) and
                  x["compile_ms"] == 0.25 * (i + 1) and
                  x["twin_kernel_ms"] is None and
                  x["speedup_vs_compile"] is None and
                  x["speedup_vs_eager"] is None and
                  "two timers" in x["missing"]["compile"],
                  "%s on cpu-a, torch's times alone: %r" % (p, x))
        elif p == PROBLEMS[0]:
            t = twin[p]
            check(x["twin_candidate_id"] == b["candidate_id"] and
                  x["twin_kernel_ms"] == t["kernel_ms"] and
                  math.isclose(x["speedup_vs_compile"],
                               t["compile_ms"] / t["kernel_ms"]) and
                  math.isclose(x["speedup_vs_eager"],
                               t["eager_ms"] / t["kernel_ms"]) and
                  math.isclose(x["speedup_vs_max_autotune"],
                               t["max_autotune_ms"] / t["kernel_ms"]) and
                  "compile" not in x["missing"],
                  "%s on cpu-b, one timer: %r" % (p, x))
            check(re.search(r"\| %s \| cpu-b \|[^\n]*\| %.4g ms \(cand\. %d\)"
                            r" \| %.4g ms \| %.2fx \|" % (
                                p, t["kernel_ms"], b["candidate_id"],
                                t["eager_ms"], x["speedup_vs_eager"]), md),
                  "report.md has no one-timer columns for %s on cpu-b:\n%s"
                  % (p, md))
        else:
            check(x["speedup_vs_compile"] is None and
                  "timed candidate %d; the class's best is candidate %d"
                  % (twin[p]["candidate_id"], b["candidate_id"])
                  in x["missing"]["compile"],
                  "%s on cpu-b, another candidate's line: %r" % (p, x))
        want = r"\| %s \| %s \| %d \| done \| %d \(%d\) \|[^\n]*\| %.2fx \| " \
               r"%.1f%% \|" % (p, cls, cid, x["evals"], x["evals_ok"],
                               b["speedup"], x["roofline_fraction"] * 100)
        check(re.search(want, md), "report.md has no row %r:\n%s"
              % (want, md))
        c.log("%s on %s: campaign %d, %.2fx, %.1f%% of roofline, %s over"
              " torch.compile" % (p, cls, cid, b["speedup"],
                                  x["roofline_fraction"] * 100,
                                  x["speedup_vs_compile"]))

    ran = {(p, k) for p in PROBLEMS for k in ("cpu-a", "cpu-b")}
    every = {(p, k) for p in PROBLEMS for k in ("cpu-a", "cpu-b", "cpu-c")}
    one_timer = {(PROBLEMS[0], "cpu-b")}
    for name, has in (("roofline.svg", ran), ("speedup_compile.svg", one_timer),
                      ("speedup_eager.svg", one_timer),
                      ("speedup_reference.svg", ran)):
        root = ET.parse(os.path.join(rdir, name)).getroot()
        bars = [(r.get("data-problem"), r.get("data-class"))
                for r in root.iter(SVG + "rect") if r.get("class") == "bar"]
        check(sorted(bars) == sorted(has),
              "%s: bars %r, want one per %r" % (name, bars, sorted(has)))
        missing = [(t.get("data-problem"), t.get("data-class"))
                   for t in root.iter(SVG + "text")
                   if t.get("class") == "missing"]
        check(sorted(missing) == sorted(every - has),
              "%s: missing marks %r" % (name, missing))
        check(("roofline.svg" in md and "speedup_compile.svg" in md),
              "report.md does not show the plots")
    c.log("report: %s, 4 SVGs with one bar per (problem, class)" % rdir)

    # 6. Remote mode: the running coordinator (on the same database) and a
    # worker of class cpu-r; the sweep's rows through --db.  An unknown
    # class first: exit 2, naming the classes there are, nothing stored.
    c.start_worker("wr", slots=1, extra=["--device-class", "cpu-r"])
    kfe2e.wait_until(lambda: c.count(
        "SELECT count(*) FROM device_classes WHERE model = 'cpu-r'") == 1,
        120, "worker cpu-r to register")
    remote = [probs[0], "--name", "s1", "--coordinator", c.target, "--db",
              c.conninfo] + BUDGET
    before = c.psql("SELECT x::text FROM sweep_classes x ORDER BY position")
    rc, out, err = kf(c, ["sweep"] + remote + ["--class", "cpu-q"])
    check(rc == 2 and "no device class named 'cpu-q'" in err and
          "cpu-r" in err, "remote, unknown class: exit %d: %s" % (rc, err))
    check(c.psql("SELECT x::text FROM sweep_classes x ORDER BY position")
          == before, "a refused remote sweep changed sweep_classes")
    # cpu-a ran on model cpu-a: binding it to cpu-r is refused, and the
    # new problem given with it is not added either (one transaction).
    extra = kfcampaign.far_from_roofline(c, "rmsnorm")
    rc, out, err = kf(c, ["sweep", extra] + remote[1:] +
                      ["--class", "cpu-a", "--model", "cpu-r"])
    check(rc == 2 and "class 'cpu-a' ran on 'cpu-a' before" in err,
          "remote, label on another model: exit %d: %s" % (rc, err))
    check(c.count("SELECT count(*) FROM sweep_problems") == 2,
          "a refused sweep added its problem: %r"
          % c.psql("SELECT * FROM sweep_problems"))
    rc, out, err = kf(c, ["sweep", probs[0], "--name", "s1", "--class",
                          "cpu-r", "--db", c.conninfo])
    check(rc == 2 and "--coordinator" in err,
          "--db without --coordinator: exit %d: %s" % (rc, err))
    # with a twin line whose evaluation failed: no time, no candidate
    failed = os.path.join(c.dir, "twins-r.jsonl")
    with open(failed, "w") as f:
        f.write(json.dumps({"problem": PROBLEMS[0], "candidate_id": None,
                            "untimed_candidate_id": 1, "kernel_ms": None,
                            "eager_ms": None, "compile_ms": None,
                            "outcome": "wrong_answer",
                            "reason": "size n=7: got 1, expected 2"}) + "\n")
    rc, out, err = kf(c, ["sweep"] + remote + ["--class", "cpu-r",
                                               "--baselines", failed])
    check(rc == 0 and int(out.strip()) == sid,
          "remote sweep: exit %d: %s" % (rc, err))
    rep = json.loads(c.kf("sweep", "report", str(sid), "--db", c.conninfo,
                          "--json"))
    cells = {(x["problem"], x["class"]): x for x in rep["cells"]}
    x = cells[(PROBLEMS[0], "cpu-r")]
    b = json.loads(c.kf("campaign", "best", str(x["campaign_id"]), "--class",
                        "cpu-r", "--json", "--coordinator", c.target))["best"]
    check(x["speedup"] == b["speedup"] and x["state"] == "done",
          "remote cell %r vs best %r" % (x, b))
    check(x["speedup_vs_compile"] is None and
          "twin evaluation of the best ended wrong_answer"
          in x["missing"]["compile"], "remote cell, failed twin: %r" % x)
    check(cells[(PROBLEMS[1], "cpu-r")]["campaign_id"] is None and
          len(cells) == 8, "remote: cells %r" % sorted(cells))
    c.log("remote: %s on cpu-r, campaign %d, %.2fx" % (
        PROBLEMS[0], x["campaign_id"], x["speedup"]))


if __name__ == "__main__":
    kfe2e.run("sweep", body, time_limit=840)
