import { payloadDigests } from "../../audit/leaf.ts";
import { ulid } from "../../ids.ts";
import type { AcceptInput, Store } from "../types.ts";
import type { AcceptDriver, AcceptPlan } from "./accept-driver.ts";
import { versionlessPosition } from "./ordering.ts";
import { bindText, rowsOf } from "./read-driver.ts";

/**
 * The plan of one accept (see {@link AcceptPlan}): its ids, rows, deliveries and audit digests.
 * The ids are new even for what turns out to be a duplicate: only the driver's insert under the
 * unique constraint decides, and a duplicate's event and delivery ids are never stored.
 *
 * @example
 * ```ts
 * const plan = acceptPlanOf(input, true);
 * const { eventId, duplicate } = await driver.insertOrGetEvent(plan);
 * ```
 */
export function acceptPlanOf(input: AcceptInput, audit: boolean): AcceptPlan {
  const { identity } = input;
  const receivedAt = Math.floor(input.receivedAt);
  // One ULID for both: a first receipt's id is its event's with `rcp_` (src/audit/first-receipt.ts).
  const id = ulid(receivedAt);
  const targets = input.targets ?? [];
  return {
    eventId: `evt_${id}`,
    receiptId: `rcp_${id}`,
    source: input.source,
    dedupKey: identity.dedupKey,
    type: identity.type,
    occurredAt: identity.occurredAt === null ? null : Math.floor(identity.occurredAt),
    orderingKey: identity.orderingKey,
    version: identity.version,
    status: targets.length > 0 ? "pending" : "ignored",
    receivedAt,
    body: input.body,
    headersJson: JSON.stringify(input.headers),
    remoteAddress: input.remoteAddress,
    secretIndex: input.secretIndex,
    traceparent: input.traceparent ?? null,
    deliveries: targets.map((target) => ({ id: `dlv_${ulid(receivedAt)}`, target })),
    orderVersion: identity.version ?? versionlessPosition,
    digests: audit ? payloadDigests(input.body, input.headers) : null,
  };
}

/**
 * Accepts, rejections and the dashboard's search by dedup key, written once for both stores.
 * An accept is planned here and run atomically by the driver's `insertOrGetEvent`; a duplicate
 * creates no delivery. A rejection is a receipt with no event: metadata, status, error code and
 * header names only, never the body or header values. The search answers the events of
 * `sources` stored under a key, newest first: on PostgreSQL from event_dedup (events is
 * partitioned by day and keeps no (source, dedup_key) index), on SQLite from events' unique index.
 *
 * @example
 * ```ts
 * const accepts = storeAccepts(driver, true);
 * const { eventId, duplicate } = await accepts.accept(input);
 * ```
 */
export function storeAccepts(
  driver: AcceptDriver,
  audit: boolean,
): Pick<Store, "accept" | "recordRejection" | "eventIdsByDedupKey"> {
  const pg = driver.dialect === "postgres";
  const receipts = driver.table("receipts");
  const rejectionText = `
    INSERT INTO ${receipts} (id, event_id, source, received_at, duplicate, remote_address, status,
                             code, size, header_names${pg ? ", rejected" : ""})
    VALUES (?, NULL, ?, ?, ${pg ? "false" : "0"}, ?, ?, ?, ?, ${pg ? "?::jsonb, true" : "?"})`;
  const byKey = pg
    ? `SELECT event_id AS id FROM ${driver.table("event_dedup")} WHERE source IN (#) AND dedup_key = ?`
    : `SELECT id FROM ${driver.table("events")} WHERE source IN (#) AND dedup_key = ?`;
  return {
    async accept(input) {
      const plan = acceptPlanOf(input, audit);
      const { eventId, duplicate } = await driver.insertOrGetEvent(plan);
      return {
        eventId,
        receiptId: plan.receiptId,
        duplicate,
        deliveries: duplicate ? 0 : plan.deliveries.length,
      };
    },
    async recordRejection(input) {
      const receivedAt = Math.floor(input.receivedAt);
      const id = `rcp_${ulid(receivedAt)}`;
      await driver.insertRows(
        [id],
        [
          bindText(driver.dialect, rejectionText, [
            id,
            input.source,
            receivedAt,
            input.remoteAddress,
            input.status,
            input.code,
            input.size,
            JSON.stringify(input.headerNames),
          ]),
        ],
      );
    },
    async eventIdsByDedupKey(sources, dedupKey) {
      if (sources.length === 0) return [];
      const text = `${byKey.replace("#", sources.map(() => "?").join(", "))} ORDER BY id DESC`;
      const rows = await rowsOf<{ id: string }>(driver, text, [...sources, dedupKey]);
      return rows.map((row) => row.id);
    },
  };
}
