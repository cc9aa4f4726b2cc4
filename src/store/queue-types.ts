/**
 * The processing half of the Store contract: deliveries (one event routed to one target), their
 * attempts and leases, the ordering-key discipline, and the effect ledger. Every operation takes
 * `now` from the caller so that tests can drive time; none reads the clock itself.
 */

import type { AlertOutboxStore, AlertRecord } from "./alert-types.ts";
import type { SqlValue } from "./core/sql-template.ts";
import type { AttemptResponse } from "./forward-types.ts";

/**
 * - `pending`: waiting until `runAt`;
 * - `blocked`: waiting behind an earlier delivery of the same target and ordering key;
 * - `running`: leased by a worker;
 * - `done`, `stale` (older than what was already applied), `dead` (dead-lettered): terminal.
 */
export type DeliveryStatus = "pending" | "blocked" | "running" | "done" | "stale" | "dead";

/** How an attempt ended. `running` while it has not. */
export type AttemptOutcome =
  | "running"
  | "success"
  | "stale"
  | "error"
  | "permanent"
  | "lease-expired"
  | "exhausted";

/** A delivery handed to a worker by `claimDeliveries`, with what the handler needs of its event. */
export interface ClaimedDelivery {
  readonly id: string;
  readonly eventId: string;
  readonly target: string;
  /** This try's number, starting at 1 (crashed and rescued tries count). */
  readonly attempt: number;
  /**
   * This try's number within the current attempt budget: equal to `attempt` until an operator
   * retries a dead delivery, which starts a fresh budget. Backoff and max attempts use it.
   */
  readonly budgetAttempt: number;
  readonly attemptId: string;
  readonly leaseExpiresAt: number;
  readonly isReplay: boolean;
  readonly replayOf: string | null;
  readonly source: string;
  readonly dedupKey: string;
  readonly type: string | null;
  readonly orderingKey: string | null;
  readonly version: number | null;
  readonly occurredAt: number | null;
  readonly body: Uint8Array;
  readonly headers: Array<[string, string]>;
  /**
   * The highest version already completed for this target and ordering key, or null. When the
   * delivery's version is lower, the delivery is stale.
   */
  readonly appliedVersion: number | null;
  /** When the delivery became due (ms): the claim's wait is the claim time minus this. */
  readonly runAt?: number;
  /** The `webhook.receive` span's W3C traceparent stored with the event, or null (not traced). */
  readonly traceparent?: string | null;
}

export interface ClaimInput {
  readonly workerId: string;
  readonly limit: number;
  /** The lease of a claimed delivery whose target is not in `targetLeaseMs`. */
  readonly leaseMs: number;
  /** Targets with their own lease (a handler's `lease`, a destination's timeout + 10 s). */
  readonly targetLeaseMs?: Readonly<Record<string, number>>;
  readonly now: number;
  /** Only deliveries of these events (`processAvailable({ eventIds })`); all when absent. */
  readonly eventIds?: readonly string[];
}

/** Which due deliveries `countDue` counts: pending with `runAt <= now`, of `eventIds` if given. */
export interface DueQuery {
  readonly now: number;
  readonly eventIds?: readonly string[];
}

/** SQL the handler runs inside the transaction that completes its delivery. */
export interface TransactionClient {
  /** The store running the transaction: it decides the placeholders (`$1` or `?`). */
  readonly dialect: "postgres" | "sqlite";
  /**
   * The driver connection the transaction runs on, for an ORM or query builder (Drizzle, …) to
   * run its queries in the same transaction: on PostgreSQL the `pg` client (a `PoolClient`,
   * inside `BEGIN`), on SQLite the `better-sqlite3` `Database` (inside `BEGIN IMMEDIATE`), or
   * null on SQLite with `writer: "thread"`, whose connection lives in another thread (use `sql`
   * or `query`).
   * Never commit, roll back, release or close it: hookinbox commits it with the delivery.
   */
  readonly connection: unknown;
  /**
   * Runs one parameterised statement. Placeholders follow the store's dialect: `?` for SQLite,
   * `$1` for PostgreSQL. Returns rows for statements that return rows.
   */
  query<Row = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
  ): Promise<{ rows: Row[]; rowCount: number }>;
  /**
   * Runs one statement written as a tagged template, the same text on every store: each
   * `${value}` is sent as a parameter (never spliced into the SQL), with the store's own
   * placeholders and conversions (on SQLite a boolean binds as 1/0 and a Date as its ISO string).
   * Answers what `query` answers. `undefined`, objects and arrays are refused
   * (HOOKINBOX_SQL_VALUE_UNDEFINED, HOOKINBOX_SQL_VALUE_UNSUPPORTED); so is a call without the tag
   * (`tx.sql("…")`, HOOKINBOX_SQL_NOT_TEMPLATE).
   *
   * @example
   * ```ts
   * await ctx.transaction(async (tx) => {
   *   await tx.sql`UPDATE orders SET paid = ${true} WHERE id = ${orderId}`;
   *   const { rows } = await tx.sql<{ paid: number }>`SELECT paid FROM orders WHERE id = ${orderId}`;
   * });
   * ```
   */
  sql<Row = Record<string, unknown>>(
    strings: TemplateStringsArray,
    ...values: readonly SqlValue[]
  ): Promise<{ rows: Row[]; rowCount: number }>;
}

