import type { Logger } from "../log.ts";
import type { TransactionClient } from "../store/queue-types.ts";

/** The event a handler receives. */
export interface HandlerEvent<Payload = unknown> {
  /** hookinbox's event id (`evt_…`). */
  readonly id: string;
  readonly source: string;
  readonly type: string | null;
  /** The provider's event id (or the source's synthetic key). */
  readonly dedupKey: string;
  readonly orderingKey: string | null;
  readonly version: number | null;
  /** When the provider says it happened. */
  readonly occurredAt: Date | null;
  /** The parsed JSON body, or null when the body is not JSON. */
  readonly payload: Payload;
  /** The body bytes exactly as received. */
  readonly rawBody: Uint8Array;
  /** Request headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** This try's number within the delivery's attempt budget, from 1. */
  readonly attempt: number;
  readonly isReplay: boolean;
  readonly deliveryId: string;
  readonly target: string;
}

/** Options of `ctx.effect`. */
export interface EffectOptions {
  /**
   * What to do with a claim whose worker died before recording the effect as done:
   * `reclaim` runs it again (a possible duplicate email beats a missing one); `hold` (default)
   * parks it for a human with an alert (money and goods).
   */
  readonly onStale?: "reclaim" | "hold";
  /** How old a claim must be before it counts as stale (default "5m"); exceed the effect's p99. */
  readonly staleAfter?: number | string;
}

/** The second argument of every handler. */
export interface HandlerContext {
  /**
   * Runs the handler's own SQL in the transaction that marks the delivery done: both commit or
   * neither. Once per attempt; keep it to SQL (it holds the store's write turn).
   */
  transaction<T>(work: (tx: TransactionClient) => Promise<T>): Promise<T>;
  /**
   * Runs a side effect outside the database at most once per (event, handler, name), through
   * the effect ledger; a later run returns the stored result without calling `fn`.
   */
  effect<T>(name: string, fn: () => Promise<T>, options?: EffectOptions): Promise<T>;
  /** A deterministic key from (source, provider event id, name) for APIs that take one. */
  idempotencyKey(name: string): string;
  /** Aborted when the worker loses the lease or shuts down past its timeout. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /**
   * The W3C `traceparent` of this attempt's `delivery.attempt` span (docs/operations.md#traces),
   * or null when tracing is off. The handler's own spans join the trace by themselves when an
   * OpenTelemetry context manager is registered; pass this on where they cannot (another process).
   */
  readonly traceparent: string | null;
}

/**
 * A handler: resolves when the event is processed, throws to retry (with backoff), throws
 * `PermanentError` to dead-letter at once.
 */
export type Handler<Payload = unknown> = (
  event: HandlerEvent<Payload>,
  ctx: HandlerContext,
) => Promise<unknown> | unknown;
