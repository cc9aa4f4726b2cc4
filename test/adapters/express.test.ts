import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { captureRawBody, expressHandler } from "../../src/adapters/express.ts";
import { createInbox, type Inbox } from "../../src/inbox.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(setup: (app: express.Express, inbox: Inbox) => void): Promise<string> {
  const tmp = tempDir();
  const inbox = createInbox(
    { store: `sqlite:${join(tmp.dir, "express.db")}`, sources: testSources },
    { env: {} },
  );
  const app = express();
  setup(app, inbox);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  cleanups.push(
    tmp.cleanup,
    () => inbox.close(),
    () => new Promise((r) => server.close(r)),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const send = (url: string, request: { body: string; headers: Record<string, string> }) =>
  fetch(`${url}/webhooks/stripe`, { method: "POST", ...request }).then(async (r) => ({
    status: r.status,
    json: (await r.json()) as any,
  }));

describe("Express adapter", () => {
  it("reads the raw stream when mounted before any body parser", async () => {
    const url = await serve((app, inbox) => {
      app.post("/webhooks/:source", expressHandler(inbox));
      app.use(express.json());
    });
    expect(await send(url, stripeRequest("evt_express_1"))).toMatchObject({
      status: 200,
      json: { ok: true, duplicate: false },
    });
  });

  it("gets the raw bytes when the app parses JSON globally with captureRawBody", async () => {
    const url = await serve((app, inbox) => {
      app.use(express.json({ verify: captureRawBody }));
      app.post("/webhooks/:source", expressHandler(inbox));
    });
    const request = stripeRequest("evt_express_2");
    expect((await send(url, request)).json.duplicate).toBe(false);
    expect((await send(url, request)).json.duplicate).toBe(true);
  });

  it("accepts express.raw() buffers", async () => {
    const url = await serve((app, inbox) => {
      app.post("/webhooks/:source", express.raw({ type: "*/*" }), expressHandler(inbox));
    });
    expect((await send(url, stripeRequest("evt_express_3"))).status).toBe(200);
  });

  it("fails loudly with HOOKINBOX_BODY_ALREADY_CONSUMED when a JSON parser ate the body", async () => {
    const url = await serve((app, inbox) => {
      app.use(express.json());
      app.post("/webhooks/:source", expressHandler(inbox));
    });
    const result = await send(url, stripeRequest("evt_express_4"));
    expect(result.status).toBe(500);
    expect(result.json.error.code).toBe("HOOKINBOX_BODY_ALREADY_CONSUMED");
    expect(result.json.error.message).toContain("captureRawBody");
  });
});