export interface CompleteInput {
  readonly deliveryId: string;
  readonly workerId: string;
  readonly attempt: number;
  readonly now: number;
  /**
   * The delivery's ordering key as claimed, when the caller knows it: PostgreSQL ends a delivery
   * without a key in one statement and skips the key-lock step (a wrong hint only costs a step).
   */
  readonly orderingKey?: string | null;
  /**
   * The delivery's event as claimed (a delivery never changes event), when the caller knows it:
   * PostgreSQL then refreshes the event's status in its own day partition only, not in each.
   */
  readonly eventId?: string;
  /**
   * What the destination answered (forwarding): stored on the attempt by the same statement
   * that ends it, so the attempt row is written once.
   */
  readonly response?: AttemptResponse;
}

export interface FailInput extends CompleteInput {
  readonly error: { readonly message: string; readonly stack: string | null };
  /** When to try again; null dead-letters the delivery. */
  readonly retryAt: number | null;
  /** `permanent` (PermanentError), `exhausted` (attempt budget spent before running), or `error`. */
  readonly outcome: "error" | "permanent" | "exhausted";
  /** When dead-lettered: does the dead delivery keep blocking its ordering key? */
  readonly blockKey: boolean;
  /**
   * A retry after the destination looked down (connect, timeout, reset, DNS): marked to be due at
   * once when the destination's circuit closes, whatever its backoff. Otherwise unmarked.
   */
  readonly circuitWait?: boolean;
}

/** What a failure did: scheduled a retry or dead-lettered. */
export interface FailResult {
  readonly dead: boolean;
}

export interface DeliveryQuery {
  readonly status?: DeliveryStatus;
  readonly target?: string;
  readonly eventId?: string;
  readonly limit?: number;
  readonly cursor?: string;
}

export interface AttemptView {
  readonly id: string;
  readonly attempt: number;
  readonly workerId: string | null;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly outcome: AttemptOutcome;
  readonly errorMessage: string | null;
  readonly errorStack: string | null;
  /** What a destination answered (forwarding attempts only). */
  readonly response?: AttemptResponse;
}

export interface DeliveryView {
  readonly id: string;
  readonly eventId: string;
  /** The event's source and type (runbooks are looked up by them). */
  readonly source: string;
  readonly type: string | null;
  readonly target: string;
  readonly status: DeliveryStatus;
  readonly orderingKey: string | null;
  readonly version: number | null;
  readonly attempts: number;
  readonly runAt: string;
  readonly leaseOwner: string | null;
  readonly leaseExpiresAt: string | null;
  readonly lastError: string | null;
  readonly isReplay: boolean;
  readonly replayOf: string | null;
  readonly createdAt: string;
  readonly completedAt: string | null;
  /** Only in event details (`getEvent`), oldest first. */
  readonly attemptLog?: AttemptView[];
}

export interface DeliveryPage {
  readonly items: DeliveryView[];
  readonly nextCursor: string | null;
}

export interface ReplayInput {
  readonly eventId: string;
  /** Targets to replay to (the caller resolves defaults and checks they exist). */
  readonly targets: readonly string[];
  readonly now: number;
}

/** Filter for bulk replay; every field narrows. Times are ms since the epoch (received time). */
export interface ReplayFilter {
  readonly source?: string;
  readonly type?: string;
  readonly status?: string;
  readonly receivedFrom?: number;
  readonly receivedTo?: number;
}

/** Events matching a replay filter that share what bulk routing reads: source and type. */
export interface EventKindCount {
  readonly source: string;
  readonly type: string | null;
  readonly events: number;
}

/** Which deliveries a bulk count covers: every field narrows. */
export interface DeliveryCountQuery {
  /** Statuses to count (at least one). */
  readonly statuses: readonly DeliveryStatus[];
  readonly target?: string;
  /** Only these deliveries. */
  readonly ids?: readonly string[];
}

