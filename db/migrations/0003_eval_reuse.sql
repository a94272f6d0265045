-- SPDX-License-Identifier: Apache-2.0
-- 0003_eval_reuse: a campaign reuses another campaign's evaluation of the
-- same key instead of skipping it.
--
-- The rule stays "the same source + flags + device class is EVALUATED at
-- most once" (eval_keys_once, 0002); it no longer means "never considered
-- by a later campaign".  When the search of campaign B draws a key that
-- campaign A already evaluated on that class, B gets its own candidate
-- row, an eval_keys row without a task (duplicate_of = A's candidate), and
-- an evaluation row with the same measurements, task_id NULL and
-- reused_from = A's evaluation.  Ranking, counts, the best and GetBest
-- then read B's rows only, as if B had run it; no task is created.
--
-- A campaign reuses one evaluation at most once (evaluations_reused_once),
-- and never one of its own (the search only reuses other campaigns'
-- keys), so nothing is counted twice within a campaign.

ALTER TABLE evaluations
  ALTER COLUMN task_id DROP NOT NULL,
  -- the evaluation whose measurements this row copies; NULL: measured by
  -- this row's own task
  ADD COLUMN reused_from bigint REFERENCES evaluations (id),
  ADD CHECK ((task_id IS NULL) = (reused_from IS NOT NULL));

CREATE UNIQUE INDEX evaluations_reused_once ON evaluations
  (campaign_id, reused_from) WHERE reused_from IS NOT NULL;
