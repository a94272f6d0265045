-- SPDX-License-Identifier: Apache-2.0
-- 0013_max_autotune_baseline: the second compile baseline of a PyTorch
-- problem's evaluation, torch.compile(mode="max-autotune-no-cudagraphs")
-- of the reference, timed beside the reference, default-mode torch.compile
-- and the candidate by the same timer in the same evaluation
-- (EvalResult.max_autotune_time_ns_median, harness/torch).  NULL where it
-- was not timed, as 0012's columns (EvalResult.baselines says why).
ALTER TABLE evaluations
  ADD COLUMN max_autotune_time_ns_median float8,
  ADD COLUMN speedup_max_autotune        float8;
