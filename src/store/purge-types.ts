/** One batch of payload purging: events received before `before`, after the `afterId` cursor. */
export interface PurgeBatchInput {
  /** Purge events received before this (ms); their ids sort below its time prefix. */
  readonly before: number;
  /** Cursor: only ids above this ("" to start). */
  readonly afterId: string;
  readonly limit: number;
  /** When the purge happens (ms), stored as purged_at. */
  readonly now: number;
  /** Count what would be purged, change nothing. */
  readonly dryRun: boolean;
}

/** What one batch purged (or would) and where the next batch starts (null: done). */
export interface PurgeBatchResult {
  readonly purged: number;
  readonly nextAfterId: string | null;
}

/**
 * Event statuses of deliveries that are not finished: an event with one of these keeps its
 * payload (a dead-lettered delivery may still be retried by an operator).
 */
export const UNFINISHED_DELIVERY_STATUSES = ["pending", "blocked", "running", "dead"] as const;
