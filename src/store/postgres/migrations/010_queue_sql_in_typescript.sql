-- 010: the queue's state changes (claim, complete, fail, wake the next head of a key, refresh an
-- event's status) moved from the PL/pgSQL functions of 002/003 into TypeScript SQL modules, one
-- per state change (src/store/postgres/queue/), run inside the driver's transaction, with the
-- ordering-key advisory-lock protocol unchanged and written down once (queue/key-locks.ts). A
-- rule now changes with the code that runs it, not through a CREATE OR REPLACE migration.
-- Never edit after it lands.
DROP FUNCTION hookinbox_claim(text, integer, bigint, bigint, text[]);
DROP FUNCTION hookinbox_complete(text, text, integer, bigint, text);
DROP FUNCTION hookinbox_fail(text, text, integer, bigint, text, text, bigint, text, boolean);
DROP FUNCTION hookinbox_wake_next_head(text, text, bigint);
DROP FUNCTION hookinbox_refresh_event(text);
DROP FUNCTION hookinbox_key_lock_id(text, text);