/** Deliveries counted per target and event kind, and how many events they belong to. */
export interface DeliveryCounts {
  readonly events: number;
  readonly kinds: ReadonlyArray<{
    readonly target: string;
    readonly source: string;
    readonly type: string | null;
    readonly deliveries: number;
  }>;
}

/** The effect ledger's answer to a claim. */
export type EffectClaim =
  | { readonly state: "claimed"; readonly effectId: string; readonly reclaimed: boolean }
  | { readonly state: "done"; readonly effectId: string; readonly result: unknown }
  | { readonly state: "held"; readonly effectId: string; readonly newlyHeld: boolean }
  | { readonly state: "busy"; readonly effectId: string; readonly claimedAt: number };

export interface EffectClaimInput {
  readonly eventId: string;
  readonly target: string;
  readonly name: string;
  /** Who claims: the attempt id. */
  readonly claimant: string;
  readonly onStale: "reclaim" | "hold";
  readonly staleAfterMs: number;
  readonly now: number;
  /**
   * Recorded in the transaction that holds the effect (never otherwise), each occurrence's
   * payload given the effect's id as `effectId`.
   */
  readonly heldAlert?: AlertRecord;
}

export interface EffectView {
  readonly id: string;
  readonly eventId: string;
  readonly target: string;
  readonly name: string;
  readonly status: "processing" | "done" | "held";
  readonly onStale: "reclaim" | "hold";
  readonly staleAfterMs: number;
  readonly claims: number;
  readonly claimedAt: string | null;
  readonly completedAt: string | null;
}

/** What needs a human: `hookinbox stuck`. */
export interface StuckReport {
  readonly expiredLeases: DeliveryView[];
  /**
   * Handlers that ignored their timeout's abort and were abandoned: still `running` (their lease
   * is left to expire so no second run starts beside them), shown at once rather than only
   * after the lease runs out. `lastError` says how long the handler ran.
   */
  readonly abandoned: DeliveryView[];
  /**
   * Dead deliveries that block their ordering key (`onDeadLetter: "block"`) with deliveries
   * parked behind them, and how many.
   */
  readonly blockedKeys: BlockedKey[];
  readonly heldEffects: EffectView[];
  readonly oldUndone: Array<{
    id: string;
    source: string;
    type: string | null;
    status: string;
    receivedAt: string;
  }>;
}

/** An ordering key parked behind a dead delivery (`onDeadLetter: "block"`). */
export interface BlockedKey {
  /** The dead delivery that holds the key. */
  readonly deliveryId: string;
  readonly eventId: string;
  readonly target: string;
  readonly source: string;
  readonly type: string | null;
  readonly orderingKey: string;
  /** Deliveries of the same target and key waiting behind it (pending or blocked). */
  readonly parked: number;
  readonly lastError: string | null;
}

/** A dead-lettered delivery whose alert has not been confirmed yet. */
export interface DeadLetterAlert {
  readonly deliveryId: string;
  readonly eventId: string;
  readonly target: string;
  readonly source: string;
  readonly type: string | null;
  readonly attempts: number;
  readonly lastError: string | null;
  /** Its ordering key, when it has one. */
  readonly orderingKey: string | null;
  /** Whether it blocks its key (`onDeadLetter: "block"`): later events of the key wait for it. */
  readonly blocksKey: boolean;
  /** How many deliveries of its target and key wait behind it now (0 unless `blocksKey`). */
  readonly parked: number;
}

/** What `/metrics` reads from the store at scrape time. */
export interface QueueGauges {
  /** Unfinished (`pending`, `blocked`, `running`) and `dead` deliveries per source and target. */
  readonly deliveries: ReadonlyArray<{
    readonly source: string;
    readonly target: string;
    readonly status: "pending" | "blocked" | "running" | "dead";
    readonly count: number;
    /** ms since the epoch: when the oldest of them was created (its event arrived). */
    readonly oldestCreatedAt: number;
  }>;
  /** Effects held for a human, per target. */
  readonly heldEffects: ReadonlyArray<{ readonly target: string; readonly count: number }>;
}

