import { createHash, sign as ecSign, generateKeyPairSync, type KeyObject } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import type { KeyFetchRequest, KeyFetchResponse } from "../../src/providers/keys/index.ts";
import { plaidEventKey, plaidIdentity, plaidScheme } from "../../src/providers/plaid.ts";
import { identityContext, secrets, signedRequest } from "./helpers.js";
import { never, offlineFetcher } from "./key-fetcher.js";

// Plaid's npm package (`plaid`) is an API client: it can neither sign nor verify webhooks, so
// these tests follow Plaid's documented procedure: an ES256 JWT in Plaid-Verification, its kid
// looked up with POST /webhook_verification_key/get, iat within 5 minutes, and
// request_body_sha256 equal to the SHA-256 of the raw body. Tokens are signed with node:crypto.

const CLIENT_ID = "5f8b2d2e6c1a4a0012345678";
const SECRET = "plaid-secret-abcdef0123456789";
const KEY_URL = "https://production.plaid.com/webhook_verification_key/get";
const NOW_S = Math.floor(Date.now() / 1000);
const NOW = NOW_S * 1000;

function ecKey(kid: string, expiredAt: number | null = null) {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  return {
    kid,
    privateKey,
    jwk: {
      ...publicKey.export({ format: "jwk" }),
      alg: "ES256",
      created_at: NOW_S - 86_400,
      expired_at: expiredAt,
      kid,
      use: "sig",
    },
  };
}
const K1 = ecKey("6c5516e1-92dc-479e-a8ff-5a51992e0001");
const K2 = ecKey("6c5516e1-92dc-479e-a8ff-5a51992e0002");
const OLD = ecKey("6c5516e1-92dc-479e-a8ff-5a51992e0003", NOW_S - 60);

// A documented webhook: SYNC_UPDATES_AVAILABLE, pretty-printed as Plaid sends it.
const BODY = `{
  "webhook_type": "TRANSACTIONS",
  "webhook_code": "SYNC_UPDATES_AVAILABLE",
  "item_id": "wz666MBjYWTp2PDzzggYhM6oWWmBb",
  "initial_update_complete": true,
  "historical_update_complete": false,
  "environment": "production"
}`;

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function token(
  body = BODY,
  init: { key?: KeyObject; kid?: string; alg?: string; claims?: Record<string, unknown> } = {},
): string {
  const header = { alg: init.alg ?? "ES256", kid: init.kid ?? K1.kid, typ: "JWT" };
  const payload = { iat: NOW_S, request_body_sha256: sha256(body), ...init.claims };
  const input = `${b64url(header)}.${b64url(payload)}`;
  const signature = ecSign("sha256", Buffer.from(input), {
    key: init.key ?? K1.privateKey,
    dsaEncoding: "ieee-p1363",
  });
  return `${input}.${signature.toString("base64url")}`;
}

/** Plaid's key endpoint: the JWK for a known key_id, else 400 INVALID_INPUT. */
function plaidApi(keys = [K1, K2, OLD]) {
  return (request: KeyFetchRequest): KeyFetchResponse => {
    const { key_id: kid } = JSON.parse(request.body ?? "{}") as { key_id?: string };
    const key = keys.find((k) => k.kid === kid);
    return key
      ? { status: 200, body: JSON.stringify({ key: key.jwk, request_id: "req-1" }) }
      : { status: 400, body: '{"error_type":"INVALID_INPUT","error_code":"INVALID_KEY_ID"}' };
  };
}

function setup(answer: Parameters<typeof offlineFetcher>[0] = plaidApi(), timeoutMs = 2_000) {
  const offline = offlineFetcher(answer);
  const scheme = plaidScheme({
    clientId: CLIENT_ID,
    keys: { fetcher: offline.fetcher, timeoutMs },
  });
  const verify = (header: string | undefined, body = BODY, nowMs = NOW, active = secrets(SECRET)) =>
    scheme.verifier.verify(signedRequest(body, { "plaid-verification": header }), active, nowMs);
  return { ...offline, scheme, verify };
}

