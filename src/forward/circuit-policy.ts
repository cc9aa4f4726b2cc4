/**
 * The circuit breaker's decisions, pure: what one attempt's answer means (healthy, a failure, or
 * "down"), when a closed circuit opens, and what a half-open circuit does after a trial. The
 * stores only keep and atomically update the counters these read (src/store/forward-types.ts);
 * the forwarder (forwarder.ts) asks here and writes there.
 *
 * The policy, in short:
 * - A destination that answers is up. 2xx, 3xx and 4xx (the app rejected this payload) are
 *   healthy; 5xx, 408, 429, timeouts and network errors are failures. Only a connect failure,
 *   a timeout, a reset or a DNS failure is "down".
 * - A closed circuit opens when the failures over the last `window` reach `failureRate` with at
 *   least `minCalls` calls in it (a flaky app that still answers most of the time keeps its
 *   traffic), or at `downInRow` down results in a row (an app that is not there at all).
 * - Open: nothing is sent for `cooldown`; deliveries are postponed, uncounted.
 * - Half-open: `trials` attempts go through, shared by every process. They all succeed: the
 *   circuit closes and everything it postponed, with the retries a "down" failure pushed out, is
 *   due at once. One fails: open again for another `cooldown`.
 *
 * The window is two fixed buckets of `window` each, the current one and the one before, the
 * previous one weighted by how much of it still overlaps the sliding window (the usual sliding
 * window counter): five small integers per destination, updated in one statement.
 */

/** The breaker's settings (`destinations.<name>.circuitBreaker`), durations in ms. */
export interface CircuitPolicy {
  /** Failures over calls in the window at which a closed circuit opens (0 < rate ≤ 1). */
  readonly failureRate: number;
  readonly windowMs: number;
  /** Fewer calls than this in the window never open the circuit by rate. */
  readonly minCalls: number;
  /** Down results (connect, timeout, reset, DNS) in a row that open the circuit. */
  readonly downInRow: number;
  /** How long an open circuit sends nothing before its trials. */
  readonly cooldownMs: number;
  /** Attempts a half-open circuit lets through, across every process; all must succeed. */
  readonly trials: number;
}

/** The defaults: 85% failures over 30 s with at least 50 calls, or 5 down in a row; 5 s; 3 trials. */
export const defaultCircuitPolicy: CircuitPolicy = {
  failureRate: 0.85,
  windowMs: 30_000,
  minCalls: 50,
  downInRow: 5,
  cooldownMs: 5_000,
  trials: 3,
};

/** What one attempt's answer is to the breaker. */
export type CallResult = "healthy" | "failure" | "down";

/** Error classes (src/forward/http-client.ts) that mean nothing is listening or reachable. */
const downClasses: ReadonlySet<string> = new Set(["connect", "timeout", "reset", "dns"]);

/** What an attempt got back, as far as the breaker reads it. */
export interface CallAnswer {
  /** The HTTP status, or null when no response came. */
  readonly status: number | null;
  /** `connect`, `timeout`, `reset`, `dns`, `network`, `address-refused`, … (no response). */
  readonly errorClass: string | null;
  /** The address guard refused the destination: nothing was sent. */
  readonly refused?: boolean;
  /** The caller gave up (lease lost, shutdown): says nothing about the destination. */
  readonly aborted?: boolean;
}

/**
 * Reads one attempt's answer: null when it says nothing about the destination (nothing was sent,
 * or the attempt was aborted by this side).
 *
 * @example
 * ```ts
 * callResult({ status: 422, errorClass: "http-status" }); // "healthy": the app is up
 * callResult({ status: 503, errorClass: "http-status" }); // "failure"
 * callResult({ status: null, errorClass: "connect" }); // "down"
 * ```
 */
export function callResult(answer: CallAnswer): CallResult | null {
  if (answer.aborted || answer.refused) return null;
  const { status } = answer;
  if (status === null) {
    if (answer.errorClass === "address-refused") return null;
    return answer.errorClass !== null && downClasses.has(answer.errorClass) ? "down" : "failure";
  }
  if (status >= 500 || status === 408 || status === 429) return "failure";
  return "healthy";
}

/**
 * Results of one or more calls in the order they came, as the store adds them: `calls` and
 * `failures` (down included) go into the window; the down run is `downs` down results after the
 * last result that was not down (`brokeRun`), or, without one, `downs` more on top of the stored run.
 */
export interface CallCounts {
  readonly calls: number;
  readonly failures: number;
  readonly downs: number;
  readonly brokeRun: boolean;
}

/** No calls. */
export const noCalls: CallCounts = { calls: 0, failures: 0, downs: 0, brokeRun: false };

/**
 * Adds one result to `counts`, after the ones already in it.
 *
 * @example
 * ```ts
 * addCall(addCall(noCalls, "down"), "healthy"); // { calls: 2, failures: 1, downs: 0, brokeRun: true }
 * ```
 */
