# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_campaign_failures.py -- hostile candidates in a campaign
are recorded as failed evaluations and the worker keeps serving.

PostgreSQL + coordinator + ONE worker (one slot); `kf campaign submit`
problems/cpu/softmax with a small budget, then six hostile free-form
candidates are proposed to it: one that fails to compile, one that
segfaults, one that never returns, one that writes wrong values, one that
leaves an output element unwritten and one that writes past the end of
its output.  Then, through psql: each has exactly one evaluation with the
expected outcome, the expected (non-empty) stage and a reason naming the
failure; every evaluation of the campaign was made by the one worker,
whose process (same pid) was alive throughout and whose id in `workers`
never changed; and an ok evaluation of an honest candidate (the search's
own templates) finished after the last hostile one.  `kf campaign
export` reports the same failures.

How the hostile candidates get in: `kf campaign propose ID FILE
--proposer NAME`, the ProposeCandidate RPC a person, an LLM or another
program uses; the coordinator validates it and the search evaluates
proposals first.

Cost: the infinite loop takes the harness's per-call watchdog (10 s by
default for a worker); everything else is a compile plus a short check
or timing run.  About a minute on a 2-core machine.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

# Room for the search's first candidates, the six hostile ones and some
# honest ones after them; the test stops the campaign once it has what
# it needs.
EVALS = 16
WORKER = "w-fail"

PARTIAL_WRITE = r"""
#include "kf_candidate.h"
#include <math.h>
/* softmax that never writes the last element of the last row */
int kf_launch(const kf_args *a) {
  const int64_t M = a->params[0], N = a->params[1];
  const float *x = a->inputs[0].data;
  float *y = a->outputs[0].data;
  for (int64_t i = 0; i < M; i++) {
    const float *r = x + i * N;
    float *o = y + i * N;
    float m = r[0], s = 0.0f;
    for (int64_t j = 1; j < N; j++) m = r[j] > m ? r[j] : m;
    for (int64_t j = 0; j < N; j++) s += expf(r[j] - m);
    const int64_t cols = i + 1 == M ? N - 1 : N;
    for (int64_t j = 0; j < cols; j++) o[j] = expf(r[j] - m) / s;
  }
  return 0;
}
"""

COMPILE_ERROR = r"""
#include "kf_candidate.h"
int kf_launch(const kf_args *a) {
  (void)a;
  return 1 +;
}
"""

# (proposer, source (inline text or a tests/exploits file), outcome,
#  stage, substring of the reason)
HOSTILE = [
    ("e2e.compile", COMPILE_ERROR, "compile_error", "compile",
     "expected expression"),
    ("e2e.segfault", "segfault.c", "crash", "verify", "SIGSEGV"),
    ("e2e.hang", "infinite_loop.c", "timeout", "verify", "still running"),
    ("e2e.wrong", "copy_input.c", "wrong_answer", "verify", "expected"),
    ("e2e.partial", PARTIAL_WRITE, "unwritten_output", "verify",
     "never written"),
    ("e2e.oob", "oob_past_end.c", "out_of_bounds", "verify",
     "past the end of output 'y'"),
]


def load_source(src_dir, s):
    if s.endswith(".c") and "\n" not in s:
        with open(os.path.join(src_dir, "tests", "exploits", s)) as f:
            return f.read()
    return s


def check_manifest(src_dir):
    """The corpus files used here are listed for softmax with the outcome
    this test expects, so the two cannot drift apart silently."""
    with open(os.path.join(src_dir, "tests", "exploits",
                           "manifest.json")) as f:
        man = {e["file"]: e for e in json.load(f)["exploits"]}
    for _, s, outcome, _, reason in HOSTILE:
        if "\n" in s:
            continue
        e = man.get(s)
        check(e is not None, "%s is not in tests/exploits/manifest.json" % s)
        check(e["problem"] == "problems/cpu/softmax" and
              e["expected"] == outcome,
              "manifest: %s is %s for %s; this test expects %s for "
              "problems/cpu/softmax" % (s, e["expected"], e["problem"],
                                        outcome))


