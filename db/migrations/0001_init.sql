-- SPDX-License-Identifier: Apache-2.0
-- 0001_init: workers, device classes, tasks, results; room for campaigns,
-- candidates and evaluations.  Applied by kf_store_migrate in one
-- transaction together with its row in schema_version.

CREATE TYPE kf_task_state AS ENUM ('queued', 'leased', 'done', 'failed');

-- Mirrors common/outcome.h KF_OUTCOME_MAP and proto enum Outcome.
CREATE TYPE kf_outcome AS ENUM (
  'ok', 'compile_error', 'compile_timeout', 'link_rejected', 'crash',
  'timeout', 'wrong_answer', 'unwritten_output', 'out_of_bounds',
  'nondeterministic', 'too_fast', 'sandbox_violation', 'resource_limit',
  'spec_error', 'infra_error');

CREATE TABLE device_classes (
  id         bigserial PRIMARY KEY,
  kind       smallint NOT NULL CHECK (kind IN (1, 2)),  -- 1 cpu, 2 cuda
  model      text NOT NULL,
  cc_major   integer NOT NULL DEFAULT 0,
  cc_minor   integer NOT NULL DEFAULT 0,
  isa        text NOT NULL DEFAULT '',
  UNIQUE (kind, model, cc_major, cc_minor, isa)
);

CREATE TABLE workers (
  id              bigserial PRIMARY KEY,
  name            text NOT NULL,
  hostname        text NOT NULL DEFAULT '',
  device_class_id bigint NOT NULL REFERENCES device_classes (id),
  device          jsonb NOT NULL DEFAULT '{}',   -- DeviceInfo, ceilings
  task_kinds      text[] NOT NULL DEFAULT '{}',
  slots           integer NOT NULL DEFAULT 1,
  registered_at   timestamptz NOT NULL DEFAULT now(),
  last_seen       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE campaigns (
  id              bigserial PRIMARY KEY,
  name            text NOT NULL,
  problem         text NOT NULL,
  device_class_id bigint REFERENCES device_classes (id),
  state           text NOT NULL DEFAULT 'running'
                  CHECK (state IN ('running', 'done', 'failed', 'stopped')),
  config          jsonb NOT NULL DEFAULT '{}',
  created_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz
);

CREATE TABLE tasks (
  id              bigserial PRIMARY KEY,
  kind            text NOT NULL,
  payload         bytea NOT NULL DEFAULT '',
  device_class_id bigint REFERENCES device_classes (id),  -- NULL: any
  campaign_id     bigint REFERENCES campaigns (id),
  priority        integer NOT NULL DEFAULT 0,
  state           kf_task_state NOT NULL DEFAULT 'queued',
  lease_owner     bigint REFERENCES workers (id),
  lease_expires   timestamptz,
  attempt         integer NOT NULL DEFAULT 0,   -- attempts started
  max_attempts    integer NOT NULL DEFAULT 3 CHECK (max_attempts > 0),
  timeout_ms      integer NOT NULL DEFAULT 60000,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz,
  CHECK ((state = 'leased') = (lease_owner IS NOT NULL)),
  CHECK ((state = 'leased') = (lease_expires IS NOT NULL))
);

-- The lease query's path: queued tasks by priority, then age.
CREATE INDEX tasks_queued ON tasks (priority DESC, id)
  WHERE state = 'queued';
CREATE INDEX tasks_leased ON tasks (lease_expires) WHERE state = 'leased';
CREATE INDEX tasks_owner ON tasks (lease_owner) WHERE state = 'leased';
CREATE INDEX tasks_campaign ON tasks (campaign_id);

-- One row per reported attempt; the primary key is what makes a repeated
-- report a no-op.
CREATE TABLE results (
  task_id     bigint NOT NULL REFERENCES tasks (id),
  attempt     integer NOT NULL,
  worker_id   bigint NOT NULL REFERENCES workers (id),
  outcome     kf_outcome NOT NULL,
  stage       text,
  reason      text,
  output      bytea NOT NULL DEFAULT '',
  elapsed_us  bigint NOT NULL DEFAULT 0,
  final       boolean NOT NULL,   -- this result finished the task
  reported_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, attempt)
);
CREATE UNIQUE INDEX results_one_final ON results (task_id) WHERE final;