export function addCall(counts: CallCounts, result: CallResult): CallCounts {
  return {
    calls: counts.calls + 1,
    failures: counts.failures + (result === "healthy" ? 0 : 1),
    downs: result === "down" ? counts.downs + 1 : 0,
    brokeRun: counts.brokeRun || result !== "down",
  };
}

/**
 * The start of the window bucket holding `now`: buckets are `windowMs` long and aligned to the
 * epoch, so every process computes the same one.
 *
 * @example
 * ```ts
 * windowStartOf(1_700_000_012_345, 30_000); // 1_700_000_010_000
 * ```
 */
export function windowStartOf(now: number, windowMs: number): number {
  return Math.floor(now / windowMs) * windowMs;
}

/** The stored window: the bucket starting at `start`, and the one before it. */
export interface CircuitWindow {
  readonly start: number;
  readonly calls: number;
  readonly failures: number;
  readonly prevCalls: number;
  readonly prevFailures: number;
}

/**
 * Calls and failures over the `windowMs` before `now`, estimated from the two buckets: all of the
 * current bucket, and the previous one weighted by the part of it still inside the window. A
 * stored window older than that counts nothing.
 *
 * @example
 * ```ts
 * // 10 s into the current bucket: 2/3 of the previous one still counts (≈, in floating point).
 * windowEstimate({ start: 30_000, calls: 10, failures: 9, prevCalls: 60, prevFailures: 30 }, 40_000, 30_000);
 * // { calls: 50, failures: 29 }
 * ```
 */
export function windowEstimate(
  window: CircuitWindow,
  now: number,
  windowMs: number,
): { calls: number; failures: number } {
  const start = windowStartOf(now, windowMs);
  const weight = Math.max(0, 1 - (now - start) / windowMs);
  if (window.start === start)
    return {
      calls: window.calls + window.prevCalls * weight,
      failures: window.failures + window.prevFailures * weight,
    };
  if (window.start === start - windowMs)
    return { calls: window.calls * weight, failures: window.failures * weight };
  return { calls: 0, failures: 0 };
}

/** What a closed circuit's stored counters are. */
export interface CircuitCounters {
  /** Down results in a row. */
  readonly downInRow: number;
  readonly window: CircuitWindow;
}

/**
 * Whether a closed circuit opens now, and why: `down` at `downInRow` down results in a row,
 * `rate` when the window holds at least `minCalls` calls and `failureRate` of them failed; null
 * to stay closed.
 *
 * @example
 * ```ts
 * shouldOpen({ downInRow: 5, window }, Date.now(), defaultCircuitPolicy); // "down"
 * ```
 */
export function shouldOpen(
  counters: CircuitCounters,
  now: number,
  policy: CircuitPolicy,
): "down" | "rate" | null {
  if (counters.downInRow >= policy.downInRow) return "down";
  const { calls, failures } = windowEstimate(counters.window, now, policy.windowMs);
  // A hair under the rate still counts: 0.85 × 60 is not exactly 51 in floating point.
  if (calls >= policy.minCalls - 1e-9 && failures >= policy.failureRate * calls - 1e-9)
    return "rate";
  return null;
}

/** `closed` sends; `open` sends nothing until `openUntil`; `half-open` lets its trials through. */
export type CircuitPhase = "closed" | "open" | "half-open";

/**
 * The phase of a circuit open until `openUntil` (null: closed) at `now`.
 *
 * @example
 * ```ts
 * circuitPhase(null, Date.now()); // "closed"
 * ```
 */
export function circuitPhase(openUntil: number | null, now: number): CircuitPhase {
  if (openUntil === null) return "closed";
  return openUntil > now ? "open" : "half-open";
}

/** A half-open circuit's trial counters. */
export interface TrialCounters {
  /** Trials handed out in this half-open period (passed, failed-and-reopened, or running). */
  readonly taken: number;
  /** Trials that succeeded. */
  readonly passed: number;
}

/**
 * What a half-open circuit does after one of its trials: `reopen` on a failure; `close` once
 * `trials` have passed; otherwise `wait` for the trials still running, asking for `wake` more
 * (the free trial slots): postponed deliveries are made due to fill them, so that a quiet
 * destination's backlog does not wait for its backoff to find out the app is back.
 *
 * @example
 * ```ts
 * afterTrial("healthy", { taken: 1, passed: 1 }, defaultCircuitPolicy); // { action: "wait", wake: 2 }
 * afterTrial("healthy", { taken: 3, passed: 3 }, defaultCircuitPolicy); // { action: "close" }
 * afterTrial("down", { taken: 3, passed: 1 }, defaultCircuitPolicy); // { action: "reopen" }
 * ```
 */
export function afterTrial(
  result: CallResult,
  trials: TrialCounters,
  policy: CircuitPolicy,
): { action: "reopen" } | { action: "close" } | { action: "wait"; wake: number } {
  if (result !== "healthy") return { action: "reopen" };
  if (trials.passed >= policy.trials) return { action: "close" };
  return { action: "wait", wake: Math.max(0, policy.trials - trials.taken) };
}
