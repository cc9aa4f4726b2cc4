import { sign as ecSign, generateKeyPairSync, type KeyObject } from "node:crypto";
import { EventWebhook } from "@sendgrid/eventwebhook";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import {
  sendgridIdentity,
  sendgridPublicKey,
  sendgridScheme,
} from "../../src/providers/sendgrid.ts";
import { describeSchemeContract } from "./contract.js";
import {
  expectRejected,
  type Headers,
  identityContext,
  secrets,
  signedRequest,
} from "./helpers.js";

// @sendgrid/eventwebhook only verifies, so the tests sign with node:crypto (ECDSA P-256, SHA-256,
// DER, base64 over "{timestamp}{body}", as SendGrid documents) and check every signature with
// both: the official package is the independent oracle of what SendGrid's receivers accept.
function keyPair(): { publicBase64: string; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  return {
    publicBase64: publicKey.export({ format: "der", type: "spki" }).toString("base64"),
    privateKey,
  };
}

const A = keyPair();
const B = keyPair();
const byPublic = new Map([
  [A.publicBase64, A.privateKey],
  [B.publicBase64, B.privateKey],
]);
const T = "1700000000";
const NOW = 1_700_000_000_000;
// The shape of SendGrid's documented example: an array of events.
const BODY = `[{"email":"example@test.com","timestamp":1700000000,"smtp-id":"<14c5d75ce93.dfd.64b469@ismtpd-555>","event":"processed","category":"cat facts","sg_event_id":"rbtnWrG1DVDGGGFHFyun0A==","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0"},{"email":"example@test.com","timestamp":1700000001,"event":"delivered","sg_event_id":"sZROwMGMagFgnOEmSdvhig==","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0","response":"250 OK"}]`;

function sign(body: string | Uint8Array, publicBase64 = A.publicBase64, timestamp = T): string {
  const key = byPublic.get(publicBase64);
  if (key === undefined) throw new Error("unknown test key");
  return ecSign("sha256", Buffer.concat([Buffer.from(timestamp), Buffer.from(body)]), key).toString(
    "base64",
  );
}

const SIG = sign(BODY);
const scheme = sendgridScheme();

function headers(signature: string | null = SIG, timestamp: string | null = T): Headers {
  return {
    "X-Twilio-Email-Event-Webhook-Signature": signature ?? undefined,
    "X-Twilio-Email-Event-Webhook-Timestamp": timestamp ?? undefined,
  };
}

function verify(
  init: {
    body?: string;
    signature?: string | null;
    timestamp?: string | null;
    active?: string[];
    nowMs?: number;
    toleranceMs?: number;
  } = {},
) {
  const request = signedRequest(
    init.body ?? BODY,
    headers(init.signature === undefined ? SIG : init.signature, init.timestamp),
  );
  const s =
    init.toleranceMs === undefined ? scheme : sendgridScheme({ toleranceMs: init.toleranceMs });
  return s.verifier.verify(
    request,
    secrets(...(init.active ?? [A.publicBase64])),
    init.nowMs ?? NOW,
  );
}

/** What @sendgrid/eventwebhook says about the same request. */
function official(body: string, signature: string, timestamp = T, key = A.publicBase64): boolean {
  const webhook = new EventWebhook();
  try {
    return webhook.verifySignature(
      webhook.convertPublicKeyToECDSA(key),
      body,
      signature,
      timestamp,
    );
  } catch {
    return false;
  }
}

describeSchemeContract({
  scheme,
  secret: A.publicBase64,
  otherSecret: B.publicBase64,
  nowMs: NOW,
  body: BODY,
  sign: (body, key) => ({
    "X-Twilio-Email-Event-Webhook-Signature": sign(body, key),
    "X-Twilio-Email-Event-Webhook-Timestamp": T,
  }),
});

describe("sendgrid: agrees with @sendgrid/eventwebhook", () => {
  it.each<[string, string, string]>([
    ["the documented batch", BODY, T],
    ["a single event", '[{"sg_event_id":"e1","event":"open"}]', "1700000123"],
    ["unicode", '[{"sg_event_id":"é1","event":"click","url":"https://x/🎉"}]', T],
  ])("%s: both accept", (_name, body, timestamp) => {
    const signature = sign(body, A.publicBase64, timestamp);
    expect(official(body, signature, timestamp)).toBe(true);
    expect(verify({ body, signature, timestamp })).toEqual({ secretIndex: 0 });
  });

  it("accepts the key as PEM too", () => {
    const pem = `-----BEGIN PUBLIC KEY-----\n${A.publicBase64}\n-----END PUBLIC KEY-----\n`;
    expect(official(BODY, SIG, T, pem)).toBe(true);
    expect(verify({ active: [pem] })).toEqual({ secretIndex: 0 });
  });

  it.each<[string, { body?: string; signature?: string; timestamp?: string }]>([
    ["a changed body", { body: BODY.replace("processed", "dropped") }],
    ["a changed timestamp", { timestamp: "1700000001" }],
    ["another key's signature", { signature: sign(BODY, B.publicBase64) }],
  ])("%s: both reject", (_name, init) => {
    expect(official(init.body ?? BODY, init.signature ?? SIG, init.timestamp ?? T)).toBe(false);
    expectRejected(() => verify(init), "HOOKINBOX_SIGNATURE_MISMATCH", 401);
  });
});

