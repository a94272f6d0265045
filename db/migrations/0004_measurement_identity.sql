-- SPDX-License-Identifier: Apache-2.0
-- 0004_measurement_identity: a measurement is reused only under the exact
-- identity it was taken under; a key can be measured again; the final
-- showdown.
--
-- A measured number depends on
--   the problem: the spec (its canonical hash, common/spec.c), the
--     reference source and the language -> campaigns.problem_key;
--   the candidate: sha256(source) and flags -> candidates;
--   the environment: device class, driver, runtime, toolchain and harness
--     build -> environments, which each worker points at from its
--     registration (kf-harness identity).
-- An evaluation records the environment of the worker that reported it
-- (NULL when that worker has no identity, or the EvalResult names another
-- harness build or toolchain than the worker registered).  The search
-- reuses a stored measurement only for a campaign of the same problem_key,
-- on a class whose alive workers all share one environment, equal to the
-- measurement's; never one with timing_dependent set.
--
-- A key may now be measured again (by a --fresh campaign, or after a
-- timing-dependent verdict): eval_keys_once becomes once per campaign.
-- A reuse aggregates every reusable measurement of the key (median of the
-- medians; `measurements` counts them).
--
-- Rows from before this migration are kept as they are and can never be
-- reused: their campaigns get problem_key 'pre-0004:<id>' (no sha256 hex,
-- and no two alike), their evaluations environment_id NULL.
--
-- The showdown: when a campaign's search stops it moves to state
-- 'showdown' and gets one "showdown" task per device class (showdowns),
-- re-timing its top candidates (showdown_entries) together with the
-- reference; it is 'done' once they reported or failed.

CREATE TABLE environments (
  id              bigserial PRIMARY KEY,
  device_class_id bigint NOT NULL REFERENCES device_classes (id),
  harness_build   text NOT NULL CHECK (harness_build <> ''),  -- sha256 hex
  toolchain       text NOT NULL,   -- compiler version line
  driver          text NOT NULL,
  runtime         text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (device_class_id, harness_build, toolchain, driver, runtime)
);

-- NULL: registered before 0004, or without a harness identity
ALTER TABLE workers
  ADD COLUMN environment_id bigint REFERENCES environments (id);

ALTER TABLE campaigns
  ADD COLUMN spec_sha256      text NOT NULL DEFAULT '',  -- canonical hash
  ADD COLUMN reference_sha256 text NOT NULL DEFAULT '',
  ADD COLUMN problem_key      text NOT NULL DEFAULT '',
  ADD COLUMN fresh            boolean NOT NULL DEFAULT false,
  ADD COLUMN showdown_top     integer NOT NULL DEFAULT 5
                              CHECK (showdown_top BETWEEN 1 AND 64),
  -- '' before the search stops; 'running'; 'done'; 'failed: ...';
  -- 'skipped: ...'
  ADD COLUMN showdown         text NOT NULL DEFAULT '',
  ADD COLUMN best_from_showdown boolean NOT NULL DEFAULT false;
UPDATE campaigns SET problem_key = 'pre-0004:' || id;

ALTER TABLE campaigns DROP CONSTRAINT campaigns_state_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_state_check
  CHECK (state IN ('running', 'showdown', 'done', 'failed', 'stopped'));
DROP INDEX campaigns_running;
CREATE INDEX campaigns_active ON campaigns (id)
  WHERE state IN ('running', 'showdown');

ALTER TABLE eval_keys ADD COLUMN problem_key text;
UPDATE eval_keys k SET problem_key = c.problem_key
  FROM campaigns c WHERE c.id = k.campaign_id;
ALTER TABLE eval_keys ALTER COLUMN problem_key SET NOT NULL;
DROP INDEX eval_keys_once;
CREATE UNIQUE INDEX eval_keys_once ON eval_keys
  (campaign_id, source_sha256, flags, device_class_id)
  WHERE task_id IS NOT NULL;
CREATE INDEX eval_keys_problem ON eval_keys
  (problem_key, source_sha256, flags, device_class_id)
  WHERE task_id IS NOT NULL;

ALTER TABLE evaluations
  -- measured under; NULL: unknown, never reused
  ADD COLUMN environment_id   bigint REFERENCES environments (id),
  -- EvalResult.timing_dependent: never reused, measured again
  ADD COLUMN timing_dependent boolean NOT NULL DEFAULT false,
  ADD COLUMN repetitions      integer,  -- timed repetitions (summed)
  -- measurements aggregated in this row (a reuse: all of the key's)
  ADD COLUMN measurements     integer NOT NULL DEFAULT 1
                              CHECK (measurements >= 1);

CREATE TABLE showdowns (
  id              bigserial PRIMARY KEY,
  campaign_id     bigint NOT NULL REFERENCES campaigns (id),
  device_class_id bigint NOT NULL REFERENCES device_classes (id),
  task_id         bigint NOT NULL UNIQUE REFERENCES tasks (id),
  state           text NOT NULL DEFAULT 'running'
                  CHECK (state IN ('running', 'done', 'failed')),
  reason          text,             -- why it failed
  worker_id       bigint REFERENCES workers (id),
  environment_id  bigint REFERENCES environments (id),
  ref_time_ns_median double precision,
  ref_time_ns_spread double precision,
  ref_repetitions integer,
  result          bytea,            -- the packed ShowdownResult
  created_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz,
  UNIQUE (campaign_id, device_class_id)
);

CREATE TABLE showdown_entries (
  showdown_id     bigint NOT NULL REFERENCES showdowns (id),
  candidate_id    bigint NOT NULL REFERENCES candidates (id),
  position        integer NOT NULL,  -- 1-based, its place in the request
  outcome         kf_outcome,        -- NULL until the showdown reported
  stage           text,
  reason          text,
  time_ns_median  double precision,
  time_ns_spread  double precision,
  repetitions     integer,
  speedup         double precision,  -- reference median / this median
  achieved_gbps   double precision,
  roofline_fraction double precision,
  PRIMARY KEY (showdown_id, candidate_id)
);
