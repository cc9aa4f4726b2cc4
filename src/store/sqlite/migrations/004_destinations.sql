-- 004: forwarding to destination URLs. Each attempt may record what the destination answered
-- (additive columns); one row per destination holds the state every process shares: operator
-- state, circuit breaker and the current rate window. Never edit after it lands.

ALTER TABLE attempts ADD COLUMN response_status INTEGER;
ALTER TABLE attempts ADD COLUMN response_headers TEXT;     -- JSON object of selected headers
ALTER TABLE attempts ADD COLUMN response_body TEXT;        -- first 4 KB, UTF-8 (lossy)
ALTER TABLE attempts ADD COLUMN latency_ms INTEGER;
ALTER TABLE attempts ADD COLUMN error_class TEXT;

CREATE TABLE destinations (
  name         TEXT    PRIMARY KEY NOT NULL,
  state        TEXT    NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'disabled')),
  reason       TEXT,
  changed_at   INTEGER,
  failures     INTEGER NOT NULL DEFAULT 0,               -- failed attempts in a row
  open_until   INTEGER,                                  -- circuit open until (ms), NULL when closed
  rate_window  INTEGER NOT NULL DEFAULT 0,               -- start of the current rate window (ms)
  rate_count   INTEGER NOT NULL DEFAULT 0                -- attempts started in it
) STRICT;

-- Deliveries per target, newest first (a destination's deliveries in the API and CLI).
CREATE INDEX deliveries_target_id ON deliveries (target, id);
