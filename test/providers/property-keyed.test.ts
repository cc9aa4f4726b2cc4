/**
 * Property tests over the fetched-key schemes (SNS, Pub/Sub, Plaid, PayPal), whose verifiers are
 * asynchronous. For each, with fast-check:
 * - fuzz: arbitrary headers, bodies (and scheme-shaped bodies with arbitrary key URLs), urls and
 *   clocks are rejected with a HookinboxError only, never accepted, and the key fetcher is only
 *   ever called with a URL on the provider's hosts (checked here by an independent pattern);
 * - foreign body (schemes that sign the raw bytes) / one signed header replaced: rejected;
 * - tamper: one bit flipped in what the scheme signs is rejected;
 * - positive: correctly signed random content is accepted.
 * Signers follow each provider's documented algorithm with node:crypto and keys made here.
 */

import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import zlib from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookinboxError } from "../../src/errors.js";
import type { KeyFetchRequest, KeyFetchResponse } from "../../src/providers/keys/index.ts";
import { paypalScheme } from "../../src/providers/paypal.ts";
import { plaidScheme } from "../../src/providers/plaid.ts";
import { googleJwksUrl, pubsubScheme } from "../../src/providers/pubsub.ts";
import { snsScheme } from "../../src/providers/sns.ts";
import type { AsyncVerifier, ProviderScheme } from "../../src/providers/types.js";
import { signedRequest } from "./helpers.js";
import { selfSignedCertificate } from "./key-fetcher.js";

const RUNS = { fuzz: 1000, foreign: 300, header: 300, tamper: 300, positive: 200 };
/** 4 schemes × (fuzz + tamper + positive) + 3 that sign raw bytes × foreign + 3 with signed headers × header. */
const MIN_TOTAL = 4 * (1000 + 300 + 200) + 3 * 300 + 3 * 300;
let executed = 0;

const NOW_S = Math.floor(Date.now() / 1000);
const NOW = NOW_S * 1000;

/** Independent of src: the hosts each provider documents for its keys. */
const ALLOWED = [
  /^https:\/\/sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\/SimpleNotificationService-[A-Za-z0-9]+\.pem$/,
  /^https:\/\/www\.googleapis\.com\/oauth2\/v3\/certs$/,
  /^https:\/\/production\.plaid\.com\/webhook_verification_key\/get$/,
  /^https:\/\/api(-m)?(\.sandbox)?\.paypal\.com\/v1\/notifications\/certs\/[A-Za-z0-9._-]+$/,
];
const outside: string[] = [];

type Headers = Record<string, string | undefined>;
interface Built {
  readonly body: Uint8Array | string;
  readonly headers: Headers;
}

interface Fixture<P> {
  readonly name: string;
  readonly scheme: () => ProviderScheme<AsyncVerifier>;
  readonly secrets?: string[];
  readonly headers: readonly string[];
  readonly signedHeaders: readonly string[];
  readonly signsRawBody: boolean;
  readonly payload: fc.Arbitrary<P>;
  build(payload: P): Built;
  mutate?(built: Built, position: number, bit: number): Built;
  readonly fuzzBody?: fc.Arbitrary<string>;
}
const fixture = <P>(f: Fixture<P>) => f as unknown as Fixture<unknown>;

function fetcherFor(answers: Record<string, string>) {
  return async (request: KeyFetchRequest): Promise<KeyFetchResponse> => {
    if (!ALLOWED.some((pattern) => pattern.test(request.url))) outside.push(request.url);
    const body = answers[request.url];
    return body === undefined ? { status: 404, body: "" } : { status: 200, body };
  };
}

function flipBit(text: Uint8Array | string, position: number, bit: number): Uint8Array {
  const bytes = Uint8Array.from(Buffer.from(text));
  if (bytes.length === 0) return Uint8Array.of(1 << bit);
  const i = position % bytes.length;
  bytes[i] = (bytes[i] ?? 0) ^ (1 << bit);
  return bytes;
}
const flipHeader =
  (name: string) =>
  (built: Built, position: number, bit: number): Built => ({
    ...built,
    headers: {
      ...built.headers,
      [name]: Buffer.from(flipBit(built.headers[name] ?? "", position, bit)).toString("latin1"),
    },
  });

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
function jwt(header: object, payload: object, key: KeyObject, ec: boolean): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  const signature = sign(
    "sha256",
    Buffer.from(input),
    ec ? { key, dsaEncoding: "ieee-p1363" } : key,
  );
  return `${input}.${signature.toString("base64url")}`;
}

