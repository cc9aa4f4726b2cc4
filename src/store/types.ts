/**
 * The Store interface. The SQLite store (embedded default) implements it now; the PostgreSQL
 * store implements the same contract and must pass the same conformance suite
 * (test/store/conformance.ts).
 */

/** The identity of an event, read from the provider's documented fields or the source's overrides. */
export interface EventIdentity {
  /** The provider's event id (or a documented synthetic key): unique per source. */
  readonly dedupKey: string;
  readonly type: string | null;
  /** When the provider says the event happened, ms since the epoch. */
  readonly occurredAt: number | null;
  /** The resource the event is about (customer, subscription, order…). */
  readonly orderingKey: string | null;
  /** A monotonic number from the provider (sequence, object updated time in ms…). */
  readonly version: number | null;
}

import type { AuditStore } from "./audit-types.ts";
import type { DashboardStore } from "./dashboard-types.ts";
import type { DestinationStore } from "./forward-types.ts";
import type { PurgeBatchInput, PurgeBatchResult } from "./purge-types.ts";
import type { DeliveryView, QueueStore } from "./queue-types.ts";
import type { RetentionStore } from "./retention-types.ts";

/** One verified, identified request to store. */
export interface AcceptInput {
  readonly source: string;
  readonly identity: EventIdentity;
  /** Raw body bytes, kept verbatim. */
  readonly body: Uint8Array;
  /** Raw headers in arrival order, names as sent. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly receivedAt: number;
  readonly remoteAddress: string | null;
  /** Index of the source secret that matched, or null where the scheme has no secret. */
  readonly secretIndex: number | null;
  /**
   * The targets (handler patterns, destinations) this event is routed to. A new event gets one
   * delivery per target in the same commit, or status `ignored` when there is none; a duplicate
   * gets nothing new.
   */
  readonly targets?: readonly string[];
  /**
   * The W3C `traceparent` of the request's `webhook.receive` span, kept with a new event so its
   * deliveries join that trace (null or absent: not traced).
   */
  readonly traceparent?: string | null;
}

/** The outcome of `accept`: the event id (new or existing) and whether it was a duplicate. */
export interface AcceptResult {
  readonly eventId: string;
  readonly receiptId: string;
  readonly duplicate: boolean;
  /** Deliveries created by this accept (0 for duplicates and ignored events). */
  readonly deliveries: number;
}

/** A request that was refused for a known source: metadata only, never the body. */
export interface RejectionInput {
  readonly source: string;
  readonly receivedAt: number;
  readonly remoteAddress: string | null;
  readonly status: number;
  readonly code: string;
  readonly size: number;
  readonly headerNames: readonly string[];
}

/**
 * `ignored` (routed nowhere), `pending` (deliveries under way), `done` (every delivery done or
 * stale), `dead` (a delivery dead-lettered); `received` for events stored before routing existed.
 */
export type EventStatus = "received" | "ignored" | "pending" | "done" | "dead" | (string & {});

export interface EventQuery {
  readonly source?: string;
  readonly type?: string;
  readonly status?: string;
  /** 1..500, default 50. */
  readonly limit?: number;
  /** Opaque cursor from a previous page's `nextCursor`. */
  readonly cursor?: string;
}

export interface EventSummary {
  readonly id: string;
  readonly source: string;
  readonly dedupKey: string;
  readonly type: string | null;
  readonly status: EventStatus;
  readonly receivedAt: string; // ISO 8601
  readonly receiptCount: number;
}

export interface EventPage {
  readonly items: EventSummary[];
  readonly nextCursor: string | null;
}

export interface ReceiptView {
  readonly id: string;
  readonly receivedAt: string;
  readonly duplicate: boolean;
  readonly remoteAddress: string | null;
  readonly secretIndex: number | null;
}

export interface EventDetail extends EventSummary {
  readonly occurredAt: string | null;
  readonly orderingKey: string | null;
  readonly version: number | null;
  readonly headers: Array<[string, string]>;
  readonly body: Uint8Array;
  /** When retention purged its body and headers (both then empty; its audit leaf stays), or null. */
  readonly purgedAt: string | null;
  readonly receipts: ReceiptView[];
  /** Its deliveries, oldest first, each with its attempt log. */
  readonly deliveries: DeliveryView[];
}

/** One receipt as the receipts listing shows it; rejections carry their reason. */
export interface ReceiptRecord {
  readonly id: string;
  readonly source: string;
  readonly receivedAt: string;
  /** Null for a rejected request. */
  readonly eventId: string | null;
  readonly duplicate: boolean;
  readonly remoteAddress: string | null;
  /** HTTP status of a rejection. */
  readonly status: number | null;
  /** HOOKINBOX_* code of a rejection. */
  readonly code: string | null;
  readonly size: number | null;
  /** Header names of a rejection (never values). */
  readonly headerNames: string[] | null;
}

export interface ReceiptQuery {
  /** true: rejections only; false: accepted only; absent: all. */
  readonly rejected?: boolean;
  readonly source?: string;
  readonly limit?: number;
  readonly cursor?: string;
}

export interface ReceiptPage {
  readonly items: ReceiptRecord[];
  readonly nextCursor: string | null;
}

export interface MigrationReport {
  readonly applied: string[];
  readonly current: number;
}

/** Durable storage for receipts, events and their processing. Safe to call concurrently. */
export interface Store
  extends QueueStore,
    DestinationStore,
    AuditStore,
    DashboardStore,
    RetentionStore {
  readonly kind: "sqlite" | "postgres";
  /** Applies pending numbered migrations. Idempotent. */
  migrate(): Promise<MigrationReport>;
  /**
   * Stores a receipt and, unless (source, dedupKey) exists, the event, in one commit. Resolves only
   * after that commit is durable. Concurrent calls may share one transaction (group commit).
   * Rejects with HOOKINBOX_STORE_UNAVAILABLE or HOOKINBOX_STORE_CLOSED when it cannot commit.
   */
  accept(input: AcceptInput): Promise<AcceptResult>;
  /** Records a rejected request's metadata (best effort, never the body). */
  recordRejection(input: RejectionInput): Promise<void>;
  /**
   * Deletes up to `limit` rejected receipts received before `before` (ms), oldest first; returns
   * how many. Accepted receipts are never touched.
   */
  pruneRejections(before: number, limit: number): Promise<number>;
  /**
   * Purges one batch of payloads (retention): bodies and headers of events received before
   * `before` whose deliveries are all finished, keeping their digests and audit leaves.
   */
  purgePayloads(input: PurgeBatchInput): Promise<PurgeBatchResult>;
  /** Newest first, paginated by an opaque cursor. Never loads more than `limit` rows. */
  listEvents(query: EventQuery): Promise<EventPage>;
  getEvent(id: string): Promise<EventDetail | null>;
  /** Newest-first receipts, e.g. the rejected requests of a source; never more than `limit`. */
  listReceipts(query: ReceiptQuery): Promise<ReceiptPage>;
  /** Performs a real write and commit; rejects when the store cannot commit (for /readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
