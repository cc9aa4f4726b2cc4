-- 008: retention of whole events, receipts and rejected receipts (batched deletes through the
-- writer). retention_marks holds `events_before`: event ids below it were expired by
-- retention.events, so a leaf whose event row is gone below it was removed by retention, not by
-- tampering. Dedup keys live in events (UNIQUE (source, dedup_key)) as long as the event row,
-- which retention.events keeps at least retention.dedup. Never edit after it lands.

CREATE TABLE retention_marks (
  name   TEXT PRIMARY KEY NOT NULL,
  value  TEXT NOT NULL
) STRICT;
