-- Webhook deliveries that may reach private addresses (docs/notifications.md,
-- "Which addresses a webhook may reach"): an endpoint whose receiver is on a
-- loopback, private or link-local address must say so when it is added
-- (`webhooks add --allow-private`); every other endpoint is posted to only
-- when each address its host resolves to is public. Endpoints stored before
-- this migration get false: one that posts to a private receiver is
-- refused, with that reason in the outbox, until it is added again with
-- the flag.
ALTER TABLE notification_endpoints ADD COLUMN allow_private boolean NOT NULL DEFAULT false;

-- Errors recorded before this migration quoted the endpoint's URL (a secret
-- path, a password) and the first bytes of the receiver's answer, and the
-- read role can list them; they are withheld. The next attempt records a
-- new one that names the endpoint only.
UPDATE notification_outbox
   SET last_error = 'an error recorded before migration 0013, withheld: it could quote the URL'
 WHERE last_error <> '';
