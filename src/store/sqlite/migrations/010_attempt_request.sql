-- 010: what a forwarding attempt sent, the counterpart of PostgreSQL's 017. Transforms
-- (docs/forwarding.md#transformations) reshape the request, so the attempt records the size and
-- SHA-256 (hex) of the body it sent (never the body), and `filtered` marks an attempt whose
-- transforms dropped the event: nothing sent, the delivery done. Never edit after it lands.

ALTER TABLE attempts ADD COLUMN request_bytes  INTEGER;
ALTER TABLE attempts ADD COLUMN request_sha256 TEXT;
ALTER TABLE attempts ADD COLUMN filtered       INTEGER NOT NULL DEFAULT 0 CHECK (filtered IN (0, 1));
