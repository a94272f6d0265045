-- SPDX-License-Identifier: Apache-2.0
-- 0010_sweeps: a sweep runs the same campaigns on every device class it
-- names (`kf sweep`, docs/sweep.md).  It is a named record grouping, per
-- problem and class, one campaign restricted to that class (0009), so a
-- sweep can be continued class by class on machines lent one at a time:
-- the data directory travels, the classes already done are not run again.
--
-- A class is a label ("h100", "cpu-a"); model is the device class model
-- its workers registered (the GPU's name; a CPU worker's --device-class),
-- bound the first time the label runs and checked on every later run.
-- Baselines are what the user measured on that class's device (torch
-- eager and torch.compile, scripts/torch_baselines.py), kept verbatim.

CREATE TABLE sweeps (
  id          bigserial PRIMARY KEY,
  name        text NOT NULL UNIQUE,
  backend     smallint NOT NULL CHECK (backend IN (1, 2)),
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sweep_problems (
  sweep_id  bigint NOT NULL REFERENCES sweeps (id),
  position  integer NOT NULL,
  problem   text NOT NULL,              -- the spec's name
  PRIMARY KEY (sweep_id, problem),
  UNIQUE (sweep_id, position)
);

CREATE TABLE sweep_classes (
  sweep_id        bigint NOT NULL REFERENCES sweeps (id),
  position        integer NOT NULL,
  label           text NOT NULL,
  model           text,                 -- NULL until the label first ran
  device_class_id bigint REFERENCES device_classes (id),
  -- --ceiling-gbps: the copy bandwidth to use where the workers measured
  -- none (NULL: use theirs)
  ceiling_gbps    float8 CHECK (ceiling_gbps > 0),
  PRIMARY KEY (sweep_id, label),
  UNIQUE (sweep_id, position)
);

CREATE TABLE sweep_campaigns (
  sweep_id     bigint NOT NULL REFERENCES sweeps (id),
  problem      text NOT NULL,
  label        text NOT NULL,
  campaign_id  bigint NOT NULL UNIQUE REFERENCES campaigns (id),
  PRIMARY KEY (sweep_id, problem, label),
  FOREIGN KEY (sweep_id, problem) REFERENCES sweep_problems (sweep_id, problem),
  FOREIGN KEY (sweep_id, label) REFERENCES sweep_classes (sweep_id, label)
);

CREATE TABLE sweep_baselines (
  sweep_id     bigint NOT NULL,
  label        text NOT NULL,
  problem      text NOT NULL,
  eager_ms     float8 CHECK (eager_ms > 0),   -- NULL: not measured
  compile_ms   float8 CHECK (compile_ms > 0), -- NULL: torch.compile failed
  line         jsonb NOT NULL,                -- the file's line, verbatim
  source       text NOT NULL DEFAULT '',      -- the file it came from
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (sweep_id, label, problem),
  FOREIGN KEY (sweep_id, problem) REFERENCES sweep_problems (sweep_id, problem),
  FOREIGN KEY (sweep_id, label) REFERENCES sweep_classes (sweep_id, label)
);