describe("plaid: verifies as Plaid documents", () => {
  it("accepts a signed webhook and fetches its key with the client id and secret", async () => {
    const { verify, calls } = setup();
    expect(await verify(token())).toEqual({ secretIndex: 0, signedAt: NOW });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ url: KEY_URL, method: "POST" });
    expect(JSON.parse(calls[0]?.body ?? "")).toEqual({
      client_id: CLIENT_ID,
      secret: SECRET,
      key_id: K1.kid,
    });
  });

  it("verifies the raw bytes: the same JSON re-serialised is rejected", async () => {
    const { verify } = setup();
    const compact = JSON.stringify(JSON.parse(BODY));
    await expect(verify(token(), compact)).rejects.toMatchObject({
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    });
    expect(await verify(token(compact), compact)).toMatchObject({ secretIndex: 0 });
  });

  it("fetches each key id once; an unknown key id is fetched exactly once", async () => {
    const { verify, calls } = setup();
    await Promise.all([verify(token()), verify(token()), verify(token())]);
    await verify(token(BODY, { key: K2.privateKey, kid: K2.kid }));
    for (let i = 0; i < 3; i++) {
      await expect(verify(token(BODY, { kid: "unknown-kid" }))).rejects.toMatchObject({
        code: "HOOKINBOX_KEY_UNKNOWN",
        status: 401,
      });
    }
    expect(calls.map((c) => JSON.parse(c.body ?? "{}").key_id)).toEqual([
      K1.kid,
      K2.kid,
      "unknown-kid",
    ]);
  });

  it.each<[string, Parameters<typeof offlineFetcher>[0]]>([
    ["answers 500", () => ({ status: 500, body: "" })],
    ["fails", () => Promise.reject(new Error("ECONNRESET"))],
    ["hangs", never],
    ["sends no key", () => ({ status: 200, body: '{"key":{}}' })],
  ])("Plaid's key endpoint that %s → 503 HOOKINBOX_KEY_UNAVAILABLE", async (_name, answer) => {
    await expect(setup(answer, 50).verify(token())).rejects.toMatchObject({
      code: "HOOKINBOX_KEY_UNAVAILABLE",
      status: 503,
    });
  });
});

describe("plaid: one code per defect", () => {
  const [h, p] = token().split(".");
  it.each<
    [string, () => string | undefined, Partial<{ body: string; now: number }>, ErrorCode, number]
  >([
    ["no Plaid-Verification", () => undefined, {}, "HOOKINBOX_SIGNATURE_MISSING", 400],
    ["not a JWT", () => "not-a-jwt", {}, "HOOKINBOX_SIGNATURE_MALFORMED", 400],
    [
      "alg RS256",
      () => token(BODY, { alg: "RS256" }),
      {},
      "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      400,
    ],
    [
      "a key Plaid has expired",
      () => token(BODY, { key: OLD.privateKey, kid: OLD.kid }),
      {},
      "HOOKINBOX_KEY_UNKNOWN",
      401,
    ],
    [
      "another key's signature",
      () => token(BODY, { key: K2.privateKey }),
      {},
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "a signature of the wrong length",
      () => `${h}.${p}.AAAA`,
      {},
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "a body with one byte changed",
      () => token(),
      { body: BODY.replace("true", "tru3") },
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "no request_body_sha256",
      () => token(BODY, { claims: { request_body_sha256: undefined } }),
      {},
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "no iat",
      () => token(BODY, { claims: { iat: undefined } }),
      {},
      "HOOKINBOX_TIMESTAMP_MISSING",
      400,
    ],
    [
      "iat 5 minutes and 1 s old",
      () => token(),
      { now: NOW + 301_000 },
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
      400,
    ],
    [
      "iat 5 minutes and 1 s ahead",
      () => token(),
      { now: NOW - 301_000 },
      "HOOKINBOX_TIMESTAMP_IN_FUTURE",
      400,
    ],
  ])("%s → %s", async (_name, build, init, code, status) => {
    await expect(setup().verify(build(), init.body ?? BODY, init.now ?? NOW)).rejects.toMatchObject(
      {
        code,
        status,
      },
    );
  });

  it("fails closed without an active API secret, before fetching anything", async () => {
    const { verify, calls } = setup();
    await expect(verify(token(), BODY, NOW, [])).rejects.toMatchObject({
      code: "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
    });
    expect(calls).toHaveLength(0);
  });
});

describe("plaid: identity", () => {
  it("keys on type, code, Item and the token's issue time (Plaid sends no event id)", () => {
    const context = identityContext({ "plaid-verification": token() }, BODY);
    expect(plaidEventKey(context)).toBe(
      `TRANSACTIONS:SYNC_UPDATES_AVAILABLE:wz666MBjYWTp2PDzzggYhM6oWWmBb:${NOW_S}`,
    );
    const type = plaidIdentity.type;
    expect(typeof type === "function" ? type(context) : type).toBe(
      "TRANSACTIONS.SYNC_UPDATES_AVAILABLE",
    );
    expect(plaidEventKey(identityContext({}, BODY))).toBeUndefined();
  });
});
