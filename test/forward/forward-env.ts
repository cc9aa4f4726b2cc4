// Shared setup for the forwarding tests: an inbox (see processingInbox) on a test store whose
// `std` events are routed to the given destinations, and loopback receivers playing the apps.
import type { InboxOptions } from "../../src/inbox.ts";
import { onCleanup } from "../helpers/cleanups.ts";
import { processingInbox } from "../helpers/processing.ts";
import {
  type ReceivedRequest,
  type Receiver,
  type Responder,
  startReceiver,
} from "../helpers/receiver.ts";
import type { StoreFactory } from "../helpers/stores.ts";

export const destinationSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
export const otherSecret = "whsec_dGhpcyBpcyBub3QgdGhlIHJpZ2h0IHNlY3JldA==";

/** A receiver on 127.0.0.1, closed after the test. */
export async function receiver(responder?: Responder): Promise<Receiver> {
  const r = await startReceiver(responder);
  onCleanup(() => r.close());
  return r;
}

/** A destination config for a loopback receiver (private networks allowed, 5 s timeout). */
export function destination(url: string, more: Record<string, unknown> = {}) {
  return { url, secret: destinationSecret, allowPrivateNetworks: true, timeout: "5s", ...more };
}

/**
 * An inbox on a fresh store of `factory` routing `std` to every destination, retrying after
 * 50 ms up to 6 attempts and polling every 50 ms; `extra` overrides any of it.
 */
export async function forwardingInbox(
  factory: StoreFactory,
  destinations: Record<string, Record<string, unknown>>,
  extra: Record<string, unknown> = {},
  options: InboxOptions = {},
) {
  const store = await factory.open();
  onCleanup(() => store.cleanup());
  const env = processingInbox(
    {
      store: store.url,
      destinations,
      routes: [{ from: "std", to: Object.keys(destinations) }],
      retry: { schedule: ["50ms"], jitter: "none", maxAttempts: 6 },
      worker: { pollInterval: "50ms" },
      ...extra,
    },
    options,
  );
  onCleanup(env.cleanup);
  return { ...env, store };
}

/**
 * Requests per rate window of `perMs`, by `webhook-timestamp` (the second each attempt was signed
 * in, right after the rate limit admitted it at the start of its window).
 */
export function requestsPerWindow(requests: readonly ReceivedRequest[], perMs: number): number[] {
  const perWindow = new Map<number, number>();
  for (const request of requests) {
    const window = Math.floor((Number(request.headers["webhook-timestamp"]) * 1000) / perMs);
    perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
  }
  return [...perWindow.values()];
}
