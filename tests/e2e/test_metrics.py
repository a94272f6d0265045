# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_metrics.py -- /metrics of the coordinator and workers
during a real campaign.

PostgreSQL + kf-coordinator --metrics-listen + 2 kf-worker
--metrics-listen (port 0, read back from --metrics-port-file).  The pages
are scraped before, during and after a CPU campaign, and every page is
parsed strictly (kfmetrics.parse: HELP/TYPE lines, names, escapes,
duplicate series, histogram buckets cumulative and ending in +Inf ==
_count) and by prometheus_client's parser when installed.  After the
campaign the numbers must agree with the database, read through psql:
tasks by state, leases granted (= attempts started), evaluations per
class, the campaign's best time and speedup per class, workers alive; and
each worker's delivered results and finished tasks with its rows in
`results`.  Also: other paths are 404, POST is 405, the endpoint is off
without the flag, and the parser refuses broken pages (so its checks can
fail).
"""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
import kfmetrics  # noqa: E402
from kfe2e import TestFailure, check  # noqa: E402

EVALS = 12

BROKEN = {
    "sample without TYPE": "# HELP a x\nb 1\n",
    "decreasing buckets": (
        "# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 3\n"
        "h_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 2\n"),
    "+Inf != count": (
        "# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\n"
        "h_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n"),
    "bad escape": "# HELP g x\n# TYPE g gauge\ng{a=\"\\q\"} 1\n",
    "series twice": "# HELP g x\n# TYPE g gauge\ng{a=\"1\"} 1\ng{a=\"1\"} 2\n",
    "negative counter": "# HELP c_total x\n# TYPE c_total counter\nc_total -1\n",
    "not a float": "# HELP g x\n# TYPE g gauge\ng one\n",
}


def check_parser_refuses():
    for what, page in BROKEN.items():
        try:
            kfmetrics.parse(page)
        except TestFailure:
            continue
        raise TestFailure("the parser accepted a page with %s" % what)


def read_port(path):
    def ready():
        try:
            with open(path) as f:
                return int(f.read().strip() or 0)
        except (FileNotFoundError, ValueError):
            return 0
    return kfe2e.wait_until(ready, 60, "metrics port file %s" % path)


def page(port):
    st, ctype, body = kfmetrics.scrape(port)
    check(st == 200, "GET /metrics: HTTP %d: %s" % (st, body[:200]))
    check(ctype.startswith("text/plain") and "version=0.0.4" in ctype,
          "content type %r" % ctype)
    return kfmetrics.parse(body)


COORD_FAMILIES = {
    "kf_leases_granted_total": "counter",
    "kf_lease_calls_total": "counter",
    "kf_lease_latency_seconds": "histogram",
    "kf_reports_accepted_total": "counter",
    "kf_lease_polls_parked": "gauge",
    "kf_coordinator_ops": "gauge",
    "kf_tasks": "gauge",
    "kf_leases_active": "gauge",
    "kf_leases_expired": "gauge",
    "kf_campaigns": "gauge",
    "kf_workers_alive": "gauge",
    "kf_workers_registered": "gauge",
    "kf_evaluations_total": "counter",
    "kf_evaluations_per_minute": "gauge",
    "kf_campaign_evaluations": "gauge",
    "kf_campaign_best_time_seconds": "gauge",
    "kf_campaign_best_speedup": "gauge",
    "kf_metrics_snapshot_age_seconds": "gauge",
}
WORKER_FAMILIES = {
    "kf_worker_info": "gauge",
    "kf_worker_slots": "gauge",
    "kf_worker_slots_busy": "gauge",
    "kf_worker_leases_total": "counter",
    "kf_worker_lease_calls_total": "counter",
    "kf_worker_lease_latency_seconds": "histogram",
    "kf_worker_tasks_total": "counter",
    "kf_worker_task_duration_seconds": "histogram",
    "kf_worker_results_delivered_total": "counter",
    "kf_worker_outbox": "gauge",
}


def check_types(fams, want, who):
    for name, typ in want.items():
        check(name in fams, "%s: no family %s" % (who, name))
        check(fams[name]["type"] == typ, "%s: %s is %s, not %s"
              % (who, name, fams[name]["type"], typ))


def coord_agrees(c, cid, mport):
    """The coordinator's page after the campaign, checked against the
    database; returns a message (not yet) or "" when everything agrees."""
    f = page(mport)
    check_types(f, COORD_FAMILIES, "coordinator")
    if kfmetrics.value(f, "kf_metrics_snapshot_age_seconds") < 0:
        return "no snapshot yet"
    db = c.state_counts()
    for st in ("queued", "leased", "done", "failed"):
        got = kfmetrics.value(f, "kf_tasks", state=st)
        if got != db.get(st, 0):
            return "kf_tasks{state=%s} %r, database %r" % (st, got,
                                                            db.get(st, 0))
    # Every lease this coordinator granted started one attempt.
    attempts = c.count("SELECT coalesce(sum(attempt), 0) FROM tasks")
    got = kfmetrics.value(f, "kf_leases_granted_total")
    check(got == attempts, "kf_leases_granted_total %r, attempts started %r"
          % (got, attempts))
    calls = kfmetrics.value(f, "kf_lease_calls_total", result="tasks")
    hcount = kfmetrics.value(f, "kf_lease_latency_seconds",
                             "kf_lease_latency_seconds_count")
    check(calls == hcount and 0 < hcount <= attempts,
          "lease calls with tasks %r, latency count %r, grants %r"
          % (calls, hcount, attempts))
    accepted = c.count("SELECT count(*) FROM results")
    check(kfmetrics.value(f, "kf_reports_accepted_total") == accepted,
          "kf_reports_accepted_total %r, results rows %r"
          % (kfmetrics.value(f, "kf_reports_accepted_total"), accepted))

    rows = c.psql("SELECT device_class_id, count(*) FROM evaluations WHERE "
                  "reused_from IS NULL GROUP BY 1")
    for dc, n in rows:
        got = kfmetrics.value(f, "kf_evaluations_total", class_id=dc)
        if got != int(n):
            return "kf_evaluations_total{class_id=%s} %r, database %s" % (
                dc, got, n)
    check(kfmetrics.total(f, "kf_evaluations_total") ==
          sum(int(r[1]) for r in rows), "evaluations of unknown classes")
    check(kfmetrics.total(f, "kf_evaluations_per_minute") <=
          kfmetrics.total(f, "kf_evaluations_total"),
          "more evaluations in the last minute than in all")
    alive = kfmetrics.total(f, "kf_workers_alive")
    check(alive == 2, "kf_workers_alive sums to %r, 2 workers run" % alive)
    st = kfcampaign.state(c, cid)
    check(kfmetrics.value(f, "kf_campaigns", state=st) >= 1,
          "kf_campaigns{state=%s} is 0" % st)

    best = c.psql(
        "SELECT device_class_id, count(*), count(*) FILTER (WHERE outcome ="
        " 'ok'), min(time_ns_median) FILTER (WHERE outcome = 'ok' AND "
        "time_ns_median > 0), max(speedup) FILTER (WHERE outcome = 'ok') "
        "FROM evaluations WHERE campaign_id = %d GROUP BY 1" % cid)
    check(best, "campaign %d has no evaluations" % cid)
    for dc, n, nok, tmin, smax in best:
        lab = dict(campaign=cid, class_id=dc)
        check(kfmetrics.value(f, "kf_campaign_evaluations", **lab) == int(n),
              "kf_campaign_evaluations%r != %s" % (lab, n))
        check(kfmetrics.value(f, "kf_campaign_evaluations_ok", **lab)
              == int(nok), "kf_campaign_evaluations_ok%r != %s" % (lab, nok))
        t = kfmetrics.value(f, "kf_campaign_best_time_seconds", **lab)
        check(abs(t - float(tmin) / 1e9) <= 1e-9 * max(1.0, t),
              "best time %r s, database %s ns" % (t, tmin))
        s = kfmetrics.value(f, "kf_campaign_best_speedup", **lab)
        check(abs(s - float(smax)) <= 1e-9 * max(1.0, s),
              "best speedup %r, database %s" % (s, smax))
        check(s > 1, "the campaign found nothing faster (speedup %r)" % s)
    return ""


def c_run(c, argv):
    """Runs one of our programs to its end (they refuse bad settings at
    once); returns the CompletedProcess."""
    import subprocess
    return subprocess.run([c.path(argv[0])] + argv[1:], env=c.env,
                          stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=120)


def body(c):
    check_parser_refuses()
    c.start_pg()
    cpf = os.path.join(c.dir, "coord.mport")
    c.start_coordinator(extra=["--metrics-listen", "127.0.0.1:0",
                               "--metrics-port-file", cpf])
    cport = read_port(cpf)
    c.log("coordinator metrics on port %d" % cport)

    # Loopback only, and the other answers.
    check(kfmetrics.scrape(cport, "/")[0] == 404, "GET / is not 404")
    check(kfmetrics.scrape(cport, "/metrics/x")[0] == 404,
          "GET /metrics/x is not 404")
    check(kfmetrics.scrape(cport, "/metrics", "POST")[0] == 405,
          "POST /metrics is not 405")
    # Slow clients (half a request, then silence) do not hold up a scrape:
    # the endpoint runs on the coordinator's loop, which must not block.
    slow = []
    for _ in range(5):
        so = socket.create_connection(("127.0.0.1", cport), timeout=10)
        so.sendall(b"GET /metr")
        slow.append(so)
    f0 = page(cport)
    for so in slow:
        so.close()
    # Bad settings are refused with a message naming them.
    r = c_run(c, ["kf-worker", "--coordinator", c.target,
                  "--metrics-listen", "127.0.0.1:notaport"])
    check(r.returncode != 0 and b"127.0.0.1:notaport" in r.stdout + r.stderr,
          "kf-worker with a bad --metrics-listen: exit %d, %r"
          % (r.returncode, (r.stdout + r.stderr)[-300:]))
    r = c_run(c, ["kf-coordinator", "--db", c.conninfo,
                  "--metrics-port-file", "/tmp/x"])
    check(r.returncode == 2 and b"--metrics-listen" in r.stderr,
          "kf-coordinator --metrics-port-file alone: exit %d, %r"
          % (r.returncode, r.stderr[-300:]))
    r = c_run(c, ["kf-coordinator", "--db", c.conninfo, "--listen",
                  "127.0.0.1:0", "--metrics-listen", "127.0.0.1:%d" % cport])
    check(r.returncode != 0 and b"cannot listen" in r.stdout + r.stderr,
          "a second coordinator on a metrics port in use: exit %d, %r"
          % (r.returncode, (r.stdout + r.stderr)[-300:]))
    check_types(f0, {k: v for k, v in COORD_FAMILIES.items()
                     if k in ("kf_leases_granted_total",
                              "kf_lease_latency_seconds")}, "coordinator")

    workers, wports = [], {}
    for n in ("w-a", "w-b"):
        pf = os.path.join(c.dir, n + ".mport")
        workers.append(c.start_worker(n, slots=1, extra=[
            "--metrics-listen", "127.0.0.1:0", "--metrics-port-file", pf]))
        wports[n] = read_port(pf)
    # A worker without the flag serves nothing (its default is off).
    plain = c.start_worker("w-plain-check", slots=1,
                           extra=["--lease-wait-ms", "100"])
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 3,
                     30, "3 workers registered")
    plain.terminate()
    c.psql("UPDATE workers SET last_seen = now() - interval '1 hour' "
           "WHERE name = 'w-plain-check'")
    check(not any(l.startswith("kf-worker") and "metrics on" in l
                  for l in open(plain.log_path, errors="replace")),
          "a worker without --metrics-listen served metrics")

    cid = kfcampaign.submit(c, kfcampaign.problem_dir(), evals=EVALS)
    # Scrape while it runs: every page must parse.
    scrapes = 0

    def ended():
        nonlocal scrapes
        page(cport)
        for p in wports.values():
            page(p)
        scrapes += 1
        s = kfcampaign.state(c, cid)
        return s not in ("running", "showdown") and s
    st = kfe2e.wait_progress(ended, lambda: kfcampaign.n_evals(c, cid), 150,
                             "campaign %d to end" % cid)
    check(st == "done", "campaign ended %r" % st)
    c.log("campaign done; %d rounds of scrapes while it ran" % scrapes)
    check(scrapes >= 2, "only %d scrapes during the campaign" % scrapes)

    # The snapshot is refreshed every 2 s while scraped: wait for one
    # taken after the campaign ended.
    kfe2e.wait_until(lambda: coord_agrees(c, cid, cport) == "", 60,
                     "coordinator metrics to agree with the database")
    c.log("coordinator metrics agree with the database")

    granted = 0
    for name, port in wports.items():
        f = page(port)
        check_types(f, WORKER_FAMILIES, name)
        wid = c.worker_ids(name)
        check(len(wid) == 1, "%s registered %r" % (name, wid))
        check(kfmetrics.value(f, "kf_worker_info", worker_id=wid[0],
                              name=name) == 1, "%s: kf_worker_info" % name)
        check(kfmetrics.value(f, "kf_worker_info", worker_id=wid[0],
                              kind="cpu") == 1,
              "%s: kf_worker_info without its class labels" % name)
        rows = c.count("SELECT count(*) FROM results WHERE worker_id = %d"
                       % wid[0])
        got = kfmetrics.value(f, "kf_worker_results_delivered_total")
        check(got == rows, "%s: delivered %r, results rows %r"
              % (name, got, rows))
        done = kfmetrics.total(f, "kf_worker_tasks_total")
        check(done == rows, "%s: tasks finished %r, results rows %r"
              % (name, done, rows))
        evals = c.count("SELECT count(*) FROM evaluations WHERE worker_id ="
                        " %d" % wid[0])
        check(kfmetrics.total(f, "kf_worker_tasks_total", task_kind="eval")
              == evals, "%s: eval tasks %r, evaluations %r" % (
                  name, kfmetrics.total(f, "kf_worker_tasks_total",
                                        task_kind="eval"), evals))
        leased = kfmetrics.value(f, "kf_worker_leases_total")
        check(leased >= rows, "%s: leased %r < results %r"
              % (name, leased, rows))
        hc = kfmetrics.value(f, "kf_worker_task_duration_seconds",
                             "kf_worker_task_duration_seconds_count")
        check(hc == done, "%s: task histogram count %r, tasks %r"
              % (name, hc, done))
        granted += leased
        c.log("%s: %d results, %d evaluations, %d leased"
              % (name, rows, evals, leased))
    f = page(cport)
    # The third worker stopped before any task existed: every grant went
    # to the two scraped workers.
    check(kfmetrics.value(f, "kf_leases_granted_total") == granted,
          "the coordinator granted %r, the workers leased %r"
          % (kfmetrics.value(f, "kf_leases_granted_total"), granted))

    # Only loopback was bound: the port is not open on another address of
    # this host, if it has one.
    try:
        other = socket.gethostbyname(socket.gethostname())
    except OSError:
        other = None
    if other and not other.startswith("127."):
        s = socket.socket()
        s.settimeout(5)
        try:
            refused = s.connect_ex((other, cport)) != 0
        finally:
            s.close()
        check(refused, "metrics port %d answers on %s" % (cport, other))
    for w in workers:
        check(w.alive(), "%s died" % w.name)


if __name__ == "__main__":
    kfe2e.run("metrics", body, time_limit=400)
