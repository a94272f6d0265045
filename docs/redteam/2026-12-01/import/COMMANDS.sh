# Reproduce (one evaluation at a time). ev SPEC CAND OUT [--stop-after verify]
cd "$(dirname "$0")"  # run from this directory; problems go to /tmp/rt-import
B=${KF_BUILD:-$(cd ../../../.. && pwd)/build}  # kf and kf-harness
rm -rf /tmp/rt-import; mkdir -p /tmp/rt-import
ev(){ local s=$1 c=$2 o=$3; shift 3
  timeout 300 "$B/kf-harness" eval-files --spec "$s" --source "$c" "$@" > /tmp/rt-import/$o.json 2> /tmp/rt-import/$o.log; }
for r in relu6_pos smoothl1_pos masked_attn lenpool var_offset softplus_naive hardtanh55_145 unpermute nll_floatlabels addmask; do
  "$B/kf" import kernelbench ref_$r.py --out /tmp/rt-import/p_$r; done
/usr/bin/python3 sanity.py ref_relu6_pos.py cand_relu6_identity.py   # wrongness on get_inputs()
ev /tmp/rt-import/p_relu6_pos cand_relu6_identity.py o_relu6_full
ev /tmp/rt-import/p_smoothl1_pos cand_smoothl1_mse.py o_smoothl1_full
ev /tmp/rt-import/p_masked_attn cand_attn_nomask.py o_attn_full
ev /tmp/rt-import/p_var_offset cand_var_naive.py o_var_full; ev /tmp/rt-import/p_var_offset cand_var_honest.py o_var_honest1
ev /tmp/rt-import/p_softplus_naive cand_softplus_clamp8.py o_softplus
ev /tmp/rt-import/p_hardtanh55_145 cand_identity.py o_ht55
ev /tmp/rt-import/p_nll_floatlabels cand_nll_class0.py o_nll
ev /tmp/rt-import/p_lenpool cand_lenpool_honest.py o_lenpool_honest --stop-after verify
ev /tmp/rt-import/p_unpermute cand_unpermute_gather.py o_unperm --stop-after verify
ev /tmp/rt-import/p_addmask cand_addmask_causal.py o_addmask --stop-after verify
ev /tmp/rt-import/p_smoothl1_pos cand_smoothl1_sub4.py o_sl1_sub4_1; ev /tmp/rt-import/p_smoothl1_pos cand_smoothl1_honest.py o_sl1_honest4
ev /work/main/problems/torch/kb1_relu cand_early_done.py o_early_done
