import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testAdminToken } from "../helpers/admin-token.ts";
import { type GatewayProcess, spawnGateway } from "../helpers/gateway-process.ts";
import { rawExchange } from "../helpers/raw-http.ts";
import { standardRequest, testSources } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

const token = testAdminToken;
const auth = `authorization: Bearer ${token}\r\n`;

/** A request line plus headers, closed so the server answers and hangs up. */
const line = (method: string, target: string, headers = "") =>
  `${method} ${target} HTTP/1.1\r\nhost: x\r\n${headers}content-length: 0\r\nconnection: close\r\n\r\n`;

// Each hostile request, the status it must get, and (for hookinbox's own answers) the code.
const hostile: Array<{ name: string; bytes: string; status: number; code?: string }> = [
  {
    name: "empty path //",
    bytes: line("GET", "//"),
    status: 404,
    code: "HOOKINBOX_ROUTE_NOT_FOUND",
  },
  { name: "POST //", bytes: line("POST", "//"), status: 404, code: "HOOKINBOX_ROUTE_NOT_FOUND" },
  {
    name: "POST ///webhooks/standard",
    bytes: line("POST", "///webhooks/standard"),
    status: 404,
    code: "HOOKINBOX_ROUTE_NOT_FOUND",
  },
  {
    name: "dot segments to the admin API",
    bytes: line("GET", "/webhooks/../api/events", auth),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "encoded dot segments",
    bytes: line("GET", "/webhooks/%2e%2e/api/events", auth),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "upper-case encoded dot segments",
    bytes: line("GET", "/webhooks/%2E%2E/api/events", auth),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "half-encoded dot segments",
    bytes: line("GET", "/webhooks/.%2e/api/events", auth),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "dot segments to readyz",
    bytes: line("GET", "/webhooks/x/../../readyz"),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "single dot segment",
    bytes: line("POST", "/webhooks/./standard"),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "trailing dot-dot",
    bytes: line("POST", "/webhooks/standard/.."),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "encoded slash",
    bytes: line("POST", "/webhooks/..%2fapi%2fevents", auth),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "encoded NUL",
    bytes: line("POST", "/webhooks/standard%00"),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  { name: "backslashes", bytes: line("GET", "/webhooks\\..\\api\\events", auth), status: 400 },
  {
    name: "malformed escape in the path",
    bytes: line("GET", "/api/events/%ZZ", auth),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "lone percent",
    bytes: line("POST", "/webhooks/%"),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "truncated escape",
    bytes: line("POST", "/webhooks/standard%2"),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "malformed escape in the query",
    bytes: line("GET", "/api/events?limit=%ZZ", auth),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "escape that is not UTF-8 (admin)",
    bytes: line("GET", "/api/events/%E0%80", auth),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "escape that is not UTF-8 (webhook)",
    bytes: line("POST", "/webhooks/%E0"),
    status: 404,
    code: "HOOKINBOX_SOURCE_NOT_FOUND",
  },
  {
    name: "asterisk-form",
    bytes: line("OPTIONS", "*"),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "absolute-form to the admin API",
    bytes: line("GET", "http://evil.example/api/events", auth),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "absolute-form webhook",
    bytes: line("POST", "http://127.0.0.1/webhooks/standard"),
    status: 400,
    code: "HOOKINBOX_REQUEST_TARGET_INVALID",
  },
  {
    name: "CONNECT",
    bytes: "CONNECT evil.example:443 HTTP/1.1\r\nhost: evil.example:443\r\n\r\n",
    status: 405,
    code: "HOOKINBOX_METHOD_NOT_ALLOWED",
  },
  { name: "fragment", bytes: line("POST", "/webhooks/standard#x"), status: 400 },
  {
    name: "no source",
    bytes: line("POST", "/webhooks/"),
    status: 404,
    code: "HOOKINBOX_ROUTE_NOT_FOUND",
  },
  {
    name: "unknown source",
    bytes: line("POST", "/webhooks/nope"),
    status: 404,
    code: "HOOKINBOX_SOURCE_NOT_FOUND",
  },
  {
    name: "GET on a webhook",
    bytes: line("GET", "/webhooks/standard"),
    status: 405,
    code: "HOOKINBOX_METHOD_NOT_ALLOWED",
  },
  {
    name: "DELETE on the admin API",
    bytes: line("DELETE", "/api/events", auth),
    status: 405,
    code: "HOOKINBOX_METHOD_NOT_ALLOWED",
  },
  {
    name: "admin API without a token",
    bytes: line("GET", "/api/events"),
    status: 401,
    code: "HOOKINBOX_ADMIN_UNAUTHORIZED",
  },
  {
    name: "unsigned webhook",
    bytes: line("POST", "/webhooks/standard"),
    status: 400,
    code: "HOOKINBOX_SIGNATURE_MISSING",
  },
  { name: "unknown method", bytes: line("BREW", "/webhooks/standard"), status: 400 },
  { name: "control character in the target", bytes: line("GET", "/\x01"), status: 400 },
  {
    name: "TLS hello on the plain port",
    bytes: "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    status: 400,
  },
  { name: "HTTP/9.9", bytes: "GET /healthz HTTP/9.9\r\nhost: x\r\n\r\n", status: 400 },
  {
    name: "header without a colon",
    bytes: "GET /healthz HTTP/1.1\r\nhost: x\r\nbroken header\r\n\r\n",
    status: 400,
  },
  {
    name: "content-length and chunked",
    bytes:
      "POST /webhooks/standard HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
    status: 400,
  },
  {
    name: "negative content-length",
    bytes: "POST /webhooks/standard HTTP/1.1\r\nhost: x\r\ncontent-length: -1\r\n\r\n",
    status: 400,
  },
  {
    name: "declared body over the limit",
    bytes: "POST /webhooks/standard HTTP/1.1\r\nhost: x\r\ncontent-length: 999999999\r\n\r\n",
    status: 413,
    code: "HOOKINBOX_BODY_TOO_LARGE",
  },
  {
    name: "20 KB header",
    bytes: `GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`,
    status: 431,
  },
  {
    name: "10 KB target",
    bytes: line("POST", `/webhooks/${"a".repeat(10_000)}`),
    status: 404,
    code: "HOOKINBOX_SOURCE_NOT_FOUND",
  },
  { name: "space in the target", bytes: "GET /web hooks HTTP/1.1\r\nhost: x\r\n\r\n", status: 400 },
];

/** Strings of any characters from code 0 to `top` (latin1 bytes on the wire). */
const chars = (maxLength: number, top = 0xff) =>
  fc.string({
    unit: fc.integer({ min: 0, max: top }).map((c) => String.fromCharCode(c)),
    maxLength,
  });

describe("hostile requests over raw TCP against a gateway process", () => {
  const tmp = tempDir();
  let gateway: GatewayProcess;
  let sent = 0;

  beforeAll(async () => {
    gateway = await spawnGateway(
      tmp.dir,
      {
        store: `sqlite:${join(tmp.dir, "hostile.db")}`,
        http: { bodyLimit: "64kb", readTimeout: "2s", rejectLimit: { max: 100000 } },
        sources: { standard: testSources.standard },
      },
      { HOOKINBOX_ADMIN_TOKEN: token },
    );
  });

  afterAll(async () => {
    gateway.child.kill("SIGTERM");
    await gateway.exited();
    tmp.cleanup();
  });

  /** Sends one valid webhook; it must be stored as a new event. */
  async function validWebhook() {
    const id = `msg_hostile_${sent++}`;
    const request = standardRequest(id, JSON.stringify({ type: "user.created", n: sent }));
    const response = await fetch(`${gateway.url}/webhooks/standard`, {
      method: "POST",
      headers: request.headers,
      body: request.body,
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  it(`has at least 30 cases (${hostile.length})`, () => {
    expect(hostile.length).toBeGreaterThanOrEqual(30);
  });

  it.each(hostile)("$name → $status, and a valid webhook after it is stored", async (c) => {
    const answer = await rawExchange(gateway.url, c.bytes);
    expect(answer.status).toBe(c.status);
    if (c.code) expect(answer.text).toContain(`"code":"${c.code}"`);
    expect(gateway.child.exitCode).toBeNull();
    expect(await validWebhook()).toMatchObject({ status: 200, json: { duplicate: false } });
  });

  it("stored exactly the valid webhooks, and nothing the hostile requests sent", async () => {
    const response = await fetch(`${gateway.url}/api/events?limit=500`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const { items } = (await response.json()) as { items: Array<{ dedupKey: string }> };
    expect(items).toHaveLength(sent);
    expect(items.every((e) => e.dedupKey.startsWith("msg_hostile_"))).toBe(true);
    expect(gateway.output().stderr).not.toMatch(/HOOKINBOX_INTERNAL_ERROR|Unhandled/);
  });

  it("fuzz: random request lines and headers never crash the gateway or get a 5xx", async () => {
    const segment = fc.oneof(
      fc.constantFrom("webhooks", "standard", "api", "events", "readyz", "healthz", "", "..", "."),
      fc.constantFrom(
        "%2e",
        "%2E%2e",
        "%",
        "%Z",
        "%ZZ",
        "%E0",
        "%00",
        "%2f",
        "%5c",
        "\\",
        "#",
        "?",
      ),
      fc.string({ maxLength: 6 }),
      chars(4),
    );
    const target = fc.oneof(
      fc.array(segment, { maxLength: 6 }).map((parts) => `/${parts.join("/")}`),
      fc.constantFrom("*", "http://x/api/events", "//", "/", "", "https://[::1]/webhooks/standard"),
      fc.string({ maxLength: 20 }),
    );
    const method = fc.oneof(
      fc.constantFrom(
        "GET",
        "POST",
        "PUT",
        "DELETE",
        "HEAD",
        "OPTIONS",
        "PATCH",
        "TRACE",
        "CONNECT",
      ),
      fc.oneof(fc.stringMatching(/^[A-Za-z]{0,8}$/), chars(8, 0x20)),
    );
    const header = fc.tuple(
      fc.oneof(
        fc.constantFrom("host", "content-type", "authorization", "x-forwarded-for", "webhook-id"),
        chars(12, 0x7f),
      ),
      fc.oneof(fc.string({ maxLength: 30 }), chars(30)),
    );
    const version = fc.constantFrom(
      "HTTP/1.1",
      "HTTP/1.0",
      "HTTP/2.0",
      "HTTP/1.1 extra",
      "",
      "http/1.1",
    );
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(
        method,
        target,
        version,
        fc.array(header, { maxLength: 5 }),
        async (m, t, v, hs) => {
          const head = hs.map(([name, value]) => `${name}: ${value}\r\n`).join("");
          const bytes = Buffer.from(
            `${m} ${t} ${v}\r\nhost: x\r\n${head}content-length: 0\r\nconnection: close\r\n\r\n`,
            "latin1",
          );
          const answer = await rawExchange(gateway.url, bytes, 4_000);
          if (answer.status !== null) answered++;
          expect(answer.status === null || answer.status < 500).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
    expect(answered).toBeGreaterThan(0);
    expect(gateway.child.exitCode).toBeNull();
    expect(await validWebhook()).toMatchObject({ status: 200, json: { duplicate: false } });
  }, 120_000);
});
