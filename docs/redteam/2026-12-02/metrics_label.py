#!/usr/bin/env python3
"""Red team 2026-12-02: a worker's device-class name that tries to forge
Prometheus lines in the coordinator's /metrics (label escaping).
  KF_BIN_DIR=/work/main/build python3 metrics_label.py
"""
import os, sys, time, urllib.request
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "e2e"))
import kfe2e  # noqa: E402
import tempfile  # noqa: E402
os.makedirs("/tmp/rt-0202", exist_ok=True)
_mk = tempfile.mkdtemp
tempfile.mkdtemp = lambda prefix="", dir=None: _mk(prefix=prefix, dir="/tmp/rt-0202")

EVIL = 'evil\\" } 1 kf_forged_total{x="1"} 42 \\'


def main(c):
    c.start_pg()
    pf = os.path.join(c.dir, "m.port")
    c.start_coordinator(extra=["--metrics-listen", "127.0.0.1:0",
                               "--metrics-port-file", pf])
    port = kfe2e.wait_until(lambda: os.path.exists(pf) and open(pf).read().strip(), 30, "metrics port")
    w = c.start_worker("w-evil", slots=1, extra=["--device-class", EVIL])
    time.sleep(4)
    kfe2e.check(w.alive(), "worker died")
    c.log("worker registered with device class %r" % EVIL)
    c.log("stored model: %r" % c.psql("SELECT model FROM device_classes")[0:3])
    body = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port.strip(), timeout=10).read().decode()
    lines = [l for l in body.splitlines() if "evil" in l or "forged" in l]
    for l in lines:
        c.log("metrics: " + l)
    forged = [l for l in body.splitlines() if l.startswith("kf_forged")]
    c.log("forged lines at the start of a line: %d" % len(forged))
    out = c.kf("status", "--coordinator", c.target)
    c.log("kf status has ESC or raw newline from the name: %s" % (
        "\x1b" in out or "kf_forged" in out.replace("\\n", "")))


kfe2e.run("rtmetric", main, time_limit=300)
