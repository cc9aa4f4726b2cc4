import { request } from "node:http";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { secrets } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

// The admin API under attack, over real HTTP on loopback: token guessing from one address is
// limited (others are not), every /api answer says no-store and nosniff, and X-Forwarded-Host is
// believed only from a trusted proxy. Different client addresses are different loopback
// addresses (127.0.0.x) bound as the connection's source.

const token = "admin-hardening-test-token-0123456789abcdef";
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gateway(http: Record<string, unknown> = {}): Promise<Gateway> {
  const tmp = tempDir();
  cleanups.push(() => tmp.cleanup());
  const gw = await startGateway(
    {
      store: `sqlite:${join(tmp.dir, "admin.db")}`,
      sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
      admin: { token },
      http,
    },
    { host: "127.0.0.1", port: 0, env: {}, metricsPort: null },
  );
  cleanups.push(() => gw.close());
  return gw;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request from a chosen loopback source address. */
function send(
  gw: Gateway,
  from: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  const url = new URL(path, gw.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        localAddress: from,
        agent: false,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const signIn = (gw: Gateway, from: string, given: string, headers: Record<string, string> = {}) =>
  send(gw, from, "POST", "/api/session", headers, JSON.stringify({ token: given }));
const code = (answer: Answer) =>
  (JSON.parse(answer.body) as { error?: { code?: string } }).error?.code;

describe("admin API hardening", () => {
  it("limits wrong sign-ins and wrong Bearer tokens per address: 429 with a code and Retry-After; other addresses unaffected", async () => {
    const gw = await gateway();
    const statuses: number[] = [];
    for (let i = 0; i < 300; i++)
      statuses.push((await signIn(gw, "127.0.0.2", `wrong-${i}`)).status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(290);
    const limited = await signIn(gw, "127.0.0.2", token);
    // Blocked before the token is looked at: the right one does not get through either.
    expect(limited.status).toBe(429);
    expect(code(limited)).toBe("HOOKINBOX_ADMIN_AUTH_LIMITED");
    const retryAfter = Number(limited.headers["retry-after"]);
    expect(retryAfter >= 1 && retryAfter <= 60).toBe(true);
    const bearer = await send(gw, "127.0.0.2", "GET", "/api/events", {
      authorization: `Bearer ${token}`,
    });
    expect(bearer.status).toBe(429);

    // Another address signs in and reads as before.
    expect((await signIn(gw, "127.0.0.3", token)).status).toBe(201);
    expect(
      (await send(gw, "127.0.0.3", "GET", "/api/events", { authorization: `Bearer ${token}` }))
        .status,
    ).toBe(200);

    // Wrong Bearer tokens count the same way; a request with no token at all does not.
    const bearers: number[] = [];
    for (let i = 0; i < 20; i++) {
      bearers.push(
        (await send(gw, "127.0.0.4", "GET", "/api/events", { authorization: `Bearer wrong-${i}` }))
          .status,
      );
    }
    expect(bearers.filter((s) => s === 401)).toHaveLength(10);
    expect(bearers.filter((s) => s === 429)).toHaveLength(10);
    const anonymous: number[] = [];
    for (let i = 0; i < 20; i++)
      anonymous.push((await send(gw, "127.0.0.5", "GET", "/api/events")).status);
    expect(anonymous.filter((s) => s === 401)).toHaveLength(20);
  });

  it("answers every /api request with Cache-Control: no-store and X-Content-Type-Options: nosniff, errors included", async () => {
    const gw = await gateway();
    const auth = { authorization: `Bearer ${token}` };
    const answers = [
      await send(gw, "127.0.0.1", "GET", "/api/events", auth),
      await send(gw, "127.0.0.1", "GET", "/api/openapi.json", auth),
      await send(gw, "127.0.0.1", "GET", "/api/metrics", auth),
      await send(gw, "127.0.0.1", "GET", "/api/events"),
      await send(gw, "127.0.0.1", "GET", "/api/no-such-route", auth),
      await send(gw, "127.0.0.1", "DELETE", "/api/events", auth),
      await send(gw, "127.0.0.1", "GET", "/api/events?limit=9999", auth),
      await signIn(gw, "127.0.0.1", token),
      await send(gw, "127.0.0.1", "GET", "/api/session"),
      await send(gw, "127.0.0.1", "GET", "/api"),
    ];
    expect(answers.map((a) => a.status)).toEqual([
      200, 200, 200, 401, 404, 405, 400, 201, 401, 401,
    ]);
    for (const answer of answers) {
      expect({
        status: answer.status,
        cache: answer.headers["cache-control"],
        sniff: answer.headers["x-content-type-options"],
      }).toEqual({ status: answer.status, cache: "no-store", sniff: "nosniff" });
    }
  });

  it("believes X-Forwarded-Host for the same-origin check only from a trusted proxy", async () => {
    const forged = { origin: "http://evil.example", "x-forwarded-host": "evil.example" };
    // No trusted proxies: the forged header changes nothing; the sign-in from evil.example fails.
    const plain = await gateway();
    const refused = await signIn(plain, "127.0.0.1", token, forged);
    expect({ status: refused.status, code: code(refused) }).toEqual({
      status: 403,
      code: "HOOKINBOX_CSRF_FAILED",
    });
    // A trusted proxy (127.0.0.6 only) may say which host the browser asked for.
    const proxied = await gateway({ trustedProxies: ["127.0.0.6/32"] });
    const fromElsewhere = await signIn(proxied, "127.0.0.7", token, forged);
    expect(fromElsewhere.status).toBe(403);
    const viaProxy = await signIn(proxied, "127.0.0.6", token, {
      origin: "https://hooks.example.com",
      "x-forwarded-host": "hooks.example.com",
    });
    expect(viaProxy.status).toBe(201);
  });
});
