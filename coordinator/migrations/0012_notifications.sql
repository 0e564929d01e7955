-- Notifications (docs/notifications.md): webhook endpoints, each with the
-- events, branches and SKUs it wants, and an outbox of deliveries written in
-- the same transaction as the event that caused them, so that an event is
-- never stored without its notifications nor notified without being stored.

-- A glob as the policy file writes them ('*' any run of characters, the rest
-- literal), matched against a value.
CREATE FUNCTION perfgate_glob_match(pattern text, value text) RETURNS boolean
  LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT value LIKE replace(replace(replace(replace(pattern, '\', '\\'), '%', '\%'), '_', '\_'), '*', '%')
  $$;

-- Managed by `perfgate-coordinator webhooks add|list|remove`. The secret
-- signs each delivery (HMAC-SHA256), so it is kept as given, not hashed.
CREATE TABLE notification_endpoints (
  id         bigserial PRIMARY KEY,
  name       text NOT NULL UNIQUE,
  url        text NOT NULL,
  format     text NOT NULL CHECK (format IN ('json', 'slack')),
  secret     text NOT NULL,
  branch     text NOT NULL DEFAULT '*',
  sku        text NOT NULL DEFAULT '*',
  events     text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One row per event and endpoint. A row is pending until delivered, or
-- failed once its attempts ran out; a claim (claim_token, next_attempt_at
-- moved ahead by the lease) keeps other coordinators off it while one
-- delivers it (SELECT ... FOR UPDATE SKIP LOCKED).
CREATE TABLE notification_outbox (
  id              bigserial PRIMARY KEY,
  endpoint_id     bigint NOT NULL REFERENCES notification_endpoints (id) ON DELETE CASCADE,
  event_type      text NOT NULL
                  CHECK (event_type IN ('regression.new', 'regression.triage', 'gate.failed',
                                        'bisection.finished')),
  idempotency_key uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  payload         text NOT NULL,
  state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  last_error      text NOT NULL DEFAULT '',
  last_attempt_at timestamptz,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  claim_token     uuid,
  delivered_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notification_outbox_due ON notification_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX notification_outbox_endpoint ON notification_outbox (endpoint_id, id DESC);
