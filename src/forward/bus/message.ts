import type { ClaimedDelivery } from "../../store/queue-types.ts";
import { hookinboxHeaders } from "../forwarded-headers.ts";
import { stableDeliveryId } from "../sign.ts";
import type { BusMessage, BusSettings } from "./types.ts";

/**
 * Fills a name template's `{source}` and `{type}` (an untyped event's type is "untyped"). Each
 * value has the characters that would change the name's meaning to a broker (whitespace, NATS
 * wildcards `*` and `>`, and braces) replaced by `_`; dots are kept, so "invoice.paid" adds
 * tokens to a subject or routing key as a topic exchange expects.
 *
 * @example
 * ```ts
 * expandTemplate("hookinbox.{source}.{type}", "stripe", "invoice.paid"); // "hookinbox.stripe.invoice.paid"
 * ```
 */
export function expandTemplate(template: string, source: string, type: string | null): string {
  const clean = (value: string) => value.replace(/[\s*>{}]/g, "_") || "_";
  return template
    .replaceAll("{source}", clean(source))
    .replaceAll("{type}", clean(type ?? "untyped"));
}

/** The template a destination's messages are addressed with. */
function templateOf(bus: BusSettings): string {
  if (bus.type === "amqp") return bus.routingKey;
  if (bus.type === "nats") return bus.subject;
  return bus.stream;
}

/**
 * One delivery as a broker message: addressed by the destination's template, with the headers
 * HTTP forwarding sends (the stable `webhook-id`, `hookinbox-attempt`, `-replay`, `-event-id`,
 * `-delivery-id`, `-source`, `-type` percent-encoded as in HTTP, and the original
 * `content-type`), and the stored body as is (or what the destination's transforms made of it). Brokers deduplicate on the stable id; a replay
 * gets `<stable id>:replay:<delivery id>`, since it is meant to arrive again (a JetStream
 * dedup window would drop it), while its own retries still deduplicate.
 *
 * @example
 * ```ts
 * busMessage(claimed, "bus", destination.bus);
 * // { address: "hookinbox.std.order.created", headers: { "webhook-id": "evt_…:bus", … }, dedupId: "evt_…:bus", body }
 * ```
 */
export function busMessage(
  delivery: ClaimedDelivery,
  destination: string,
  bus: BusSettings,
  body: Uint8Array = delivery.body,
): BusMessage {
  const id = stableDeliveryId(delivery.eventId, destination);
  const headers: Record<string, string> = { "webhook-id": id, ...hookinboxHeaders(delivery) };
  const contentType = delivery.headers.find(([name]) => name.toLowerCase() === "content-type");
  if (contentType) headers["content-type"] = contentType[1];
  return {
    address: expandTemplate(templateOf(bus), delivery.source, delivery.type),
    headers,
    dedupId: delivery.isReplay ? `${id}:replay:${delivery.id}` : id,
    body,
  };
}

/**
 * A broker URL fit for logs and errors: its password replaced by `***`.
 *
 * @example
 * ```ts
 * maskUrl("amqp://app:s3cret@mq.internal:5672/prod"); // "amqp://app:***@mq.internal:5672/prod"
 * ```
 */
export function maskUrl(url: string): string {
  if (!URL.canParse(url)) return "(unparsable URL)";
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}

/**
 * An error message with the URL's password (raw and percent-decoded) masked out.
 *
 * @example
 * ```ts
 * scrubPassword("auth failed for s3cret", "redis://:s3cret@cache:6379"); // "auth failed for ***"
 * ```
 */
export function scrubPassword(message: string, url: string): string {
  if (!URL.canParse(url)) return message;
  const raw = new URL(url).password;
  if (!raw) return message;
  return message.replaceAll(raw, "***").replaceAll(decodeURIComponent(raw), "***");
}
