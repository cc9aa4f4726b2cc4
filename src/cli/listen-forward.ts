import type { ResolvedSecret } from "../config/secrets.ts";
import { connectionHeaders, forwardHeaders } from "../forward/forwarded-headers.ts";
import { storedHops } from "../forward/hops.ts";
import { signStandardWebhook, stableDeliveryId } from "../forward/sign.ts";
import type { ListenedEvent } from "./listen-follow.ts";

/** How `hookinbox listen` sends an event to the local app. */
export type ListenSigning =
  /** As the gateway forwards to a destination: Standard Webhooks signature with this secret, hookinbox-* headers. */
  | { readonly kind: "gateway"; readonly secret: ResolvedSecret }
  /** The provider's original headers and raw body, unchanged (the app's own SDK verifies). */
  | { readonly kind: "provider" };

/** What the local app answered. */
export interface LocalResult {
  /** The HTTP status, or null when nothing came back. */
  readonly status: number | null;
  readonly latencyMs: number;
  /** Why nothing came back (ECONNREFUSED, timeout), or null. */
  readonly error: string | null;
}

/**
 * The name `hookinbox listen` signs as: its requests' `webhook-id` is `<event id>:listen`.
 *
 * @example
 * ```ts
 * stableDeliveryId(event.id, listenDestination); // "evt_01J…:listen"
 * ```
 */
export const listenDestination = "listen";

/**
 * The headers of one local request: as the gateway forwards (`forwardHeaders`, signed by
 * `signStandardWebhook` with the given secret, one more hop) or the provider's own, unchanged.
 *
 * @example
 * ```ts
 * localHeaders(event, body, { kind: "provider" }, false, Date.now()); // [["stripe-signature", "t=…"], …]
 * ```
 */
export function localHeaders(
  event: ListenedEvent,
  body: Uint8Array,
  signing: ListenSigning,
  isReplay: boolean,
  nowMs: number,
): Array<[string, string]> {
  if (signing.kind === "provider")
    return event.headers
      .filter(([name]) => !connectionHeaders.has(name.toLowerCase()))
      .map(([name, value]) => [name, value]);
  const id = stableDeliveryId(event.id, listenDestination);
  const signature =
    signStandardWebhook([signing.secret], id, body, nowMs, (storedHops(event.headers) ?? 0) + 1) ??
    {};
  const delivery = {
    headers: event.headers.map(([n, v]) => [n, v] as [string, string]),
    attempt: 1,
    isReplay,
    eventId: event.id,
    id,
    source: event.source,
    type: event.type,
  };
  return Object.entries(forwardHeaders(delivery, {}, signature));
}

/**
 * POSTs one event to the local app and waits for its answer (the body is read and dropped).
 *
 * @example
 * ```ts
 * const result = await postLocal("http://localhost:3000/webhooks", event, signing, false);
 * ```
 */
export async function postLocal(
  url: string,
  event: ListenedEvent,
  signing: ListenSigning,
  isReplay: boolean,
  timeoutMs = 30_000,
): Promise<LocalResult> {
  const body = Buffer.from(event.body, "base64");
  const headers = new Headers();
  for (const [name, value] of localHeaders(event, body, signing, isReplay, Date.now()))
    headers.append(name, value);
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.arrayBuffer().catch(() => undefined);
    return { status: response.status, latencyMs: performance.now() - started, error: null };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    const reason =
      (error as Error).name === "TimeoutError"
        ? `timeout after ${timeoutMs} ms`
        : (cause?.code ?? (error as Error).message);
    return { status: null, latencyMs: performance.now() - started, error: reason };
  }
}
