-- 009: the circuit breaker of src/forward/circuit-policy.ts, the counterpart of PostgreSQL's 013.
-- destinations keeps what every process shares: the failure-rate window (two buckets of the
-- configured window: the one starting at window_start and the one before it), the half-open
-- circuit's trials, and, in `failures`, the down results (connect, timeout, reset, DNS) in a row.
-- deliveries.circuit_wait marks a pending delivery that waits for the destination's circuit:
-- postponed while it was open, or retrying after a "down" failure; closing the circuit makes
-- them due at once. Never edit after it lands.

ALTER TABLE destinations ADD COLUMN window_start    INTEGER NOT NULL DEFAULT 0;  -- bucket start (ms)
ALTER TABLE destinations ADD COLUMN window_calls    INTEGER NOT NULL DEFAULT 0;  -- calls in it
ALTER TABLE destinations ADD COLUMN window_failures INTEGER NOT NULL DEFAULT 0;  -- failures in it
ALTER TABLE destinations ADD COLUMN prev_calls      INTEGER NOT NULL DEFAULT 0;  -- the bucket before
ALTER TABLE destinations ADD COLUMN prev_failures   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN trials_taken    INTEGER NOT NULL DEFAULT 0;  -- half-open trials handed out
ALTER TABLE destinations ADD COLUMN trials_passed   INTEGER NOT NULL DEFAULT 0;  -- … and passed
ALTER TABLE destinations ADD COLUMN trials_until    INTEGER;                     -- unreported ones lapse then (ms)

ALTER TABLE deliveries ADD COLUMN circuit_wait INTEGER NOT NULL DEFAULT 0 CHECK (circuit_wait IN (0, 1));

-- The deliveries a closing circuit wakes, without reading the destination's history.
CREATE INDEX deliveries_circuit_wait ON deliveries (target, run_at)
  WHERE status = 'pending' AND circuit_wait = 1;
