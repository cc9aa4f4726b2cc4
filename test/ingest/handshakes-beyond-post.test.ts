/**
 * Handshakes beyond POST, through the real gateway over loopback HTTP and a real SQLite store:
 * Meta's GET verify-token, Dropbox's GET challenge, Okta's verification GET, Microsoft Graph's
 * validationToken and clientState, Asana's X-Hook-Secret handshake. Each is answered only when
 * it verifies (forged ones get 401/403 with exactly one code), a GET that is no recognised
 * handshake stays 405, and nothing but Asana's handshake is ever stored.
 */

import { createHmac } from "node:crypto";
import { join } from "node:path";
import { sign as octokitSign } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { tempDir } from "../helpers/temp.ts";

const token = testAdminToken;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gateway(sources: Record<string, unknown>, env: Record<string, string> = {}) {
  const tmp = tempDir();
  const gw = await startGateway(
    { store: `sqlite:${join(tmp.dir, "s.db")}`, sources },
    { env, port: 0, adminToken: token },
  );
  cleanups.push(tmp.cleanup, () => gw.close());
  return gw;
}

async function send(
  gw: Gateway,
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
) {
  const response = await fetch(`${gw.url}${path}`, {
    method: init.method ?? "GET",
    ...(init.body === undefined ? {} : { body: init.body }),
    headers: init.headers ?? {},
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    code: text.startsWith("{") ? (JSON.parse(text) as any).error?.code : undefined,
  };
}

async function events(gw: Gateway): Promise<any[]> {
  const response = await fetch(`${gw.url}/api/events`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await response.json()) as any).items;
}

const hex = (secret: string, body: string) =>
  createHmac("sha256", secret).update(body).digest("hex");

describe("Meta: GET hub.challenge and X-Hub-Signature-256", () => {
  const appSecret = "meta-app-secret";
  const verifyToken = "my-verify-token";
  // WhatsApp Cloud API's documented "messages" notification, abridged.
  const body = JSON.stringify({
    object: "whatsapp_business_account",
    entry: [
      {
        id: "102290129340398",
        changes: [
          {
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: "15550783881", phone_number_id: "106540352242922" },
              contacts: [{ profile: { name: "Sheena Nelson" }, wa_id: "16505551234" }],
              messages: [
                {
                  from: "16505551234",
                  id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=",
                  timestamp: "1749416383",
                  type: "text",
                  text: { body: "Does it come in another color?" },
                },
              ],
            },
            field: "messages",
          },
        ],
      },
    ],
  });

  it("answers the verification GET only with the right verify token; stores nothing", async () => {
    const gw = await gateway(
      { wa: { provider: "meta", secrets: [appSecret], verifyTokens: [{ env: "META_VERIFY" }] } },
      { META_VERIFY: verifyToken },
    );
    const ok = await send(
      gw,
      `/webhooks/wa?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=1158201444`,
    );
    expect({ status: ok.status, text: ok.text }).toEqual({ status: 200, text: "1158201444" });
    expect(ok.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(ok.headers.get("x-content-type-options")).toBe("nosniff");

    const forged = await send(
      gw,
      "/webhooks/wa?hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1158201444",
    );
    expect({ status: forged.status, code: forged.code }).toEqual({
      status: 403,
      code: "HOOKINBOX_HANDSHAKE_REJECTED",
    });
    const appSecretAsToken = await send(
      gw,
      `/webhooks/wa?hub.mode=subscribe&hub.verify_token=${appSecret}&hub.challenge=1`,
    );
    expect(appSecretAsToken.status).toBe(403);
    const wrongMode = await send(
      gw,
      `/webhooks/wa?hub.mode=unsubscribe&hub.verify_token=${verifyToken}&hub.challenge=1`,
    );
    expect(wrongMode.code).toBe("HOOKINBOX_HANDSHAKE_REJECTED");
    const noChallenge = await send(
      gw,
      `/webhooks/wa?hub.mode=subscribe&hub.verify_token=${verifyToken}`,
    );
    expect(noChallenge.code).toBe("HOOKINBOX_HANDSHAKE_REJECTED");
    const plainGet = await send(gw, "/webhooks/wa");
    expect({ status: plainGet.status, code: plainGet.code }).toEqual({
      status: 405,
      code: "HOOKINBOX_METHOD_NOT_ALLOWED",
    });
    expect(await events(gw)).toEqual([]);
  });

  it("stores a signed event once; a retry is a duplicate; a forged one is 401", async () => {
    const gw = await gateway({
      wa: { provider: "meta", secrets: [appSecret], verifyTokens: [verifyToken] },
    });
    // @octokit/webhooks-methods signs the same sha256=<hex> format Meta uses.
    const signature = await octokitSign(appSecret, body);
    const headers = { "content-type": "application/json", "x-hub-signature-256": signature };
    const first = await send(gw, "/webhooks/wa", { method: "POST", body, headers });
    const retry = await send(gw, "/webhooks/wa", { method: "POST", body, headers });
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(JSON.parse(retry.text).duplicate).toBe(true);
    const forged = await send(gw, "/webhooks/wa", {
      method: "POST",
      body,
      headers: { ...headers, "x-hub-signature-256": `sha256=${hex("other", body)}` },
    });
    expect({ status: forged.status, code: forged.code }).toEqual({
      status: 401,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
    });
    const stored = await events(gw);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ type: "whatsapp_business_account.messages" });
    expect(stored[0].dedupKey).toMatch(/^meta:[0-9a-f]{64}$/);
  });
});

