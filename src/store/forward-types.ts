/**
 * The forwarding half of the Store contract: what a worker needs to deliver to destination URLs
 * on the same deliveries, leases and attempt log as handlers. One small table per store holds each
 * destination's operator state (active, paused, disabled), its circuit breaker's counters and its
 * rate window, so that every process sharing a store (PostgreSQL) sees and enforces the same
 * state. The stores keep and atomically update the breaker's counters; what they mean (when to
 * open, close or reopen) is decided in src/forward/circuit-policy.ts.
 */

import type { AlertRecord } from "./alert-types.ts";

/** `active` delivers; `paused` (an operator) and `disabled` (the destination answered 410) wait. */
export type DestinationState = "active" | "paused" | "disabled";

/** One destination's shared state as the store keeps it. */
export interface DestinationStateRow {
  readonly name: string;
  readonly state: DestinationState;
  /** Why it is paused or disabled (e.g. "410 Gone from the destination"), or null. */
  readonly reason: string | null;
  /** When the state last changed (ms), or null when it never did. */
  readonly changedAt: number | null;
  /** Down results in a row: connect, timeout, reset or DNS failures (the circuit breaker's run). */
  readonly failures: number;
  /**
   * The circuit is open (no attempts) until this time (ms), then half-open (its trials run) until
   * it closes (null) or opens again (a later time).
   */
  readonly openUntil: number | null;
  /** The failure-rate window: the bucket starting at `start` and the one before it. */
  readonly window: {
    readonly start: number;
    readonly calls: number;
    readonly failures: number;
    readonly prevCalls: number;
    readonly prevFailures: number;
  };
  /** The half-open circuit's trials: handed out, passed, and when unreported ones lapse (ms). */
  readonly trials: {
    readonly taken: number;
    readonly passed: number;
    readonly until: number | null;
  };
}

/**
 * Results to add to a destination's breaker counters, in the order they came
 * (src/forward/circuit-policy.ts's CallCounts).
 */
export interface CircuitCalls {
  readonly calls: number;
  /** Failures among them (down ones included). */
  readonly failures: number;
  /** Down results after the last result that was not down (or after the stored run, without one). */
  readonly downs: number;
  /** A result that was not down came before those `downs`: the stored run starts over. */
  readonly brokeRun: boolean;
}

/**
 * What one forwarding attempt sent and got back: recorded on the attempt (additive columns),
 * never the request body. `status` is null when no response came (timeout, reset, DNS, refused address).
 */
export interface AttemptResponse {
  readonly status: number | null;
  /** Selected response headers (lower-case names), or null. */
  readonly headers: Readonly<Record<string, string>> | null;
  /** The first 4 KB of the response body, decoded as UTF-8 (lossy), or null. */
  readonly body: string | null;
  readonly latencyMs: number;
  /** `http-status`, `timeout`, `connect`, `reset`, `dns`, `address-refused`, `redirect`, … or null on success. */
  readonly errorClass: string | null;
  /** What was sent: the body's size and SHA-256 (hex), after transforms; null when nothing was. */
  readonly request?: { readonly bytes: number; readonly sha256: string } | null;
  /** The transforms dropped the event for this target: nothing was sent and the delivery is done. */
  readonly filtered?: boolean;
}

/** The store operations forwarding adds (both stores implement them). */
export interface DestinationStore {
  /** Makes sure every named destination has a state row (idempotent; boot). */
  ensureDestinations(names: readonly string[]): Promise<void>;
  listDestinationStates(): Promise<DestinationStateRow[]>;
  /**
   * Sets a destination's operator state. Back to `active` also closes its circuit and makes its
   * parked pending deliveries due now. Null when no such destination row exists. `alert` is
   * recorded in the same transaction when the state was set (so a disabling never commits
   * without its alert).
   */
  setDestinationState(
    name: string,
    state: DestinationState,
    reason: string | null,
    now: number,
    alert?: AlertRecord,
  ): Promise<DestinationStateRow | null>;
  /** Running deliveries per target (claimed ones included), for the cross-process concurrency cap. */
  countRunning(targets: readonly string[]): Promise<Record<string, number>>;
  /**
   * Takes one slot of the destination's rate window starting at `windowStart` when fewer than
   * `limit` were taken in it; false when the window is full.
   */
  takeRateSlot(name: string, windowStart: number, limit: number): Promise<boolean>;
  /**
   * Adds `calls` to the destination's breaker counters in one atomic update: the window bucket
   * moves to `windowStart` first (the current bucket becomes the previous one when `windowStart`
   * is the next bucket; both empty when it is later), then the calls are counted in it and the
   * down run grows or starts over. Returns the new state (null: no such destination).
   */
  recordCalls(
    name: string,
    calls: CircuitCalls,
    windowStart: number,
    windowMs: number,
  ): Promise<DestinationStateRow | null>;
  /**
   * Opens the circuit until `until` when its `open_until` is still `expected` (null: closed, so
   * only one of the processes that saw the same failures opens it; a time: the half-open period
   * whose trial failed), with no trials. Returns the new state, or null when something else
   * changed it first.
   */
  openCircuit(
    name: string,
    until: number,
    expected: number | null,
  ): Promise<DestinationStateRow | null>;
  /**
   * Takes one trial of the half-open circuit open until `openUntil` (≤ `now`): true for at most
   * `limit` callers across all processes, counting passed trials and running ones; trials not
   * reported by `holdUntil` lapse (their slots are handed out again, passes are kept). Also
   * returns the circuit's current `openUntil` (null: closed since).
   */
  takeTrial(
    name: string,
    openUntil: number,
    now: number,
    limit: number,
    holdUntil: number,
  ): Promise<{ taken: boolean; openUntil: number | null }>;
  /**
   * Reports one trial of the half-open period `openUntil`: `passed` counts it, otherwise its slot
   * is handed back (the attempt said nothing about the destination). Returns the new state, or
   * null when the period is over (closed or reopened).
   */
  endTrial(name: string, openUntil: number, passed: boolean): Promise<DestinationStateRow | null>;
  /**
   * Closes the circuit of the half-open period `openUntil` and starts its counters over; in the
   * same transaction every pending delivery of the destination marked as waiting for it
   * (postponed by the breaker, or retrying after a "down" failure) is due at `now` and unmarked.
   * Returns how many were woken, or null when the period was over already.
   */
  closeCircuit(name: string, openUntil: number, now: number): Promise<number | null>;
  /**
   * Makes up to `limit` of the destination's pending deliveries waiting for its circuit due at
   * `now` (earliest first), still marked: they fill a half-open circuit's free trial slots.
   */
  wakeCircuitWaiting(name: string, now: number, limit: number): Promise<number>;
  /**
   * Puts claimed deliveries back to pending until `runAt`, uncounted (their attempt and its row
   * are undone), when flow control says not now (paused, circuit open, concurrency or rate
   * limit). `circuit`: postponed by the circuit breaker, so marked to be due at once when the
   * circuit closes (otherwise unmarked).
   */
  deferDeliveries(
    workerId: string,
    ids: readonly string[],
    runAt: number,
    now: number,
    circuit?: boolean,
  ): Promise<number>;
}