def propose(c, cid, proposer, source):
    """`kf campaign propose`: the ProposeCandidate RPC.  Returns the
    candidate id."""
    path = os.path.join(c.dir, "proposal-%s.c" % proposer)
    with open(path, "w") as f:
        f.write(source)
    out = c.kf("campaign", "propose", str(cid), path, "--proposer", proposer,
               "--coordinator", c.target, "--json")
    r = json.loads(out)
    check(r["campaign_id"] == cid and not r["duplicate"],
          "proposing %s to campaign %d: %r" % (proposer, cid, r))
    return int(r["candidate_id"])


def body(c):
    src_dir = kfcampaign.source_dir()
    check_manifest(src_dir)
    c.start_pg()
    c.start_coordinator()
    w = c.start_worker(WORKER, slots=1)
    ids = kfe2e.wait_until(lambda: c.worker_ids(WORKER), 30,
                           "worker %s registered" % WORKER)
    check(len(ids) == 1, "worker %s registered as %r" % (WORKER, ids))
    wid = ids[0]
    pid = w.pid
    c.log("worker %s: id %d, pid %d" % (WORKER, wid, pid))

    def steady():
        """The worker is the same live process under the same id."""
        check(c.coord.alive(), "kf-coordinator died: exit %s"
              % c.coord.popen.returncode)
        check(w.alive(), "worker %s (pid %d) died: exit %s"
              % (WORKER, pid, w.popen.returncode))
        now = c.worker_ids(WORKER)
        check(now == [wid], "worker %s re-registered: ids %r (was %d)"
              % (WORKER, now, wid))

    cid = kfcampaign.submit(c, kfcampaign.problem_dir("softmax"),
                            evals=EVALS, minutes=4, population=4)
    cands = {}
    for proposer, s, outcome, stage, reason in HOSTILE:
        k = propose(c, cid, proposer, load_source(src_dir, s))
        cands[k] = (proposer, outcome, stage, reason)
    c.log("proposed %d hostile candidates: %s" % (
        len(cands), ", ".join("%d %s" % (k, v[0])
                              for k, v in sorted(cands.items()))))
    klist = ",".join(str(k) for k in cands)

    def progress():
        steady()
        st = kfcampaign.state(c, cid)
        n = c.count("SELECT count(*) FROM evaluations WHERE candidate_id IN "
                    "(%s)" % klist)
        if n < len(cands):
            check(st == "running", "campaign %d ended %s with %d of %d "
                  "hostile candidates evaluated" % (cid, st, n, len(cands)))
            return False
        later = c.count(
            "SELECT count(*) FROM evaluations e WHERE e.campaign_id = %d "
            "AND e.outcome = 'ok' AND e.created_at > (SELECT max(created_at) "
            "FROM evaluations WHERE candidate_id IN (%s))" % (cid, klist))
        if later == 0:
            check(st == "running", "campaign %d ended %s with no ok "
                  "evaluation after the hostile ones; outcomes: %r" % (
                      cid, st, c.psql("SELECT candidate_id, outcome, reason "
                                      "FROM evaluations WHERE campaign_id = "
                                      "%d ORDER BY id" % cid)))
            return False
        return later
    later = kfe2e.wait_until(progress, 150, "the hostile candidates and an "
                             "ok evaluation after them", interval=0.5)
    c.log("all hostile candidates evaluated; %d ok evaluation(s) after them"
          % later)
    remote = ["--coordinator", c.target]
    c.kf("campaign", "stop", str(cid), *remote)
    steady()

    # Each hostile candidate: one evaluation, by this worker, with the
    # expected outcome, stage and reason, and the same deciding stage in
    # the stored EvalResult.
    rows = c.psql(
        "SELECT e.candidate_id, e.outcome, coalesce(e.stage, ''), "
        "e.worker_id, t.state, encode(e.result, 'hex'), "
        "encode(convert_to(coalesce(e.reason, ''), 'UTF8'), 'hex') "
        "FROM evaluations e JOIN tasks t ON t.id = e.task_id "
        "WHERE e.candidate_id IN (%s) ORDER BY e.candidate_id" % klist)
    check(len(rows) == len(cands), "%d evaluations for %d hostile "
          "candidates: %r" % (len(rows), len(cands), rows))
    for k, outcome, stage, ewid, tstate, hexres, hexreason in rows:
        proposer, want, want_stage, want_reason = cands[int(k)]
        reason = bytes.fromhex(hexreason).decode(errors="replace")
        what = "%s (candidate %s)" % (proposer, k)
        check(outcome == want, "%s: outcome %s, expected %s; reason %r"
              % (what, outcome, want, reason[:300]))
        check(stage == want_stage, "%s: stage %r, expected %r"
              % (what, stage, want_stage))
        check(want_reason in reason, "%s: reason %r lacks %r"
              % (what, reason[:300], want_reason))
        check(int(ewid) == wid, "%s: evaluated by worker %s, not %d"
              % (what, ewid, wid))
        check(tstate == "done", "%s: its task is %s, not done"
              % (what, tstate))
        check(hexres, "%s: no stored EvalResult" % what)
        stages = kfcampaign.eval_result_stages(hexres)
        deciding = [s for s in stages if s[0] == want_stage]
        check(deciding and deciding[-1][1] != kfcampaign.OUTCOME_OK and
              want_reason in deciding[-1][2],
              "%s: stored EvalResult stages %r do not show the %s failure"
              % (what, [(s, o) for s, o, _ in stages], want_stage))
        c.log("%-13s %-16s %-7s %s" % (proposer, outcome, stage,
                                       " ".join(reason.split())[:110]))

    # Every evaluation of the campaign came from the one worker; an ok
    # evaluation of an honest candidate finished after the last hostile
    # one.
    others = c.psql("SELECT DISTINCT worker_id FROM evaluations WHERE "
                    "campaign_id = %d" % cid)
    check(others == [[str(wid)]], "evaluations by workers %r, expected "
          "only %d" % (others, wid))
    ok_after = c.psql(
        "SELECT e.candidate_id, k.proposer, k.template_name FROM evaluations "
        "e JOIN candidates k ON k.id = e.candidate_id WHERE e.campaign_id = "
        "%d AND e.outcome = 'ok' AND e.worker_id = %d AND e.created_at > "
        "(SELECT max(created_at) FROM evaluations WHERE candidate_id IN "
        "(%s)) ORDER BY e.id" % (cid, wid, klist))
    check(ok_after, "no ok evaluation after the last hostile one")
    check(all(r[0] not in [str(k) for k in cands] for r in ok_after),
          "a hostile candidate evaluated ok: %r" % ok_after)
    c.log("ok after the hostile ones: %r" % ok_after)
    kfcampaign.check_no_repeats(c)
    kfcampaign.check_every_task_once(c, cid)

    # The CLI's view agrees.
    lines = c.kf("campaign", "export", str(cid), *remote).splitlines()
    by_cand = {j["candidate_id"]: j for j in map(json.loads, lines)}
    for k, (proposer, want, want_stage, want_reason) in cands.items():
        j = by_cand.get(k)
        check(j is not None, "export lacks %s (candidate %d)" % (proposer, k))
        check(j["outcome"] == want and j["stage"] == want_stage and
              want_reason in j["reason"] and j["proposer"] == proposer,
              "export of %s: %r" % (proposer, {x: j.get(x) for x in (
                  "outcome", "stage", "reason", "proposer")}))

    steady()
    check(w.pid == pid, "worker pid changed")
    c.log("worker %s still pid %d, id %d" % (WORKER, pid, wid))


if __name__ == "__main__":
    kfe2e.run("campaign_failures", body, time_limit=240)
