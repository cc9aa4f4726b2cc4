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

  /** Posts every event with `inFlight` at once; returns the non-200 answers. */
  async function postAll(url: string, events: readonly SignedEvent[]): Promise<number> {
    let next = 0;
    let non200 = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < events.length) {
          if ((await post(url, events[next++]!)) !== 200) non200++;
        }
      }),
    );
    return non200;
  }

  return { post, postAll, close: () => agent.destroy() };
}
