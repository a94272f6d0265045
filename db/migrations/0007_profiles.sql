-- SPDX-License-Identifier: Apache-2.0
-- 0007_profiles: a hardware profile and a diagnosis per evaluation
-- (docs/profiling.md).
--
-- campaigns.profile is the campaign's profiling policy: which verified
-- candidates GPU workers profile after timing ("all", "none", "top:K":
-- those that would enter their class's K best when they are scheduled).
--
-- eval_profiles holds, per evaluation, the diagnosis the coordinator
-- derived when it stored the report (common/diagnose.c: the bottleneck
-- class with its fractions of the measured ceilings) and the profile
-- the worker sent (common/profile.h), or why there is none.  A row
-- exists for every ok evaluation measured since this migration (bound
-- set) and for every report that carried a profile status.  A reused
-- evaluation (reused_from) has no row of its own: readers join the row of
-- the evaluation it reuses.
ALTER TABLE campaigns
  ADD COLUMN profile text NOT NULL DEFAULT 'top:5'
    CHECK (profile ~ '^(all|none|top:[1-9][0-9]{0,2})$');

CREATE TABLE eval_profiles (
  evaluation_id      bigint PRIMARY KEY REFERENCES evaluations (id),
  -- the diagnosis; bound NULL: nothing to diagnose (not ok, no time)
  bound              text CHECK (bound IN ('memory', 'compute', 'latency',
                                           'launch')),
  bandwidth_fraction double precision CHECK (bandwidth_fraction >= 0),
  compute_fraction   double precision CHECK (compute_fraction >= 0),
  detail             text NOT NULL DEFAULT '',
  profiled           boolean NOT NULL DEFAULT false,
  -- the profile
  status             text NOT NULL DEFAULT 'none'
                     CHECK (status IN ('none', 'ok', 'unavailable',
                                       'restricted', 'failed', 'skipped')),
  reason             text NOT NULL DEFAULT '',
  tool               text NOT NULL DEFAULT '',
  kernel             text NOT NULL DEFAULT '',
  kernels            integer NOT NULL DEFAULT 0 CHECK (kernels >= 0),
  -- NULL: not measured; percentages of peak or hit rates
  duration_ns        double precision CHECK (duration_ns >= 0),
  dram_pct           double precision CHECK (dram_pct >= 0),
  sm_pct             double precision CHECK (sm_pct >= 0),
  occupancy_pct      double precision CHECK (occupancy_pct >= 0),
  l1_hit_pct         double precision CHECK (l1_hit_pct >= 0),
  l2_hit_pct         double precision CHECK (l2_hit_pct >= 0),
  registers          integer CHECK (registers >= 0),
  shared_bytes       bigint CHECK (shared_bytes >= 0),
  spill_bytes        bigint CHECK (spill_bytes >= 0),
  -- [{"reason": "long_scoreboard", "cycles": 14.8}, ...], largest first
  stalls             jsonb NOT NULL DEFAULT '[]'
                     CHECK (jsonb_typeof(stalls) = 'array'),
  profile_ms         integer CHECK (profile_ms >= 0),
  created_at         timestamptz NOT NULL DEFAULT now()
);
