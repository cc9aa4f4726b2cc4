import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRoutes } from "../../src/admin/admin-api.ts";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { secrets, standardRequest } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

// Dashboard sign-in over real HTTP on loopback: the admin token exchanged for a session cookie
// (attributes asserted), every API route refused without a token or cookie, a cookie write
// refused without the CSRF header or from another origin, Bearer calls unchanged, the static
// page served beside the API without touching webhook routes.

const token = "dashboard-auth-test-token-0123456789";
let gateway: Gateway;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  tmp = tempDir();
  gateway = await startGateway(
    {
      store: `sqlite:${join(tmp.dir, "auth.db")}`,
      sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
      // Every route is tried with a wrong token from one address: lift the guessing limit
      // (admin-hardening.test.ts tests it).
      admin: { token, authLimit: { max: 1000 } },
      // Loopback is the "proxy" here, so X-Forwarded-Proto from it counts.
      http: { trustedProxies: ["127.0.0.1/32"] },
    },
    { host: "127.0.0.1", port: 0, env: {}, metricsPort: null },
  );
});

afterAll(async () => {
  await gateway?.close();
  tmp?.cleanup();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}${path}`, { headers });

async function signIn(headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ token }),
  });
  expect(response.status).toBe(201);
  const setCookie = response.headers.get("set-cookie")!;
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  const cookie = setCookie.split(";")[0]!;
  return { setCookie, cookie, csrfToken };
}

// Every admin route (from the route table, path parameters filled in), the session routes and
// an unknown path: authentication comes before routing.
const routes: Array<[string, string]> = [
  ...adminRoutes.map((r): [string, string] => [r.method, r.path.replace(/\{(\w+)\}/g, "x_$1")]),
  ["GET", "/api/session"],
  ["DELETE", "/api/session"],
  ["GET", "/api/no-such-route"],
];

describe("dashboard session", () => {
  it("sets an HttpOnly, SameSite=Strict, Path=/ cookie with a bounded lifetime; Secure only behind TLS", async () => {
    const plain = await signIn();
    const attributes = plain.setCookie.split(";").map((part) => part.trim());
    expect(attributes[0]).toMatch(/^hookinbox_session=v1\.[0-9a-z]+\.[\w-]+\.[\w-]+$/);
    expect(attributes.slice(1).sort()).toEqual(
      ["HttpOnly", "Max-Age=43200", "Path=/", "SameSite=Strict"].sort(),
    );
    expect(plain.csrfToken).toMatch(/^[\w-]{43}$/);
    // The token is not in the cookie, nor anywhere in the answer.
    expect(plain.setCookie).not.toContain(token);

    const behindTls = await signIn({ "x-forwarded-proto": "https" });
    expect(behindTls.setCookie.split(";").map((p) => p.trim())).toContain("Secure");
  });

  it("refuses a wrong or missing token at sign-in, and a sign-in from another site", async () => {
    for (const body of [JSON.stringify({ token: "wrong" }), JSON.stringify({}), ""]) {
      const response = await fetch(`${gateway.url}/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(response.headers.get("set-cookie")).toBeNull();
      expect(response.status).toBe(body.includes("wrong") ? 401 : 400);
    }
    const crossSite = await fetch(`${gateway.url}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "https://evil.example" },
      body: JSON.stringify({ token }),
    });
    expect(crossSite.status).toBe(403);
    expect(((await crossSite.json()) as { error: { code: string } }).error.code).toBe(
      "HOOKINBOX_CSRF_FAILED",
    );
  });

  it("refuses every API route without a token or cookie, and with a wrong one", async () => {
    const forged = `hookinbox_session=v1.${(Date.now() + 60_000).toString(36)}.bm9uY2U.AAAA`;
    const cases: Array<[Record<string, string>, string]> = [
      [{}, "HOOKINBOX_ADMIN_UNAUTHORIZED"],
      [{ authorization: "Bearer wrong" }, "HOOKINBOX_ADMIN_UNAUTHORIZED"],
      [{ cookie: "hookinbox_session=garbage" }, "HOOKINBOX_SESSION_INVALID"],
      [{ cookie: forged }, "HOOKINBOX_SESSION_INVALID"],
    ];
    let refused = 0;
    for (const [method, path] of routes) {
      for (const [headers, code] of cases) {
        const response = await fetch(`${gateway.url}${path}`, {
          method,
          headers: { ...headers, "content-type": "application/json" },
          body: method === "GET" ? undefined : "{}",
        });
        const body = (await response.json()) as { error: { code: string } };
        expect([path, method, response.status, body.error.code]).toEqual([path, method, 401, code]);
        refused++;
      }
    }
    expect(refused).toBe(routes.length * cases.length);
    // The dashboard's own routes are in the table.
    expect(routes).toContainEqual(["GET", "/api/dashboard/overview"]);
    expect(routes).toContainEqual(["GET", "/api/openapi.json"]);
  });

  it("serves reads with the cookie, refuses cookie writes without CSRF or from another origin, keeps Bearer working", async () => {
    const { cookie, csrfToken } = await signIn();
    const overview = await get("/api/dashboard/overview?minutes=5", { cookie });
    expect(overview.status).toBe(200);
    const session = await get("/api/session", { cookie });
    expect(((await session.json()) as { csrfToken: string }).csrfToken).toBe(csrfToken);

    const write = (headers: Record<string, string>) =>
      fetch(`${gateway.url}/api/deliveries/retry`, {
        method: "POST",
        headers: { cookie, "content-type": "application/json", ...headers },
        body: JSON.stringify({ ids: ["dlv_01JD7Q5Z8X9K3M4N5P6R7S8T9V"] }),
      });
    const cases: Array<[Record<string, string>, number, unknown]> = [
      [{}, 403, "HOOKINBOX_CSRF_FAILED"],
      [{ "x-hookinbox-csrf": "not-the-token" }, 403, "HOOKINBOX_CSRF_FAILED"],
      [
        { "x-hookinbox-csrf": csrfToken, origin: "https://evil.example" },
        403,
        "HOOKINBOX_CSRF_FAILED",
      ],
      [
        { "x-hookinbox-csrf": csrfToken, "sec-fetch-site": "cross-site" },
        403,
        "HOOKINBOX_CSRF_FAILED",
      ],
      // With the CSRF header from the same origin, the write goes through.
      [
        { "x-hookinbox-csrf": csrfToken, origin: gateway.url, "sec-fetch-site": "same-origin" },
        200,
        { retried: 0, skipped: 1 },
      ],
    ];
    for (const [headers, status, expected] of cases) {
      const response = await write(headers);
      const body = (await response.json()) as { error?: { code: string } };
      expect([response.status, body.error?.code ?? body]).toEqual([status, expected]);
    }
    // Bearer: as before, no CSRF header needed.
    const bearer = await fetch(`${gateway.url}/api/deliveries/retry`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ ids: ["dlv_01JD7Q5Z8X9K3M4N5P6R7S8T9V"] }),
    });
    expect(bearer.status).toBe(200);
    expect(await bearer.json()).toEqual({ retried: 0, skipped: 1 });
  });

  it("signs out: the cookie is cleared and the session refused afterwards; sign-out needs CSRF", async () => {
    const { cookie, csrfToken } = await signIn();
    const noCsrf = await fetch(`${gateway.url}/api/session`, {
      method: "DELETE",
      headers: { cookie },
    });
    expect(noCsrf.status).toBe(403);
    const out = await fetch(`${gateway.url}/api/session`, {
      method: "DELETE",
      headers: { cookie, "x-hookinbox-csrf": csrfToken },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toBe(
      "hookinbox_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict",
    );
    const after = await get("/api/events", { cookie });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { code: string } }).error.code).toBe(
      "HOOKINBOX_SESSION_INVALID",
    );
  });
});

describe("dashboard page", () => {
  it("serves the page and hashed assets with content types and cache headers, beside the webhook routes", async () => {
    const page = await get("/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.filter((a) => a.endsWith(".js")).length).toBe(1);
    expect(assets.filter((a) => a.endsWith(".css")).length).toBe(1);
    for (const asset of assets) {
      const response = await get(`/${asset}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(response.headers.get("content-type")).toBe(
        asset.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8",
      );
    }
    // The page holds no data and no token; no external URL (no CDN, no fonts).
    expect(html).not.toMatch(/https?:\/\//);
    expect((await get("/assets/nope.js")).status).toBe(404);
    expect((await get("/assets/index.html")).status).toBe(404);
    expect((await get("/healthz")).status).toBe(200);
    expect((await get("/readyz")).status).toBe(200);
    const signed = standardRequest("msg_page_1", '{"type":"ok"}');
    const webhook = await fetch(`${gateway.url}/webhooks/std`, {
      method: "POST",
      headers: signed.headers,
      body: signed.body,
    });
    expect(webhook.status).toBe(200);
    expect((await fetch(`${gateway.url}/`, { method: "POST", body: "x" })).status).toBe(404);
  });
});
