# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/kfslurm.py -- a real single-node Slurm cluster for a test.

Stdlib only.  Slurm(dir) writes a munge key and a slurm.conf into a fresh
directory (every daemon on 127.0.0.1, the two Slurm ports picked free,
state, spool, pid and log files all inside that directory), then starts
munged, slurmctld and slurmd from Debian's munge and slurm-wlm in the
foreground as children of the test.  The Slurm commands find that
cluster through SLURM_CONF (Slurm.env).

Cleanup (close(), whatever happened): scancel every job of this cluster,
wait for them to leave, stop slurmd, slurmctld and munged (SIGTERM, then
SIGKILL), and finally SIGKILL any process still carrying this cluster's
SLURM_CONF in its environment -- job steps (slurmstepd) and what they
started -- so nothing of it outlives the test.  Only processes started
through this cluster carry that value.

Needs root (slurmd launches jobs as their users) and the binaries;
missing() says what is missing, for the test to skip with that reason.
"""
import os
import shutil
import signal
import socket
import subprocess
import time

import kfe2e
from kfe2e import TestFailure, check

BINARIES = ("munged", "munge", "slurmctld", "slurmd", "slurmstepd", "sbatch",
            "squeue", "scancel", "sinfo")


def missing():
    """Why a Slurm cluster cannot run here, or None."""
    paths = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    gone = [b for b in BINARIES if not shutil.which(b, path=paths)]
    if gone:
        return ("not installed: %s (Debian packages slurm-wlm and munge; "
                "scripts/setup installs them)" % " ".join(gone))
    if os.geteuid() != 0:
        return "slurmd must run as root to launch jobs"
    return None


class Slurm:
    def __init__(self, parent_dir, log):
        self.dir = os.path.join(parent_dir, "slurm")
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o700)
        self.log = log
        self.procs = []
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.env["PATH"] = self.env.get("PATH", "") + ":/usr/sbin:/sbin"
        self.node = socket.gethostname().split(".")[0]
        self.jobs = []

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def _start(self, name, argv):
        p = kfe2e.Proc(name, argv, self.path(name + ".out"), self.env)
        self.procs.append(p)
        return p

    def start(self, cpus=2):
        mdir = self.path("munge")
        os.makedirs(mdir)
        os.chmod(mdir, 0o700)
        key = os.path.join(mdir, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.sock = os.path.join(mdir, "munge.sock")
        munged = self._start("munged", [
            shutil.which("munged", path=self.env["PATH"]), "--foreground",
            "--force", "--socket=" + self.sock, "--key-file=" + key,
            "--log-file=" + self.path("munged.log"),
            "--pid-file=" + os.path.join(mdir, "munged.pid"),
            "--seed-file=" + os.path.join(mdir, "munged.seed")])
        kfe2e.wait_until(lambda: (check(munged.alive(), "munged exited"),
                                  os.path.exists(self.sock))[1],
                         30, "munged's socket")
        for d in ("state", "spool"):
            os.makedirs(self.path(d))
        self.ctld_port, self.slurmd_port = kfe2e.free_port(), kfe2e.free_port()
        while self.slurmd_port == self.ctld_port:
            self.slurmd_port = kfe2e.free_port()
        with open(self.conf, "w") as f:
            f.write(CONF % dict(dir=self.dir, node=self.node, cpus=cpus,
                                sock=self.sock, ctld=self.ctld_port,
                                slurmd=self.slurmd_port))
        self.log("slurm.conf: node %s, %d CPUs, ports %d/%d"
                 % (self.node, cpus, self.ctld_port, self.slurmd_port))
        sbin = self.env["PATH"]
        ctld = self._start("slurmctld", [shutil.which("slurmctld", path=sbin),
                                         "-D", "-f", self.conf])
        self.wait_cmd_ok(["sinfo", "-h"], "slurmctld to answer", [ctld])
        slurmd = self._start("slurmd", [shutil.which("slurmd", path=sbin),
                                        "-D", "-f", self.conf, "-N",
                                        self.node])

        def idle():
            out = self.run(["sinfo", "-h", "-N", "-o", "%N %t"],
                           check_rc=False)
            check(slurmd.alive(), "slurmd exited: %s"
                  % self.tail("slurmd.log"))
            return ("idle" in out or "mix" in out or "alloc" in out) and out
        st = kfe2e.wait_until(idle, 60, "the Slurm node to come up idle",
                              interval=0.5)
        self.log("slurm up: %s" % st.strip())
        self.daemons = (ctld, slurmd)

    def wait_cmd_ok(self, argv, what, watch=()):
        def ok():
            for p in watch:
                check(p.alive(), "%s exited: %s" % (p.name,
                                                    self.tail(p.name + ".log")))
            return self.run(argv, check_rc=False, want_rc=True) == 0
        kfe2e.wait_until(ok, 60, what, interval=0.5)

    def run(self, argv, env=None, check_rc=True, want_rc=False, timeout=60):
        r = subprocess.run(argv, env=env or self.env, capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=timeout)
        if want_rc:
            return r.returncode
        if check_rc and r.returncode != 0:
            raise TestFailure("%s exited %d: %s" % (
                " ".join(argv), r.returncode, r.stderr.decode(errors="replace")))
        return r.stdout.decode()

    def tail(self, name, n=20):
        try:
            with open(self.path(name), errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return "(no %s)" % name

    def sbatch(self, args, env):
        out = self.run(["sbatch", "--parsable"] + list(args), env=env).strip()
        job = int(out.split(";")[0])
        self.jobs.append(job)
        self.log("sbatch: job %d" % job)
        return job

    def job_state(self, job):
        """squeue's state of the job, "" once it left the queue."""
        return self.run(["squeue", "-h", "-j", str(job), "-o", "%T"],
                        check_rc=False).strip()

    def ours(self, job=None):
        """Pids of processes whose environment carries our SLURM_CONF; with
        job, only that job's: its step daemons (slurmstepd) and the
        processes that carry its SLURM_JOB_ID (not slurmctld's helper
        slurmscriptd, which lives as long as slurmctld)."""
        mark = ("SLURM_CONF=%s" % self.conf).encode()
        jmark = ("SLURM_JOB_ID=%d" % job).encode() if job else None
        me = os.getpid()
        pids = []
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == me:
                continue
            try:
                with open("/proc/%s/environ" % d, "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            if mark not in env:
                continue
            if jmark is not None and jmark not in env:
                try:
                    with open("/proc/%s/comm" % d) as f:
                        if f.read().strip() != "slurmstepd":
                            continue
                except OSError:
                    continue
            pids.append(int(d))
        return pids

    def close(self):
        for job in self.jobs:
            try:
                self.run(["scancel", str(job)], check_rc=False, timeout=30)
            except Exception as e:  # keep cleaning up
                print("scancel %d: %s" % (job, e))
        deadline = time.monotonic() + 30 * kfe2e.SLACK
        while self.jobs and time.monotonic() < deadline:
            try:
                if not any(self.job_state(j) for j in self.jobs):
                    break
            except Exception:
                break
            time.sleep(0.5)
        for p in reversed(self.procs):
            try:
                p.terminate(grace=10)
            except Exception as e:
                print("stopping %s: %s" % (p.name, e))
        left = [p for p in self.ours() if p not in
                [q.pid for q in self.procs]]
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if left:
            self.log("killed %d leftover process(es) of this Slurm: %r"
                     % (len(left), left))


CONF = """\
# written by tests/e2e/kfslurm.py: a one-node cluster on 127.0.0.1
ClusterName=kftest
SlurmctldHost=%(node)s(127.0.0.1)
SlurmctldPort=%(ctld)d
SlurmdPort=%(slurmd)d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%(sock)s
CredType=cred/munge
StateSaveLocation=%(dir)s/state
SlurmdSpoolDir=%(dir)s/spool
SlurmctldPidFile=%(dir)s/slurmctld.pid
SlurmdPidFile=%(dir)s/slurmd.pid
SlurmctldLogFile=%(dir)s/slurmctld.log
SlurmdLogFile=%(dir)s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmctldTimeout=60
SlurmdTimeout=60
InactiveLimit=0
KillWait=15
NodeName=%(node)s NodeAddr=127.0.0.1 CPUs=%(cpus)d State=UNKNOWN
PartitionName=kf Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
