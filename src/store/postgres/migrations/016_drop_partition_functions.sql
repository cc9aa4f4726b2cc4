-- 016: the PL/pgSQL of 009 and 011 goes; no measurement ever put it server-side.
--
-- 009's hookinbox_ulid_time and hookinbox_ulid_ms re-implemented src/ids.ts in PL/pgSQL, for
-- hookinbox_ensure_partitions, which the worker called about once an hour to make the day
-- partitions of the coming week, and the accept path called when a row found no partition. Both
-- paths now compute a day's bounds with src/ids.ts and run plain CREATE TABLE … PARTITION OF
-- (src/store/postgres/partitions.ts), so a bound changes with the code that mints the ids.
-- Partitions already made stay as they are (events_legacy too); the next ones are made by the
-- TypeScript path, with the same names and bounds. No default, trigger or view calls these
-- functions (they are only called from each other, from 009's own statements and from the
-- store's SQL), and plain DROP (no CASCADE) would fail rather than take a dependent object along.
--
-- 011's hookinbox_audit_append (one prefix for the whole batch) was kept by 012 for gateways of
-- the previous version during a rolling upgrade; since 014 accepts queue their leaves in
-- audit_pending and the sequencer appends them, nothing calls it. 012's
-- hookinbox_audit_append_leaves stays: retention records its batches through it
-- (retention-record.ts).
--
-- Processes of the previous version still running against an upgraded schema fail their hourly
-- partition upkeep (and retry it) until they are replaced; their accepts find the week of
-- partitions made ahead. Never edit after it lands.
DROP FUNCTION hookinbox_ensure_partitions(bigint);
DROP FUNCTION hookinbox_ulid_ms(text);
DROP FUNCTION hookinbox_ulid_time(bigint);
DROP FUNCTION hookinbox_audit_append(text[], bytea, bytea[]);
