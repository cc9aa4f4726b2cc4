-- 009: retention by partition. events and receipts become range-partitioned by id, one
-- partition per UTC day (ids are evt_/rcp_ + a ULID whose first 10 characters encode the receive
-- time, so an id range is a time range and the primary key contains the partition key).
-- receipts is first split by `rejected` (LIST), so rejected and accepted receipts expire on their
-- own windows. Expiring old rows is DETACH + DROP of a day, never a table-wide DELETE.
--
-- Dedup can no longer be a UNIQUE (source, dedup_key) on events: PostgreSQL enforces a unique
-- constraint across partitions only when it contains the partition key. The keys move to
-- event_dedup, narrow and unpartitioned, whose primary key decides duplicates exactly across
-- every partition for as long as a key is kept (retention.dedup).
--
-- Foreign keys to events go: a day of events is dropped as a whole (its deliveries, attempts and
-- effects are deleted first by retention), and receipts expire on their own window.
-- Existing events become one partition (events_legacy, attached without copying); existing
-- receipts are copied into their days. Never edit after it lands.

-- The 10-character ULID time prefix of `ms` (as src/ids.ts encodes it); names no table.
CREATE FUNCTION hookinbox_ulid_time(ms bigint) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  out text := '';
  v bigint := greatest(ms, 0);
BEGIN
  FOR i IN 1..10 LOOP
    out := substr(alphabet, (v % 32)::int + 1, 1) || out;
    v := v / 32;
  END LOOP;
  RETURN out;
END $$;

-- The time (ms) in the first 10 ULID characters of an `xxx_<ulid>` id: the day it belongs to.
CREATE FUNCTION hookinbox_ulid_ms(id text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  part constant text := substr(id, strpos(id, '_') + 1, 10);
  ms bigint := 0;
BEGIN
  FOR i IN 1..10 LOOP
    ms := ms * 32 + greatest(strpos(alphabet, substr(part, i, 1)) - 1, 0);
  END LOOP;
  RETURN ms;
END $$;

-- Creates the day partitions (events, accepted and rejected receipts) of the UTC day holding
-- `at_ms`, unless they exist or the day is covered (events_legacy); returns how many it made.
CREATE FUNCTION hookinbox_ensure_partitions(at_ms bigint) RETURNS integer
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  lo constant bigint := (greatest(at_ms, 0) / 86400000) * 86400000;
  suffix constant text := to_char(to_timestamp(lo / 1000) AT TIME ZONE 'UTC', 'YYYYMMDD');
  a constant text := hookinbox_ulid_time(lo);
  b constant text := hookinbox_ulid_time(lo + 86400000);
  made integer := 0;
  spec record;
BEGIN
  FOR spec IN SELECT * FROM (VALUES ('events', 'evt_'), ('receipts_accepted', 'rcp_'),
                                     ('receipts_rejected', 'rcp_')) AS s (parent, id_prefix) LOOP
    IF to_regclass(spec.parent || '_p' || suffix) IS NULL THEN
      BEGIN
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                       spec.parent || '_p' || suffix, spec.parent, spec.id_prefix || a, spec.id_prefix || b);
        made := made + 1;
      EXCEPTION WHEN invalid_object_definition OR duplicate_table OR unique_violation THEN
        NULL; -- covered by another partition, or made by a concurrent caller
      END;
    END IF;
  END LOOP;
  RETURN made;
END $$;

CREATE TABLE event_dedup (
  source       text   NOT NULL,
  dedup_key    text   NOT NULL,
  event_id     text   NOT NULL,
  received_at  bigint NOT NULL,
  PRIMARY KEY (source, dedup_key)
);
INSERT INTO event_dedup (source, dedup_key, event_id, received_at)
  SELECT source, dedup_key, id, received_at FROM events;
CREATE INDEX event_dedup_received_at ON event_dedup (received_at);

-- events_before: event ids below it were expired by retention.events (see audit verify).
CREATE TABLE retention_marks (
  name   text PRIMARY KEY,
  value  text NOT NULL
);