// ---- keys ---------------------------------------------------------------------------------

const TOPIC = "arn:aws:sns:us-east-1:123456789012:orders";
const SNS_CERT = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc123.pem";
const PAYPAL_CERT = "https://api-m.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594";
const WEBHOOK_ID = "1JE4291016473214C";
const AUDIENCE = "https://hooks.example.com/webhooks/pubsub";
const EMAIL = "push@p.iam.gserviceaccount.com";
const google = generateKeyPairSync("rsa", { modulusLength: 2048 });
const GOOGLE_JWKS = JSON.stringify({
  keys: [{ ...google.publicKey.export({ format: "jwk" }), kid: "g1", alg: "RS256", use: "sig" }],
});
const plaid = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const PLAID_KEY = JSON.stringify({
  key: { ...plaid.publicKey.export({ format: "jwk" }), kid: "p1", alg: "ES256", expired_at: null },
});
let snsCert: { cert: string; privateKey: string };
let paypalCert: { cert: string; privateKey: string };
beforeAll(async () => {
  [snsCert, paypalCert] = await Promise.all([
    selfSignedCertificate("sns.amazonaws.com"),
    selfSignedCertificate("messageverificationcerts.paypal.com"),
  ]);
});

const text = fc.string({ unit: "grapheme", maxLength: 64 });
const rawBody = fc.uint8Array({ maxLength: 96 });

