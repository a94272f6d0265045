#!/bin/bash
# Red team 2026-12-01 session 3c: problems written outside the repository.
# Run from this folder (docs/redteam/2026-12-01-s3c).  Imports go to
# /tmp/rt3c/NAME (imp.sh); evaluations keep results/NAME.{json,err} (ev.sh).
set -x
E=$PWD
export KF_PYTHON=/usr/bin/python3

# H1: numpy's global generator in Model.__init__: the import's own template fails
./imp.sh np_init
./ev.sh eager_np_init_1 --spec /tmp/rt3c/np_init --source /tmp/rt3c/np_init/eager.py --knob MODE=no_grad --stop-after verify
./ev.sh eager_np_init_2 --spec /tmp/rt3c/np_init --source /tmp/rt3c/np_init/eager.py --knob MODE=no_grad --stop-after verify
(cd /tmp/rt3c && /work/main/build/kf run /tmp/rt3c/np_init --evals 4 --minutes 3 --data /tmp/rt3c/kfdata --showdown 1 > $E/results/kfrun_np_init.out 2>&1)

# H2: parameters created in the order of a set of strings (hash seed per process)
./imp.sh set_order_init
./ev.sh setorder_eager_1 --spec /tmp/rt3c/set_order_init --source /tmp/rt3c/set_order_init/eager.py --knob MODE=no_grad --stop-after verify
./ev.sh setorder_eager_2 --spec /tmp/rt3c/set_order_init --source /tmp/rt3c/set_order_init/eager.py --knob MODE=no_grad --stop-after verify

# H3: integers above 2^53 in get_init_inputs() / get_inputs() become doubles
./imp.sh bigint_init
./ev.sh eager_bigint_init --spec /tmp/rt3c/bigint_init --source /tmp/rt3c/bigint_init/eager.py --knob MODE=no_grad --stop-after verify
./ev.sh filemodel_bigint --spec /tmp/rt3c/bigint_init --source $E/import/cand_bigint_file.py --stop-after verify
./imp.sh mersenne_init
./ev.sh eager_mersenne_init --spec /tmp/rt3c/mersenne_init --source /tmp/rt3c/mersenne_init/eager.py --knob MODE=no_grad --stop-after verify
./ev.sh filemodel_mersenne --spec /tmp/rt3c/mersenne_init --source $E/import/cand_file_model.py --stop-after verify
./imp.sh bigint_arg
./ev.sh eager_bigint_arg --spec /tmp/rt3c/bigint_arg --source /tmp/rt3c/bigint_arg/eager.py --knob MODE=no_grad --stop-after verify

# H4: a 0-d tensor input becomes shape [1]; a reference that relies on 0-d never runs
./imp.sh scalar_in_cat
./ev.sh eager_scalar_in_cat --spec /tmp/rt3c/scalar_in_cat --source /tmp/rt3c/scalar_in_cat/eager.py --knob MODE=no_grad --stop-after verify

# H5: reference path >= 1024 bytes silently truncated: another file imported
python3 - <<'PY'
import os,shutil
p="/tmp/rt3c/lp2/"+"/".join(["a"*200]*5)+"/relu.py"
os.makedirs(os.path.dirname(p),exist_ok=True); shutil.copy("import/ref_relu.py",p)
open("/tmp/rt3c/lp2path","w").write(p)
PY
P=$(cat /tmp/rt3c/lp2path); T=${P:0:1023}
cp import/ref_sigmoid_decoy.py "$T"
rm -rf /tmp/rt3c/trunc_in
(cd /tmp/rt3c && /work/main/build/kf import kernelbench "$P" --out /tmp/rt3c/trunc_in); grep sigmoid /tmp/rt3c/trunc_in/reference.py
# H5b: --out >= 1024 bytes: written to a truncated directory, then "a bug: please report it"
O=$(python3 -c "print('/tmp/rt3c/lp3/' + '/'.join(['b'*200]*5) + '/problem_v2')"); mkdir -p "$(dirname "$O")"
/work/main/build/kf import kernelbench $E/import/ref_relu.py --out "$O"; ls "$(dirname "$O")"

# H6: gpumode case.json over 4096 bytes silently replaced by the default case
rm -rf /tmp/rt3c/bigcase; (cd /tmp/rt3c && /work/main/build/kf import gpumode $E/gpumode/bigcase --out /tmp/rt3c/bigcase); grep -A3 '"bench"' /tmp/rt3c/bigcase/spec.json

# U1: malformed case.json reported as "--case must be ..."
rm -rf /tmp/rt3c/badcase; (cd /tmp/rt3c && /work/main/build/kf import gpumode $E/gpumode/badcase --out /tmp/rt3c/badcase)
# U2: Python random in Model.__init__: accepted by import, spec_error every evaluation
./imp.sh pyrandom_init
./ev.sh pyrandom_eager --spec /tmp/rt3c/pyrandom_init --source /tmp/rt3c/pyrandom_init/eager.py --knob MODE=no_grad --stop-after verify

# Defended imports
for n in scalar_out scalar_in empty_in uint8 int32_wrap tuple_none identity dup_outputs nan_init f64 syntax1000 model_twice topk list_out dict_out; do ./imp.sh $n; done
for n in scalar_out scalar_in int32_wrap identity dup_outputs nan_init topk list_out; do ./ev.sh eager_$n --spec /tmp/rt3c/$n --source /tmp/rt3c/$n/eager.py --knob MODE=no_grad --stop-after verify; done

