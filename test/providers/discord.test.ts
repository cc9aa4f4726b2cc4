import { createPrivateKey, sign as edSign, generateKeyPairSync, type KeyObject } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import {
  discordHandshake,
  discordIdentity,
  discordInteractionType,
  discordOccurredAt,
  discordPublicKey,
  discordScheme,
} from "../../src/providers/discord.ts";
import { describeSchemeContract } from "./contract.js";
import {
  answerHandshake,
  expectRejected,
  type Headers,
  identityContext,
  loadVectors,
  secrets,
  signedRequest,
} from "./helpers.js";

// discord-interactions only verifies, so besides the published vector the oracle signs with
// node:crypto Ed25519 over "{timestamp}{body}", as Discord documents.
function keyPair(): { publicHex: string; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const spki = publicKey.export({ format: "der", type: "spki" });
  return { publicHex: spki.subarray(12).toString("hex"), privateKey };
}

const A = keyPair();
const B = keyPair();
const byPublic = new Map([
  [A.publicHex, A.privateKey],
  [B.publicHex, B.privateKey],
]);
const T = "1700000000";
const NOW = 1_700_000_000_000;
const BODY =
  '{"id":"1174378211218649119","type":2,"application_id":"1","channel_id":"C1","data":{"name":"ping"},"token":"t"}';

function sign(body: string, publicHex = A.publicHex, timestamp = T): string {
  const key = byPublic.get(publicHex);
  if (key === undefined) throw new Error("unknown test key");
  return edSign(null, Buffer.from(timestamp + body), key).toString("hex");
}

const SIG = sign(BODY);
const scheme = discordScheme();

function headers(signature: string | null = SIG, timestamp: string | null = T): Headers {
  return {
    "X-Signature-Ed25519": signature ?? undefined,
    "X-Signature-Timestamp": timestamp ?? undefined,
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
    init.toleranceMs === undefined ? scheme : discordScheme({ toleranceMs: init.toleranceMs });
  return s.verifier.verify(request, secrets(...(init.active ?? [A.publicHex])), init.nowMs ?? NOW);
}

describe("discord: accepts Ed25519 signatures", () => {
  it("accepts the published vector (RFC 8032 test key)", () => {
    const vectors = loadVectors().discord;
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const request = signedRequest(v.body, {
        "x-signature-ed25519": v.signatureHex,
        "x-signature-timestamp": v.timestamp,
      });
      expect(scheme.verifier.verify(request, secrets(v.publicKeyHex), 0)).toEqual({
        secretIndex: 0,
      });
    }
  });

  it("the vector's signature is what RFC 8032's test-1 private key makes", () => {
    const v = loadVectors().discord[0];
    if (v === undefined) throw new Error("no discord vector");
    const seed = Buffer.from(
      "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
      "hex",
    );
    const privateKey = createPrivateKey({
      key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]),
      format: "der",
      type: "pkcs8",
    });
    expect(edSign(null, Buffer.from(v.timestamp + v.body), privateKey).toString("hex")).toBe(
      v.signatureHex,
    );
  });

  it.each<[string, { signature?: string; active?: string[]; body?: string }]>([
    ["a command", {}],
    ["upper-case hex", { signature: SIG.toUpperCase() }],
    [
      "unicode body",
      {
        body: '{"id":"1","type":2,"x":"Zoë 🎉"}',
        signature: sign('{"id":"1","type":2,"x":"Zoë 🎉"}'),
      },
    ],
  ])("%s", (_name, init) => {
    expect(verify(init)).toEqual({ secretIndex: 0 });
  });

  it("with a finite window, reports and checks the signed time", () => {
    expect(verify({ toleranceMs: 5_000, nowMs: NOW + 5_000 })).toEqual({
      secretIndex: 0,
      signedAt: NOW,
    });
    expectRejected(
      () => verify({ toleranceMs: 5_000, nowMs: NOW + 5_001 }),
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
      400,
    );
    expectRejected(
      () => verify({ toleranceMs: 5_000, nowMs: NOW - 5_001 }),
      "HOOKINBOX_TIMESTAMP_IN_FUTURE",
      400,
    );
  });

  it("turns a hex key into an Ed25519 KeyObject, or nothing", () => {
    expect(discordPublicKey(A.publicHex)?.asymmetricKeyType).toBe("ed25519");
    expect(discordPublicKey(A.publicHex.slice(2))).toBeUndefined();
    expect(discordPublicKey("zz".repeat(32))).toBeUndefined();
  });

  it("answers every verification failure with 401 (rejectionStatus)", () => {
    expect(scheme.rejectionStatus).toBe(401);
  });
});