describe("Dropbox: GET challenge and X-Dropbox-Signature", () => {
  it("echoes the challenge as nosniff text, refuses a non-challenge GET, verifies events", async () => {
    const gw = await gateway({ dbx: { provider: "dropbox", secrets: ["dropbox-app-secret"] } });
    const ok = await send(gw, "/webhooks/dbx?challenge=kL1g7bQ3xZ");
    expect({ status: ok.status, text: ok.text }).toEqual({ status: 200, text: "kL1g7bQ3xZ" });
    expect(ok.headers.get("x-content-type-options")).toBe("nosniff");
    const script = await send(gw, `/webhooks/dbx?challenge=${encodeURIComponent("<a b>")}`);
    expect({ status: script.status, code: script.code }).toEqual({
      status: 403,
      code: "HOOKINBOX_HANDSHAKE_REJECTED",
    });
    expect((await send(gw, "/webhooks/dbx?other=1")).status).toBe(405);
    expect((await send(gw, "/webhooks/dbx", { method: "PUT", body: "x" })).status).toBe(405);

    const body =
      '{"list_folder":{"accounts":["dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc"]},"delta":{"users":[12345678]}}';
    const signed = await send(gw, "/webhooks/dbx", {
      method: "POST",
      body,
      headers: { "x-dropbox-signature": hex("dropbox-app-secret", body) },
    });
    expect(signed.status).toBe(200);
    const forged = await send(gw, "/webhooks/dbx", {
      method: "POST",
      body,
      headers: { "x-dropbox-signature": hex("wrong", body) },
    });
    expect(forged.code).toBe("HOOKINBOX_SIGNATURE_MISMATCH");
    const stored = await events(gw);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ type: "list_folder" });
    expect(stored[0].dedupKey).toMatch(/^notification:[0-9a-f-]{36}$/);
  });
});

describe("Okta: verification GET and event batches", () => {
  const secret = "Basic b2t0YTpob29rLXNlY3JldA==";
  // Okta's documented event hook request, abridged to two events.
  const body = JSON.stringify({
    eventType: "com.okta.event_hook",
    eventTypeVersion: "1.0",
    cloudEventsVersion: "0.1",
    source: "https://example.okta.com/api/v1/eventHooks/whoql0HfiLGPWc8Jx0g3",
    eventId: "b5a188b9-5ece-4636-b041-482ffda96311",
    data: {
      events: [
        {
          uuid: "4d4b0b26-2a5a-11ee-a38a-5b7b1e36bb9c",
          published: "2023-07-25T17:15:21.000Z",
          eventType: "user.lifecycle.create",
          actor: { id: "00u1qw1mqitPHM8AJ0g7", type: "User" },
          target: [{ id: "00u1xut9qfLM8d5vA0g7", type: "User" }],
        },
        {
          uuid: "4d4b0b27-2a5a-11ee-a38a-5b7b1e36bb9c",
          published: "2023-07-25T17:15:22.000Z",
          eventType: "user.lifecycle.activate",
          actor: { id: "00u1qw1mqitPHM8AJ0g7", type: "User" },
          target: [{ id: "00u1xut9qfLM8d5vA0g7", type: "User" }],
        },
      ],
    },
    eventTime: "2023-07-25T17:15:23.000Z",
    contentType: "application/json",
  });

  it("answers the verification only with the authorization secret, and splits events", async () => {
    const gw = await gateway({ okta: { provider: "okta", secrets: [secret] } });
    const challenge = { "x-okta-verification-challenge": "rtt8cE4DU7nzf8lnLpbNL9VRu4IjLZvk" };
    const ok = await send(gw, "/webhooks/okta", {
      headers: { ...challenge, authorization: secret },
    });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toEqual({ verification: "rtt8cE4DU7nzf8lnLpbNL9VRu4IjLZvk" });
    const forged = await send(gw, "/webhooks/okta", {
      headers: { ...challenge, authorization: "Basic Zm9yZ2VkOng=" },
    });
    expect({ status: forged.status, code: forged.code }).toEqual({
      status: 401,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
    });
    const anonymous = await send(gw, "/webhooks/okta", { headers: challenge });
    expect(anonymous.code).toBe("HOOKINBOX_SIGNATURE_MISSING");
    expect((await send(gw, "/webhooks/okta", { headers: { authorization: secret } })).status).toBe(
      405,
    );

    const posted = await send(gw, "/webhooks/okta", {
      method: "POST",
      body,
      headers: { "content-type": "application/json", authorization: secret },
    });
    expect(posted.status).toBe(200);
    expect(JSON.parse(posted.text).events).toHaveLength(2);
    const stored = await events(gw);
    expect(stored.map((e: any) => e.type).sort()).toEqual([
      "user.lifecycle.activate",
      "user.lifecycle.create",
    ]);
  });
});

