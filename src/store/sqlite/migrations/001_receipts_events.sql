-- 001: events (one row per unique (source, dedup key)), receipts (one row per HTTP request that
-- arrived: accepted, duplicate or rejected) and the heartbeat row that ping() rewrites.
-- Never edit this file after it lands; add 002_… instead.
--
-- Times are INTEGER milliseconds since the epoch. Tables are STRICT so a wrongly typed bind is an
-- error instead of a silently coerced value.

CREATE TABLE events (
  id            TEXT    PRIMARY KEY NOT NULL,          -- evt_<ulid>: sorts by creation time
  source        TEXT    NOT NULL,
  dedup_key     TEXT    NOT NULL,                      -- the provider's event id (or documented synthetic key)
  type          TEXT,
  occurred_at   INTEGER,
  ordering_key  TEXT,
  version       REAL,                                  -- monotonic provider field; integers up to 2^53 are exact
  status        TEXT    NOT NULL DEFAULT 'received',
  received_at   INTEGER NOT NULL,                      -- first receipt's time
  body          BLOB    NOT NULL,                      -- raw bytes, verbatim
  headers       TEXT    NOT NULL,                      -- JSON [[name, value], …] in arrival order, names as sent
  secret_index  INTEGER,
  -- The ONLY dedup mechanism: concurrent duplicates are decided by this constraint, never by a
  -- check-then-insert.
  CONSTRAINT events_source_dedup_key UNIQUE (source, dedup_key)
) STRICT;

-- Newest-first listings are `ORDER BY id DESC` with `id < cursor`. Each index below ends in `id`
-- so that a page with equality filters on its leading columns is one backwards range scan that
-- stops after `limit` rows (no table scan, no sort):
--   no filter            → the primary key index
--   source               → events_source_id
--   type                 → events_type_id
--   status               → events_status_id
--   source + type        → events_source_type_id
--   source + status      → events_source_status_id
-- The two rarer combinations (type + status, source + type + status) range-scan one of these
-- indexes and filter the remaining column; still no table scan and no sort. Every index costs
-- a b-tree insert on the hot path, so the list stops here.
CREATE INDEX events_source_id        ON events (source, id);
CREATE INDEX events_type_id          ON events (type, id);
CREATE INDEX events_status_id        ON events (status, id);
CREATE INDEX events_source_type_id   ON events (source, type, id);
CREATE INDEX events_source_status_id ON events (source, status, id);

CREATE TABLE receipts (
  id              TEXT    PRIMARY KEY NOT NULL,        -- rcp_<ulid>
  event_id        TEXT    REFERENCES events (id),      -- NULL for rejections
  source          TEXT    NOT NULL,
  received_at     INTEGER NOT NULL,
  duplicate       INTEGER NOT NULL DEFAULT 0 CHECK (duplicate IN (0, 1)),
  remote_address  TEXT,
  status          INTEGER,                             -- HTTP status of a rejection
  code            TEXT,                                -- HOOKINBOX_* code of a rejection
  size            INTEGER,                             -- body size in bytes
  header_names    TEXT,                                -- JSON [name, …], rejections only (never values)
  secret_index    INTEGER
) STRICT;

-- Receipts of one event, in received order; also serves the per-row receiptCount of a page.
-- Partial: rejections (event_id NULL), which can be plentiful under attack, stay out of it.
CREATE INDEX receipts_event_id_received_at ON receipts (event_id, received_at, id)
  WHERE event_id IS NOT NULL;

-- One row, rewritten by ping() so /readyz proves a real write and commit.
CREATE TABLE hookinbox_heartbeat (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  at  INTEGER NOT NULL
) STRICT;
