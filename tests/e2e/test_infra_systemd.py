# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_infra_systemd.py -- the systemd units of infra/systemd
pass `systemd-analyze verify`, and broken copies do not.

The units name /usr/local/bin/...; verify checks that ExecStart's program
exists, so the copies verified here point at this build tree's programs
(the only change).  Verified: kf-coordinator.service, the template
kf-worker@.service and its instances @cpu and @cuda:0 (file name escaped).  Any warning
systemd-analyze prints counts as a failure (it exits 0 on a misspelt
setting, with a warning).  Broken copies -- a misspelt section, a bad
Type=, a bad time span, a missing program -- must each produce output or
a non-zero exit.  Then what verify cannot see: the token is loaded as a
credential and passed with --token-file, never put in argv; the
coordinator runs as a dynamic user with no capabilities; the worker is a
template on --device=%I.

Exit 77 (skip) when systemd-analyze is missing.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kfe2e import TestFailure, check  # noqa: E402

SRC = os.environ.get("KF_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
UNITS = os.path.join(SRC, "infra", "systemd")


def verify(path):
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", path],
                       capture_output=True, timeout=120,
                       env=dict(os.environ, SYSTEMD_LOG_COLOR="0"))
    out = (r.stdout + r.stderr).decode(errors="replace").strip()
    return r.returncode, out


def copy_units(tmp, bindir):
    for f in os.listdir(UNITS):
        if f.endswith(".service"):
            text = open(os.path.join(UNITS, f)).read()
            check("/usr/local/bin/" in text, "%s names no /usr/local/bin "
                  "program" % f)
            with open(os.path.join(tmp, f), "w") as o:
                o.write(text.replace("/usr/local/bin/", bindir + "/"))


BROKEN = [
    ("misspelt section", "kf-coordinator.service", "[Service]", "[Servce]"),
    ("bad Type=", "kf-coordinator.service", "Type=exec", "Type=exce"),
    ("bad time span", "kf-worker@.service", "RestartSec=5", "RestartSec=five"),
    ("missing program", "kf-coordinator.service", "kf-coordinator --token",
     "kf-coordinatr --token"),
]


def main():
    if not shutil.which("systemd-analyze"):
        print("test_infra_systemd: SKIPPED: no systemd-analyze (Debian "
              "package systemd)")
        return 77
    bindir = os.environ.get("KF_BIN_DIR")
    check(bindir and os.path.isfile(os.path.join(bindir, "kf-worker")),
          "KF_BIN_DIR must hold kf-coordinator and kf-worker")
    tmp = tempfile.mkdtemp(prefix="kfunits.")
    try:
        copy_units(tmp, bindir)
        shutil.copyfile(os.path.join(tmp, "kf-worker@.service"),
                        os.path.join(tmp, "kf-worker@cpu.service"))
        # The instance cuda:0 (%I), spelt escaped: systemd-analyze 252
        # verify cannot open a unit file whose path has a ':' ("Couldn't
        # process aliases"); systemctl takes kf-worker@cuda:0 as it is.
        shutil.copyfile(os.path.join(tmp, "kf-worker@.service"),
                        os.path.join(tmp, "kf-worker@cuda\\x3a0.service"))
        for u in ("kf-coordinator.service", "kf-worker@.service",
                  "kf-worker@cpu.service", "kf-worker@cuda\\x3a0.service"):
            rc, out = verify(os.path.join(tmp, u))
            check(rc == 0 and not out, "systemd-analyze verify %s: exit %d:"
                  "\n%s" % (u, rc, out))
            print("verified %s" % u, flush=True)
        for what, unit, old, new in BROKEN:
            text = open(os.path.join(tmp, unit)).read()
            check(old in text, "%s: %r not in %s (update the test)"
                  % (what, old, unit))
            bad = os.path.join(tmp, "broken-" + unit.replace("@", "-at-"))
            with open(bad, "w") as f:
                f.write(text.replace(old, new, 1))
            rc, out = verify(bad)
            check(rc != 0 or out, "a copy of %s with a %s verified cleanly"
                  % (unit, what))
            print("refused (%s): %s" % (what, out.splitlines()[0][:160]
                                        if out else "exit %d" % rc),
                  flush=True)
            os.unlink(bad)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    coord = open(os.path.join(UNITS, "kf-coordinator.service")).read()
    worker = open(os.path.join(UNITS, "kf-worker@.service")).read()
    for name, text in (("coordinator", coord), ("worker", worker)):
        check("LoadCredential=token:" in text and
              "--token-file=${CREDENTIALS_DIRECTORY}/token" in text,
              "%s: the token is not a loaded credential" % name)
        check("KF_TOKEN=" not in text, "%s: a token in the unit" % name)
    check("DynamicUser=yes" in coord and "\nCapabilityBoundingSet=\n" in coord,
          "the coordinator is not a dynamic user without capabilities")
    check("--device=%I" in worker, "the worker template does not take its "
          "device from the instance")
    return 0


if __name__ == "__main__":
    try:
        rc = main()
    except TestFailure as e:
        print("infra_systemd: FAIL: %s" % e)
        sys.exit(1)
    if rc == 0:
        print("infra_systemd: PASS")
    sys.exit(rc)
