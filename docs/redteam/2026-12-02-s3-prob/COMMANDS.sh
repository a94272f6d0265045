#!/bin/sh
# Every command of this session, from this folder.  Binaries copied to /tmp/rt-s3p/bin first:
#   mkdir -p /tmp/rt-s3p/bin && cp /work/main/build/kf* /tmp/rt-s3p/bin/
# ev.sh NAME ARGS runs kf-harness eval-files ARGS -> results/NAME.{json,err}, prints rc | outcome | stage | reason
set -x
export KF_PYTHON=/usr/bin/python3
B=/tmp/rt-s3p/bin; I=/tmp/rt-s3p/imp; H=$(pwd); mkdir -p $I
imp() { rm -rf $I/$1; $B/kf import kernelbench $H/kb/ref_$1.py --out $I/$1 > results/import_$1.out 2>&1; echo rc=$?; cat results/import_$1.out; }
gm()  { rm -rf $I/gm_$1; $B/kf import gpumode $H/gm/$1 --out $I/gm_$1 > results/import_gm_$1.out 2>&1; echo rc=$?; cat results/import_gm_$1.out; }

# H1: Model put in eval mode (BatchNorm, Dropout)
imp batchnorm
./ev.sh bn_identity   --spec $I/batchnorm --source $H/cands/bn_identity.py --stop-after verify     # ok (wrong)
./ev.sh bn_identity_full --spec $I/batchnorm --source $H/cands/bn_identity.py                    # ok, timed
./ev.sh bn_batchstats --spec $I/batchnorm --source $H/cands/bn_batchstats.py --stop-after verify  # wrong_answer (honest)
imp dropout
./ev.sh dropout_none       --spec $I/dropout --source $H/cands/dropout_none.py --stop-after verify       # ok
./ev.sh dropout_honest     --spec $I/dropout --source $H/cands/dropout_honest.py --stop-after verify     # ok
./ev.sh dropout_functional --spec $I/dropout --source $H/cands/dropout_functional.py --stop-after verify # wrong_answer
./ev.sh dropout_eager      --spec $I/dropout --source $I/dropout/eager.py --knob MODE=no_grad --stop-after verify

# H2: random scalar from get_inputs frozen
imp randint_arg
./ev.sh randint_hard73      --spec $I/randint_arg --source $H/cands/randint_hard73.py --stop-after verify
./ev.sh randint_hard73_full --spec $I/randint_arg --source $H/cands/randint_hard73.py

# M1: kf import without a wall-clock limit (a blocking reference)
rm -rf $I/sleep; timeout 150 $B/kf import kernelbench $H/kb/ref_sleep.py --out $I/sleep; echo rc=$?   # 124
ps aux | grep 'runner.py inspect kernelbench .*ref_sleep'   # still there after kf is gone; also after ^C (rc 130)

# M2: non-contiguous generate_input() data
gm noncontig
./ev.sh gm_noncontig_view --spec $I/gm_noncontig --source $H/cands/gm_noncontig_view.py --stop-after verify

# L1: raw escapes
imp escape_raise; cat -v results/import_escape_raise.out
python3 problems/mkspecs.py    # writes problems/c_* (the c_name_esc spec was made by hand in the session: name with ESC]0;...BEL)
./ev.sh c_name_esc --spec $H/problems/c_name_esc --source $H/problems/c_name_esc/accum.c --knob UNROLL=4 --stop-after verify; cat -v results/c_name_esc.err
$B/kf run $H/problems/c_name_esc --evals 1 --data /tmp/rt-s3p/data2 2>&1 | cat -v

# handled well
for n in nested_out listarg; do imp $n; done
for n in dict_data int_k nested multi_out; do gm $n; done
./ev.sh gm_multi_out_honest --spec $I/gm_multi_out --source $H/cands/gm_multi_out_honest.py --stop-after verify
for n in c_bigfloat_size c_bool_size c_empty_check c_empty_dists c_float_size c_flops_overflow c_huge_8inputs c_huge_tensor c_huge_ws c_inf_tol c_name_uni c_nan_tol c_neg_shape c_zero_int_shape c_ref_hang c_ref_state c_ref_segv; do
  ./ev.sh $n --spec $H/problems/$n --source $H/problems/$n/accum.c --knob UNROLL=4; done
$B/kf run $H/problems/esc_torch --evals 2 --minutes 3 --data /tmp/rt-s3p/data1 --showdown 1 > results/kfrun_esc_torch.out 2>&1
for n in c_desc_esc c_tpl_desc_esc; do $B/kf run $H/problems/$n --evals 2 --minutes 2 --showdown 1 --data /tmp/rt-s3p/data2 > results/kfrun_$n.out 2>&1; done
./ev.sh sleep_inputs --spec $H/problems/sleep_inputs --source $I/batchnorm/eager.py --knob MODE=no_grad --stop-after verify
