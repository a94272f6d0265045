# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_poison.py -- poisoned candidates cost nobody else's
results.

What once happened: a candidate declaring an extern symbol whose name is
not UTF-8 made the link check quote those bytes in its reason, PostgreSQL
refused the text, and the whole report batch -- other workers' results
included -- failed; workers kept their results and kept leasing, and
correctly computed checksum tasks ended "failed (lease expired after 3
attempts)" with no result, while the poison's own outcome was never
stored.

Here PostgreSQL + coordinator + 3 workers (2 slots each, checksum and
eval) run 1,000 checksum tasks while a softmax campaign gets poisoned
proposals through `kf campaign propose`:
  - an extern symbol whose name is not UTF-8 (asm label "\\xff\\xfe_evil"),
  - a valid 64-byte UTF-8 name that the link check's '%.64s' cuts in the
    middle of its last character,
  - a NUL inside a symbol name (asm label "evil\\0tail"),
  - a compile error echoing a 1 MB identifier,
and a proposal FILE holding a NUL byte, which `kf campaign propose` must
refuse naming the byte instead of sending it cut short.

Checked through psql: every checksum task ends done with exactly one
final, correct result; every poison evaluation ends done with its stored
outcome (link_rejected, compile_error), a reason that is valid UTF-8 with
the bad bytes escaped, at most 16 KiB, and a stored EvalResult whose
stage reasons decode as UTF-8; no task was failed by a refused report;
the campaign ends only after every proposal was evaluated; every process
stayed up.

Then `kf campaign propose` right after `kf campaign submit` of a second
campaign whose budget the first one's stored results meet: the proposal
is either evaluated before that campaign ends or refused because it has
ended, never accepted and dropped.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

N_TASKS = 1000
WORKERS = ("w-p1", "w-p2", "w-p3")
REASON_MAX = 16384  # common/text.h KF_TEXT_REASON_MAX

BAD_SYMBOL = r"""
#include "kf_candidate.h"
/* an extern symbol whose name is not UTF-8 */
extern int evil_import(void) __asm__("\xff\xfe_evil");
int kf_launch(const kf_args *a) {
  (void)a;
  return evil_import();
}
"""

CUT_NAME = "a" * 63 + "\u00e9"  # 65 bytes: '%.64s' cuts the 'é' in half
CUT_SYMBOL = """
#include "kf_candidate.h"
/* a valid UTF-8 name that a '%%.64s' cuts mid-character */
extern int %s(void);
int kf_launch(const kf_args *a) {
  (void)a;
  return %s();
}
""" % (CUT_NAME, CUT_NAME)

NUL_SYMBOL = r"""
#include "kf_candidate.h"
/* a NUL inside a symbol name */
extern int evil_import(void) __asm__("evil\0tail");
int kf_launch(const kf_args *a) {
  (void)a;
  return evil_import();
}
"""

HUGE_IDENT = "\u00e9" * 500000  # 1 MB of two-byte characters
HUGE_REASON = """
#include "kf_candidate.h"
/* a compile error that echoes a 1 MB identifier */
int kf_launch(const kf_args *a) {
  (void)a;
  return %s;
}
""" % HUGE_IDENT

# (proposer, source, outcome, stage, what the stored reason must hold)
POISON = [
    ("e2e.badsym", BAD_SYMBOL, "link_rejected", "link",
     "calls '\\xff\\xfe_evil'"),
    ("e2e.cutsym", CUT_SYMBOL, "link_rejected", "link",
     "calls '" + "a" * 63 + "\\xc3'"),
    ("e2e.nulsym", NUL_SYMBOL, "link_rejected", "link", "calls 'evil'"),
    ("e2e.huge", HUGE_REASON, "compile_error", "compile",
     "each undeclared identifier"),
]


def propose(c, cid, proposer, source):
    path = os.path.join(c.dir, "proposal-%s.c" % proposer)
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    out = c.kf("campaign", "propose", str(cid), path, "--proposer", proposer,
               "--coordinator", c.target, "--json")
    r = json.loads(out)
    check(r["campaign_id"] == cid and not r["duplicate"],
          "proposing %s to campaign %d: %r" % (proposer, cid, r))
    return int(r["candidate_id"])


