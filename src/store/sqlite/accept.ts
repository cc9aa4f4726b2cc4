import type Database from "better-sqlite3";
import { type PayloadDigests, payloadDigests } from "../../audit/leaf.ts";
import { ulid } from "../../ids.ts";
import type { AcceptInput, AcceptResult } from "../types.ts";
import { type AuditAppender, prepareAuditAppend } from "./audit.ts";
import type { TransactionFinisher } from "./group-commit.ts";
import { prepareCreateDeliveries } from "./queue/create-deliveries.ts";

const insertEventSql = `
  INSERT INTO events (id, source, dedup_key, type, occurred_at, ordering_key, version, status,
                      received_at, body, headers, secret_index, traceparent)
  VALUES (@id, @source, @dedupKey, @type, @occurredAt, @orderingKey, @version, @status,
          @receivedAt, @body, @headers, @secretIndex, @traceparent)
  ON CONFLICT (source, dedup_key) DO NOTHING
  RETURNING id`;

const existingEventSql = "SELECT id FROM events WHERE source = ? AND dedup_key = ?";

const insertReceiptSql = `
  INSERT INTO receipts (id, event_id, source, received_at, duplicate, remote_address, size,
                        secret_index)
  VALUES (@id, @eventId, @source, @receivedAt, @duplicate, @remoteAddress, @size, @secretIndex)`;

/**
 * One accept as the writer stores it: everything that needs no database is worked out by
 * {@link acceptRowOf} on the caller's thread (ids, the headers' JSON, the audit digests), so the
 * SQLite writer, the one thread every accept waits for, only runs statements. Flat plain data:
 * cheap to send to the writer thread, whose body it moves (transfers) rather than copies.
 */
export interface AcceptRow {
  readonly eventId: string;
  readonly receiptId: string;
  readonly source: string;
  readonly dedupKey: string;
  readonly type: string | null;
  readonly occurredAt: number | null;
  readonly orderingKey: string | null;
  readonly version: number | null;
  /** Integer ms: columns are STRICT INTEGER, a fractional time would be refused. */
  readonly receivedAt: number;
  readonly body: Uint8Array;
  readonly headersJson: string;
  readonly remoteAddress: string | null;
  readonly secretIndex: number | null;
  /** The `webhook.receive` span's W3C traceparent, or null (not traced). */
  readonly traceparent: string | null;
  readonly targets: readonly string[];
  /** The leaf's payload digests; null when the audit log is off. */
  readonly digests: PayloadDigests | null;
}

/**
 * The row of one accept, made on the caller's thread (see {@link AcceptRow}). The ids are new
 * even for what turns out to be a duplicate: only the INSERT decides, and a duplicate's ids are
 * never stored.
 *
 * @example
 * ```ts
 * const row = acceptRowOf(input, true);
 * await writer.run("accept", row);
 * ```
 */
export function acceptRowOf(input: AcceptInput, audit: boolean): AcceptRow {
  const { identity } = input;
  const receivedAt = Math.floor(input.receivedAt);
  // One ULID for both: a first receipt's id is its event's with `rcp_` (src/audit/first-receipt.ts).
  const id = ulid(receivedAt);
  return {
    eventId: `evt_${id}`,
    receiptId: `rcp_${id}`,
    source: input.source,
    dedupKey: identity.dedupKey,
    type: identity.type,
    occurredAt: identity.occurredAt === null ? null : Math.floor(identity.occurredAt),
    orderingKey: identity.orderingKey,
    version: identity.version,
    receivedAt,
    body: input.body,
    headersJson: JSON.stringify(input.headers),
    remoteAddress: input.remoteAddress,
    secretIndex: input.secretIndex,
    traceparent: input.traceparent ?? null,
    targets: input.targets ?? [],
    digests: audit ? payloadDigests(input.body, input.headers) : null,
  };
}

