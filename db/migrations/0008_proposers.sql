-- SPDX-License-Identifier: Apache-2.0
-- 0008_proposers: what proposers (the built-in llm proposer, any client of
-- ProposerRecordCalls) spent and got, per campaign.
--
-- One row per request to a model, failed ones included: tokens and cost
-- are summed per campaign by ProposerUsage (`kf propose usage`), and a
-- malformed reply, an HTTP error or a refused proposal is kept with its
-- reason, so nothing a proposer paid for goes unaccounted.  The prompt's
-- version (file and sha256 prefix) is stored with each call, so a result
-- can be traced to the exact prompt text in the repository.
--
-- Proposals that declare a knob space need no schema: they become entries
-- of campaigns.templates with "origin": "proposer" (and "proposer").

CREATE TABLE proposer_calls (
  id                bigserial PRIMARY KEY,
  campaign_id       bigint NOT NULL REFERENCES campaigns (id),
  proposer          text NOT NULL,
  model             text NOT NULL DEFAULT '',
  prompt_version    text NOT NULL DEFAULT '',
  operation         text NOT NULL DEFAULT '',
  outcome           text NOT NULL,
  reason            text NOT NULL DEFAULT '',
  http_status       integer NOT NULL DEFAULT 0 CHECK (http_status >= 0),
  attempts          integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  prompt_tokens     bigint NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
  completion_tokens bigint NOT NULL DEFAULT 0
                    CHECK (completion_tokens >= 0),
  cost              double precision NOT NULL DEFAULT 0 CHECK (cost >= 0),
  latency_ms        bigint NOT NULL DEFAULT 0 CHECK (latency_ms >= 0),
  -- the candidate the reply became (one of the campaign's); NULL: none
  candidate_id      bigint REFERENCES candidates (id),
  -- the credential that recorded it (api_tokens.id; 0: bootstrap)
  credential_id     bigint NOT NULL DEFAULT 0,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX proposer_calls_campaign ON proposer_calls (campaign_id, id);
