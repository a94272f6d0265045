-- SPDX-License-Identifier: Apache-2.0
-- 0014_principal_avoidance: a showdown task avoids the worker whose search
-- result it re-times (0006) so that a second machine confirms it.  Two
-- workers registered with one credential (workers.token_id, 0005) are one
-- party: the red team of 2026-12-01-s3b started a worker credential twice,
-- and the showdown avoiding one of them ran on the other, which confirmed
-- its own forged best (db/store_tasks.c now avoids the credential).
-- Workers of the coordinator's bootstrap token (token_id NULL) are told
-- apart by id alone, as before.
CREATE FUNCTION kf_same_principal(a bigint, b bigint) RETURNS boolean
  LANGUAGE sql STABLE AS $$
    SELECT a = b OR EXISTS (SELECT 1 FROM workers x JOIN workers y
                            ON y.token_id = x.token_id
                            WHERE x.id = a AND y.id = b)
  $$;
