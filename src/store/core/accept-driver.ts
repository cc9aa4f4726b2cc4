import type { PayloadDigests } from "../../audit/leaf.ts";
import type { ReadDriver } from "./read-driver.ts";
import type { SqlResult, SqlStatement } from "./sql-template.ts";
import type { WriteDriver } from "./write-driver.ts";

/**
 * One accept as core planned it (core/accepts.ts), for a driver's `insertOrGetEvent` to run:
 * the event row, the receipt row, the deliveries a new event gets, and the audit leaf's content.
 * Flat plain data: it crosses to SQLite's writer thread (the body moved, not copied), and
 * everything that needs no database (ids, the headers' JSON, the digests) is made before it, on
 * the caller's thread.
 */
export interface AcceptPlan {
  readonly eventId: string;
  /** A first receipt's id is its event's with `rcp_` (src/audit/first-receipt.ts). */
  readonly receiptId: string;
  readonly source: string;
  readonly dedupKey: string;
  readonly type: string | null;
  readonly occurredAt: number | null;
  readonly orderingKey: string | null;
  readonly version: number | null;
  /** `pending` when the event has targets, else `ignored`. */
  readonly status: "pending" | "ignored";
  /** Integer ms: SQLite's columns are STRICT INTEGER, a fractional time would be refused. */
  readonly receivedAt: number;
  readonly body: Uint8Array;
  readonly headersJson: string;
  readonly remoteAddress: string | null;
  readonly secretIndex: number | null;
  /** The `webhook.receive` span's W3C traceparent, or null (not traced). */
  readonly traceparent: string | null;
  /** A new event's deliveries, one per target, due at `receivedAt`; a duplicate gets none. */
  readonly deliveries: ReadonlyArray<{ readonly id: string; readonly target: string }>;
  /** The deliveries' `order_version`: the event's version, or the versionless position. */
  readonly orderVersion: number;
  /**
   * The audit leaf's payload digests (a new event's leaf: the event and its first receipt; a
   * duplicate's: its receipt alone, which needs none of them); null when the audit log is off.
   */
  readonly digests: PayloadDigests | null;
}

/** What storing an accept found: the event's id, and whether it already existed. */
export interface AcceptOutcome {
  readonly eventId: string;
  readonly duplicate: boolean;
}

/**
 * What core's accept, rejection and dedup-key reads run on: a driver's reads and writes, and
 * two primitives of its own mechanics. `insertOrGetEvent` runs one plan atomically: inserts the
 * event once under its unique (source, dedup key) constraint or finds the existing one (a
 * duplicate), stores the receipt, and for a new event its deliveries, and appends or queues the
 * leaf (a new event's, or a duplicate's receipt leaf) when `digests` is set; it decides nothing
 * else (SQLite: one op in the group commit; PostgreSQL: gathered into one statement per batch).
 * `insertRows` runs statements inserting rows with these ids in one transaction, making their
 * day partitions first when one is missing (PostgreSQL; SQLite has none).
 *
 * @example
 * ```ts
 * const driver: AcceptDriver = { ...reads, ...writes, insertOrGetEvent, insertRows: (_ids, s) => writes.execute(s) };
 * ```
 */
export interface AcceptDriver extends ReadDriver, WriteDriver {
  insertOrGetEvent(plan: AcceptPlan): Promise<AcceptOutcome>;
  insertRows(
    ids: readonly string[],
    statements: readonly SqlStatement[],
  ): Promise<SqlResult<unknown>[]>;
}
