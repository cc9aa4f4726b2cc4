import { type HookinboxError, hookinboxError, isHookinboxError } from "../errors.ts";

/** What `/readyz` answers: ready, or the error ingest would answer with now. */
export type ReadinessResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly error: HookinboxError };

/** Readiness that follows what ingest actually answers. */
export interface Readiness {
  /** Ingest reports each accept's outcome: committed, or failed because the store could not commit. */
  recordAccept(outcome: { ok: true } | { ok: false; error: HookinboxError }): void;
  /** The current answer; at most one store ping per `cacheMs`, shared by concurrent callers. */
  check(): Promise<ReadinessResult>;
}

/**
 * Tracks readiness from two signals. Accepts: while the last accept failed with a store error
 * (disk full, read-only file, schema gone) less than `failureHoldMs` ago, and none committed
 * since, the node is not ready, whatever a ping says (a ping's tiny write can fit where a 2 KB
 * event does not). Otherwise a store ping, run at most once per `cacheMs` and shared by
 * concurrent callers, so a load balancer polling hard costs at most one small write a second.
 * After the hold, the node is offered traffic again; a new failing accept makes it unready at once.
 *
 * @example
 * ```ts
 * const readiness = createReadiness({ ping: () => store.ping(), now: Date.now });
 * readiness.recordAccept({ ok: false, error }); // from ingest
 * await readiness.check(); // { ok: false, error } for failureHoldMs
 * ```
 */
export function createReadiness(options: {
  ping: () => Promise<void>;
  now: () => number;
  cacheMs?: number;
  failureHoldMs?: number;
}): Readiness {
  const cacheMs = options.cacheMs ?? 1_000;
  const failureHoldMs = options.failureHoldMs ?? 10_000;
  let lastFailure: { at: number; error: HookinboxError } | null = null;
  let cached: { at: number; result: Promise<ReadinessResult> } | null = null;

  const ping = (): Promise<ReadinessResult> =>
    options.ping().then(
      () => ({ ok: true }) as const,
      (error: unknown) => ({
        ok: false,
        error:
          isHookinboxError(error) && error.status === 503
            ? error
            : hookinboxError("HOOKINBOX_STORE_UNAVAILABLE", undefined, error),
      }),
    );

  return {
    recordAccept(outcome) {
      if (outcome.ok) lastFailure = null;
      else lastFailure = { at: options.now(), error: outcome.error };
    },
    check() {
      const now = options.now();
      if (lastFailure && now - lastFailure.at < failureHoldMs) {
        return Promise.resolve({ ok: false, error: lastFailure.error });
      }
      if (!cached || now - cached.at >= cacheMs) cached = { at: now, result: ping() };
      return cached.result;
    },
  };
}
