/** One occurrence of an alert condition, before it is folded into the outbox. */
export interface AlertOccurrence {
  /** What folds: occurrences of one condition inside one window become one alert. */
  readonly condition: string;
  /** `dead-letter`, `effect-held`, `destination-disabled`, `threshold-crossed`, `threshold-recovered`, `loop-detected`. */
  readonly kind: string;
  /** What the receiver reads (the latest occurrence's details); never a request body or secret. */
  readonly payload: Readonly<Record<string, unknown>>;
  /**
   * The dead letter this occurrence announces. It is recorded only by the transaction that marks
   * that delivery alerted, so processes sweeping the same dead letter at once record it once.
   */
  readonly deadLetterId?: string;
}

/**
 * Alerts a state change records in its own transaction (the effect it holds, the destination it
 * disables): they commit with the change or not at all, so a crash right after loses none.
 */
export interface AlertRecord {
  readonly occurrences: readonly AlertOccurrence[];
  /** The folding window (`alerts.window`). */
  readonly windowMs: number;
}

/** One alert in the outbox, waiting to be sent or retried. */
export interface OutboxAlert {
  /** `alr_<ulid>`: the webhook-id on every attempt. */
  readonly id: string;
  readonly condition: string;
  readonly kind: string;
  /** JSON text of the latest occurrence's payload. */
  readonly payload: string;
  /** Occurrences folded into this alert (1 when none were). */
  readonly count: number;
  readonly createdAt: number;
  readonly lastAt: number;
  readonly attempts: number;
}

/** What the alert outbox needs from a store (both stores implement it). */
export interface AlertOutboxStore {
  /**
   * Folds each occurrence into its condition's waiting alert, or adds a new alert due at the
   * earliest time one window after the condition's previous alert. An occurrence with a
   * `deadLetterId` marks that delivery alerted in the same transaction, and is skipped when it was
   * already marked (another process got there first).
   */
  recordAlerts(
    occurrences: readonly AlertOccurrence[],
    input: { now: number; windowMs: number },
  ): Promise<void>;
  /**
   * Claims up to `limit` alerts due at `now` and not delivered, oldest first, by moving their next
   * try to `now + leaseMs` in the same statement: two processes never send one alert at once, and
   * an alert claimed by a process that dies is due again when the lease ends.
   */
  claimDueAlerts(now: number, limit: number, leaseMs: number): Promise<OutboxAlert[]>;
  /** Deletes up to `limit` alerts delivered before `before` (ms); returns how many. */
  pruneAlerts(before: number, limit: number): Promise<number>;
  /** Marks an alert delivered, or counts a failed attempt and sets its next try. */
  settleAlert(
    id: string,
    outcome:
      | { delivered: true; now: number }
      | { delivered: false; retryAt: number; error: string },
  ): Promise<void>;
  /** The kind of the condition family's latest alert (`threshold:<metric>:…`), or null. */
  latestAlertKind(conditionPrefix: string): Promise<string | null>;
  /** Receipts of accepted requests since `since` (ms) and how many of them were duplicates. */
  receiptCounts(since: number): Promise<{ receipts: number; duplicates: number }>;
}
