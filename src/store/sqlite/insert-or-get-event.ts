import type Database from "better-sqlite3";
import type { AcceptOutcome, AcceptPlan } from "../core/accept-driver.ts";
import { type AuditAppender, prepareAuditAppend } from "./audit.ts";
import type { TransactionFinisher } from "./group-commit.ts";

const insertEventSql = `
  INSERT INTO events (id, source, dedup_key, type, occurred_at, ordering_key, version, status,
                      received_at, body, headers, secret_index, traceparent)
  VALUES (@eventId, @source, @dedupKey, @type, @occurredAt, @orderingKey, @version, @status,
          @receivedAt, @body, @headersJson, @secretIndex, @traceparent)
  ON CONFLICT (source, dedup_key) DO NOTHING
  RETURNING id`;

const existingEventSql = "SELECT id FROM events WHERE source = ? AND dedup_key = ?";

const insertReceiptSql = `
  INSERT INTO receipts (id, event_id, source, received_at, duplicate, remote_address, size,
                        secret_index)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;

const insertDeliverySql = `
  INSERT INTO deliveries (id, event_id, target, ordering_key, order_version, version, status,
                          run_at, is_replay, replay_of, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, 0, NULL, ?, ?)`;

/**
 * Prepares SQLite's `insertOrGetEvent` (core/accept-driver.ts): the group-commit op that runs
 * one accept plan core made (core/accepts.ts). It must run inside a transaction (the group
 * commit's, many accepts per transaction and fsync): the UNIQUE (source, dedup_key) constraint
 * alone decides duplicates — `INSERT … ON CONFLICT DO NOTHING RETURNING id` returns no row for a
 * duplicate, and only then is the existing id read (never check-then-insert). A new event gets
 * the plan's deliveries and, with digests (the audit log on), its leaf appended in the same
 * transaction; a duplicate gets its receipt's leaf.
 *
 * @example
 * ```ts
 * const insertOrGetEvent = prepareInsertOrGetEvent(db, (finisher) => group.addFinisher(finisher));
 * const outcome = await group.submit(() => insertOrGetEvent(acceptPlanOf(input, true)));
 * ```
 */
export function prepareInsertOrGetEvent(
  db: Database.Database,
  addFinisher: (finisher: TransactionFinisher) => void,
  shared?: AuditAppender,
): (plan: AcceptPlan) => AcceptOutcome {
  const insertEvent = db.prepare<[Record<string, unknown>], { id: string }>(insertEventSql);
  const existingEvent = db.prepare<[string, string], { id: string }>(existingEventSql);
  const insertReceipt = db.prepare(insertReceiptSql);
  const insertDelivery = db.prepare(insertDeliverySql);
  const log = shared ?? prepareAuditAppend(db);
  if (!shared) addFinisher(log.finisher);

  return (plan) => {
    const { receivedAt } = plan;
    const body = toBuffer(plan.body);
    const inserted = insertEvent.get({
      eventId: plan.eventId,
      source: plan.source,
      dedupKey: plan.dedupKey,
      type: plan.type,
      occurredAt: plan.occurredAt,
      orderingKey: plan.orderingKey,
      version: plan.version,
      status: plan.status,
      receivedAt,
      body,
      headersJson: plan.headersJson,
      secretIndex: plan.secretIndex,
      traceparent: plan.traceparent,
    });
    const duplicate = inserted === undefined;
    const eventId = inserted?.id ?? existingEvent.get(plan.source, plan.dedupKey)?.id;
    if (eventId === undefined) {
      // Cannot happen inside one transaction: the conflicting row is visible to us.
      throw new Error("accept: conflicting event row not found");
    }
    if (duplicate && plan.digests) {
      log.appendReceipt({
        receiptId: plan.receiptId,
        source: plan.source,
        dedupKey: plan.dedupKey,
        receivedAt,
        remoteAddress: plan.remoteAddress,
        secretIndex: plan.secretIndex,
        size: body.byteLength,
      });
    }
    if (!duplicate) {
      if (plan.digests) log.append(eventId, plan, plan.digests);
      for (const delivery of plan.deliveries) {
        insertDelivery.run(
          delivery.id,
          eventId,
          delivery.target,
          plan.orderingKey,
          plan.orderVersion,
          plan.version,
          receivedAt,
          receivedAt,
          receivedAt,
        );
      }
    }
    insertReceipt.run(
      plan.receiptId,
      eventId,
      plan.source,
      receivedAt,
      duplicate ? 1 : 0,
      plan.remoteAddress,
      body.byteLength,
      plan.secretIndex,
    );
    return { eventId, duplicate };
  };
}

/** A zero-copy Buffer view of the bytes (what better-sqlite3 binds as a BLOB). */
function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
