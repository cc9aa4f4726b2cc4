import { createHmac } from "node:crypto";
import { sign as octokitSign } from "@octokit/webhooks-methods";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import {
  githubEventType,
  githubIdentity,
  githubOrderingKey,
  githubScheme,
} from "../../src/providers/github.js";
import { describeSchemeContract } from "./contract.js";
import {
  expectRejected,
  flipChar,
  type Headers,
  identityContext,
  loadVectors,
  secrets,
  signedRequest,
} from "./helpers.js";

const SECRET = "hookinbox github secret";
const OTHER = "hookinbox other secret";
const BODY = '{"action":"opened","number":42,"repository":{"full_name":"octo/hello"}}';
const NOW = 1_700_000_000_000;

/** SHA-1 is not offered by @octokit/webhooks-methods 6, so the legacy header is built here. */
function sha1Header(payload: string, secret = SECRET): string {
  return `sha1=${createHmac("sha1", secret).update(payload).digest("hex")}`;
}

const SIG = await octokitSign(SECRET, BODY);
const HEX = SIG.slice("sha256=".length);
const scheme = githubScheme({});
const legacy = githubScheme({ allowSha1: true });

function verify(init: { body?: string; headers?: Headers; active?: string[]; sha1?: boolean }) {
  const request = signedRequest(init.body ?? BODY, init.headers ?? { "X-Hub-Signature-256": SIG });
  return (init.sha1 ? legacy : scheme).verifier.verify(
    request,
    secrets(...(init.active ?? [SECRET])),
    NOW,
  );
}

describe("github: accepts what the official package signs", () => {
  it.each([
    ["a JSON event", BODY],
    ["unicode", '{"zen":"Keep it logically awesome. ✨"}'],
    ["a form-encoded body", "payload=%7B%22zen%22%3A%22hi%22%7D"],
  ])("%s", async (_name, payload) => {
    const header = await octokitSign(SECRET, payload);
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verify({ body: payload, headers: { "x-hub-signature-256": header } })).toEqual({
      secretIndex: 0,
    });
  });

  it("accepts the published vectors", () => {
    const vectors = loadVectors().github;
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const request = signedRequest(v.body, { [v.header]: v.signature });
      expect(scheme.verifier.verify(request, secrets(v.secret), NOW)).toEqual({ secretIndex: 0 });
    }
  });

  it("has no timestamp: any clock is fine", () => {
    const request = signedRequest(BODY, { "x-hub-signature-256": SIG });
    expect(scheme.verifier.verify(request, secrets(SECRET), 0).secretIndex).toBe(0);
    expect(scheme.verifier.verify(request, secrets(SECRET), 8.64e15).secretIndex).toBe(0);
  });

  it("accepts upper-case hex", () => {
    expect(verify({ headers: { "x-hub-signature-256": `sha256=${HEX.toUpperCase()}` } })).toEqual({
      secretIndex: 0,
    });
  });
});

describe("github: legacy SHA-1", () => {
  it("is verified when allowSha1 is on and only x-hub-signature is sent", () => {
    expect(verify({ sha1: true, headers: { "x-hub-signature": sha1Header(BODY) } })).toEqual({
      secretIndex: 0,
    });
  });

  it("rotation works for SHA-1 too", () => {
    const headers = { "x-hub-signature": sha1Header(BODY) };
    expect(verify({ sha1: true, headers, active: [OTHER, SECRET] }).secretIndex).toBe(1);
  });

  it("is ignored when the SHA-256 header is present (SHA-256 wins)", () => {
    const headers = {
      "x-hub-signature-256": `sha256=${flipChar(HEX, 0)}`,
      "x-hub-signature": sha1Header(BODY),
    };
    expectRejected(() => verify({ sha1: true, headers }), "HOOKINBOX_SIGNATURE_MISMATCH", 401);
  });

  it("with both headers right, verifies (via SHA-256)", () => {
    const headers = { "x-hub-signature-256": SIG, "x-hub-signature": sha1Header(BODY) };
    expect(verify({ headers }).secretIndex).toBe(0);
  });

  it.each<[string, Headers, ErrorCode, number]>([
    [
      "wrong SHA-1",
      { "x-hub-signature": sha1Header(BODY, OTHER) },
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "SHA-1 over a changed body",
      { "x-hub-signature": sha1Header(`${BODY} `) },
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "sha256= in the legacy header",
      { "x-hub-signature": SIG },
      "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      400,
    ],
    [
      "garbage in the legacy header",
      { "x-hub-signature": "garbage" },
      "HOOKINBOX_SIGNATURE_MALFORMED",
      400,
    ],
    [
      "a truncated SHA-1",
      { "x-hub-signature": sha1Header(BODY).slice(0, -2) },
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
  ])("allowSha1 on, %s → %s", (_name, headers, code, status) => {
    expectRejected(() => verify({ sha1: true, headers }), code, status, [SECRET, OTHER]);
  });
});

describe("github: one defect, one code", () => {
  const cases: {
    name: string;
    body?: string;
    headers?: Headers;
    active?: string[];
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "one body byte changed",
      body: flipChar(BODY, 3),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "wrong secret", active: [OTHER], code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    {
      name: "missing signature header",
      headers: {},
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "blank signature header",
      headers: { "x-hub-signature-256": "" },
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "malformed header: garbage without =",
      headers: { "x-hub-signature-256": "garbage" },
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "malformed header: bare hex without a prefix",
      headers: { "x-hub-signature-256": HEX },
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "truncated signature",
      headers: { "x-hub-signature-256": SIG.slice(0, -2) },
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "signature with an odd length",
      headers: { "x-hub-signature-256": SIG.slice(0, -1) },
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "empty digest",
      headers: { "x-hub-signature-256": "sha256=" },
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "one hex digit changed",
      headers: { "x-hub-signature-256": `sha256=${flipChar(HEX, 63)}` },
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "two signatures joined (only one is accepted)",
      headers: { "x-hub-signature-256": `${SIG}, ${SIG}` },
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "unknown version tag only: sha512=",
      headers: { "x-hub-signature-256": `sha512=${HEX}` },
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "unknown version tag only: SHA256= (case matters)",
      headers: { "x-hub-signature-256": `SHA256=${HEX}` },
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "unknown version tag only: sha1= in the sha256 header",
      headers: { "x-hub-signature-256": sha1Header(BODY) },
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "only the legacy SHA-1 header, allowSha1 off",
      headers: { "x-hub-signature": sha1Header(BODY) },
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, HEX]);
  });
});

