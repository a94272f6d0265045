#!/bin/sh
# Red team 2026-12-02 (poisoned strings): every command, from a checkout
# with build/ built.  Run from this folder.  Scratch goes to /tmp/rt-0202.
# Each script starts its own private PostgreSQL, coordinator and one
# worker (tests/e2e/kfe2e.py), runs one campaign at a time, and stops
# them all at the end.  Torch: Debian's python3-torch (KF_PYTHON).
#
# (During this session build/ was being relinked by another engineer, so
# the runs used a copy: cp build/kf build/kf-coordinator build/kf-worker
# build/kf-harness build/kf-harness-runner /tmp/rt-0202/bin/ and
# KF_BIN_DIR=/tmp/rt-0202/bin.  Either works.)
set -e
BIN=${KF_BIN_DIR:-$(cd ../../.. && pwd)/build}
export KF_PYTHON=${KF_PYTHON:-/usr/bin/python3}

# H1-H3: PyTorch exports (kf campaign best / export --format gpumode|kernelbench)
# that do not import or do not run, although the same kernel was verified ok.
KF_BIN_DIR=$BIN python3 export_fidelity.py leading_zero underscore inf future
# H4: a problem's torch init (bool / {"int": ...}) in the gpumode adapter
KF_BIN_DIR=$BIN python3 export_fidelity.py init_bool init_bigint
# H5: a C campaign exported with --problem DIR of the same name, another spec
KF_BIN_DIR=$BIN python3 c_export_spec.py
# Held: a worker's device class with quotes/backslashes vs /metrics and kf status
KF_BIN_DIR=$BIN python3 metrics_label.py
