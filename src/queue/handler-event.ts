import type { HandlerEvent } from "../handlers/types.ts";
import type { ClaimedDelivery } from "../store/queue-types.ts";

const utf8 = new TextDecoder("utf-8", { fatal: false });

/**
 * The event a handler sees, built from a claimed delivery: parsed JSON payload (null when the body
 * is not JSON), raw bytes, lower-case headers.
 *
 * @example
 * ```ts
 * const event = toHandlerEvent(claimed);
 * event.payload; // { id: "evt_…", type: "invoice.paid", … }
 * ```
 */
export function toHandlerEvent(delivery: ClaimedDelivery): HandlerEvent {
  // Parsed on first read: many handlers never look at the payload.
  let parsed: { value: unknown } | undefined;
  const payload = () => {
    if (!parsed) {
      try {
        parsed = { value: JSON.parse(utf8.decode(delivery.body)) };
      } catch {
        parsed = { value: null };
      }
    }
    return parsed.value;
  };
  const headers: Record<string, string> = {};
  for (const [name, value] of delivery.headers) {
    const key = name.toLowerCase();
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
  }
  return {
    id: delivery.eventId,
    source: delivery.source,
    type: delivery.type,
    dedupKey: delivery.dedupKey,
    orderingKey: delivery.orderingKey,
    version: delivery.version,
    occurredAt: delivery.occurredAt === null ? null : new Date(delivery.occurredAt),
    get payload() {
      return payload();
    },
    rawBody: delivery.body,
    headers,
    attempt: delivery.budgetAttempt,
    isReplay: delivery.isReplay,
    deliveryId: delivery.id,
    target: delivery.target,
  };
}
