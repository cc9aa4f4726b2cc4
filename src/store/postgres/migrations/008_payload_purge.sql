-- 008: payload retention, the counterpart of SQLite's 007 (see it). Never edit after it lands.

ALTER TABLE events ADD COLUMN purged_at bigint;
ALTER TABLE events ADD COLUMN body_sha256 bytea;
ALTER TABLE events ADD COLUMN headers_sha256 bytea;
