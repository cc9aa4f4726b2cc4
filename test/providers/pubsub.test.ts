import { generateKeyPairSync, type KeyObject, sign as rsaSign } from "node:crypto";
import { OAuth2Client } from "google-auth-library";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import type { KeyFetchResponse } from "../../src/providers/keys/index.ts";
import {
  googleJwksUrl,
  pubsubIdentity,
  pubsubMessage,
  pubsubMessageId,
  pubsubScheme,
} from "../../src/providers/pubsub.ts";
import { identityContext, signedRequest } from "./helpers.js";
import { never, offlineFetcher } from "./key-fetcher.js";

// google-auth-library verifies Google ID tokens (OAuth2Client.verifySignedJwtWithCertsAsync) but
// cannot mint one offline, so the tests sign RS256 tokens with node:crypto as Google's OIDC
// tokens are shaped, serve our keys as Google's JWKS through the injected fetcher, and check
// that the official library and hookinbox agree on every token.

const AUDIENCE = "https://hooks.example.com/webhooks/pubsub";
const EMAIL = "push-auth@my-project.iam.gserviceaccount.com";

function rsaKey(kid: string) {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    kid,
    privateKey,
    pem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    jwk: { ...publicKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" },
  };
}
const K1 = rsaKey("k1-6f7254101f56e41cf35c9926de84a2d552b4c6f1");
const K2 = rsaKey("k2-a4313e7fd1e9e2a483ba5b8a1e3b6d1c6b2e8d0f");

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

function token(
  claims: Record<string, unknown> = {},
  init: { key?: KeyObject; kid?: string | null; alg?: string } = {},
): string {
  const now = Math.floor(Date.now() / 1000);
  const header: Record<string, unknown> = { alg: init.alg ?? "RS256", typ: "JWT" };
  if (init.kid !== null) header.kid = init.kid ?? K1.kid;
  const payload = {
    aud: AUDIENCE,
    azp: "111111111111111111111",
    email: EMAIL,
    email_verified: true,
    exp: now + 3600,
    iat: now,
    iss: "https://accounts.google.com",
    sub: "111111111111111111111",
    ...claims,
  };
  const input = `${b64url(header)}.${b64url(payload)}`;
  const signature = rsaSign("sha256", Buffer.from(input), init.key ?? K1.privateKey);
  return `${input}.${signature.toString("base64url")}`;
}

// A push envelope as Pub/Sub documents it.
const DATA = Buffer.from(JSON.stringify({ orderId: "o-42", status: "paid" })).toString("base64");
const BODY = JSON.stringify({
  message: {
    attributes: { eventType: "order.paid", source: "shop" },
    data: DATA,
    messageId: "2070443601311540",
    message_id: "2070443601311540",
    orderingKey: "customer-7",
    publishTime: "2026-11-30T12:00:00.123Z",
    publish_time: "2026-11-30T12:00:00.123Z",
  },
  subscription: "projects/my-project/subscriptions/orders-push",
});

const jwks = (...keys: Array<ReturnType<typeof rsaKey>>): KeyFetchResponse => ({
  status: 200,
  body: JSON.stringify({ keys: keys.map((k) => k.jwk) }),
});

function setup(
  answer: Parameters<typeof offlineFetcher>[0] = () => jwks(K1),
  options: { emails?: string[]; timeoutMs?: number } = {},
) {
  const offline = offlineFetcher(answer);
  const scheme = pubsubScheme({
    audience: AUDIENCE,
    serviceAccountEmails: options.emails ?? [EMAIL],
    keys: { fetcher: offline.fetcher, timeoutMs: options.timeoutMs ?? 2_000 },
  });
  const verify = (authorization: string | undefined, nowMs = Date.now(), body = BODY) =>
    scheme.verifier.verify(signedRequest(body, { authorization }), [], nowMs);
  return { ...offline, scheme, verify };
}

async function official(jwt: string, keys = [K1, K2]): Promise<boolean> {
  const certs = Object.fromEntries(keys.map((k) => [k.kid, k.pem]));
  try {
    await new OAuth2Client().verifySignedJwtWithCertsAsync(jwt, certs, AUDIENCE, [
      "https://accounts.google.com",
      "accounts.google.com",
    ]);
    return true;
  } catch {
    return false;
  }
}