describe("sendgrid: one code per defect", () => {
  it.each<[string, Parameters<typeof verify>[0], ErrorCode, number]>([
    ["no signature header", { signature: null }, "HOOKINBOX_SIGNATURE_MISSING", 400],
    ["a blank signature header", { signature: "  " }, "HOOKINBOX_SIGNATURE_MISSING", 400],
    ["no timestamp header", { timestamp: null }, "HOOKINBOX_TIMESTAMP_MISSING", 400],
    ["a signature that is not base64", { signature: "%%%%" }, "HOOKINBOX_SIGNATURE_MISMATCH", 401],
    [
      "a signature with one character changed",
      { signature: `${SIG.slice(0, 10)}${SIG[10] === "A" ? "B" : "A"}${SIG.slice(11)}` },
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "a raw (r||s) signature instead of DER",
      {
        signature: ecSign("sha256", Buffer.from(T + BODY), {
          key: A.privateKey,
          dsaEncoding: "ieee-p1363",
        }).toString("base64"),
      },
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "no key is a P-256 key",
      { active: ["bm90IGEga2V5"] },
      "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
      503,
    ],
    [
      "a finite window and a timestamp that is not integer seconds",
      { toleranceMs: 60_000, timestamp: "1700000000.5" },
      "HOOKINBOX_TIMESTAMP_MALFORMED",
      400,
    ],
    [
      "a finite window and an old timestamp",
      { toleranceMs: 60_000, nowMs: NOW + 60_001 },
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
      400,
    ],
    [
      "a finite window and a future timestamp",
      { toleranceMs: 60_000, nowMs: NOW - 60_001 },
      "HOOKINBOX_TIMESTAMP_IN_FUTURE",
      400,
    ],
  ])("%s → %s", (_name, init, code, status) => {
    expectRejected(() => verify(init), code, status, [A.publicBase64, SIG]);
  });

  it("has no window by default (SendGrid documents none and retries for 24 h)", () => {
    expect(verify({ nowMs: NOW + 86_400_000 })).toEqual({ secretIndex: 0 });
    expect(verify({ toleranceMs: 60_000, nowMs: NOW + 60_000 })).toEqual({
      secretIndex: 0,
      signedAt: NOW,
    });
  });

  it("reads only P-256 keys", () => {
    const p384 = generateKeyPairSync("ec", { namedCurve: "secp384r1" })
      .publicKey.export({ format: "der", type: "spki" })
      .toString("base64");
    const ed = generateKeyPairSync("ed25519")
      .publicKey.export({ format: "der", type: "spki" })
      .toString("base64");
    expect(sendgridPublicKey(A.publicBase64)).toBeDefined();
    expect(sendgridPublicKey(p384)).toBeUndefined();
    expect(sendgridPublicKey(ed)).toBeUndefined();
    expect(sendgridPublicKey(`${A.publicBase64.slice(0, -1)}`)).toBeUndefined();
  });
});

describe("sendgrid: a batch is one event per item, keyed by sg_event_id", () => {
  it("splits the documented batch into its two events, bytes verbatim", () => {
    const items = scheme.split?.(signedRequest(BODY, headers())) ?? [];
    expect(items.map((i) => new TextDecoder().decode(i.body))).toEqual(
      (JSON.parse(BODY) as unknown[]).map((e) => JSON.stringify(e)),
    );
    const ids = items.map((i) => {
      const context = identityContext({}, new TextDecoder().decode(i.body));
      return [
        sendgridIdentity.id,
        sendgridIdentity.type,
        sendgridIdentity.orderingKey,
        sendgridIdentity.occurredAt,
      ].map((path) => {
        const json = context.json() as Record<string, unknown>;
        return json[String(path).slice(2)];
      });
    });
    expect(ids).toEqual([
      [
        "rbtnWrG1DVDGGGFHFyun0A==",
        "processed",
        "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0",
        1700000000,
      ],
      [
        "sZROwMGMagFgnOEmSdvhig==",
        "delivered",
        "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0",
        1700000001,
      ],
    ]);
  });

  it("a body that is not JSON cannot be split", () => {
    expectRejected(
      () => scheme.split?.(signedRequest("not json", headers())),
      "HOOKINBOX_BODY_INVALID_JSON",
      400,
    );
  });
});
