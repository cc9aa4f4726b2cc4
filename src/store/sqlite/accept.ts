import type Database from "better-sqlite3";
import { ulid } from "../../ids.ts";
import type { AcceptInput, AcceptResult } from "../types.ts";
import { prepareAuditAppend } from "./audit.ts";
import { prepareCreateDeliveries } from "./queue/create-deliveries.ts";

const insertEventSql = `
  INSERT INTO events (id, source, dedup_key, type, occurred_at, ordering_key, version, status,
                      received_at, body, headers, secret_index)
  VALUES (@id, @source, @dedupKey, @type, @occurredAt, @orderingKey, @version, @status,
          @receivedAt, @body, @headers, @secretIndex)
  ON CONFLICT (source, dedup_key) DO NOTHING
  RETURNING id`;

const existingEventSql = "SELECT id FROM events WHERE source = ? AND dedup_key = ?";

const insertReceiptSql = `
  INSERT INTO receipts (id, event_id, source, received_at, duplicate, remote_address, size,
                        secret_index)
  VALUES (@id, @eventId, @source, @receivedAt, @duplicate, @remoteAddress, @size, @secretIndex)`;

/**
 * Prepares the accept statements once and returns the operation that stores one receipt and,
 * unless (source, dedup key) already exists, its event. It must run inside a transaction (the
 * group commit's): the UNIQUE (source, dedup_key) constraint alone decides duplicates —
 * `INSERT … ON CONFLICT DO NOTHING RETURNING id` returns no row for a duplicate, and only then is
 * the existing id read (never check-then-insert). With `audit` on, a new event is appended to the
 * audit log in the same transaction (a duplicate appends nothing).
 *
 * @example
 * ```ts
 * const accept = prepareAccept(db);
 * const result = groupCommit.submit(() => accept(input)); // { eventId, receiptId, duplicate }
 * ```
 */
export function prepareAccept(
  db: Database.Database,
  audit = true,
): (input: AcceptInput) => AcceptResult {
  const insertEvent = db.prepare<[EventRow], { id: string }>(insertEventSql);
  const existingEvent = db.prepare<[string, string], { id: string }>(existingEventSql);
  const insertReceipt = db.prepare<[ReceiptRow]>(insertReceiptSql);
  const createDelivery = prepareCreateDeliveries(db);
  const appendToLog = audit ? prepareAuditAppend(db) : null;

  return (input) => {
    const { identity } = input;
    // Columns are STRICT INTEGER ms; a fractional time (seconds × 1000) would be refused.
    const receivedAt = Math.floor(input.receivedAt);
    const targets = input.targets ?? [];
    const inserted = insertEvent.get({
      id: `evt_${ulid(receivedAt)}`,
      source: input.source,
      dedupKey: identity.dedupKey,
      type: identity.type,
      occurredAt: identity.occurredAt === null ? null : Math.floor(identity.occurredAt),
      orderingKey: identity.orderingKey,
      version: identity.version,
      status: targets.length > 0 ? "pending" : "ignored",
      receivedAt,
      body: toBuffer(input.body),
      headers: JSON.stringify(input.headers),
      secretIndex: input.secretIndex,
    });
    const duplicate = inserted === undefined;
    const eventId = inserted?.id ?? existingEvent.get(input.source, identity.dedupKey)?.id;
    if (eventId === undefined) {
      // Cannot happen inside one transaction: the conflicting row is visible to us.
      throw new Error("accept: conflicting event row not found");
    }
    // Only a new event gets deliveries and a leaf: a duplicate never runs anything twice.
    if (!duplicate) {
      appendToLog?.(eventId, { ...input, dedupKey: identity.dedupKey, receivedAt });
      for (const target of targets) {
        createDelivery(
          { eventId, target, orderingKey: identity.orderingKey, version: identity.version },
          receivedAt,
        );
      }
    }
    const receiptId = `rcp_${ulid(receivedAt)}`;
    insertReceipt.run({
      id: receiptId,
      eventId,
      source: input.source,
      receivedAt,
      duplicate: duplicate ? 1 : 0,
      remoteAddress: input.remoteAddress,
      size: input.body.byteLength,
      secretIndex: input.secretIndex,
    });
    return { eventId, receiptId, duplicate, deliveries: duplicate ? 0 : targets.length };
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
