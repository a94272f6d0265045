-- 0005_api_tokens: credentials with roles (issue 10, "roles and credentials").
--
-- A credential is a random secret handed out once by `kf token create`;
-- only its SHA-256 (64 hex digits) is stored, so this table holds nothing a
-- client could present.  Revoking sets revoked_at; rows are never deleted,
-- so a worker row can always say which credential registered it.
CREATE TABLE api_tokens (
  id          bigserial PRIMARY KEY,
  role        text NOT NULL CHECK (role IN ('worker', 'submitter', 'admin')),
  name        text NOT NULL DEFAULT '',
  hash        text NOT NULL UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);

-- The credential a worker registered with: only that credential may then
-- heartbeat, lease and report as this worker.  NULL: the coordinator's
-- bootstrap token (KF_TOKEN), and every worker registered before 0005.
ALTER TABLE workers ADD COLUMN token_id bigint REFERENCES api_tokens (id);
