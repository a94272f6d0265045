-- SPDX-License-Identifier: Apache-2.0
-- 0002_campaigns: search campaigns, their candidates, evaluation requests
-- and evaluations.
--
-- The rule this schema enforces: the same source + flags is evaluated at
-- most once per device class -- across campaigns and coordinator restarts.
-- eval_keys holds one row per (candidate, device class) the search has
-- decided about; the rows that carry a task are unique on
-- (source_sha256, flags, device_class_id), so a second request for the
-- same key cannot be inserted, whoever asks.  A candidate that turns out to
-- be a duplicate gets a row without a task, pointing at the owner.
--
-- An evaluation is written in the same transaction that accepts the eval
-- task's final report (db/store_tasks.c), and task_id is unique: a report
-- retried after a crash can never create a second one.

ALTER TABLE campaigns
  ADD COLUMN backend          smallint NOT NULL DEFAULT 1
                              CHECK (backend IN (1, 2)),   -- 1 cpu, 2 cuda
  ADD COLUMN language         text NOT NULL DEFAULT 'c',
  ADD COLUMN budget_evals     integer NOT NULL DEFAULT 200
                              CHECK (budget_evals > 0),
  ADD COLUMN budget_seconds   integer NOT NULL DEFAULT 600
                              CHECK (budget_seconds > 0),
  ADD COLUMN population       integer NOT NULL DEFAULT 16
                              CHECK (population > 0),
  ADD COLUMN target_roofline  double precision NOT NULL DEFAULT 0.95,
  ADD COLUMN plateau_evals    integer NOT NULL DEFAULT 60
                              CHECK (plateau_evals >= 0),
  -- uint64 seed of the search RNG, stored bit for bit in a bigint
  ADD COLUMN search_seed      bigint NOT NULL DEFAULT 0,
  ADD COLUMN spec_json        bytea NOT NULL DEFAULT '',   -- verbatim
  -- minimum bytes moved at the benchmark size (spec "bytes"); 0: unknown
  ADD COLUMN floor_bytes      double precision NOT NULL DEFAULT 0,
  ADD COLUMN reference_source text NOT NULL DEFAULT '',
  -- [{"name", "file", "source", "knobs": [{"name", "values": [...]}]}]
  ADD COLUMN templates        jsonb NOT NULL DEFAULT '[]',
  ADD COLUMN stop_reason      text,
  ADD COLUMN best_candidate_id bigint,
  ADD COLUMN started_at       timestamptz NOT NULL DEFAULT now();

CREATE INDEX campaigns_running ON campaigns (id) WHERE state = 'running';

CREATE TABLE candidates (
  id              bigserial PRIMARY KEY,
  campaign_id     bigint NOT NULL REFERENCES campaigns (id),
  template_name   text NOT NULL DEFAULT '',   -- '' for free-form sources
  knobs           jsonb NOT NULL DEFAULT '{}', -- {"NAME": "value"}
  source          text NOT NULL,
  source_sha256   text NOT NULL,               -- hex of sha256(source)
  flags           text NOT NULL DEFAULT '',    -- "-DA=1 -DB=2", by name
  proposer        text NOT NULL DEFAULT 'evolution',
  parents         bigint[] NOT NULL DEFAULT '{}',
  generation      integer NOT NULL DEFAULT 0,
  -- population it was bred for; NULL: evaluate on every class (proposals)
  device_class_id bigint REFERENCES device_classes (id),
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX candidates_campaign ON candidates (campaign_id, id);

ALTER TABLE campaigns ADD FOREIGN KEY (best_candidate_id)
  REFERENCES candidates (id);

CREATE TABLE eval_keys (
  candidate_id    bigint NOT NULL REFERENCES candidates (id),
  device_class_id bigint NOT NULL REFERENCES device_classes (id),
  campaign_id     bigint NOT NULL REFERENCES campaigns (id),
  source_sha256   text NOT NULL,
  flags           text NOT NULL,
  task_id         bigint UNIQUE REFERENCES tasks (id),  -- NULL: duplicate
  duplicate_of    bigint REFERENCES candidates (id),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (candidate_id, device_class_id),
  CHECK ((task_id IS NULL) = (duplicate_of IS NOT NULL))
);
CREATE UNIQUE INDEX eval_keys_once ON eval_keys
  (source_sha256, flags, device_class_id) WHERE task_id IS NOT NULL;
CREATE INDEX eval_keys_campaign ON eval_keys (campaign_id);

CREATE TABLE evaluations (
  id                 bigserial PRIMARY KEY,
  candidate_id       bigint NOT NULL REFERENCES candidates (id),
  campaign_id        bigint NOT NULL REFERENCES campaigns (id),
  device_class_id    bigint NOT NULL REFERENCES device_classes (id),
  task_id            bigint NOT NULL UNIQUE REFERENCES tasks (id),
  worker_id          bigint REFERENCES workers (id),
  outcome            kf_outcome NOT NULL,
  stage              text,
  reason             text,
  time_ns_median     double precision,   -- NULL: not timed
  time_ns_spread     double precision,   -- (p90 - p10) / median
  ref_time_ns_median double precision,
  ref_time_ns_spread double precision,
  speedup            double precision,   -- ref / candidate, when ok
  achieved_gbps      double precision,
  roofline_fraction  double precision,   -- floor time / candidate time
  result             bytea,              -- the packed EvalResult
  created_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (candidate_id, device_class_id)
);
CREATE INDEX evaluations_campaign ON evaluations (campaign_id, id);