def propose_nul_file(c, cid):
    """A file with a NUL byte: refused by the CLI, naming the byte."""
    path = os.path.join(c.dir, "proposal-nul.c")
    with open(path, "wb") as f:
        f.write(b"int kf_launch(void) { return 0; }\n/* \0 */\n")
    r = subprocess.run([c.path("kf"), "campaign", "propose", str(cid), path,
                        "--coordinator", c.target],
                       env=c.env, capture_output=True, timeout=60)
    err = r.stderr.decode(errors="replace")
    check(r.returncode == 2, "kf campaign propose of a file with a NUL "
          "exited %d: %s" % (r.returncode, err))
    check("contains a NUL byte (byte 37)" in err,
          "kf campaign propose of a file with a NUL said: %r" % err)
    c.log("a proposal file with a NUL refused: %s" % err.strip())


def body(c):
    c.start_pg()
    c.start_coordinator()
    workers = [c.start_worker(n, slots=2) for n in WORKERS]
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 3,
                     60, "3 workers registered")
    watch = [c.coord] + workers
    cid = kfcampaign.submit(c, kfcampaign.problem_dir("softmax"), evals=4,
                            minutes=10, population=4, seed=3)
    ids = c.submit(N_TASKS, sleep_ms=20, prefix="innocent")
    cands = {}
    for proposer, src, outcome, stage, want in POISON:
        cands[propose(c, cid, proposer, src)] = (proposer, outcome, stage,
                                                 want)
    c.log("proposed %d poison candidates: %r" % (len(cands), cands.keys()))
    propose_nul_file(c, cid)
    n_cands = c.count("SELECT count(*) FROM candidates WHERE campaign_id = "
                      "%d AND proposer <> 'evolution'" % cid)
    check(n_cands == len(POISON), "%d proposals stored, want %d"
          % (n_cands, len(POISON)))

    # Every innocent task ends done; none fails (not even by expiry).
    idlist = ",".join(map(str, ids))

    def innocent_done():
        for p in watch:
            check(p.alive(), "%s (pid %d) died: exit %s"
                  % (p.name, p.pid, p.popen.returncode))
        st = dict((r[0], int(r[1])) for r in c.psql(
            "SELECT state, count(*) FROM tasks WHERE id IN (%s) GROUP BY 1"
            % idlist))
        check(st.get("failed", 0) == 0, "innocent tasks failed: %r; e.g. %r"
              % (st, c.psql("SELECT id, last_error FROM tasks WHERE id IN "
                            "(%s) AND state = 'failed' LIMIT 3" % idlist)))
        return st.get("done", 0) == N_TASKS and st
    kfe2e.wait_until(innocent_done, 300, "%d innocent tasks done" % N_TASKS,
                     interval=0.5)
    c.check_exactly_once(ids)

    # Every poison evaluation ends with its stored outcome.
    candlist = ",".join(map(str, cands))

    def evaluated():
        for p in watch:
            check(p.alive(), "%s died" % p.name)
        return c.count("SELECT count(*) FROM evaluations WHERE candidate_id "
                       "IN (%s)" % candlist) == len(cands)
    kfe2e.wait_until(evaluated, 300, "every poison candidate evaluated",
                     interval=0.5)
    for cand, (proposer, outcome, stage, want) in cands.items():
        rows = c.psql(
            "SELECT e.outcome, e.stage, t.state, length(e.reason),"
            " octet_length(e.reason), encode(e.result, 'hex'),"
            " strpos(e.reason, %s) > 0 FROM evaluations e JOIN tasks t ON"
            " t.id = e.task_id WHERE e.candidate_id = %d"
            % (sql_text(want), cand))
        check(len(rows) == 1, "%s: %d evaluations" % (proposer, len(rows)))
        got, gstage, tstate, nchars, nbytes, hexres, has = rows[0]
        check(got == outcome and gstage == stage and tstate == "done",
              "%s: outcome %s stage %s task %s, want %s/%s/done (reason %r)"
              % (proposer, got, gstage, tstate, outcome, stage,
                 c.scalar("SELECT replace(left(reason, 300), E'\\n', ' ') FROM "
                          "evaluations WHERE candidate_id = %d" % cand)))
        check(has == "t", "%s: stored reason lacks %r: %r" % (
            proposer, want, c.scalar("SELECT replace(left(reason, 300),"
                                     " E'\\n', ' ') FROM evaluations WHERE"
                                     " candidate_id = %d" % cand)))
        check(0 < int(nbytes) <= REASON_MAX, "%s: reason of %s bytes"
              % (proposer, nbytes))
        stages = kfcampaign.pb_fields(bytes.fromhex(hexres)).get(2, [])
        check(stages, "%s: stored EvalResult has no stages" % proposer)
        for raw in stages:
            f = kfcampaign.pb_fields(raw)
            for b in f.get(1, []) + f.get(3, []):
                try:
                    b.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise kfe2e.TestFailure(
                        "%s: stored EvalResult holds text that is not "
                        "UTF-8: %s" % (proposer, e))
                check(b"\x1b" not in b and len(b) <= REASON_MAX,
                      "%s: stored stage text not sanitized" % proposer)
        c.log("%s: %s at %s, reason of %s bytes" % (proposer, got, gstage,
                                                    nbytes))
    refused = c.count("SELECT count(*) FROM tasks WHERE last_error LIKE "
                      "'result of attempt % refused:%'")
    check(refused == 0, "%d tasks failed by a refused report" % refused)

    # The campaign ends only after its proposals were evaluated.
    s = kfcampaign.wait_done(c, cid, 300, watch=watch)
    check(s == "done", "campaign ended %s" % s)

    late_proposal(c, cid, watch)
    for p in watch:
        check(p.alive(), "%s died" % p.name)
    for p in workers + [c.coord]:
        rc = p.terminate()
        check(rc == 0, "%s exited %s on SIGTERM" % (p.name, rc))


