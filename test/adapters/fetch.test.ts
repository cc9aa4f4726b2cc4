import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { toFetchHandler } from "../../src/adapters/fetch.ts";
import { createInbox } from "../../src/inbox.ts";
import { githubRequest, stripeRequest, testSources } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function handler() {
  const tmp = tempDir();
  const inbox = createInbox(
    {
      store: `sqlite:${join(tmp.dir, "fetch.db")}`,
      sources: testSources,
      http: { bodyLimit: "4kb" },
    },
    { env: {} },
  );
  cleanups.push(tmp.cleanup, () => inbox.close());
  return toFetchHandler(inbox);
}

describe("Web fetch handler (Request → Response)", () => {
  it("routes by path and stores once", async () => {
    const handle = handler();
    const request = stripeRequest("evt_fetch_1");
    const make = () =>
      new Request("https://hooks.example.com/webhooks/stripe", { method: "POST", ...request });
    const first = await handle(make());
    const second = await handle(make());
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ duplicate: false });
    expect(await second.json()).toMatchObject({ duplicate: true });
  });

  it("takes the source from the framework's own routing", async () => {
    const handle = handler();
    const request = await githubRequest("d-fetch", '{"zen":"x"}');
    const response = await handle(
      new Request("https://app.example.com/api/hooks/github", { method: "POST", ...request }),
      { source: "github" },
    );
    expect(response.status).toBe(200);
  });

  it("answers 413 over the limit without reading everything, and refuses a consumed body", async () => {
    const handle = handler();
    const big = stripeRequest("evt_fetch_big", { extra: { pad: "x".repeat(5000) } });
    const tooLarge = await handle(
      new Request("https://h.example/webhooks/stripe", { method: "POST", ...big }),
    );
    expect(tooLarge.status).toBe(413);
    expect(((await tooLarge.json()) as any).error.code).toBe("HOOKINBOX_BODY_TOO_LARGE");
    const consumed = new Request("https://h.example/webhooks/stripe", {
      method: "POST",
      ...stripeRequest("evt_fetch_c"),
    });
    await consumed.json();
    const refused = await handle(consumed);
    expect(refused.status).toBe(500);
    expect(((await refused.json()) as any).error.code).toBe("HOOKINBOX_BODY_ALREADY_CONSUMED");
  });
});
