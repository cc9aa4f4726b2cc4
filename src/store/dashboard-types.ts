/** Receipts of one minute, one source and one kind (and, for rejections, one code). */
export interface ReceiptMinute {
  /** The minute's start, ms since the epoch. */
  readonly minute: number;
  readonly source: string;
  /** `new` (an event's first receipt), `duplicate`, or `rejected`. */
  readonly kind: "new" | "duplicate" | "rejected";
  /** The HOOKINBOX_* code of a rejection; null otherwise. */
  readonly code: string | null;
  readonly count: number;
}

/** Deliveries waiting after at least one failed attempt, per source and target. */
export interface FailingDeliveries {
  readonly source: string;
  readonly target: string;
  readonly count: number;
}

/** The reads the dashboard's overview needs, index-backed and bounded by the window. */
export interface DashboardStore {
  /**
   * Receipts since `since` (ms) per minute, source and kind: a range over the receipts'
   * time-ordered ids (the primary key), so the cost is the window's rows, never the table's.
   */
  receiptSeries(since: number): Promise<ReceiptMinute[]>;
  /** Pending deliveries with at least one failed attempt (a range over `status = 'pending'`). */
  failingDeliveries(): Promise<FailingDeliveries[]>;
  /**
   * Ids of the events with this dedup key (the provider's event id) in any of `sources`, newest
   * first: one lookup per source in the `(source, dedup_key)` unique index.
   */
  eventIdsByDedupKey(sources: readonly string[], dedupKey: string): Promise<string[]>;
}