LATE = r"""
#include "kf_candidate.h"
/* proposed right after submit; fails to compile, which is quick */
int kf_launch(const kf_args *a) { return a->nope; }
"""


def late_proposal(c, first, watch):
    """`kf campaign propose` right after `kf campaign submit` of a campaign
    whose whole budget is met by the first campaign's stored results (same
    problem and seed: its first step reuses them, and nothing is left to
    run).  Either the proposal is accepted and then evaluated before the
    campaign ends, or it is refused because the campaign has ended --
    never accepted and dropped."""
    cid = kfcampaign.submit(c, kfcampaign.problem_dir("softmax"), evals=2,
                            minutes=10, population=4, seed=3)
    path = os.path.join(c.dir, "proposal-late.c")
    with open(path, "w") as f:
        f.write(LATE)
    r = subprocess.run([c.path("kf"), "campaign", "propose", str(cid), path,
                        "--proposer", "e2e.late", "--coordinator", c.target, "--json"], env=c.env,
                       capture_output=True, timeout=60)
    err = r.stderr.decode(errors="replace")
    if r.returncode != 0:
        check(r.returncode == 2 and ("campaign %d has ended (" % cid) in err,
              "late proposal: exit %d: %s" % (r.returncode, err))
        c.log("late proposal refused: %s" % err.strip())
        check(kfcampaign.state(c, cid) != "running",
              "refused as ended, but campaign %d runs" % cid)
        return
    cand = int(json.loads(r.stdout)["candidate_id"])
    c.log("late proposal accepted as candidate %d" % cand)
    s = kfcampaign.wait_done(c, cid, 300, watch=watch)
    check(s == "done", "campaign %d ended %s" % (cid, s))
    rows = c.psql("SELECT e.outcome, e.created_at <= k.finished_at FROM"
                  " evaluations e JOIN campaigns k ON k.id = e.campaign_id"
                  " WHERE e.candidate_id = %d AND e.campaign_id = %d"
                  % (cand, cid))
    check(rows, "campaign %d ended (%s) without evaluating the proposal it"
          " accepted" % (cid, c.scalar("SELECT stop_reason FROM campaigns"
                                       " WHERE id = %d" % cid)))
    check(rows[0] == ["compile_error", "t"],
          "late proposal's evaluation: %r" % rows)
    reused = c.count("SELECT count(*) FROM evaluations WHERE campaign_id = %d"
                     " AND reused_from IS NOT NULL" % cid)
    c.log("campaign %d: %d reused evaluations, the late proposal evaluated"
          " before it ended" % (cid, reused))


def sql_text(s):
    """s as a SQL string literal (E'' with escapes)."""
    return "E'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


if __name__ == "__main__":
    kfe2e.run("poison", body, time_limit=720)
