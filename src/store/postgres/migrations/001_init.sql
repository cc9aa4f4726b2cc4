-- 001: the whole PostgreSQL schema, the counterpart of SQLite's 001 + 002: events (unique per
-- source and dedup key), receipts, deliveries, attempts, applied versions, effects. Never edit
-- after it lands. Times are bigint milliseconds since the epoch, as in the SQLite store, so both
-- stores share one clock model (the caller passes `now`).

CREATE TABLE events (
  id            text    PRIMARY KEY,
  source        text    NOT NULL,
  dedup_key     text    NOT NULL,
  type          text,
  occurred_at   bigint,
  ordering_key  text,
  version       double precision,
  status        text    NOT NULL DEFAULT 'received',
  received_at   bigint  NOT NULL,
  body          bytea   NOT NULL,
  headers       jsonb   NOT NULL,
  secret_index  integer,
  -- The only dedup mechanism, across every gateway process and machine.
  CONSTRAINT events_source_dedup_key UNIQUE (source, dedup_key)
);

-- Newest-first pages with equality filters: one backwards index range scan per page.
CREATE INDEX events_source_id        ON events (source, id);
CREATE INDEX events_type_id          ON events (type, id);
CREATE INDEX events_status_id        ON events (status, id);
CREATE INDEX events_source_type_id   ON events (source, type, id);
CREATE INDEX events_source_status_id ON events (source, status, id);

CREATE TABLE receipts (
  id              text    PRIMARY KEY,
  event_id        text    REFERENCES events (id),
  source          text    NOT NULL,
  received_at     bigint  NOT NULL,
  duplicate       boolean NOT NULL DEFAULT false,
  remote_address  text,
  status          integer,
  code            text,
  size            integer,
  header_names    jsonb,
  secret_index    integer
);
CREATE INDEX receipts_event_id_received_at ON receipts (event_id, received_at, id) WHERE event_id IS NOT NULL;
-- Newest-first listings of rejected requests, overall and per source.
CREATE INDEX receipts_rejected ON receipts (id) WHERE event_id IS NULL;
CREATE INDEX receipts_rejected_source ON receipts (source, id) WHERE event_id IS NULL;

CREATE TABLE hookinbox_heartbeat (
  id  integer PRIMARY KEY CHECK (id = 1),
  at  bigint  NOT NULL
);

CREATE TABLE deliveries (
  id                text     PRIMARY KEY,
  event_id          text     NOT NULL REFERENCES events (id),
  target            text     NOT NULL,
  ordering_key      text,
  order_version     double precision NOT NULL,
  version           double precision,
  status            text     NOT NULL CHECK (status IN ('pending', 'blocked', 'running', 'done', 'stale', 'dead')),
  run_at            bigint   NOT NULL,
  attempts          integer  NOT NULL DEFAULT 0,
  budget_base       integer  NOT NULL DEFAULT 0,
  lease_owner       text,
  lease_expires_at  bigint,
  last_error        text,
  blocks_key        boolean  NOT NULL DEFAULT false,
  is_replay         boolean  NOT NULL DEFAULT false,
  replay_of         text,
  alerted_at        bigint,
  created_at        bigint   NOT NULL,
  updated_at        bigint   NOT NULL,
  completed_at      bigint
);

-- Claims read due pending rows in due order; partial so done rows cost nothing here.
CREATE INDEX deliveries_due ON deliveries (run_at, id) WHERE status = 'pending';
-- "Anything ahead of me or in flight for my key?" and "who is the next head?".
CREATE INDEX deliveries_key_queue ON deliveries (target, ordering_key, order_version, id)
  WHERE ordering_key IS NOT NULL AND (status IN ('pending', 'blocked', 'running') OR blocks_key);
-- The invariant, enforced cluster-wide by the database: one running delivery per target and key.
CREATE UNIQUE INDEX deliveries_one_running_per_key ON deliveries (target, ordering_key)
  WHERE status = 'running' AND ordering_key IS NOT NULL;
CREATE INDEX deliveries_running_lease ON deliveries (lease_expires_at) WHERE status = 'running';
CREATE INDEX deliveries_event ON deliveries (event_id, status);
CREATE INDEX deliveries_status_id ON deliveries (status, id);
CREATE INDEX deliveries_unalerted ON deliveries (id) WHERE status = 'dead' AND alerted_at IS NULL;

CREATE TABLE attempts (
  id             text    PRIMARY KEY,
  delivery_id    text    NOT NULL REFERENCES deliveries (id),
  attempt        integer NOT NULL,
  worker_id      text,
  started_at     bigint  NOT NULL,
  ended_at       bigint,
  outcome        text    NOT NULL CHECK (outcome IN ('running', 'success', 'stale', 'error', 'permanent', 'lease-expired', 'exhausted')),
  error_message  text,
  error_stack    text,
  CONSTRAINT attempts_delivery_attempt UNIQUE (delivery_id, attempt)
);

CREATE TABLE applied_versions (
  target        text NOT NULL,
  ordering_key  text NOT NULL,
  version       double precision NOT NULL,
  PRIMARY KEY (target, ordering_key)
);

CREATE TABLE effects (
  id              text    PRIMARY KEY,
  event_id        text    NOT NULL REFERENCES events (id),
  target          text    NOT NULL,
  name            text    NOT NULL,
  status          text    NOT NULL CHECK (status IN ('processing', 'done', 'held')),
  on_stale        text    NOT NULL CHECK (on_stale IN ('reclaim', 'hold')),
  stale_after_ms  bigint  NOT NULL,
  claimant        text,
  claimed_at      bigint,
  claims          integer NOT NULL DEFAULT 0,
  result          jsonb,
  completed_at    bigint,
  held_at         bigint,
  CONSTRAINT effects_event_target_name UNIQUE (event_id, target, name)
);
CREATE INDEX effects_status ON effects (status, id) WHERE status <> 'done';
