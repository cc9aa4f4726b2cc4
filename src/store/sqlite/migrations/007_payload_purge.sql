-- 007: payload retention. A purged event keeps its row, its leaf and the SHA-256 digests of the
-- body and canonical headers it had, so its leaf (and every proof) can still be recomputed;
-- body and headers are emptied and purged_at says when. Never edit after it lands.

ALTER TABLE events ADD COLUMN purged_at INTEGER;
ALTER TABLE events ADD COLUMN body_sha256 BLOB;
ALTER TABLE events ADD COLUMN headers_sha256 BLOB;
