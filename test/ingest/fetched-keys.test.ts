/**
 * Fetched-key providers through the whole gateway (real HTTP over loopback, a real SQLite file):
 * stored once under concurrency, 503 and nothing stored when the key endpoint fails, a forged
 * certificate URL refused without a fetch, SNS subscription confirmations stored or confirmed.
 * The key fetcher is injected, so nothing leaves the machine.
 */

import { generateKeyPairSync, sign } from "node:crypto";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import type { KeyFetchResponse } from "../../src/providers/keys/index.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { tempDir } from "../helpers/temp.ts";
import { offlineFetcher, selfSignedCertificate } from "../providers/key-fetcher.ts";

const token = testAdminToken;
const TOPIC = "arn:aws:sns:eu-west-1:123456789012:orders";
const CERT_URL =
  "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-0123456789abcdef.pem";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let certificate: { cert: string; privateKey: string };
beforeAll(async () => {
  certificate = await selfSignedCertificate("sns.amazonaws.com");
});

async function gateway(
  sources: Record<string, unknown>,
  answer: Parameters<typeof offlineFetcher>[0],
) {
  const tmp = tempDir();
  const offline = offlineFetcher(answer);
  const gw: Gateway = await startGateway(
    { store: `sqlite:${join(tmp.dir, "s.db")}`, sources },
    { env: {}, port: 0, adminToken: token, keyFetcher: offline.fetcher },
  );
  cleanups.push(tmp.cleanup, () => gw.close());
  return { gw, ...offline };
}