# Defended C specs (problems/gather with RANGE_EXPR / BYTES_EXPR substituted)
cd problems
for v in "N - 1|4*N + 8*M" "N|4*N*M/(N-1)" "N|4*N + 8*M + 1000000000000" "N * 100000|4*N + 8*M"; do
  r=${v%%|*}; b=${v##*|}; d=gather_$(echo "$r$b" | tr -c 'A-Za-z0-9' _)
  rm -rf $d; cp -r gather $d; sed -i "s|RANGE_EXPR|$r|; s|BYTES_EXPR|$b|" $d/spec.json
  ../ev.sh $d --spec $PWD/$d --source $PWD/$d/honest.c
done
d=gather_N4_N___8_M___1000000000000_
../ev.sh ${d}_ceil --spec $PWD/$d --source $PWD/$d/honest.c --copy-gbps 10 --read-gbps 10 --write-gbps 10 --gflops 100

# H7 (continued): slow get_inputs() against the deadline (evalreq.py: kf-harness eval with --deadline-ms)
./imp.sh slow_inputs; ./imp.sh slower_inputs
(cd /work/main && python3 $E/evalreq.py /tmp/rt3c/slower_inputs $E/import/cand_slower_init.py -- --deadline-ms 15000)      # timeout (H)
(cd /work/main && python3 $E/evalreq.py /tmp/rt3c/slow_inputs $E/import/cand_slower_init.py -- --deadline-ms 15000)        # ok (control)
(cd /work/main && python3 $E/evalreq.py /tmp/rt3c/slower_inputs /tmp/rt3c/slower_inputs/eager.py MODE=no_grad -- --deadline-ms 15000)  # spec_error, misleading
./ev.sh eager_slow_inputs2 --spec /tmp/rt3c/slow_inputs --source /tmp/rt3c/slow_inputs/eager.py --knob MODE=no_grad
./imp.sh slowest_inputs; (cd /tmp/rt3c && rm -rf kfdata2 && timeout -s INT 400 /work/main/build/kf run /tmp/rt3c/slowest_inputs --evals 2 --minutes 5 --data /tmp/rt3c/kfdata2 --showdown 1 > $E/results/kfrun_slowest_inputs.out 2>&1)
./imp.sh slowest9_inputs; (cd /tmp/rt3c && rm -rf kfdata3 && timeout -s INT 420 /work/main/build/kf run /tmp/rt3c/slowest9_inputs --evals 1 --minutes 5 --data /tmp/rt3c/kfdata3 --showdown 1 > $E/results/kfrun_slowest9_inputs.out 2>&1)

# H3 (continued): hand-written spec with an exact big int; canonical hash collision
rm -rf /tmp/rt3c/mersenne_hand && cp -r /tmp/rt3c/mersenne_init /tmp/rt3c/mersenne_hand && sed -i 's/2.305843009213694e+18/2305843009213693951/' /tmp/rt3c/mersenne_hand/spec.json
./ev.sh eager_mersenne_hand --spec /tmp/rt3c/mersenne_hand --source /tmp/rt3c/mersenne_hand/eager.py --knob MODE=no_grad --stop-after verify
rm -rf /tmp/rt3c/mersenne_hand2 && cp -r /tmp/rt3c/mersenne_hand /tmp/rt3c/mersenne_hand2 && sed -i 's/2305843009213693951/2305843009213693952/' /tmp/rt3c/mersenne_hand2/spec.json
mkdir -p /tmp/rt3c/bin && cc -O1 -I/work/main/common -o /tmp/rt3c/bin/spechash spechash.c /work/main/build/libkf_common.a -lcrypto -lcjson -lm
/tmp/rt3c/bin/spechash /tmp/rt3c/mersenne_hand /tmp/rt3c/mersenne_hand2 /tmp/rt3c/mersenne_init

# H8: get_inputs() pins its own seed: precomputing candidate passes
./imp.sh pinned_seed
./ev.sh pinned_precompute_1 --spec /tmp/rt3c/pinned_seed --source $E/import/cand_precompute.py
./ev.sh pinned_precompute_2 --spec /tmp/rt3c/pinned_seed --source $E/import/cand_precompute.py
./ev.sh pinned_eager_1 --spec /tmp/rt3c/pinned_seed --source /tmp/rt3c/pinned_seed/eager.py --knob MODE=no_grad
./imp.sh pinned_gen
./ev.sh pinned_gen_precompute --spec /tmp/rt3c/pinned_gen --source $E/import/cand_precompute_gen.py
./imp.sh matmul_free
./ev.sh free_precompute --spec /tmp/rt3c/matmul_free --source $E/import/cand_precompute.py --stop-after verify

# torch spec loader cases (copies of /tmp/rt3c/scalar_in, edited): tspec_a args {"t": 5}; tspec_b input 0 twice; tspec_c init nested 3000 deep
# (see README; the edit is a few lines of Python on spec.json)
./imp.sh empty_param; ./ev.sh eager_empty_param --spec /tmp/rt3c/empty_param --source /tmp/rt3c/empty_param/eager.py --knob MODE=no_grad --stop-after verify
./imp.sh long_init
(cd /tmp/rt3c && rm -rf kfdata4 && timeout -s INT 120 /work/main/build/kf run $E/problems/gather_N4_N___8_M___1000000000000_ --evals 2 --minutes 1 --data /tmp/rt3c/kfdata4)
