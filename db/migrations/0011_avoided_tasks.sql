-- SPDX-License-Identifier: Apache-2.0
-- 0011_avoided_tasks: the lease statement asks, when it could not fill a
-- batch, whether a queued task avoids one of the batch's workers (0006):
-- such a task then goes to another worker's free slot of the same batch
-- (db/store_tasks.c).  This index keeps that question cheap however many
-- tasks are queued: only avoiding tasks are in it.
CREATE INDEX tasks_avoiding ON tasks (avoid_worker)
  WHERE state = 'queued' AND avoid_worker IS NOT NULL;
