/** What one retention step removes: whole events, accepted receipts, rejected receipts, dedup keys. */
export type RetentionKind = "events" | "receipts" | "rejected" | "dedup";

/** One step of a retention kind: rows received before `before`, from the `cursor` on. */
export interface RetentionStepInput {
  readonly kind: RetentionKind;
  /** Remove rows received before this (ms). */
  readonly before: number;
  /** Where the previous step stopped ("" to start). */
  readonly cursor: string;
  /** At most this many rows per batch (SQLite); PostgreSQL drops one partition per step. */
  readonly limit: number;
  /** When it happens (ms). */
  readonly now: number;
  /** Count what would be removed, change nothing. */
  readonly dryRun: boolean;
  /**
   * Record each deletion of events or accepted receipts as a retention leaf of the audit log, in
   * the deleting transaction (set by the store when its audit log is on).
   */
  readonly audit?: boolean;
}

/** What one step removed (or would) and where the next starts (null: this kind is done). */
export interface RetentionStepResult {
  readonly removed: number;
  readonly cursor: string | null;
}

/** Retention's storage side (both stores). */
export interface RetentionStore {
  /**
   * One short step of retention: SQLite deletes one batch in one write transaction; PostgreSQL
   * detaches and drops one expired partition (events, receipts, rejected) or deletes one batch
   * (dedup keys; events of a partition that still holds unfinished deliveries). Events with an
   * unfinished or dead delivery are never removed; their audit leaves always stay, and with
   * `input.audit` each deletion of events or accepted receipts appends a retention leaf in its
   * own transaction (src/audit/retention-leaf.ts).
   */
  retentionStep(input: RetentionStepInput): Promise<RetentionStepResult>;
  /** PostgreSQL: creates the time partitions of the coming days; SQLite: nothing. */
  maintainPartitions(now: number): Promise<number>;
  /**
   * Event ids below this were expired by `retention.events` ("" when never): what the API says
   * for a gone event (410, not 404). Only a hint: it is an ordinary row, so `audit verify` never
   * trusts it (it checks expiry against signed heads, see src/audit/log.ts).
   */
  eventsExpiredBefore(): Promise<string>;
}
