-- Credentials of the callers of the coordinator (docs/security.md). Each is a
-- role and a name: an `agent` credential may ingest only as the agent of its
-- name; `read` may query; `gate` may query and evaluate gates; `admin` may do
-- everything. Only the SHA-256 of the secret part of a token is stored: the
-- token itself is shown once, when it is issued. key_id is the token's
-- public part, by which a presented token finds its row; the secret's hash
-- is then compared in constant time. A revoked credential keeps its row.
CREATE TABLE credentials (
  id            bigserial PRIMARY KEY,
  key_id        text NOT NULL UNIQUE,
  name          text NOT NULL,
  role          text NOT NULL CHECK (role IN ('agent', 'read', 'gate', 'admin')),
  secret_sha256 bytea NOT NULL CHECK (length(secret_sha256) = 32),
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz
);
CREATE INDEX credentials_name ON credentials (name) WHERE revoked_at IS NULL;