/**
 * Prepares the accept statements once and returns the operation that stores one receipt and,
 * unless (source, dedup key) already exists, its event. It must run inside a transaction (the
 * group commit's): the UNIQUE (source, dedup_key) constraint alone decides duplicates —
 * `INSERT … ON CONFLICT DO NOTHING RETURNING id` returns no row for a duplicate, and only then is
 * the existing id read (never check-then-insert). A new event with digests (the audit log on) is
 * appended to the audit log in the same transaction; a duplicate appends its receipt's leaf.
 *
 * @example
 * ```ts
 * const accept = prepareAccept(db, (finisher) => groupCommit.addFinisher(finisher));
 * const result = groupCommit.submit(() => accept(acceptRowOf(input, true)));
 * ```
 */
export function prepareAccept(
  db: Database.Database,
  addFinisher: (finisher: TransactionFinisher) => void,
  shared?: AuditAppender,
): (row: AcceptRow) => AcceptResult {
  const insertEvent = db.prepare<[EventRow], { id: string }>(insertEventSql);
  const existingEvent = db.prepare<[string, string], { id: string }>(existingEventSql);
  const insertReceipt = db.prepare<[ReceiptRow]>(insertReceiptSql);
  const createDelivery = prepareCreateDeliveries(db);
  const log = shared ?? prepareAuditAppend(db);
  if (!shared) addFinisher(log.finisher);

  return (row) => {
    const { receivedAt, targets } = row;
    const inserted = insertEvent.get({
      id: row.eventId,
      source: row.source,
      dedupKey: row.dedupKey,
      type: row.type,
      occurredAt: row.occurredAt,
      orderingKey: row.orderingKey,
      version: row.version,
      status: targets.length > 0 ? "pending" : "ignored",
      receivedAt,
      body: toBuffer(row.body),
      headers: row.headersJson,
      secretIndex: row.secretIndex,
      traceparent: row.traceparent,
    });
    const duplicate = inserted === undefined;
    const eventId = inserted?.id ?? existingEvent.get(row.source, row.dedupKey)?.id;
    if (eventId === undefined) {
      // Cannot happen inside one transaction: the conflicting row is visible to us.
      throw new Error("accept: conflicting event row not found");
    }
    // Only a new event gets deliveries and an event leaf: a duplicate never runs anything twice;
    // its receipt gets a receipt leaf (the new event's leaf, version 2 kind 1, covers its first
    // receipt's id, remote address and secret index).
    if (duplicate && row.digests) {
      log.appendReceipt({
        receiptId: row.receiptId,
        source: row.source,
        dedupKey: row.dedupKey,
        receivedAt,
        remoteAddress: row.remoteAddress,
        secretIndex: row.secretIndex,
        size: row.body.byteLength,
      });
    }
    if (!duplicate) {
      if (row.digests) log.append(eventId, { ...row, receiptId: row.receiptId }, row.digests);
      for (const target of targets) {
        createDelivery(
          { eventId, target, orderingKey: row.orderingKey, version: row.version },
          receivedAt,
        );
      }
    }
    insertReceipt.run({
      id: row.receiptId,
      eventId,
      source: row.source,
      receivedAt,
      duplicate: duplicate ? 1 : 0,
      remoteAddress: row.remoteAddress,
      size: row.body.byteLength,
      secretIndex: row.secretIndex,
    });
    return {
      eventId,
      receiptId: row.receiptId,
      duplicate,
      deliveries: duplicate ? 0 : targets.length,
    };
  };
}

/** A zero-copy Buffer view of the bytes (what better-sqlite3 binds as a BLOB). */
function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

interface EventRow {
  id: string;
  source: string;
  dedupKey: string;
  type: string | null;
  occurredAt: number | null;
  orderingKey: string | null;
  version: number | null;
  status: "pending" | "ignored";
  receivedAt: number;
  body: Buffer;
  headers: string;
  secretIndex: number | null;
  traceparent: string | null;
}

interface ReceiptRow {
  id: string;
  eventId: string;
  source: string;
  receivedAt: number;
  duplicate: 0 | 1;
  remoteAddress: string | null;
  size: number;
  secretIndex: number | null;
}
