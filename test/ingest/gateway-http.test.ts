import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { githubRequest, standardRequest, stripeRequest, testSources } from "../helpers/signers.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";

const token = testAdminToken;

describe.each(storeFactories())("gateway over real HTTP ($name)", (factory) => {
  let gateway: Gateway;
  let store: TestStore;

  beforeEach(async () => {
    store = await factory.open();
    gateway = await startGateway(
      {
        store: store.url,
        http: { bodyLimit: "64kb" },
        sources: testSources,
      },
      { env: {}, port: 0, adminToken: token },
    );
  });

  afterEach(async () => {
    await gateway.close();
    await store.cleanup();
  });

  async function post(source: string, request: { body: string; headers: Record<string, string> }) {
    const response = await fetch(`${gateway.url}/webhooks/${source}`, {
      method: "POST",
      headers: request.headers,
      body: request.body,
    });
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  }

  async function api(path: string) {
    const response = await fetch(`${gateway.url}${path}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  }

  describe("ingest over real HTTP", () => {
    it("stores a Stripe event once and answers 200 with duplicate: true the second time", async () => {
      const request = stripeRequest("evt_once");
      const first = await post("stripe", request);
      const second = await post("stripe", request);
      expect(first).toEqual({
        status: 200,
        json: { ok: true, eventId: expect.stringMatching(/^evt_/), duplicate: false },
      });
      expect(second).toEqual({
        status: 200,
        json: { ok: true, eventId: first.json.eventId, duplicate: true },
      });
      const list = await api("/api/events");
      expect(list.json.items).toHaveLength(1);
      expect(list.json.items[0]).toMatchObject({
        source: "stripe",
        dedupKey: "evt_once",
        type: "invoice.paid",
        status: "ignored",
        receiptCount: 2,
      });
    });

    it("the same event delivered 50 times in parallel: fifty 200s, one event, 50 receipts, 49 duplicates", async () => {
      const request = stripeRequest("evt_parallel");
      const results = await Promise.all(Array.from({ length: 50 }, () => post("stripe", request)));
      expect(results.filter((r) => r.status === 200)).toHaveLength(50);
      expect(new Set(results.map((r) => r.json.eventId)).size).toBe(1);
      expect(results.filter((r) => r.json.duplicate === true)).toHaveLength(49);
      const list = await api("/api/events?source=stripe");
      expect(list.json.items).toHaveLength(1);
      const detail = await api(`/api/events/${results[0]!.json.eventId}`);
      expect(detail.json.receipts).toHaveLength(50);
      expect(detail.json.receipts.filter((r: { duplicate: boolean }) => r.duplicate)).toHaveLength(
        49,
      );
    });

    it("two distinct GitHub deliveries with byte-identical bodies are two events", async () => {
      const body = JSON.stringify({ ref: "refs/heads/main", after: "abc" });
      const a = await post("github", await githubRequest("delivery-a", body));
      const b = await post("github", await githubRequest("delivery-b", body));
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(a.json.eventId).not.toBe(b.json.eventId);
      expect((await api("/api/events?source=github")).json.items).toHaveLength(2);
    });

    it("rejects a JSON body re-serialised with different spacing (401, nothing stored)", async () => {
      const request = stripeRequest("evt_reserialised");
      const reserialised = JSON.stringify(JSON.parse(request.body), null, 2);
      const result = await post("stripe", { ...request, body: reserialised });
      expect(result.status).toBe(401);
      expect(result.json.error.code).toBe("HOOKINBOX_SIGNATURE_MISMATCH");
      expect((await api("/api/events")).json.items).toHaveLength(0);
    });

    it("keeps body bytes and headers verbatim and shows them in the event detail", async () => {
      const request = standardRequest(
        "msg_verbatim",
        '{"type":"user.created",  "timestamp":"2026-11-30T10:00:00Z"}',
      );
      const stored = await post("standard", request);
      const detail = await api(`/api/events/${stored.json.eventId}`);
      expect(detail.json.body.text).toBe(request.body);
      expect(Buffer.from(detail.json.body.base64, "base64").toString()).toBe(request.body);
      expect(detail.json.type).toBe("user.created");
      expect(detail.json.occurredAt).toBe("2026-11-30T10:00:00.000Z");
      expect(detail.json.headers).toContainEqual(["webhook-id", "msg_verbatim"]);
      expect(detail.json.receipts).toEqual([
        expect.objectContaining({
          duplicate: false,
          remoteAddress: expect.stringContaining("127.0.0.1"),
        }),
      ]);
    });

    it("answers 404 for an unknown source, 405 for GET, 413 over the body limit", async () => {
      const unknown = await post("nope", stripeRequest("evt_x"));
      expect(unknown).toEqual({
        status: 404,
        json: { error: { code: "HOOKINBOX_SOURCE_NOT_FOUND", message: expect.any(String) } },
      });
      const get = await fetch(`${gateway.url}/webhooks/stripe`);
      expect(get.status).toBe(405);
      expect(((await get.json()) as any).error.code).toBe("HOOKINBOX_METHOD_NOT_ALLOWED");
      const big = stripeRequest("evt_big", { extra: { padding: "x".repeat(70 * 1024) } });
      const tooLarge = await post("stripe", big);
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.json.error.code).toBe("HOOKINBOX_BODY_TOO_LARGE");
      expect((await api("/api/events")).json.items).toHaveLength(0);
    });

    it("answers healthz and readyz", async () => {
      expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${gateway.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ ok: true, store: factory.kind });
    });
  });

  describe("admin read API", () => {
    it("requires the bearer token", async () => {
      const none = await fetch(`${gateway.url}/api/events`);
      expect(none.status).toBe(401);
      expect(((await none.json()) as any).error.code).toBe("HOOKINBOX_ADMIN_UNAUTHORIZED");
      const wrong = await fetch(`${gateway.url}/api/events`, {
        headers: { authorization: "Bearer nope" },
      });
      expect(wrong.status).toBe(401);
    });

    it("pages newest first with a cursor and filters by source and type", async () => {
      for (let i = 0; i < 7; i++)
        await post(
          "stripe",
          stripeRequest(`evt_page_${i}`, { type: i % 2 ? "invoice.paid" : "customer.created" }),
        );
      await post("github", await githubRequest("d-1", "{}"));
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await api(
          `/api/events?source=stripe&limit=3${cursor ? `&cursor=${cursor}` : ""}`,
        );
        expect(page.status).toBe(200);
        seen.push(...page.json.items.map((e: { dedupKey: string }) => e.dedupKey));
        cursor = page.json.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual([6, 5, 4, 3, 2, 1, 0].map((i) => `evt_page_${i}`));
      const paid = await api("/api/events?type=invoice.paid");
      expect(paid.json.items.map((e: { dedupKey: string }) => e.dedupKey)).toEqual([
        "evt_page_5",
        "evt_page_3",
        "evt_page_1",
      ]);
    });

    it("gives typed errors for a bad cursor, a bad limit and an unknown event", async () => {
      expect((await api("/api/events?cursor=zzz")).json.error.code).toBe(
        "HOOKINBOX_CURSOR_INVALID",
      );
      // A malformed percent-escape is refused before the admin API reads the query.
      expect(await api("/api/events?cursor=%%%")).toEqual({
        status: 400,
        json: { error: { code: "HOOKINBOX_REQUEST_TARGET_INVALID", message: expect.any(String) } },
      });
      expect((await api("/api/events?limit=abc")).json.error.code).toBe("HOOKINBOX_QUERY_INVALID");
      expect((await api("/api/events?limit=0")).json.error.code).toBe("HOOKINBOX_QUERY_INVALID");
      const missing = await api("/api/events/evt_missing");
      expect(missing).toEqual({
        status: 404,
        json: { error: { code: "HOOKINBOX_EVENT_NOT_FOUND", message: expect.any(String) } },
      });
    });
  });
});
