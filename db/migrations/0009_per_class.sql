-- SPDX-License-Identifier: Apache-2.0
-- 0009_per_class: a campaign's budgets, stop rules, best and showdown are
-- per device class; a campaign may be restricted to one class and may be
-- seeded ("ported") from another campaign's elites on another class.
--
-- campaign_classes holds one row per (campaign, class) the search has run
-- on, created the first time a worker of the class could evaluate it.  A
-- class searches ('running') until one of its own stop rules fires --
-- budget_evals counts its evaluations, budget_seconds runs from its
-- started_at, the plateau counts its evaluations since its best changed,
-- the roofline target is its best's -- then re-times its top candidates in
-- its own showdown ('showdown') and ends ('done') with its own best.  A
-- fast class never ends the search of a slower one: the campaign moves to
-- 'showdown' when no class is running and to 'done' when every class is.
--
-- A ported campaign (port_from_campaign) starts with copies of the source
-- campaign's elites on port_from_class as candidates of its own
-- (candidates.ported_from names the source candidate); they are evaluated
-- on the target class (device_class_id) before anything is bred there.

CREATE TABLE campaign_classes (
  campaign_id        bigint NOT NULL REFERENCES campaigns (id),
  device_class_id    bigint NOT NULL REFERENCES device_classes (id),
  state              text NOT NULL DEFAULT 'running'
                     CHECK (state IN ('running', 'showdown', 'done')),
  stop_reason        text,
  best_candidate_id  bigint REFERENCES candidates (id),
  best_from_showdown boolean NOT NULL DEFAULT false,
  -- '' before the class stops; 'running'; 'done'; 'failed: ...';
  -- 'skipped: ...' (as campaigns.showdown, for this class alone)
  showdown           text NOT NULL DEFAULT '',
  started_at         timestamptz NOT NULL DEFAULT now(),
  finished_at        timestamptz,
  PRIMARY KEY (campaign_id, device_class_id)
);

-- campaigns.device_class_id (0001, unused until now): NULL, every class of
-- the backend with a worker; else only this one.
ALTER TABLE campaigns
  ADD COLUMN port_from_campaign bigint REFERENCES campaigns (id),
  ADD COLUMN port_from_class    bigint REFERENCES device_classes (id),
  ADD CONSTRAINT campaigns_port_pair
    CHECK ((port_from_campaign IS NULL) = (port_from_class IS NULL));

ALTER TABLE candidates
  ADD COLUMN ported_from bigint REFERENCES candidates (id);
