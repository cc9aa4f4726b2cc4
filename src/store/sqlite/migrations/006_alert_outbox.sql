-- 006: the alert outbox. One row per alert to send to `alerts.webhook`: written in the same
-- transaction as the mark on the condition where the store holds it (a dead letter's
-- alerted_at), delivered by the worker until the receiver answers 2xx. `id` is the alert's
-- webhook-id on every attempt. Occurrences of one condition inside `alerts.window` fold into the
-- row that waits for the window to end (`count`). Never edit after it lands.

CREATE TABLE alert_outbox (
  id            TEXT    PRIMARY KEY NOT NULL,          -- alr_<ulid>: the webhook-id
  condition     TEXT    NOT NULL,                      -- what folds: dead-letter:<source>:<target>, …
  kind          TEXT    NOT NULL,                      -- dead-letter, effect-held, destination-disabled, threshold-crossed, threshold-recovered
  payload       TEXT    NOT NULL,                      -- JSON of the latest occurrence
  count         INTEGER NOT NULL DEFAULT 1,
  created_at    INTEGER NOT NULL,
  last_at       INTEGER NOT NULL,                      -- latest occurrence folded in
  slot_at       INTEGER NOT NULL,                      -- the earliest send: one window after the condition's previous alert
  due_at        INTEGER NOT NULL,                      -- next send attempt
  attempts      INTEGER NOT NULL DEFAULT 0,
  last_error    TEXT,
  delivered_at  INTEGER
) STRICT;

CREATE INDEX alert_outbox_condition ON alert_outbox (condition, slot_at);
CREATE INDEX alert_outbox_due ON alert_outbox (due_at) WHERE delivered_at IS NULL;
