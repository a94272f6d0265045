# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_slurm.py -- infra/slurm/kf-worker.sbatch on a real Slurm.

A single-node Slurm (munged, slurmctld, slurmd from Debian; kfslurm.py)
beside a local PostgreSQL and kf-coordinator.  A worker credential is
created with `kf token create` and handed over as KF_TOKEN_FILE (never in
argv); `sbatch --ntasks-per-node=2 infra/slurm/kf-worker.sbatch` starts
the workers with srun.  Shown: exactly 2 CPU workers register, named by
the script after the node, the job and their Slurm local id; a CPU
campaign runs to completion with evaluations from both; scancel stops
them (each logs its clean stop in the job's output) and the job leaves
the queue.  Every daemon and job process is gone afterwards, also when
the test fails (kfslurm.Slurm.close).  The GPU branch (one task per GPU,
--device cuda:N) runs too, with KF_GPUS_PER_NODE=2 and, since there is no
GPU here, a recorder of its arguments in kf-worker's place.  Exit 77
(skip) when Slurm, munge or root is missing, saying which.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
import kfslurm  # noqa: E402
from kfe2e import check  # noqa: E402

EVALS = 10


def check_gpu_branch(c, s, script, env):
    """The script's GPU branch, as far as a machine without GPUs shows it:
    with KF_GPUS_PER_NODE=2 (no GRES here) one srun task per GPU, task N
    given --device cuda:N, its own name and metrics port.  A real
    kf-worker would refuse cuda:N without a GPU, so a recorder stands in
    its place and writes the arguments it was started with."""
    rec = os.path.join(c.dir, "gpu-args")
    os.makedirs(rec)
    stub = os.path.join(c.dir, "record-args")
    with open(stub, "w") as f:
        f.write('#!/bin/sh\nprintf "%%s\\n" "$@" > "%s/task-$SLURM_LOCALID"\n'
                % rec)
    os.chmod(stub, 0o755)
    genv = dict(env, KF_WORKER=stub, KF_GPUS_PER_NODE="2",
                KF_METRICS_PORT_BASE="19400")
    out = os.path.join(c.dir, "slurm-gpu-%j.out")
    job = s.sbatch(["--nodes=1", "--ntasks-per-node=2", "--cpus-per-task=1",
                    "--output=" + out, script], genv)
    kfe2e.wait_until(lambda: s.job_state(job) == "", 90,
                     "the GPU-branch job %d to end" % job)
    text = open(out.replace("%j", str(job)), errors="replace").read()
    check("1 node(s) x 2 GPU worker(s)" in text, "job %d printed %r"
          % (job, text[-1000:]))
    got = sorted(os.listdir(rec))
    check(got == ["task-0", "task-1"], "tasks started: %r" % got)
    for i in (0, 1):
        args = open(os.path.join(rec, "task-%d" % i)).read().split("\n")
        for want in (["--device", "cuda:%d" % i],
                     ["--name", "kf-%s-%d-%d" % (s.node, job, i)],
                     ["--metrics-listen", "127.0.0.1:%d" % (19400 + i)],
                     ["--coordinator", c.target], ["--slots", "1"]):
            check(any(args[k:k + 2] == want for k in range(len(args))),
                  "task %d lacks %r: %r" % (i, want, args))
        check(not any("token" in a.lower() and a != "--token-file"
                      for a in args), "a token in argv: %r" % args)
    c.log("GPU branch: 2 tasks, --device cuda:0 and cuda:1, own names and "
          "metrics ports")


def body(c):
    src = kfcampaign.source_dir()
    script = os.path.join(src, "infra", "slurm", "kf-worker.sbatch")
    check(os.path.isfile(script), "no %s" % script)
    sc = shutil.which("shellcheck")
    if sc:
        r = subprocess.run([sc, script], capture_output=True, timeout=120)
        check(r.returncode == 0, "shellcheck %s:\n%s" % (
            script, r.stdout.decode(errors="replace")))
        c.log("shellcheck: clean")
    else:
        c.log("shellcheck not installed: the script was not linted")
    c.start_pg()
    c.start_coordinator()
    tokfile = os.path.join(c.dir, "slurm-worker.token")
    c.kf("token", "create", "--db", c.conninfo, "--role", "worker",
         "--name", "slurm", "--out", tokfile)
    check(oct(os.stat(tokfile).st_mode & 0o777) == "0o600",
          "token file mode %o" % os.stat(tokfile).st_mode)

    s = kfslurm.Slurm(c.dir, c.log)
    try:
        s.start(cpus=2)
        # The test's environment (ASAN_OPTIONS as the other e2e tests set
        # it), this cluster's SLURM_CONF; the file is the credential.
        env = dict(c.env, SLURM_CONF=s.conf, PATH=s.env["PATH"])
        env.pop("KF_TOKEN", None)
        env.update(KF_COORDINATOR=c.target, KF_TOKEN_FILE=tokfile,
                   KF_WORKER=c.path("kf-worker"),
                   KF_WORKER_ARGS="--slots 1 --lease-wait-ms 2000")
        # The script refuses to start without a coordinator.
        bad = dict(env)
        bad.pop("KF_COORDINATOR")
        out = os.path.join(c.dir, "slurm-bad.out")
        job0 = s.sbatch(["--nodes=1", "--ntasks-per-node=1",
                         "--output=" + out, script], bad)
        kfe2e.wait_until(lambda: s.job_state(job0) == "", 60,
                         "the job without KF_COORDINATOR to end")
        text = open(out, errors="replace").read()
        check("set KF_COORDINATOR" in text, "job %d printed %r" % (job0, text))

        out = os.path.join(c.dir, "slurm-%j.out")
        job = s.sbatch(["--nodes=1", "--ntasks-per-node=2",
                        "--cpus-per-task=1", "--output=" + out, script], env)
        out = out.replace("%j", str(job))

        def two():
            st = s.job_state(job)
            check(st in ("PENDING", "CONFIGURING", "RUNNING"),
                  "job %d is %r: %s" % (job, st, open(out, errors="replace")
                                        .read()[-2000:] if os.path.exists(out)
                                        else s.tail("slurmd.log")))
            rows = c.psql("SELECT id, name FROM workers ORDER BY id")
            return len(rows) >= 2 and rows
        rows = kfe2e.wait_until(two, 90, "2 workers from Slurm", interval=0.5)
        check(len(rows) == 2, "%d workers registered: %r" % (len(rows), rows))
        names = sorted(r[1] for r in rows)
        want = ["kf-%s-%d-%d" % (s.node, job, i) for i in (0, 1)]
        check(names == want, "worker names %r, expected %r" % (names, want))
        check(s.job_state(job) == "RUNNING", "job %d is %r"
              % (job, s.job_state(job)))
        c.log("Slurm job %d runs workers %r" % (job, names))

        cid = kfcampaign.submit(c, kfcampaign.problem_dir(), evals=EVALS)
        st = kfcampaign.wait_done(c, cid, 150, watch=[c.coord])
        check(st == "done", "campaign %d ended %r" % (cid, st))
        kfcampaign.check_every_task_once(c, cid)
        kfcampaign.check_verified_faster(c, cid)
        per = c.psql("SELECT w.name, count(*) FROM evaluations e JOIN "
                     "workers w ON w.id = e.worker_id WHERE e.campaign_id = "
                     "%d GROUP BY 1 ORDER BY 1" % cid)
        c.log("evaluations per worker: %r" % per)
        check(len(per) == 2 and all(int(n) > 0 for _, n in per),
              "not both Slurm workers evaluated: %r" % per)
        check(s.job_state(job) == "RUNNING", "job %d stopped during the "
              "campaign" % job)

        s.run(["scancel", str(job)])
        kfe2e.wait_until(lambda: s.job_state(job) == "", 90,
                         "job %d to leave the queue" % job)
        text = open(out, errors="replace").read()
        stops = re.findall(r"stopped after \d+ tasks", text)
        check(len(stops) == 2, "the job's output shows %d clean worker stops"
              " (2 expected):\n%s" % (len(stops), text[-3000:]))
        kfe2e.wait_until(lambda: not s.ours(job), 60,
                         "the processes of job %d to exit" % job)
        c.log("scancel: both workers stopped cleanly, job %d gone" % job)
        check_gpu_branch(c, s, script, env)
    finally:
        s.close()
    check(not s.ours(), "processes of the test's Slurm outlived it: %r"
          % s.ours())


if __name__ == "__main__":
    why = kfslurm.missing()
    if why:
        print("test_slurm: SKIPPED: %s" % why)
        sys.exit(77)
    kfe2e.run("slurm", body, time_limit=400)
