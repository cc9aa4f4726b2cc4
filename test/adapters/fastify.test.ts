import { join } from "node:path";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { fastifyPlugin } from "../../src/adapters/fastify.ts";
import { createInbox } from "../../src/inbox.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function app() {
  const tmp = tempDir();
  const inbox = createInbox(
    {
      store: `sqlite:${join(tmp.dir, "fastify.db")}`,
      sources: testSources,
      http: { bodyLimit: "16kb" },
    },
    { env: {} },
  );
  const fastify = Fastify();
  // The app parses JSON everywhere else (Fastify's default); the plugin scope keeps raw bytes.
  fastify.post("/elsewhere", async (request) => ({ parsed: request.body }));
  await fastify.register(fastifyPlugin(inbox) as never);
  await fastify.ready();
  cleanups.push(
    tmp.cleanup,
    () => inbox.close(),
    () => fastify.close(),
  );
  return fastify;
}

describe("Fastify plugin", () => {
  it("verifies on raw bytes while the rest of the app still parses JSON (inject)", async () => {
    const fastify = await app();
    const request = stripeRequest("evt_fastify_1");
    const first = await fastify.inject({
      method: "POST",
      url: "/webhooks/stripe",
      headers: request.headers,
      payload: request.body,
    });
    const second = await fastify.inject({
      method: "POST",
      url: "/webhooks/stripe",
      headers: request.headers,
      payload: request.body,
    });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ ok: true, duplicate: false });
    expect(second.json()).toMatchObject({
      ok: true,
      duplicate: true,
      eventId: first.json().eventId,
    });
    const elsewhere = await fastify.inject({
      method: "POST",
      url: "/elsewhere",
      payload: { a: 1 },
    });
    expect(elsewhere.json()).toEqual({ parsed: { a: 1 } });
  });

  it("rejects a bad signature with its code", async () => {
    const fastify = await app();
    const request = stripeRequest("evt_fastify_2");
    const response = await fastify.inject({
      method: "POST",
      url: "/webhooks/stripe",
      headers: request.headers,
      payload: request.body.replace("invoice", "invoicf"),
    });
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe("HOOKINBOX_SIGNATURE_MISMATCH");
  });

  it("works over real HTTP on loopback", async () => {
    const fastify = await app();
    const url = await fastify.listen({ port: 0, host: "127.0.0.1" });
    const response = await fetch(`${url}/webhooks/stripe`, {
      method: "POST",
      ...stripeRequest("evt_fastify_3"),
    });
    expect(response.status).toBe(200);
  });
});
