-- 002: processing. One delivery per (event, target); its attempts; the highest version applied
-- per (target, ordering key); and the effect ledger. Never edit after it lands.

CREATE TABLE deliveries (
  id                TEXT    PRIMARY KEY NOT NULL,      -- dlv_<ulid>: sorts by creation (arrival) time
  event_id          TEXT    NOT NULL REFERENCES events (id),
  target            TEXT    NOT NULL,                  -- handler pattern ("stripe:invoice.*") or destination
  ordering_key      TEXT,                              -- copied from the event: claims never join
  -- Position within the ordering key: the event's version, or -1e308 when it has none, so that
  -- versionless deliveries of a key run first and in arrival order (then id breaks ties).
  order_version     REAL    NOT NULL,
  version           REAL,
  status            TEXT    NOT NULL CHECK (status IN ('pending', 'blocked', 'running', 'done', 'stale', 'dead')),
  run_at            INTEGER NOT NULL,                  -- due time (ms)
  attempts          INTEGER NOT NULL DEFAULT 0,        -- tries started, crashed ones included
  budget_base       INTEGER NOT NULL DEFAULT 0,        -- attempts when an operator last retried it
  lease_owner       TEXT,
  lease_expires_at  INTEGER,
  last_error        TEXT,
  blocks_key        INTEGER NOT NULL DEFAULT 0 CHECK (blocks_key IN (0, 1)),  -- dead and blocking its key
  is_replay         INTEGER NOT NULL DEFAULT 0 CHECK (is_replay IN (0, 1)),
  replay_of         TEXT,                              -- the delivery this one replays
  alerted_at        INTEGER,                           -- dead-letter alert confirmed
  created_at        INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL,
  completed_at      INTEGER
) STRICT;

-- Claims: due pending deliveries in due order. Partial, so done rows (the vast majority over
-- time) cost nothing here.
CREATE INDEX deliveries_due ON deliveries (run_at, id) WHERE status = 'pending';

-- The ordering-key discipline: "is anything ahead of me or in flight for my key?" and "who is
-- the next head?" are seeks on this index. Terminal deliveries (done, stale, non-blocking dead)
-- leave it.
CREATE INDEX deliveries_key_queue ON deliveries (target, ordering_key, order_version, id)
  WHERE ordering_key IS NOT NULL AND (status IN ('pending', 'blocked', 'running') OR blocks_key = 1);

-- The invariant itself, enforced by the database: one running delivery per target and key.
CREATE UNIQUE INDEX deliveries_one_running_per_key ON deliveries (target, ordering_key)
  WHERE status = 'running' AND ordering_key IS NOT NULL;

-- Lease rescue scans only running rows.
CREATE INDEX deliveries_running_lease ON deliveries (lease_expires_at) WHERE status = 'running';

-- An event's deliveries (event status, details, replay).
CREATE INDEX deliveries_event ON deliveries (event_id, status);

-- Listings (dead-letter queue and friends): newest first per status.
CREATE INDEX deliveries_status_id ON deliveries (status, id);

-- Dead letters whose alert is not confirmed yet.
CREATE INDEX deliveries_unalerted ON deliveries (id) WHERE status = 'dead' AND alerted_at IS NULL;

CREATE TABLE attempts (
  id             TEXT    PRIMARY KEY NOT NULL,         -- att_<ulid>
  delivery_id    TEXT    NOT NULL REFERENCES deliveries (id),
  attempt        INTEGER NOT NULL,
  worker_id      TEXT,
  started_at     INTEGER NOT NULL,
  ended_at       INTEGER,
  outcome        TEXT    NOT NULL CHECK (outcome IN ('running', 'success', 'stale', 'error', 'permanent', 'lease-expired', 'exhausted')),
  error_message  TEXT,
  error_stack    TEXT,
  CONSTRAINT attempts_delivery_attempt UNIQUE (delivery_id, attempt)
) STRICT;

-- The highest version completed per target and ordering key: the stale guard's reference.
CREATE TABLE applied_versions (
  target        TEXT NOT NULL,
  ordering_key  TEXT NOT NULL,
  version       REAL NOT NULL,
  PRIMARY KEY (target, ordering_key)
) STRICT, WITHOUT ROWID;

CREATE TABLE effects (
  id              TEXT    PRIMARY KEY NOT NULL,        -- eff_<ulid>
  event_id        TEXT    NOT NULL REFERENCES events (id),
  target          TEXT    NOT NULL,
  name            TEXT    NOT NULL,
  status          TEXT    NOT NULL CHECK (status IN ('processing', 'done', 'held')),
  on_stale        TEXT    NOT NULL CHECK (on_stale IN ('reclaim', 'hold')),
  stale_after_ms  INTEGER NOT NULL,
  claimant        TEXT,                                -- attempt id holding the claim
  claimed_at      INTEGER,
  claims          INTEGER NOT NULL DEFAULT 0,
  result          TEXT,                                -- JSON of what the effect returned
  completed_at    INTEGER,
  held_at         INTEGER,
  -- One ledger row per effect of one event and target: the claim is decided by this constraint.
  CONSTRAINT effects_event_target_name UNIQUE (event_id, target, name)
) STRICT;

CREATE INDEX effects_status ON effects (status, id) WHERE status <> 'done';
