// The admin API's JSON, as the dashboard reads it.

export interface Runbook {
  pattern: string;
  owner: string | null;
  safeToReprocess: boolean | null;
  notes: string | null;
  link: string | null;
}

export interface EventSummary {
  id: string;
  source: string;
  dedupKey: string;
  type: string | null;
  status: string;
  receivedAt: string;
  receiptCount: number;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface Attempt {
  id: string;
  attempt: number;
  workerId: string | null;
  startedAt: string;
  endedAt: string | null;
  outcome: string;
  errorMessage: string | null;
  response?: {
    status: number | null;
    body: string | null;
    latencyMs: number;
    errorClass: string | null;
    /** What was sent (after transforms): size and SHA-256. */
    request?: { bytes: number; sha256: string } | null;
    /** The transforms dropped the event: nothing sent. */
    filtered?: boolean;
  };
}

/** What one destination would be sent for an event now (`GET /api/events/:id/preview`). */
export interface TargetPreview {
  target: string;
  transforms: string[];
  outcome: "send" | "filtered" | "failed";
  headers?: Record<string, string>;
  body?: string | null;
  base64?: string;
  bytes?: number;
  sha256?: string;
  error?: { code: string; message: string };
}

export interface Delivery {
  id: string;
  eventId: string;
  source: string;
  type: string | null;
  target: string;
  status: string;
  attempts: number;
  runAt: string;
  lastError: string | null;
  isReplay: boolean;
  replayOf: string | null;
  createdAt: string;
  completedAt: string | null;
  attemptLog?: Attempt[];
  runbook: Runbook | null;
}

export interface Receipt {
  id: string;
  receivedAt: string;
  duplicate: boolean;
  remoteAddress: string | null;
  secretIndex: number | null;
}

export interface EventDetail extends EventSummary {
  occurredAt: string | null;
  orderingKey: string | null;
  headers: Array<[string, string]>;
  body: { base64: string; text: string | null };
  purgedAt: string | null;
  receipts: Receipt[];
  deliveries: Delivery[];
  runbook: Runbook | null;
}

export interface Effect {
  id: string;
  eventId: string;
  target: string;
  name: string;
  status: string;
  claims: number;
  claimedAt: string | null;
  completedAt: string | null;
}

export interface RejectedReceipt {
  id: string;
  source: string;
  receivedAt: string;
  remoteAddress: string | null;
  status: number | null;
  code: string | null;
  size: number | null;
  headerNames: string[] | null;
}

// The overview is typed by the server module that builds it (a type-only import: no code).
export type { Overview } from "../../src/operations/dashboard.ts";