describe("github: identity preset", () => {
  it("uses the delivery id header and the event functions", () => {
    expect(scheme.provider).toBe("github");
    expect(scheme.identity).toBe(githubIdentity);
    expect(githubIdentity.id).toBe("header:x-github-delivery");
    expect(githubIdentity.type).toBe(githubEventType);
    expect(githubIdentity.orderingKey).toBe(githubOrderingKey);
    expect(githubIdentity.occurredAt).toBeUndefined();
    expect(githubIdentity.version).toBeUndefined();
  });

  it.each<[string, Headers, string | undefined, string | undefined]>([
    [
      "event with a string action",
      { "x-github-event": "pull_request" },
      '{"action":"opened"}',
      "pull_request.opened",
    ],
    ["event without an action", { "x-github-event": "push" }, '{"ref":"refs/heads/main"}', "push"],
    ["non-string action", { "x-github-event": "push" }, '{"action":3}', "push"],
    ["empty action", { "x-github-event": "push" }, '{"action":""}', "push"],
    ["array body", { "x-github-event": "ping" }, "[1,2]", "ping"],
    [
      "form-encoded body falls back to the header",
      { "x-github-event": "issues" },
      "payload=%7B%7D",
      "issues",
    ],
    ["no event header", {}, '{"action":"opened"}', undefined],
  ])("type: %s", (_name, headers, body, expected) => {
    expect(githubEventType(identityContext(headers, body))).toBe(expected);
  });

  it.each<[string, string, string | undefined]>([
    [
      "pull request",
      '{"repository":{"full_name":"octo/hello"},"pull_request":{"number":7}}',
      "octo/hello#7",
    ],
    ["issue", '{"repository":{"full_name":"octo/hello"},"issue":{"number":9}}', "octo/hello#9"],
    [
      "comment on a PR (issue payload)",
      '{"repository":{"full_name":"octo/hello"},"issue":{"number":7},"comment":{"id":1}}',
      "octo/hello#7",
    ],
    [
      "push: its branch",
      '{"ref":"refs/heads/main","repository":{"full_name":"octo/hello"}}',
      "octo/hello@refs/heads/main",
    ],
    [
      "create: a tag by its short name",
      '{"ref":"v1.2.0","ref_type":"tag","repository":{"full_name":"octo/hello"}}',
      "octo/hello@refs/tags/v1.2.0",
    ],
    [
      "delete: a branch by its short name",
      '{"ref":"feature","ref_type":"branch","repository":{"full_name":"octo/hello"}}',
      "octo/hello@refs/heads/feature",
    ],
    [
      "check run",
      '{"action":"completed","check_run":{"id":4,"check_suite":{"id":5}},"repository":{"full_name":"octo/hello"}}',
      "octo/hello/check-runs/4",
    ],
    [
      "check suite",
      '{"check_suite":{"id":5},"repository":{"full_name":"octo/hello"}}',
      "octo/hello/check-suites/5",
    ],
    [
      "workflow run",
      '{"workflow_run":{"id":30433642},"workflow":{"id":1},"repository":{"full_name":"octo/hello"}}',
      "octo/hello/workflow-runs/30433642",
    ],
    [
      "workflow job",
      '{"workflow_job":{"id":2832853555,"run_id":940463255},"repository":{"full_name":"octo/hello"}}',
      "octo/hello/workflow-jobs/2832853555",
    ],
    [
      "deployment status: its deployment",
      '{"deployment_status":{"id":9},"deployment":{"id":8},"repository":{"full_name":"octo/hello"}}',
      "octo/hello/deployments/8",
    ],
    [
      "release",
      '{"release":{"id":11,"tag_name":"v1"},"repository":{"full_name":"octo/hello"}}',
      "octo/hello/releases/11",
    ],
    [
      "discussion",
      '{"discussion":{"number":3,"id":99},"repository":{"full_name":"octo/hello"}}',
      "octo/hello/discussions/3",
    ],
    [
      "star: the repository",
      '{"action":"created","repository":{"full_name":"octo/hello"}}',
      "octo/hello",
    ],
    ["organisation event", '{"organization":{"login":"octo"}}', undefined],
    [
      "non-integer number",
      '{"repository":{"full_name":"octo/hello"},"issue":{"number":"9"}}',
      "octo/hello",
    ],
    ["non-JSON body", "payload=x", undefined],
  ])("orderingKey: %s", (_name, body, expected) => {
    expect(githubOrderingKey(identityContext({}, body))).toBe(expected);
  });

  it("lets errors other than invalid JSON propagate", () => {
    const context = {
      headers: identityContext({ "x-github-event": "push" }).headers,
      json() {
        throw new Error("boom");
      },
    };
    expect(() => githubEventType(context)).toThrow("boom");
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: NOW,
  sign: (body, secret) => ({
    "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
  }),
});