describe("discord: one defect, one code", () => {
  const other = SIG.slice(0, 2) === "00" ? `01${SIG.slice(2)}` : `00${SIG.slice(2)}`;
  const cases: {
    name: string;
    body?: string;
    signature?: string | null;
    timestamp?: string | null;
    active?: string[];
    nowMs?: number;
    toleranceMs?: number;
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "one body byte changed",
      body: BODY.replace("ping", "pong"),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "another application's key",
      active: [B.publicHex],
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "timestamp changed (it is signed)",
      timestamp: "1700000001",
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "one signature byte changed",
      signature: other,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "truncated signature",
      signature: SIG.slice(0, 126),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "non-hex signature",
      signature: `${SIG.slice(0, 127)}g`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "base64 signature",
      signature: Buffer.from(SIG, "hex").toString("base64"),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "missing signature",
      signature: null,
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "missing timestamp",
      timestamp: null,
      code: "HOOKINBOX_TIMESTAMP_MISSING",
      status: 400,
    },
    {
      name: "malformed timestamp with a window",
      timestamp: "17e8",
      toleranceMs: 5_000,
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "no valid public key configured",
      active: ["not-a-key"],
      code: "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
      status: 503,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SIG]);
  });
});

describe("discord: PING handshake", () => {
  const ping = '{"id":"1","type":1,"application_id":"1","token":"t","version":1}';

  it("answers PONG for a verified PING", () => {
    const request = signedRequest(ping, headers(sign(ping)));
    expect(answerHandshake(scheme, request, secrets(A.publicHex), NOW)).toEqual({
      status: 200,
      headers: { "content-type": "application/json; charset=utf-8" },
      body: '{"type":1}',
    });
  });

  it("rejects an unverified PING with its signature code (Discord's probe)", () => {
    const request = signedRequest(ping, headers(sign(ping, B.publicHex)));
    expectRejected(
      () => answerHandshake(scheme, request, secrets(A.publicHex), NOW),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
  });

  it("is not a handshake for other interactions", () => {
    expect(discordHandshake(signedRequest(BODY, {}))).toBeUndefined();
    expect(discordHandshake(signedRequest('{"type":"1"}', {}))).toBeUndefined();
  });
});

describe("discord: identity preset", () => {
  it("is wired to the scheme", () => {
    expect(scheme.provider).toBe("discord");
    expect(scheme.identity).toBe(discordIdentity);
    expect(Object.isFrozen(discordIdentity)).toBe(true);
    expect(discordIdentity.id).toBe("$.id");
  });

  it("names the type and reads the time from the snowflake", () => {
    const context = identityContext({}, BODY);
    expect(discordInteractionType(context)).toBe("application_command");
    expect(discordInteractionType(identityContext({}, '{"type":9}'))).toBe("9");
    // Discord's documented example: snowflake 175928847299117063 is 2016-04-30T11:18:25.796Z.
    const example = identityContext({}, '{"id":"175928847299117063","type":2}');
    expect(discordOccurredAt(example)).toBe(Date.parse("2016-04-30T11:18:25.796Z"));
    expect(discordOccurredAt(identityContext({}, '{"id":"x"}'))).toBeUndefined();
  });
});

describeSchemeContract({
  scheme,
  secret: A.publicHex,
  otherSecret: B.publicHex,
  nowMs: NOW,
  sign: (body, publicHex) => ({
    "x-signature-ed25519": sign(body, publicHex),
    "x-signature-timestamp": T,
  }),
});
