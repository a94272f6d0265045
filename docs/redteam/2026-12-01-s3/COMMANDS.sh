#!/usr/bin/env bash
# Red team 2026-12-01-s3: reproduces every attempt of README.md, one at a
# time, from a checkout with a built tree (build/kf-harness; the torch rows
# need KF_PYTHON naming a Python with torch, e.g. /usr/bin/python3 with
# Debian's python3-torch).  Run from anywhere; results land in ./results/.
# The two hangs are run under `timeout -s KILL`, which is what ends them.
set -u
cd "$(dirname "$0")/../../.."
D=docs/redteam/2026-12-01-s3
EV=$D/ev.sh
export KF_PYTHON=${KF_PYTHON:-/usr/bin/python3}

# HOLE 1: a forged SETUP reply turns any verdict into infra_error
for m in 0 1 2; do $EV forge_setup_m$m --spec problems/cpu/softmax --source $D/cpu/forge_setup_infra.c --knob MODE=$m; done
# ... also with no write at all: the child's exit code 74 (EXIT_MAP)
$EV exit_map_infra --spec problems/cpu/softmax --source $D/cpu/exit_map_infra.c
# ... and from a hostile problem's reference: every evaluation infra_error
$EV ref_forge --spec $D/problems/softmax_ref_forge --source problems/cpu/softmax/three_pass.c --knob UNROLL=4
# ... and in a showdown the entry is infra_error (keeps its place in the fleet)
python3 $D/showdown.py problems/cpu/softmax problems/cpu/softmax/three_pass.c:UNROLL=4 $D/cpu/forge_setup_infra.c:MODE=2

# HOLE 2: a torn reply hangs the evaluation (no per-call timeout applies)
timeout -s KILL 45 ./build/kf-harness eval-files --spec problems/cpu/softmax --source $D/cpu/torn_reply_hang.c --knob MODE=0 --call-timeout-ms 2000; echo "rc=$? (137: killed by timeout -- hung)"
timeout -s KILL 30 ./build/kf-harness eval-files --spec problems/cpu/softmax --source $D/cpu/torn_reply_hang.c --knob MODE=2 --call-timeout-ms 2000; echo "rc=$? (137: killed by timeout -- hung)"
# ... and a whole showdown (every entry) hangs with it
timeout -s KILL 40 python3 $D/showdown.py problems/cpu/softmax problems/cpu/softmax/three_pass.c:UNROLL=4 $D/cpu/torn_reply_hang.c:MODE=0; echo "rc=$? (137: killed by timeout -- hung)"

# HOLE 3: the alias_out fix bypassed by a lying Tensor.data_ptr (torch CPU)
$EV alias_nolie --spec problems/torch/kb1_relu --source $D/torch/alias_dataptr_relu.py --knob MODE=nolie   # control: refused
for i in 1 2 3; do for m in honest alias; do
  $EV big_${m}_$i --spec $D/problems/relu_big --source $D/torch/alias_dataptr_relu.py --knob MODE=$m
done; done
# the same under --torch-persistent
for m in honest alias nolie; do $EV pbig_$m --torch-persistent --spec $D/problems/relu_big --source $D/torch/alias_dataptr_relu.py --knob MODE=$m; done
for i in 1 2; do for m in honest alias; do
  $EV alias_${m}_$i --spec problems/torch/kb1_relu --source $D/torch/alias_dataptr_relu.py --knob MODE=$m
done; done

# HOLE 4: a slow compile makes the deadline blame the reference (kf-harness eval: eval-files has no --deadline-ms)
python3 $D/evalreq.py problems/cpu/softmax $D/cpu/slow_compile_deadline.c REPS=10 -- --deadline-ms 2050
python3 $D/evalreq.py problems/cpu/softmax problems/cpu/softmax/three_pass.c UNROLL=4 -- --deadline-ms 2050   # control: ok
$EV slowc_nodeadline --spec problems/cpu/softmax --source $D/cpu/slow_compile_deadline.c --knob REPS=10         # control: ok
python3 $D/showdown.py problems/cpu/softmax problems/cpu/softmax/three_pass.c:UNROLL=4 $D/cpu/slow_compile_deadline.c:REPS=10 -- --deadline-ms 2300

# DEFENDED: raw syscalls the run filter must refuse
for n in clone3 vfork io_uring_setup rt_sigaction kill_zygote prlimit64; do $EV sys_$n --spec problems/cpu/softmax --source $D/cpu/sys_$n.c; done

# tolerance edge, FTZ/DAZ, just outside, NaN/-0.0
for m in 0 1 2 3; do $EV tol_edge_ftz_m$m --spec problems/cpu/softmax --source $D/cpu/tol_edge_ftz.c --knob MODE=$m; done

# DEFENDED: the torch analogue of the torn reply
timeout -s KILL 90 $EV torch_torn_m0 --spec problems/torch/kb1_relu --source $D/torch/torn_line.py --knob MODE=0 --call-timeout-ms 3000
timeout -s KILL 90 $EV torch_torn_m1 --spec problems/torch/kb1_relu --source $D/torch/torn_line.py --knob MODE=1 --call-timeout-ms 3000
for m in 0 1 2; do timeout -s KILL 100 $EV torch_long_m$m --spec problems/torch/kb1_relu --source $D/torch/long_line.py --knob MODE=$m --call-timeout-ms 3000; done

# probe (nothing found): the zygote pid on the stack
$EV probe_zpid_w1 --spec problems/cpu/softmax --source $D/cpu/probe_zygote_pid.c

# DEFENDED: kf import of hostile references
T=$(mktemp -d)
(cd "$T" && "$OLDPWD"/build/kf import kernelbench "$OLDPWD"/$D/import/ref_writes_file.py; echo "rc=$?"; ls /tmp/rt3_import_pwned* 2>&1)
(cd "$T" && "$OLDPWD"/build/kf import kernelbench "$OLDPWD"/$D/import/ref_fifo_name.py --name '../../tmp/rt3_escape'; echo "rc=$?")
