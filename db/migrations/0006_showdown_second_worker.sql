-- SPDX-License-Identifier: Apache-2.0
-- 0006_showdown_second_worker: a campaign's best is confirmed by a second
-- worker of its class when one exists.  A task may name a worker that
-- should not take it (avoid_worker) until avoid_until: the showdown task
-- avoids the worker that measured the class's best during the search, so
-- that another worker re-times it.  After avoid_until any worker of the
-- class may take it, so a second worker that is busy or gone delays the
-- showdown by that long at most and never blocks it.
ALTER TABLE tasks
  ADD COLUMN avoid_worker bigint,
  ADD COLUMN avoid_until  timestamptz,
  ADD CONSTRAINT tasks_avoid_pair
    CHECK ((avoid_worker IS NULL) = (avoid_until IS NULL));