/** The queue operations every store implements (see the SQLite store for the reference). */
export interface QueueStore extends AlertOutboxStore {
  /** Leases up to `limit` due deliveries, at most one per target and ordering key in flight. */
  claimDeliveries(input: ClaimInput): Promise<ClaimedDelivery[]>;
  /** Extends the leases the worker still holds; returns the ids it still holds. */
  extendLeases(workerId: string, ids: readonly string[], until: number): Promise<string[]>;
  /**
   * Marks the delivery done in one transaction with `work` (the handler's own SQL). Rejects with
   * HOOKINBOX_LEASE_LOST, and commits nothing, when the worker no longer holds the lease.
   */
  completeDelivery<T>(
    input: CompleteInput,
    work?: (tx: TransactionClient) => Promise<T>,
  ): Promise<T | undefined>;
  failDelivery(input: FailInput): Promise<FailResult>;
  /** Marks a claimed delivery stale (older than the applied version) instead of running it. */
  markStale(input: CompleteInput): Promise<void>;
  /** Puts claimed deliveries the worker did not start back, uncounted. */
  releaseDeliveries(workerId: string, ids: readonly string[], now: number): Promise<number>;
  /** Returns deliveries whose lease expired before `now` to `pending`; returns how many. */
  rescueExpiredLeases(now: number): Promise<number>;
  /**
   * Records that this worker abandoned a running attempt (its handler ignored the timeout's
   * abort): the error goes on the attempt and the delivery, which stays `running` until its
   * lease expires, so `stuck` shows it at once. A lost lease records nothing.
   */
  markAbandoned(input: CompleteInput & { readonly error: string }): Promise<void>;
  /** The earliest `runAt` of a pending delivery, or null. */
  nextDueAt(): Promise<number | null>;
  /** How many deliveries are due (pending, `runAt <= now`), of `eventIds` only when given. */
  countDue(query: DueQuery): Promise<number>;
  listDeliveries(query: DeliveryQuery): Promise<DeliveryPage>;
  /** One delivery (without its attempt log), or null. */
  deliveryById(id: string): Promise<DeliveryView | null>;
  /** Puts a dead-lettered delivery back to pending now, with a fresh attempt budget. */
  retryDelivery(id: string, now: number): Promise<DeliveryView | null>;
  /** New deliveries flagged as replays; the originals are never touched. */
  replayEvent(input: ReplayInput): Promise<DeliveryView[]>;
  /** Replays every event matching the filter, in batches; reports progress per batch. */
  replayWhere(
    filter: ReplayFilter,
    options: {
      now: number;
      /** The targets for one event (routing lives outside the store). */
      targetsFor: (event: { source: string; type: string | null }) => readonly string[];
      onProgress?: (eventsDone: number) => void;
    },
  ): Promise<{ events: number; deliveries: number }>;
  /** Counts events matching a replay filter (for progress bars). */
  countEvents(filter: ReplayFilter): Promise<number>;
  /** Counts events matching a replay filter per source and type, in SQL (bulk dry runs). */
  countEventKinds(filter: ReplayFilter): Promise<EventKindCount[]>;
  /** Counts deliveries per target and event kind, in SQL (bulk dry runs). */
  countDeliveryKinds(query: DeliveryCountQuery): Promise<DeliveryCounts>;
  claimEffect(input: EffectClaimInput): Promise<EffectClaim>;
  completeEffect(effectId: string, claimant: string, result: unknown, now: number): Promise<void>;
  /** Drops a claim whose function threw, so the next try runs it again. */
  releaseEffect(effectId: string, claimant: string): Promise<void>;
  /**
   * Resolves a held effect by hand: `done` (it happened; `result` is what later runs get back) or
   * `release` (run it again). Null when there is no such effect; HOOKINBOX_EFFECT_NOT_HELD when it
   * is not held (a live claim is never touched).
   */
  resolveEffect(
    effectId: string,
    resolution: "done" | "release",
    now: number,
    result?: unknown,
  ): Promise<EffectView | null>;
  listEffects(query: {
    status?: "processing" | "done" | "held";
    eventId?: string;
  }): Promise<EffectView[]>;
  /** Dead letters not yet alerted (oldest first), then `markAlerted` once the alert went out. */
  pendingDeadLetterAlerts(limit: number): Promise<DeadLetterAlert[]>;
  markAlerted(deliveryIds: readonly string[], now: number): Promise<void>;
  stuck(input: { now: number; olderThanMs: number; limit: number }): Promise<StuckReport>;
  /** Queue depth, oldest unfinished delivery and held effects, for `/metrics`. */
  queueGauges(): Promise<QueueGauges>;
  /**
   * Calls `listener` when deliveries were created anywhere in the cluster (PostgreSQL
   * LISTEN/NOTIFY). Stores serving one process leave it out: the inbox wakes its workers itself.
   * Returns the unsubscribe function.
   */
  onDeliveries?(listener: () => void): () => void;
}