describe("Microsoft Graph: validationToken and clientState", () => {
  // Graph's documented change notification, with its documented id.
  const notification = (clientState: string) =>
    JSON.stringify({
      value: [
        {
          id: "lsgTZMr9KwAAA",
          subscriptionId: "8eb5d6ba-0e23-4bb7-9e5b-04bbad0bd5a2",
          subscriptionExpirationDateTime: "2023-11-17T22:11:09.952Z",
          clientState,
          changeType: "created",
          resource: "Users/9b6c4d2e/Messages/AAMkADAx",
          tenantId: "84bd8158-6d4d-4958-8b9f-9d6445542f95",
          resourceData: {
            "@odata.type": "#Microsoft.Graph.Message",
            "@odata.id": "Users/9b6c4d2e/Messages/AAMkADAx",
            "@odata.etag": 'W/"CQAAABYAAADkrWGo7bouTKlsgTZMr9KwAAAUWRHf"',
            id: "AAMkADAx",
          },
        },
      ],
    });

  it("echoes the validation token as text, then accepts only notifications with the clientState", async () => {
    const gw = await gateway({ graph: { provider: "msgraph", secrets: ["secretClientValue"] } });
    const validation = await send(
      gw,
      `/webhooks/graph?validationToken=${encodeURIComponent("Validation: Testing client application")}`,
      { method: "POST", headers: { "content-type": "text/plain" } },
    );
    expect({ status: validation.status, text: validation.text }).toEqual({
      status: 200,
      text: "Validation: Testing client application",
    });
    const ok = await send(gw, "/webhooks/graph", {
      method: "POST",
      body: notification("secretClientValue"),
      headers: { "content-type": "application/json" },
    });
    expect(ok.status).toBe(200);
    const forged = await send(gw, "/webhooks/graph", {
      method: "POST",
      body: notification("guessed"),
      headers: { "content-type": "application/json" },
    });
    expect({ status: forged.status, code: forged.code }).toEqual({
      status: 401,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
    });
    const stored = await events(gw);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ dedupKey: "lsgTZMr9KwAAA", type: "created" });
  });
});

describe("Asana: X-Hook-Secret handshake, then X-Hook-Signature", () => {
  const hookSecret = "f7ad2c8d1b0a4e5f9c3b6a7d8e9f0a1b";
  const body = JSON.stringify({
    events: [
      {
        user: { gid: "1123", resource_type: "user" },
        created_at: "2023-11-14T22:13:20.000Z",
        action: "changed",
        resource: { gid: "1203456789012345", resource_type: "task" },
        parent: null,
        change: { field: "assignee", action: "changed" },
      },
    ],
  });

  it("refuses the handshake unless armed; armed, echoes and stores it; events need the secret", async () => {
    const closed = await gateway({ asana: { provider: "asana", secrets: [hookSecret] } });
    const refused = await send(closed, "/webhooks/asana", {
      method: "POST",
      headers: { "x-hook-secret": hookSecret },
    });
    expect({ status: refused.status, code: refused.code }).toEqual({
      status: 403,
      code: "HOOKINBOX_HANDSHAKE_REJECTED",
    });
    expect(await events(closed)).toEqual([]);

    const armed = await gateway({ asana: { provider: "asana", acceptHandshake: true } });
    const handshake = await send(armed, "/webhooks/asana", {
      method: "POST",
      headers: { "x-hook-secret": hookSecret },
    });
    expect(handshake.status).toBe(200);
    expect(handshake.headers.get("x-hook-secret")).toBe(hookSecret);
    const [stored] = await events(armed);
    expect(stored).toMatchObject({ type: "handshake" });
    expect(stored.dedupKey).toMatch(/^handshake:[0-9a-f]{32}$/);
    expect(stored.dedupKey).not.toContain(hookSecret);
    // No secret yet: events fail closed (503, Asana retries) until the operator adds it.
    const early = await send(armed, "/webhooks/asana", {
      method: "POST",
      body,
      headers: { "x-hook-signature": hex(hookSecret, body) },
    });
    expect({ status: early.status, code: early.code }).toEqual({
      status: 503,
      code: "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
    });

    const signed = await send(closed, "/webhooks/asana", {
      method: "POST",
      body,
      headers: { "x-hook-signature": hex(hookSecret, body) },
    });
    expect(signed.status).toBe(200);
    const [event] = await events(closed);
    expect(event).toMatchObject({
      type: "task.changed",
      dedupKey: "1203456789012345:changed:2023-11-14T22:13:20.000Z:assignee",
    });
    const heartbeat = '{"events":[]}';
    const beat = await send(closed, "/webhooks/asana", {
      method: "POST",
      body: heartbeat,
      headers: { "x-hook-signature": hex(hookSecret, heartbeat) },
    });
    expect(beat.status).toBe(200);
    expect(await events(closed)).toHaveLength(1);
  });
});
