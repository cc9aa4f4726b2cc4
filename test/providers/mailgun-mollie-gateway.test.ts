/**
 * Mailgun and Mollie through the real gateway over loopback HTTP and a real SQLite store: a
 * Mailgun signature pasted onto other event data is refused and nothing more is stored; Mollie's
 * classic id-only posts need the URL token and every notification of one payment is stored as
 * its own event on one ordering key, while a next-gen event's redelivery is a duplicate.
 */

import { createHmac } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { tempDir } from "../helpers/temp.ts";

const MAILGUN_KEY = "key-3ax6xnjp29jd6fds4gc373sgvjxteol0";
const MOLLIE_SECRET = "mollie-url-token-7f3b2a";
const tmp = tempDir();
let gw: Gateway;

beforeAll(async () => {
  gw = await startGateway(
    {
      store: `sqlite:${join(tmp.dir, "s.db")}`,
      sources: {
        mail: { provider: "mailgun", secrets: [MAILGUN_KEY] },
        mollie: { provider: "mollie", secrets: [MOLLIE_SECRET] },
      },
    },
    { env: {}, port: 0, adminToken: testAdminToken },
  );
});

afterAll(async () => {
  await gw?.close();
  tmp.cleanup();
});

async function post(path: string, body: string, headers: Record<string, string>) {
  const response = await fetch(`${gw.url}${path}`, { method: "POST", body, headers });
  const json = (await response.json()) as { error?: { code?: string }; duplicate?: boolean };
  return { status: response.status, code: json.error?.code, duplicate: json.duplicate };
}

async function stored(source: string) {
  const page = await gw.inbox.store.listEvents({ source, limit: 100 });
  const details = await Promise.all(page.items.map((e) => gw.inbox.store.getEvent(e.id)));
  return details.flatMap((e) => (e === null ? [] : [e]));
}

function mailgunBody(eventId: string, token: string, timestamp: number) {
  const signature = createHmac("sha256", MAILGUN_KEY).update(`${timestamp}${token}`).digest("hex");
  return JSON.stringify({
    signature: { token, timestamp: String(timestamp), signature },
    "event-data": { id: eventId, event: "delivered", timestamp, recipient: "alice@example.com" },
  });
}

describe("mailgun through the gateway", () => {
  it("stores an event once; the same signature on other event data is 401 REPLAYED", async () => {
    const t = Math.floor(Date.now() / 1000);
    const token = "a1".repeat(25);
    const json = { "content-type": "application/json" };
    expect(await post("/webhooks/mail", mailgunBody("evt-1", token, t), json)).toMatchObject({
      status: 200,
      duplicate: false,
    });
    expect(await post("/webhooks/mail", mailgunBody("evt-1", token, t), json)).toMatchObject({
      status: 200,
      duplicate: true,
    });
    expect(await post("/webhooks/mail", mailgunBody("evt-forged", token, t), json)).toEqual({
      status: 401,
      code: "HOOKINBOX_SIGNATURE_REPLAYED",
      duplicate: undefined,
    });
    expect((await stored("mail")).map((e) => e.dedupKey)).toEqual(["evt-1"]);
  });
});

describe("mollie through the gateway", () => {
  const form = { "content-type": "application/x-www-form-urlencoded" };

  it("classic posts need ?token=; two notifications of one payment are two events in one order", async () => {
    expect(await post("/webhooks/mollie", "id=tr_WDqYK6vllg", form)).toMatchObject({
      status: 400,
      code: "HOOKINBOX_SIGNATURE_MISSING",
    });
    expect(await post("/webhooks/mollie?token=wrong", "id=tr_WDqYK6vllg", form)).toMatchObject({
      status: 401,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
    });
    const path = `/webhooks/mollie?token=${MOLLIE_SECRET}`;
    expect((await post(path, "id=tr_WDqYK6vllg", form)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later notification, later instant
    expect((await post(path, "id=tr_WDqYK6vllg", form)).status).toBe(200);
    const events = (await stored("mollie")).filter((e) => e.orderingKey === "tr_WDqYK6vllg");
    expect(events).toHaveLength(2);
    expect(new Set(events.map((e) => e.dedupKey)).size).toBe(2);
    expect(events.map((e) => e.type)).toEqual(["payment.changed", "payment.changed"]);
  });

  it("a next-gen event and its redelivery are one event", async () => {
    const body = JSON.stringify({
      resource: "event",
      id: "event_GvJ8WHrp5isUdRub9CJyH",
      type: "payment-link.paid",
      entityId: "pl_qng5gbbv8NAZ5gpM5ZYgx",
      createdAt: "2024-12-16T15:59:04.0Z",
    });
    const signature = createHmac("sha256", MOLLIE_SECRET).update(body).digest("hex");
    const headers = {
      "content-type": "application/json",
      "x-mollie-signature": `sha256=${signature}`,
    };
    expect(await post("/webhooks/mollie", body, headers)).toMatchObject({
      status: 200,
      duplicate: false,
    });
    expect(await post("/webhooks/mollie", body, headers)).toMatchObject({
      status: 200,
      duplicate: true,
    });
    const events = (await stored("mollie")).filter(
      (e) => e.orderingKey === "pl_qng5gbbv8NAZ5gpM5ZYgx",
    );
    expect(events.map((e) => e.dedupKey)).toEqual(["event_GvJ8WHrp5isUdRub9CJyH"]);
  });
});