const post = async (gw: Gateway, source: string, body: string, headers = {}) => {
  const response = await fetch(`${gw.url}/webhooks/${source}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
  });
  return { status: response.status, json: (await response.json()) as any };
};
const events = async (gw: Gateway) =>
  (
    (await (
      await fetch(`${gw.url}/api/events`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { items: Array<{ dedupKey: string; type: string | null }> }
  ).items;

/** An SNS message signed with SHA256withRSA over AWS's canonical string. */
function snsMessage(fields: Record<string, string>): string {
  const names =
    fields.Type === "Notification"
      ? ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
      : ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"];
  const text = names
    .filter((n) => fields[n] !== undefined)
    .map((n) => `${n}\n${fields[n]}\n`)
    .join("");
  return JSON.stringify({
    ...fields,
    SignatureVersion: "2",
    Signature: sign("sha256", Buffer.from(text), certificate.privateKey).toString("base64"),
    SigningCertURL: CERT_URL,
  });
}

const notification = (id: string) =>
  snsMessage({
    Type: "Notification",
    MessageId: id,
    TopicArn: TOPIC,
    Message: JSON.stringify({ orderId: id }),
    Timestamp: new Date().toISOString(),
  });

const certificates = (request: { url: string }): KeyFetchResponse =>
  request.url === CERT_URL
    ? { status: 200, body: certificate.cert }
    : { status: 200, body: "<ConfirmSubscriptionResponse/>" };

describe("fetched-key providers through the gateway", () => {
  it("SNS: 20 parallel identical deliveries → 1 event, 1 certificate fetch, all 200", async () => {
    const { gw, calls } = await gateway(
      { sns: { provider: "sns", topicArns: [TOPIC] } },
      certificates,
    );
    const body = notification("a4f6c2e0-1111-4c1e-9a55-000000000001");
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(gw, "sns", body)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.filter((a) => a.json.duplicate === false)).toHaveLength(1);
    expect(await events(gw)).toMatchObject([
      { dedupKey: "a4f6c2e0-1111-4c1e-9a55-000000000001", type: "Notification" },
    ]);
    expect(calls).toHaveLength(1);
  });

  it("SNS: a failing certificate endpoint → 503, nothing stored; the retry stores it", async () => {
    let up = false;
    const { gw } = await gateway({ sns: { provider: "sns", topicArns: [TOPIC] } }, (request) =>
      up ? certificates(request) : { status: 500, body: "" },
    );
    const body = notification("m-retried");
    const first = await post(gw, "sns", body);
    expect(first).toMatchObject({
      status: 503,
      json: { error: { code: "HOOKINBOX_KEY_UNAVAILABLE" } },
    });
    expect(await events(gw)).toHaveLength(0);
    up = true;
    expect((await post(gw, "sns", body)).status).toBe(200);
    expect(await events(gw)).toHaveLength(1);
  });

  it("SNS: a forged certificate URL → 400, no fetch, nothing stored", async () => {
    const { gw, calls } = await gateway(
      { sns: { provider: "sns", topicArns: [TOPIC] } },
      certificates,
    );
    const forged = JSON.parse(notification("m-forged")) as Record<string, string>;
    forged.SigningCertURL = "https://attacker.example/SimpleNotificationService-x.pem";
    const answer = await post(gw, "sns", JSON.stringify(forged));
    expect(answer).toMatchObject({
      status: 400,
      json: { error: { code: "HOOKINBOX_KEY_URL_NOT_ALLOWED" } },
    });
    expect(calls).toHaveLength(0);
    expect(await events(gw)).toHaveLength(0);
  });

  it("SNS: SubscriptionConfirmation is stored for an operator, or confirmed with autoConfirm", async () => {
    const confirmation = snsMessage({
      Type: "SubscriptionConfirmation",
      MessageId: "c-1",
      Token: "2336412f37fb687f5d51e6e2425dacbba",
      TopicArn: TOPIC,
      Message: "You have chosen to subscribe to the topic.",
      SubscribeURL: `https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=2336412f37fb687f5d51e6e2425dacbba`,
      Timestamp: new Date().toISOString(),
    });
    const manual = await gateway({ sns: { provider: "sns", topicArns: [TOPIC] } }, certificates);
    expect((await post(manual.gw, "sns", confirmation)).status).toBe(200);
    expect(await events(manual.gw)).toMatchObject([{ type: "SubscriptionConfirmation" }]);
    expect(manual.urls()).toEqual([CERT_URL]);

    const auto = await gateway(
      { sns: { provider: "sns", topicArns: [TOPIC], autoConfirm: true } },
      certificates,
    );
    expect((await post(auto.gw, "sns", confirmation)).status).toBe(200);
    expect(auto.urls()).toEqual([CERT_URL, JSON.parse(confirmation).SubscribeURL]);
    expect(await events(auto.gw)).toHaveLength(1);
  });

  it("SendGrid: a signed batch → one event per sg_event_id", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    const key = publicKey.export({ format: "der", type: "spki" }).toString("base64");
    const { gw, calls } = await gateway(
      { sendgrid: { provider: "sendgrid", secrets: [key] } },
      certificates,
    );
    const body = JSON.stringify([
      {
        email: "a@example.com",
        event: "delivered",
        sg_event_id: "e-1",
        sg_message_id: "m-1",
        timestamp: 1,
      },
      {
        email: "a@example.com",
        event: "open",
        sg_event_id: "e-2",
        sg_message_id: "m-1",
        timestamp: 2,
      },
    ]);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = sign("sha256", Buffer.from(timestamp + body), privateKey).toString("base64");
    const headers = {
      "x-twilio-email-event-webhook-signature": signature,
      "x-twilio-email-event-webhook-timestamp": timestamp,
    };
    const answer = await post(gw, "sendgrid", body, headers);
    expect(answer.status).toBe(200);
    expect(answer.json.events).toHaveLength(2);
    expect((await events(gw)).map((e) => e.dedupKey).sort()).toEqual(["e-1", "e-2"]);
    const forged = await post(gw, "sendgrid", body.replace("open", "click"), headers);
    expect(forged).toMatchObject({
      status: 401,
      json: { error: { code: "HOOKINBOX_SIGNATURE_MISMATCH" } },
    });
    expect(calls).toHaveLength(0);
  });

  it("config: keyed sources take no secrets and need their binding (fail closed)", async () => {
    await expect(
      gateway({ sns: { provider: "sns", topicArns: [] } }, certificates),
    ).rejects.toMatchObject({ code: "HOOKINBOX_CONFIG_INVALID" });
    await expect(
      gateway({ sns: { provider: "sns", topicArns: [TOPIC], secrets: ["x"] } }, certificates),
    ).rejects.toMatchObject({ code: "HOOKINBOX_CONFIG_INVALID" });
    await expect(
      gateway(
        { ps: { provider: "pubsub", serviceAccountEmails: ["a@b.iam.gserviceaccount.com"] } },
        certificates,
      ),
    ).rejects.toMatchObject({ code: "HOOKINBOX_CONFIG_INVALID" }); // no audience, no publicUrl
    await expect(
      gateway({ pp: { provider: "paypal", webhookIds: [] } }, certificates),
    ).rejects.toMatchObject({
      code: "HOOKINBOX_CONFIG_INVALID",
    });
  });
});