ALTER TABLE receipts DROP CONSTRAINT receipts_event_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_fkey;
ALTER TABLE effects DROP CONSTRAINT effects_event_id_fkey;

ALTER TABLE events RENAME TO events_legacy;
ALTER TABLE events_legacy DROP CONSTRAINT events_source_dedup_key;
ALTER INDEX events_pkey RENAME TO events_legacy_pkey;
ALTER INDEX events_source_id RENAME TO events_legacy_source_id;
ALTER INDEX events_type_id RENAME TO events_legacy_type_id;
ALTER INDEX events_status_id RENAME TO events_legacy_status_id;
ALTER INDEX events_source_type_id RENAME TO events_legacy_source_type_id;
ALTER INDEX events_source_status_id RENAME TO events_legacy_source_status_id;

CREATE TABLE events (LIKE events_legacy INCLUDING DEFAULTS) PARTITION BY RANGE (id);
ALTER TABLE events ADD PRIMARY KEY (id);
CREATE INDEX events_source_id        ON events (source, id);
CREATE INDEX events_type_id          ON events (type, id);
CREATE INDEX events_status_id        ON events (status, id);
CREATE INDEX events_source_type_id   ON events (source, type, id);
CREATE INDEX events_source_status_id ON events (source, status, id);

-- The legacy rows stay where they are, as the partition of every id before the next UTC midnight.
DO $$
DECLARE
  hi text;
BEGIN
  IF EXISTS (SELECT 1 FROM events_legacy) THEN
    SELECT 'evt_' || hookinbox_ulid_time(
             (greatest(hookinbox_ulid_ms(max(id)), (extract(epoch FROM now()) * 1000)::bigint) / 86400000 + 1) * 86400000)
      INTO hi FROM events_legacy;
    EXECUTE format('ALTER TABLE events ATTACH PARTITION events_legacy FOR VALUES FROM (MINVALUE) TO (%L)', hi);
  ELSE
    DROP TABLE events_legacy;
  END IF;
END $$;

ALTER TABLE receipts RENAME TO receipts_legacy;
ALTER INDEX receipts_pkey RENAME TO receipts_legacy_pkey;
ALTER INDEX receipts_event_id_received_at RENAME TO receipts_legacy_event_id_received_at;
ALTER INDEX receipts_rejected RENAME TO receipts_legacy_rejected;
ALTER INDEX receipts_rejected_source RENAME TO receipts_legacy_rejected_source;

CREATE TABLE receipts (
  LIKE receipts_legacy INCLUDING DEFAULTS,
  rejected  boolean NOT NULL DEFAULT false
) PARTITION BY LIST (rejected);
ALTER TABLE receipts ADD PRIMARY KEY (id, rejected);
CREATE TABLE receipts_accepted PARTITION OF receipts FOR VALUES IN (false) PARTITION BY RANGE (id);
CREATE TABLE receipts_rejected PARTITION OF receipts FOR VALUES IN (true) PARTITION BY RANGE (id);
CREATE INDEX receipts_event_id_received_at ON receipts (event_id, received_at, id) WHERE event_id IS NOT NULL;
CREATE INDEX receipts_rejected_source ON receipts (source, id) WHERE event_id IS NULL;

-- Rows go by id, so the days come from the ids (an id's time can be a moment after its receipt's).
SELECT hookinbox_ensure_partitions(day)
  FROM (SELECT DISTINCT hookinbox_ulid_ms(id) / 86400000 * 86400000 AS day FROM receipts_legacy) AS days;
INSERT INTO receipts SELECT *, event_id IS NULL FROM receipts_legacy;
DROP TABLE receipts_legacy;

-- Today and the coming week, so the first accepts find their partitions (the worker keeps a week
-- ahead from then on).
SELECT hookinbox_ensure_partitions((extract(epoch FROM now()) * 1000)::bigint + d * 86400000)
  FROM generate_series(-1, 7) AS d;
