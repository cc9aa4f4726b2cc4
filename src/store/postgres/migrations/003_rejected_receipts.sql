-- 003: newest-first listings of rejected requests (GET /api/receipts?rejected=true), per source
-- or overall, without scanning accepted receipts. Never edit after it lands.
CREATE INDEX receipts_rejected ON receipts (id) WHERE event_id IS NULL;
CREATE INDEX receipts_rejected_source ON receipts (source, id) WHERE event_id IS NULL;
