# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_showdown.py -- the final showdown decides `kf run`'s best.

`kf run vecsum --evals 4 --showdown 3` on its own local cluster: the
search measures four candidates, then the campaign's top three are
re-verified and re-timed together with the reference in one `kf-harness
showdown` task.  Then:

 - the campaign is done only after its showdown reported: state "done",
   showdown "done", best_from_showdown, one showdowns row "done" whose
   entries are the campaign's candidates;
 - kf run's summary line, the first row of its table and the written
   kernel name the same candidate with the same number, the showdown's
   (its spread and repetitions shown), and that number is the one stored
   for the showdown entry.

Needs the harness's showdown mode: exits 77 (skipped) when `kf-harness
showdown --help` fails.
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


def body(c):
    prob = kfcampaign.problem_dir("vecsum")
    work = os.path.join(c.dir, "work")
    os.makedirs(work)
    rc, out, err = kf_run(c, [prob, "--data", c.dir, "--evals", "4",
                              "--showdown", "3", "--minutes", "5"], work, 400)
    # Exit 1 with its message is kf run's answer when the showdown found
    # no kernel faster than the reference: on a loaded machine (CI runs
    # beside stress-ng) four vecsum candidates may all re-time at ~1.0x, or
    # a roofline stop taken on ceilings measured under the load may end the
    # search after one evaluation.  The property here is that the showdown
    # decides the best, whichever number it finds.
    none_faster = "no verified kernel faster than the reference" in out
    check(rc == 0 or (rc == 1 and none_faster),
          "kf run exited %d\nstdout:\n%s\nstderr:\n%s" % (rc, out, err))
    # The summary and the first row of the table.
    m = re.search(r"best kernel: (\S+) \(([0-9.]+)x over the reference, "
                  r"spread ([0-9.]+)%, (\d+) repetitions, final showdown\)",
                  out)
    check(m, "no showdown summary line in:\n%s" % out)
    path, summary_x, reps = m.group(1), float(m.group(2)), m.group(4)
    # kf run wins on speedup > 1.0; the summary rounds to two places.
    check(summary_x <= 1.005 if rc == 1 else summary_x >= 0.995,
          "kf run exited %d with a best of %.2fx from the showdown"
          % (rc, summary_x))
    rows = [x for x in out.splitlines() if re.match(r"\s+1\*", x)]
    check(len(rows) == 1, "no first row marked best in:\n%s" % out)
    first = rows[0]
    check(first.rstrip().endswith("showdown"),
          "the first row was not timed in the showdown: %r" % first)
    check(("%.2fx" % summary_x) in first,
          "first row %r, summary %.2fx" % (first, summary_x))
    check((" %s " % reps) in first, "first row %r lacks the %s repetitions"
          % (first, reps))
    check("from the final showdown" in out, "status block: %s" % out)
    # The written kernel.
    with open(os.path.join(work, path)) as f:
        text = f.read()
    fm = re.search(r"speedup\s+([0-9.]+)x over the reference", text)
    check(fm and abs(float(fm.group(1)) - summary_x) < 0.006,
          "the file says %r, the summary %.2fx" % (fm and fm.group(1),
                                                   summary_x))
    check("the final showdown" in text and ("%s repetitions" % reps) in text,
          "the file's header does not say where it was timed")
    cand = re.search(r"candidate\s+(\d+),", text)
    check(cand, "no candidate in the file's header")

    # The database, with the cluster down: the same candidate, the same
    # number, from a finished showdown.
    c.start_pg()
    cid = c.count("SELECT max(id) FROM campaigns")
    st = c.psql("SELECT state, showdown, best_from_showdown,"
                " best_candidate_id FROM campaigns WHERE id = %d" % cid)[0]
    check(st[:3] == ["done", "done", "t"], "campaign: %r" % st)
    check(st[3] == cand.group(1), "best candidate %s, the file %s"
          % (st[3], cand.group(1)))
    sd = c.psql("SELECT se.speedup, se.repetitions FROM showdown_entries se"
                " JOIN showdowns s ON s.id = se.showdown_id WHERE"
                " s.campaign_id = %d AND s.state = 'done' AND se.candidate_id"
                " = %s AND se.outcome = 'ok'" % (cid, st[3]))
    check(sd and abs(float(sd[0][0]) - summary_x) < 0.006 and
          sd[0][1] == reps, "stored showdown entry %r, summary %.2fx %s"
          % (sd, summary_x, reps))
    n = c.count("SELECT count(*) FROM showdown_entries se JOIN showdowns s"
                " ON s.id = se.showdown_id JOIN candidates k ON k.id ="
                " se.candidate_id WHERE s.campaign_id = %d AND"
                " k.campaign_id = %d" % (cid, cid))
    check(1 <= n <= 3, "%d showdown entries for --showdown 3" % n)
    c.log("showdown: candidate %s, %.2fx, %s repetitions; summary, table,"
          " file and database agree" % (st[3], summary_x, reps))


if __name__ == "__main__":
    harness = os.environ.get("KF_HARNESS") or os.path.join(
        os.environ.get("KF_BIN_DIR", "."), "kf-harness")
    probe = subprocess.run([harness, "showdown", "--help"],
                           capture_output=True, timeout=60)
    if probe.returncode != 0:
        print("test_showdown: %s has no showdown mode yet: skipped" % harness)
        sys.exit(77)
    kfe2e.run("showdown", body, time_limit=600)
