-- 004: hookinbox's connections no longer set search_path (a handler's ctx.transaction must
-- resolve the user's tables as the user's own connection would), so the functions of 002 and 003,
-- whose bodies name tables bare, pin their own path to the schema they live in. The runner
-- applies this with search_path set to the store's schema, which FROM CURRENT captures.
-- hookinbox_key_lock_id names no table and stays inlinable. Never edit after it lands.
ALTER FUNCTION hookinbox_wake_next_head(text, text, bigint) SET search_path FROM CURRENT;
ALTER FUNCTION hookinbox_refresh_event(text) SET search_path FROM CURRENT;
ALTER FUNCTION hookinbox_claim(text, integer, bigint, bigint, text[]) SET search_path FROM CURRENT;
ALTER FUNCTION hookinbox_complete(text, text, integer, bigint, text) SET search_path FROM CURRENT;
ALTER FUNCTION hookinbox_fail(text, text, integer, bigint, text, text, bigint, text, boolean) SET search_path FROM CURRENT;
