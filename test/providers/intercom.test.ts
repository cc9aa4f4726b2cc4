import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import { intercomIdentity, intercomScheme } from "../../src/providers/intercom.ts";
import { describeSchemeContract } from "./contract.js";
import { expectRejected, flipChar, secrets, signedRequest } from "./helpers.js";

// No official package signs Intercom webhooks, so the oracle follows Intercom's documented
// algorithm with node:crypto: "sha1=" + hex HMAC-SHA1 of the raw body.
const SECRET = "hookinbox-intercom-client-secret";
const OTHER = "hookinbox-intercom-other-secret";
const BODY =
  '{"type":"notification_event","id":"notif_ccd8a4d0-f965-11e3-a367-c779cae3e1b3","topic":"conversation.user.created","created_at":1700000000,"data":{"item":{"id":"147"}}}';

function sign(body: string, secret = SECRET): string {
  return `sha1=${createHmac("sha1", secret).update(body).digest("hex")}`;
}

const SIG = sign(BODY);
const HEX = SIG.slice(5);
const scheme = intercomScheme();

function verify(init: { body?: string; header?: string | null; active?: string[] } = {}) {
  const header = init.header === undefined ? SIG : init.header;
  const request = signedRequest(
    init.body ?? BODY,
    header === null ? {} : { "X-Hub-Signature": header },
  );
  return scheme.verifier.verify(request, secrets(...(init.active ?? [SECRET])), 0);
}

describe("intercom: accepts what Intercom's documented algorithm signs", () => {
  it.each([
    ["a notification", BODY],
    ["unicode", '{"id":"notif_1","topic":"ping","data":{"item":{"message":"Zoë 🎉"}}}'],
  ])("%s", (_name, payload) => {
    expect(verify({ body: payload, header: sign(payload) })).toEqual({ secretIndex: 0 });
  });

  it("accepts upper-case hex", () => {
    expect(verify({ header: `sha1=${HEX.toUpperCase()}` })).toEqual({ secretIndex: 0 });
  });
});

describe("intercom: one defect, one code", () => {
  const cases: {
    name: string;
    body?: string;
    header?: string | null;
    active?: string[];
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "one body byte changed",
      body: flipChar(BODY, 5),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "wrong secret", active: [OTHER], code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    { name: "missing header", header: null, code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    { name: "no prefix", header: HEX, code: "HOOKINBOX_SIGNATURE_MALFORMED", status: 400 },
    {
      name: "sha256 prefix",
      header: `sha256=${HEX}`,
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "SHA256 digest under sha1=",
      header: `sha1=${createHmac("sha256", SECRET).update(BODY).digest("hex")}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "truncated",
      header: SIG.slice(0, 30),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "one digit changed",
      header: `sha1=${flipChar(HEX, 0)}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, HEX]);
  });
});

describe("intercom: identity preset", () => {
  it("reads the documented body fields", () => {
    expect(scheme.provider).toBe("intercom");
    expect(scheme.identity).toBe(intercomIdentity);
    expect(Object.isFrozen(intercomIdentity)).toBe(true);
    expect(intercomIdentity).toEqual({
      id: "$.id",
      type: "$.topic",
      occurredAt: "$.created_at",
      orderingKey: "$.data.item.id",
    });
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: 0,
  sign: (body, secret) => ({ "x-hub-signature": sign(body, secret) }),
});
