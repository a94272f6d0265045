-- SPDX-License-Identifier: Apache-2.0
-- 0012_compile_baseline: a PyTorch problem's evaluation times torch.compile
-- of the reference beside the reference (eager) and the candidate, by the
-- same timer in the same evaluation (EvalResult.compile_time_ns_median,
-- harness/torch).  Kept with the evaluation so that `kf run`, the tables
-- and the exports show the speedup over each baseline: over eager it is
-- `speedup` (the reference is eager), over torch.compile it is this.  NULL
-- where it was not timed (another backend, a CPU torch without
-- torch.compile, or a failed compile: EvalResult.baselines says why).
ALTER TABLE evaluations
  ADD COLUMN compile_time_ns_median float8,
  ADD COLUMN speedup_compile        float8;
