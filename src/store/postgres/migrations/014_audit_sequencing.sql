-- 014: the audit log is sequenced instead of locked on the accept's hot path, as Certificate
-- Transparency logs (Trillian) do. The accept transaction stores each new leaf's content
-- unsequenced in audit_pending (so a 2xx still means the leaf is durably queued for the log); one
-- sequencer at a time (the lease in audit_sequencer, held by one gateway process) numbers the
-- pending leaves in the order they were queued, extends the tree and deletes them from pending in
-- one transaction under audit_tree's row lock (src/store/postgres/audit-sequence.ts). Within
-- `audit.maxMergeDelay` of its accept a leaf is in the tree. Leaves queued before this migration
-- do not exist: every earlier accept appended directly. Never edit after it lands.

CREATE TABLE audit_pending (
  -- Queue order: an event's leaf is queued (committed) before any duplicate receipt of it.
  n        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- No index of its own (one less per accept): audit_leaves.event_id's unique index refuses a
  -- leaf sequenced twice, and the few lookups by id scan a table the sequencer keeps small.
  leaf_id  text   NOT NULL,
  -- The RFC 6962 leaf prefix 0x00 and the encoding's version byte; the encoding after its seq.
  prefix   bytea  NOT NULL,
  rest     bytea  NOT NULL
);

CREATE TABLE audit_sequencer (
  id          integer PRIMARY KEY CHECK (id = 1),
  holder      text,
  expires_at  bigint  NOT NULL
);
INSERT INTO audit_sequencer (id, holder, expires_at) VALUES (1, NULL, 0);
