/**
 * The forwarding half of the Store contract: what a worker needs to deliver to destination URLs
 * on the same deliveries, leases and attempt log as handlers. One small table per store holds each
 * destination's operator state (active, paused, disabled), its circuit breaker and its rate
 * window, so that every process sharing a store (PostgreSQL) sees and enforces the same state.
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
  /** Failed attempts in a row (the circuit breaker's count). */
  readonly failures: number;
  /** The circuit is open (no attempts, one probe after) until this time (ms), or null when closed. */
  readonly openUntil: number | null;
}

/**
 * What one forwarding attempt got back: recorded on the attempt (additive columns), never the
 * request body. `status` is null when no response came (timeout, reset, DNS, refused address).
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
   * Takes the probe of an open circuit whose cool-down ended (exactly one caller across all
   * processes gets true); the circuit stays open for another `cooldownMs` while the probe runs.
   */
  takeProbe(name: string, now: number, cooldownMs: number): Promise<boolean>;
  /**
   * Records an attempt's result for the circuit breaker: success closes it; a failure counts, and
   * opens the circuit for `cooldownMs` at `threshold` failures in a row. Returns the new state.
   */
  recordCircuit(
    name: string,
    ok: boolean,
    now: number,
    threshold: number,
    cooldownMs: number,
  ): Promise<DestinationStateRow | null>;
  /**
   * Puts claimed deliveries back to pending until `runAt`, uncounted (their attempt is dropped),
   * when flow control says not now (paused, circuit open, concurrency or rate limit).
   */
  deferDeliveries(
    workerId: string,
    ids: readonly string[],
    runAt: number,
    now: number,
  ): Promise<number>;
  /** Adds what the destination answered to the attempt's record (before it is completed or failed). */
  recordAttemptResponse(
    deliveryId: string,
    attempt: number,
    response: AttemptResponse,
  ): Promise<void>;
}
