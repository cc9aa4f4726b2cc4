-- 005: forwarding to destination URLs, the counterpart of SQLite's 004: what each attempt got
-- back (additive columns) and one row per destination with the state every process shares
-- (operator state, circuit breaker, current rate window). Never edit after it lands.

ALTER TABLE attempts ADD COLUMN response_status integer;
ALTER TABLE attempts ADD COLUMN response_headers jsonb;
ALTER TABLE attempts ADD COLUMN response_body text;
ALTER TABLE attempts ADD COLUMN latency_ms integer;
ALTER TABLE attempts ADD COLUMN error_class text;

CREATE TABLE destinations (
  name         text    PRIMARY KEY,
  state        text    NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'disabled')),
  reason       text,
  changed_at   bigint,
  failures     integer NOT NULL DEFAULT 0,
  open_until   bigint,
  rate_window  bigint  NOT NULL DEFAULT 0,
  rate_count   integer NOT NULL DEFAULT 0
);

CREATE INDEX deliveries_target_id ON deliveries (target, id);