const fixtures: Fixture<unknown>[] = [
  fixture({
    name: "sns",
    scheme: () =>
      snsScheme({
        topicArns: [TOPIC],
        keys: { fetcher: fetcherFor({ [SNS_CERT]: snsCert.cert }) },
      }),
    headers: ["x-amz-sns-message-type"],
    signedHeaders: [],
    signsRawBody: true,
    payload: fc.record({
      Message: text,
      MessageId: fc.uuid(),
      Subject: fc.option(text, { nil: undefined }),
      version: fc.constantFrom("1", "2"),
    }),
    build: ({ Message, MessageId, Subject, version }) => {
      const fields: Record<string, string> = {
        Message,
        MessageId,
        Timestamp: "2026-11-30T12:00:00.000Z",
        TopicArn: TOPIC,
        Type: "Notification",
      };
      if (Subject !== undefined) fields.Subject = Subject;
      const names = ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"];
      const signed = names
        .filter((n) => fields[n] !== undefined)
        .map((n) => `${n}\n${fields[n]}\n`)
        .join("");
      const signature = sign(
        version === "1" ? "sha1" : "sha256",
        Buffer.from(signed),
        snsCert.privateKey,
      );
      return {
        body: JSON.stringify({
          ...fields,
          SignatureVersion: version,
          Signature: signature.toString("base64"),
          SigningCertURL: SNS_CERT,
        }),
        headers: { "x-amz-sns-message-type": "Notification" },
      };
    },
    // SigningCertURL is not signed (its host is case-insensitive): flip a bit in a signed field.
    mutate: (built, position, bit) => {
      const message = JSON.parse(String(built.body)) as Record<string, string>;
      const names = ["Message", "MessageId", "Timestamp", "TopicArn", "Type", "Signature"];
      const name = names[position % names.length] ?? "Message";
      const value = message[name] ?? "";
      const i = value.length === 0 ? 0 : (position >> 3) % value.length;
      const flipped =
        value.length === 0
          ? String.fromCharCode(1 << bit)
          : value.slice(0, i) +
            String.fromCharCode(value.charCodeAt(i) ^ (1 << bit)) +
            value.slice(i + 1);
      return { ...built, body: JSON.stringify({ ...message, [name]: flipped }) };
    },
    fuzzBody: fc
      .record({
        Type: fc.constantFrom("Notification", "SubscriptionConfirmation", "x"),
        Message: text,
        MessageId: text,
        Timestamp: text,
        TopicArn: fc.constantFrom(TOPIC, "arn:aws:sns:us-east-1:1:x"),
        Token: text,
        SubscribeURL: fc.webUrl(),
        Signature: fc.base64String({ maxLength: 344 }),
        SignatureVersion: fc.constantFrom("1", "2", "3"),
        SigningCertURL: fc.oneof(
          fc.webUrl(),
          fc.constant(SNS_CERT),
          fc.string({ maxLength: 30 }).map((s) => `https://sns.us-east-1.amazonaws.com/${s}`),
        ),
      })
      .map((m) => JSON.stringify(m)),
  }),
  fixture({
    name: "pubsub",
    scheme: () =>
      pubsubScheme({
        audience: AUDIENCE,
        serviceAccountEmails: [EMAIL],
        keys: { fetcher: fetcherFor({ [googleJwksUrl]: GOOGLE_JWKS }) },
      }),
    headers: ["authorization"],
    signedHeaders: ["authorization"],
    signsRawBody: false,
    payload: fc.tuple(text, fc.integer({ min: -200, max: 200 })),
    build: ([body, skew]) => ({
      body,
      headers: {
        authorization: `Bearer ${jwt(
          { alg: "RS256", kid: "g1", typ: "JWT" },
          {
            iss: "https://accounts.google.com",
            aud: AUDIENCE,
            email: EMAIL,
            email_verified: true,
            iat: NOW_S + skew,
            exp: NOW_S + skew + 3600,
          },
          google.privateKey,
          false,
        )}`,
      },
    }),
    // The auth scheme name is case-insensitive (RFC 9110): flip a bit in the token itself.
    mutate: (built, position, bit) => {
      const token = (built.headers.authorization ?? "").slice("Bearer ".length);
      const flipped = flipHeader("t")({ ...built, headers: { t: token } }, position, bit);
      return { ...built, headers: { authorization: `Bearer ${flipped.headers.t}` } };
    },
  }),
  fixture({
    name: "plaid",
    scheme: () =>
      plaidScheme({
        clientId: "client",
        keys: {
          fetcher: fetcherFor({
            "https://production.plaid.com/webhook_verification_key/get": PLAID_KEY,
          }),
        },
      }),
    secrets: ["plaid-secret"],
    headers: ["plaid-verification"],
    signedHeaders: ["plaid-verification"],
    signsRawBody: true,
    payload: rawBody,
    build: (body) => ({
      body,
      headers: {
        "plaid-verification": jwt(
          { alg: "ES256", kid: "p1", typ: "JWT" },
          { iat: NOW_S, request_body_sha256: createHash("sha256").update(body).digest("hex") },
          plaid.privateKey,
          true,
        ),
      },
    }),
  }),
  fixture({
    name: "paypal",
    scheme: () =>
      paypalScheme({
        webhookIds: [WEBHOOK_ID],
        keys: { fetcher: fetcherFor({ [PAYPAL_CERT]: paypalCert.cert }) },
      }),
    headers: [
      "paypal-transmission-sig",
      "paypal-transmission-id",
      "paypal-transmission-time",
      "paypal-cert-url",
      "paypal-auth-algo",
    ],
    signedHeaders: [
      "paypal-transmission-sig",
      "paypal-transmission-id",
      "paypal-transmission-time",
      "paypal-cert-url",
    ],
    signsRawBody: true,
    payload: fc.tuple(rawBody, fc.uuid()),
    build: ([body, id]) => {
      const time = "2026-11-30T12:00:00Z";
      const signed = `${id}|${time}|${WEBHOOK_ID}|${zlib.crc32(body) >>> 0}`;
      return {
        body,
        headers: {
          "paypal-transmission-sig": sign(
            "sha256",
            Buffer.from(signed),
            paypalCert.privateKey,
          ).toString("base64"),
          "paypal-transmission-id": id,
          "paypal-transmission-time": time,
          "paypal-cert-url": PAYPAL_CERT,
          "paypal-auth-algo": "SHA256withRSA",
        },
      };
    },
  }),
];

const headerValue = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: "binary", maxLength: 80 }),
  fc.webUrl(),
  fc.constantFrom("Bearer ", "Bearer a.b.c", "SHA256withRSA", PAYPAL_CERT, SNS_CERT),
  fc.base64String({ maxLength: 100 }).map((s) => `Bearer ${s}.${s}.${s}`),
);
const anyBody = fc.oneof(
  rawBody,
  fc.string({ unit: "binary", maxLength: 96 }),
  fc.json({ maxDepth: 3 }),
);
const anyNow = fc.oneof(fc.constant(NOW), fc.integer({ min: NOW - 1e7, max: NOW + 1e7 }));

