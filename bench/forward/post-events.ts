import { Agent, request } from "node:http";
import type { SignedEvent } from "../queue-events.ts";

/**
 * Posts signed Stripe-style events to a gateway over keep-alive connections, `inFlight` at once,
 * as the forwarding benches' client does.
 *
 * @example
 * ```ts
 * const poster = eventPoster(50);
 * const non200 = await poster.postAll(`${gateway.url}/webhooks/stripe`, events);
 * ```
 */
export function eventPoster(inFlight: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight });

  /** Posts one event; resolves with its status. */
  function post(url: string, event: SignedEvent): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method: "POST",
          agent,
          headers: {
            "content-type": "application/json",
            "content-length": event.body.byteLength,
            "stripe-signature": event.signature,
            "x-bench-id": event.id,
          },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end(event.body);
    });
  }

  /** Posts every event with `inFlight` at once; returns the ids answered 200. */
  async function postAllAcked(url: string, events: readonly SignedEvent[]): Promise<string[]> {
    let next = 0;
    const acked: string[] = [];
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < events.length) {
          const event = events[next++]!;
          if ((await post(url, event)) === 200) acked.push(event.id);
        }
      }),
    );
    return acked;
  }

  /** Posts every event with `inFlight` at once; returns the non-200 answers. */
  async function postAll(url: string, events: readonly SignedEvent[]): Promise<number> {
    return events.length - (await postAllAcked(url, events)).length;
  }

  return { post, postAll, postAllAcked, close: () => agent.destroy() };
}
