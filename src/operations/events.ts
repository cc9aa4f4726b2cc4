import { z } from "zod";
import { hookinboxError } from "../errors.ts";
import type { DeliveryView } from "../store/queue-types.ts";
import type { EventDetail } from "../store/types.ts";
import { cursorField, eventStatuses, limitField, oneOf, text } from "./fields.ts";
import { defineOperation } from "./operation.ts";
import type { Runbooks } from "./runbook-lookup.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A body as JSON can carry it: base64 always, the text when it is UTF-8. */
function bodyView(body: Uint8Array): { base64: string; text: string | null } {
  let text: string | null;
  try {
    text = utf8.decode(body);
  } catch {
    text = null;
  }
  return {
    base64: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("base64"),
    text,
  };
}

/**
 * A delivery with the runbook of its event's type beside it.
 *
 * @example
 * ```ts
 * withRunbook(delivery, runbooks).runbook?.owner; // "billing"
 * ```
 */
export function withRunbook(delivery: DeliveryView, runbooks: Runbooks) {
  return { ...delivery, runbook: runbooks.for(delivery.source, delivery.type) };
}

/** An event as operators see it: its body as base64 and text, the runbook of its type. */
export type EventJson = ReturnType<typeof eventJson>;

function eventJson(event: EventDetail, runbooks: Runbooks) {
  const { body, deliveries, ...rest } = event;
  return {
    ...rest,
    body: bodyView(body),
    deliveries: deliveries.map((d) => withRunbook(d, runbooks)),
    runbook: runbooks.for(event.source, event.type),
  };
}

/**
 * Events, newest first, filtered by source, type and status, a page at a time.
 *
 * @example
 * ```ts
 * const page = await runOperation(listEvents, ctx, { status: "dead" }, "HOOKINBOX_USAGE");
 * ```
 */
export const listEvents = defineOperation({
  name: "events.list",
  summary: "events, newest first",
  readOnly: true,
  input: z.strictObject({
    source: text("source name").optional(),
    type: text("event type").optional(),
    status: oneOf(eventStatuses).optional(),
    limit: limitField.optional(),
    cursor: cursorField.optional(),
  }),
  run: (ctx, input) => ctx.store.listEvents(input),
});

/**
 * One event with its request, receipts, deliveries (attempts included) and runbook.
 *
 * @example
 * ```ts
 * const event = await showEvent.run(ctx, { id: "evt_01J…" });
 * ```
 */
export const showEvent = defineOperation({
  name: "events.show",
  summary: "one event: request, receipts, deliveries with attempts, effects' runbook",
  readOnly: true,
  input: z.strictObject({ id: text("event id") }),
  run: async (ctx, { id }) => {
    const event = await ctx.store.getEvent(id);
    if (!event) {
      // Removed by retention.events: its leaf stays, so its proof is still served.
      const expired =
        id < (await ctx.store.eventsExpiredBefore()) && (await ctx.store.auditLeafOf(id)) !== null;
      throw hookinboxError(expired ? "HOOKINBOX_EVENT_EXPIRED" : "HOOKINBOX_EVENT_NOT_FOUND", id);
    }
    return eventJson(event, ctx.runbooks);
  },
});

/**
 * Receipts (every request that arrived, duplicates and rejections included), newest first.
 *
 * @example
 * ```ts
 * const rejected = await runOperation(listReceipts, ctx, { rejected: "true" }, "HOOKINBOX_QUERY_INVALID");
 * ```
 */
export const listReceipts = defineOperation({
  name: "receipts.list",
  summary: "receipts (requests that arrived, rejections included), newest first",
  readOnly: true,
  input: z.strictObject({
    rejected: z
      .enum(["true", "false"], { error: "must be true or false" })
      .transform((value) => value === "true")
      .optional(),
    source: text("source name").optional(),
    limit: limitField.optional(),
    cursor: cursorField.optional(),
  }),
  run: (ctx, input) => ctx.store.listReceipts(input),
});