/** True when the promise rejects with a HookinboxError, false when it resolves. */
async function rejects(pending: Promise<unknown>): Promise<boolean> {
  executed++;
  try {
    await pending;
  } catch (error) {
    if (error instanceof HookinboxError) return true;
    throw error;
  }
  return false;
}

describe("property: fetched-key verifiers, arbitrary input", () => {
  for (const f of fixtures) {
    describe(f.name, () => {
      let scheme: ProviderScheme<AsyncVerifier>;
      beforeAll(() => {
        scheme = f.scheme();
      });
      const verify = (built: Built, at = NOW) =>
        scheme.verifier.verify(
          signedRequest(built.body, built.headers),
          (f.secrets ?? []).map((value, index) => ({ index, value })),
          at,
        );
      const bodies = f.fuzzBody === undefined ? anyBody : fc.oneof(anyBody, f.fuzzBody);
      const asBody = (b: unknown) =>
        typeof b === "string" || b instanceof Uint8Array ? b : JSON.stringify(b);

      it(`fuzz: rejected with a HookinboxError only (${RUNS.fuzz} runs)`, async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.option(headerValue, { nil: undefined }), {
              minLength: f.headers.length,
              maxLength: f.headers.length,
            }),
            bodies,
            anyNow,
            async (values, body, at) =>
              rejects(
                verify(
                  {
                    body: asBody(body),
                    headers: Object.fromEntries(f.headers.map((n, i) => [n, values[i]])),
                  },
                  at,
                ),
              ),
          ),
          { numRuns: RUNS.fuzz },
        );
      });

      if (f.signsRawBody)
        it(`signed, sent with any other body: rejected (${RUNS.foreign} runs)`, async () => {
          await fc.assert(
            fc.asyncProperty(f.payload, bodies, async (payload, other) => {
              const built = f.build(payload);
              const otherBody = asBody(other);
              fc.pre(!Buffer.from(otherBody).equals(Buffer.from(built.body)));
              return rejects(verify({ ...built, body: otherBody }));
            }),
            { numRuns: RUNS.foreign },
          );
        });

      if (f.signedHeaders.length > 0)
        it(`signed, then one signed header replaced or removed: rejected (${RUNS.header} runs)`, async () => {
          await fc.assert(
            fc.asyncProperty(
              f.payload,
              fc.nat(),
              fc.option(headerValue, { nil: undefined }),
              async (payload, which, value) => {
                const built = f.build(payload);
                const name = f.signedHeaders[which % f.signedHeaders.length] ?? "";
                const normalise = (v: string | undefined) => v?.trim() || undefined;
                fc.pre(normalise(value) !== normalise(built.headers[name]));
                return rejects(verify({ ...built, headers: { ...built.headers, [name]: value } }));
              },
            ),
            { numRuns: RUNS.header },
          );
        });

      it(`tamper: one bit flipped in what is signed is rejected (${RUNS.tamper} runs)`, async () => {
        await fc.assert(
          fc.asyncProperty(
            f.payload,
            fc.nat(),
            fc.integer({ min: 0, max: 7 }),
            async (payload, position, bit) => {
              const built = f.build(payload);
              const tampered = f.mutate
                ? f.mutate(built, position, bit)
                : { ...built, body: flipBit(built.body, position, bit) };
              return rejects(verify(tampered));
            },
          ),
          { numRuns: RUNS.tamper },
        );
      });

      it(`positive: correctly signed random content is accepted (${RUNS.positive} runs)`, async () => {
        await fc.assert(
          fc.asyncProperty(
            f.payload,
            async (payload) => !(await rejects(verify(f.build(payload)))),
          ),
          { numRuns: RUNS.positive },
        );
      });
    });
  }
});

afterAll(() => {
  expect(outside, `fetched off the providers hosts: ${JSON.stringify(outside)}`).toEqual([]);
  expect(executed).toBeGreaterThanOrEqual(MIN_TOTAL);
});
