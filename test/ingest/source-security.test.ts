import { createHmac } from "node:crypto";
import { join } from "node:path";
import { hmacValidator } from "@adyen/api-library";
import { Signature } from "@hubspot/api-client";
import { afterEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { secrets, stripeRequest } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

const token = testAdminToken;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gateway(
  config: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<Gateway> {
  const tmp = tempDir();
  const gw = await startGateway(
    { store: `sqlite:${join(tmp.dir, "s.db")}`, ...config },
    { env, port: 0, adminToken: token },
  );
  cleanups.push(tmp.cleanup, () => gw.close());
  return gw;
}

const post = async (
  gw: Gateway,
  source: string,
  request: { body: string; headers: Record<string, string> },
) => {
  const response = await fetch(`${gw.url}/webhooks/${source}`, { method: "POST", ...request });
  const text = await response.text();
  return {
    status: response.status,
    text,
    json: text.startsWith("{") ? (JSON.parse(text) as any) : null,
  };
};
const api = async (gw: Gateway, path: string) =>
  (await (
    await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as any;

const slackSecret = "8f742231b10e8888abcd99yyyzzz85a5";
function slackRequest(body: string, secret = slackSecret, ts = Math.floor(Date.now() / 1000)) {
  // Slack publishes the algorithm, not a signer package: v0=hex(HMAC-SHA256(secret, "v0:ts:body")).
  const signature = `v0=${createHmac("sha256", secret).update(`v0:${ts}:${body}`).digest("hex")}`;
  return {
    body,
    headers: {
      "content-type": "application/json",
      "x-slack-signature": signature,
      "x-slack-request-timestamp": String(ts),
    },
  };
}

describe("provider handshakes, batches and replies through ingest", () => {
  it("answers Slack's url_verification after verifying it, and stores nothing", async () => {
    const gw = await gateway({ sources: { slack: { provider: "slack", secrets: [slackSecret] } } });
    const challenge = JSON.stringify({
      type: "url_verification",
      token: "x",
      challenge: "c0ffee-42",
    });
    const answered = await post(gw, "slack", slackRequest(challenge));
    expect(answered.status).toBe(200);
    expect(answered.text).toContain("c0ffee-42");
    const forged = await post(gw, "slack", slackRequest(challenge, "wrong-secret"));
    expect(forged.status).toBe(401);
    expect(forged.json.error.code).toBe("HOOKINBOX_SIGNATURE_MISMATCH");
    expect((await api(gw, "/api/events")).items).toEqual([]);
  });

  it("splits a HubSpot batch signed by @hubspot/api-client into one event per item", async () => {
    const secret = "yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy";
    const gw = await gateway({
      http: { publicUrl: "https://hooks.example.com" },
      sources: { hubspot: { provider: "hubspot", secrets: [secret] } },
    });
    const items = [123, 124, 125].map((objectId, i) => ({
      eventId: 1,
      subscriptionId: 1,
      portalId: 62515,
      occurredAt: 1_700_000_000_000 + i,
      subscriptionType: "contact.creation",
      attemptNumber: 0,
      objectId,
      changeSource: "CRM",
    }));
    const body = JSON.stringify(items);
    const timestamp = Date.now();
    const signature = Signature.getSignature("POST", "v3", {
      signature: "",
      clientSecret: secret,
      requestBody: body,
      url: "https://hooks.example.com/webhooks/hubspot",
      timestamp,
    });
    const request = {
      body,
      headers: {
        "content-type": "application/json",
        "x-hubspot-signature-v3": signature,
        "x-hubspot-request-timestamp": String(timestamp),
      },
    };
    const first = await post(gw, "hubspot", request);
    expect(first.status).toBe(200);
    expect(first.json.events.map((e: { duplicate: boolean }) => e.duplicate)).toEqual([
      false,
      false,
      false,
    ]);
    const again = await post(gw, "hubspot", request);
    expect(again.json.events.map((e: { duplicate: boolean }) => e.duplicate)).toEqual([
      true,
      true,
      true,
    ]);
    const events = (await api(gw, "/api/events?source=hubspot")).items;
    expect(events).toHaveLength(3);
    expect(new Set(events.map((e: { dedupKey: string }) => e.dedupKey)).size).toBe(3);
  });

  it("answers Adyen with [accepted] and stores each notification item signed by @adyen/api-library", async () => {
    const key = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
    const gw = await gateway({ sources: { adyen: { provider: "adyen", secrets: [key] } } });
    const validator = new hmacValidator();
    const item = (psp: string) => {
      const fields = {
        pspReference: psp,
        merchantAccountCode: "TestMerchant",
        merchantReference: `order-${psp}`,
        amount: { value: 1130, currency: "EUR" },
        eventCode: "AUTHORISATION",
        success: "true",
        eventDate: "2026-11-30T12:00:00+01:00",
        additionalData: {},
      };
      return {
        NotificationRequestItem: {
          ...fields,
          additionalData: { hmacSignature: validator.calculateHmac(fields as never, key) },
        },
      };
    };
    const response = await post(gw, "adyen", {
      body: JSON.stringify({ live: "false", notificationItems: [item("881"), item("882")] }),
      headers: { "content-type": "application/json" },
    });
    expect(response).toMatchObject({ status: 200, text: "[accepted]" });
    expect(
      (await api(gw, "/api/events?source=adyen")).items
        .map((e: { dedupKey: string }) => e.dedupKey)
        .sort(),
    ).toEqual(["881:AUTHORISATION:true", "882:AUTHORISATION:true"]);
  });

  it("answers Discord with 401 for every verification failure", async () => {
    const gw = await gateway({
      sources: {
        discord: {
          provider: "discord",
          secrets: ["d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"],
        },
      },
    });
    const malformed = await post(gw, "discord", {
      body: '{"type":1}',
      headers: { "x-signature-ed25519": "zz", "x-signature-timestamp": "1700000000" },
    });
    expect(malformed.status).toBe(401);
    expect(malformed.json.error.code).toBe("HOOKINBOX_SIGNATURE_MISMATCH");
    const missing = await post(gw, "discord", { body: '{"type":1}', headers: {} });
    expect(missing.status).toBe(401);
    expect(missing.json.error.code).toBe("HOOKINBOX_SIGNATURE_MISSING");
  });
});

describe("source security", () => {
  const stripeSource = {
    provider: "stripe",
    secrets: [secrets.stripe],
    allowIps: ["203.0.113.0/24"],
  };

  it("refuses addresses outside the allowlist (403), before verification", async () => {
    const gw = await gateway({ sources: { stripe: stripeSource } });
    const refused = await post(gw, "stripe", stripeRequest("evt_ip"));
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe("HOOKINBOX_IP_NOT_ALLOWED");
    // Without trusted proxies, X-Forwarded-For is ignored.
    const spoofed = stripeRequest("evt_ip");
    const stillRefused = await post(gw, "stripe", {
      ...spoofed,
      headers: { ...spoofed.headers, "x-forwarded-for": "203.0.113.9" },
    });
    expect(stillRefused.status).toBe(403);
  });

  it("believes X-Forwarded-For only from trusted proxies", async () => {
    const gw = await gateway({
      http: { trustedProxies: ["127.0.0.1/32", "::1"] },
      sources: { stripe: stripeSource },
    });
    const viaProxy = stripeRequest("evt_proxy");
    const accepted = await post(gw, "stripe", {
      ...viaProxy,
      headers: { ...viaProxy.headers, "x-forwarded-for": "203.0.113.9" },
    });
    expect(accepted.status).toBe(200);
    const forgedLeft = stripeRequest("evt_forged");
    const refused = await post(gw, "stripe", {
      ...forgedLeft,
      headers: { ...forgedLeft.headers, "x-forwarded-for": "203.0.113.9, 198.51.100.66" },
    });
    expect(refused.status).toBe(403);
    const detail = await api(gw, `/api/events/${accepted.json.eventId}`);
    expect(detail.receipts[0].remoteAddress).toBe("203.0.113.9");
  });

  it("rate-limits rejected requests per address with 429 and records no receipt past the limit", async () => {
    const gw = await gateway({
      http: { rejectLimit: { max: 3, window: "1m" } },
      sources: { stripe: { provider: "stripe", secrets: [secrets.stripe] } },
    });
    const forged = stripeRequest("evt_forged", { secret: "whsec_wrong" });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await post(gw, "stripe", forged)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    const rejected = await api(gw, "/api/receipts?rejected=true");
    expect(rejected.items).toHaveLength(3);
    expect(rejected.items[0]).toMatchObject({
      source: "stripe",
      eventId: null,
      status: 401,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      remoteAddress: "127.0.0.1",
      size: forged.body.length,
    });
    expect(rejected.items[0].headerNames).toContain("stripe-signature");
    expect(JSON.stringify(rejected)).not.toContain("evt_forged");
  });

  it("never lets a staging secret validate production traffic", async () => {
    const config = {
      environments: {
        production: {
          sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_PROD" }] } },
        },
        staging: {
          sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_STAGING" }] } },
        },
      },
    };
    const env = { STRIPE_PROD: "whsec_prod_only", STRIPE_STAGING: "whsec_staging_only" };
    const production = await gateway(config, { ...env, HOOKINBOX_ENV: "production" });
    expect(
      (await post(production, "stripe", stripeRequest("evt_s", { secret: "whsec_staging_only" })))
        .status,
    ).toBe(401);
    expect(
      (await post(production, "stripe", stripeRequest("evt_p", { secret: "whsec_prod_only" })))
        .status,
    ).toBe(200);
  });
});

describe("secret rotation at the window's edges", () => {
  it("accepts the old secret until notAfter and records which secret matched", async () => {
    const notAfter = Date.now() + 60_000;
    let now = notAfter - 1;
    const tmp = tempDir();
    const gw = await startGateway(
      {
        store: `sqlite:${join(tmp.dir, "r.db")}`,
        sources: {
          stripe: {
            provider: "stripe",
            secrets: [
              { value: "whsec_old", notAfter: new Date(notAfter).toISOString() },
              "whsec_new",
            ],
          },
        },
      },
      { env: {}, port: 0, adminToken: token, now: () => now },
    );
    cleanups.push(tmp.cleanup, () => gw.close());
    const t = () => Math.floor(now / 1000);
    const old = await post(
      gw,
      "stripe",
      stripeRequest("evt_old", { secret: "whsec_old", timestamp: t() }),
    );
    const fresh = await post(
      gw,
      "stripe",
      stripeRequest("evt_new", { secret: "whsec_new", timestamp: t() }),
    );
    expect([old.status, fresh.status]).toEqual([200, 200]);
    expect((await api(gw, `/api/events/${old.json.eventId}`)).receipts[0].secretIndex).toBe(0);
    expect((await api(gw, `/api/events/${fresh.json.eventId}`)).receipts[0].secretIndex).toBe(1);
    now = notAfter;
    const retired = await post(
      gw,
      "stripe",
      stripeRequest("evt_old_2", { secret: "whsec_old", timestamp: t() }),
    );
    expect(retired.status).toBe(401);
  });
});