describe("pubsub: agrees with google-auth-library", () => {
  it.each<[string, () => string]>([
    ["a push token", () => token()],
    ["the short issuer form", () => token({ iss: "accounts.google.com" })],
    ["a token signed by the second key", () => token({}, { key: K2.privateKey, kid: K2.kid })],
  ])("%s: both accept", async (_name, build) => {
    const jwt = build();
    expect(await official(jwt)).toBe(true);
    const { verify } = setup(() => jwks(K1, K2));
    const verified = await verify(`Bearer ${jwt}`);
    expect(verified.secretIndex).toBeNull();
  });

  it.each<[string, () => string, ErrorCode]>([
    [
      "another audience",
      () => token({ aud: "https://other.example/push" }),
      "HOOKINBOX_TOKEN_CLAIM_MISMATCH",
    ],
    [
      "another issuer",
      () => token({ iss: "https://evil.example" }),
      "HOOKINBOX_TOKEN_CLAIM_MISMATCH",
    ],
    [
      "an expired token",
      () =>
        token({
          iat: Math.floor(Date.now() / 1000) - 7200,
          exp: Math.floor(Date.now() / 1000) - 3600,
        }),
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
    ],
    [
      "a token signed by a key the JWKS does not list under its kid",
      () => token({}, { key: K2.privateKey, kid: K1.kid }),
      "HOOKINBOX_SIGNATURE_MISMATCH",
    ],
    [
      "a payload changed after signing",
      () => {
        const [h, , s] = token().split(".");
        return `${h}.${b64url({ aud: AUDIENCE, email: EMAIL, email_verified: true, iss: "https://accounts.google.com", iat: 1, exp: 9e9 })}.${s}`;
      },
      "HOOKINBOX_SIGNATURE_MISMATCH",
    ],
  ])("%s: both reject (→ %s)", async (_name, build, code) => {
    const jwt = build();
    expect(await official(jwt)).toBe(false);
    await expect(setup(() => jwks(K1, K2)).verify(`Bearer ${jwt}`)).rejects.toMatchObject({ code });
  });
});

