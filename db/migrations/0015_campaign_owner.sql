-- SPDX-License-Identifier: Apache-2.0
-- 0015_campaign_owner: the credential that created a campaign
-- (api_tokens.id); NULL for the coordinator's bootstrap token, an admin,
-- and every campaign created before 0015.  Only that credential, or an
-- admin, may stop the campaign or propose candidates into it: the red team
-- of 2026-12-01-s3b stopped another submitter's campaign and added a
-- proposal to it labelled "llm:gpt-5 (official)".
ALTER TABLE campaigns ADD COLUMN owner_cred bigint REFERENCES api_tokens (id);
