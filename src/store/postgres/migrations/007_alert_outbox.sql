-- 007: the alert outbox, the counterpart of SQLite's 006 (see it for what each column holds).
-- Never edit after it lands.

CREATE TABLE alert_outbox (
  id            text    PRIMARY KEY,
  condition     text    NOT NULL,
  kind          text    NOT NULL,
  payload       text    NOT NULL,
  count         integer NOT NULL DEFAULT 1,
  created_at    bigint  NOT NULL,
  last_at       bigint  NOT NULL,
  slot_at       bigint  NOT NULL,
  due_at        bigint  NOT NULL,
  attempts      integer NOT NULL DEFAULT 0,
  last_error    text,
  delivered_at  bigint
);

CREATE INDEX alert_outbox_condition ON alert_outbox (condition, slot_at);
CREATE INDEX alert_outbox_due ON alert_outbox (due_at) WHERE delivered_at IS NULL;