describe("pubsub: one code per defect", () => {
  const now = () => Math.floor(Date.now() / 1000);
  it.each<[string, () => string | undefined, ErrorCode, number]>([
    ["no Authorization", () => undefined, "HOOKINBOX_SIGNATURE_MISSING", 400],
    ["a blank Authorization", () => "  ", "HOOKINBOX_SIGNATURE_MISSING", 400],
    ["Basic instead of Bearer", () => `Basic ${token()}`, "HOOKINBOX_SIGNATURE_MALFORMED", 400],
    ["a bearer that is not a JWT", () => "Bearer abc.def", "HOOKINBOX_SIGNATURE_MALFORMED", 400],
    [
      "a token without kid",
      () => `Bearer ${token({}, { kid: null })}`,
      "HOOKINBOX_SIGNATURE_MALFORMED",
      400,
    ],
    [
      "alg HS256",
      () => `Bearer ${token({}, { alg: "HS256" })}`,
      "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      400,
    ],
    [
      "alg none",
      () => `Bearer ${token({}, { alg: "none" })}`,
      "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      400,
    ],
    [
      "another service account",
      () => `Bearer ${token({ email: "x@other.iam.gserviceaccount.com" })}`,
      "HOOKINBOX_SENDER_NOT_ALLOWED",
      403,
    ],
    [
      "an unverified email",
      () => `Bearer ${token({ email_verified: false })}`,
      "HOOKINBOX_SENDER_NOT_ALLOWED",
      403,
    ],
    ["no exp", () => `Bearer ${token({ exp: undefined })}`, "HOOKINBOX_TIMESTAMP_MISSING", 400],
    [
      "issued 10 minutes ahead",
      () => `Bearer ${token({ iat: now() + 600 })}`,
      "HOOKINBOX_TIMESTAMP_IN_FUTURE",
      400,
    ],
    [
      "expired 6 minutes ago",
      () => `Bearer ${token({ iat: now() - 4000, exp: now() - 360 })}`,
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
      400,
    ],
    [
      "one character of the signature changed",
      () => {
        const jwt = token();
        const i = jwt.length - 10;
        return `Bearer ${jwt.slice(0, i)}${jwt[i] === "A" ? "B" : "A"}${jwt.slice(i + 1)}`;
      },
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
  ])("%s → %s", async (_name, build, code, status) => {
    await expect(setup().verify(build())).rejects.toMatchObject({ code, status });
  });

  it("accepts 5 minutes of clock skew on exp, as Google's libraries do", async () => {
    const jwt = token({ iat: now() - 3900, exp: now() - 299 });
    expect(await official(jwt)).toBe(true);
    await expect(setup().verify(`Bearer ${jwt}`)).resolves.toMatchObject({ secretIndex: null });
  });

  it("the token does not sign the body (documented): another body verifies alike", async () => {
    const { verify } = setup();
    const jwt = token();
    await expect(verify(`Bearer ${jwt}`, Date.now(), `${BODY}\n`)).resolves.toMatchObject({
      secretIndex: null,
    });
  });
});

describe("pubsub: Google's key set", () => {
  it("fetches the JWKS once for many and for concurrent tokens", async () => {
    const { verify, urls } = setup();
    await Promise.all(Array.from({ length: 10 }, () => verify(`Bearer ${token()}`)));
    await verify(`Bearer ${token()}`);
    expect(urls()).toEqual([googleJwksUrl]);
  });

  it("an unknown kid triggers exactly one refetch, which finds a rotated key", async () => {
    let published = [K1];
    const { verify, calls } = setup(() => jwks(...published));
    await verify(`Bearer ${token()}`);
    published = [K1, K2];
    await verify(`Bearer ${token({}, { key: K2.privateKey, kid: K2.kid })}`);
    expect(calls).toHaveLength(2);
  });

  it("an unknown kid still unknown after its one refetch → KEY_UNKNOWN; more such kids fetch nothing", async () => {
    const { verify, calls } = setup(() => jwks(K1));
    await verify(`Bearer ${token()}`);
    for (const kid of ["made-up-1", "made-up-2", "made-up-3"]) {
      await expect(verify(`Bearer ${token({}, { kid })}`)).rejects.toMatchObject({
        code: "HOOKINBOX_KEY_UNKNOWN",
        status: 401,
      });
    }
    expect(calls).toHaveLength(2);
    // Known keys keep working from the cache.
    await verify(`Bearer ${token()}`);
    expect(calls).toHaveLength(2);
  });

  it("after the refresh interval an unknown kid may refetch again", async () => {
    const { verify, calls } = setup(() => jwks(K1));
    const t0 = Date.now();
    await verify(`Bearer ${token()}`, t0);
    await expect(verify(`Bearer ${token({}, { kid: "x" })}`, t0 + 1)).rejects.toMatchObject({
      code: "HOOKINBOX_KEY_UNKNOWN",
    });
    await expect(verify(`Bearer ${token({}, { kid: "x" })}`, t0 + 29_000)).rejects.toMatchObject({
      code: "HOOKINBOX_KEY_UNKNOWN",
    });
    expect(calls).toHaveLength(2);
    await expect(verify(`Bearer ${token({}, { kid: "x" })}`, t0 + 31_002)).rejects.toMatchObject({
      code: "HOOKINBOX_KEY_UNKNOWN",
    });
    expect(calls).toHaveLength(3);
  });

  it.each<[string, Parameters<typeof offlineFetcher>[0]]>([
    ["answers 500", () => ({ status: 500, body: "" })],
    ["fails", () => Promise.reject(new Error("ENOTFOUND"))],
    ["hangs", never],
    ["sends no key set", () => ({ status: 200, body: "<html>" })],
  ])("a key endpoint that %s → 503 HOOKINBOX_KEY_UNAVAILABLE", async (_name, answer) => {
    await expect(
      setup(answer, { timeoutMs: 50 }).verify(`Bearer ${token()}`),
    ).rejects.toMatchObject({ code: "HOOKINBOX_KEY_UNAVAILABLE", status: 503 });
  });

  it("keeps using cached keys when a refresh after expiry fails", async () => {
    let up = true;
    const { verify, calls } = setup(() => (up ? jwks(K1) : { status: 503, body: "" }));
    const t0 = Date.now();
    await verify(`Bearer ${token()}`, t0);
    up = false;
    // The set expired and its refresh fails: the key it had still verifies.
    await expect(verify(`Bearer ${token()}`, t0 + 3_600_001)).resolves.toMatchObject({
      secretIndex: null,
    });
    expect(calls).toHaveLength(2);
    // A key it never had cannot be vouched for: 503, the sender retries.
    await expect(
      verify(`Bearer ${token({}, { key: K2.privateKey, kid: K2.kid })}`, t0 + 3_600_002),
    ).rejects.toMatchObject({ code: "HOOKINBOX_KEY_UNAVAILABLE", status: 503 });
  });
});

describe("pubsub: identity and decoded data", () => {
  it("reads the push envelope", () => {
    const context = identityContext({}, BODY);
    expect(pubsubMessageId(context)).toBe("2070443601311540");
    const read = (field: unknown) => (typeof field === "function" ? field(context) : field);
    expect(read(pubsubIdentity.type)).toBe("order.paid");
    expect(read(pubsubIdentity.occurredAt)).toBe("2026-11-30T12:00:00.123Z");
    expect(read(pubsubIdentity.orderingKey)).toBe("customer-7");
  });

  it("reads the id of an unwrapped push from its header", () => {
    const context = identityContext({ "x-goog-pubsub-message-id": "99" }, '{"raw":true}');
    expect(pubsubMessageId(context)).toBe("99");
  });

  it("decodes base64 data for handlers", () => {
    const message = pubsubMessage(JSON.parse(BODY));
    expect(message.json()).toEqual({ orderId: "o-42", status: "paid" });
    expect(message.text()).toBe('{"orderId":"o-42","status":"paid"}');
    expect(message.attributes).toEqual({ eventType: "order.paid", source: "shop" });
    expect(message.subscription).toBe("projects/my-project/subscriptions/orders-push");
    expect(pubsubMessage(null).data.length).toBe(0);
  });
});
