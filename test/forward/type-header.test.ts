// Event types that are not plain visible ASCII ("a\nb", "café", "日本", "100%") are forwarded
// over real HTTP with a percent-encoded hookinbox-type that decodeURIComponent turns back into
// the type exactly; before, the HTTP client refused the header and such a delivery failed forever.
import { describe, expect, it } from "vitest";
import { until } from "../helpers/processing.ts";
import { storeFactories } from "../helpers/stores.ts";
import { destination, receiver, forwardingInbox as setup } from "./forward-env.ts";

const types = ["a\nb", "café", "日本", "100%", "invoice.paid", " spaced type "];

describe.each(storeFactories())("hookinbox-type header ($kind)", (factory) => {
  it("every type is delivered once, and its header decodes to the type", async () => {
    const app = await receiver();
    const env = await setup(factory, { app: destination(app.url) });
    const worker = env.inbox.startWorker();
    const posted = new Map<string, string>();
    for (const [index, type] of types.entries())
      posted.set((await env.post(`msg_type_${index}`, { type })).eventId, type);
    await until(
      async () =>
        (await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")) ===
        types.length,
      10_000,
      "every delivery done",
    );
    await worker.stop();
    expect(app.requests).toHaveLength(types.length);
    const received = new Map<string, string>();
    for (const request of app.requests) {
      expect(request.headers["hookinbox-attempt"]).toBe("1");
      received.set(
        request.headers["hookinbox-event-id"]!,
        decodeURIComponent(request.headers["hookinbox-type"]!),
      );
    }
    expect(received).toEqual(posted);
    const raw = new Map(app.requests.map((r) => [posted.get(r.headers["hookinbox-event-id"]!), r]));
    expect(raw.get("invoice.paid")!.headers["hookinbox-type"]).toBe("invoice.paid");
    expect(raw.get("café")!.headers["hookinbox-type"]).toBe("caf%C3%A9");
    expect(raw.get("100%")!.headers["hookinbox-type"]).toBe("100%25");
    expect(raw.get("a\nb")!.headers["hookinbox-type"]).toBe("a%0Ab");
    expect(
      await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status <> 'done'"),
    ).toBe(0);
  });
});
