import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import {
  gitlabEventId,
  gitlabIdentity,
  gitlabOrderingKey,
  gitlabScheme,
} from "../../src/providers/gitlab.ts";
import { describeSchemeContract } from "./contract.js";
import {
  expectRejected,
  type Headers,
  identityContext,
  secrets,
  signedRequest,
} from "./helpers.js";

// Token mode: GitLab sends the secret token itself, so "signing" is setting the header.
// Signature mode: GitLab's signing token follows Standard Webhooks, so the oracle is the
// official `standardwebhooks` package (Webhook#sign).
const TOKEN = "hookinbox-gitlab-secret-token";
const OTHER_TOKEN = "hookinbox-gitlab-other-token";
const SIGNING = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OTHER_SIGNING = "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHRlc3Q=";
const ID = "f6b2c1a4-0b4e-4d4e-9a55-3b3c5c1d2e3f";
const T = 1_700_000_000;
const NOW = T * 1000;
const BODY =
  '{"object_kind":"merge_request","project":{"path_with_namespace":"group/app"},"object_attributes":{"iid":42,"action":"open"}}';

function signed(body: string, secret = SIGNING, id = ID, at = NOW): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, new Date(at), body),
  };
}

const scheme = gitlabScheme();
const strict = gitlabScheme({ requireSignature: true });

function verify(
  init: {
    body?: string;
    headers?: Headers;
    active?: string[];
    nowMs?: number;
    strict?: boolean;
  } = {},
) {
  const request = signedRequest(init.body ?? BODY, init.headers ?? { "X-Gitlab-Token": TOKEN });
  return (init.strict ? strict : scheme).verifier.verify(
    request,
    secrets(...(init.active ?? [TOKEN])),
    init.nowMs ?? NOW,
  );
}

describe("gitlab: secret token", () => {
  it("accepts the configured token (the body is not signed)", () => {
    expect(verify()).toEqual({ secretIndex: 0 });
    expect(verify({ body: "{}" })).toEqual({ secretIndex: 0 });
  });

  it("rotation: any active token, its configured index", () => {
    expect(verify({ active: [OTHER_TOKEN, TOKEN] })).toEqual({ secretIndex: 1 });
  });

  it("ignores a webhook-signature when no signing token is configured", () => {
    expect(verify({ headers: { "x-gitlab-token": TOKEN, ...signed(BODY) } })).toEqual({
      secretIndex: 0,
    });
  });
});

describe("gitlab: signing token (Standard Webhooks)", () => {
  it("verifies the signature instead of the token", () => {
    expect(verify({ headers: signed(BODY), active: [TOKEN, SIGNING] })).toEqual({
      secretIndex: 1,
      signedAt: NOW,
    });
  });

  it("a bad signature is rejected even when the token is right", () => {
    const headers = { ...signed(BODY, OTHER_SIGNING), "x-gitlab-token": TOKEN };
    expectRejected(
      () => verify({ headers, active: [TOKEN, SIGNING] }),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
      [TOKEN, SIGNING],
    );
  });

  it("signs the body: a changed body is rejected", () => {
    expectRejected(
      () => verify({ body: `${BODY} `, headers: signed(BODY), active: [SIGNING] }),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
  });

  it("without a signature header, falls back to the token unless requireSignature", () => {
    expect(verify({ active: [TOKEN, SIGNING] })).toEqual({ secretIndex: 0 });
    expectRejected(
      () => verify({ active: [TOKEN, SIGNING], strict: true }),
      "HOOKINBOX_SIGNATURE_MISSING",
      400,
    );
  });

  it("requireSignature with no signing token configured fails closed", () => {
    expectRejected(
      () => verify({ headers: signed(BODY), active: [TOKEN], strict: true }),
      "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
      503,
    );
  });

  it("requireSignature accepts a signed request", () => {
    expect(verify({ headers: signed(BODY), active: [SIGNING], strict: true }).secretIndex).toBe(0);
  });
});

describe("gitlab: one defect, one code", () => {
  const cases: {
    name: string;
    body?: string;
    headers?: Headers;
    active?: string[];
    nowMs?: number;
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "wrong token",
      headers: { "x-gitlab-token": OTHER_TOKEN },
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "token with a suffix",
      headers: { "x-gitlab-token": `${TOKEN}x` },
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "token prefix only",
      headers: { "x-gitlab-token": TOKEN.slice(0, 10) },
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "token header missing", headers: {}, code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    {
      name: "token header blank",
      headers: { "x-gitlab-token": " " },
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "only empty secrets",
      active: [""],
      code: "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
      status: 503,
    },
    {
      name: "signature: too old",
      headers: signed(BODY),
      active: [SIGNING],
      nowMs: NOW + 300_001,
      code: "HOOKINBOX_TIMESTAMP_TOO_OLD",
      status: 400,
    },
    {
      name: "signature: webhook-id missing",
      headers: { ...signed(BODY), "webhook-id": undefined },
      active: [SIGNING],
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "signature: webhook-timestamp missing",
      headers: { ...signed(BODY), "webhook-timestamp": undefined },
      active: [SIGNING],
      code: "HOOKINBOX_TIMESTAMP_MISSING",
      status: 400,
    },
    {
      name: "signature: another signing token",
      headers: signed(BODY, OTHER_SIGNING),
      active: [SIGNING],
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [TOKEN, OTHER_TOKEN, SIGNING]);
  });
});

describe("gitlab: identity preset", () => {
  it("is wired to the scheme", () => {
    expect(scheme.provider).toBe("gitlab");
    expect(scheme.identity).toBe(gitlabIdentity);
    expect(Object.isFrozen(gitlabIdentity)).toBe(true);
    expect(gitlabIdentity.type).toBe("header:x-gitlab-event");
  });

  it("keys on Idempotency-Key, else X-Gitlab-Event-UUID", () => {
    expect(
      gitlabEventId(identityContext({ "idempotency-key": "k1", "x-gitlab-event-uuid": "u1" })),
    ).toBe("k1");
    expect(gitlabEventId(identityContext({ "x-gitlab-event-uuid": "u1" }))).toBe("u1");
    expect(gitlabEventId(identityContext({}))).toBeUndefined();
  });

  it.each<[string, object, string | undefined]>([
    ["a merge request", JSON.parse(BODY), "group/app!42"],
    [
      "an issue",
      {
        object_kind: "issue",
        project: { path_with_namespace: "g/a" },
        object_attributes: { iid: 7 },
      },
      "g/a#7",
    ],
    [
      "a note on a merge request",
      { object_kind: "note", project: { path_with_namespace: "g/a" }, merge_request: { iid: 3 } },
      "g/a!3",
    ],
    [
      "a note on an issue",
      { object_kind: "note", project: { path_with_namespace: "g/a" }, issue: { iid: 4 } },
      "g/a#4",
    ],
    ["a push", { object_kind: "push", project: { path_with_namespace: "g/a" } }, "g/a"],
    ["a group event", { event_name: "group_create" }, undefined],
  ])("ordering key: %s", (_name, body, key) => {
    expect(gitlabOrderingKey(identityContext({}, JSON.stringify(body)))).toBe(key);
  });
});

describeSchemeContract({
  label: "secret token",
  scheme,
  secret: TOKEN,
  otherSecret: OTHER_TOKEN,
  nowMs: NOW,
  signsBody: false,
  sign: (_body, token) => ({ "x-gitlab-token": token }),
});

describeSchemeContract({
  label: "signing token",
  scheme: strict,
  secret: SIGNING,
  otherSecret: OTHER_SIGNING,
  nowMs: NOW,
  sign: (body, secret) => signed(body, secret),
});
