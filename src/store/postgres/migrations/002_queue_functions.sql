-- 002: the queue's state changes as server-side functions, so that a claim of N deliveries or the
-- end of an attempt is one round trip whatever it touches. Later changes replace them in new
-- migrations (CREATE OR REPLACE); never edit this file after it lands.
--
-- Concurrency model (any number of worker processes on any number of machines):
-- - candidate rows are locked with FOR UPDATE SKIP LOCKED, so two claimers never take one row;
-- - every change that can alter "who may run next" for a (target, ordering key) takes a
--   transaction-scoped advisory lock on that key: claimers try it (and skip the key when another
--   transaction holds it), completions and failures wait for it. So a claimer that parks a
--   delivery as blocked and a completion that wakes the key's next head are serialised, and no
--   delivery can be left blocked with nothing ahead of it;
-- - the unique partial index deliveries_one_running_per_key backs "one running per key" up.

CREATE FUNCTION hookinbox_key_lock_id(p_target text, p_key text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT hashtextextended(p_target || chr(31) || p_key, 7031) $$;

CREATE FUNCTION hookinbox_wake_next_head(p_target text, p_key text, p_now bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_head record;
BEGIN
  IF p_key IS NULL THEN RETURN; END IF;
  PERFORM pg_advisory_xact_lock(hookinbox_key_lock_id(p_target, p_key));
  SELECT id, status INTO v_head FROM deliveries
  WHERE target = p_target AND ordering_key = p_key
    AND (status IN ('pending', 'blocked', 'running') OR blocks_key)
  ORDER BY order_version, id LIMIT 1;
  IF FOUND AND v_head.status = 'blocked' THEN
    UPDATE deliveries SET status = 'pending', updated_at = p_now WHERE id = v_head.id AND status = 'blocked';
  END IF;
END $$;

CREATE FUNCTION hookinbox_refresh_event(p_event_id text) RETURNS void
LANGUAGE sql AS $$
  UPDATE events SET status = CASE
    WHEN EXISTS (SELECT 1 FROM deliveries WHERE event_id = p_event_id AND status IN ('pending', 'blocked', 'running')) THEN 'pending'
    WHEN EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = p_event_id AND d.status = 'dead'
                 AND NOT EXISTS (SELECT 1 FROM deliveries r WHERE r.event_id = d.event_id AND r.target = d.target
                                 AND r.id > d.id AND r.status IN ('done', 'stale'))) THEN 'dead'
    ELSE 'done' END
  WHERE id = p_event_id
$$;

-- Leases up to p_limit due deliveries: the head of each ordering key with nothing in flight.
-- Deliveries with something ahead are parked as 'blocked' (woken by hookinbox_wake_next_head).
CREATE FUNCTION hookinbox_claim(p_worker text, p_limit integer, p_lease_ms bigint, p_now bigint, p_attempt_ids text[])
RETURNS TABLE (
  id text, event_id text, target text, attempt integer, budget_base integer, attempt_id text,
  lease_expires_at bigint, is_replay boolean, replay_of text, ordering_key text, version double precision,
  applied_version double precision
)
LANGUAGE plpgsql AS $$
DECLARE
  c record;
  v_claimed integer := 0;
  v_row record;
BEGIN
  FOR c IN
    SELECT d.id, d.target, d.ordering_key, d.order_version FROM deliveries d
    WHERE d.status = 'pending' AND d.run_at <= p_now
    ORDER BY d.run_at, d.id
    LIMIT greatest(p_limit * 4, 100)
    FOR UPDATE SKIP LOCKED
  LOOP
    EXIT WHEN v_claimed >= p_limit;
    IF c.ordering_key IS NOT NULL THEN
      -- Another transaction is changing this key right now: leave it to the next claim.
      CONTINUE WHEN NOT pg_try_advisory_xact_lock(hookinbox_key_lock_id(c.target, c.ordering_key));
      PERFORM 1 FROM deliveries o
      WHERE o.target = c.target AND o.ordering_key = c.ordering_key
        AND (o.status IN ('pending', 'blocked', 'running') OR o.blocks_key) AND o.id <> c.id
        AND (o.status = 'running' OR o.blocks_key OR o.order_version < c.order_version
             OR (o.order_version = c.order_version AND o.id < c.id))
      LIMIT 1;
      IF FOUND THEN
        UPDATE deliveries SET status = 'blocked', updated_at = p_now WHERE deliveries.id = c.id;
        CONTINUE;
      END IF;
    END IF;
    UPDATE deliveries d
    SET status = 'running', attempts = d.attempts + 1, lease_owner = p_worker,
        lease_expires_at = p_now + p_lease_ms, updated_at = p_now
    WHERE d.id = c.id
    RETURNING d.id, d.event_id, d.target, d.attempts, d.budget_base, d.is_replay, d.replay_of,
              d.ordering_key, d.version
    INTO v_row;
    v_claimed := v_claimed + 1;
    INSERT INTO attempts (id, delivery_id, attempt, worker_id, started_at, outcome)
    VALUES (p_attempt_ids[v_claimed], v_row.id, v_row.attempts, p_worker, p_now, 'running');
    id := v_row.id; event_id := v_row.event_id; target := v_row.target; attempt := v_row.attempts;
    budget_base := v_row.budget_base; attempt_id := p_attempt_ids[v_claimed];
    lease_expires_at := p_now + p_lease_ms; is_replay := v_row.is_replay; replay_of := v_row.replay_of;
    ordering_key := v_row.ordering_key; version := v_row.version;
    applied_version := NULL;
    IF v_row.ordering_key IS NOT NULL THEN
      SELECT a.version INTO applied_version FROM applied_versions a
      WHERE a.target = v_row.target AND a.ordering_key = v_row.ordering_key;
    END IF;
    RETURN NEXT;
  END LOOP;
END $$;

-- Ends the caller's attempt of a running delivery it still owns, as 'done' or 'stale'.
-- Returns false (and changes nothing) when the lease was lost.
CREATE FUNCTION hookinbox_complete(p_delivery text, p_worker text, p_attempt integer, p_now bigint, p_status text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v record;
BEGIN
  SELECT d.event_id, d.target, d.ordering_key, d.version INTO v FROM deliveries d
  WHERE d.id = p_delivery AND d.status = 'running' AND d.lease_owner = p_worker AND d.attempts = p_attempt
  FOR UPDATE;
  IF NOT FOUND THEN RETURN false; END IF;
  IF v.ordering_key IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hookinbox_key_lock_id(v.target, v.ordering_key));
  END IF;
  UPDATE deliveries SET status = p_status, lease_owner = NULL, lease_expires_at = NULL, last_error = NULL,
         completed_at = p_now, updated_at = p_now
  WHERE id = p_delivery;
  UPDATE attempts SET ended_at = p_now, outcome = CASE WHEN p_status = 'done' THEN 'success' ELSE 'stale' END
  WHERE delivery_id = p_delivery AND attempt = p_attempt;
  IF p_status = 'done' AND v.ordering_key IS NOT NULL AND v.version IS NOT NULL THEN
    INSERT INTO applied_versions (target, ordering_key, version) VALUES (v.target, v.ordering_key, v.version)
    ON CONFLICT (target, ordering_key) DO UPDATE SET version = greatest(applied_versions.version, excluded.version);
  END IF;
  PERFORM hookinbox_wake_next_head(v.target, v.ordering_key, p_now);
  PERFORM hookinbox_refresh_event(v.event_id);
  RETURN true;
END $$;

-- Ends the caller's attempt as a failure: a retry at p_retry_at, or (p_retry_at NULL) a dead
-- letter that keeps blocking its key when p_block_key. Returns NULL when the lease was lost,
-- else whether the delivery is now dead.
CREATE FUNCTION hookinbox_fail(
  p_delivery text, p_worker text, p_attempt integer, p_now bigint, p_message text, p_stack text,
  p_retry_at bigint, p_outcome text, p_block_key boolean
) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v record;
  v_blocks boolean;
BEGIN
  SELECT d.event_id, d.target, d.ordering_key INTO v FROM deliveries d
  WHERE d.id = p_delivery AND d.status = 'running' AND d.lease_owner = p_worker AND d.attempts = p_attempt
  FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  IF v.ordering_key IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hookinbox_key_lock_id(v.target, v.ordering_key));
  END IF;
  UPDATE attempts SET ended_at = p_now, outcome = p_outcome, error_message = p_message, error_stack = p_stack
  WHERE delivery_id = p_delivery AND attempt = p_attempt;
  IF p_retry_at IS NOT NULL THEN
    UPDATE deliveries SET status = 'pending', run_at = p_retry_at, lease_owner = NULL, lease_expires_at = NULL,
           last_error = p_message, updated_at = p_now
    WHERE id = p_delivery;
    RETURN false;
  END IF;
  v_blocks := p_block_key AND v.ordering_key IS NOT NULL;
  UPDATE deliveries SET status = 'dead', lease_owner = NULL, lease_expires_at = NULL, last_error = p_message,
         blocks_key = v_blocks, completed_at = p_now, updated_at = p_now
  WHERE id = p_delivery;
  IF NOT v_blocks THEN PERFORM hookinbox_wake_next_head(v.target, v.ordering_key, p_now); END IF;
  PERFORM hookinbox_refresh_event(v.event_id);
  RETURN true;
END $$;
