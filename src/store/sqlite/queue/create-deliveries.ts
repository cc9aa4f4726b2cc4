import type Database from "better-sqlite3";
import { ulid } from "../../../ids.ts";
import { versionlessPosition } from "../../core/ordering.ts";

const insertSql = `
  INSERT INTO deliveries (id, event_id, target, ordering_key, order_version, version, status,
                          run_at, is_replay, replay_of, created_at, updated_at)
  VALUES (@id, @eventId, @target, @orderingKey, @orderVersion, @version, 'pending',
          @now, @isReplay, @replayOf, @now, @now)`;

/** One delivery to create. */
export interface NewDelivery {
  readonly eventId: string;
  readonly target: string;
  readonly orderingKey: string | null;
  readonly version: number | null;
  readonly isReplay?: boolean;
  readonly replayOf?: string | null;
}

/**
 * Prepares the insert of deliveries (due now, pending). Runs inside the caller's transaction:
 * the accept that stores a new event, or a replay.
 *
 * @example
 * ```ts
 * const create = prepareCreateDeliveries(db);
 * const id = create({ eventId, target: "stripe:*", orderingKey: null, version: null }, now);
 * ```
 */
export function prepareCreateDeliveries(
  db: Database.Database,
): (delivery: NewDelivery, now: number) => string {
  const insert = db.prepare(insertSql);
  return (delivery, now) => {
    const id = `dlv_${ulid(now)}`;
    insert.run({
      id,
      eventId: delivery.eventId,
      target: delivery.target,
      orderingKey: delivery.orderingKey,
      orderVersion: delivery.version ?? versionlessPosition,
      version: delivery.version,
      now: Math.floor(now),
      isReplay: delivery.isReplay ? 1 : 0,
      replayOf: delivery.replayOf ?? null,
    });
    return id;
  };
}
