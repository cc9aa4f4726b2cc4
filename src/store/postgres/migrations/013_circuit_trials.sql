-- 013: the circuit breaker of src/forward/circuit-policy.ts, the counterpart of SQLite's 009.
-- destinations keeps what every process shares: the failure-rate window (two buckets of the
-- configured window: the one starting at window_start and the one before it), the half-open
-- circuit's trials, and, in `failures`, the down results (connect, timeout, reset, DNS) in a row.
-- deliveries.circuit_wait marks a pending delivery that waits for the destination's circuit:
-- postponed while it was open, or retrying after a "down" failure; closing the circuit makes
-- them due at once. Never edit after it lands.

ALTER TABLE destinations ADD COLUMN window_start    bigint  NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN window_calls    integer NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN window_failures integer NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN prev_calls      integer NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN prev_failures   integer NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN trials_taken    integer NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN trials_passed   integer NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN trials_until    bigint;

-- A constant default: no table rewrite.
ALTER TABLE deliveries ADD COLUMN circuit_wait boolean NOT NULL DEFAULT false;

-- The deliveries a closing circuit wakes, without reading the destination's history.
CREATE INDEX deliveries_circuit_wait ON deliveries (target, run_at)
  WHERE status = 'pending' AND circuit_wait;
