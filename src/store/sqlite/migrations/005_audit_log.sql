-- 005: the tamper-evident log (src/audit/). Every event accepted while the log is on becomes one
-- leaf, appended in the accept transaction. Never edit after it lands.
--
-- audit_leaves: one row per leaf, by 0-based position. The hash is RFC 6962's leaf hash of the
--   canonical encoding in src/audit/leaf.ts (docs/audit.md), so it outlives a purged body.
-- audit_nodes: the hash of every perfect subtree (2^level leaves starting at idx × 2^level),
--   level ≥ 1, written when it closes (on average one row per append); heads and proofs are
--   folded from O(log² n) of them, never by rehashing the log.
-- audit_tree: the one row an append reads and rewrites: the size and the hashes of the perfect
--   subtrees along the right edge (32 bytes each, largest first), enough to append and give the
--   root without reading any node.
-- audit_heads: signed tree heads (Ed25519 over src/audit/tree-head.ts's encoding).

CREATE TABLE audit_leaves (
  seq       INTEGER PRIMARY KEY NOT NULL,
  event_id  TEXT    NOT NULL UNIQUE,
  hash      BLOB    NOT NULL
) STRICT;

CREATE TABLE audit_nodes (
  level  INTEGER NOT NULL,
  idx    INTEGER NOT NULL,
  hash   BLOB    NOT NULL,
  PRIMARY KEY (level, idx)
) STRICT, WITHOUT ROWID;

CREATE TABLE audit_tree (
  id        INTEGER PRIMARY KEY CHECK (id = 1),
  size      INTEGER NOT NULL,
  frontier  BLOB    NOT NULL
) STRICT;
INSERT INTO audit_tree (id, size, frontier) VALUES (1, 0, X'');

CREATE TABLE audit_heads (
  size        INTEGER NOT NULL,
  root        BLOB    NOT NULL,
  signed_at   INTEGER NOT NULL,                -- ms since the epoch
  public_key  TEXT    NOT NULL,                -- hex of the raw 32-byte Ed25519 key
  signature   BLOB    NOT NULL,
  PRIMARY KEY (size, signed_at)
) STRICT;
