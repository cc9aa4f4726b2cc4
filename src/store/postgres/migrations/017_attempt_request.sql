-- 017: what a forwarding attempt sent, the counterpart of SQLite's 010. Transforms
-- (docs/forwarding.md#transformations) reshape the request, so the attempt records the size and
-- SHA-256 (hex) of the body it sent (never the body), and `filtered` marks an attempt whose
-- transforms dropped the event: nothing sent, the delivery done. Columns with a constant default
-- (or none) are added without a table rewrite. Never edit after it lands.
ALTER TABLE attempts ADD COLUMN request_bytes integer;
ALTER TABLE attempts ADD COLUMN request_sha256 text;
ALTER TABLE attempts ADD COLUMN filtered boolean NOT NULL DEFAULT false;
